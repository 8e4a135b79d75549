#pragma once
/// \file
/// `simplify`, `substitute` and `expand`: rebuild an expression through the
/// canonical constructors.
///
/// Expressions built with ops.hpp are canonical already; `simplify` is for
/// trees built raw (`Context::make_raw`) or whose meaning changed (after
/// `substitute`). Both rebuild bottom-up, visiting each shared node once, so
/// every rule of ops.hpp applies at every node. Simplification is sound:
/// wherever the original evaluates without error under bindings that respect
/// the assumptions, the result evaluates to the same value (the property
/// tests check this on thousands of random trees). It may remove errors
/// (`x*0` is 0 even where `x` would overflow). It adds none except near the
/// int64 limits: a few rewrites build intermediate values the original never
/// computes — the product of two divisors when nested divisions merge, the
/// bias `d - 1` of a ceiling, each factor's power in `(a*b)**n` — and those
/// can overflow where every node of the original fits.

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace wrapir::expr {

/// The canonical form of `e`. Throws `Error` where a constant part of `e`
/// is wrong whatever the bindings (a literal division by zero), or when `e`
/// is nested deeper than 512 levels.
[[nodiscard]] WRAPIR_DECL Expr simplify(Expr e);

/// `e` with every occurrence of each `from` replaced by its `to`, then
/// simplified. Replacements are simultaneous (`{s0 -> s1, s1 -> s0}` swaps).
[[nodiscard]] WRAPIR_DECL Expr substitute(Expr e, std::span<const std::pair<Expr, Expr>> replacements);

/// `e` with every product of sums multiplied out (`x*(y + 1)` is
/// `x*y + x`, `(s0 + 1)**2` is `s0**2 + 2*s0 + 1`), as sympy's `expand`:
/// canonical forms keep sums whole, this is the explicit request. Throws
/// `Error` when a product would have more than `max_terms` terms.
[[nodiscard]] WRAPIR_DECL Expr expand(Expr e, std::size_t max_terms = 4096);

/// `e` with every occurrence of `from` replaced by `to`, then simplified.
[[nodiscard]] WRAPIR_DECL Expr substitute(Expr e, Expr from, Expr to);

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/simplify.ipp>
#endif
