#pragma once
/// \file
/// Definitions of <wrapir/expr/simplify.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/simplify.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wrapir::expr {

namespace detail {

/// The canonical constructor, the default way `rebuild` makes a node.
inline Expr make_canonical(Expr original, std::vector<Expr>& ops) {
  return make(original.context(), original.kind(), ops, original.value());
}

/// Rebuilds `e` bottom-up, visiting each shared node once: `leaf` may
/// replace any node before its operands are visited (return a null Expr to
/// keep it); `build(original, rebuilt_operands)` makes every other compound
/// node.
template <class Replace, class Build>
Expr rebuild(Expr e, Replace&& leaf, Build&& build, std::unordered_map<const Node*, Expr>& memo, int depth) {
  if (auto it = memo.find(e.node()); it != memo.end()) return it->second;
  if (depth > 512) throw Error("expression is nested deeper than 512 levels");
  Expr out = leaf(e);
  if (!out) {
    if (e.operands().empty()) {
      out = e;
    } else {
      // The builder runs even when no operand changed: a raw node needs
      // the canonical constructor.
      std::vector<Expr> ops;
      ops.reserve(e.operands().size());
      for (Expr o : e.operands()) ops.push_back(rebuild(o, leaf, build, memo, depth + 1));
      out = build(e, ops);
    }
  }
  memo.emplace(e.node(), out);
  return out;
}

inline Expr keep(Expr) { return Expr{}; }

}  // namespace detail

namespace detail {

inline std::vector<Expr> multiply_out(const std::vector<Expr>& products, Expr factor, std::size_t max_terms) {
  const auto terms = terms_of(factor);
  if (products.size() * terms.size() > max_terms)
    throw Error("expand: the product has more than " + std::to_string(max_terms) + " terms");
  std::vector<Expr> next;
  next.reserve(products.size() * terms.size());
  for (Expr p : products)
    for (Expr t : terms) next.push_back(mul(p, t));
  return next;
}

/// A product or natural power of sums multiplied out; other nodes as the
/// canonical constructor makes them.
inline Expr expand_node(Expr original, std::vector<Expr>& ops, std::size_t max_terms) {
  Context& ctx = original.context();
  const bool power_of_sum =
      original.is(Kind::pow) && ops[0].is(Kind::add) && ops[1].is_integer() && ops[1].value() >= 0;
  if (!original.is(Kind::mul) && !power_of_sum) return make_canonical(original, ops);
  std::vector<Expr> products{ctx.integer(1)};
  if (power_of_sum) {
    for (std::int64_t i = 0; i < ops[1].value(); ++i) products = multiply_out(products, ops[0], max_terms);
  } else {
    for (Expr f : ops) products = multiply_out(products, f, max_terms);
  }
  return add(products);
}

}  // namespace detail

WRAPIR_DECL Expr simplify(Expr e) {
  detail::non_null(e, "simplify");
  std::unordered_map<const Node*, Expr> memo;
  return detail::rebuild(e, detail::keep, detail::make_canonical, memo, 0);
}

WRAPIR_DECL Expr substitute(Expr e, std::span<const std::pair<Expr, Expr>> replacements) {
  detail::non_null(e, "substitute");
  for (const auto& [from, to] : replacements) {
    detail::non_null(from, "substitute");
    detail::non_null(to, "substitute");
  }
  std::unordered_map<const Node*, Expr> memo;
  auto leaf = [&](Expr x) {
    for (const auto& [from, to] : replacements)
      if (x == from) return to;
    return Expr{};
  };
  return detail::rebuild(e, leaf, detail::make_canonical, memo, 0);
}

WRAPIR_DECL Expr expand(Expr e, std::size_t max_terms) {
  detail::non_null(e, "expand");
  std::unordered_map<const Node*, Expr> memo;
  auto build = [max_terms](Expr original, std::vector<Expr>& ops) { return detail::expand_node(original, ops, max_terms); };
  return detail::rebuild(e, detail::keep, build, memo, 0);
}

WRAPIR_DECL Expr substitute(Expr e, Expr from, Expr to) {
  const std::pair<Expr, Expr> r[1] = {{from, to}};
  return substitute(e, r);
}

}  // namespace wrapir::expr