#pragma once
/// \file
/// Definitions of <wrapir/expr/solve.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/solve.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace wrapir::expr {

namespace detail {

/// Text as the solver's messages quote it, shortened, so that a message
/// about a 100 KB sum stays a readable line (issue 12: one was 200 KB).
inline std::string solve_quote(std::string text) {
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return "`" + text + "`";
}
inline std::string solve_quote(Expr e) { return solve_quote(print_python(e)); }

/// At most this many unknowns are named in an "underdetermined" message.
inline constexpr std::size_t solve_named_unknowns = 8;

}  // namespace detail

WRAPIR_DECL Result<Solution> solve(Expr expr, Expr value, Expr unknown, std::span<const Expr> knowns) {
  if (!expr || !value || !unknown) return Diagnostic{"solve: null expression"};
  if (!unknown.is_symbol()) return Diagnostic{"solve: the unknown must be a symbol, got " + detail::solve_quote(unknown)};
  if (depends_on(value, unknown))
    return Diagnostic{"solve: the value " + detail::solve_quote(value) + " uses the unknown '" + std::string(unknown.name()) + "'"};
  // Linear in the unknown once multiplied out: x*(y + 1) is x*y + x.
  try {
    expr = expand(expr);
    value = expand(value);
  } catch (const Error& e) {
    return Diagnostic{std::string("cannot solve: ") + e.what()};
  }
  if (!depends_on(expr, unknown))
    return Diagnostic{"cannot solve for '" + std::string(unknown.name()) + "': " + detail::solve_quote(expr) +
                      " does not depend on it"};
  std::vector<Expr> others;
  for (Expr s : free_symbols(expr)) {
    if (s == unknown || depends_on(value, s)) continue;
    if (std::find(knowns.begin(), knowns.end(), s) != knowns.end()) continue;
    others.push_back(s);
  }
  if (!others.empty()) {
    std::string names = "'" + std::string(unknown.name()) + "'";
    for (std::size_t i = 0; i < others.size() && i + 1 < detail::solve_named_unknowns; ++i)
      names += ", '" + std::string(others[i].name()) + "'";
    if (others.size() + 1 > detail::solve_named_unknowns)
      names += " and " + std::to_string(others.size() + 1 - detail::solve_named_unknowns) + " more";
    return Diagnostic{"underdetermined: " + detail::solve_quote(expr) + " has " + std::to_string(others.size() + 1) +
                      " unknowns (" + names + "); one equation determines only one"};
  }
  auto degree = degree_in(expr, unknown);
  if (!degree)
    return Diagnostic{"cannot solve for '" + std::string(unknown.name()) + "': it appears non-linearly (inside a " +
                      "division, modulo, min/max or similar) in " + detail::solve_quote(expr)};
  if (*degree > 1)
    return Diagnostic{"cannot solve for '" + std::string(unknown.name()) + "': " + detail::solve_quote(expr) +
                      " has degree " + std::to_string(*degree) + " in it; only linear equations are solved"};
  try {
    // expr = a*unknown + b
    std::vector<Expr> a_terms, b_terms;
    for (Expr t : terms_of(expr)) {
      if (auto q = exact_quotient(t, unknown); q && depends_on(t, unknown)) a_terms.push_back(*q);
      else b_terms.push_back(t);
    }
    Context& ctx = expr.context();
    Expr a = a_terms.empty() ? ctx.integer(0) : add(a_terms);
    Expr b = b_terms.empty() ? ctx.integer(0) : add(b_terms);
    if (a.is_integer(0) || depends_on(a, unknown))
      return Diagnostic{"cannot solve for '" + std::string(unknown.name()) + "' in " + detail::solve_quote(expr)};
    Expr numerator = sub(value, b);
    Solution s{floor_div(numerator, a), eq(python_mod(numerator, a), ctx.integer(0))};
    if (s.condition.is_integer(0))
      return Diagnostic{"no integer solution: " + detail::solve_quote(print_python(expr) + " == " + print_python(value)) +
                        " needs " + detail::solve_quote(a) + " to divide " + detail::solve_quote(numerator)};
    if (s.value.is_integer() && !(unknown.assumption() == Assumption::integer ||
                                  (unknown.assumption() == Assumption::positive ? s.value.value() > 0 : s.value.value() >= 0)))
      return Diagnostic{"no solution: '" + std::string(unknown.name()) + "' would be " + std::to_string(s.value.value()) +
                        ", which breaks its assumption (" + std::string(assumption_name(unknown.assumption())) + ")"};
    return s;
  } catch (const Error& e) {
    return Diagnostic{std::string("cannot solve: ") + e.what()};
  }
}

}  // namespace wrapir::expr