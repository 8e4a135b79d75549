#pragma once
/// \file
/// Value ranges of expressions from the symbols' assumptions.
///
/// `bounds(e)` returns an interval that contains every value `e` can take
/// under any binding that respects the assumptions (positive symbols are
/// >= 1, non-negative ones >= 0). The analysis is a plain interval
/// evaluation: sound, fast, and not tight (it does not know that `x - x` is
/// zero; the canonical constructors already removed such terms). The
/// simplifier uses it to decide dominance (`Max(s0, 1)` is `s0`), to fold
/// comparisons and to drop modulo of values known to be in range; the C++
/// printer uses it to emit native `/` and `%` where both operands are
/// provably non-negative.

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>

#include <cstdint>

namespace wrapir::expr {

/// A closed interval [lo, hi]; `lo_unbounded` / `hi_unbounded` mean -inf / +inf.
struct Interval {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  bool lo_unbounded = true;
  bool hi_unbounded = true;

  [[nodiscard]] bool known_ge(std::int64_t v) const noexcept { return !lo_unbounded && lo >= v; }
  [[nodiscard]] bool known_le(std::int64_t v) const noexcept { return !hi_unbounded && hi <= v; }
  [[nodiscard]] bool known_positive() const noexcept { return known_ge(1); }
  [[nodiscard]] bool known_nonnegative() const noexcept { return known_ge(0); }
  [[nodiscard]] bool known_negative() const noexcept { return known_le(-1); }
  [[nodiscard]] bool is_constant() const noexcept { return !lo_unbounded && !hi_unbounded && lo == hi; }
};

[[nodiscard]] WRAPIR_DECL Interval bounds(Expr e) noexcept;

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/bounds.ipp>
#endif
