#pragma once
/// \file
/// Pieces of C++ source the C++ emitter (emit/cpp.hpp) writes for values:
/// escaped string literals and comments, integer and floating literals,
/// dtype constants, expression and layout lists.

#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/shortest_double.hpp>
#include <wrapir/expr/print_cpp.hpp>
#include <wrapir/ir/dtype.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cpp::detail {

using wrapir::detail::fail;

/// `text` as a C++ string literal: printable ASCII as is (but `"`, `\` and
/// `?`, escaped: no trigraph or escape can form), every other byte as a
/// three-digit octal escape, which never swallows a following digit.
inline void append_string_literal(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += c;
    } else if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += '\\';
      out += static_cast<char>('0' + ((u >> 6) & 7));
      out += static_cast<char>('0' + ((u >> 3) & 7));
      out += static_cast<char>('0' + (u & 7));
    }
  }
  out += '"';
}

[[nodiscard]] inline std::string string_literal(std::string_view text) {
  std::string out;
  append_string_literal(out, text);
  return out;
}

/// `/* text */` with the text made safe: bytes outside printable ASCII
/// become `?`, and `/*` and `*/` are broken apart (no early end, no
/// -Wcomment). A block comment also cannot be continued by a trailing
/// backslash, as a `//` comment can.
inline void append_comment(std::string& out, std::string_view text) {
  out += "/* ";
  char previous = ' ';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const char safe = (u >= 0x20 && u < 0x7f) ? c : '?';
    if ((previous == '/' && safe == '*') || (previous == '*' && safe == '/')) out += ' ';
    out += safe;
    previous = safe;
  }
  if (previous == '/' || previous == '*') out += ' ';
  out += " */";
}

inline void append_int(std::string& out, std::int64_t v) {
  if (v == std::numeric_limits<std::int64_t>::min()) {
    out += "(-9223372036854775807L - 1)";
    return;
  }
  out += std::to_string(v);
  out += 'L';
}

inline void append_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += std::signbit(v) ? "-std::numeric_limits<double>::quiet_NaN()" : "std::numeric_limits<double>::quiet_NaN()";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-std::numeric_limits<double>::infinity()" : "std::numeric_limits<double>::infinity()";
    return;
  }
  wrapir::detail::append_shortest_double(out, v);
}

/// `WRAPIR_DTYPE_FLOAT32`: the c_abi.h constant of a dtype.
inline void append_dtype(std::string& out, ir::DType d) {
  if (!ir::is_valid(d)) fail("an invalid dtype");
  out += "WRAPIR_DTYPE_";
  for (const char c : ir::name(d)) out += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

inline void append_expr(std::string& out, expr::Expr e) {
  if (!e) fail("an expression is null");
  out += '(';
  expr::print_cpp(e, out);
  out += ')';
}

/// `{e0, e1}`: a braced list for a `std::vector<std::int64_t>` parameter.
inline void append_expr_list(std::string& out, const std::vector<expr::Expr>& es) {
  out += '{';
  for (std::size_t i = 0; i < es.size(); ++i) {
    if (i) out += ", ";
    if (!es[i]) fail("an expression is null");
    expr::print_cpp(es[i], out);
  }
  out += '}';
}

}  // namespace wrapir::cpp::detail
