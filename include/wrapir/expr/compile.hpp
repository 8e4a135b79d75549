#pragma once
/// \file
/// Compiled expressions: a flat instruction list for hot paths.
///
/// A launch grid is evaluated on every kernel call; walking a tree of
/// pointers each time costs more than the arithmetic. `compile` turns an
/// expression into a post-order program for a small value stack: no
/// recursion, no allocation per call, one switch per instruction, and the
/// same checked semantics as `eval` (overflow judged per node, division by
/// zero, broken assumptions), so both always agree.
///
/// Symbols are read from a span of values in the order of `symbols()`
/// (natural name order, `s2` before `s10`).
///
/// ```
/// auto grid = compile(ceil_div(s0 * s1, ctx.integer(1024))).value();
/// std::int64_t out;
/// if (grid.try_eval({{n0, n1}}, out)) launch(out);   // hot path
/// ```

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/query.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wrapir::expr {

namespace detail {
class Compiler;
}

class CompiledExpr {
 public:
  /// Deepest value stack a compiled expression may need.
  static constexpr std::size_t max_stack = 64;

  /// The symbols whose values `try_eval` and `eval` read, in order.
  [[nodiscard]] std::span<const Expr> symbols() const noexcept { return symbols_; }
  [[nodiscard]] std::size_t instruction_count() const noexcept { return code_.size(); }
  [[nodiscard]] Expr source() const noexcept { return source_; }

  /// Fast path: false on any error (see `eval` for the reason).
  [[nodiscard]] bool try_eval(std::span<const std::int64_t> values, std::int64_t& out) const noexcept {
    std::size_t failed_at = 0;
    return run(values, out, failed_at) == Status::ok;
  }

  /// Like `try_eval`, with a diagnostic naming the failing sub-expression.
  [[nodiscard]] Result<std::int64_t> eval(std::span<const std::int64_t> values) const;

 private:
  friend Result<CompiledExpr> compile(Expr e);
  friend class detail::Compiler;

  enum class Op : std::uint8_t {
    push_const, push_symbol, push_positive, push_nonnegative, add2, add_n, add_const, mul2, mul_n, mul_const,
    pow, floor_div, clean_div, floor_div_const_pos, shift_right, modular_indexing, python_mod, mod, min_n, max_n,
    compare, jump_if_zero, jump, align
  };
  struct Instr {
    Op op;
    std::uint32_t arg;  // symbol slot, operand count or jump target
    std::int64_t imm;   // constant, alignment, shift, comparison kind
    Expr node;          // the node this instruction computes, for messages
  };
  enum class Status : std::uint8_t { ok, overflow, div_zero, mod_zero, neg_exponent, inexact, mod_domain, assumption, arity };

  Status run(std::span<const std::int64_t> values, std::int64_t& out, std::size_t& failed_at) const noexcept;

  std::vector<Instr> code_;
  std::vector<Expr> symbols_;
  Expr source_{};
};

/// Compiles `e`. Fails only when the expression is nested deeper than
/// `eval` accepts, or needs a deeper value stack than
/// `CompiledExpr::max_stack` (evaluate such rare trees with `eval`).
[[nodiscard]] WRAPIR_DECL Result<CompiledExpr> compile(Expr e);

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/compile.ipp>
#endif
