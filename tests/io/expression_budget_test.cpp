// Tests of include/wrapir/io/detail/expression_budget.hpp and of its use by
// both loaders: the expressions of one document share one work budget, so
// a document of many expensive expressions is refused as a whole, with a
// diagnostic that names the option, and the budget never refuses the
// programs the loaders are for.

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/detail/expression_budget.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/builder.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace {

namespace ir = wrapir::ir;

// 200 buffers of distinct symbolic sizes (s0 + k): 200 distinct expression
// strings to parse, a few lookups each.
ir::Program many_expressions() {
  ir::Program p{"many"};
  ir::Builder b{p};
  const auto s0 = b.size_symbol("s0", 8);
  for (int k = 1; k <= 200; ++k) {
    const ir::BufferId buf = b.empty({s0 + p.ctx().integer(k)}, wrapir::f32);
    b.free({buf});
  }
  return p;
}

// A sum of `terms` distinct terms: at least one lookup per term.
std::string long_sum(int terms) {
  std::string text;
  for (int i = 0; i < terms; ++i) {
    if (i) text += " + ";
    text += "s" + std::to_string(i);
  }
  return text;
}

}  // namespace

TEST_CASE("expression budget: each parse spends from one total") {
  wrapir::expr::Context ctx;
  wrapir::io::detail::ExpressionBudget budget(0, 1'000'000, "Options::limit");
  const auto first = budget.parse(ctx, "s0 + s1", {});
  REQUIRE(first.has_value());
  const std::uint64_t after_one = budget.left();
  CHECK(after_one < 1'000'000);
  REQUIRE(budget.parse(ctx, "s2 * s3", {}).has_value());
  CHECK(budget.left() < after_one);
  // A syntax error stays a syntax error.
  const auto bad = budget.parse(ctx, "s0 +", {});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("Options::limit") == std::string::npos);
}

TEST_CASE("expression budget: running out is a diagnostic, and stays so") {
  wrapir::expr::Context ctx;
  wrapir::io::detail::ExpressionBudget budget(0, 100, "Options::limit");
  const auto costly = budget.parse(ctx, long_sum(300), {});
  REQUIRE_FALSE(costly.has_value());
  CHECK(costly.error().message.find("more than 100 node lookups together (Options::limit)") != std::string::npos);
  CHECK(costly.error().column.has_value());
  CHECK(budget.left() == 0);
  const auto next = budget.parse(ctx, "s0 + 1", {});
  REQUIRE_FALSE(next.has_value());
  CHECK(next.error().message.find("Options::limit") != std::string::npos);
}

TEST_CASE("expression budget: its default grows with the document, from one expression's limit") {
  using B = wrapir::io::detail::ExpressionBudget;
  CHECK(B::default_for(0) == wrapir::expr::ParseOptions{}.max_lookups);
  CHECK(B::default_for(1000) == wrapir::expr::ParseOptions{}.max_lookups + 1000);
  CHECK(B::default_for(SIZE_MAX) >= SIZE_MAX);
}

TEST_CASE("JSON loader: the expressions of one document share the budget") {
  const ir::Program p = many_expressions();
  const std::string json = wrapir::io::to_json(p);
  REQUIRE(wrapir::io::program_from_json(json).has_value());

  // Each expression alone is far below 400 lookups; all of them are not.
  const auto refused = wrapir::io::program_from_json(json, {.max_expression_lookups = 400});
  REQUIRE_FALSE(refused.has_value());
  const std::string& message = refused.error().message;
  CHECK(message.rfind("$.program.", 0) == 0);  // still says where
  CHECK(message.find("JsonLoadOptions::max_expression_lookups") != std::string::npos);
}

TEST_CASE("text loader: the expressions of one document share the budget") {
  const ir::Program p = many_expressions();
  const std::string text = wrapir::text::to_text(p);
  REQUIRE(wrapir::text::parse_program_text(text).has_value());

  const auto refused = wrapir::text::parse_program_text(text, {.max_expression_lookups = 400});
  REQUIRE_FALSE(refused.has_value());
  const std::string& message = refused.error().message;
  CHECK(message.rfind("line ", 0) == 0);  // still says where
  CHECK(message.find("TextParseOptions::max_expression_lookups") != std::string::npos);
}
