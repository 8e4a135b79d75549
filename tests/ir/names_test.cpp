// Tests of include/wrapir/ir/names.hpp: which names may reach generated
// code, and that diagnostics quote hostile names harmlessly.

#include <wrapir/ir/names.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace wrapir::ir;

TEST_CASE("ir/names: identifiers are accepted, hostile and reserved names refused") {
  for (std::string_view ok : {"buf0", "arg0_1", "_tmp", "triton_poi_fused_add_0", "XBLOCK", "ws_ptr"})
    CHECK_MESSAGE(is_valid_name(ok), ok);
  for (std::string_view bad :
       {"", "0buf", "x; import os", "__import__('os')", "a'b", "a\"b", "a\nb", "a b", "class", "def", "None",
        "return", "int", "__x", "a-b", "é", "buf0\t"})
    CHECK_MESSAGE(!is_valid_name(bad), bad);
  CHECK_FALSE(is_valid_name(std::string(257, 'a')));
  CHECK(is_valid_name(std::string(256, 'a')));
}

TEST_CASE("ir/names: qualified operator names are dotted identifier paths") {
  for (std::string_view ok : {"aten.mm.default", "extern_kernels.mm", "torch.ops.aten.max.default", "mm"})
    CHECK_MESSAGE(is_valid_qualified_name(ok), ok);
  for (std::string_view bad : {"", ".mm", "mm.", "aten..mm", "aten.mm; import os", "os.system('x')",
                               "aten.__class__", "a.b\n", "1.mm"})
    CHECK_MESSAGE(!is_valid_qualified_name(bad), bad);
}

TEST_CASE("ir/names: diagnostics quote names with control characters escaped") {
  CHECK(quote_for_diagnostic("a\nb'c") == "'a\\x0ab\\'c'");
  CHECK(quote_for_diagnostic(std::string(100, 'x')).size() == 64 + 2 + 3);
  auto err = check_name("x; import os", "buffer");
  REQUIRE(err);
  CHECK(*err == "invalid buffer name 'x; import os': expected an identifier [A-Za-z_][A-Za-z0-9_]* that is not "
                "a keyword or a reserved name");
  CHECK_FALSE(check_name("buf0", "buffer"));
  CHECK(check_qualified_name("a..b", "operator"));
}

TEST_CASE("ir/names: single-line text allows tabs but no line breaks or control characters") {
  CHECK(is_single_line_text("a comment\twith tab, 'quotes' and \"more\""));
  CHECK_FALSE(is_single_line_text("two\nlines"));
  CHECK_FALSE(is_single_line_text("cr\r"));
  CHECK_FALSE(is_single_line_text(std::string("nul\0x", 5)));
  CHECK_FALSE(is_single_line_text("del\x7f"));
}
