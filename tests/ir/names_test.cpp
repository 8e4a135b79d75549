// Tests of include/wrapir/ir/names.hpp: which names may reach generated
// code, and that diagnostics quote hostile names harmlessly.

#include <wrapir/ir/names.hpp>

#include <doctest/doctest.h>

#include <string>
#include <stdexcept>
#include <string_view>
#include <vector>

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

TEST_CASE("ir/names: operator paths name real operator namespaces") {
  // What real programs call (reference samples: `aten.scatter_`,
  // `aten.scatter_reduce_.two`, `extern_kernels.mm`, `torch.ops.aten.*`).
  for (std::string_view ok :
       {"aten.scatter_", "aten.index_put_", "aten.scatter_reduce_.two", "aten.mm.default", "aten.topk.values",
        "aten._softmax.default", "torch.ops.aten.mm.default", "torch.ops.aten.sym_size.int",
        "torch.ops.higher_order.cond", "torch.ops.inductor._alloc_from_pool.default", "torch.ops.mylib.foo.default",
        "torch.ops._c10d_functional.all_reduce.default", "extern_kernels.mm", "extern_kernels._mm_plus_mm",
        "inductor_ops.resize_storage_bytes_.default", "_quantized.wrapped_fbgemm_linear_fp16_weight.default"})
    CHECK_MESSAGE(!check_operator_path(ok), ok);
}

TEST_CASE("ir/names: aten's dunder operators can be named, and only they (regression, issue 12)") {
  for (std::string_view ok : {"aten.__and__.Tensor", "aten.__or__.Scalar", "aten.__xor__", "aten.__lshift__.Tensor",
                              "aten.__irshift__.Scalar", "torch.ops.aten.__iand__.Tensor", "torch.ops.aten.__rshift__"})
    CHECK_MESSAGE(!check_operator_path(ok), ok);
  for (std::string_view bad :
       {"aten.__class__", "aten.__import__.default", "aten.__and__.__call__", "aten.__and__.Tensor.__self__",
        "aten.__and__._op", "aten.mm.__and__", "torch.ops.mylib.__and__.Tensor", "torch.ops.__and__.x.y",
        "extern_kernels.__and__", "inductor_ops.__and__", "aten.__and__.", "aten.__and__..x", "__and__.aten"}) {
    CAPTURE(bad);
    CHECK(check_operator_path(bad));
  }
  CHECK(check_operator_path("aten.__and__.__call__")->find("invalid operator name 'aten.__and__.__call__'") == 0);
}

TEST_CASE("ir/names: operator paths that reach beyond operators are refused (regression, issue 12)") {
  // These passed verify and emit, and ran when the emitted module was
  // called: an operator path only had to start with an allowed namespace.
  const char* attacks[] = {"torch.builtins.exec", "torch.os.system", "torch.load", "torch.save",
                           "torch.ops.load_library.x", "torch.ops.import_module.x", "torch.ops.aten",
                           "torch.ops.loaded_libraries.add.x", "torch._C._dynamo.eval_frame", "torch.ops",
                           "aten.name.upper", "aten._dir.clear", "aten.mm.default.py_impl", "aten.mm._schema",
                           "aten.mm.default._op", "extern_kernels.mm.__call__", "extern_kernels.mm.x",
                           "inductor_ops.a.b.c", "os.system", "builtins.exec", "buf0.add_", "aten", "mm",
                           "extern_kernels", "aten.__class__", "eval", "exec", "getattr"};
  for (std::string_view bad : attacks) {
    CAPTURE(bad);
    const auto err = check_operator_path(bad);
    REQUIRE(err);
    // Either the grammar (`invalid operator name '...'`) or the namespaces
    // (`operator '...' is not an operator ...`) refuses it, quoting it.
    const bool quoted = err->find("operator name '" + std::string(bad) + "'") != std::string::npos ||
                        err->find("operator '" + std::string(bad) + "'") != std::string::npos;
    CHECK(quoted);
  }
  CHECK(*check_operator_path("torch.builtins.exec") ==
        "operator 'torch.builtins.exec' is not an operator a program may call: under 'torch' only "
        "torch.ops.<namespace>.<op>[.<overload>] is callable");
  CHECK(*check_operator_path("os.system") ==
        "operator 'os.system' is not an operator a program may call: expected aten.<op>[.<overload>], "
        "torch.ops.<namespace>.<op>[.<overload>], inductor_ops.<op>[.<overload>], _quantized.<op>[.<overload>], "
        "extern_kernels.<name> or a path declared in the operator registry");
  // Still a grammar error first: not even a dotted path of identifiers.
  CHECK(check_operator_path("torch.builtins.exec('import os')")->find("expected a dotted path of identifiers") !=
        std::string::npos);
}

TEST_CASE("ir/names: the operator registry declares extra exact paths") {
  OperatorRegistry registry;
  CHECK(registry.empty());
  CHECK(registry.declare("torch.nn.functional.gelu"));
  CHECK(registry.declare("torch.nn.functional.gelu"));  // twice is fine
  CHECK(registry.declare("mylib.ops.fused"));
  CHECK(registry.paths() == std::vector<std::string>{"mylib.ops.fused", "torch.nn.functional.gelu"});
  CHECK(registry.contains("torch.nn.functional.gelu"));
  CHECK_FALSE(registry.contains("torch.nn.functional"));
  CHECK_FALSE(check_operator_path("torch.nn.functional.gelu", registry));
  CHECK(check_operator_path("torch.nn.functional.gelu"));            // not without the registry
  CHECK(check_operator_path("torch.nn.functional.relu", registry));  // exact paths only
  // The registry cannot open the door to what no operator path may be.
  for (std::string_view bad : {"torch", "", "__import__.os", "builtins.__import__", "a..b", "torch.load('x')"}) {
    CAPTURE(bad);
    const auto refused = registry.declare(bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("cannot declare operator") == 0);
  }
  CHECK(registry.paths().size() == 2);
  CHECK_THROWS_AS(OperatorRegistry({"torch.nn.functional.gelu", "__import__.x"}), std::invalid_argument);
  CHECK(OperatorRegistry{"a.b"}.contains("a.b"));
}
