#pragma once
/// \file
/// Questions about an expression's structure: which symbols it uses, its
/// polynomial degree in a symbol, and whether it is linear in one.

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace wrapir::expr {

/// The symbols that occur in `e`, in natural name order (`s2` before `s10`).
[[nodiscard]] WRAPIR_DECL std::vector<Expr> free_symbols(Expr e);

/// True when `symbol` occurs in `e`.
[[nodiscard]] WRAPIR_DECL bool depends_on(Expr e, Expr symbol);

/// The degree of `e` as a polynomial in `symbol`: 0 when `e` does not use
/// it, nothing when `symbol` occurs outside sums, products and natural
/// powers with a literal exponent (inside a FloorDiv, say), where `e` is not
/// a polynomial in it.
[[nodiscard]] WRAPIR_DECL std::optional<std::int64_t> degree_in(Expr e, Expr symbol);

/// True when `e` is `a*symbol + b` with `a`, `b` free of `symbol`
/// (a constant counts as linear, degree 0).
[[nodiscard]] WRAPIR_DECL bool is_linear_in(Expr e, Expr symbol);

}  // namespace wrapir::expr

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/query.ipp>
#endif
