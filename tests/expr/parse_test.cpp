// The expression parser: every construct of the grammar, the text that
// sympy, Inductor and wrapir's printers write, Inductor's replace_floor_div
// cases, the error table (column + message), and the limits that keep bad
// input from overflowing the stack.

#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/parse.hpp>

#if __has_include(<wrapir/expr/print_python.hpp>)
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/print_python.hpp>
#define WRAPIR_PARSE_TEST_HAS_EVAL 1
#endif

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace wrapir::expr;

/// A context with positive symbols x, y, z, s0..s2, s6, s10 made up front, so
/// that expected values built through ops.hpp and parsed ones share nodes.
struct Fixture {
  Context ctx;
  Expr x = ctx.symbol("x");
  Expr y = ctx.symbol("y");
  Expr z = ctx.symbol("z");
  Expr s0 = ctx.symbol("s0");
  Expr s1 = ctx.symbol("s1");
  Expr s6 = ctx.symbol("s6");
  Expr s10 = ctx.symbol("s10");
  Expr i = ctx.symbol("i", Assumption::integer);  // may be negative or zero

  Expr c(std::int64_t v) { return ctx.integer(v); }

  Expr p(std::string_view text) {
    auto r = parse(ctx, text);
    INFO("input: ", text);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().to_string()));
    return *r;
  }

  wrapir::Diagnostic error(std::string_view text, const ParseOptions& options = {}) {
    auto r = parse(ctx, text, options);
    INFO("input: ", text);
    REQUIRE_FALSE(r.ok());
    return r.error();
  }
};

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t k = 0; k < n; ++k) out += s;
  return out;
}

}  // namespace

TEST_CASE("parse: literals, symbols and booleans") {
  Fixture f;
  CHECK(f.p("0") == f.c(0));
  CHECK(f.p("42") == f.c(42));
  CHECK(f.p("9223372036854775807") == f.c(INT64_MAX));
  CHECK(f.p("-9223372036854775808") == f.c(INT64_MIN));
  CHECK(f.p("00") == f.c(0));
  // 2^63 is only an int64 when negated: as printers write INT64_MIN terms.
  CHECK(f.p("x - 9223372036854775808") == f.x + f.c(INT64_MIN));
  CHECK(f.p("x - 9223372036854775808*y*z") == f.x + f.c(INT64_MIN) * f.y * f.z);
  CHECK(f.p("-9223372036854775808*y") == f.c(INT64_MIN) * f.y);
  CHECK(f.p("-9223372036854775808 // y") == floor_div(f.c(INT64_MIN), f.y));
  CHECK(f.p("True") == f.c(1));
  CHECK(f.p("False") == f.c(0));
  CHECK(f.p("x") == f.x);
  CHECK(f.p("  s10\t") == f.s10);

  // Unknown names become symbols with ParseOptions::new_symbols.
  Expr fresh = f.p("xnumel");
  REQUIRE(fresh.is_symbol());
  CHECK(fresh.name() == "xnumel");
  CHECK(fresh.assumption() == Assumption::positive);
  ParseOptions nonneg;
  nonneg.new_symbols = Assumption::nonnegative;
  auto r = parse(f.ctx, "u0 + x", nonneg);
  REQUIRE(r.ok());
  CHECK(f.ctx.find_symbol("u0").assumption() == Assumption::nonnegative);
  // Known symbols keep the assumption they were made with.
  CHECK(f.ctx.find_symbol("x").assumption() == Assumption::positive);
  CHECK(parse(f.ctx, "i", nonneg) == f.i);
}

TEST_CASE("parse: operators, precedence and associativity follow Python") {
  Fixture f;
  Expr x = f.x, y = f.y, z = f.z;
  CHECK(f.p("x + y * z") == x + y * z);
  CHECK(f.p("(x + y) * z") == (x + y) * z);
  CHECK(f.p("x - y - z") == x - y - z);
  CHECK(f.p("x - (y - z)") == x - (y - z));
  CHECK(f.p("x // 2 * 3") == floor_div(x, 2) * 3);
  CHECK(f.p("x * 3 // 2") == floor_div(x * 3, 2));
  CHECK(f.p("x // y // z") == floor_div(floor_div(x, y), z));
  CHECK(f.p("x % 3 + 1") == python_mod(x, 3) + 1);
  CHECK(f.p("x % y % z") == python_mod(python_mod(x, y), z));
  CHECK(f.p("-x") == -x);
  CHECK(f.p("+x") == x);
  CHECK(f.p("--x") == x);
  CHECK(f.p("-+-x") == x);
  CHECK(f.p("- - - 5") == f.c(-5));
  // ** binds tighter than a unary minus on its left, and is right-associative.
  CHECK(f.p("-x**2") == -pow(x, 2));
  CHECK(f.p("(-x)**2") == pow(-x, 2));
  CHECK(f.p("2**3**2") == f.c(512));
  CHECK(f.p("(2**3)**2") == f.c(64));
  CHECK(f.p("x**y**z") == pow(x, pow(y, z)));
  CHECK(f.p("2*x**2") == 2 * pow(x, 2));
  CHECK(f.p("x**0") == f.c(1));
  CHECK(f.p("x**-0") == f.c(1));
  // Comparisons sit below arithmetic; the conditional is lowest of all.
  CHECK(f.p("x + 1 < y * 2") == lt(x + 1, y * 2));
  CHECK(f.p("x == y") == eq(x, y));
  CHECK(f.p("x != y") == ne(x, y));
  CHECK(f.p("x <= y") == le(x, y));
  CHECK(f.p("x > y") == gt(x, y));
  CHECK(f.p("x >= y") == ge(x, y));
  CHECK(f.p("(x < y) < z") == lt(lt(x, y), z));
  CHECK(f.p("x + 1 if y < 3 else z") == where(lt(y, f.c(3)), x + 1, z));
  CHECK(f.p("x if y else z if x else y") == where(y, x, where(x, z, y)));
  CHECK(f.p("(x if y else z) + 1") == where(y, x, z) + 1);
  CHECK(f.p("1 if True else x") == f.c(1));
}

TEST_CASE("parse: every function") {
  Fixture f;
  Expr x = f.x, y = f.y, z = f.z, i = f.i;
  CHECK(f.p("FloorDiv(x, y)") == floor_div(x, y));
  CHECK(f.p("CeilDiv(x, 8)") == ceil_div(x, 8));
  CHECK(f.p("CleanDiv(8*x, 4)") == clean_div(8 * x, f.c(4)));
  CHECK(f.p("CleanDiv(x, y)") == clean_div(x, y));
  CHECK(f.p("ModularIndexing(x, 2, 8)") == modular_indexing(x, f.c(2), f.c(8)));
  CHECK(f.p("ModularIndexing(i, 2, 8)") == modular_indexing(i, f.c(2), f.c(8)));
  CHECK(f.p("PythonMod(i, 5)") == python_mod(i, 5));
  CHECK(f.p("Mod(x, y)") == mod(x, y));
  CHECK(f.p("Min(x, y, z)") == min({x, y, z}));
  CHECK(f.p("Max(x, y)") == max(x, y));
  CHECK(f.p("min(x, y)") == min(x, y));
  CHECK(f.p("max(x, 1)") == x);  // Max(s0, 1) = s0 for positive s0
  CHECK(f.p("min(x)") == x);
  CHECK(f.p("max(i,)") == i);  // a trailing comma, as Python allows
  CHECK(f.p("Where(i < 0, x, y)") == where(lt(i, f.c(0)), x, y));
  CHECK(f.p("Eq(x, y)") == eq(x, y));
  CHECK(f.p("Ne(x, y)") == ne(x, y));
  CHECK(f.p("Lt(x, y)") == lt(x, y));
  CHECK(f.p("Le(x, y)") == le(x, y));
  CHECK(f.p("Gt(x, y)") == gt(x, y));
  CHECK(f.p("Ge(x, y)") == ge(x, y));
  CHECK(f.p("PowByNatural(x, 3)") == pow(x, 3));
  CHECK(f.p("PowByNatural(2, y)") == pow(f.c(2), y));
  CHECK(f.p("Identity(x + 1)") == identity(x + 1));
  CHECK(f.p("align(x)") == align(x));
  CHECK(f.p("align(x, 128)") == align(x, 128));
  CHECK(f.p("align(100)") == f.c(128));
  CHECK(f.p("floor(x)") == x);
  CHECK(f.p("ceiling(x + 1)") == x + 1);
  CHECK(f.p("FloorDiv(x, -(8))") == floor_div(x, f.c(-8)));
  CHECK(f.p("Max(1, x + y, Min(z, 4))") == max({f.c(1), x + y, min(z, f.c(4))}));
}

TEST_CASE("parse: text that sympy and Inductor print") {
  Fixture f;
  Expr s0 = f.s0, s1 = f.s1, s6 = f.s6, s10 = f.s10;
  // sympy str()
  CHECK(f.p("((s0 + 7)//8)") == ceil_div(s0, 8));
  CHECK(f.p("-((-s6)//8)") == ceil_div(s6, 8));
  CHECK(f.p("s10**2") == pow(s10, 2));
  CHECK(f.p("s0*s1") == s0 * s1);
  CHECK(f.p("-s0 + 2*s1 + 1") == -s0 + 2 * s1 + 1);
  CHECK(f.p("Mod(s0, 8)") == python_mod(s0, 8));
  CHECK(f.p("floor(s0/8)") == floor_div(s0, 8));
  CHECK(f.p("ceiling(s0/8)") == ceil_div(s0, 8));
  CHECK(f.p("floor(s0/2 + 1/2)") == floor_div(s0 + 1, 2));
  // Inductor's Python launcher grid and PythonPrinter
  CHECK(f.p("-((s0) // -(1024))") == ceil_div(s0, 1024));
  CHECK(f.p("-((-s0) // 1024)") == ceil_div(s0, 1024));
  CHECK(f.p("(s0 % 8)") == python_mod(s0, 8));
  CHECK(f.p("((s0 // 4) % 8)") == modular_indexing(s0, f.c(4), f.c(8)));
  CHECK(f.p("(0 if y_grid_div_ == 0 else -((y_grid_raw_) // -(y_grid_div_)))") ==
        where(eq(f.ctx.symbol("y_grid_div_"), f.c(0)), f.c(0),
              -floor_div(f.ctx.symbol("y_grid_raw_"), -f.ctx.symbol("y_grid_div_"))));
  // wrapir's own Python printer
  CHECK(f.p("s0 // 4") == floor_div(s0, 4));
  CHECK(f.p("min(s0, s1)") == min(s0, s1));
  CHECK(f.p("max(s0, s1, 1024)") == max({s0, s1, f.c(1024)}));
  CHECK(f.p("(s0 if s1 < 4 else 4)") == where(lt(s1, f.c(4)), s0, f.c(4)));
  CHECK(f.p("align(s0 * 4)") == align(s0 * 4));
  CHECK(f.p("s0 <= s1") == le(s0, s1));
  // CLI output with a trailing comment, and multi-line text
  CHECK(f.p("(s0 - 1) // 2  # requires s0 >= 1") == floor_div(s0 - 1, 2));
  CHECK(f.p("s0 +\n  # continued\n\ts1\r\n") == s0 + s1);
  CHECK(f.p("s0#") == s0);
}

// Inductor's TestReplaceFloorDiv (test/inductor/test_fxir_backend.py), with
// the input written as sympy prints it.
TEST_CASE("parse: floor/ceiling of fractions (Inductor's replace_floor_div cases)") {
  Fixture f;
  Expr x = f.x, y = f.y, z = f.z;
  // test_rewrite_floor_div_mul_pow
  CHECK(f.p("floor(x/y)") == floor_div(x, y));
  CHECK(f.p("floor(x*y**(-1))") == floor_div(x, y));
  // test_rewrite_floor_div_mul_rational
  CHECK(f.p("floor(x/5)") == floor_div(x, 5));
  CHECK(f.p("floor((1/5)*x)") == floor_div(x, 5));
  // test_rewrite_floor_div_nested: two FloorDivs (the canonical constructor
  // merges floor(floor(x/5)/7) into x // 35 only because 7 > 0 is literal).
  Expr nested = f.p("floor(x/floor(y/3))");
  CHECK(nested == floor_div(x, floor_div(y, 3)));
  CHECK(f.p("floor(floor(x/5)/7)") == floor_div(x, 35));
  // test_rewrite_floor_div_rational_const
  CHECK(f.p("floor(1/5)") == f.c(0));
  CHECK(f.p("ceiling(1/5)") == f.c(1));
  CHECK(f.p("floor(-1/5)") == f.c(-1));
  // test_no_distribute_mul_floordiv: one Mul around one FloorDiv
  Expr m = f.p("2*floor(x/2)");
  CHECK(m == 2 * floor_div(x, 2));
  REQUIRE(m.is(Kind::mul));
  CHECK(m.operand(1).is(Kind::floor_div));
  // test_rational_multi_pows
  Expr rp = f.p("floor((x/5)*y**2*z**3)");
  CHECK(rp == floor_div(x * pow(y, 2) * pow(z, 3), 5));
  CHECK(rp.is(Kind::floor_div));
  // test_variable_exp: a symbolic negative exponent
  CHECK(f.p("floor(2**-x)") == floor_div(f.c(1), pow(f.c(2), x)));
  CHECK(f.p("floor(2**(-x))") == floor_div(f.c(1), pow(f.c(2), x)));
  CHECK(f.p("floor(3*2**(-x - 1))") == floor_div(f.c(3), pow(f.c(2), x + 1)));
  // test_launch_grid_dynamic_padding: the shape of a padded grid
  CHECK(f.p("floor((x*floor((y + 15)/16)*16 + 1023)/1024)") ==
        floor_div(x * floor_div(y + 15, 16) * 16 + 1023, 1024));
  // test_no_rewrite_div: a fraction outside floor/ceiling is rejected
  CHECK_FALSE(parse(f.ctx, "x/y").ok());
}

TEST_CASE("parse: the algebra of fractions") {
  Fixture f;
  Expr x = f.x, y = f.y, z = f.z;
  CHECK(f.p("floor(x/2 + y/3)") == floor_div(3 * x + 2 * y, 6));
  CHECK(f.p("floor(x/4 + y/6)") == floor_div(3 * x + 2 * y, 12));
  CHECK(f.p("floor(x/y + z)") == floor_div(x + y * z, y));
  CHECK(f.p("floor(x/y - 1/y)") == floor_div(x - 1, y));
  CHECK(f.p("floor((x/y)/(z/5))") == floor_div(5 * x, y * z));
  CHECK(f.p("floor(x/(y/z))") == floor_div(x * z, y));
  CHECK(f.p("floor(-(x/3))") == floor_div(-x, 3));
  CHECK(f.p("floor(x/-3)") == floor_div(-x, 3));
  CHECK(f.p("floor((x/2)**2)") == floor_div(pow(x, 2), 4));
  CHECK(f.p("floor(x**-2)") == floor_div(f.c(1), pow(x, 2)));
  CHECK(f.p("floor((y/x)**-3)") == floor_div(pow(x, 3), pow(y, 3)));
  CHECK(f.p("ceiling(x/4 + y/6)") == ceil_div(3 * x + 2 * y, 12));
  CHECK(f.p("ceiling(x/y)") == ceil_div(x, y));
  // Divisions that are exact are integers anywhere (as in sympy).
  CHECK(f.p("(2*x)/2") == x);
  CHECK(f.p("x*y/y + 1") == x + 1);
  CHECK(f.p("x/2*2") == x);
  CHECK(f.p("4**-1*8") == f.c(2));
  CHECK(f.p("0/x") == f.c(0));
  CHECK(f.p("(x/3 + 2*x/3) < y") == lt(x, y));
  CHECK(f.p("floor(x/1)") == x);
  // 2**(x - 1) is a natural power, not a fraction: its exponent has a
  // positive term.
  CHECK(f.p("2**(x - 1)") == pow(f.c(2), x - 1));
}

#ifdef WRAPIR_PARSE_TEST_HAS_EVAL
TEST_CASE("parse: floor of a fraction evaluates like Python's floor of the exact quotient") {
  Fixture f;
  struct Case {
    const char* text;
    std::int64_t (*reference)(std::int64_t, std::int64_t);
  };
  const Case cases[] = {
      {"floor(x/y)", [](std::int64_t x, std::int64_t y) { return wrapir::floor_div(x, y); }},
      {"ceiling(x/y)", [](std::int64_t x, std::int64_t y) { return wrapir::ceil_div(x, y); }},
      {"floor(x/2 + y/3)", [](std::int64_t x, std::int64_t y) { return wrapir::floor_div(3 * x + 2 * y, 6); }},
      {"floor(-x/3 + y)", [](std::int64_t x, std::int64_t y) { return wrapir::floor_div(-x + 3 * y, 3); }},
      {"ceiling(x/4 - y/6)", [](std::int64_t x, std::int64_t y) { return wrapir::ceil_div(3 * x - 2 * y, 12); }},
      {"-((-x)//8) + y % 3", [](std::int64_t x, std::int64_t y) { return wrapir::ceil_div(x, 8) + y % 3; }},
  };
  for (const Case& c : cases) {
    Expr e = f.p(c.text);
    for (std::int64_t xv = 1; xv <= 20; ++xv)
      for (std::int64_t yv = 1; yv <= 7; ++yv) {
        Bindings b;
        b.set(f.x, xv).set(f.y, yv);
        auto v = eval(e, b);
        INFO(c.text, " at x=", xv, " y=", yv);
        REQUIRE(v.ok());
        CHECK(*v == c.reference(xv, yv));
      }
  }
}

TEST_CASE("parse: parse(print_python(e)) == e for the forms above") {
  Fixture f;
  const char* inputs[] = {"((s0 + 7)//8)",
                          "-((-s6)//8)",
                          "s10**2 + 3*s0*s1 - 1",
                          "(s0 % 8) + ((s0 // 4) % 8)",
                          "PythonMod(i, 5)",
                          "min(s0, s1) + max(s0, 4)",
                          "(s0 if s1 < 4 else 4)",
                          "align(s0 * 4) + align(s1, 128)",
                          "Eq(s0, s1) + Ne(s0, 3)",
                          "FloorDiv(i, 3) + FloorDiv(s0, -3)",
                          "-9223372036854775808 + s0",
                          "s0 - 9223372036854775808*s1",
                          "floor(2**-x)",
                          "2**x"};
  for (const char* text : inputs) {
    Expr e = f.p(text);
    const std::string printed = print_python(e);
    INFO(text, " printed as ", printed);
    CHECK(f.p(printed) == e);
  }
}
#endif

// One row per error: the input, the 0-based column the diagnostic points
// at (Diagnostic::to_string prints it 1-based), and a part of the message.
TEST_CASE("parse: errors point at the column and say what was expected") {
  struct Row {
    std::string input;
    std::size_t column;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"", 0, "expected an expression, found end of input"},
      {"   ", 3, "expected an expression, found end of input"},
      {"*", 0, "expected an expression, found '*'"},
      {"x +", 3, "expected an expression, found end of input"},
      {"()", 1, "expected an expression, found ')'"},
      {"(x + 1", 6, "expected ')' to close '(' opened at column 1, found end of input"},
      {"((x) + (1)", 10, "expected ')' to close '(' opened at column 1, found end of input"},
      {"x + 1)", 5, "unmatched ')'"},
      {"x y", 2, "expected an operator or end of input, found 'y'"},
      {"3 4", 2, "expected an operator or end of input, found integer 4"},
      {"foo(x)", 0, "unknown function 'foo'; known: FloorDiv, CeilDiv, CleanDiv, ModularIndexing"},
      {"x + math.floor(x)", 8, "unexpected '.'"},
      {"FloorDiv(a, b, c)", 0, "FloorDiv takes 2 arguments, got 3"},
      {"1 + ModularIndexing(x, 2)", 4, "ModularIndexing takes 3 arguments, got 2"},
      {"min()", 0, "min takes at least 1 argument, got 0"},
      {"Identity()", 0, "Identity takes 1 argument, got 0"},
      {"align(x, 64, 1)", 0, "align takes 1 or 2 arguments, got 3"},
      {"align(x, y)", 0, "the alignment must be an integer constant"},
      {"align(x, 48)", 0, "is not a positive power of two"},
      {"FloorDiv(x, y", 13, "expected ')' to close the arguments of 'FloorDiv' opened at column 9, found end of input"},
      {"FloorDiv(x y)", 11, "expected ',' or ')' after an argument of 'FloorDiv', found 'y'"},
      {"FloorDiv(, x)", 9, "expected an expression, found ','"},
      {"99999999999999999999", 0, "integer literal 99999999999999999999 does not fit in int64"},
      {"x + 9223372036854775808", 4, "integer literal 9223372036854775808 does not fit in int64"},
      {"1.5", 0, "floating-point literal '1.5' is not supported"},
      {"2x", 0, "invalid integer literal '2x'"},
      {"1e3", 0, "invalid integer literal '1e3'"},
      {"007", 0, "leading zero"},
      {"x/2", 1, "true division '/' is only allowed inside floor() or ceiling(); use '//' for floor division"},
      {"1 + x/y", 5, "true division '/'"},
      {"FloorDiv(x/2, 3)", 10, "true division '/'"},
      {"floor(x)/2 < 3", 8, "true division '/'"},
      {"(x/2 if x else 1)", 2, "true division '/'"},
      {"x % (y/2)", 6, "true division '/'"},
      {"2**(x/2)", 5, "true division '/'"},
      {"2**-1", 1, "a negative exponent makes a fraction, which is only allowed inside floor() or ceiling()"},
      {"x + y**-z", 5, "a negative exponent makes a fraction"},
      {"floor(x/0)", 7, "division by zero"},
      {"floor(x/(y - y))", 7, "division by zero"},
      {"x // 0", 2, "division by zero in FloorDiv"},
      {"1 + FloorDiv(x, 0)", 4, "division by zero in FloorDiv"},
      {"x % 0", 2, "modulo by zero in PythonMod"},
      {"0**-1", 1, "division by zero: 0 raised to a negative power"},
      {"floor(0**-x)", 7, "division by zero: 0 raised to a negative power"},
      {"9223372036854775807 + 1", 20, "integer overflow"},
      {"2**64", 1, "integer overflow"},
      {"-(-9223372036854775808)", 0, "integer overflow"},
      {"-9223372036854775808**1", 1, "integer literal 9223372036854775808 does not fit in int64"},
      {"x - 9223372036854775808 // 2", 4, "integer literal 9223372036854775808 does not fit in int64"},
      {"x + 9223372036854775808*y", 4, "integer literal 9223372036854775808 does not fit in int64"},
      {"PowByNatural(x, -1)", 0, "negative exponent -1"},
      {"Mod(-1, 2)", 0, "Mod(-1, 2) is undefined"},
      {"CleanDiv(7, 2)", 0, "is not exact"},
      {"a < b < c", 6, "comparisons cannot be chained ('a < b < c'); parenthesize one of them"},
      {"a == b != c", 7, "comparisons cannot be chained ('a == b != c')"},
      {"lambda", 0, "'lambda' is a reserved word and cannot name a symbol"},
      {"x + None", 4, "'None' is a reserved word"},
      {"if", 0, "expected an expression, found keyword 'if'"},
      {"min + 1", 0, "'min' is a function; expected '(' after it"},
      {"__x", 0, "starts with '__', which is reserved"},
      {std::string(300, 'a'), 0, "is longer than 256 characters"},
      {"x if y", 6, "expected 'else' to complete the conditional started by 'if' at column 3, found end of input"},
      {"x if c else", 11, "expected an expression, found end of input"},
      {"x + $", 4, "unexpected character '$'"},
      {"x\xc3\xa9", 1, "unexpected non-ASCII byte 0xC3"},
      {std::string("x +\0 1", 6), 3, "unexpected NUL byte"},
      {"x\x07", 1, "unexpected control character 0x07"},
      {"x = 1", 2, "equality is written '=='"},
      {"x ! y", 2, "inequality is written '!='"},
      {"c ? a : b", 2, "a conditional is written 'p if c else q'"},
      {"x << 2", 2, "operator '<<' is not supported"},
      {"x & y", 2, "operator '&' is not supported"},
  };
  CHECK(rows.size() >= 25);
  for (const Row& row : rows) {
    wrapir::expr::Context ctx;
    auto r = parse(ctx, row.input);
    INFO("input: ", row.input);
    REQUIRE_FALSE(r.ok());
    const wrapir::Diagnostic& d = r.error();
    REQUIRE(d.column.has_value());
    CHECK(*d.column == row.column);
    INFO("message: ", d.message);
    CHECK(d.message.find(row.message) != std::string::npos);
    CHECK(d.message.find('\n') == std::string::npos);
  }
}

TEST_CASE("parse: Diagnostic::to_string prints the column 1-based") {
  Fixture f;
  CHECK(f.error("(x + 1").to_string() == "column 7: expected ')' to close '(' opened at column 1, found end of input");
  CHECK(f.error("x/2").to_string() ==
        "column 2: true division '/' is only allowed inside floor() or ceiling(); use '//' for floor division");
}

TEST_CASE("parse: nesting is bounded, never a stack overflow") {
  Fixture f;
  const std::string deep_message = "nests deeper than 256 levels";
  SUBCASE("100000 nested parentheses") {
    const std::string text = repeat("(", 100000) + "x" + repeat(")", 100000);
    auto d = f.error(text);
    CHECK(d.message.find(deep_message) != std::string::npos);
    CHECK(*d.column == 256);
  }
  SUBCASE("a million unary minus signs") {
    const std::string text = repeat("-", 1000000) + "x";
    auto d = f.error(text);
    CHECK(d.message.find(deep_message) != std::string::npos);
    CHECK(*d.column == 256);
  }
  SUBCASE("a long ** chain") {
    auto d = f.error("x" + repeat("**x", 100000));
    CHECK(d.message.find(deep_message) != std::string::npos);
  }
  SUBCASE("nested calls") {
    auto d = f.error(repeat("FloorDiv(", 10000) + "x" + repeat(", 2)", 10000));
    CHECK(d.message.find(deep_message) != std::string::npos);
  }
  SUBCASE("a chain of conditionals") {
    auto d = f.error(repeat("x if y else ", 10000) + "z");
    CHECK(d.message.find(deep_message) != std::string::npos);
  }
  SUBCASE("a left-associative chain of % builds a deep tree") {
    auto d = f.error("x" + repeat(" % y", 1000));
    CHECK(d.message.find(deep_message) != std::string::npos);
  }
  SUBCASE("exactly max_depth levels parse; one more does not") {
    CHECK(parse(f.ctx, repeat("(", 256) + "x" + repeat(")", 256)) == f.x);
    auto d = f.error(repeat("(", 257) + "x" + repeat(")", 257));
    CHECK(*d.column == 256);
    ParseOptions shallow;
    shallow.max_depth = 3;
    CHECK(parse(f.ctx, "((x))", shallow) == f.x);
    CHECK(f.error("-(-(-(x)))", shallow).message.find("nests deeper than 3 levels") != std::string::npos);
  }
  SUBCASE("long flat sums and products are not deep") {
    std::string sum = "s0";
    std::string product = "s0";
    for (int k = 1; k < 2000; ++k) {
      sum += " + s" + std::to_string(k % 50);
      product += " * 1";
    }
    CHECK(parse(f.ctx, sum).ok());
    CHECK(parse(f.ctx, product) == f.s0);
  }
  SUBCASE("a sum over many distinct denominators stops at the fraction size limit") {
    std::string text = "floor(1";
    for (int k = 0; k < 300; ++k) text += " + a" + std::to_string(k) + "/b" + std::to_string(k);
    text += ")";
    auto d = f.error(text);
    CHECK(d.message.find("fraction too large to bring over a common denominator") != std::string::npos);
    // A handful of denominators is fine.
    CHECK(parse(f.ctx, "floor(a0/b0 + a1/b1 + a2/b2 + a3/b3)").ok());
  }
  SUBCASE("max_length") {
    ParseOptions small;
    small.max_length = 8;
    CHECK(parse(f.ctx, "x + y + 1", small).error().message.find("longer than the limit of 8") != std::string::npos);
    CHECK(parse(f.ctx, "x + y + ", small).error().message.find("expected an expression") != std::string::npos);
  }
}

TEST_CASE("parse: random token soup never throws and errors always carry a column") {
  // Tokens and near-tokens; every string made from them must parse or give
  // a diagnostic, never throw or crash.
  const char* pieces[] = {"x",    "y",  "s0", "0",     "1",   "7",        "-",    "+",       "*",  "**",
                          "/",    "//", "%",  "(",     ")",   ",",        "<",    "==",      "if", "else",
                          "floor", "ceiling", "FloorDiv", "min", "ModularIndexing", "align", "True", " ", "#", "$",
                          "9223372036854775807", "Mod", "Where", "-1", "2**-"};
  std::mt19937_64 rng(20240601);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(pieces) - 1), len(0, 12);
  int parsed = 0;
  for (int round = 0; round < 20000; ++round) {
    wrapir::expr::Context ctx;
    std::string text;
    for (std::size_t n = len(rng); n > 0; --n) text += pieces[pick(rng)];
    wrapir::Result<Expr> r = wrapir::Diagnostic{"unset"};
    INFO("input: ", text);
    REQUIRE_NOTHROW(r = parse(ctx, text));
    if (r.ok()) ++parsed;
    else CHECK(r.error().column.has_value());
  }
  CHECK(parsed > 100);
}

// Inputs the fuzzer found: each once broke parse(print_python(e)) == e or
// tripped UBSan. (They are also seeds in tests/fuzz/corpus/parse_fuzz/.)
TEST_CASE("parse: fuzzer regressions round-trip through the printer") {
  const char* inputs[] = {
      "ceiling(s444-44/sh775/168087/sh)",                                   // ceiling by a product
      "xT%ruei%-9223372036854775808-Br0-Bt-TriT-Br<=BBrT-BBrwttlxorg",      // INT64_MIN bounds
      "FF % 0 **srs77akv*13333333332*(s*13333332*3332+False+ 373) // -150",  // distribution overflow
      "floor(r-x**-i*33333333310/8-2/747516808-T--b-b/u)",                   // a primitive sum's sign
      "floor(r-x**-i*332*333333166550/8*33-20/8*33-2/7/83-2/7/8-2/7/u)",     // content left after dividing
      "floor(x-x**-i*3333166508/5-2/7/8-2/747516808-T--b-b/u)",              // content left after dividing
  };
  int parsed = 0;
  for (const char* text : inputs) {
    // As the fuzz target does: positive symbols, then unconstrained ones.
    for (auto assumption : {wrapir::expr::Assumption::positive, wrapir::expr::Assumption::integer}) {
      wrapir::expr::Context ctx;
      const wrapir::expr::ParseOptions options{assumption};
      auto first = wrapir::expr::parse(ctx, text, options);
      if (!first) continue;  // a diagnostic is a fine answer; only a parsed result must round-trip
      ++parsed;
      const std::string printed = wrapir::expr::print_python(*first);
      auto again = wrapir::expr::parse(ctx, printed, options);
      REQUIRE_MESSAGE(again.ok(), printed, ": ", again.ok() ? "" : again.error().to_string());
      CHECK_MESSAGE(*again == *first, text, " printed as ", printed);
    }
  }
  CHECK(parsed >= 6);
}
