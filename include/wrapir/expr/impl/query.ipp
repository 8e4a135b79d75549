#pragma once
/// \file
/// Definitions of <wrapir/expr/query.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/query.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace wrapir::expr {

namespace detail {

inline std::optional<std::int64_t> degree_in(Expr e, Expr symbol,
                                             std::unordered_map<const Node*, std::optional<std::int64_t>>& memo,
                                             int depth) {
  if (e == symbol) return 1;
  if (!depends_on(e, symbol)) return 0;
  if (depth > 512) return std::nullopt;  // too deep to call a polynomial
  if (auto it = memo.find(e.node()); it != memo.end()) return it->second;
  std::optional<std::int64_t> d;
  switch (e.kind()) {
    case Kind::add:
    case Kind::mul: {
      d = 0;
      for (Expr t : e.operands()) {
        auto dt = degree_in(t, symbol, memo, depth + 1);
        if (!dt) {
          d.reset();
          break;
        }
        d = e.is(Kind::add) ? std::max(*d, *dt) : std::min<std::int64_t>(*d + *dt, std::int64_t{1} << 40);
      }
      break;
    }
    case Kind::pow: {
      auto db = degree_in(e.operand(0), symbol, memo, depth + 1);
      if (db && !depends_on(e.operand(1), symbol) && e.operand(1).is_integer() &&
          e.operand(1).value() <= (std::int64_t{1} << 30) / std::max<std::int64_t>(*db, 1))
        d = *db * e.operand(1).value();
      break;
    }
    default: break;  // inside a division, modulo, min, ...: not a polynomial
  }
  memo.emplace(e.node(), d);
  return d;
}

}  // namespace detail

WRAPIR_DECL std::vector<Expr> free_symbols(Expr e) {
  detail::non_null(e, "free_symbols");
  std::vector<Expr> out;
  std::unordered_set<const Node*> seen;
  std::vector<Expr> stack{e};
  while (!stack.empty()) {
    Expr x = stack.back();
    stack.pop_back();
    if (!seen.insert(x.node()).second) continue;  // shared sub-trees once
    if (x.is_symbol()) out.push_back(x);
    for (Expr o : x.operands()) stack.push_back(o);
  }
  std::sort(out.begin(), out.end(), ExprLess{});
  return out;
}

WRAPIR_DECL bool depends_on(Expr e, Expr symbol) {
  detail::non_null(e, "depends_on");
  detail::non_null(symbol, "depends_on");
  std::unordered_set<const Node*> seen;
  std::vector<Expr> stack{e};
  while (!stack.empty()) {
    Expr x = stack.back();
    stack.pop_back();
    if (x == symbol) return true;
    if (!seen.insert(x.node()).second) continue;
    for (Expr o : x.operands()) stack.push_back(o);
  }
  return false;
}

WRAPIR_DECL std::optional<std::int64_t> degree_in(Expr e, Expr symbol) {
  detail::non_null(e, "degree_in");
  detail::non_null(symbol, "degree_in");
  std::unordered_map<const Node*, std::optional<std::int64_t>> memo;
  return detail::degree_in(e, symbol, memo, 0);
}

WRAPIR_DECL bool is_linear_in(Expr e, Expr symbol) {
  auto d = degree_in(e, symbol);
  return d && *d <= 1;
}

}  // namespace wrapir::expr