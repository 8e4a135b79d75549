// Hostile input to expression parsing and construction: long chains, deep
// nesting, huge literals and wide Min/Max end in an expression or a clear
// diagnostic. (How long they take is measured by bench/expr_bench.cpp and
// recorded in docs/performance.md; these tests check what comes out.)

#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/simplify.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace ex = wrapir::expr;

std::string joined(std::size_t n, const std::string& op, auto&& item) {
  std::string text;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) text += op;
    text += item(i);
  }
  return text;
}

TEST_CASE("worst case: long sums and products parse into one flat node") {
  ex::Context ctx;
  const std::size_t n = 20000;
  const std::string sum = joined(n, " + ", [](std::size_t i) { return "s" + std::to_string(i); });
  const auto s = ex::parse(ctx, sum);
  REQUIRE(s.has_value());
  CHECK(s->is(ex::Kind::add));
  CHECK(s->operands().size() == n);
  CHECK(ex::parse(ctx, ex::print_python(*s)) == *s);

  const std::string product = joined(n, "*", [](std::size_t i) { return "s" + std::to_string(i); });
  const auto p = ex::parse(ctx, product);
  REQUIRE(p.has_value());
  CHECK(p->is(ex::Kind::mul));
  CHECK(p->operands().size() == n);

  // Like terms across the whole chain combine: s_i - s_i for every i is 0.
  const std::string cancelling =
      sum + " - " + joined(n, " - ", [](std::size_t i) { return "s" + std::to_string(i); }) + " + 7";
  CHECK(ex::parse(ctx, cancelling) == ctx.integer(7));

  const std::string divisions = joined(n / 4, " + ", [](std::size_t i) { return "(s" + std::to_string(i) + " // 3)"; });
  const auto d = ex::parse(ctx, divisions);
  REQUIRE(d.has_value());
  CHECK(d->operands().size() == n / 4);
}

TEST_CASE("worst case: nesting, huge literals and oversized input give diagnostics") {
  ex::Context ctx;
  const std::size_t mb = std::size_t{1} << 20;
  const auto deep = ex::parse(ctx, std::string(mb - 1, '(') + "x");
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().message.find("max_depth") != std::string::npos);
  std::string minus_chain;
  while (minus_chain.size() + 2 < mb) minus_chain += "- ";
  const auto minuses = ex::parse(ctx, minus_chain + "x");
  REQUIRE_FALSE(minuses.has_value());
  CHECK(minuses.error().message.find("max_depth") != std::string::npos);
  const auto literal = ex::parse(ctx, "x + " + std::string(mb - 8, '7'));
  REQUIRE_FALSE(literal.has_value());
  CHECK(literal.error().message.find("does not fit in int64") != std::string::npos);
  CHECK(*literal.error().column == 4);
  const auto too_long = ex::parse(ctx, std::string(mb + 1, ' '));
  REQUIRE_FALSE(too_long.has_value());
  CHECK(too_long.error().message.find("max_length") != std::string::npos);
  const auto divisions = ex::parse(ctx, "x" + joined(1000, "", [](std::size_t) { return " // 2"; }));
  REQUIRE_FALSE(divisions.has_value());
  CHECK(divisions.error().message.find("max_depth") != std::string::npos);
}

TEST_CASE("worst case: a large sum under many operators stops at max_lookups") {
  ex::Context ctx;
  const std::string sum = joined(2000, " + ", [](std::size_t i) { return "s" + std::to_string(i); });
  ex::ParseOptions options;
  options.max_lookups = 100000;
  // Each minus rebuilds all 2000 terms: 250 of them would cost a million lookups.
  const std::string negated = joined(250, "", [](std::size_t) { return "-"; }) + "(" + sum + ")";
  const auto r = ex::parse(ctx, negated, options);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("ParseOptions::max_lookups") != std::string::npos);
  CHECK(*r.error().column < 250);
  // The same text without the nesting is well within the limit.
  CHECK(ex::parse(ctx, "-(" + sum + ")", options).has_value());
}

TEST_CASE("worst case: Min and Max of many arguments keep the undominated ones") {
  ex::Context ctx;
  std::vector<ex::Expr> args;
  for (int i = 0; i < 5000; ++i) args.push_back(ctx.symbol("s" + std::to_string(i)));
  args.push_back(ctx.integer(1));  // every positive symbol is at least 1
  CHECK(ex::min(args) == ctx.integer(1));
  const ex::Expr m = ex::max(args);
  CHECK(m.is(ex::Kind::max));
  CHECK(m.operands().size() == 5000);
  const auto parsed = ex::parse(ctx, "Min(" + joined(5000, ", ", [](std::size_t i) { return "s" + std::to_string(i); }) + ", 0)");
  CHECK(parsed == ctx.integer(0));
}

TEST_CASE("worst case: simplify rebuilds a long raw sum in one n-ary step") {
  ex::Context ctx;
  std::vector<ex::Expr> terms;
  for (int i = 20000; i-- > 0;) terms.push_back(ctx.symbol("s" + std::to_string(i)));  // reverse order
  const ex::Expr raw = ctx.make_raw(ex::Kind::add, terms);
  const ex::Expr canonical = ex::simplify(raw);
  std::reverse(terms.begin(), terms.end());
  CHECK(canonical == ex::add(terms));
  CHECK(canonical.operand(0) == ctx.symbol("s0"));
}

}  // namespace
