#pragma once
/// \file
/// The one string escaper behind every piece of text wrapir quotes: the
/// text form's `"..."`, diagnostics' `'...'` (`quote_for_diagnostic`, the
/// run layer's quoted names, paths in warnings), Python string literals and
/// comments in generated code. They differ only in the quote and in which
/// characters they spell out, so they share this loop; each target is one
/// `EscapeStyle` constant below, used everywhere that target is written.
///
/// Whatever the style, the result is one line and cannot be mistaken for
/// something else: the quote and (unless the style says otherwise) the
/// backslash are escaped, and so are every C0 control and DEL, bytes that
/// are not well-formed UTF-8, and the Unicode controls that reorder or break
/// displayed text (C1 controls U+0080–U+009F, U+2028–U+202E, U+2066–U+2069:
/// the "Trojan Source" characters), so that no name can forge a diagnostic
/// line or make generated code read differently from what it does.
///
/// JSON strings are a different syntax (`\u00XX`, `\b`, `\f`, UTF-8 kept and
/// validated) and keep their own writer in io/json.hpp.

#include <wrapir/detail/utf8.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wrapir::detail {

/// How `append_escaped` spells a string.
struct EscapeStyle {
  /// The quote around the string, escaped with a backslash inside it; `\0`
  /// for bare text (no quotes, nothing escaped for them).
  char quote = '"';
  /// `\n`, `\t`, `\r` rather than `\x0a`, `\x09`, `\x0d`.
  bool short_escapes = true;
  /// Every byte above 0x7f as `\xHH` (plain ASCII output) rather than UTF-8
  /// kept as it is (text in any script stays legible).
  bool escape_non_ascii = true;
  /// A backslash as `\\` (so that the escapes are unambiguous).
  bool escape_backslash = true;
  /// A tab kept as it is (comments), not escaped.
  bool keep_tab = false;
  /// The Unicode controls as Python's `\uXXXX` (a Python `str` literal,
  /// where `\xHH` would be a different code point) rather than `\xHH` per
  /// byte.
  bool controls_as_code_points = false;
};

/// The text form's and the C++ emitter's strings: `"..."`, pure ASCII.
inline constexpr EscapeStyle text_form_style{};
/// A name or path in a diagnostic, warning or error message: `'...'`, UTF-8
/// kept legible.
inline constexpr EscapeStyle diagnostic_style{
    .quote = '\'', .short_escapes = false, .escape_non_ascii = false};
/// Text in a diagnostic without quotes (`printable`).
inline constexpr EscapeStyle diagnostic_text_style{
    .quote = '\0', .short_escapes = false, .escape_non_ascii = false};
/// A Python `str` literal: `'...'`, as Python's repr escapes it (UTF-8 kept
/// except the controls, which are `\uXXXX`). The text must be valid UTF-8:
/// a Python source file holds nothing else (`python::detail::append_string_literal`
/// checks).
inline constexpr EscapeStyle python_literal_style{
    .quote = '\'', .short_escapes = true, .escape_non_ascii = false, .controls_as_code_points = true};
/// The text of a Python `#` comment: bare, tabs and backslashes kept.
inline constexpr EscapeStyle python_comment_style{.quote = '\0',
                                                   .short_escapes = false,
                                                   .escape_non_ascii = false,
                                                   .escape_backslash = false,
                                                   .keep_tab = true};

/// Whether the well-formed UTF-8 sequence `s` (2 or 3 bytes) encodes a C1
/// control (U+0080–U+009F) or a Unicode control that reorders or breaks
/// displayed text (U+2028–U+202E, U+2066–U+2069).
[[nodiscard]] constexpr bool is_unicode_control(std::string_view s) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  if (s.size() == 2) return byte(0) == 0xc2 && byte(1) < 0xa0;
  if (s.size() == 3 && byte(0) == 0xe2)
    return (byte(1) == 0x80 && byte(2) >= 0xa8 && byte(2) <= 0xae) ||  // U+2028..U+202E
           (byte(1) == 0x81 && byte(2) >= 0xa6 && byte(2) <= 0xa9);    // U+2066..U+2069
  return false;
}

namespace escape_detail {

inline constexpr char hex[] = "0123456789abcdef";

inline void append_hex_byte(std::string& out, unsigned char u) {
  out += "\\x";
  out += hex[u >> 4];
  out += hex[u & 15];
}

/// `\uXXXX` for the code point of the 2- or 3-byte UTF-8 sequence `s`.
inline void append_code_point(std::string& out, std::string_view s) {
  const auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[k])); };
  const std::uint32_t cp = s.size() == 2 ? ((byte(0) & 0x1f) << 6) | (byte(1) & 0x3f)
                                         : ((byte(0) & 0x0f) << 12) | ((byte(1) & 0x3f) << 6) | (byte(2) & 0x3f);
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += hex[(cp >> shift) & 15];
}

}  // namespace escape_detail

/// Appends `s` spelled as `style` says (see the file comment): between two
/// `style.quote`s unless it is `\0`.
inline void append_escaped(std::string& out, std::string_view s, EscapeStyle style = {}) {
  if (style.quote) out += style.quote;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      if (style.quote && c == style.quote) {
        out += '\\';
        out += c;
      } else if (c == '\\') {
        if (style.escape_backslash) out += '\\';
        out += c;
      } else if (c == '\t' && style.keep_tab) {
        out += c;
      } else if (style.short_escapes && (c == '\n' || c == '\t' || c == '\r')) {
        out += '\\';
        out += c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
      } else if (u < 0x20 || u == 0x7f) {
        escape_detail::append_hex_byte(out, u);
      } else {
        out += c;
      }
      ++i;
      continue;
    }
    const std::size_t n = style.escape_non_ascii ? 0 : utf8_sequence_length(s, i);
    if (n == 0) {  // escaped non-ASCII, or not well-formed UTF-8
      escape_detail::append_hex_byte(out, u);
      ++i;
      continue;
    }
    const std::string_view sequence = s.substr(i, n);
    if (!is_unicode_control(sequence)) {
      out += sequence;
    } else if (style.controls_as_code_points) {
      escape_detail::append_code_point(out, sequence);
    } else {
      for (const char b : sequence) escape_detail::append_hex_byte(out, static_cast<unsigned char>(b));
    }
    i += n;
  }
  if (style.quote) out += style.quote;
}

/// `text` safe to print on one line, without quotes (`diagnostic_text_style`,
/// the backslash escaped only with `escape_backslash`).
[[nodiscard]] inline std::string printable(std::string_view text, bool escape_backslash) {
  std::string out;
  out.reserve(text.size());
  EscapeStyle style = diagnostic_text_style;
  style.escape_backslash = escape_backslash;
  append_escaped(out, text, style);
  return out;
}

/// `name` quoted for a diagnostic (`diagnostic_style`): at most
/// `max_characters` characters (then `...` inside the quotes), so that a hostile name can
/// neither break nor flood the diagnostic line.
[[nodiscard]] inline std::string quote_for_diagnostic(std::string_view name, std::size_t max_characters = 64) {
  std::size_t end = 0, shown = 0;
  while (end < name.size() && shown < max_characters) {
    const std::size_t n = utf8_sequence_length(name, end);
    end += n == 0 ? 1 : n;
    ++shown;
  }
  std::string out;
  out.reserve(end + 8);
  append_escaped(out, name.substr(0, end), diagnostic_style);
  if (end < name.size()) out.insert(out.size() - 1, "...");  // 'abc...'
  return out;
}

}  // namespace wrapir::detail
