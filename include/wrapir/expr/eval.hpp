#pragma once
/// \file
/// Checked evaluation of symbolic expressions with bound symbols.
///
/// `eval` computes the exact value of an expression in int64 arithmetic. It
/// never wraps and never invokes undefined behaviour: a node whose true value
/// leaves int64, a division or modulo by zero, a negative exponent, an
/// unbound symbol or a binding that breaks its symbol's assumption (a
/// positive symbol bound to 0) gives a `Diagnostic` naming the sub-expression.
/// Overflow is judged per node: a sum whose partial sums overflow but whose
/// total fits is fine, as in exact integer arithmetic.
///
/// For hot paths (launch grids computed on every call) see `compile.hpp`.

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/print_python.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::expr {

/// Values of symbols. A flat list: expressions have few symbols, and a
/// linear scan over a handful of pointers beats hashing.
class Bindings {
 public:
  Bindings() = default;

  /// Binds `symbol` (a symbol node) to `value`, replacing an earlier value.
  WRAPIR_DECL Bindings& set(Expr symbol, std::int64_t value);

  [[nodiscard]] std::optional<std::int64_t> get(Expr symbol) const noexcept {
    for (const auto& [s, v] : values_)
      if (s == symbol) return v;
    return std::nullopt;
  }

  [[nodiscard]] const std::vector<std::pair<Expr, std::int64_t>>& entries() const noexcept { return values_; }

 private:
  std::vector<std::pair<Expr, std::int64_t>> values_;
};

/// Whether `value` respects the assumption of `symbol`.
[[nodiscard]] constexpr bool satisfies(Assumption a, std::int64_t value) noexcept {
  switch (a) {
    case Assumption::positive: return value > 0;
    case Assumption::nonnegative: return value >= 0;
    case Assumption::integer: return true;
  }
  return false;
}

[[nodiscard]] WRAPIR_DECL Result<std::int64_t> eval(Expr e, const Bindings& bindings);

/// Evaluation with symbols bound by name; a name that is not a symbol of
/// the expression's context is an error.
[[nodiscard]] WRAPIR_DECL Result<std::int64_t> eval_with(
    Expr e, std::initializer_list<std::pair<std::string_view, std::int64_t>> by_name);

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/eval.ipp>
#endif
