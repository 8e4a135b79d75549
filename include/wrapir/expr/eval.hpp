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

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wrapir::expr {

/// Values of symbols, in the order they were first bound (`entries()`).
/// An expression has a handful of symbols, and a linear scan over a few
/// pointers beats hashing; but a program's hint table or a command line can
/// bind thousands, and a scan per lookup made binding them all quadratic
/// (issue 12: 14,000 bindings took 3.6 s). So from `indexed_from` entries
/// on, an index by node keeps `get` and `set` O(1).
class Bindings {
 public:
  /// The number of entries from which lookups go through the index.
  static constexpr std::size_t indexed_from = 16;

  Bindings() = default;

  /// Binds `symbol` (a symbol node) to `value`, replacing an earlier value.
  WRAPIR_DECL Bindings& set(Expr symbol, std::int64_t value);

  [[nodiscard]] std::optional<std::int64_t> get(Expr symbol) const noexcept {
    const std::size_t at = position(symbol);
    if (at == values_.size()) return std::nullopt;
    return values_[at].second;
  }

  [[nodiscard]] const std::vector<std::pair<Expr, std::int64_t>>& entries() const noexcept { return values_; }

 private:
  /// The entry binding `symbol`, or `values_.size()` when there is none.
  [[nodiscard]] std::size_t position(Expr symbol) const noexcept {
    if (values_.size() < indexed_from) {
      for (std::size_t i = 0; i < values_.size(); ++i)
        if (values_[i].first == symbol) return i;
      return values_.size();
    }
    const auto found = index_.find(symbol.node());
    return found == index_.end() ? values_.size() : found->second;
  }

  std::vector<std::pair<Expr, std::int64_t>> values_;
  /// Node to entry; filled once `values_` reaches `indexed_from` entries.
  std::unordered_map<const Node*, std::size_t> index_;
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
