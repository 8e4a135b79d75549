#pragma once
/// \file
/// Renames one identifier in C, C++ or CUDA C++ source text, token by token.
///
/// The C++ unit gives each kernel a symbol of its own (`<prefix>_k<graph>_<name>`),
/// while Inductor names every C++ kernel `kernel`. A `#define kernel <symbol>`
/// around the source would also rename the identifier inside every header the
/// source includes (and a kernel named `malloc` or `printf` would rename the C
/// library): the rename must touch the kernel's own text and nothing it includes.
///
/// A member named like the entry (`config.kernel`, `p->kernel`) keeps its
/// name. The scan knows what can hide an identifier-shaped run of characters that is
/// not an identifier: comments, string and character literals (raw strings
/// included), preprocessing numbers (`1'000`, `0x1e+kernel` is one number) and
/// the header name of an `#include`. It does not expand macros: a macro the
/// source defines and uses is renamed in both places, as the preprocessor would
/// have done with the `#define`. A backslash-newline inside an identifier
/// splits it for this scan; the identifier so hidden is not renamed, which can
/// only make the unit fail to link (two kernels define the same symbol), never
/// call the wrong kernel.

#include <cstddef>
#include <string>
#include <string_view>

namespace wrapir::cpp::detail {

namespace rename_detail {

constexpr bool is_identifier_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;  // UTF-8 in identifiers (C++23, GCC and clang accept it)
}

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// The end of the literal whose quote is at `i` (one past the closing quote,
/// or the end of the line for an unterminated one, as the lexer would stop).
constexpr std::size_t skip_quoted(std::string_view s, std::size_t i) noexcept {
  const char quote = s[i++];
  while (i < s.size() && s[i] != quote && s[i] != '\n') i += s[i] == '\\' && i + 1 < s.size() ? 2 : 1;
  return i < s.size() && s[i] == quote ? i + 1 : i;
}

/// The end of the raw string whose `"` is at `i`: `R"delim( ... )delim"`.
constexpr std::size_t skip_raw_string(std::string_view s, std::size_t i) noexcept {
  const std::size_t open = s.find('(', i + 1);
  if (open == std::string_view::npos || open - i - 1 > 16) return skip_quoted(s, i);
  const std::string_view delimiter = s.substr(i + 1, open - i - 1);
  for (std::size_t close = s.find(')', open + 1); close != std::string_view::npos; close = s.find(')', close + 1))
    if (s.substr(close + 1, delimiter.size()) == delimiter && close + 1 + delimiter.size() < s.size() &&
        s[close + 1 + delimiter.size()] == '"')
      return close + delimiter.size() + 2;
  return s.size();
}

/// The end of the preprocessing number starting at `i` (digits, letters,
/// `_`, `.`, digit separators and exponent signs).
constexpr std::size_t skip_number(std::string_view s, std::size_t i) noexcept {
  ++i;
  while (i < s.size()) {
    const char c = s[i];
    if ((c == '+' || c == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p' || s[i - 1] == 'P')) {
      ++i;
    } else if (c == '\'' && i + 1 < s.size() && is_identifier_char(s[i + 1])) {
      i += 2;
    } else if (is_identifier_char(c) || c == '.') {
      ++i;
    } else {
      break;
    }
  }
  return i;
}

/// Whether `i` starts a line's first token `#` followed by `include`,
/// `include_next` or `import`: where the header name that follows is not code.
constexpr bool at_include_directive(std::string_view s, std::size_t i) noexcept {
  std::size_t j = i;
  while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\t')) --j;
  if (j > 0 && s[j - 1] != '\n') return false;
  for (++i; i < s.size() && (s[i] == ' ' || s[i] == '\t');) ++i;
  for (const std::string_view word : {std::string_view{"include"}, std::string_view{"import"}})
    if (s.substr(i, word.size()) == word) return true;
  return false;
}

/// Whether the identifier at `i` names a member (`x.kernel`, `p->kernel`):
/// a field of a struct the source uses, not the entry point.
constexpr bool after_member_access(std::string_view s, std::size_t i) noexcept {
  while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t' || s[i - 1] == '\n')) --i;
  return i > 0 && (s[i - 1] == '.' || (s[i - 1] == '>' && i > 1 && s[i - 2] == '-'));
}

}  // namespace rename_detail

/// `source` with every identifier token equal to `from` replaced by `to`.
inline std::string rename_identifier(std::string_view source, std::string_view from, std::string_view to) {
  using namespace rename_detail;
  std::string out;
  out.reserve(source.size() + source.size() / 16);
  std::size_t copied = 0;
  std::size_t i = 0;
  while (i < source.size()) {
    const char c = source[i];
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      for (i += 2; i < source.size() && source[i] != '\n';) i += source[i] == '\\' && i + 1 < source.size() ? 2 : 1;
    } else if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const std::size_t end = source.find("*/", i + 2);
      i = end == std::string_view::npos ? source.size() : end + 2;
    } else if (c == '"' || c == '\'') {
      i = skip_quoted(source, i);
      while (i < source.size() && is_identifier_char(source[i])) ++i;  // a user-defined literal's suffix
    } else if (c == '#' && at_include_directive(source, i)) {
      i = source.find('\n', i);
      if (i == std::string_view::npos) i = source.size();
    } else if (is_digit(c) || (c == '.' && i + 1 < source.size() && is_digit(source[i + 1]))) {
      i = skip_number(source, i);
    } else if (is_identifier_char(c)) {
      const std::size_t start = i;
      while (i < source.size() && is_identifier_char(source[i])) ++i;
      const std::string_view word = source.substr(start, i - start);
      // An encoding prefix glued to a literal belongs to the literal.
      const bool quote_follows = i < source.size() && (source[i] == '"' || source[i] == '\'');
      if (quote_follows && source[i] == '"' &&
          (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR")) {
        i = skip_raw_string(source, i);
      } else if (quote_follows && (word == "L" || word == "u" || word == "U" || word == "u8")) {
        continue;  // the literal itself is skipped on the next step
      } else if (word == from && !after_member_access(source, start)) {
        out.append(source.substr(copied, start - copied));
        out.append(to);
        copied = i;
      }
    } else {
      ++i;
    }
  }
  out.append(source.substr(copied));
  return out;
}

}  // namespace wrapir::cpp::detail
