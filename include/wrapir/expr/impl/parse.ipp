#pragma once
/// \file
/// Definitions of <wrapir/expr/parse.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/detail/lexer.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::expr {

namespace detail::parsing {

inline const FunctionInfo* find_function(std::string_view name) noexcept {
  for (const FunctionInfo& f : parse_functions)
    if (f.name == name) return &f;
  return nullptr;
}

inline std::string known_functions() {
  std::string out;
  for (const FunctionInfo& f : parse_functions) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

/// The largest fraction (numerator plus denominator, in tree nodes) that
/// the algebra of '/' builds.
inline constexpr std::uint32_t max_fraction_nodes = 4096;

/// A parsed operand: an integer-valued expression, or (inside the algebra of
/// `/`) the exact fraction `num / den`.
struct Value {
  Expr num;
  Expr den;                  // null unless this is a fraction that did not reduce
  std::size_t origin = 0;    // column of the '/' or '**' that made the fraction
  bool from_power = false;   // the fraction comes from a negative exponent
  std::uint32_t height = 1;  // nesting of the tree built so far (see the file comment)

  [[nodiscard]] bool fraction() const noexcept { return static_cast<bool>(den); }
};

/// An integer-valued operand.
inline Value whole(Expr e) {
  Value v;
  v.num = e;
  return v;
}

class Parser {
 public:
  Parser(Context& ctx, std::string_view text, const ParseOptions& options)
      : ctx_(ctx), text_(text), options_(options) {}

  Expr parse_input() {
    cur_ = lex(text_, 0);
    if (cur_.is(TokenKind::end)) parse_fail(cur_.begin, "expected an expression, found end of input");
    Value v = conditional();
    if (!cur_.is(TokenKind::end)) {
      if (cur_.is(TokenKind::rparen)) parse_fail(cur_.begin, "unmatched ')'");
      parse_fail(cur_.begin, "expected an operator or end of input, found " + describe(cur_, text_));
    }
    return integer(v);
  }

 private:
  // --- nesting -------------------------------------------------------------

  class DepthGuard {
   public:
    DepthGuard(Parser& p, std::size_t column) : p_(p) {
      if (p_.depth_ >= p_.options_.max_depth) p_.too_deep(column);
      ++p_.depth_;
    }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    ~DepthGuard() { --p_.depth_; }

   private:
    Parser& p_;
  };

  [[noreturn]] void too_deep(std::size_t column) const {
    parse_fail(column, "expression nests deeper than " + std::to_string(options_.max_depth) +
                           " levels (ParseOptions::max_depth)");
  }

  std::uint32_t nest(std::uint32_t below, std::size_t column) const {
    const std::uint32_t h = below + 1;
    if (h > options_.max_depth) too_deep(column);
    charge(column);
    return h;
  }

  /// Stops when building has cost more than `max_lookups`.
  void charge(std::size_t column) const {
    if (ctx_.lookups() - first_lookup_ > options_.max_lookups)
      parse_fail(column, "building this expression takes more than " + std::to_string(options_.max_lookups) +
                             " node lookups (ParseOptions::max_lookups): large subexpressions nest under too many operators");
  }

  // --- tokens ----------------------------------------------------------------

  void advance() { cur_ = lex(text_, cur_.end); }
  [[nodiscard]] Token peek() const { return lex(text_, cur_.end); }
  [[nodiscard]] std::string_view spelling(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }
  [[nodiscard]] bool is_keyword(const Token& t, std::string_view word) const {
    return t.is(TokenKind::identifier) && spelling(t) == word;
  }
  /// 1-based, for columns quoted inside messages (Diagnostic::to_string also
  /// prints 1-based columns).
  static std::string column_text(std::size_t column) { return "column " + std::to_string(column + 1); }

  // --- building ------------------------------------------------------------

  /// Runs a canonical constructor; its `Error` (a literal division by zero,
  /// an overflow while folding constants, ...) becomes a diagnostic at the
  /// operator or call that asked for it.
  template <class F>
  Expr build(std::size_t column, F&& make) {
    try {
      return make();
    } catch (const Error& e) {
      parse_fail(column, e.what());
    }
  }

  /// `v` as an integer-valued expression; a fraction is an error.
  Expr integer(const Value& v) const {
    if (!v.fraction()) return v.num;
    if (v.from_power)
      parse_fail(v.origin,
                 "a negative exponent makes a fraction, which is only allowed inside floor() or ceiling()");
    parse_fail(v.origin, "true division '/' is only allowed inside floor() or ceiling(); use '//' for floor division");
  }

  /// Reduces `v` (a fraction) to lowest terms where that is cheap to see,
  /// and to an integer when the division is exact.
  void normalize(Value& v, std::size_t column) {
    if (!v.den) return;
    if (v.den.is_integer(0)) parse_fail(column, "division by zero");
    // Sums over many distinct denominators grow quadratically (as with
    // sympy's together); stop before that costs seconds.
    if (std::uint64_t{v.num.tree_size()} + v.den.tree_size() > max_fraction_nodes)
      parse_fail(column, "fraction too large to bring over a common denominator (more than " +
                             std::to_string(max_fraction_nodes) + " nodes)");
    v.num = build(column, [&] {
      if (v.num.is_integer(0) || v.den.is_integer(1)) {
        v.den = Expr{};
        return v.num;
      }
      if (auto q = exact_quotient(v.num, v.den)) {
        v.den = Expr{};
        return *q;
      }
      if (v.den.is_integer()) {
        std::int64_t d = v.den.value();
        Expr num = v.num;
        if (d < 0) {  // keep denominators positive, as sympy does
          num = neg(num);
          v.den = neg(v.den);
          d = v.den.value();
        }
        const std::int64_t g = gcd(content(num), d);
        if (g > 1) {
          auto q = exact_quotient(num, ctx_.integer(g));
          if (q) {
            num = *q;
            v.den = ctx_.integer(d / g);
          }
        }
        if (v.den.is_integer(1)) v.den = Expr{};
        return num;
      }
      return v.num;
    });
  }

  static std::int64_t gcd(std::int64_t a, std::int64_t b) noexcept {
    auto mag = [](std::int64_t x) { return x < 0 ? 0ULL - static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x); };
    std::uint64_t x = mag(a), y = mag(b);
    while (y != 0) {
      const std::uint64_t r = x % y;
      x = y;
      y = r;
    }
    return x > static_cast<std::uint64_t>(INT64_MAX) ? 0 : static_cast<std::int64_t>(x);
  }

  /// A fraction made by an operation on `a` and `b` (at `column`), still
  /// to be filled in: it came from the first of the operands' origins.
  static Value fraction_of(const Value& a, const Value& b, std::size_t column) {
    Value r;
    if (a.fraction()) {
      r.origin = a.origin;
      r.from_power = a.from_power;
    } else if (b.fraction()) {
      r.origin = b.origin;
      r.from_power = b.from_power;
    } else {
      r.origin = column;
    }
    return r;
  }

  Expr den_of(const Value& v) { return v.den ? v.den : ctx_.integer(1); }

  Value add_values(const Value& a, const Value& b, std::size_t column) {
    if (!a.fraction() && !b.fraction()) return whole(build(column, [&] { return add(a.num, b.num); }));
    Value r = fraction_of(a, b, column);
    build(column, [&] {
      if (a.den == b.den) {
        r.num = add(a.num, b.num);
        r.den = a.den;
      } else {
        r.num = add(mul(a.num, den_of(b)), mul(b.num, den_of(a)));
        r.den = mul(den_of(a), den_of(b));
      }
      return r.num;
    });
    normalize(r, column);
    return r;
  }

  Value negate(const Value& a, std::size_t column) {
    Value r = a;
    if (a.num.is_integer() && a.num.value() != INT64_MIN) r.num = ctx_.integer(-a.num.value());  // `-(8)`: no Mul
    else r.num = build(column, [&] { return neg(a.num); });
    return r;
  }

  Value mul_values(const Value& a, const Value& b, std::size_t column) {
    if (!a.fraction() && !b.fraction()) return whole(build(column, [&] { return mul(a.num, b.num); }));
    Value r = fraction_of(a, b, column);
    build(column, [&] {
      r.num = mul(a.num, b.num);
      r.den = mul(den_of(a), den_of(b));
      return r.num;
    });
    normalize(r, column);
    return r;
  }

  Value div_values(const Value& a, const Value& b, std::size_t column) {
    if (b.num.is_integer(0)) parse_fail(column, "division by zero");
    Value r = fraction_of(a, b, column);
    if (!a.fraction() && !b.fraction()) {
      r.origin = column;  // this '/' made the fraction
      r.from_power = false;
    }
    build(column, [&] {
      r.num = mul(a.num, den_of(b));
      r.den = mul(den_of(a), b.num);
      return r.num;
    });
    normalize(r, column);
    return r;
  }

  /// `base ** exponent`. An exponent whose terms are all negative (`-1`,
  /// `-x`, `-x - 2`) makes the fraction `1 / base ** (-exponent)`; any other
  /// exponent is taken as a natural number (PowByNatural).
  Value pow_values(const Value& base, const Value& exponent, std::size_t column) {
    const Expr e = integer(exponent);
    bool negative = !e.is_integer(0);
    for (Expr t : terms_of(e)) negative = negative && split_term(t).coefficient < 0;
    if (!negative) {
      Value r = base;
      build(column, [&] {
        r.num = pow(base.num, e);
        if (base.den) r.den = pow(base.den, e);
        return r.num;
      });
      normalize(r, column);
      return r;
    }
    Value r;
    r.origin = base.fraction() ? base.origin : column;
    r.from_power = base.fraction() ? base.from_power : true;
    build(column, [&] {
      const Expr k = neg(e);
      r.num = base.den ? pow(base.den, k) : ctx_.integer(1);
      r.den = pow(base.num, k);
      return r.num;
    });
    if (r.den.is_integer(0))
      parse_fail(column, "division by zero: 0 raised to a negative power");
    normalize(r, column);
    return r;
  }

  // --- grammar ---------------------------------------------------------------

  Value conditional() {
    Value v = comparison();
    if (!is_keyword(cur_, "if")) return v;
    const std::size_t if_column = cur_.begin;
    advance();
    Value condition = comparison();
    if (!is_keyword(cur_, "else"))
      parse_fail(cur_.begin, "expected 'else' to complete the conditional started by 'if' at " +
                                 column_text(if_column) + ", found " + describe(cur_, text_));
    const std::size_t else_column = cur_.begin;
    advance();
    DepthGuard guard(*this, else_column);
    Value otherwise = conditional();
    const Expr c = integer(condition), p = integer(v), q = integer(otherwise);
    Value r = whole(build(if_column, [&] { return where(c, p, q); }));
    r.height = nest(std::max({condition.height, v.height, otherwise.height}), if_column);
    return r;
  }

  static bool is_comparison(TokenKind k) noexcept {
    return k == TokenKind::eq || k == TokenKind::ne || k == TokenKind::lt || k == TokenKind::le ||
           k == TokenKind::gt || k == TokenKind::ge;
  }

  Value comparison() {
    Value lhs = sum();
    if (!is_comparison(cur_.kind)) return lhs;
    const Token op = cur_;
    advance();
    Value rhs = sum();
    if (is_comparison(cur_.kind))
      parse_fail(cur_.begin, "comparisons cannot be chained ('a " + std::string(token_spelling(op.kind)) + " b " +
                                 std::string(token_spelling(cur_.kind)) +
                                 " c'); parenthesize one of them");
    const Expr a = integer(lhs), b = integer(rhs);
    Value r = whole(build(op.begin, [&] {
      switch (op.kind) {
        case TokenKind::eq: return eq(a, b);
        case TokenKind::ne: return ne(a, b);
        case TokenKind::lt: return lt(a, b);
        case TokenKind::le: return le(a, b);
        case TokenKind::gt: return gt(a, b);
        default: return ge(a, b);
      }
    }));
    r.height = nest(std::max(lhs.height, rhs.height), op.begin);
    return r;
  }

  /// Whether the current token is the literal 2^63 standing alone as an
  /// operand (not raised to a power): after a minus it is INT64_MIN.
  bool at_int64_min_magnitude() const {
    return cur_.is(TokenKind::integer) && cur_.value == literal_limit && !peek().is(TokenKind::double_star);
  }

  /// The whole operands of one chain of `+`/`-` or of `*`, combined once
  /// when the chain ends: one n-ary node instead of a new, one operand
  /// longer node per operator, which costs time and memory quadratic in the
  /// length of the chain.
  struct Chain {
    std::vector<Expr> operands;
    std::vector<std::size_t> columns;  // of the operator before each operand

    void push(Expr e, std::size_t column) {
      operands.push_back(e);
      columns.push_back(column);
    }
    [[nodiscard]] bool empty() const noexcept { return operands.empty(); }
    void clear() noexcept {
      operands.clear();
      columns.clear();
    }
  };

  /// The sum of a chain's operands. An overflow is reported at the operator
  /// where adding the operands one at a time from the left overflows (the
  /// n-ary sum combines like terms in that order).
  Expr sum_of(const Chain& chain) {
    if (chain.operands.size() == 1) return chain.operands.front();
    std::size_t at = 1;
    Expr sum;
    try {
      sum = detail::sum_of(chain.operands, &at);
    } catch (const Error& e) {
      parse_fail(chain.columns[std::clamp<std::size_t>(at, 1, chain.columns.size() - 1)], e.what());
    }
    return sum;
  }

  /// The product of a chain's operands. An overflow is reported at the
  /// first operator where the product of the operands' integer coefficients
  /// leaves int64, else at the last one.
  Expr product_of(const Chain& chain) {
    if (chain.operands.size() == 1) return chain.operands.front();
    Expr product;
    try {
      product = mul(chain.operands);
    } catch (const Error& e) {
      std::int64_t running = 1;
      std::size_t at = chain.operands.size() - 1;
      for (std::size_t i = 0; i < chain.operands.size(); ++i) {
        if (!checked::mul(running, split_term(chain.operands[i]).coefficient, running)) {
          at = std::max<std::size_t>(i, 1);
          break;
        }
      }
      parse_fail(chain.columns[at], e.what());
    }
    return product;
  }

  /// When a chain fails part-way, an overflow among the operands read
  /// before the failure came first in the text: report that one.
  template <class Body>
  void failing_first_at(Chain& chain, Expr (Parser::*combine)(const Chain&), Body&& body) {
    try {
      body();
    } catch (const ::wrapir::detail::Failure&) {
      if (chain.operands.size() > 1) (this->*combine)(chain);
      throw;
    }
  }

  Value sum() {
    Value lhs = term(false);
    if (!cur_.is(TokenKind::plus) && !cur_.is(TokenKind::minus)) return lhs;
    std::uint32_t chain = lhs.height;  // tallest operand of this flat chain
    Chain terms;                       // while `lhs` is whole: the terms it is the sum of
    if (!lhs.fraction()) terms.push(lhs.num, cur_.begin);
    failing_first_at(terms, &Parser::sum_of, [&] {
      while (cur_.is(TokenKind::plus) || cur_.is(TokenKind::minus)) {
        const Token op = cur_;
        advance();
        // `a - 9223372036854775808*x` (as printers write a term with the
        // coefficient INT64_MIN) is `a + (-9223372036854775808)*x`.
        const bool negated = op.is(TokenKind::minus) && at_int64_min_magnitude();
        Value rhs = term(negated);
        chain = std::max(chain, rhs.height);
        if (op.is(TokenKind::minus) && !negated) rhs = negate(rhs, op.begin);
        if (!terms.empty() && !rhs.fraction()) {
          terms.push(rhs.num, op.begin);
        } else {
          // Fractions add pairwise over a common denominator.
          if (!terms.empty()) lhs = whole(sum_of(terms));
          terms.clear();
          lhs = add_values(lhs, rhs, op.begin);
          if (!lhs.fraction()) terms.push(lhs.num, op.begin);
        }
        lhs.height = nest(chain, op.begin);
      }
    });
    if (!terms.empty()) {
      lhs.num = sum_of(terms);
      charge(terms.columns.back());
    }
    return lhs;
  }

  /// A product-level chain. With `negated_literal`, the first operand is the
  /// literal 2^63 read as INT64_MIN: the caller's minus moves onto it, which
  /// is exact through '*' and '/' but not through '//' or '%'.
  Value term(bool negated_literal) {
    const Token first = cur_;
    Value lhs;
    if (negated_literal) {
      advance();
      lhs = whole(ctx_.integer(INT64_MIN));
    } else {
      lhs = unary();
    }
    std::uint32_t chain = lhs.height;  // tallest operand of the current run of '*' and '/'
    Chain factors;                     // while `lhs` is whole: the factors it is the product of
    if (!lhs.fraction()) factors.push(lhs.num, first.begin);
    failing_first_at(factors, &Parser::product_of, [&] {
      for (;;) {
        const Token op = cur_;
        if (!op.is(TokenKind::star) && !op.is(TokenKind::slash) && !op.is(TokenKind::double_slash) &&
            !op.is(TokenKind::percent))
          return;
        if (negated_literal && (op.is(TokenKind::double_slash) || op.is(TokenKind::percent)))
          parse_fail(first.begin, "integer literal " + clip(spelling(first)) + " does not fit in int64");
        advance();
        Value rhs = unary();
        if (op.is(TokenKind::star) && !factors.empty() && !rhs.fraction()) {
          chain = std::max(chain, rhs.height);
          factors.push(rhs.num, op.begin);
          lhs.height = nest(chain, op.begin);
          continue;
        }
        if (!factors.empty()) {
          const std::uint32_t height = lhs.height;
          lhs = whole(product_of(factors));
          lhs.height = height;
        }
        factors.clear();
        if (op.is(TokenKind::star) || op.is(TokenKind::slash)) {
          chain = std::max(chain, rhs.height);
          lhs = op.is(TokenKind::star) ? mul_values(lhs, rhs, op.begin) : div_values(lhs, rhs, op.begin);
          lhs.height = nest(chain, op.begin);
        } else {
          const Expr a = integer(lhs), b = integer(rhs);
          const std::uint32_t below = std::max(lhs.height, rhs.height);
          lhs = whole(build(op.begin, [&] { return op.is(TokenKind::percent) ? python_mod(a, b) : floor_div(a, b); }));
          lhs.height = nest(below, op.begin);
          chain = lhs.height;
        }
        if (!lhs.fraction()) factors.push(lhs.num, op.begin);
      }
    });
    if (!factors.empty()) {
      lhs.num = product_of(factors);
      charge(factors.columns.back());
    }
    return lhs;
  }

  Value unary() {
    if (!cur_.is(TokenKind::minus) && !cur_.is(TokenKind::plus)) return power();
    const Token op = cur_;
    DepthGuard guard(*this, op.begin);
    advance();
    if (op.is(TokenKind::minus) && at_int64_min_magnitude()) {
      // -9223372036854775808: the literal alone does not fit, its negation does.
      advance();
      return whole(ctx_.integer(INT64_MIN));
    }
    Value v = unary();
    if (op.is(TokenKind::plus)) return v;
    const std::uint32_t below = v.height;
    v = negate(v, op.begin);
    v.height = nest(below, op.begin);
    return v;
  }

  Value power() {
    Value base = primary();
    if (!cur_.is(TokenKind::double_star)) return base;
    const Token op = cur_;
    advance();
    DepthGuard guard(*this, op.begin);
    Value exponent = unary();  // right-associative, and 2**-1 is allowed
    Value r = pow_values(base, exponent, op.begin);
    r.height = nest(std::max(base.height, exponent.height), op.begin);
    return r;
  }

  Value primary() {
    const Token t = cur_;
    switch (t.kind) {
      case TokenKind::integer: {
        if (t.value >= literal_limit)
          parse_fail(t.begin, "integer literal " + clip(spelling(t)) + " does not fit in int64");
        advance();
        return whole(ctx_.integer(static_cast<std::int64_t>(t.value)));
      }
      case TokenKind::identifier: {
        advance();
        if (cur_.is(TokenKind::lparen)) return call(t);
        return whole(symbol(t));
      }
      case TokenKind::lparen: {
        DepthGuard guard(*this, t.begin);
        advance();
        Value v = conditional();
        if (!cur_.is(TokenKind::rparen))
          parse_fail(cur_.begin, "expected ')' to close '(' opened at " + column_text(t.begin) + ", found " +
                                     describe(cur_, text_));
        advance();
        return v;
      }
      default: parse_fail(t.begin, "expected an expression, found " + describe(t, text_));
    }
  }

  Expr symbol(const Token& t) {
    const std::string_view name = spelling(t);
    if (name == "True") return ctx_.integer(1);
    if (name == "False") return ctx_.integer(0);
    if (Expr s = ctx_.find_symbol(name)) return s;
    if (!is_valid_symbol_name(name)) {
      if (find_function(name))
        parse_fail(t.begin, "'" + std::string(name) + "' is a function; expected '(' after it");
      if (name == "if" || name == "else")
        parse_fail(t.begin, "expected an expression, found keyword '" + std::string(name) + "'");
      if (detail::is_keyword(name))
        parse_fail(t.begin, "'" + std::string(name) + "' is a reserved word and cannot name a symbol");
      if (name.size() >= 2 && name[0] == '_' && name[1] == '_')
        parse_fail(t.begin, "symbol name '" + clip(name) + "' starts with '__', which is reserved");
      parse_fail(t.begin, "symbol name '" + clip(name) + "' is longer than 256 characters");
    }
    return build(t.begin, [&] { return ctx_.symbol(name, options_.new_symbols); });
  }

  static std::string arity_text(const FunctionInfo& f) {
    auto plural = [](unsigned n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); };
    if (f.max_args == 0) return "at least " + plural(f.min_args);
    if (f.max_args == f.min_args) return plural(f.min_args);
    return std::to_string(f.min_args) + " or " + plural(f.max_args);
  }

  /// `name(args...)`; `cur_` is the '('.
  Value call(const Token& name) {
    const FunctionInfo* f = find_function(spelling(name));
    if (!f) parse_fail(name.begin, "unknown function '" + clip(spelling(name)) + "'; known: " + known_functions());
    DepthGuard guard(*this, name.begin);
    const std::size_t open = cur_.begin;
    advance();

    constexpr std::size_t fixed = 3;  // no fixed-arity function takes more
    Value args[fixed];
    std::vector<Expr> many;  // Min/Max arguments
    std::size_t count = 0;
    std::uint32_t below = 0;
    while (!cur_.is(TokenKind::rparen)) {
      Value a = conditional();
      below = std::max(below, a.height);
      if (f->max_args == 0) many.push_back(integer(a));
      else if (count < fixed) args[count] = a;
      ++count;
      if (cur_.is(TokenKind::comma)) {
        advance();
        continue;
      }
      if (cur_.is(TokenKind::rparen)) break;
      if (cur_.is(TokenKind::end))
        parse_fail(cur_.begin, "expected ')' to close the arguments of '" + std::string(f->name) + "' opened at " +
                                   column_text(open) + ", found end of input");
      parse_fail(cur_.begin, "expected ',' or ')' after an argument of '" + std::string(f->name) + "', found " +
                                 describe(cur_, text_));
    }
    advance();  // ')'
    if (count < f->min_args || (f->max_args != 0 && count > f->max_args))
      parse_fail(name.begin, std::string(f->name) + " takes " + arity_text(*f) + ", got " + std::to_string(count));

    Value r;
    if (f->function == Function::floor || f->function == Function::ceiling) {
      const Value& q = args[0];
      r.num = q.num;
      if (q.fraction())
        r.num = build(name.begin, [&] {
          return f->function == Function::floor ? floor_div(q.num, q.den) : ceil_div(q.num, q.den);
        });
    } else if (f->max_args == 0) {
      r.num = build(name.begin, [&] { return f->function == Function::min ? min(many) : max(many); });
    } else {
      Expr x[fixed];
      for (std::size_t i = 0; i < count; ++i) x[i] = integer(args[i]);
      if (f->function == Function::align && count == 2 && !x[1].is_integer())
        parse_fail(name.begin, "align: the alignment must be an integer constant");
      r.num = build(name.begin, [&] { return apply(f->function, x, count); });
    }
    r.height = nest(below, name.begin);
    return r;
  }

  static Expr apply(Function f, const Expr* x, std::size_t count) {
    switch (f) {
      case Function::floor_div: return floor_div(x[0], x[1]);
      case Function::ceil_div: return ceil_div(x[0], x[1]);
      case Function::clean_div: return clean_div(x[0], x[1]);
      case Function::modular_indexing: return modular_indexing(x[0], x[1], x[2]);
      case Function::python_mod: return python_mod(x[0], x[1]);
      case Function::mod: return mod(x[0], x[1]);
      case Function::where: return where(x[0], x[1], x[2]);
      case Function::eq: return eq(x[0], x[1]);
      case Function::ne: return ne(x[0], x[1]);
      case Function::lt: return lt(x[0], x[1]);
      case Function::le: return le(x[0], x[1]);
      case Function::gt: return gt(x[0], x[1]);
      case Function::ge: return ge(x[0], x[1]);
      case Function::pow_by_natural: return pow(x[0], x[1]);
      case Function::identity: return identity(x[0]);
      case Function::align: return count == 2 ? align(x[0], x[1].value()) : align(x[0]);
      default: break;  // min, max, floor, ceiling: handled by the caller
    }
    return x[0];
  }

  Context& ctx_;
  std::string_view text_;
  const ParseOptions& options_;
  std::uint64_t first_lookup_ = ctx_.lookups();
  Token cur_{};
  std::size_t depth_ = 0;
};

}  // namespace detail::parsing
WRAPIR_DECL Result<Expr> parse(Context& ctx, std::string_view text, const ParseOptions& options) {
  if (text.size() > options.max_length)
    return Diagnostic{"input is " + std::to_string(text.size()) + " bytes, longer than the limit of " +
                          std::to_string(options.max_length) + " (ParseOptions::max_length)",
                      options.max_length};
  return ::wrapir::detail::catch_failure([&] {
    detail::parsing::Parser parser(ctx, text, options);
    return parser.parse_input();
  });
}

}  // namespace wrapir::expr