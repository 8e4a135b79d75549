#pragma once
/// \file
/// Text in the DOT emitter's output: every label is a double-quoted DOT
/// string, and whatever a name holds (quotes, backslashes, newlines, `}`,
/// `<b>html</b>`, bytes that are not UTF-8, the "Trojan Source" controls) it
/// can neither end the string nor change what the label shows. Node ids are
/// made up here from numbers (`g0b3`), never from names.

#include <wrapir/detail/escape.hpp>

#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>

namespace wrapir::dot::detail {

/// How a name is first made legible: controls, non-UTF-8 bytes and the
/// Unicode controls as visible `\xHH` / `\n` escapes, backslashes doubled,
/// UTF-8 kept. The result is then spelled as a DOT string
/// (`append_quoted`).
inline constexpr wrapir::detail::EscapeStyle legible_style{
    .quote = '\0', .short_escapes = true, .escape_non_ascii = false, .escape_backslash = true};

/// Whether `c` needs nothing done in a DOT string: printable ASCII other
/// than the quote and the backslash.
[[nodiscard]] constexpr bool plain_char(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
}

/// Appends `s` as the inside of a DOT double-quoted string that displays
/// it legibly. Graphviz gives backslash sequences in labels meanings (`\n`
/// breaks a line, `\N` is the node's name, `\l` left-justifies), so every
/// backslash that is shown is written as `\\`, and every quote as `\"`.
/// `scratch` is a buffer reused between calls.
inline void append_text(std::string& out, std::string_view s, std::string& scratch) {
  bool plain = true;
  for (const char c : s) plain = plain && plain_char(c);
  if (plain) {
    out += s;
    return;
  }
  scratch.clear();
  wrapir::detail::append_escaped(scratch, s, legible_style);
  for (const char c : scratch) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
}

/// A DOT line break inside a label (shown as a new, centred line).
inline void append_break(std::string& out) { out += "\\n"; }

inline void append_number(std::string& out, std::size_t v) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

/// A node id: `"g<graph><kind><index>"` (kind `b` buffer, `p` pool, `l` the
/// line of a call), quoted although it never needs it, so that no id is
/// ever a DOT keyword or read as something else.
inline void append_node_id(std::string& out, std::size_t graph, char kind, std::size_t index) {
  out += "\"g";
  append_number(out, graph);
  out += kind;
  append_number(out, index);
  out += '"';
}

}  // namespace wrapir::dot::detail
