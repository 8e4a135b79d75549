// The n-ary Add and Mul constructors (and Min/Max over long lists) are
// O(n log n); these tests hold them to what they computed before (the
// quadratic reference in support/reference_builders.hpp) and to what
// adding or multiplying one operand at a time computes, on seeded random
// canonical operands. They also check the parser's n-ary chains against
// the pairwise fold it used to perform, diagnostics included.

#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/print_python.hpp>

#include <doctest/doctest.h>

#include "expr/support/random_exprs.hpp"
#include "expr/support/reference_builders.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace ex = wrapir::expr;
using wrapir::test::RandomExprs;

/// The result of `build`, or nothing when it throws `ex::Error`.
template <class F>
auto attempt(F&& build) -> std::optional<decltype(build())> {
  try {
    return build();
  } catch (const ex::Error&) {
    return std::nullopt;
  }
}

/// Operands for a sum or product: random canonical trees, with repeats,
/// negations and literals mixed in so that like terms and bases meet.
std::vector<ex::Expr> operands(RandomExprs& r, ex::Context& ctx) {
  std::vector<ex::Expr> ops;
  const auto n = static_cast<std::size_t>(r.uniform(2, 24));
  while (ops.size() < n) {
    switch (r.uniform(0, 5)) {
      case 0:
        if (!ops.empty()) {
          ops.push_back(ops[static_cast<std::size_t>(r.uniform(0, static_cast<std::int64_t>(ops.size()) - 1))]);
          break;
        }
        [[fallthrough]];
      case 1:
        if (!ops.empty()) {
          if (auto neg = attempt([&] { return -ops.back(); })) ops.push_back(*neg);
          break;
        }
        [[fallthrough]];
      case 2: ops.push_back(ctx.integer(r.uniform(-40, 40))); break;
      default: ops.push_back(r.canonical(3)); break;
    }
  }
  return ops;
}

TEST_CASE("nary: Add and Mul build the node the quadratic reference built, and fail where it failed") {
  ex::Context ctx;
  RandomExprs r(ctx, 12);
  int sums = 0, products = 0;
  for (int round = 0; round < 1500; ++round) {
    const std::vector<ex::Expr> ops = operands(r, ctx);
    INFO("round ", round);
    const auto fast_sum = attempt([&] { return ex::add(ops); });
    const auto old_sum = attempt([&] { return wrapir::test::reference::add(ops); });
    REQUIRE(fast_sum.has_value() == old_sum.has_value());
    if (fast_sum) {
      CHECK(*fast_sum == *old_sum);
      ++sums;
    }
    const auto fast_product = attempt([&] { return ex::mul(ops); });
    const auto old_product = attempt([&] { return wrapir::test::reference::mul(ops); });
    REQUIRE(fast_product.has_value() == old_product.has_value());
    if (fast_product) {
      CHECK(*fast_product == *old_product);
      ++products;
    }
  }
  CHECK(sums > 1000);
  CHECK(products > 1000);
}

TEST_CASE("nary: an n-ary sum is the left fold of binary '+', overflow included; a product where both fit") {
  ex::Context ctx;
  RandomExprs r(ctx, 99);
  for (int round = 0; round < 800; ++round) {
    const std::vector<ex::Expr> ops = operands(r, ctx);
    INFO("round ", round);
    const auto nary = attempt([&] { return ex::add(ops); });
    const auto folded = attempt([&] {
      ex::Expr s = ops.front();
      for (std::size_t i = 1; i < ops.size(); ++i) s = s + ops[i];
      return s;
    });
    REQUIRE(nary.has_value() == folded.has_value());
    if (nary) CHECK(*nary == *folded);
    const auto nary_product = attempt([&] { return ex::mul(ops); });
    const auto folded_product = attempt([&] {
      ex::Expr p = ops.front();
      for (std::size_t i = 1; i < ops.size(); ++i) p = p * ops[i];
      return p;
    });
    if (nary_product && folded_product) CHECK(*nary_product == *folded_product);
  }
}

TEST_CASE("nary: sums near int64's limits overflow exactly where the pairwise fold does") {
  ex::Context ctx;
  const ex::Expr x = ctx.symbol("x"), y = ctx.symbol("y");
  const std::int64_t big = INT64_MAX;
  // Partial sums in operand order decide, as when adding one at a time.
  const std::vector<ex::Expr> overflows = {big * x, x, -x};
  CHECK_THROWS_AS((void)ex::add(overflows), ex::Error);
  std::size_t at = 0;
  CHECK_THROWS_AS((void)ex::detail::sum_of(overflows, &at), ex::Error);
  CHECK(at == 1);
  const std::vector<ex::Expr> fits = {big * x, -x, x, y};
  CHECK(ex::print_python(ex::add(fits)) == "9223372036854775807*x + y");
  const std::vector<ex::Expr> constant = {y, ctx.integer(big), ctx.integer(-1), ctx.integer(1)};
  CHECK(ex::print_python(ex::add(constant)) == "y + 9223372036854775807");
  const std::vector<ex::Expr> constant_overflows = {y, ctx.integer(big), ctx.integer(1), ctx.integer(-1)};
  CHECK_THROWS_AS((void)ex::detail::sum_of(constant_overflows, &at), ex::Error);
  CHECK(at == 2);
}

TEST_CASE("nary: merge_sorted_runs is a stable sort") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 400; ++round) {
    std::vector<std::pair<int, int>> items;  // (key, original position)
    const int n = static_cast<int>(rng() % 60);
    const int keys = 1 + static_cast<int>(rng() % 12);
    int key = 0;
    for (int i = 0; i < n; ++i) {
      // Runs rising, falling and flat, as sums and products present them.
      switch (rng() % 4) {
        case 0: key += 1; break;
        case 1: key -= 1; break;
        case 2: break;
        default: key = static_cast<int>(rng() % static_cast<unsigned>(keys)); break;
      }
      items.emplace_back(key, i);
    }
    auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
    auto expected = items;
    std::stable_sort(expected.begin(), expected.end(), by_key);
    ex::detail::merge_sorted_runs(items, by_key);
    CHECK(items == expected);
  }
}

TEST_CASE("nary: exact_quotient by an integer is the general monomial division") {
  ex::Context ctx;
  RandomExprs r(ctx, 41);
  int exact = 0;
  for (int round = 0; round < 3000; ++round) {
    const ex::Expr e = r.canonical(3) * r.uniform(-12, 12);
    static constexpr std::int64_t divisors[] = {1, -1, 2, -2, 3, 4, 6, -12, INT64_MIN};
    const ex::Expr d = ctx.integer(divisors[r.uniform(0, 8)]);
    INFO("e = ", ex::print_python(e), ", d = ", ex::print_python(d));
    const auto fast = attempt([&] { return ex::exact_quotient(e, d); });
    const auto general = attempt([&]() -> std::optional<ex::Expr> {
      if (e == d) return ctx.integer(1);
      if (!e.is(ex::Kind::add)) return ex::detail::monomial_quotient(e, d);
      std::vector<ex::Expr> q;
      for (ex::Expr t : e.operands()) {
        auto qt = ex::detail::monomial_quotient(t, d);
        if (!qt) return std::nullopt;
        q.push_back(*qt);
      }
      return ex::add(q);
    });
    REQUIRE(fast.has_value() == general.has_value());
    if (!fast) continue;
    REQUIRE(fast->has_value() == general->has_value());
    if (*fast) {
      CHECK(**fast == **general);
      ++exact;
    }
  }
  CHECK(exact > 1000);
}

/// The ranges-only rule for long argument lists, as the pairwise loop read it.
std::vector<ex::Expr> dominated_by_pairs(const std::vector<ex::Expr>& args, bool is_min) {
  std::vector<bool> dropped(args.size(), false);
  for (std::size_t i = 0; i < args.size(); ++i) {
    for (std::size_t j = 0; j < args.size() && !dropped[i]; ++j) {
      if (i == j || dropped[j]) continue;
      const ex::Interval ri = ex::bounds(args[i]), rj = ex::bounds(args[j]);
      dropped[i] = is_min ? (!rj.hi_unbounded && ri.known_ge(rj.hi)) : (!rj.lo_unbounded && ri.known_le(rj.lo));
    }
  }
  std::vector<ex::Expr> kept;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!dropped[i]) kept.push_back(args[i]);
  return kept;
}

TEST_CASE("nary: Min and Max of long lists drop what the pairwise rule dropped") {
  ex::Context ctx;
  RandomExprs r(ctx, 7);
  const ex::Expr s0 = ctx.symbol("s0"), u = ctx.symbol("u", ex::Assumption::integer);
  for (int round = 0; round < 300; ++round) {
    std::vector<ex::Expr> args;
    const auto n = static_cast<std::size_t>(r.uniform(17, 60));
    while (args.size() < n) {
      switch (r.uniform(0, 5)) {
        case 0: args.push_back(ctx.integer(r.uniform(-5, 5))); break;        // ties of constant ranges
        case 1: args.push_back(ex::python_mod(u, r.uniform(1, 6))); break;   // [0, m - 1]
        case 2: args.push_back(ex::floor_div(s0, r.uniform(1, 9)) + r.uniform(-3, 3)); break;
        case 3: args.push_back(u + r.uniform(-3, 3)); break;                 // unbounded both ways
        default: args.push_back(r.canonical(2)); break;
      }
    }
    std::sort(args.begin(), args.end(), ex::ExprLess{});
    args.erase(std::unique(args.begin(), args.end()), args.end());
    if (args.size() <= 16) continue;
    for (bool is_min : {true, false}) {
      INFO("round ", round, is_min ? " Min" : " Max");
      CHECK(ex::rules::drop_dominated(args, is_min) == dominated_by_pairs(args, is_min));
    }
  }
}

/// Parenthesised operands joined by random operators of one precedence.
struct Chain {
  std::string text;
  std::vector<ex::Expr> operands;
  std::vector<char> operators;  // before operands[1], operands[2], ...
};

/// Each operand is what the parser reads from its own text (a few
/// canonical forms do not survive printing and parsing unchanged, and that
/// is not what these tests are about).
Chain chain(ex::Context& ctx, RandomExprs& r, std::string_view ops) {
  Chain c;
  const auto n = r.uniform(2, 20);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string operand = "(" + ex::print_python(r.canonical(3)) + ")";
    if (i > 0) {
      c.operators.push_back(ops[static_cast<std::size_t>(r.uniform(0, static_cast<std::int64_t>(ops.size()) - 1))]);
      c.text += std::string(" ") + c.operators.back() + " ";
    }
    c.text += operand;
    c.operands.push_back(ex::parse(ctx, operand).value());
  }
  return c;
}

TEST_CASE("nary: a parsed chain of '+' and '-' is the pairwise fold, diagnostics included") {
  ex::Context ctx;
  RandomExprs r(ctx, 31);
  for (int round = 0; round < 400; ++round) {
    const Chain c = chain(ctx, r, "+-");
    INFO("text: ", c.text);
    const auto folded = attempt([&] {
      ex::Expr s = c.operands.front();
      for (std::size_t i = 1; i < c.operands.size(); ++i)
        s = c.operators[i - 1] == '+' ? s + c.operands[i] : s + (-c.operands[i]);
      return s;
    });
    const auto parsed = ex::parse(ctx, c.text);
    REQUIRE(parsed.has_value() == folded.has_value());
    if (folded) CHECK(*parsed == *folded);
  }
}

TEST_CASE("nary: a parsed chain of '*' is the pairwise product wherever that fits") {
  ex::Context ctx;
  RandomExprs r(ctx, 32);
  for (int round = 0; round < 400; ++round) {
    const Chain c = chain(ctx, r, "*");
    INFO("text: ", c.text);
    const auto folded = attempt([&] {
      ex::Expr p = c.operands.front();
      for (std::size_t i = 1; i < c.operands.size(); ++i) p = p * c.operands[i];
      return p;
    });
    const auto parsed = ex::parse(ctx, c.text);
    if (folded) {
      REQUIRE(parsed.has_value());
      CHECK(*parsed == *folded);
    }
  }
}

TEST_CASE("nary: overflow in a parsed chain is reported at the operator the pairwise fold stopped at") {
  struct Row {
    std::string_view input;
    std::size_t column;
  };
  const Row rows[] = {
      {"x + 9223372036854775807 + 1", 24},
      {"9223372036854775807*x + y + x", 26},
      {"y - 9223372036854775807*x - x - x", 30},
      {"x*9223372036854775807*2", 21},
      {"2*x*4611686018427387904*y", 3},
      // An overflow before a later syntax error is the first error in the text.
      {"9223372036854775807 + 1 + )", 20},
      {"9223372036854775807 + 1 + (y", 20},
      {"x*9223372036854775807*2*(", 21},
  };
  for (const Row& row : rows) {
    ex::Context ctx;
    INFO("input: ", row.input);
    const auto r = ex::parse(ctx, row.input);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find("integer overflow") != std::string::npos);
    REQUIRE(r.error().column.has_value());
    CHECK(*r.error().column == row.column);
  }
}

}  // namespace
