#pragma once
/// \file
/// Python literals for the Python emitter (emit/python.hpp): strings, kernel
/// sources, comments, numbers and shape tuples, appended to a std::string.
///
/// Everything user-controlled that reaches generated Python goes through
/// these functions, so that no text can end a literal or a comment early:
///
/// - `append_string_literal`: a single-quoted literal with repr-style
///   escapes; the result is always one line.
/// - `append_source_literal`: a kernel source as Inductor writes it,
///   `'''source'''`, when the raw text reads back unchanged; otherwise the
///   escaped single-quoted form.
/// - `append_comment_text`: comment text, with control characters and bytes
///   that are not UTF-8 shown as `\xHH`, so the comment stays on its line and
///   the file stays valid UTF-8.
///
/// Python reads a source file as UTF-8 and a `str` literal holds code
/// points, so a string that is not valid UTF-8 has no faithful literal: the
/// literal functions refuse it (return false) and the caller reports it.

#include <wrapir/detail/utf8.hpp>
#include <wrapir/emit/detail/shortest_double.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace wrapir::python::detail {

using wrapir::detail::is_valid_utf8;
using wrapir::detail::utf8_sequence_length;

inline void append_hex_escape(std::string& out, unsigned char u) {
  constexpr char hex[] = "0123456789abcdef";
  out += "\\x";
  out += hex[u >> 4];
  out += hex[u & 15];
}

/// Appends `s` as a single-quoted Python string literal (`'a\'b\n'`):
/// backslash, quote, newline, carriage return and tab get their short
/// escapes, other control characters `\xHH`; UTF-8 text is kept as it is.
/// Returns false, appending nothing, when `s` is not valid UTF-8.
[[nodiscard]] inline bool append_string_literal(std::string& out, std::string_view s) {
  if (!is_valid_utf8(s)) return false;
  out.reserve(out.size() + s.size() + 2);
  out += '\'';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) append_hex_escape(out, u);
        else out += c;
    }
  }
  out += '\'';
  return true;
}

/// Whether `s` reads back unchanged from `'''s'''` in a UTF-8 source file:
/// no backslash (escapes would be interpreted), no `'''` and no trailing
/// quote (either would end the literal early), no control characters other
/// than newline and tab (a carriage return would be read as a newline),
/// valid UTF-8.
[[nodiscard]] inline bool fits_triple_quotes(std::string_view s) noexcept {
  if (!s.empty() && s.back() == '\'') return false;
  if (s.find("'''") != std::string_view::npos) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) return false;
  }
  return is_valid_utf8(s);
}

/// Appends a kernel source: `'''source'''` as Inductor writes it when that
/// is exact, else the escaped single-quoted literal. Returns false when `s`
/// is not valid UTF-8.
[[nodiscard]] inline bool append_source_literal(std::string& out, std::string_view s) {
  if (fits_triple_quotes(s)) {
    out.reserve(out.size() + s.size() + 6);
    out += "'''";
    out += s;
    out += "'''";
    return true;
  }
  return append_string_literal(out, s);
}

/// Appends `s` as the text of a `#` comment: tabs and UTF-8 are kept; other
/// control characters, DEL and bytes that are not part of a UTF-8 sequence
/// are shown as `\xHH`, so the comment cannot end its line.
inline void append_comment_text(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u < 0x80) {
      if ((u < 0x20 && s[i] != '\t') || u == 0x7f) append_hex_escape(out, u);
      else out += s[i];
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_hex_escape(out, u);
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
}

template <class I>
inline void append_integer(std::string& out, I v) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, ec == std::errc{} ? end : buffer);
}

/// Appends `v` as a Python float expression: the shortest text that reads
/// back exactly, always with a `.` or an exponent (`1.0`, `1e+21`), and
/// `inf`, `-inf`, `nan`, `-nan` (the module imports `inf` and `nan`).
inline void append_float(std::string& out, double v) { wrapir::detail::append_shortest_double(out, v); }

}  // namespace wrapir::python::detail
