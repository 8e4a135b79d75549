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

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace wrapir::expr {

// --- constructors -----------------------------------------------------------

[[nodiscard]] WRAPIR_DECL Expr add(std::span<const Expr> terms);
[[nodiscard]] WRAPIR_DECL Expr mul(std::span<const Expr> factors);
[[nodiscard]] WRAPIR_DECL Expr add(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr sub(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr neg(Expr a);
[[nodiscard]] WRAPIR_DECL Expr mul(Expr a, Expr b);
/// `base ** exponent` for a natural exponent (Inductor's PowByNatural).
[[nodiscard]] WRAPIR_DECL Expr pow(Expr base, Expr exponent);
[[nodiscard]] WRAPIR_DECL Expr pow(Expr base, std::int64_t exponent);
/// Python `a // b`.
[[nodiscard]] WRAPIR_DECL Expr floor_div(Expr a, Expr b);
/// `a // b` where the caller claims that `b` divides `a`.
[[nodiscard]] WRAPIR_DECL Expr clean_div(Expr a, Expr b);
/// Ceiling of `a / b`.
[[nodiscard]] WRAPIR_DECL Expr ceil_div(Expr a, Expr b);
/// `(x // d) % m`, Inductor's ModularIndexing.
[[nodiscard]] WRAPIR_DECL Expr modular_indexing(Expr x, Expr d, Expr m);
/// Python `p % q`: the result has the sign of `q`.
[[nodiscard]] WRAPIR_DECL Expr python_mod(Expr p, Expr q);
/// `p % q` for `p >= 0`, `q > 0` (sympy's Mod as Inductor uses it).
[[nodiscard]] WRAPIR_DECL Expr mod(Expr p, Expr q);
[[nodiscard]] WRAPIR_DECL Expr min(std::span<const Expr> args);
[[nodiscard]] WRAPIR_DECL Expr max(std::span<const Expr> args);
[[nodiscard]] WRAPIR_DECL Expr min(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr max(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr min(std::initializer_list<Expr> args);
[[nodiscard]] WRAPIR_DECL Expr max(std::initializer_list<Expr> args);
[[nodiscard]] WRAPIR_DECL Expr eq(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr ne(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr lt(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr le(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr gt(Expr a, Expr b);
[[nodiscard]] WRAPIR_DECL Expr ge(Expr a, Expr b);
/// `condition != 0 ? if_true : if_false`.
[[nodiscard]] WRAPIR_DECL Expr where(Expr condition, Expr if_true, Expr if_false);
/// `x` rounded up to a multiple of `alignment` (a power of two; 64 bytes by
/// default, as Inductor's `align`).
[[nodiscard]] WRAPIR_DECL Expr align(Expr x, std::int64_t alignment = 64);
/// `x`, opaque: nothing simplifies through it.
[[nodiscard]] WRAPIR_DECL Expr identity(Expr x);

/// The canonical constructor for `kind` applied to `operands` (`value` is
/// the alignment of `align`). This is how `simplify` and the parser rebuild
/// nodes generically.
[[nodiscard]] WRAPIR_DECL Expr make(Context& ctx, Kind kind, std::span<const Expr> operands, std::int64_t value = 0);

// --- operators ---------------------------------------------------------------
// `/` and `%` are deliberately absent: C++ readers expect truncation, Python
// readers flooring. Spell `floor_div`, `python_mod`, `ceil_div`.

namespace detail {
/// The literal `v` in the context of `e` (the other operand of `what`).
WRAPIR_DECL Expr literal_beside(Expr e, std::int64_t v, const char* what);
}  // namespace detail

WRAPIR_DECL Expr operator+(Expr a, Expr b);
WRAPIR_DECL Expr operator-(Expr a, Expr b);
WRAPIR_DECL Expr operator*(Expr a, Expr b);
WRAPIR_DECL Expr operator-(Expr a);
WRAPIR_DECL Expr operator+(Expr a, std::int64_t b);
WRAPIR_DECL Expr operator+(std::int64_t a, Expr b);
WRAPIR_DECL Expr operator-(Expr a, std::int64_t b);
WRAPIR_DECL Expr operator-(std::int64_t a, Expr b);
WRAPIR_DECL Expr operator*(Expr a, std::int64_t b);
WRAPIR_DECL Expr operator*(std::int64_t a, Expr b);
WRAPIR_DECL Expr floor_div(Expr a, std::int64_t b);
WRAPIR_DECL Expr ceil_div(Expr a, std::int64_t b);
WRAPIR_DECL Expr python_mod(Expr a, std::int64_t b);

// --- helpers shared by rules, printers and queries ---------------------------

/// A term split into integer coefficient and the rest: `6*x*y` is
/// `{6, x*y}`; an integer `c` is `{c, null}`.
struct Term {
  std::int64_t coefficient;
  Expr monomial;
};
[[nodiscard]] WRAPIR_DECL Term split_term(Expr term);

/// Polynomial degree of a monomial: symbols and opaque atoms count 1,
/// `x**k` counts `k` times the degree of `x`; 0 for a null expression.
[[nodiscard]] WRAPIR_DECL std::int64_t degree(Expr e) noexcept;

/// The additive terms of `e` (its operands when it is a sum, else `e`).
[[nodiscard]] WRAPIR_DECL std::span<const Expr> terms_of(const Expr& e) noexcept;

/// `q` with `a == q * b` for every binding, if one can be read off the
/// terms (monomial division); nothing otherwise.
[[nodiscard]] WRAPIR_DECL std::optional<Expr> exact_quotient(Expr a, Expr b);

/// The gcd of all integer coefficients of `e`'s terms (0 for the literal 0
/// and for a null expression).
[[nodiscard]] WRAPIR_DECL std::int64_t content(Expr e) noexcept;

namespace detail {

/// Throws the `Error` for a constant folded in `what` that leaves int64.
[[noreturn]] WRAPIR_DECL void overflow(const char* what);

/// `a + b` and `a * b` folded in `what`; `overflow(what)` when they leave int64.
WRAPIR_DECL std::int64_t folded_add(std::int64_t a, std::int64_t b, const char* what);
WRAPIR_DECL std::int64_t folded_mul(std::int64_t a, std::int64_t b, const char* what);

/// A common divisor of `a` and `b`: the greatest, except that 2^63 (which
/// int64 cannot hold) is reported as 2^62. 0 only when both are 0.
WRAPIR_DECL std::int64_t gcd64(std::int64_t a, std::int64_t b) noexcept;

/// `coefficient * monomial` built directly: both are canonical.
WRAPIR_DECL Expr scaled(Context& ctx, std::int64_t coefficient, Expr monomial);

/// Canonical order of a sum's terms, given split: falling degree, then
/// structure of the monomials.
WRAPIR_DECL bool term_less(const Term& a, const Term& b) noexcept;

/// The one context of `operands`; throws `Error` naming `what` when there
/// are none, one is null, or they come from different contexts.
WRAPIR_DECL Context& context_of(std::span<const Expr> operands, const char* what);
WRAPIR_DECL Context& context_of(std::initializer_list<Expr> operands, const char* what);

/// A sum as `g * primitive`: `g` is the integer content of its terms, with
/// the sign that makes the primitive sum's first term positive
/// (`-2*y - 2` is `-2 * (y + 1)`). `g` is 1 when nothing can be pulled out.
/// A term `c*(s)`, kept whole because `c` times `s` overflowed, distributes
/// once divided, so the quotient can have content again and its terms can
/// come in another order (fuzzing found both): content is divided out until
/// none is left (each round at least halves it), and the sign is read from
/// the result.
WRAPIR_DECL std::pair<std::int64_t, Expr> primitive_sum(Expr sum);

/// `a / b` for monomials, if exact.
WRAPIR_DECL std::optional<Expr> monomial_quotient(Expr a, Expr b);

}  // namespace detail

// --- rules -------------------------------------------------------------------

namespace rules {

using Maybe = std::optional<Expr>;

/// The range of `a - b`; unbounded when the difference itself cannot be
/// built (its constants overflow), so a rule that asks simply does not fire.
WRAPIR_DECL Interval difference_bounds(Expr a, Expr b) noexcept;

// FloorDiv ---------------------------------------------------------------

/// `a // b` of two integers.
WRAPIR_DECL Maybe floor_div_fold(Expr a, Expr b);

/// `a // 1 = a`, `a // -1 = -a`, `0 // b = 0`, `a // a = 1`.
WRAPIR_DECL Maybe floor_div_identity(Expr a, Expr b);

/// `a // -c = (-a) // c` and `a // (-d) = (-a) // d`: divisors do not
/// start negative.
WRAPIR_DECL Maybe floor_div_negative_divisor(Expr a, Expr b);

/// `(x // c) // b = x // (c*b)` for `b > 0`.
WRAPIR_DECL Maybe floor_div_nested(Expr a, Expr b);

/// `(q*b + r) // b = q + r // b`: for an integer `b`, terms that it divides
/// leave the division (Inductor's rule); for any `b`, a numerator that `b`
/// divides whole is the exact quotient. (Pulling terms out of a symbolic
/// division would turn Inductor's `CeilDiv(a, d) = (a + d - 1) // d` into
/// `(a - 1) // d + 1`.)
WRAPIR_DECL Maybe floor_div_pull_divisible(Expr a, Expr b);

/// `(g*a + c) // (g*b) = (a + c // g) // b` for the gcd `g` of the integer
/// coefficients of `a`'s non-constant terms and of `b`. Exact when `g`
/// divides `c`; for positive `b` also when it does not, since the remainder
/// `c % g < g` never reaches the next multiple of `g*b`. This makes the
/// ceiling forms `(64*x + 5) // 6` and `(32*x + 2) // 3` one expression.
WRAPIR_DECL Maybe floor_div_gcd(Expr a, Expr b);

/// `(-x) // d = -((x + d - 1) // d)` for `d > 1` (an integer, or a positive
/// symbolic divisor): numerators do not start negative, so that
/// `-((-x) // d)` (sympy's ceiling) reads as `(x + d - 1) // d`.
WRAPIR_DECL Maybe floor_div_negated_numerator(Expr a, Expr b);

/// `a // b = 0` when `0 <= a < b` is known.
WRAPIR_DECL Maybe floor_div_in_range(Expr a, Expr b);

// PythonMod and ModularIndexing ---------------------------------------------

WRAPIR_DECL Maybe python_mod_fold(Expr p, Expr q);

/// `p % 1 = p % -1 = 0 % q = q % q = 0`.
WRAPIR_DECL Maybe python_mod_zero(Expr p, Expr q);

/// `(k*q + r) % q = r % q`: terms that `q` divides drop out.
WRAPIR_DECL Maybe python_mod_drop_multiples(Expr p, Expr q);

/// `p % q = p` when `0 <= p < q` is known.
WRAPIR_DECL Maybe python_mod_in_range(Expr p, Expr q);

/// `(x // d) % m = ModularIndexing(x, d, m)` and `x % m =
/// ModularIndexing(x, 1, m)` when `x >= 0`, `d > 0`, `m > 0` are known.
WRAPIR_DECL Maybe python_mod_to_modular_indexing(Expr p, Expr q);

WRAPIR_DECL Maybe modular_indexing_fold(Expr x, Expr d, Expr m);

/// `ModularIndexing(0, d, m) = ModularIndexing(x, d, 1) = 0`.
WRAPIR_DECL Maybe modular_indexing_zero(Expr x, Expr, Expr m);

/// Outside its canonical domain (`x >= 0`, `d > 0`, `m > 0` known),
/// ModularIndexing is written as `PythonMod(FloorDiv(x, d), m)`.
WRAPIR_DECL Maybe modular_indexing_outside_domain(Expr x, Expr d, Expr m);

/// `ModularIndexing(x, d, m) = PythonMod(q, m)` when `q = x // d`
/// simplifies (`ModularIndexing(s1, s1, 6)` is `1 % 6`, that is 1).
WRAPIR_DECL Maybe modular_indexing_quotient_simplifies(Expr x, Expr d, Expr m);

/// `ModularIndexing(g*x, g*d, m) = ModularIndexing(x, d, m)` for the gcd `g`
/// of `x`'s coefficients and an integer `d`.
WRAPIR_DECL Maybe modular_indexing_gcd(Expr x, Expr d, Expr m);

/// `ModularIndexing(y // c, d, m) = ModularIndexing(y, c*d, m)` for `y >= 0`,
/// `c > 0`.
WRAPIR_DECL Maybe modular_indexing_absorb_floor_div(Expr x, Expr d, Expr m);

/// Terms of `x` that are multiples of `d*m` do not change the result.
WRAPIR_DECL Maybe modular_indexing_drop_multiples(Expr x, Expr d, Expr m);

/// `ModularIndexing(x, d, m) = x // d` when `0 <= x < d*m` is known.
WRAPIR_DECL Maybe modular_indexing_in_range(Expr x, Expr d, Expr m);

// Min and Max ------------------------------------------------------------------

/// For `Min` (`is_min`) or `Max`: drop every argument that another one
/// provably dominates (`Max(s0, 1) = s0` for positive `s0`).
WRAPIR_DECL std::vector<Expr> drop_dominated(std::vector<Expr> args, bool is_min);

// Comparisons -------------------------------------------------------------------

/// A comparison whose truth the operands' ranges decide.
WRAPIR_DECL Maybe compare_decided(Kind kind, Expr a, Expr b);

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
WRAPIR_DECL Expr sum_of(std::span<const Expr> terms, std::size_t* overflowed_at = nullptr);

/// The canonical Min (`is_min`) or Max of `args`.
WRAPIR_DECL Expr min_max(std::span<const Expr> args, bool is_min);

/// The canonical comparison `kind` of `a` and `b` (`gt`/`ge` become `lt`/`le`).
WRAPIR_DECL Expr comparison(Kind kind, Expr a, Expr b);

}  // namespace detail

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/ops.ipp>
#endif
