#pragma once
/// \file
/// Definitions of <wrapir/expr/ops.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/ops.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::expr {

namespace detail {

WRAPIR_DECL Expr literal_beside(Expr e, std::int64_t v, const char* what) { return non_null(e, what).context().integer(v); }

}  // namespace detail

WRAPIR_DECL Expr operator+(Expr a, Expr b) { return add(a, b); }
WRAPIR_DECL Expr operator-(Expr a, Expr b) { return sub(a, b); }
WRAPIR_DECL Expr operator*(Expr a, Expr b) { return mul(a, b); }
WRAPIR_DECL Expr operator-(Expr a) { return neg(a); }
WRAPIR_DECL Expr operator+(Expr a, std::int64_t b) { return add(a, detail::literal_beside(a, b, "Add")); }
WRAPIR_DECL Expr operator+(std::int64_t a, Expr b) { return add(detail::literal_beside(b, a, "Add"), b); }
WRAPIR_DECL Expr operator-(Expr a, std::int64_t b) { return sub(a, detail::literal_beside(a, b, "Sub")); }
WRAPIR_DECL Expr operator-(std::int64_t a, Expr b) { return sub(detail::literal_beside(b, a, "Sub"), b); }
WRAPIR_DECL Expr operator*(Expr a, std::int64_t b) { return mul(a, detail::literal_beside(a, b, "Mul")); }
WRAPIR_DECL Expr operator*(std::int64_t a, Expr b) { return mul(detail::literal_beside(b, a, "Mul"), b); }
WRAPIR_DECL Expr floor_div(Expr a, std::int64_t b) { return floor_div(a, detail::literal_beside(a, b, "FloorDiv")); }
WRAPIR_DECL Expr ceil_div(Expr a, std::int64_t b) { return ceil_div(a, detail::literal_beside(a, b, "CeilDiv")); }
WRAPIR_DECL Expr python_mod(Expr a, std::int64_t b) { return python_mod(a, detail::literal_beside(a, b, "PythonMod")); }

namespace detail {

[[noreturn]] WRAPIR_DECL void overflow(const char* what) {
  throw Error(std::string("integer overflow while folding constants in ") + what +
              ": the result does not fit in int64");
}

WRAPIR_DECL std::int64_t folded_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (!checked::add(a, b, r)) overflow(what);
  return r;
}

WRAPIR_DECL std::int64_t folded_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (!checked::mul(a, b, r)) overflow(what);
  return r;
}

WRAPIR_DECL std::int64_t gcd64(std::int64_t a, std::int64_t b) noexcept {
  // std::gcd on INT64_MIN is undefined; work on unsigned magnitudes.
  auto mag = [](std::int64_t v) { return v < 0 ? 0ULL - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v); };
  const std::uint64_t g = std::gcd(mag(a), mag(b));
  return g > static_cast<std::uint64_t>(INT64_MAX) ? std::int64_t{1} << 62 : static_cast<std::int64_t>(g);
}

WRAPIR_DECL Expr scaled(Context& ctx, std::int64_t coefficient, Expr monomial) {
  if (!monomial) return ctx.integer(coefficient);
  if (coefficient == 0) return ctx.integer(0);
  if (coefficient == 1) return monomial;
  std::vector<Expr> ops;
  ops.push_back(ctx.integer(coefficient));
  if (monomial.is(Kind::mul)) ops.insert(ops.end(), monomial.operands().begin(), monomial.operands().end());
  else ops.push_back(monomial);
  return ctx.make_raw(Kind::mul, ops);
}

WRAPIR_DECL bool term_less(const Term& a, const Term& b) noexcept {
  const auto da = degree(a.monomial), db = degree(b.monomial);
  if (da != db) return da > db;
  if (auto c = compare(a.monomial, b.monomial); c != 0) return c < 0;
  return a.coefficient < b.coefficient;
}

WRAPIR_DECL Context& context_of(std::span<const Expr> operands, const char* what) {
  if (operands.empty()) throw Error(std::string(what) + " needs at least one operand");
  for (Expr e : operands)
    if (!e) null_expression(what);
  Context& ctx = operands.front().context();
  for (Expr e : operands)
    if (&e.context() != &ctx) throw Error(std::string(what) + ": operands belong to different contexts");
  return ctx;
}

WRAPIR_DECL Context& context_of(std::initializer_list<Expr> operands, const char* what) {
  return context_of(std::span<const Expr>(operands.begin(), operands.size()), what);
}

}  // namespace detail

WRAPIR_DECL Term split_term(Expr term) {
  detail::non_null(term, "split_term");
  if (term.is_integer()) return {term.value(), Expr{}};
  if (term.is(Kind::mul) && term.operand(0).is_integer()) {
    auto ops = term.operands().subspan(1);
    if (ops.size() == 1) return {term.operand(0).value(), ops[0]};
    return {term.operand(0).value(), term.context().make_raw(Kind::mul, ops)};
  }
  return {1, term};
}

WRAPIR_DECL std::int64_t degree(Expr e) noexcept {
  if (!e) return 0;
  switch (e.kind()) {
    case Kind::integer: return 0;
    case Kind::mul: {
      std::int64_t d = 0;
      for (Expr f : e.operands()) d += degree(f);
      return d;
    }
    case Kind::pow:
      if (e.operand(1).is_integer()) return degree(e.operand(0)) * std::min<std::int64_t>(e.operand(1).value(), 1 << 20);
      return 1;
    default: return 1;
  }
}

WRAPIR_DECL std::span<const Expr> terms_of(const Expr& e) noexcept {
  return e.is(Kind::add) ? e.operands() : std::span<const Expr>(&e, 1);
}

WRAPIR_DECL std::int64_t content(Expr e) noexcept {
  if (!e) return 0;
  std::int64_t g = 0;
  for (Expr t : terms_of(e)) {
    if (t.is_integer()) g = detail::gcd64(g, t.value());
    else if (t.is(Kind::mul) && t.operand(0).is_integer()) g = detail::gcd64(g, t.operand(0).value());
    else g = detail::gcd64(g, 1);
  }
  return g;
}

namespace detail {

WRAPIR_DECL std::pair<std::int64_t, Expr> primitive_sum(Expr sum) {
  Context& ctx = sum.context();
  std::int64_t total = 1;
  Expr primitive = sum;
  while (primitive.is(Kind::add)) {
    const std::int64_t g = content(primitive);
    std::int64_t next = 0;
    if (g <= 1 || !checked::mul(total, g, next)) break;
    auto q = exact_quotient(primitive, ctx.integer(g));
    if (!q) break;
    total = next;
    primitive = *q;
  }
  if (split_term(terms_of(primitive).front()).coefficient < 0) {
    auto negated = exact_quotient(primitive, ctx.integer(-1));
    if (negated && split_term(terms_of(*negated).front()).coefficient > 0) {
      primitive = *negated;
      total = -total;
    }
  }
  return {total, primitive};
}

/// A monomial as coefficient and base -> integer exponent, for division.
struct Factored {
  std::int64_t coefficient = 1;
  std::vector<std::pair<Expr, std::int64_t>> powers;
};

WRAPIR_DECL Factored factor_monomial(Expr term) {
  Factored f;
  auto add_factor = [&](Expr x) {
    if (x.is_integer()) {
      f.coefficient = x.value();
    } else if (x.is(Kind::pow) && x.operand(1).is_integer()) {
      f.powers.emplace_back(x.operand(0), x.operand(1).value());
    } else {
      f.powers.emplace_back(x, 1);
    }
  };
  if (term.is(Kind::mul)) {
    for (Expr x : term.operands()) add_factor(x);
  } else {
    add_factor(term);
  }
  return f;
}

WRAPIR_DECL std::optional<Expr> monomial_quotient(Expr a, Expr b) {
  Context& ctx = a.context();
  Factored fa = factor_monomial(a), fb = factor_monomial(b);
  // INT64_MIN / -1 does not fit (and INT64_MIN % -1 traps): no quotient.
  if (fb.coefficient == 0 || (fb.coefficient == -1 && fa.coefficient == INT64_MIN)) return std::nullopt;
  if (fa.coefficient % fb.coefficient != 0) return std::nullopt;
  std::vector<Expr> factors;
  factors.push_back(ctx.integer(fa.coefficient / fb.coefficient));
  for (auto& [base, exponent] : fa.powers) {
    std::int64_t left = exponent;
    for (auto& [bb, be] : fb.powers) {
      if (bb == base) {
        left -= be;
        be = 0;
      }
    }
    if (left < 0) return std::nullopt;
    if (left > 0) factors.push_back(pow(base, left));
  }
  for (auto& pb : fb.powers)
    if (pb.second != 0) return std::nullopt;  // b has a factor a lacks
  return mul(factors);
}

/// `term / d` for a nonzero integer `d`, if exact: what `monomial_quotient`
/// gives, without taking the monomial apart and multiplying it together
/// again (sums divide by their content on every product they enter, so this
/// is hot). A term `c*(sum)`, which exists only where distributing `c`
/// overflowed, goes the general way: its quotient may distribute.
WRAPIR_DECL std::optional<Expr> term_over_integer(Expr term, std::int64_t d) {
  const Term split = split_term(term);
  if (split.monomial && split.monomial.is(Kind::add)) return monomial_quotient(term, term.context().integer(d));
  if (d == -1 && split.coefficient == INT64_MIN) return std::nullopt;  // the quotient does not fit
  if (split.coefficient % d != 0) return std::nullopt;
  return scaled(term.context(), split.coefficient / d, split.monomial);
}

WRAPIR_DECL std::optional<Expr> term_quotient(Expr term, Expr b) {
  return b.is_integer() ? term_over_integer(term, b.value()) : monomial_quotient(term, b);
}

}  // namespace detail

WRAPIR_DECL std::optional<Expr> exact_quotient(Expr a, Expr b) {
  detail::context_of({a, b}, "exact_quotient");
  if (b.is_integer(0)) return std::nullopt;
  if (a == b) return a.context().integer(1);
  if (b.is(Kind::add)) return std::nullopt;  // division by a sum: only the trivial case
  if (a.is(Kind::add)) {
    std::vector<Expr> quotients;
    quotients.reserve(a.operands().size());
    for (Expr t : a.operands()) {
      auto q = detail::term_quotient(t, b);
      if (!q) return std::nullopt;
      quotients.push_back(*q);
    }
    return add(quotients);
  }
  return detail::term_quotient(a, b);
}

namespace rules {

WRAPIR_DECL Interval difference_bounds(Expr a, Expr b) noexcept {
  try {
    return bounds(sub(a, b));
  } catch (...) {
    return Interval{};
  }
}

WRAPIR_DECL Maybe floor_div_fold(Expr a, Expr b) {
  if (!a.is_integer() || !b.is_integer()) return std::nullopt;
  std::int64_t r = 0;
  if (!checked::floor_div(a.value(), b.value(), r)) detail::overflow("FloorDiv");
  return a.context().integer(r);
}

WRAPIR_DECL Maybe floor_div_identity(Expr a, Expr b) {
  if (b.is_integer(1)) return a;
  if (b.is_integer(-1)) return neg(a);
  if (a.is_integer(0)) return a;
  if (a == b) return a.context().integer(1);
  return std::nullopt;
}

WRAPIR_DECL Maybe floor_div_negative_divisor(Expr a, Expr b) {
  if (b.is(Kind::add) || split_term(b).coefficient >= 0 || split_term(b).coefficient == INT64_MIN) return std::nullopt;
  return floor_div(neg(a), neg(b));
}

WRAPIR_DECL Maybe floor_div_nested(Expr a, Expr b) {
  if (!a.is(Kind::floor_div) || !bounds(b).known_positive()) return std::nullopt;
  return floor_div(a.operand(0), mul(a.operand(1), b));
}

WRAPIR_DECL Maybe floor_div_pull_divisible(Expr a, Expr b) {
  if (auto q = exact_quotient(a, b)) return q;
  if (!a.is(Kind::add) || !b.is_integer()) return std::nullopt;
  std::vector<Expr> quotients, rest;
  for (Expr t : a.operands()) {
    if (auto q = exact_quotient(t, b)) quotients.push_back(*q);
    else rest.push_back(t);
  }
  if (quotients.empty()) return std::nullopt;
  Expr remainder = rest.empty() ? a.context().integer(0) : add(rest);
  return add(add(quotients), floor_div(remainder, b));
}

WRAPIR_DECL Maybe floor_div_gcd(Expr a, Expr b) {
  std::int64_t constant = 0, g = 0;
  for (Expr t : terms_of(a)) {
    if (t.is_integer()) constant = t.value();
    else g = detail::gcd64(g, split_term(t).coefficient);
  }
  if (g == 0) return std::nullopt;  // `a` is a constant
  g = detail::gcd64(g, content(b));
  if (g <= 1) return std::nullopt;
  const bool exact = constant % g == 0;
  if (!exact && !bounds(b).known_positive()) return std::nullopt;
  Context& ctx = a.context();
  Expr variable_part = sub(a, ctx.integer(constant));
  auto qa = exact_quotient(variable_part, ctx.integer(g));
  auto qb = exact_quotient(b, ctx.integer(g));
  if (!qa || !qb) return std::nullopt;
  return floor_div(add(*qa, ctx.integer(::wrapir::floor_div(constant, g))), *qb);
}

WRAPIR_DECL Maybe floor_div_negated_numerator(Expr a, Expr b) {
  if (b.is_integer() ? b.value() <= 1 : !bounds(b).known_positive()) return std::nullopt;
  bool any = false;
  for (Expr t : terms_of(a)) {
    if (t.is_integer()) continue;
    if (split_term(t).coefficient >= 0) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return neg(floor_div(add(neg(a), sub(b, b.context().integer(1))), b));
}

WRAPIR_DECL Maybe floor_div_in_range(Expr a, Expr b) {
  Interval ia = bounds(a), ib = bounds(b);
  if (ia.known_nonnegative() && !ia.hi_unbounded && !ib.lo_unbounded && ia.hi < ib.lo) return a.context().integer(0);
  return std::nullopt;
}

WRAPIR_DECL Maybe python_mod_fold(Expr p, Expr q) {
  if (!p.is_integer() || !q.is_integer()) return std::nullopt;
  std::int64_t r = 0;
  if (!checked::python_mod(p.value(), q.value(), r)) throw Error("modulo by zero in PythonMod");
  return p.context().integer(r);
}

WRAPIR_DECL Maybe python_mod_zero(Expr p, Expr q) {
  if (q.is_integer(1) || q.is_integer(-1) || p.is_integer(0) || p == q) return p.context().integer(0);
  return std::nullopt;
}

WRAPIR_DECL Maybe python_mod_drop_multiples(Expr p, Expr q) {
  if (exact_quotient(p, q)) return p.context().integer(0);
  if (!p.is(Kind::add)) return std::nullopt;
  std::vector<Expr> rest;
  for (Expr t : p.operands())
    if (!exact_quotient(t, q)) rest.push_back(t);
  if (rest.size() == p.operands().size()) return std::nullopt;
  return python_mod(rest.empty() ? p.context().integer(0) : add(rest), q);
}

WRAPIR_DECL Maybe python_mod_in_range(Expr p, Expr q) {
  Interval ip = bounds(p), iq = bounds(q);
  if (ip.known_nonnegative() && !ip.hi_unbounded && !iq.lo_unbounded && ip.hi < iq.lo) return p;
  return std::nullopt;
}

WRAPIR_DECL Maybe python_mod_to_modular_indexing(Expr p, Expr q) {
  if (!bounds(q).known_positive()) return std::nullopt;
  if (p.is(Kind::floor_div)) {
    if (bounds(p.operand(0)).known_nonnegative() && bounds(p.operand(1)).known_positive())
      return modular_indexing(p.operand(0), p.operand(1), q);
    return std::nullopt;
  }
  if (bounds(p).known_nonnegative()) return modular_indexing(p, p.context().integer(1), q);
  return std::nullopt;
}

WRAPIR_DECL Maybe modular_indexing_fold(Expr x, Expr d, Expr m) {
  if (!x.is_integer() || !d.is_integer() || !m.is_integer()) return std::nullopt;
  std::int64_t q = 0, r = 0;
  if (!checked::floor_div(x.value(), d.value(), q)) detail::overflow("ModularIndexing");  // d != 0: checked by the constructor
  if (!checked::python_mod(q, m.value(), r)) throw Error("modulo by zero in ModularIndexing");
  return x.context().integer(r);
}

WRAPIR_DECL Maybe modular_indexing_zero(Expr x, Expr, Expr m) {
  if (x.is_integer(0) || m.is_integer(1)) return x.context().integer(0);
  return std::nullopt;
}

WRAPIR_DECL Maybe modular_indexing_outside_domain(Expr x, Expr d, Expr m) {
  if (bounds(x).known_nonnegative() && bounds(d).known_positive() && bounds(m).known_positive()) return std::nullopt;
  // python_mod turns this back into ModularIndexing only inside the domain,
  // so the two constructors never call each other in a circle.
  return python_mod(floor_div(x, d), m);
}

WRAPIR_DECL Maybe modular_indexing_quotient_simplifies(Expr x, Expr d, Expr m) {
  if (d.is_integer(1)) return std::nullopt;  // `x % m` itself is ModularIndexing(x, 1, m)
  Expr quotient = floor_div(x, d);
  if (quotient.is(Kind::floor_div) && quotient.operand(0) == x && quotient.operand(1) == d) return std::nullopt;
  return python_mod(quotient, m);
}

WRAPIR_DECL Maybe modular_indexing_gcd(Expr x, Expr d, Expr m) {
  if (!d.is_integer()) return std::nullopt;
  const std::int64_t g = detail::gcd64(content(x), d.value());
  if (g <= 1) return std::nullopt;
  Context& ctx = x.context();
  auto qx = exact_quotient(x, ctx.integer(g));
  if (!qx) return std::nullopt;
  return modular_indexing(*qx, ctx.integer(d.value() / g), m);
}

WRAPIR_DECL Maybe modular_indexing_absorb_floor_div(Expr x, Expr d, Expr m) {
  if (!x.is(Kind::floor_div) || !bounds(x.operand(0)).known_nonnegative() || !bounds(x.operand(1)).known_positive())
    return std::nullopt;
  return modular_indexing(x.operand(0), mul(x.operand(1), d), m);
}

WRAPIR_DECL Maybe modular_indexing_drop_multiples(Expr x, Expr d, Expr m) {
  Expr period = mul(d, m);
  if (exact_quotient(x, period)) return x.context().integer(0);
  if (!x.is(Kind::add)) return std::nullopt;
  std::vector<Expr> rest;
  for (Expr t : x.operands())
    if (!exact_quotient(t, period)) rest.push_back(t);
  if (rest.size() == x.operands().size()) return std::nullopt;
  return modular_indexing(rest.empty() ? x.context().integer(0) : add(rest), d, m);
}

WRAPIR_DECL Maybe modular_indexing_in_range(Expr x, Expr d, Expr m) {
  Interval ix = bounds(x), id = bounds(d), im = bounds(m);
  if (!ix.known_nonnegative() || id.lo_unbounded || im.lo_unbounded || id.lo < 1 || im.lo < 1) return std::nullopt;
  std::int64_t period = 0;
  if (!checked::mul(id.lo, im.lo, period)) return std::nullopt;
  if (!ix.known_le(period - 1)) return std::nullopt;
  return floor_div(x, d);
}

WRAPIR_DECL std::vector<Expr> drop_dominated(std::vector<Expr> args, bool is_min) {
  // The ranges of the arguments decide most cases without building nodes;
  // the range of each difference decides more (`s0 + 1` vs `s0`), but costs
  // a node per pair, so only for the short lists wrappers have.
  constexpr std::size_t max_pairwise_differences = 16;
  std::vector<Interval> ranges;
  ranges.reserve(args.size());
  for (Expr a : args) ranges.push_back(bounds(a));
  std::vector<bool> dropped(args.size(), false);
  if (args.size() > max_pairwise_differences) {
    // Ranges alone decide, so the pairwise scan below would only ask "does
    // another kept argument's bound reach past this one's": an ordered set
    // of those bounds answers in O(log n), the same outcome in O(n log n).
    std::set<std::pair<std::int64_t, std::size_t>> reach;  // Min: upper bounds; Max: lower bounds
    auto key = [&](std::size_t i) -> std::optional<std::int64_t> {
      const Interval& r = ranges[i];
      if (is_min) return r.hi_unbounded ? std::nullopt : std::optional<std::int64_t>(r.hi);
      return r.lo_unbounded ? std::nullopt : std::optional<std::int64_t>(r.lo);
    };
    for (std::size_t i = 0; i < args.size(); ++i)
      if (auto k = key(i)) reach.emplace(*k, i);
    auto dominated = [&](std::size_t i, auto it, auto end) {
      for (; it != end; ++it) {
        if (it->second == i) continue;  // at most one entry is skipped
        return is_min ? ranges[i].known_ge(it->first) : ranges[i].known_le(it->first);
      }
      return false;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
      dropped[i] = is_min ? dominated(i, reach.begin(), reach.end()) : dominated(i, reach.rbegin(), reach.rend());
      if (auto k = key(i); dropped[i] && k) reach.erase({*k, i});
    }
  } else {
    for (std::size_t i = 0; i < args.size(); ++i) {
      for (std::size_t j = 0; j < args.size() && !dropped[i]; ++j) {
        if (i == j || dropped[j]) continue;
        // Is args[j] <= args[i] (for Min) / args[j] >= args[i] (for Max)?
        const Interval& ri = ranges[i];
        const Interval& rj = ranges[j];
        const bool by_range = is_min ? (!rj.hi_unbounded && ri.known_ge(rj.hi)) : (!rj.lo_unbounded && ri.known_le(rj.lo));
        if (by_range) {
          dropped[i] = true;
          continue;
        }
        Interval diff = difference_bounds(args[i], args[j]);
        if (is_min ? diff.known_nonnegative() : diff.known_le(0)) dropped[i] = true;
      }
    }
  }
  std::vector<Expr> kept;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!dropped[i]) kept.push_back(args[i]);
  return kept;
}

WRAPIR_DECL Maybe compare_decided(Kind kind, Expr a, Expr b) {
  Context& ctx = a.context();
  if (a == b) return ctx.integer(kind == Kind::eq || kind == Kind::le || kind == Kind::ge ? 1 : 0);
  if (a.is_integer() && b.is_integer()) {
    const std::int64_t x = a.value(), y = b.value();
    const bool holds = kind == Kind::eq ? x == y : kind == Kind::ne ? x != y : kind == Kind::lt ? x < y : x <= y;
    return ctx.integer(holds ? 1 : 0);
  }
  // Disjoint ranges decide without building the difference.
  const Interval ra = bounds(a), rb = bounds(b);
  const bool a_below = !ra.hi_unbounded && !rb.lo_unbounded && ra.hi < rb.lo;
  const bool a_above = !ra.lo_unbounded && !rb.hi_unbounded && ra.lo > rb.hi;
  const bool a_at_most = !ra.hi_unbounded && !rb.lo_unbounded && ra.hi <= rb.lo;
  switch (kind) {
    case Kind::eq:
      if (a_below || a_above) return ctx.integer(0);
      break;
    case Kind::ne:
      if (a_below || a_above) return ctx.integer(1);
      break;
    case Kind::lt:
      if (a_below) return ctx.integer(1);
      if (!ra.lo_unbounded && !rb.hi_unbounded && ra.lo >= rb.hi) return ctx.integer(0);
      break;
    case Kind::le:
      if (a_at_most) return ctx.integer(1);
      if (a_above) return ctx.integer(0);
      break;
    default: break;
  }
  Interval d = difference_bounds(a, b);
  auto yes = [&] { return ctx.integer(1); };
  auto no = [&] { return ctx.integer(0); };
  switch (kind) {
    case Kind::eq:
    case Kind::ne: {
      const bool differ = d.known_positive() || d.known_negative();
      if (differ) return kind == Kind::eq ? no() : yes();
      if (d.is_constant() && d.lo == 0) return kind == Kind::eq ? yes() : no();
      return std::nullopt;
    }
    case Kind::lt:
      if (d.known_negative()) return yes();
      if (d.known_nonnegative()) return no();
      return std::nullopt;
    case Kind::le:
      if (d.known_le(0)) return yes();
      if (d.known_positive()) return no();
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace rules

namespace detail {

/// A term of a sum under construction: split into coefficient and monomial,
/// with the monomial's degree (computed once, not in every comparison) and
/// the position of the operand it came from.
struct SumTerm {
  std::int64_t coefficient;
  Expr monomial;
  std::int64_t degree;
  std::size_t operand;
};

/// The canonical order of a sum's monomials (falling degree, then structure).
/// Like terms compare equal, so a stable sort keeps them in operand order.
WRAPIR_DECL bool monomial_before(const SumTerm& a, const SumTerm& b) noexcept {
  if (a.degree != b.degree) return a.degree > b.degree;
  return compare(a.monomial, b.monomial) < 0;
}

WRAPIR_DECL Expr sum_of(std::span<const Expr> terms, std::size_t* overflowed_at) {
  Context& ctx = context_of(terms, "Add");
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t first_overflow = none;
  std::int64_t constant = 0;
  bool constant_overflowed = false;
  std::vector<SumTerm> collected;
  collected.reserve(terms.size());
  auto collect = [&](Expr t, std::size_t operand) {
    const Term term = split_term(t);
    if (term.monomial) {
      collected.push_back(SumTerm{term.coefficient, term.monomial, degree(term.monomial), operand});
    } else if (!constant_overflowed && !checked::add(constant, term.coefficient, constant)) {
      constant_overflowed = true;
      first_overflow = std::min(first_overflow, operand);
    }
  };
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].is(Kind::add)) {
      for (Expr u : terms[i].operands()) collect(u, i);
    } else {
      collect(terms[i], i);
    }
  }
  merge_sorted_runs(collected, monomial_before);
  // Combine like terms (adjacent now, in operand order) in place.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < collected.size();) {
    SumTerm combined = collected[i];
    bool overflowed = false;
    std::size_t j = i + 1;
    for (; j < collected.size() && collected[j].monomial == combined.monomial; ++j) {
      if (!overflowed && !checked::add(combined.coefficient, collected[j].coefficient, combined.coefficient)) {
        overflowed = true;
        first_overflow = std::min(first_overflow, collected[j].operand);
      }
    }
    if (combined.coefficient != 0) collected[kept++] = combined;
    i = j;
  }
  if (first_overflow != none) {
    if (overflowed_at != nullptr) *overflowed_at = first_overflow;
    overflow("Add");
  }
  std::vector<Expr> out;
  out.reserve(kept + 1);
  for (std::size_t i = 0; i < kept; ++i) out.push_back(scaled(ctx, collected[i].coefficient, collected[i].monomial));
  if (constant != 0) out.push_back(ctx.integer(constant));
  if (out.empty()) return ctx.integer(0);
  if (out.size() == 1) return out.front();
  return ctx.make_raw(Kind::add, out);
}

}  // namespace detail

WRAPIR_DECL Expr add(std::span<const Expr> terms) { return detail::sum_of(terms); }

namespace detail {

/// Where each base of a product under construction sits in its list of
/// powers: a scan while the list is short (the common case, no allocation),
/// then an open-addressing table of positions, so that a product of n
/// factors is built in O(n log n), not O(n^2).
class BaseIndex {
 public:
  using Powers = std::vector<std::pair<Expr, Expr>>;

  /// The position of `base` in `powers`, or `powers.size()`.
  [[nodiscard]] std::size_t find(const Powers& powers, Expr base) const noexcept {
    if (powers.size() <= scan_limit) {
      for (std::size_t i = 0; i < powers.size(); ++i)
        if (powers[i].first == base) return i;
      return powers.size();
    }
    for (std::size_t slot = first_slot(base); slots_[slot] != empty; slot = (slot + 1) & mask()) {
      if (powers[slots_[slot]].first == base) return slots_[slot];
    }
    return powers.size();
  }

  /// Call after appending a base to `powers`.
  void appended(const Powers& powers) {
    if (powers.size() <= scan_limit) return;
    if (powers.size() * 2 <= slots_.size()) {
      place(powers.back().first, powers.size() - 1);
      return;
    }
    slots_.assign(std::max<std::size_t>(64, slots_.size() * 2), empty);
    for (std::size_t i = 0; i < powers.size(); ++i) place(powers[i].first, i);
  }

 private:
  static constexpr std::size_t scan_limit = 16;
  static constexpr std::size_t empty = static_cast<std::size_t>(-1);

  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }
  [[nodiscard]] std::size_t first_slot(Expr base) const noexcept {
    // Node addresses: a multiplicative hash spreads their aligned low bits.
    const auto bits = reinterpret_cast<std::uintptr_t>(base.node());
    return static_cast<std::size_t>((static_cast<std::uint64_t>(bits) * 0x9e3779b97f4a7c15ULL) >> 20) & mask();
  }
  void place(Expr base, std::size_t position) noexcept {
    std::size_t slot = first_slot(base);
    while (slots_[slot] != empty) slot = (slot + 1) & mask();
    slots_[slot] = position;
  }

  std::vector<std::size_t> slots_;
};

}  // namespace detail

WRAPIR_DECL Expr mul(std::span<const Expr> factors) {
  Context& ctx = detail::context_of(factors, "Mul");
  std::int64_t coefficient = 1;
  std::vector<std::pair<Expr, Expr>> powers;  // base -> exponent
  detail::BaseIndex base_index;
  std::vector<Expr> pending(factors.begin(), factors.end());
  while (!pending.empty()) {
    Expr f = pending.back();
    pending.pop_back();
    if (f.is_integer()) {
      coefficient = detail::folded_mul(coefficient, f.value(), "Mul");
      continue;
    }
    if (f.is(Kind::mul)) {
      pending.insert(pending.end(), f.operands().begin(), f.operands().end());
      continue;
    }
    if (f.is(Kind::add)) {
      auto [g, primitive] = detail::primitive_sum(f);
      coefficient = detail::folded_mul(coefficient, g, "Mul");
      if (!primitive.is(Kind::add)) {  // the quotient collapsed to one term
        pending.push_back(primitive);
        continue;
      }
      f = primitive;
    }
    Expr base = f, exponent = ctx.integer(1);
    if (f.is(Kind::pow)) {
      base = f.operand(0);
      exponent = f.operand(1);
    }
    const std::size_t at = base_index.find(powers, base);
    if (at == powers.size()) {
      powers.emplace_back(base, exponent);
      base_index.appended(powers);
    } else {
      powers[at].second = add(powers[at].second, exponent);
    }
  }
  if (coefficient == 0) return ctx.integer(0);
  std::vector<Expr> rest;
  for (auto& [base, exponent] : powers) {
    Expr p = pow(base, exponent);
    if (p.is_integer()) coefficient = detail::folded_mul(coefficient, p.value(), "Mul");
    else if (p.is(Kind::mul)) {
      // (x*y)**k distributed by pow: fold its parts in again.
      for (Expr part : p.operands()) {
        if (part.is_integer()) coefficient = detail::folded_mul(coefficient, part.value(), "Mul");
        else rest.push_back(part);
      }
    } else rest.push_back(p);
  }
  if (coefficient == 0) return ctx.integer(0);
  // An integer times a lone sum distributes, as in sympy: 2*(x + 1) is
  // 2*x + 2; unless a scaled coefficient would leave int64, and then the
  // product stays `c*(x + 1)`, the node the sum gets among other factors.
  if (rest.size() == 1 && rest.front().is(Kind::add) && coefficient != 1) {
    std::vector<Expr> terms;
    bool fits = true;
    for (Expr t : rest.front().operands()) {
      const Term term = split_term(t);
      std::int64_t scaled = 0;
      if (!checked::mul(coefficient, term.coefficient, scaled)) {
        fits = false;
        break;
      }
      terms.push_back(detail::scaled(ctx, scaled, term.monomial));
    }
    if (fits) return add(terms);
  }
  detail::merge_sorted_runs(rest, ExprLess{});
  if (coefficient != 1) rest.insert(rest.begin(), ctx.integer(coefficient));
  if (rest.empty()) return ctx.integer(coefficient);
  if (rest.size() == 1) return rest.front();
  return ctx.make_raw(Kind::mul, rest);
}

WRAPIR_DECL Expr add(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return add(ops);
}

WRAPIR_DECL Expr mul(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return mul(ops);
}

WRAPIR_DECL Expr neg(Expr a) { return mul(detail::literal_beside(a, -1, "Neg"), a); }

WRAPIR_DECL Expr sub(Expr a, Expr b) {
  detail::context_of({a, b}, "Sub");
  return add(a, neg(b));
}

WRAPIR_DECL Expr pow(Expr base, Expr exponent) {
  Context& ctx = detail::context_of({base, exponent}, "PowByNatural");
  if (exponent.is_integer()) {
    const std::int64_t n = exponent.value();
    if (n < 0) throw Error("negative exponent " + std::to_string(n) + " in PowByNatural: the exponent must be a natural number");
    if (n == 0) return ctx.integer(1);
    if (n == 1) return base;
    if (base.is_integer()) {
      std::int64_t r = 0;
      if (!checked::pow(base.value(), n, r)) detail::overflow("PowByNatural");
      return ctx.integer(r);
    }
  }
  if (base.is_integer(1)) return base;
  if (base.is_integer(0) && bounds(exponent).known_positive()) return base;
  if (base.is(Kind::pow)) return pow(base.operand(0), mul(base.operand(1), exponent));
  if (base.is(Kind::mul)) {
    // (c*x*y)**n = c**n * x**n * y**n
    std::vector<Expr> parts;
    for (Expr f : base.operands()) parts.push_back(pow(f, exponent));
    return mul(parts);
  }
  if (base.is(Kind::add)) {
    // (2*y + 2)**n = 2**n * (y + 1)**n: powers of sums are not expanded, but
    // their content leaves them, as for products.
    auto [g, primitive] = detail::primitive_sum(base);
    if (g != 1) return mul(pow(ctx.integer(g), exponent), pow(primitive, exponent));
  }
  return ctx.make_raw(Kind::pow, std::vector<Expr>{base, exponent});
}

WRAPIR_DECL Expr pow(Expr base, std::int64_t exponent) {
  return pow(base, detail::literal_beside(base, exponent, "PowByNatural"));
}

WRAPIR_DECL Expr floor_div(Expr a, Expr b) {
  Context& ctx = detail::context_of({a, b}, "FloorDiv");
  if (b.is_integer(0)) throw Error("division by zero in FloorDiv: the divisor is the literal 0");
  if (auto r = rules::floor_div_fold(a, b)) return *r;
  if (auto r = detail::first_rule(a, b, rules::floor_div_identity, rules::floor_div_negative_divisor,
                                  rules::floor_div_nested, rules::floor_div_pull_divisible, rules::floor_div_gcd,
                                  rules::floor_div_negated_numerator, rules::floor_div_in_range))
    return *r;
  return ctx.make_raw(Kind::floor_div, std::vector<Expr>{a, b});
}

WRAPIR_DECL Expr clean_div(Expr a, Expr b) {
  detail::context_of({a, b}, "CleanDiv");
  if (b.is_integer(0)) throw Error("division by zero in CleanDiv: the divisor is the literal 0");
  if (auto q = exact_quotient(a, b)) return *q;
  if (a.is_integer() && b.is_integer())
    throw Error("CleanDiv(" + std::to_string(a.value()) + ", " + std::to_string(b.value()) +
                ") is not exact: " + std::to_string(b.value()) + " does not divide " + std::to_string(a.value()));
  return floor_div(a, b);
}

WRAPIR_DECL Expr ceil_div(Expr a, Expr b) {
  Context& ctx = detail::context_of({a, b}, "CeilDiv");
  if (b.is_integer(0)) throw Error("division by zero in CeilDiv: the divisor is the literal 0");
  if (auto q = exact_quotient(a, b)) return *q;  // CleanDiv(a, b), already exact
  if (a.is_integer() && b.is_integer()) {
    std::int64_t r = 0;
    if (!checked::floor_div(a.value(), b.value(), r)) detail::overflow("CeilDiv");
    return ctx.integer(::wrapir::ceil_div(a.value(), b.value()));
  }
  if (bounds(b).known_positive()) {
    // Inductor's form; its constant `a + (b - 1)` can leave int64 where the
    // ceiling itself fits, and then the exact form below is used.
    try {
      return floor_div(add(a, sub(b, ctx.integer(1))), b);
    } catch (const Error&) {
    }
  }
  return neg(floor_div(neg(a), b));
}

WRAPIR_DECL Expr modular_indexing(Expr x, Expr d, Expr m) {
  Context& ctx = detail::context_of({x, d, m}, "ModularIndexing");
  if (d.is_integer(0)) throw Error("division by zero in ModularIndexing: the divisor is the literal 0");
  if (m.is_integer(0)) throw Error("modulo by zero in ModularIndexing: the modulus is the literal 0");
  if (auto r = rules::modular_indexing_fold(x, d, m)) return *r;
  if (auto r = detail::first_rule(x, d, m, rules::modular_indexing_zero, rules::modular_indexing_outside_domain,
                                  rules::modular_indexing_quotient_simplifies, rules::modular_indexing_gcd,
                                  rules::modular_indexing_absorb_floor_div, rules::modular_indexing_drop_multiples,
                                  rules::modular_indexing_in_range))
    return *r;
  return ctx.make_raw(Kind::modular_indexing, std::vector<Expr>{x, d, m});
}

WRAPIR_DECL Expr python_mod(Expr p, Expr q) {
  Context& ctx = detail::context_of({p, q}, "PythonMod");
  if (q.is_integer(0)) throw Error("modulo by zero in PythonMod: the modulus is the literal 0");
  if (auto r = rules::python_mod_fold(p, q)) return *r;
  if (auto r = detail::first_rule(p, q, rules::python_mod_zero, rules::python_mod_drop_multiples,
                                  rules::python_mod_in_range, rules::python_mod_to_modular_indexing))
    return *r;
  return ctx.make_raw(Kind::python_mod, std::vector<Expr>{p, q});
}

WRAPIR_DECL Expr mod(Expr p, Expr q) {
  detail::context_of({p, q}, "Mod");
  if (q.is_integer(0)) throw Error("modulo by zero in Mod: the modulus is the literal 0");
  if (p.is_integer() && q.is_integer() && (p.value() < 0 || q.value() < 0))
    throw Error("Mod(" + std::to_string(p.value()) + ", " + std::to_string(q.value()) +
                ") is undefined: Mod needs a non-negative dividend and a positive modulus");
  return python_mod(p, q);
}

namespace detail {

WRAPIR_DECL Expr min_max(std::span<const Expr> args, bool is_min) {
  const Kind kind = is_min ? Kind::min : Kind::max;
  Context& ctx = context_of(args, is_min ? "Min" : "Max");
  std::vector<Expr> flat;
  std::optional<std::int64_t> constant;
  std::vector<Expr> pending(args.begin(), args.end());
  while (!pending.empty()) {
    Expr a = pending.back();
    pending.pop_back();
    if (a.is(kind)) {
      pending.insert(pending.end(), a.operands().begin(), a.operands().end());
    } else if (a.is_integer()) {
      constant = !constant ? a.value() : (is_min ? std::min(*constant, a.value()) : std::max(*constant, a.value()));
    } else {
      flat.push_back(a);
    }
  }
  if (constant) flat.push_back(ctx.integer(*constant));
  std::sort(flat.begin(), flat.end(), ExprLess{});
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (flat.size() > 1) flat = rules::drop_dominated(std::move(flat), is_min);
  if (flat.size() == 1) return flat.front();
  return ctx.make_raw(kind, flat);
}

WRAPIR_DECL Expr comparison(Kind kind, Expr a, Expr b) {
  Context& ctx = context_of({a, b}, std::string(kind_name(kind)).c_str());
  if (kind == Kind::gt) return comparison(Kind::lt, b, a);
  if (kind == Kind::ge) return comparison(Kind::le, b, a);
  // Symmetric comparisons keep the larger operand first, which puts a
  // constant on the right: `(n % 2) == 0`. Ordering before deciding makes
  // `eq(a, b)` and `eq(b, a)` the same question.
  if ((kind == Kind::eq || kind == Kind::ne) && compare(a, b) < 0) std::swap(a, b);
  if (auto r = rules::compare_decided(kind, a, b)) return *r;
  return ctx.make_raw(kind, std::vector<Expr>{a, b});
}

}  // namespace detail

WRAPIR_DECL Expr min(std::span<const Expr> args) { return detail::min_max(args, true); }
WRAPIR_DECL Expr max(std::span<const Expr> args) { return detail::min_max(args, false); }

WRAPIR_DECL Expr min(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return min(ops);
}

WRAPIR_DECL Expr max(Expr a, Expr b) {
  const Expr ops[2] = {a, b};
  return max(ops);
}

WRAPIR_DECL Expr min(std::initializer_list<Expr> args) { return min(std::span<const Expr>(args.begin(), args.size())); }
WRAPIR_DECL Expr max(std::initializer_list<Expr> args) { return max(std::span<const Expr>(args.begin(), args.size())); }
WRAPIR_DECL Expr eq(Expr a, Expr b) { return detail::comparison(Kind::eq, a, b); }
WRAPIR_DECL Expr ne(Expr a, Expr b) { return detail::comparison(Kind::ne, a, b); }
WRAPIR_DECL Expr lt(Expr a, Expr b) { return detail::comparison(Kind::lt, a, b); }
WRAPIR_DECL Expr le(Expr a, Expr b) { return detail::comparison(Kind::le, a, b); }
WRAPIR_DECL Expr gt(Expr a, Expr b) { return detail::comparison(Kind::gt, a, b); }
WRAPIR_DECL Expr ge(Expr a, Expr b) { return detail::comparison(Kind::ge, a, b); }

WRAPIR_DECL Expr where(Expr condition, Expr if_true, Expr if_false) {
  Context& ctx = detail::context_of({condition, if_true, if_false}, "Where");
  if (condition.is_integer()) return condition.value() != 0 ? if_true : if_false;
  if (if_true == if_false) return if_true;
  return ctx.make_raw(Kind::where, std::vector<Expr>{condition, if_true, if_false});
}

WRAPIR_DECL Expr align(Expr x, std::int64_t alignment) {
  Context& ctx = detail::context_of({x}, "align");
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw Error("align: alignment " + std::to_string(alignment) + " is not a positive power of two");
  if (x.is_integer()) {
    std::int64_t r = 0;
    if (!checked::align_up(x.value(), alignment, r)) detail::overflow("align");
    return ctx.integer(r);
  }
  if (x.is(Kind::align) && x.value() >= alignment) return x;
  if (exact_quotient(x, ctx.integer(alignment))) return x;
  const Expr ops[1] = {x};
  return ctx.make_raw(Kind::align, ops, alignment);
}

WRAPIR_DECL Expr identity(Expr x) {
  Context& ctx = detail::context_of({x}, "Identity");
  const Expr ops[1] = {x};
  return ctx.make_raw(Kind::identity, ops);
}

WRAPIR_DECL Expr make(Context& ctx, Kind kind, std::span<const Expr> ops, std::int64_t value) {
  auto need = [&](std::size_t n) {
    if (ops.size() != n)
      throw Error(std::string(kind_name(kind)) + " takes " + std::to_string(n) + " operands, got " +
                  std::to_string(ops.size()));
  };
  switch (kind) {
    case Kind::integer: return ctx.integer(value);
    case Kind::symbol: throw Error("make cannot make a symbol; use Context::symbol");
    case Kind::add: return add(ops);
    case Kind::mul: return mul(ops);
    case Kind::pow: need(2); return pow(ops[0], ops[1]);
    case Kind::floor_div: need(2); return floor_div(ops[0], ops[1]);
    case Kind::clean_div: need(2); return clean_div(ops[0], ops[1]);
    case Kind::modular_indexing: need(3); return modular_indexing(ops[0], ops[1], ops[2]);
    case Kind::python_mod: need(2); return python_mod(ops[0], ops[1]);
    case Kind::mod: need(2); return mod(ops[0], ops[1]);
    case Kind::min: return min(ops);
    case Kind::max: return max(ops);
    case Kind::eq:
    case Kind::ne:
    case Kind::lt:
    case Kind::le:
    case Kind::gt:
    case Kind::ge: need(2); return detail::comparison(kind, ops[0], ops[1]);
    case Kind::where: need(3); return where(ops[0], ops[1], ops[2]);
    case Kind::align: need(1); return align(ops[0], value == 0 ? 64 : value);
    case Kind::identity: need(1); return identity(ops[0]);
  }
  throw Error("make: unknown kind");
}

}  // namespace wrapir::expr