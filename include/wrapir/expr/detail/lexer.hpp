#pragma once
/// \file
/// The tokenizer behind `wrapir::expr::parse` (see parse.hpp for the
/// grammar). Internal: tokens are produced on demand from a byte offset, so
/// the parser needs no token buffer and looking ahead is re-lexing.

#include <wrapir/diagnostic.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wrapir::expr::detail::parsing {

/// Ends the recursive descent with a diagnostic at `column`: a
/// `wrapir::detail::Failure`, which `parse` turns back into a value.
[[noreturn]] inline void parse_fail(std::size_t column, std::string message) {
  ::wrapir::detail::fail(Diagnostic{std::move(message), column});
}

enum class TokenKind : std::uint8_t {
  end,
  integer,
  identifier,
  lparen,
  rparen,
  comma,
  plus,
  minus,
  star,
  double_star,
  slash,
  double_slash,
  percent,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
};

struct Token {
  TokenKind kind = TokenKind::end;
  std::size_t begin = 0;  // byte offset of the first character
  std::size_t end = 0;    // one past the last character
  /// An integer literal's value; saturates at 2^63 + 1 so that 2^63 (the
  /// magnitude of INT64_MIN, valid only after a unary minus) is told apart
  /// from larger literals.
  std::uint64_t value = 0;

  [[nodiscard]] bool is(TokenKind k) const noexcept { return kind == k; }
};

inline constexpr std::uint64_t literal_limit = (std::uint64_t{1} << 63);  // |INT64_MIN|

constexpr bool is_ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_ident_char(char c) noexcept { return is_ident_start(c) || is_digit(c); }

constexpr std::string_view token_spelling(TokenKind k) noexcept {
  switch (k) {
    case TokenKind::end: return "end of input";
    case TokenKind::integer: return "integer";
    case TokenKind::identifier: return "identifier";
    case TokenKind::lparen: return "(";
    case TokenKind::rparen: return ")";
    case TokenKind::comma: return ",";
    case TokenKind::plus: return "+";
    case TokenKind::minus: return "-";
    case TokenKind::star: return "*";
    case TokenKind::double_star: return "**";
    case TokenKind::slash: return "/";
    case TokenKind::double_slash: return "//";
    case TokenKind::percent: return "%";
    case TokenKind::eq: return "==";
    case TokenKind::ne: return "!=";
    case TokenKind::lt: return "<";
    case TokenKind::le: return "<=";
    case TokenKind::gt: return ">";
    case TokenKind::ge: return ">=";
  }
  return "?";
}

/// `text` cut to `limit` characters with "..." appended, for messages.
inline std::string clip(std::string_view text, std::size_t limit = 40) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) + "...";
}

/// How a token reads in "found ..." messages.
inline std::string describe(const Token& t, std::string_view text) {
  const std::string_view spelling = text.substr(t.begin, t.end - t.begin);
  switch (t.kind) {
    case TokenKind::end: return "end of input";
    case TokenKind::integer: return "integer " + clip(spelling);
    case TokenKind::identifier: return "'" + clip(spelling) + "'";
    default: return "'" + std::string(token_spelling(t.kind)) + "'";
  }
}

namespace lex_detail {

inline std::string hex_byte(unsigned char c) {
  constexpr char digits[] = "0123456789ABCDEF";
  return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

[[noreturn]] inline void bad_character(std::string_view text, std::size_t pos) {
  const auto c = static_cast<unsigned char>(text[pos]);
  if (c == 0) parse_fail(pos, "unexpected NUL byte");
  if (c >= 0x80) parse_fail(pos, "unexpected non-ASCII byte " + hex_byte(c) + "; expressions are ASCII text");
  if (c < 0x20 || c == 0x7f) parse_fail(pos, "unexpected control character " + hex_byte(c));
  const char ch = static_cast<char>(c);
  switch (ch) {
    case '=': parse_fail(pos, "unexpected '='; equality is written '=='");
    case '!': parse_fail(pos, "unexpected '!'; inequality is written '!='");
    case '?':
    case ':': parse_fail(pos, std::string("unexpected '") + ch + "'; a conditional is written 'p if c else q'");
    case '.':
      parse_fail(pos, "unexpected '.'; floating-point numbers and attribute access (math.floor) are not supported");
    case '&':
    case '|':
    case '^':
    case '~':
    case '@': parse_fail(pos, std::string("operator '") + ch + "' is not supported");
    default: parse_fail(pos, std::string("unexpected character '") + ch + "'");
  }
}

inline Token lex_integer(std::string_view text, std::size_t pos) {
  const std::size_t begin = pos;
  std::uint64_t value = 0;
  bool nonzero = false;
  for (; pos < text.size() && is_digit(text[pos]); ++pos) {
    const auto d = static_cast<std::uint64_t>(text[pos] - '0');
    nonzero = nonzero || d != 0;
    // Saturate just above 2^63: only "fits" and "is exactly 2^63" matter.
    value = value > (literal_limit - d) / 10 ? literal_limit + 1 : value * 10 + d;
  }
  if (pos < text.size() && (is_ident_char(text[pos]) || text[pos] == '.')) {
    std::size_t stop = pos;
    while (stop < text.size() && (is_ident_char(text[stop]) || text[stop] == '.')) ++stop;
    const std::string_view bad = text.substr(begin, stop - begin);
    if (text[pos] == '.')
      parse_fail(begin, "floating-point literal '" + clip(bad) + "' is not supported; expressions are integers");
    parse_fail(begin, "invalid integer literal '" + clip(bad) + "'");
  }
  // Python rejects "007": it would be octal in C.
  if (text[begin] == '0' && nonzero)
    parse_fail(begin, "integer literal '" + clip(text.substr(begin, pos - begin)) +
                          "' has a leading zero (not valid in Python)");
  return Token{TokenKind::integer, begin, pos, value};
}

}  // namespace lex_detail

/// The token that starts at or after `pos` (whitespace and `#` comments are
/// skipped). Fails (`parse_fail`) on a character that starts no token.
inline Token lex(std::string_view text, std::size_t pos) {
  for (;;) {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
    if (pos < text.size() && text[pos] == '#') {
      while (pos < text.size() && text[pos] != '\n') ++pos;
      continue;
    }
    break;
  }
  if (pos >= text.size()) return Token{TokenKind::end, text.size(), text.size()};
  const char c = text[pos];
  if (is_digit(c)) return lex_detail::lex_integer(text, pos);
  if (is_ident_start(c)) {
    std::size_t stop = pos + 1;
    while (stop < text.size() && is_ident_char(text[stop])) ++stop;
    return Token{TokenKind::identifier, pos, stop};
  }
  const char next = pos + 1 < text.size() ? text[pos + 1] : '\0';
  auto one = [&](TokenKind k) { return Token{k, pos, pos + 1}; };
  auto two = [&](TokenKind k) { return Token{k, pos, pos + 2}; };
  switch (c) {
    case '(': return one(TokenKind::lparen);
    case ')': return one(TokenKind::rparen);
    case ',': return one(TokenKind::comma);
    case '+': return one(TokenKind::plus);
    case '-': return one(TokenKind::minus);
    case '%': return one(TokenKind::percent);
    case '*': return next == '*' ? two(TokenKind::double_star) : one(TokenKind::star);
    case '/': return next == '/' ? two(TokenKind::double_slash) : one(TokenKind::slash);
    case '=':
      if (next == '=') return two(TokenKind::eq);
      break;
    case '!':
      if (next == '=') return two(TokenKind::ne);
      break;
    case '<':
      if (next == '<') parse_fail(pos, "operator '<<' is not supported");
      return next == '=' ? two(TokenKind::le) : one(TokenKind::lt);
    case '>':
      if (next == '>') parse_fail(pos, "operator '>>' is not supported");
      return next == '=' ? two(TokenKind::ge) : one(TokenKind::gt);
    default: break;
  }
  lex_detail::bad_character(text, pos);
}

}  // namespace wrapir::expr::detail::parsing
