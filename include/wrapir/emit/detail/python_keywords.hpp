#pragma once
/// \file
/// Python's keywords, for the names the Python emitter prints as attribute
/// chains (operator paths such as `aten.mm.default`): `x.import` is a
/// SyntaxError, so no part of such a path may be a keyword.
///
/// Only the hard keywords of Python 3 (`keyword.kwlist`): the soft keywords
/// `match`, `case`, `type` and `_` are ordinary names after a dot. This is
/// Python knowledge and lives with the Python emitter; the verifier reads it
/// too, because the Python and FX targets both print operator paths as
/// Python, so a program whose operator has a keyword part can be rendered by
/// neither. Plain data, no dependencies, so that the core may include it
/// without pulling in an emitter.

#include <cstddef>
#include <string_view>

namespace wrapir::python::detail {

inline constexpr std::string_view python_keywords[] = {
    "False", "None",   "True",    "and",      "as",       "assert", "async", "await",  "break",
    "class", "continue", "def",   "del",      "elif",     "else",   "except", "finally", "for",
    "from",  "global", "if",      "import",   "in",       "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise",   "return",   "try",      "while",  "with",  "yield"};

/// Whether `word` is a Python keyword.
[[nodiscard]] constexpr bool is_python_keyword(std::string_view word) noexcept {
  for (std::string_view k : python_keywords)
    if (k == word) return true;
  return false;
}

/// The first part of the dotted path `path` that is a Python keyword, or an
/// empty view when none is.
[[nodiscard]] constexpr std::string_view python_keyword_part(std::string_view path) noexcept {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    const std::string_view part = path.substr(start, dot - start);
    if (is_python_keyword(part)) return part;
    start = dot + 1;
  }
  return {};
}

static_assert(is_python_keyword("import") && !is_python_keyword("match") && !is_python_keyword("default"));
static_assert(python_keyword_part("aten.import.default") == "import" && python_keyword_part("aten.mm.default").empty());

}  // namespace wrapir::python::detail
