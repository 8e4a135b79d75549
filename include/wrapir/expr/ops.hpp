#pragma once
/// \file
/// The simplifying constructors of symbolic integer expressions, and the
/// operators built on them.
///
/// Every constructor returns an expression in canonical form, given operands
/// in canonical form (as sympy does on construction). The canonical form:
///
/// * sums and products are flat, with at most one integer operand (a sum's
///   constant term last, a product's coefficient first), like terms combined
///   (`x + x` is `2*x`, `x*x` is `x**2`), operands in the structural order of
///   `compare` (sums by falling degree); an integer coefficient times a
///   lone sum is distributed (`2*(x + 1)` is `2*x + 2`, as in sympy), a sum
///   that is one factor among others gives up its integer content
///   (`x*(2*y + 2)` is `2*x*(y + 1)`), and products of sums are not expanded
///   (`expand` in simplify.hpp does that on request), so the canonical form
///   of a product never depends on how its factors were grouped;
/// * constants are folded; folding that overflows int64, divides by a literal
///   zero or raises to a literal negative power throws `Error`;
/// * `Mod` becomes `PythonMod` (they agree wherever `Mod` is defined);
///   `CleanDiv` becomes its exact quotient or `FloorDiv`; `CeilDiv` is
///   `CleanDiv(a, b)` when `b` divides `a`, else `FloorDiv(a + (b - 1), b)`
///   for positive `b` (Inductor's constructor), else `-((-a) // b)`;
///   `Gt`/`Ge` become `Lt`/`Le` with swapped operands;
/// * `PythonMod(x // d, m)` becomes `ModularIndexing(x, d, m)` when `x >= 0`,
///   `d > 0` and `m > 0` are known; `ModularIndexing` exists only under those
///   conditions (else it is written as `PythonMod(FloorDiv(x, d), m)`), so the
///   C-modulus renderings of Inductor's c10 style are always right.
///
/// Cost: `add(span)` and `mul(span)` of n operands take O(n log n) (runs
/// already in canonical order are merged, not sorted again: a canonical sum
/// plus one term costs O(n)); Min/Max of n arguments O(n log n). Folding
/// with the binary operators is different: `s = s + t` builds and keeps a
/// new sum one term longer at every step, since every node lives as long as
/// its context, so n steps cost O(n^2) time and memory. Collect the terms
/// and call `add(span)` (the parser does) for anything longer than a few
/// dozen operands.
///
/// Each rewrite is a named function in `wrapir::expr::rules` that takes
/// canonical operands and returns the rewritten expression, or nothing when
/// it does not apply. The constructors try them in a fixed order; tests call
/// them one at a time.

#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::expr {

// --- constructors -----------------------------------------------------------

[[nodiscard]] Expr add(std::span<const Expr> terms);
[[nodiscard]] Expr mul(std::span<const Expr> factors);
[[nodiscard]] Expr add(Expr a, Expr b);
[[nodiscard]] Expr sub(Expr a, Expr b);
[[nodiscard]] Expr neg(Expr a);
[[nodiscard]] Expr mul(Expr a, Expr b);
/// `base ** exponent` for a natural exponent (Inductor's PowByNatural).
[[nodiscard]] Expr pow(Expr base, Expr exponent);
[[nodiscard]] Expr pow(Expr base, std::int64_t exponent);
/// Python `a // b`.
[[nodiscard]] Expr floor_div(Expr a, Expr b);
/// `a // b` where the caller claims that `b` divides `a`.
[[nodiscard]] Expr clean_div(Expr a, Expr b);
/// Ceiling of `a / b`.
[[nodiscard]] Expr ceil_div(Expr a, Expr b);
/// `(x // d) % m`, Inductor's ModularIndexing.
[[nodiscard]] Expr modular_indexing(Expr x, Expr d, Expr m);
/// Python `p % q`: the result has the sign of `q`.
[[nodiscard]] Expr python_mod(Expr p, Expr q);
/// `p % q` for `p >= 0`, `q > 0` (sympy's Mod as Inductor uses it).
[[nodiscard]] Expr mod(Expr p, Expr q);
[[nodiscard]] Expr min(std::span<const Expr> args);
[[nodiscard]] Expr max(std::span<const Expr> args);
[[nodiscard]] Expr min(Expr a, Expr b);
[[nodiscard]] Expr max(Expr a, Expr b);
[[nodiscard]] Expr min(std::initializer_list<Expr> args);
[[nodiscard]] Expr max(std::initializer_list<Expr> args);
[[nodiscard]] Expr eq(Expr a, Expr b);
[[nodiscard]] Expr ne(Expr a, Expr b);
[[nodiscard]] Expr lt(Expr a, Expr b);
[[nodiscard]] Expr le(Expr a, Expr b);
[[nodiscard]] Expr gt(Expr a, Expr b);
[[nodiscard]] Expr ge(Expr a, Expr b);
/// `condition != 0 ? if_true : if_false`.
[[nodiscard]] Expr where(Expr condition, Expr if_true, Expr if_false);
/// `x` rounded up to a multiple of `alignment` (a power of two; 64 bytes by
/// default, as Inductor's `align`).
[[nodiscard]] Expr align(Expr x, std::int64_t alignment = 64);
/// `x`, opaque: nothing simplifies through it.
[[nodiscard]] Expr identity(Expr x);

/// The canonical constructor for `kind` applied to `operands` (`value` is
/// the alignment of `align`). This is how `simplify` and the parser rebuild
/// nodes generically.
[[nodiscard]] Expr make(Context& ctx, Kind kind, std::span<const Expr> operands, std::int64_t value = 0);

// --- operators ---------------------------------------------------------------
// `/` and `%` are deliberately absent: C++ readers expect truncation, Python
// readers flooring. Spell `floor_div`, `python_mod`, `ceil_div`.

namespace detail {
/// The literal `v` in the context of `e` (the other operand of `what`).
inline Expr literal_beside(Expr e, std::int64_t v, const char* what) { return non_null(e, what).context().integer(v); }
}  // namespace detail

inline Expr operator+(Expr a, Expr b) { return add(a, b); }
inline Expr operator-(Expr a, Expr b) { return sub(a, b); }
inline Expr operator*(Expr a, Expr b) { return mul(a, b); }
inline Expr operator-(Expr a) { return neg(a); }
inline Expr operator+(Expr a, std::int64_t b) { return add(a, detail::literal_beside(a, b, "Add")); }
inline Expr operator+(std::int64_t a, Expr b) { return add(detail::literal_beside(b, a, "Add"), b); }
inline Expr operator-(Expr a, std::int64_t b) { return sub(a, detail::literal_beside(a, b, "Sub")); }
inline Expr operator-(std::int64_t a, Expr b) { return sub(detail::literal_beside(b, a, "Sub"), b); }
inline Expr operator*(Expr a, std::int64_t b) { return mul(a, detail::literal_beside(a, b, "Mul")); }
inline Expr operator*(std::int64_t a, Expr b) { return mul(detail::literal_beside(b, a, "Mul"), b); }
inline Expr floor_div(Expr a, std::int64_t b) { return floor_div(a, detail::literal_beside(a, b, "FloorDiv")); }
inline Expr ceil_div(Expr a, std::int64_t b) { return ceil_div(a, detail::literal_beside(a, b, "CeilDiv")); }
inline Expr python_mod(Expr a, std::int64_t b) { return python_mod(a, detail::literal_beside(a, b, "PythonMod")); }

// --- helpers shared by rules, printers and queries ---------------------------

/// A term split into integer coefficient and the rest: `6*x*y` is
/// `{6, x*y}`; an integer `c` is `{c, null}`.
struct Term {
  std::int64_t coefficient;
  Expr monomial;
};
[[nodiscard]] Term split_term(Expr term);

/// Polynomial degree of a monomial: symbols and opaque atoms count 1,
/// `x**k` counts `k` times the degree of `x`; 0 for a null expression.
[[nodiscard]] std::int64_t degree(Expr e) noexcept;

/// The additive terms of `e` (its operands when it is a sum, else `e`).
[[nodiscard]] std::span<const Expr> terms_of(const Expr& e) noexcept;

/// `q` with `a == q * b` for every binding, if one can be read off the
/// terms (monomial division); nothing otherwise.
[[nodiscard]] std::optional<Expr> exact_quotient(Expr a, Expr b);

/// The gcd of all integer coefficients of `e`'s terms (0 for the literal 0
/// and for a null expression).
[[nodiscard]] std::int64_t content(Expr e) noexcept;

namespace detail {

[[noreturn]] inline void overflow(const char* what) {
  throw Error(std::string("integer overflow while folding constants in ") + what +
              ": the result does not fit in int64");
}

inline std::int64_t folded_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (!checked::add(a, b, r)) overflow(what);
  return r;
}

inline std::int64_t folded_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (!checked::mul(a, b, r)) overflow(what);
  return r;
}

/// A common divisor of `a` and `b`: the greatest, except that 2^63 (which
/// int64 cannot hold) is reported as 2^62. 0 only when both are 0.
inline std::int64_t gcd64(std::int64_t a, std::int64_t b) noexcept {
  // std::gcd on INT64_MIN is undefined; work on unsigned magnitudes.
  auto mag = [](std::int64_t v) { return v < 0 ? 0ULL - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v); };
  const std::uint64_t g = std::gcd(mag(a), mag(b));
  return g > static_cast<std::uint64_t>(INT64_MAX) ? std::int64_t{1} << 62 : static_cast<std::int64_t>(g);
}

/// `coefficient * monomial` built directly: both are canonical.
inline Expr scaled(Context& ctx, std::int64_t coefficient, Expr monomial) {
  if (!monomial) return ctx.integer(coefficient);
  if (coefficient == 0) return ctx.integer(0);
  if (coefficient == 1) return monomial;
  std::vector<Expr> ops;
  ops.push_back(ctx.integer(coefficient));
  if (monomial.is(Kind::mul)) ops.insert(ops.end(), monomial.operands().begin(), monomial.operands().end());
  else ops.push_back(monomial);
  return ctx.make_raw(Kind::mul, ops);
}

/// Canonical order of a sum's terms, given split: falling degree, then
/// structure of the monomials.
inline bool term_less(const Term& a, const Term& b) noexcept {
  const auto da = degree(a.monomial), db = degree(b.monomial);
  if (da != db) return da > db;
  if (auto c = compare(a.monomial, b.monomial); c != 0) return c < 0;
  return a.coefficient < b.coefficient;
}

inline Context& context_of(std::span<const Expr> operands, const char* what) {
  if (operands.empty()) throw Error(std::string(what) + " needs at least one operand");
  for (Expr e : operands)
    if (!e) null_expression(what);
  Context& ctx = operands.front().context();
  for (Expr e : operands)
    if (&e.context() != &ctx) throw Error(std::string(what) + ": operands belong to different contexts");
  return ctx;
}

inline Context& context_of(std::initializer_list<Expr> operands, const char* what) {
  return context_of(std::span<const Expr>(operands.begin(), operands.size()), what);
}


}  // namespace detail

inline Term split_term(Expr term) {
  detail::non_null(term, "split_term");
  if (term.is_integer()) return {term.value(), Expr{}};
  if (term.is(Kind::mul) && term.operand(0).is_integer()) {
    auto ops = term.operands().subspan(1);
    if (ops.size() == 1) return {term.operand(0).value(), ops[0]};
    return {term.operand(0).value(), term.context().make_raw(Kind::mul, ops)};
  }
  return {1, term};
}

inline std::int64_t degree(Expr e) noexcept {
  if (!e) return 0;
  switch (e.kind()) {
    case Kind::integer: return 0;
    case Kind::mul: {
      std::int64_t d = 0;
      for (Expr f : e.operands()) d += degree(f);
      return d;
    }
    case Kind::pow:
      if (e.operand(1).is_integer()) return degree(e.operand(0)) * std::min<std::int64_t>(e.operand(1).value(), 1 << 20);
      return 1;
    default: return 1;
  }
}

inline std::span<const Expr> terms_of(const Expr& e) noexcept {
  return e.is(Kind::add) ? e.operands() : std::span<const Expr>(&e, 1);
}

inline std::int64_t content(Expr e) noexcept {
  if (!e) return 0;
  std::int64_t g = 0;
  for (Expr t : terms_of(e)) {
    if (t.is_integer()) g = detail::gcd64(g, t.value());
    else if (t.is(Kind::mul) && t.operand(0).is_integer()) g = detail::gcd64(g, t.operand(0).value());
    else g = detail::gcd64(g, 1);
  }
  return g;
}

namespace detail {

/// A sum as `g * primitive`: `g` is the integer content of its terms, with
/// the sign that makes the primitive sum's first term positive
/// (`-2*y - 2` is `-2 * (y + 1)`). `g` is 1 when nothing can be pulled out.
/// A term `c*(s)`, kept whole because `c` times `s` overflowed, distributes
/// once divided, so the quotient can have content again and its terms can
/// come in another order (fuzzing found both): content is divided out until
/// none is left (each round at least halves it), and the sign is read from
/// the result.
inline std::pair<std::int64_t, Expr> primitive_sum(Expr sum) {
  Context& ctx = sum.context();
  std::int64_t total = 1;
  Expr primitive = sum;
  while (primitive.is(Kind::add)) {
    const std::int64_t g = content(primitive);
    std::int64_t next = 0;
    if (g <= 1 || !checked::mul(total, g, next)) break;
    auto q = exact_quotient(primitive, ctx.integer(g));
    if (!q) break;
    total = next;
    primitive = *q;
  }
  if (split_term(terms_of(primitive).front()).coefficient < 0) {
    auto negated = exact_quotient(primitive, ctx.integer(-1));
    if (negated && split_term(terms_of(*negated).front()).coefficient > 0) {
      primitive = *negated;
      total = -total;
    }
  }
  return {total, primitive};
}

/// A monomial as coefficient and base -> integer exponent, for division.
struct Factored {
  std::int64_t coefficient = 1;
  std::vector<std::pair<Expr, std::int64_t>> powers;
};

inline Factored factor_monomial(Expr term) {
  Factored f;
  auto add_factor = [&](Expr x) {
    if (x.is_integer()) {
      f.coefficient = x.value();
    } else if (x.is(Kind::pow) && x.operand(1).is_integer()) {
      f.powers.emplace_back(x.operand(0), x.operand(1).value());
    } else {
      f.powers.emplace_back(x, 1);
    }
  };
  if (term.is(Kind::mul)) {
    for (Expr x : term.operands()) add_factor(x);
  } else {
    add_factor(term);
  }
  return f;
}

/// `a / b` for monomials, if exact.
inline std::optional<Expr> monomial_quotient(Expr a, Expr b) {
  Context& ctx = a.context();
  Factored fa = factor_monomial(a), fb = factor_monomial(b);
  // INT64_MIN / -1 does not fit (and INT64_MIN % -1 traps): no quotient.
  if (fb.coefficient == 0 || (fb.coefficient == -1 && fa.coefficient == INT64_MIN)) return std::nullopt;
  if (fa.coefficient % fb.coefficient != 0) return std::nullopt;
  std::vector<Expr> factors;
  factors.push_back(ctx.integer(fa.coefficient / fb.coefficient));
  for (auto& [base, exponent] : fa.powers) {
    std::int64_t left = exponent;
    for (auto& [bb, be] : fb.powers) {
      if (bb == base) {
        left -= be;
        be = 0;
      }
    }
    if (left < 0) return std::nullopt;
    if (left > 0) factors.push_back(pow(base, left));
  }
  for (auto& pb : fb.powers)
    if (pb.second != 0) return std::nullopt;  // b has a factor a lacks
  return mul(factors);
}

/// `term / d` for a nonzero integer `d`, if exact: what `monomial_quotient`
/// gives, without taking the monomial apart and multiplying it together
/// again (sums divide by their content on every product they enter, so this
/// is hot). A term `c*(sum)`, which exists only where distributing `c`
/// overflowed, goes the general way: its quotient may distribute.
inline std::optional<Expr> term_over_integer(Expr term, std::int64_t d) {
  const Term split = split_term(term);
  if (split.monomial && split.monomial.is(Kind::add)) return monomial_quotient(term, term.context().integer(d));
  if (d == -1 && split.coefficient == INT64_MIN) return std::nullopt;  // the quotient does not fit
  if (split.coefficient % d != 0) return std::nullopt;
  return scaled(term.context(), split.coefficient / d, split.monomial);
}

inline std::optional<Expr> term_quotient(Expr term, Expr b) {
  return b.is_integer() ? term_over_integer(term, b.value()) : monomial_quotient(term, b);
}

}  // namespace detail

inline std::optional<Expr> exact_quotient(Expr a, Expr b) {
  detail::context_of({a, b}, "exact_quotient");
  if (b.is_integer(0)) return std::nullopt;
  if (a == b) return a.context().integer(1);
  if (b.is(Kind::add)) return std::nullopt;  // division by a sum: only the trivial case
  if (a.is(Kind::add)) {
    std::vector<Expr> quotients;
    quotients.reserve(a.operands().size());
    for (Expr t : a.operands()) {
      auto q = detail::term_quotient(t, b);
      if (!q) return std::nullopt;
      quotients.push_back(*q);
    }
    return add(quotients);
  }
  return detail::term_quotient(a, b);
}

// --- rules -------------------------------------------------------------------

namespace rules {

using Maybe = std::optional<Expr>;

/// The range of `a - b`; unbounded when the difference itself cannot be
/// built (its constants overflow), so a rule that asks simply does not fire.
inline Interval difference_bounds(Expr a, Expr b) noexcept {
  try {
    return bounds(sub(a, b));
  } catch (...) {
    return Interval{};
  }
}

// FloorDiv ---------------------------------------------------------------

/// `a // b` of two integers.
inline Maybe floor_div_fold(Expr a, Expr b) {
  if (!a.is_integer() || !b.is_integer()) return std::nullopt;
  std::int64_t r = 0;
  if (!checked::floor_div(a.value(), b.value(), r)) detail::overflow("FloorDiv");
  return a.context().integer(r);
}

/// `a // 1 = a`, `a // -1 = -a`, `0 // b = 0`, `a // a = 1`.
inline Maybe floor_div_identity(Expr a, Expr b) {
  if (b.is_integer(1)) return a;
  if (b.is_integer(-1)) return neg(a);
  if (a.is_integer(0)) return a;
  if (a == b) return a.context().integer(1);
  return std::nullopt;
}

/// `a // -c = (-a) // c` and `a // (-d) = (-a) // d`: divisors do not
/// start negative.
inline Maybe floor_div_negative_divisor(Expr a, Expr b) {
  if (b.is(Kind::add) || split_term(b).coefficient >= 0 || split_term(b).coefficient == INT64_MIN) return std::nullopt;
  return floor_div(neg(a), neg(b));
}

/// `(x // c) // b = x // (c*b)` for `b > 0`.
inline Maybe floor_div_nested(Expr a, Expr b) {
  if (!a.is(Kind::floor_div) || !bounds(b).known_positive()) return std::nullopt;
  return floor_div(a.operand(0), mul(a.operand(1), b));
}

/// `(q*b + r) // b = q + r // b`: for an integer `b`, terms that it divides
/// leave the division (Inductor's rule); for any `b`, a numerator that `b`
/// divides whole is the exact quotient. (Pulling terms out of a symbolic
/// division would turn Inductor's `CeilDiv(a, d) = (a + d - 1) // d` into
/// `(a - 1) // d + 1`.)
inline Maybe floor_div_pull_divisible(Expr a, Expr b) {
  if (auto q = exact_quotient(a, b)) return q;
  if (!a.is(Kind::add) || !b.is_integer()) return std::nullopt;
  std::vector<Expr> quotients, rest;
  for (Expr t : a.operands()) {
    if (auto q = exact_quotient(t, b)) quotients.push_back(*q);
    else rest.push_back(t);
  }
  if (quotients.empty()) return std::nullopt;
  Expr remainder = rest.empty() ? a.context().integer(0) : add(rest);
  return add(add(quotients), floor_div(remainder, b));
}

/// `(g*a + c) // (g*b) = (a + c // g) // b` for the gcd `g` of the integer
/// coefficients of `a`'s non-constant terms and of `b`. Exact when `g`
/// divides `c`; for positive `b` also when it does not, since the remainder
/// `c % g < g` never reaches the next multiple of `g*b`. This makes the
/// ceiling forms `(64*x + 5) // 6` and `(32*x + 2) // 3` one expression.
inline Maybe floor_div_gcd(Expr a, Expr b) {
  std::int64_t constant = 0, g = 0;
  for (Expr t : terms_of(a)) {
    if (t.is_integer()) constant = t.value();
    else g = detail::gcd64(g, split_term(t).coefficient);
  }
  if (g == 0) return std::nullopt;  // `a` is a constant
  g = detail::gcd64(g, content(b));
  if (g <= 1) return std::nullopt;
  const bool exact = constant % g == 0;
  if (!exact && !bounds(b).known_positive()) return std::nullopt;
  Context& ctx = a.context();
  Expr variable_part = sub(a, ctx.integer(constant));
  auto qa = exact_quotient(variable_part, ctx.integer(g));
  auto qb = exact_quotient(b, ctx.integer(g));
  if (!qa || !qb) return std::nullopt;
  return floor_div(add(*qa, ctx.integer(::wrapir::floor_div(constant, g))), *qb);
}

/// `(-x) // d = -((x + d - 1) // d)` for `d > 1` (an integer, or a positive
/// symbolic divisor): numerators do not start negative, so that
/// `-((-x) // d)` (sympy's ceiling) reads as `(x + d - 1) // d`.
inline Maybe floor_div_negated_numerator(Expr a, Expr b) {
  if (b.is_integer() ? b.value() <= 1 : !bounds(b).known_positive()) return std::nullopt;
  bool any = false;
  for (Expr t : terms_of(a)) {
    if (t.is_integer()) continue;
    if (split_term(t).coefficient >= 0) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return neg(floor_div(add(neg(a), sub(b, b.context().integer(1))), b));
}

/// `a // b = 0` when `0 <= a < b` is known.
inline Maybe floor_div_in_range(Expr a, Expr b) {
  Interval ia = bounds(a), ib = bounds(b);
  if (ia.known_nonnegative() && !ia.hi_unbounded && !ib.lo_unbounded && ia.hi < ib.lo) return a.context().integer(0);
  return std::nullopt;
}

// PythonMod and ModularIndexing ---------------------------------------------

inline Maybe python_mod_fold(Expr p, Expr q) {
  if (!p.is_integer() || !q.is_integer()) return std::nullopt;
  std::int64_t r = 0;
  if (!checked::python_mod(p.value(), q.value(), r)) throw Error("modulo by zero in PythonMod");
  return p.context().integer(r);
}

/// `p % 1 = p % -1 = 0 % q = q % q = 0`.
inline Maybe python_mod_zero(Expr p, Expr q) {
  if (q.is_integer(1) || q.is_integer(-1) || p.is_integer(0) || p == q) return p.context().integer(0);
  return std::nullopt;
}

/// `(k*q + r) % q = r % q`: terms that `q` divides drop out.
inline Maybe python_mod_drop_multiples(Expr p, Expr q) {
  if (exact_quotient(p, q)) return p.context().integer(0);
  if (!p.is(Kind::add)) return std::nullopt;
  std::vector<Expr> rest;
  for (Expr t : p.operands())
    if (!exact_quotient(t, q)) rest.push_back(t);
  if (rest.size() == p.operands().size()) return std::nullopt;
  return python_mod(rest.empty() ? p.context().integer(0) : add(rest), q);
}

/// `p % q = p` when `0 <= p < q` is known.
inline Maybe python_mod_in_range(Expr p, Expr q) {
  Interval ip = bounds(p), iq = bounds(q);
  if (ip.known_nonnegative() && !ip.hi_unbounded && !iq.lo_unbounded && ip.hi < iq.lo) return p;
  return std::nullopt;
}

/// `(x // d) % m = ModularIndexing(x, d, m)` and `x % m =
/// ModularIndexing(x, 1, m)` when `x >= 0`, `d > 0`, `m > 0` are known.
inline Maybe python_mod_to_modular_indexing(Expr p, Expr q) {
  if (!bounds(q).known_positive()) return std::nullopt;
  if (p.is(Kind::floor_div)) {
    if (bounds(p.operand(0)).known_nonnegative() && bounds(p.operand(1)).known_positive())
      return modular_indexing(p.operand(0), p.operand(1), q);
    return std::nullopt;
  }
  if (bounds(p).known_nonnegative()) return modular_indexing(p, p.context().integer(1), q);
  return std::nullopt;
}

inline Maybe modular_indexing_fold(Expr x, Expr d, Expr m) {
  if (!x.is_integer() || !d.is_integer() || !m.is_integer()) return std::nullopt;
  std::int64_t q = 0, r = 0;
  if (!checked::floor_div(x.value(), d.value(), q)) detail::overflow("ModularIndexing");  // d != 0: checked by the constructor
  if (!checked::python_mod(q, m.value(), r)) throw Error("modulo by zero in ModularIndexing");
  return x.context().integer(r);
}

/// `ModularIndexing(0, d, m) = ModularIndexing(x, d, 1) = 0`.
inline Maybe modular_indexing_zero(Expr x, Expr, Expr m) {
  if (x.is_integer(0) || m.is_integer(1)) return x.context().integer(0);
  return std::nullopt;
}

/// Outside its canonical domain (`x >= 0`, `d > 0`, `m > 0` known),
/// ModularIndexing is written as `PythonMod(FloorDiv(x, d), m)`.
inline Maybe modular_indexing_outside_domain(Expr x, Expr d, Expr m) {
  if (bounds(x).known_nonnegative() && bounds(d).known_positive() && bounds(m).known_positive()) return std::nullopt;
  // python_mod turns this back into ModularIndexing only inside the domain,
  // so the two constructors never call each other in a circle.
  return python_mod(floor_div(x, d), m);
}

/// `ModularIndexing(x, d, m) = PythonMod(q, m)` when `q = x // d`
/// simplifies (`ModularIndexing(s1, s1, 6)` is `1 % 6`, that is 1).
inline Maybe modular_indexing_quotient_simplifies(Expr x, Expr d, Expr m) {
  if (d.is_integer(1)) return std::nullopt;  // `x % m` itself is ModularIndexing(x, 1, m)
  Expr quotient = floor_div(x, d);
  if (quotient.is(Kind::floor_div) && quotient.operand(0) == x && quotient.operand(1) == d) return std::nullopt;
  return python_mod(quotient, m);
}

/// `ModularIndexing(g*x, g*d, m) = ModularIndexing(x, d, m)` for the gcd `g`
/// of `x`'s coefficients and an integer `d`.
inline Maybe modular_indexing_gcd(Expr x, Expr d, Expr m) {
  if (!d.is_integer()) return std::nullopt;
  const std::int64_t g = detail::gcd64(content(x), d.value());
  if (g <= 1) return std::nullopt;
  Context& ctx = x.context();
  auto qx = exact_quotient(x, ctx.integer(g));
  if (!qx) return std::nullopt;
  return modular_indexing(*qx, ctx.integer(d.value() / g), m);
}

/// `ModularIndexing(y // c, d, m) = ModularIndexing(y, c*d, m)` for `y >= 0`,
/// `c > 0`.
inline Maybe modular_indexing_absorb_floor_div(Expr x, Expr d, Expr m) {
  if (!x.is(Kind::floor_div) || !bounds(x.operand(0)).known_nonnegative() || !bounds(x.operand(1)).known_positive())
    return std::nullopt;
  return modular_indexing(x.operand(0), mul(x.operand(1), d), m);
}

/// Terms of `x` that are multiples of `d*m` do not change the result.
inline Maybe modular_indexing_drop_multiples(Expr x, Expr d, Expr m) {
  Expr period = mul(d, m);
  if (exact_quotient(x, period)) return x.context().integer(0);
  if (!x.is(Kind::add)) return std::nullopt;
  std::vector<Expr> rest;
  for (Expr t : x.operands())
    if (!exact_quotient(t, period)) rest.push_back(t);
  if (rest.size() == x.operands().size()) return std::nullopt;
  return modular_indexing(rest.empty() ? x.context().integer(0) : add(rest), d, m);
}

/// `ModularIndexing(x, d, m) = x // d` when `0 <= x < d*m` is known.
inline Maybe modular_indexing_in_range(Expr x, Expr d, Expr m) {
  Interval ix = bounds(x), id = bounds(d), im = bounds(m);
  if (!ix.known_nonnegative() || id.lo_unbounded || im.lo_unbounded || id.lo < 1 || im.lo < 1) return std::nullopt;
  std::int64_t period = 0;
  if (!checked::mul(id.lo, im.lo, period)) return std::nullopt;
  if (!ix.known_le(period - 1)) return std::nullopt;
  return floor_div(x, d);
}

// Min and Max ------------------------------------------------------------------

/// For `Min` (`is_min`) or `Max`: drop every argument that another one
/// provably dominates (`Max(s0, 1) = s0` for positive `s0`).
inline std::vector<Expr> drop_dominated(std::vector<Expr> args, bool is_min) {
  // The ranges of the arguments decide most cases without building nodes;
  // the range of each difference decides more (`s0 + 1` vs `s0`), but costs
  // a node per pair, so only for the short lists wrappers have.
  constexpr std::size_t max_pairwise_differences = 16;
  std::vector<Interval> ranges;
  ranges.reserve(args.size());
  for (Expr a : args) ranges.push_back(bounds(a));
  std::vector<bool> dropped(args.size(), false);
  if (args.size() > max_pairwise_differences) {
    // Ranges alone decide, so the pairwise scan below would only ask "does
    // another kept argument's bound reach past this one's": an ordered set
    // of those bounds answers in O(log n), the same outcome in O(n log n).
    std::set<std::pair<std::int64_t, std::size_t>> reach;  // Min: upper bounds; Max: lower bounds
    auto key = [&](std::size_t i) -> std::optional<std::int64_t> {
      const Interval& r = ranges[i];
      if (is_min) return r.hi_unbounded ? std::nullopt : std::optional<std::int64_t>(r.hi);
      return r.lo_unbounded ? std::nullopt : std::optional<std::int64_t>(r.lo);
    };
    for (std::size_t i = 0; i < args.size(); ++i)
      if (auto k = key(i)) reach.emplace(*k, i);
    auto dominated = [&](std::size_t i, auto it, auto end) {
      for (; it != end; ++it) {
        if (it->second == i) continue;  // at most one entry is skipped
        return is_min ? ranges[i].known_ge(it->first) : ranges[i].known_le(it->first);
      }
      return false;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
      dropped[i] = is_min ? dominated(i, reach.begin(), reach.end()) : dominated(i, reach.rbegin(), reach.rend());
      if (auto k = key(i); dropped[i] && k) reach.erase({*k, i});
    }
  } else {
    for (std::size_t i = 0; i < args.size(); ++i) {
      for (std::size_t j = 0; j < args.size() && !dropped[i]; ++j) {
        if (i == j || dropped[j]) continue;
        // Is args[j] <= args[i] (for Min) / args[j] >= args[i] (for Max)?
        const Interval& ri = ranges[i];
        const Interval& rj = ranges[j];
        const bool by_range = is_min ? (!rj.hi_unbounded && ri.known_ge(rj.hi)) : (!rj.lo_unbounded && ri.known_le(rj.lo));
        if (by_range) {
          dropped[i] = true;
          continue;
        }
        Interval diff = difference_bounds(args[i], args[j]);
        if (is_min ? diff.known_nonnegative() : diff.known_le(0)) dropped[i] = true;
      }
    }
  }
  std::vector<Expr> kept;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!dropped[i]) kept.push_back(args[i]);
  return kept;
}

// Comparisons -------------------------------------------------------------------

/// A comparison whose truth the operands' ranges decide.
inline Maybe compare_decided(Kind kind, Expr a, Expr b) {
  Context& ctx = a.context();
  if (a == b) return ctx.integer(kind == Kind::eq || kind == Kind::le || kind == Kind::ge ? 1 : 0);
  if (a.is_integer() && b.is_integer()) {
    const std::int64_t x = a.value(), y = b.value();
    const bool holds = kind == Kind::eq ? x == y : kind == Kind::ne ? x != y : kind == Kind::lt ? x < y : x <= y;
    return ctx.integer(holds ? 1 : 0);
  }
  // Disjoint ranges decide without building the difference.
  const Interval ra = bounds(a), rb = bounds(b);
  const bool a_below = !ra.hi_unbounded && !rb.lo_unbounded && ra.hi < rb.lo;
  const bool a_above = !ra.lo_unbounded && !rb.hi_unbounded && ra.lo > rb.hi;
  const bool a_at_most = !ra.hi_unbounded && !rb.lo_unbounded && ra.hi <= rb.lo;
  switch (kind) {
    case Kind::eq:
      if (a_below || a_above) return ctx.integer(0);
      break;
    case Kind::ne:
      if (a_below || a_above) return ctx.integer(1);
      break;
    case Kind::lt:
      if (a_below) return ctx.integer(1);
      if (!ra.lo_unbounded && !rb.hi_unbounded && ra.lo >= rb.hi) return ctx.integer(0);
      break;
    case Kind::le:
      if (a_at_most) return ctx.integer(1);
      if (a_above) return ctx.integer(0);
      break;
    default: break;
  }
  Interval d = difference_bounds(a, b);
  auto yes = [&] { return ctx.integer(1); };
  auto no = [&] { return ctx.integer(0); };
  switch (kind) {
    case Kind::eq:
    case Kind::ne: {
      const bool differ = d.known_positive() || d.known_negative();
      if (differ) return kind == Kind::eq ? no() : yes();
      if (d.is_constant() && d.lo == 0) return kind == Kind::eq ? yes() : no();
      return std::nullopt;
    }
    case Kind::lt:
      if (d.known_negative()) return yes();
      if (d.known_nonnegative()) return no();
      return std::nullopt;
    case Kind::le:
      if (d.known_le(0)) return yes();
      if (d.known_positive()) return no();
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace rules

namespace detail {

/// The first rewrite that applies. A rewrite whose result cannot be built
/// (an intermediate constant such as the product of two divisors leaves
/// int64) simply does not apply: only the fold rules, which the callers run
/// first, report such errors, because only there is the expression itself
/// wrong for every binding.
inline std::optional<Expr> try_rule(auto rule, auto... operands) {
  try {
    return rule(operands...);
  } catch (const Error&) {
    return std::nullopt;
  }
}

template <class... Rules>
std::optional<Expr> first_rule(Expr a, Expr b, Rules... rules) {
  std::optional<Expr> r;
  ((r = try_rule(rules, a, b)) || ...);
  return r;
}

template <class... Rules>
std::optional<Expr> first_rule(Expr a, Expr b, Expr c, Rules... rules) {
  std::optional<Expr> r;
  ((r = try_rule(rules, a, b, c)) || ...);
  return r;
}

}  // namespace detail

// --- constructor definitions ---------------------------------------------------

namespace detail {

/// A term of a sum under construction: split into coefficient and monomial,
/// with the monomial's degree (computed once, not in every comparison) and
/// the position of the operand it came from.
struct SumTerm {
  std::int64_t coefficient;
  Expr monomial;
  std::int64_t degree;
  std::size_t operand;
};

/// The canonical order of a sum's monomials (falling degree, then structure).
/// Like terms compare equal, so a stable sort keeps them in operand order.
inline bool monomial_before(const SumTerm& a, const SumTerm& b) noexcept {
  if (a.degree != b.degree) return a.degree > b.degree;
  return compare(a.monomial, b.monomial) < 0;
}

/// A stable sort that first finds the runs already in order (rising, or
/// strictly falling and then reversed) and merges them pairwise: O(n log r)
/// for r runs. A canonical sum or product plus one operand is at most three
/// runs, so `sum + term` merges in linear time instead of sorting again.
template <class T, class Less>
void merge_sorted_runs(std::vector<T>& items, Less less) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < items.size();) {
    starts.push_back(i);
    std::size_t j = i + 1;
    if (j < items.size() && less(items[j], items[i])) {
      while (j < items.size() && less(items[j], items[j - 1])) ++j;
      std::reverse(items.begin() + static_cast<std::ptrdiff_t>(i), items.begin() + static_cast<std::ptrdiff_t>(j));
    } else {
      while (j < items.size() && !less(items[j], items[j - 1])) ++j;
    }
    i = j;
  }
  if (starts.empty()) return;
  starts.push_back(items.size());
  while (starts.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t r = 0; r + 2 < starts.size(); r += 2) {
      const auto first = items.begin() + static_cast<std::ptrdiff_t>(starts[r]);
      std::inplace_merge(first, items.begin() + static_cast<std::ptrdiff_t>(starts[r + 1]),
                         items.begin() + static_cast<std::ptrdiff_t>(starts[r + 2]), less);
      merged.push_back(starts[r + 2]);
    }
    if (merged.back() != starts.back()) merged.push_back(starts.back());  // an odd run out
    starts = std::move(merged);
  }
}

/// The canonical sum of `terms`. Like terms are combined in operand order
/// with checked additions, so the result, and whether an overflow is
/// reported, are those of adding the operands one at a time from the left.
/// On overflow, `overflowed_at` (when given) receives the index of the
/// operand whose addition overflowed first, before `Error` is thrown.
inline Expr sum_of(std::span<const Expr> terms, std::size_t* overflowed_at = nullptr) {
  Context& ctx = context_of(terms, "Add");
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t first_overflow = none;
  std::int64_t constant = 0;
  bool constant_overflowed = false;
  std::vector<SumTerm> collected;
  collected.reserve(terms.size());
  auto collect = [&](Expr t, std::size_t operand) {
    const Term term = split_term(t);
    if (term.monomial) {
      collected.push_back(SumTerm{term.coefficient, term.monomial, degree(term.monomial), operand});
    } else if (!constant_overflowed && !checked::add(constant, term.coefficient, constant)) {
      constant_overflowed = true;
      first_overflow = std::min(first_overflow, operand);
    }
  };
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].is(Kind::add)) {
      for (Expr u : terms[i].operands()) collect(u, i);
    } else {
      collect(terms[i], i);
    }
  }
  merge_sorted_runs(collected, monomial_before);
  // Combine like terms (adjacent now, in operand order) in place.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < collected.size();) {
    SumTerm combined = collected[i];
    bool overflowed = false;
    std::size_t j = i + 1;
    for (; j < collected.size() && collected[j].monomial == combined.monomial; ++j) {
      if (!overflowed && !checked::add(combined.coefficient, collected[j].coefficient, combined.coefficient)) {
        overflowed = true;
        first_overflow = std::min(first_overflow, collected[j].operand);
      }
    }
    if (combined.coefficient != 0) collected[kept++] = combined;
    i = j;
  }
  if (first_overflow != none) {
    if (overflowed_at != nullptr) *overflowed_at = first_overflow;
    overflow("Add");
  }
  std::vector<Expr> out;
  out.reserve(kept + 1);
  for (std::size_t i = 0; i < kept; ++i) out.push_back(scaled(ctx, collected[i].coefficient, collected[i].monomial));
  if (constant != 0) out.push_back(ctx.integer(constant));
  if (out.empty()) return ctx.integer(0);
  if (out.size() == 1) return out.front();
  return ctx.make_raw(Kind::add, out);
}

}  // namespace detail

inline Expr add(std::span<const Expr> terms) { return detail::sum_of(terms); }

namespace detail {

/// Where each base of a product under construction sits in its list of
/// powers: a scan while the list is short (the common case, no allocation),
/// then an open-addressing table of positions, so that a product of n
/// factors is built in O(n log n), not O(n^2).
class BaseIndex {
 public:
  using Powers = std::vector<std::pair<Expr, Expr>>;

  /// The position of `base` in `powers`, or `powers.size()`.
  [[nodiscard]] std::size_t find(const Powers& powers, Expr base) const noexcept {
    if (powers.size() <= scan_limit) {
      for (std::size_t i = 0; i < powers.size(); ++i)
        if (powers[i].first == base) return i;
      return powers.size();
    }
    for (std::size_t slot = first_slot(base); slots_[slot] != empty; slot = (slot + 1) & mask()) {
      if (powers[slots_[slot]].first == base) return slots_[slot];
    }
    return powers.size();
  }

  /// Call after appending a base to `powers`.
  void appended(const Powers& powers) {
    if (powers.size() <= scan_limit) return;
    if (powers.size() * 2 <= slots_.size()) {
      place(powers.back().first, powers.size() - 1);
      return;
    }
    slots_.assign(std::max<std::size_t>(64, slots_.size() * 2), empty);
    for (std::size_t i = 0; i < powers.size(); ++i) place(powers[i].first, i);
  }

 private:
  static constexpr std::size_t scan_limit = 16;
  static constexpr std::size_t empty = static_cast<std::size_t>(-1);

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }
  [[nodiscard]] std::size_t first_slot(Expr base) const noexcept {
    // Node addresses: a multiplicative hash spreads their aligned low bits.
    const auto bits = reinterpret_cast<std::uintptr_t>(base.node());
    return static_cast<std::size_t>((static_cast<std::uint64_t>(bits) * 0x9e3779b97f4a7c15ULL) >> 20) & mask();
  }
  void place(Expr base, std::size_t position) noexcept {
    std::size_t slot = first_slot(base);
    while (slots_[slot] != empty) slot = (slot + 1) & mask();
    slots_[slot] = position;
  }

  std::vector<std::size_t> slots_;
};

}  // namespace detail

inline Expr mul(std::span<const Expr> factors) {
  Context& ctx = detail::context_of(factors, "Mul");
  std::int64_t coefficient = 1;
  std::vector<std::pair<Expr, Expr>> powers;  // base -> exponent
  detail::BaseIndex base_index;
  std::vector<Expr> pending(factors.begin(), factors.end());
  while (!pending.empty()) {
    Expr f = pending.back();
    pending.pop_back();
    if (f.is_integer()) {
      coefficient = detail::folded_mul(coefficient, f.value(), "Mul");
      continue;
    }
    if (f.is(Kind::mul)) {
      pending.insert(pending.end(), f.operands().begin(), f.operands().end());
      continue;
    }
    if (f.is(Kind::add)) {
      auto [g, primitive] = detail::primitive_sum(f);
      coefficient = detail::folded_mul(coefficient, g, "Mul");
      if (!primitive.is(Kind::add)) {  // the quotient collapsed to one term
        pending.push_back(primitive);
        continue;
      }
      f = primitive;
    }
    Expr base = f, exponent = ctx.integer(1);
    if (f.is(Kind::pow)) {
      base = f.operand(0);
      exponent = f.operand(1);
    }
    const std::size_t at = base_index.find(powers, base);
    if (at == powers.size()) {
      powers.emplace_back(base, exponent);
      base_index.appended(powers);
    } else {
      powers[at].second = add(powers[at].second, exponent);
    }
  }
  if (coefficient == 0) return ctx.integer(0);
  std::vector<Expr> rest;
  for (auto& [base, exponent] : powers) {
    Expr p = pow(base, exponent);
    if (p.is_integer()) coefficient = detail::folded_mul(coefficient, p.value(), "Mul");
    else if (p.is(Kind::mul)) {
      // (x*y)**k distributed by pow: fold its parts in again.
      for (Expr part : p.operands()) {
        if (part.is_integer()) coefficient = detail::folded_mul(coefficient, part.value(), "Mul");
        else rest.push_back(part);
      }
    } else rest.push_back(p);
  }
  if (coefficient == 0) return ctx.integer(0);
  // An integer times a lone sum distributes, as in sympy: 2*(x + 1) is
  // 2*x + 2; unless a scaled coefficient would leave int64, and then the
  // product stays `c*(x + 1)`, the node the sum gets among other factors.
  if (rest.size() == 1 && rest.front().is(Kind::add) && coefficient != 1) {
    std::vector<Expr> terms;
    bool fits = true;
    for (Expr t : rest.front().operands()) {
      const Term term = split_term(t);
      std::int64_t scaled = 0;
      if (!checked::mul(coefficient, term.coefficient, scaled)) {
        fits = false;
        break;
      }
      terms.push_back(detail::scaled(ctx, scaled, term.monomial));
    }
    if (fits) return add(terms);
  }
  detail::merge_sorted_runs(rest, ExprLess{});
  if (coefficient != 1) rest.insert(rest.begin(), ctx.integer(coefficient));
  if (rest.empty()) return ctx.integer(coefficient);
  if (rest.size() == 1) return rest.front();
  return ctx.make_raw(Kind::mul, rest);
}

inline Expr add(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return add(ops);
}
inline Expr mul(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return mul(ops);
}
inline Expr neg(Expr a) { return mul(detail::literal_beside(a, -1, "Neg"), a); }
inline Expr sub(Expr a, Expr b) {
  detail::context_of({a, b}, "Sub");
  return add(a, neg(b));
}

inline Expr pow(Expr base, Expr exponent) {
  Context& ctx = detail::context_of({base, exponent}, "PowByNatural");
  if (exponent.is_integer()) {
    const std::int64_t n = exponent.value();
    if (n < 0) throw Error("negative exponent " + std::to_string(n) + " in PowByNatural: the exponent must be a natural number");
    if (n == 0) return ctx.integer(1);
    if (n == 1) return base;
    if (base.is_integer()) {
      std::int64_t r = 0;
      if (!checked::pow(base.value(), n, r)) detail::overflow("PowByNatural");
      return ctx.integer(r);
    }
  }
  if (base.is_integer(1)) return base;
  if (base.is_integer(0) && bounds(exponent).known_positive()) return base;
  if (base.is(Kind::pow)) return pow(base.operand(0), mul(base.operand(1), exponent));
  if (base.is(Kind::mul)) {
    // (c*x*y)**n = c**n * x**n * y**n
    std::vector<Expr> parts;
    for (Expr f : base.operands()) parts.push_back(pow(f, exponent));
    return mul(parts);
  }
  if (base.is(Kind::add)) {
    // (2*y + 2)**n = 2**n * (y + 1)**n: powers of sums are not expanded, but
    // their content leaves them, as for products.
    auto [g, primitive] = detail::primitive_sum(base);
    if (g != 1) return mul(pow(ctx.integer(g), exponent), pow(primitive, exponent));
  }
  return ctx.make_raw(Kind::pow, std::vector<Expr>{base, exponent});
}

inline Expr pow(Expr base, std::int64_t exponent) {
  return pow(base, detail::literal_beside(base, exponent, "PowByNatural"));
}

inline Expr floor_div(Expr a, Expr b) {
  Context& ctx = detail::context_of({a, b}, "FloorDiv");
  if (b.is_integer(0)) throw Error("division by zero in FloorDiv: the divisor is the literal 0");
  if (auto r = rules::floor_div_fold(a, b)) return *r;
  if (auto r = detail::first_rule(a, b, rules::floor_div_identity, rules::floor_div_negative_divisor,
                                  rules::floor_div_nested, rules::floor_div_pull_divisible, rules::floor_div_gcd,
                                  rules::floor_div_negated_numerator, rules::floor_div_in_range))
    return *r;
  return ctx.make_raw(Kind::floor_div, std::vector<Expr>{a, b});
}

inline Expr clean_div(Expr a, Expr b) {
  detail::context_of({a, b}, "CleanDiv");
  if (b.is_integer(0)) throw Error("division by zero in CleanDiv: the divisor is the literal 0");
  if (auto q = exact_quotient(a, b)) return *q;
  if (a.is_integer() && b.is_integer())
    throw Error("CleanDiv(" + std::to_string(a.value()) + ", " + std::to_string(b.value()) +
                ") is not exact: " + std::to_string(b.value()) + " does not divide " + std::to_string(a.value()));
  return floor_div(a, b);
}

inline Expr ceil_div(Expr a, Expr b) {
  Context& ctx = detail::context_of({a, b}, "CeilDiv");
  if (b.is_integer(0)) throw Error("division by zero in CeilDiv: the divisor is the literal 0");
  if (auto q = exact_quotient(a, b)) return *q;  // CleanDiv(a, b), already exact
  if (a.is_integer() && b.is_integer()) {
    std::int64_t r = 0;
    if (!checked::floor_div(a.value(), b.value(), r)) detail::overflow("CeilDiv");
    return ctx.integer(::wrapir::ceil_div(a.value(), b.value()));
  }
  if (bounds(b).known_positive()) {
    // Inductor's form; its constant `a + (b - 1)` can leave int64 where the
    // ceiling itself fits, and then the exact form below is used.
    try {
      return floor_div(add(a, sub(b, ctx.integer(1))), b);
    } catch (const Error&) {
    }
  }
  return neg(floor_div(neg(a), b));
}

inline Expr modular_indexing(Expr x, Expr d, Expr m) {
  Context& ctx = detail::context_of({x, d, m}, "ModularIndexing");
  if (d.is_integer(0)) throw Error("division by zero in ModularIndexing: the divisor is the literal 0");
  if (m.is_integer(0)) throw Error("modulo by zero in ModularIndexing: the modulus is the literal 0");
  if (auto r = rules::modular_indexing_fold(x, d, m)) return *r;
  if (auto r = detail::first_rule(x, d, m, rules::modular_indexing_zero, rules::modular_indexing_outside_domain,
                                  rules::modular_indexing_quotient_simplifies, rules::modular_indexing_gcd,
                                  rules::modular_indexing_absorb_floor_div, rules::modular_indexing_drop_multiples,
                                  rules::modular_indexing_in_range))
    return *r;
  return ctx.make_raw(Kind::modular_indexing, std::vector<Expr>{x, d, m});
}

inline Expr python_mod(Expr p, Expr q) {
  Context& ctx = detail::context_of({p, q}, "PythonMod");
  if (q.is_integer(0)) throw Error("modulo by zero in PythonMod: the modulus is the literal 0");
  if (auto r = rules::python_mod_fold(p, q)) return *r;
  if (auto r = detail::first_rule(p, q, rules::python_mod_zero, rules::python_mod_drop_multiples,
                                  rules::python_mod_in_range, rules::python_mod_to_modular_indexing))
    return *r;
  return ctx.make_raw(Kind::python_mod, std::vector<Expr>{p, q});
}

inline Expr mod(Expr p, Expr q) {
  detail::context_of({p, q}, "Mod");
  if (q.is_integer(0)) throw Error("modulo by zero in Mod: the modulus is the literal 0");
  if (p.is_integer() && q.is_integer() && (p.value() < 0 || q.value() < 0))
    throw Error("Mod(" + std::to_string(p.value()) + ", " + std::to_string(q.value()) +
                ") is undefined: Mod needs a non-negative dividend and a positive modulus");
  return python_mod(p, q);
}

namespace detail {

inline Expr min_max(std::span<const Expr> args, bool is_min) {
  const Kind kind = is_min ? Kind::min : Kind::max;
  Context& ctx = context_of(args, is_min ? "Min" : "Max");
  std::vector<Expr> flat;
  std::optional<std::int64_t> constant;
  std::vector<Expr> pending(args.begin(), args.end());
  while (!pending.empty()) {
    Expr a = pending.back();
    pending.pop_back();
    if (a.is(kind)) {
      pending.insert(pending.end(), a.operands().begin(), a.operands().end());
    } else if (a.is_integer()) {
      constant = !constant ? a.value() : (is_min ? std::min(*constant, a.value()) : std::max(*constant, a.value()));
    } else {
      flat.push_back(a);
    }
  }
  if (constant) flat.push_back(ctx.integer(*constant));
  std::sort(flat.begin(), flat.end(), ExprLess{});
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.size() > 1) flat = rules::drop_dominated(std::move(flat), is_min);
  if (flat.size() == 1) return flat.front();
  return ctx.make_raw(kind, flat);
}

inline Expr comparison(Kind kind, Expr a, Expr b) {
  Context& ctx = context_of({a, b}, std::string(kind_name(kind)).c_str());
  if (kind == Kind::gt) return comparison(Kind::lt, b, a);
  if (kind == Kind::ge) return comparison(Kind::le, b, a);
  // Symmetric comparisons keep the larger operand first, which puts a
  // constant on the right: `(n % 2) == 0`. Ordering before deciding makes
  // `eq(a, b)` and `eq(b, a)` the same question.
  if ((kind == Kind::eq || kind == Kind::ne) && compare(a, b) < 0) std::swap(a, b);
  if (auto r = rules::compare_decided(kind, a, b)) return *r;
  return ctx.make_raw(kind, std::vector<Expr>{a, b});
}

}  // namespace detail

inline Expr min(std::span<const Expr> args) { return detail::min_max(args, true); }
inline Expr max(std::span<const Expr> args) { return detail::min_max(args, false); }
inline Expr min(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return min(ops);
}
inline Expr max(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return max(ops);
}
inline Expr min(std::initializer_list<Expr> args) { return min(std::span<const Expr>(args.begin(), args.size())); }
inline Expr max(std::initializer_list<Expr> args) { return max(std::span<const Expr>(args.begin(), args.size())); }

inline Expr eq(Expr a, Expr b) { return detail::comparison(Kind::eq, a, b); }
inline Expr ne(Expr a, Expr b) { return detail::comparison(Kind::ne, a, b); }
inline Expr lt(Expr a, Expr b) { return detail::comparison(Kind::lt, a, b); }
inline Expr le(Expr a, Expr b) { return detail::comparison(Kind::le, a, b); }
inline Expr gt(Expr a, Expr b) { return detail::comparison(Kind::gt, a, b); }
inline Expr ge(Expr a, Expr b) { return detail::comparison(Kind::ge, a, b); }

inline Expr where(Expr condition, Expr if_true, Expr if_false) {
  Context& ctx = detail::context_of({condition, if_true, if_false}, "Where");
  if (condition.is_integer()) return condition.value() != 0 ? if_true : if_false;
  if (if_true == if_false) return if_true;
  return ctx.make_raw(Kind::where, std::vector<Expr>{condition, if_true, if_false});
}

inline Expr align(Expr x, std::int64_t alignment) {
  Context& ctx = detail::context_of({x}, "align");
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw Error("align: alignment " + std::to_string(alignment) + " is not a positive power of two");
  if (x.is_integer()) {
    std::int64_t r = 0;
    if (!checked::align_up(x.value(), alignment, r)) detail::overflow("align");
    return ctx.integer(r);
  }
  if (x.is(Kind::align) && x.value() >= alignment) return x;
  if (exact_quotient(x, ctx.integer(alignment))) return x;
  const Expr ops[1] = {x};
  return ctx.make_raw(Kind::align, ops, alignment);
}

inline Expr identity(Expr x) {
  Context& ctx = detail::context_of({x}, "Identity");
  const Expr ops[1] = {x};
  return ctx.make_raw(Kind::identity, ops);
}

inline Expr make(Context& ctx, Kind kind, std::span<const Expr> ops, std::int64_t value) {
  auto need = [&](std::size_t n) {
    if (ops.size() != n)
      throw Error(std::string(kind_name(kind)) + " takes " + std::to_string(n) + " operands, got " +
                  std::to_string(ops.size()));
  };
  switch (kind) {
    case Kind::integer: return ctx.integer(value);
    case Kind::symbol: throw Error("make cannot make a symbol; use Context::symbol");
    case Kind::add: return add(ops);
    case Kind::mul: return mul(ops);
    case Kind::pow: need(2); return pow(ops[0], ops[1]);
    case Kind::floor_div: need(2); return floor_div(ops[0], ops[1]);
    case Kind::clean_div: need(2); return clean_div(ops[0], ops[1]);
    case Kind::modular_indexing: need(3); return modular_indexing(ops[0], ops[1], ops[2]);
    case Kind::python_mod: need(2); return python_mod(ops[0], ops[1]);
    case Kind::mod: need(2); return mod(ops[0], ops[1]);
    case Kind::min: return min(ops);
    case Kind::max: return max(ops);
    case Kind::eq:
    case Kind::ne:
    case Kind::lt:
    case Kind::le:
    case Kind::gt:
    case Kind::ge: need(2); return detail::comparison(kind, ops[0], ops[1]);
    case Kind::where: need(3); return where(ops[0], ops[1], ops[2]);
    case Kind::align: need(1); return align(ops[0], value == 0 ? 64 : value);
    case Kind::identity: need(1); return identity(ops[0]);
  }
  throw Error("make: unknown kind");
}

}  // namespace wrapir::expr
