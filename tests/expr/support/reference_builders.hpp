#pragma once
/// \file
/// The n-ary Add and Mul constructors as they were before they were made
/// O(n log n) (issue 12): like terms found by a linear scan, every term
/// compared with `term_less`. Kept only as the reference that property tests
/// hold the fast constructors of ops.hpp to: same canonical node, same
/// errors.

#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace wrapir::test::reference {

inline expr::Expr add(std::span<const expr::Expr> terms) {
  namespace ex = expr;
  ex::Context& ctx = ex::detail::context_of(terms, "Add");
  std::int64_t constant = 0;
  std::vector<ex::Term> collected;
  auto collect = [&](ex::Expr t) {
    ex::Term term = ex::split_term(t);
    if (!term.monomial) {
      constant = ex::detail::folded_add(constant, term.coefficient, "Add");
      return;
    }
    for (ex::Term& c : collected) {
      if (c.monomial == term.monomial) {
        c.coefficient = ex::detail::folded_add(c.coefficient, term.coefficient, "Add");
        return;
      }
    }
    collected.push_back(term);
  };
  for (ex::Expr t : terms) {
    if (t.is(ex::Kind::add)) {
      for (ex::Expr u : t.operands()) collect(u);
    } else {
      collect(t);
    }
  }
  std::sort(collected.begin(), collected.end(), ex::detail::term_less);
  std::vector<ex::Expr> out;
  for (const ex::Term& t : collected)
    if (t.coefficient != 0) out.push_back(ex::detail::scaled(ctx, t.coefficient, t.monomial));
  if (constant != 0) out.push_back(ctx.integer(constant));
  if (out.empty()) return ctx.integer(0);
  if (out.size() == 1) return out.front();
  return ctx.make_raw(ex::Kind::add, out);
}

inline expr::Expr mul(std::span<const expr::Expr> factors) {
  namespace ex = expr;
  ex::Context& ctx = ex::detail::context_of(factors, "Mul");
  std::int64_t coefficient = 1;
  std::vector<std::pair<ex::Expr, ex::Expr>> powers;
  std::vector<ex::Expr> pending(factors.begin(), factors.end());
  while (!pending.empty()) {
    ex::Expr f = pending.back();
    pending.pop_back();
    if (f.is_integer()) {
      coefficient = ex::detail::folded_mul(coefficient, f.value(), "Mul");
      continue;
    }
    if (f.is(ex::Kind::mul)) {
      pending.insert(pending.end(), f.operands().begin(), f.operands().end());
      continue;
    }
    if (f.is(ex::Kind::add)) {
      auto [g, primitive] = ex::detail::primitive_sum(f);
      coefficient = ex::detail::folded_mul(coefficient, g, "Mul");
      f = primitive;
    }
    ex::Expr base = f, exponent = ctx.integer(1);
    if (f.is(ex::Kind::pow)) {
      base = f.operand(0);
      exponent = f.operand(1);
    }
    auto it = std::find_if(powers.begin(), powers.end(), [&](const auto& p) { return p.first == base; });
    if (it == powers.end()) powers.emplace_back(base, exponent);
    else it->second = ex::add(it->second, exponent);
  }
  if (coefficient == 0) return ctx.integer(0);
  std::vector<ex::Expr> rest;
  for (auto& [base, exponent] : powers) {
    ex::Expr p = ex::pow(base, exponent);
    if (p.is_integer()) coefficient = ex::detail::folded_mul(coefficient, p.value(), "Mul");
    else if (p.is(ex::Kind::mul)) {
      for (ex::Expr part : p.operands()) {
        if (part.is_integer()) coefficient = ex::detail::folded_mul(coefficient, part.value(), "Mul");
        else rest.push_back(part);
      }
    } else rest.push_back(p);
  }
  if (coefficient == 0) return ctx.integer(0);
  if (rest.size() == 1 && rest.front().is(ex::Kind::add) && coefficient != 1) {
    std::vector<ex::Expr> terms;
    bool fits = true;
    for (ex::Expr t : rest.front().operands()) {
      const ex::Term term = ex::split_term(t);
      std::int64_t scaled = 0;
      if (!checked::mul(coefficient, term.coefficient, scaled)) {
        fits = false;
        break;
      }
      terms.push_back(ex::detail::scaled(ctx, scaled, term.monomial));
    }
    if (fits) return ex::add(terms);
  }
  std::sort(rest.begin(), rest.end(), ex::ExprLess{});
  if (coefficient != 1) rest.insert(rest.begin(), ctx.integer(coefficient));
  if (rest.empty()) return ctx.integer(coefficient);
  if (rest.size() == 1) return rest.front();
  return ctx.make_raw(ex::Kind::mul, rest);
}

}  // namespace wrapir::test::reference
