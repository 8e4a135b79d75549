// A null (default-constructed) Expr denotes no expression. Every function
// that takes one reports it instead of dereferencing it: constructors,
// operators and other functions throw expr::Error naming the null
// expression; eval, compile and solve return a diagnostic; bounds knows
// nothing; to_string prints "<null>".

#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/compile.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_cpp.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/expr/simplify.hpp>
#include <wrapir/expr/solve.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ex = wrapir::expr;

TEST_CASE("null Expr: every constructor and operator throws expr::Error that says so") {
  ex::Context ctx;
  const ex::Expr x = ctx.symbol("x");
  const ex::Expr null{};
  const std::vector<ex::Expr> with_null = {x, null};
  const std::vector<std::pair<const char*, std::function<void()>>> uses = {
      {"null + 1", [&] { (void)(null + 1); }},
      {"1 + null", [&] { (void)(1 + null); }},
      {"null - 1", [&] { (void)(null - 1); }},
      {"1 - null", [&] { (void)(1 - null); }},
      {"null * 2", [&] { (void)(null * 2); }},
      {"2 * null", [&] { (void)(2 * null); }},
      {"x + null", [&] { (void)(x + null); }},
      {"null - x", [&] { (void)(null - x); }},
      {"x * null", [&] { (void)(x * null); }},
      {"-null", [&] { (void)(-null); }},
      {"add(span)", [&] { (void)ex::add(with_null); }},
      {"mul(span)", [&] { (void)ex::mul(with_null); }},
      {"pow(null, 2)", [&] { (void)ex::pow(null, 2); }},
      {"pow(x, null)", [&] { (void)ex::pow(x, null); }},
      {"floor_div(null, 2)", [&] { (void)ex::floor_div(null, 2); }},
      {"floor_div(x, null)", [&] { (void)ex::floor_div(x, null); }},
      {"clean_div", [&] { (void)ex::clean_div(null, x); }},
      {"ceil_div(null, 2)", [&] { (void)ex::ceil_div(null, 2); }},
      {"modular_indexing", [&] { (void)ex::modular_indexing(x, null, x); }},
      {"python_mod(null, 2)", [&] { (void)ex::python_mod(null, 2); }},
      {"mod", [&] { (void)ex::mod(x, null); }},
      {"min", [&] { (void)ex::min(x, null); }},
      {"max(list)", [&] { (void)ex::max({x, x + 1, null}); }},
      {"eq", [&] { (void)ex::eq(null, x); }},
      {"gt", [&] { (void)ex::gt(x, null); }},
      {"where", [&] { (void)ex::where(null, x, x); }},
      {"align", [&] { (void)ex::align(null); }},
      {"identity", [&] { (void)ex::identity(null); }},
      {"make", [&] { (void)ex::make(ctx, ex::Kind::floor_div, with_null); }},
      {"make_raw", [&] { (void)ctx.make_raw(ex::Kind::add, with_null); }},
      {"split_term", [&] { (void)ex::split_term(null); }},
      {"exact_quotient", [&] { (void)ex::exact_quotient(x, null); }},
      {"simplify", [&] { (void)ex::simplify(null); }},
      {"substitute", [&] { (void)ex::substitute(null, x, x); }},
      {"substitute to null", [&] { (void)ex::substitute(x, x, null); }},
      {"expand", [&] { (void)ex::expand(null); }},
      {"free_symbols", [&] { (void)ex::free_symbols(null); }},
      {"depends_on", [&] { (void)ex::depends_on(null, x); }},
      {"degree_in", [&] { (void)ex::degree_in(null, x); }},
      {"print_python", [&] { (void)ex::print_python(null); }},
      {"print_cpp", [&] { (void)ex::print_cpp(null); }},
  };
  for (const auto& entry : uses) {
    const char* what = entry.first;  // a structured binding cannot be captured by INFO in clang 14
    INFO(what);
    bool threw = false;
    try {
      entry.second();
    } catch (const ex::Error& e) {
      threw = true;
      CHECK(std::string(e.what()).find("null") != std::string::npos);
    }
    CHECK(threw);
  }
}

TEST_CASE("null Expr: results that carry diagnostics carry one; the rest stay safe") {
  ex::Context ctx;
  const ex::Expr x = ctx.symbol("x");
  const ex::Expr null{};
  const auto value = ex::eval(null, ex::Bindings{});
  REQUIRE_FALSE(value.has_value());
  CHECK(value.error().message.find("null expression") != std::string::npos);
  CHECK_FALSE(ex::eval_with(null, {{"x", 1}}).has_value());
  const auto compiled = ex::compile(null);
  REQUIRE_FALSE(compiled.has_value());
  CHECK(compiled.error().message.find("null expression") != std::string::npos);
  CHECK_FALSE(ex::solve(null, x, x).has_value());

  const ex::Interval unknown = ex::bounds(null);
  CHECK(unknown.lo_unbounded);
  CHECK(unknown.hi_unbounded);
  CHECK(ex::to_string(null) == "<null>");
  std::ostringstream os;
  os << null;
  CHECK(os.str() == "<null>");
  CHECK(ex::compare(null, x) < 0);
  CHECK(ex::compare(x, null) > 0);
  CHECK(ex::compare(null, null) == 0);
  CHECK(null.hash() == 0);
  CHECK(std::hash<ex::Expr>{}(null) == 0);
  CHECK(ex::degree(null) == 0);
  CHECK(ex::content(null) == 0);
}

}  // namespace
