#pragma once
/// \file
/// The one string escaper behind wrapir's quoted strings: the text form's
/// `"..."`, diagnostics' `'...'`, the run layer's quoted names and Python
/// string literals differ only in the quote and in which bytes they spell
/// out, so they share this loop.
///
/// JSON strings are a different syntax (`\u00XX`, `\b`, `\f`, UTF-8 kept and
/// validated) and keep their own writer in io/json.hpp.

#include <string>
#include <string_view>

namespace wrapir::detail {

/// How `append_escaped` spells a string.
struct EscapeStyle {
  /// The quote character, escaped with a backslash inside the string.
  char quote = '"';
  /// `\n`, `\t`, `\r` rather than `\x0a`, `\x09`, `\x0d`.
  bool short_escapes = true;
  /// Bytes 0x80-0xff as `\xHH` (plain ASCII output) rather than kept as
  /// they are (UTF-8 text stays readable).
  bool escape_non_ascii = true;
};

/// Appends `s` between two `style.quote`s: backslash and the quote
/// backslash-escaped, every other control byte (and DEL, and per `style` the
/// bytes above 0x7f) as `\xHH`, so that the result is always one line.
inline void append_escaped(std::string& out, std::string_view s, EscapeStyle style = {}) {
  constexpr char hex[] = "0123456789abcdef";
  out += style.quote;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == style.quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (style.short_escapes && (c == '\n' || c == '\t' || c == '\r')) {
      out += '\\';
      out += c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
    } else if (u < 0x20 || u == 0x7f || (style.escape_non_ascii && u > 0x7f)) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  out += style.quote;
}

}  // namespace wrapir::detail
