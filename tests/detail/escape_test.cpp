// Tests of include/wrapir/detail/escape.hpp: the one escaper, one style per
// target (text form, diagnostics, Python literals and comments), and that
// every target escapes the Unicode controls that reorder displayed text.
#include <wrapir/detail/escape.hpp>
#include <wrapir/detail/utf8.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/detail/text.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace {

using namespace wrapir::detail;

std::string escaped(std::string_view s, EscapeStyle style) {
  std::string out;
  append_escaped(out, s, style);
  return out;
}

constexpr std::string_view rlo = "\xe2\x80\xae";  // U+202E RIGHT-TO-LEFT OVERRIDE

}  // namespace

TEST_CASE("detail/escape: the text form's strings are pure ASCII") {
  CHECK(escaped("a\"b\\c\n\t\r\x01\x7f\xc3\xa9", text_form_style) == R"("a\"b\\c\n\t\r\x01\x7f\xc3\xa9")");
}

TEST_CASE("detail/escape: diagnostics keep UTF-8 legible but escape controls and bidi overrides") {
  CHECK(escaped("caf\xc3\xa9", diagnostic_style) == "'caf\xc3\xa9'");
  CHECK(escaped(std::string("a'b\\c\nd") + std::string(rlo), diagnostic_style) == R"('a\'b\\c\x0ad\xe2\x80\xae')");
  CHECK(escaped("x\xc2\x85y\xe2\x81\xa6\xe2\x80\xa8\xff", diagnostic_style) ==
        R"('x\xc2\x85y\xe2\x81\xa6\xe2\x80\xa8\xff')");
  // One quoter for names everywhere: the IR's and the run layer's agree.
  const std::string hostile = std::string("evil") + std::string(rlo) + "'\n\xff";
  CHECK(wrapir::ir::quote_for_diagnostic(hostile) == wrapir::run::detail::quoted(hostile));
  CHECK(wrapir::ir::quote_for_diagnostic(hostile) == R"('evil\xe2\x80\xae\'\x0a\xff')");
  CHECK(printable("a\\b\tc", false) == "a\\b\\x09c");
  CHECK(printable("a\\b", true) == "a\\\\b");
}

TEST_CASE("detail/escape: quote_for_diagnostic truncates at a character boundary") {
  CHECK(quote_for_diagnostic(std::string(100, 'x')) == "'" + std::string(64, 'x') + "...'");
  CHECK(quote_for_diagnostic(std::string(64, 'x')) == "'" + std::string(64, 'x') + "'");
  std::string accents;
  for (int i = 0; i < 70; ++i) accents += "\xc3\xa9";
  const std::string quoted = quote_for_diagnostic(accents);
  CHECK(quoted.size() == 1 + 64 * 2 + 3 + 1);  // never half a character
  CHECK(is_valid_utf8(quoted));
  CHECK(quote_for_diagnostic("ab", 1) == "'a...'");
}

TEST_CASE("detail/escape: Python literals spell controls as code points, comments as bytes") {
  CHECK(escaped(std::string("a'b\\\n\t\r\x01") + std::string(rlo) + "\xc2\x85\xc3\xa9", python_literal_style) ==
        R"('a\'b\\\n\t\r\x01\u202e\u0085)" "\xc3\xa9'");
  CHECK(escaped(std::string("tab\there \\ '") + std::string(rlo) + "\n\xff", python_comment_style) ==
        "tab\there \\ '\\xe2\\x80\\xae\\x0a\\xff");
}

TEST_CASE("detail/escape: whatever the bytes, every style gives one printable line") {
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  every_byte += rlo;
  for (const EscapeStyle style : {text_form_style, diagnostic_style, diagnostic_text_style, python_comment_style}) {
    const std::string shown = escaped(every_byte, style);
    CHECK(is_valid_utf8(shown));
    CHECK(shown.find('\n') == std::string::npos);
    CHECK(shown.find(rlo) == std::string::npos);
    for (const char c : shown) CHECK((c == '\t' ? style.keep_tab : static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
  }
}
