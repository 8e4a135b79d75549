#pragma once
/// \file
/// Pieces of C++ source the C++ emitter (emit/cpp.hpp) writes for values:
/// escaped string literals and comments, integer and floating literals,
/// dtype constants, expression and layout lists.

#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/shortest_double.hpp>
#include <wrapir/expr/print_cpp.hpp>
#include <wrapir/ir/dtype.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::cpp::detail {

using namespace std::string_view_literals;

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
  out += "/* "sv;
  char previous = ' ';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const char safe = (u >= 0x20 && u < 0x7f) ? c : '?';
    if ((previous == '/' && safe == '*') || (previous == '*' && safe == '/')) out += ' ';
    out += safe;
    previous = safe;
  }
  if (previous == '/' || previous == '*') out += ' ';
  out += " */"sv;
}

inline void append_count(std::string& out, std::size_t v) {
  char buffer[24];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, r.ptr);
}

inline void append_int(std::string& out, std::int64_t v) {
  if (v == std::numeric_limits<std::int64_t>::min()) {
    out += "(-9223372036854775807L - 1)"sv;
    return;
  }
  char buffer[24];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, r.ptr);
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
  static const auto names = [] {
    std::array<std::string, ir::dtype_count> n;
    for (std::size_t i = 0; i < n.size(); ++i) {
      n[i] = "WRAPIR_DTYPE_";
      for (const char c : ir::name(static_cast<ir::DType>(i)))
        n[i] += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
    return n;
  }();
  out += names[static_cast<std::size_t>(d)];
}

/// The C++ text of expressions, printed once each: a program repeats a
/// few sizes and strides on every line. An open-addressing table keyed by
/// node address (a program has a few hundred distinct expressions, looked
/// up millions of times: std::unordered_map's division and node hop were
/// 3.5 % of the time).
class ExprTexts {
 public:
  const std::string& text(expr::Expr e) {
    if (!e) fail("an expression is null");
    const void* node = e.node();
    const std::size_t mask = slots_.size() - 1;
    std::size_t at = hash(node) & mask;
    for (; slots_[at].node != nullptr; at = (at + 1) & mask)
      if (slots_[at].node == node) return texts_[slots_[at].text];
    std::string text;
    expr::print_cpp(e, text);
    texts_.push_back(std::move(text));
    slots_[at] = Slot{node, texts_.size() - 1};
    if (2 * texts_.size() > slots_.size()) grow();
    return texts_.back();
  }

 private:
  struct Slot {
    const void* node = nullptr;
    std::size_t text = 0;
  };
  static std::size_t hash(const void* node) noexcept {
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(node) >> 4) * 0x9E3779B97F4A7C15u >> 20);
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.node != nullptr) {
        std::size_t at = hash(s.node) & mask;
        while (slots_[at].node != nullptr) at = (at + 1) & mask;
        slots_[at] = s;
      }
  }

  std::vector<Slot> slots_ = std::vector<Slot>(64);
  std::deque<std::string> texts_;  // stable: callers hold references
};

/// The cache of the emission running on this thread (null: none). Scoped
/// to one emission: nodes are keyed by address, which a later context may
/// reuse.
inline ExprTexts*& current_expr_texts() noexcept {
  thread_local ExprTexts* texts = nullptr;
  return texts;
}

/// Makes a fresh cache current for its lifetime.
class ExprTextsScope {
 public:
  ExprTextsScope() noexcept : saved_(current_expr_texts()) { current_expr_texts() = &texts_; }
  ~ExprTextsScope() { current_expr_texts() = saved_; }
  ExprTextsScope(const ExprTextsScope&) = delete;
  ExprTextsScope& operator=(const ExprTextsScope&) = delete;

 private:
  ExprTexts texts_;
  ExprTexts* saved_;
};

inline void append_expr_text(std::string& out, expr::Expr e) {
  if (ExprTexts* texts = current_expr_texts()) {
    out += texts->text(e);
    return;
  }
  if (!e) fail("an expression is null");
  expr::print_cpp(e, out);
}

inline void append_expr(std::string& out, expr::Expr e) {
  out += '(';
  append_expr_text(out, e);
  out += ')';
}

/// `{e0, e1}`: a braced list for a `std::vector<std::int64_t>` parameter.
inline void append_expr_list(std::string& out, std::span<const expr::Expr> es) {
  out += '{';
  for (std::size_t i = 0; i < es.size(); ++i) {
    if (i) out += ", "sv;
    append_expr_text(out, es[i]);
  }
  out += '}';
}

}  // namespace wrapir::cpp::detail
