#pragma once
/// \file
/// Python literals for the Python emitter (emit/python.hpp): strings, kernel
/// sources, comments, numbers and shape tuples, appended to a std::string.
///
/// Everything user-controlled that reaches generated Python goes through
/// these functions, which spell text with the one escaper
/// (wrapir/detail/escape.hpp), so that no text can end a literal or a
/// comment early or reorder the code around it as displayed:
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

#include <wrapir/detail/escape.hpp>
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

/// Appends `s` as a single-quoted Python string literal (`'a\'b\n'`) in
/// the one Python-literal spelling (`wrapir::detail::python_literal_style`):
/// backslash, quote, newline, carriage return and tab get their short
/// escapes, other control characters `\xHH`, the Unicode controls that
/// reorder displayed text `\uXXXX`; other UTF-8 text is kept as it is.
/// Returns false, appending nothing, when `s` is not valid UTF-8.
[[nodiscard]] inline bool append_string_literal(std::string& out, std::string_view s) {
  if (!is_valid_utf8(s)) return false;
  out.reserve(out.size() + s.size() + 2);
  wrapir::detail::append_escaped(out, s, wrapir::detail::python_literal_style);
  return true;
}

/// Whether `s` reads back unchanged from `'''s'''` in a UTF-8 source file and
/// shows what it does: no backslash (escapes would be interpreted), no `'''`
/// and no trailing quote (either would end the literal early), no control
/// characters other than newline and tab (a carriage return would be read
/// as a newline), none of the Unicode controls that reorder displayed text,
/// valid UTF-8.
[[nodiscard]] inline bool fits_triple_quotes(std::string_view s) noexcept {
  if (!s.empty() && s.back() == '\'') return false;
  if (s.find("'''") != std::string_view::npos) return false;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      if (c == '\\' || (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) return false;
      ++i;
      continue;
    }
    const std::size_t n = wrapir::detail::utf8_sequence_length(s, i);
    if (n == 0 || wrapir::detail::is_unicode_control(s.substr(i, n))) return false;
    i += n;
  }
  return true;
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

/// Appends `s` as the text of a `#` comment
/// (`wrapir::detail::python_comment_style`): tabs, backslashes and UTF-8 are
/// kept; other control characters, DEL, the Unicode controls that reorder
/// displayed text and bytes that are not part of a UTF-8 sequence are shown
/// as `\xHH`, so the comment cannot end its line or disguise the code
/// around it.
inline void append_comment_text(std::string& out, std::string_view s) {
  wrapir::detail::append_escaped(out, s, wrapir::detail::python_comment_style);
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
