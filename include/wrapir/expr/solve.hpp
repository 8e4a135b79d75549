#pragma once
/// \file
/// Solving `expr == value` for one symbol that appears linearly.
///
/// This is how a wrapper recovers a size symbol from a runtime size: an
/// input dimension declared as `2*s0 + 1` arrives as an integer `n`, and
/// `s0 = (n - 1) // 2`, valid when `(n - 1) % 2 == 0`. The solution is exact
/// integer arithmetic (FloorDiv), paired with the divisibility condition
/// under which it is a solution at all.

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/expr/simplify.hpp>

#include <span>
#include <string>
#include <vector>

namespace wrapir::expr {

struct Solution {
  /// The unknown's value: `(value - b) // a` for `expr = a*unknown + b`.
  Expr value;
  /// Holds (evaluates non-zero) exactly when `value` solves the equation:
  /// `(value - b) % a == 0`. The literal 1 when it always does.
  Expr condition;

  [[nodiscard]] bool unconditional() const noexcept { return condition.is_integer(1); }
};

/// Solves `expr == value` for `unknown`. Every other symbol of `expr` must
/// be listed in `knowns` (symbols of `value` are always known); a second
/// unknown makes the equation underdetermined. `unknown` must appear
/// linearly (`a*unknown + b`, with `a` and `b` free of it).
[[nodiscard]] WRAPIR_DECL Result<Solution> solve(Expr expr, Expr value, Expr unknown, std::span<const Expr> knowns = {});

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/solve.ipp>
#endif
