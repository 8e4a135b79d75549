// Tests of include/wrapir/expr/eval.hpp: the value of every kind, Python
// signs for negative operands, checked overflow judged per node, and the
// diagnostics for bindings that make an expression wrong. Trees are built
// raw so that evaluation, not the simplifier, is what is tested.

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace wrapir::expr;
using wrapir::Result;

struct Fixture {
  Context ctx;
  Expr s0 = ctx.symbol("s0");                           // positive
  Expr s1 = ctx.symbol("s1");                           // positive
  Expr n0 = ctx.symbol("n0", Assumption::nonnegative);  // >= 0
  Expr a = ctx.symbol("a", Assumption::integer);        // any sign
  Expr b = ctx.symbol("b", Assumption::integer);
  Expr c = ctx.symbol("c", Assumption::integer);

  Expr I(std::int64_t v) { return ctx.integer(v); }
  Expr R(Kind k, std::vector<Expr> ops, std::int64_t value = 0) { return ctx.make_raw(k, ops, value); }

  /// `kind(a, b)` evaluated with a and b bound.
  Result<std::int64_t> binary(Kind k, std::int64_t x, std::int64_t y) {
    return eval(R(k, {a, b}), Bindings{}.set(a, x).set(b, y));
  }
};

std::string message(const Result<std::int64_t>& r) {
  REQUIRE_MESSAGE(!r.ok(), "expected an error, got ", r.ok() ? r.value() : 0);
  return r.error().message;
}

std::string quoted(Expr e) { return "`" + print_python(e) + "`"; }

}  // namespace

TEST_CASE_FIXTURE(Fixture, "eval: Bindings") {
  Bindings bindings;
  CHECK_FALSE(bindings.get(s0).has_value());
  bindings.set(s0, 3).set(s1, 4);
  CHECK(bindings.get(s0) == 3);
  CHECK(bindings.get(s1) == 4);
  bindings.set(s0, 7);  // replaces
  CHECK(bindings.get(s0) == 7);
  CHECK(bindings.entries().size() == 2);
  CHECK(satisfies(Assumption::positive, 1));
  CHECK_FALSE(satisfies(Assumption::positive, 0));
  CHECK(satisfies(Assumption::nonnegative, 0));
  CHECK_FALSE(satisfies(Assumption::nonnegative, -1));
  CHECK(satisfies(Assumption::integer, INT64_MIN));
}

// Past Bindings::indexed_from entries lookups go through an index (issue
// 12: a scan per lookup made many bindings quadratic); the answers, the
// order of entries() and copies must be those of the flat list.
TEST_CASE_FIXTURE(Fixture, "eval: Bindings with many symbols, before and after the index") {
  constexpr std::size_t count = 4 * Bindings::indexed_from + 3;
  std::vector<Expr> symbols;
  for (std::size_t i = 0; i < count; ++i) symbols.push_back(ctx.symbol("t" + std::to_string(i)));
  Bindings bindings;
  for (std::size_t i = 0; i < count; ++i) {
    bindings.set(symbols[i], static_cast<std::int64_t>(i) + 1);
    // Every symbol bound so far is found, the next one is not.
    for (std::size_t j = 0; j <= i; ++j) REQUIRE(bindings.get(symbols[j]) == static_cast<std::int64_t>(j) + 1);
    if (i + 1 < count) REQUIRE_FALSE(bindings.get(symbols[i + 1]).has_value());
  }
  CHECK_FALSE(bindings.get(s0).has_value());
  bindings.set(symbols[0], 100).set(symbols[count - 1], 200);  // replaced in place, in and past the first entries
  REQUIRE(bindings.entries().size() == count);
  for (std::size_t i = 0; i < count; ++i) CHECK(bindings.entries()[i].first == symbols[i]);
  CHECK(bindings.entries().front().second == 100);
  CHECK(bindings.entries().back().second == 200);

  Bindings copy = bindings;
  copy.set(symbols[1], -1).set(s0, 9);
  CHECK(copy.get(symbols[1]) == -1);
  CHECK(copy.get(s0) == 9);
  CHECK(bindings.get(symbols[1]) == 2);
  CHECK_FALSE(bindings.get(s0).has_value());

  Expr sum = symbols[0];
  for (std::size_t i = 1; i < count; ++i) sum = R(Kind::add, {sum, symbols[i]});
  std::int64_t expected = 100 + 200;
  for (std::size_t i = 1; i + 1 < count; ++i) expected += static_cast<std::int64_t>(i) + 1;
  CHECK(eval(sum, bindings) == expected);
}

TEST_CASE_FIXTURE(Fixture, "eval: leaves") {
  CHECK(eval(I(42), Bindings{}) == 42);
  CHECK(eval(I(INT64_MIN), Bindings{}) == INT64_MIN);
  CHECK(eval(s0, Bindings{}.set(s0, 5)) == 5);
  CHECK(eval(a, Bindings{}.set(a, -5)) == -5);
  CHECK(eval(n0, Bindings{}.set(n0, 0)) == 0);
}

TEST_CASE_FIXTURE(Fixture, "eval: sums and products") {
  const Bindings bind = Bindings{}.set(a, -3).set(b, 4).set(c, 10);
  CHECK(eval(R(Kind::add, {a, b, c}), bind) == 11);
  CHECK(eval(R(Kind::add, {a, I(-7)}), bind) == -10);
  CHECK(eval(R(Kind::mul, {a, b, c}), bind) == -120);
  CHECK(eval(R(Kind::mul, {I(-1), a}), bind) == 3);
  CHECK(eval(R(Kind::mul, {a, I(0)}), bind) == 0);
}

TEST_CASE_FIXTURE(Fixture, "eval: natural powers") {
  CHECK(binary(Kind::pow, 2, 10) == 1024);
  CHECK(binary(Kind::pow, -3, 3) == -27);
  CHECK(binary(Kind::pow, -3, 4) == 81);
  CHECK(binary(Kind::pow, 0, 0) == 1);
  CHECK(binary(Kind::pow, 7, 0) == 1);
  CHECK(binary(Kind::pow, -1, INT64_MAX) == -1);
  CHECK(binary(Kind::pow, 2, 62) == std::int64_t{1} << 62);
  CHECK(binary(Kind::pow, -2, 63) == INT64_MIN);
  CHECK(binary(Kind::pow, 3, 39) == 4052555153018976267);
  const Expr p = R(Kind::pow, {a, b});
  CHECK(message(eval(p, Bindings{}.set(a, 2).set(b, -1))) == "negative exponent -1 in " + quoted(p));
  CHECK(message(eval(p, Bindings{}.set(a, 2).set(b, 63))) ==
        "integer overflow: the value of " + quoted(p) + " does not fit in int64");
  CHECK(message(eval(p, Bindings{}.set(a, 3).set(b, 40))) ==
        "integer overflow: the value of " + quoted(p) + " does not fit in int64");
}

TEST_CASE_FIXTURE(Fixture, "eval: floor division rounds toward negative infinity") {
  struct Case {
    std::int64_t x, y, q;
  };
  for (const Case& t : {Case{7, 2, 3}, Case{-7, 2, -4}, Case{7, -2, -4}, Case{-7, -2, 3}, Case{6, 3, 2}, Case{-6, 3, -2},
                        Case{0, -5, 0}, Case{-1, 1000, -1}, Case{1, -1000, -1}, Case{INT64_MIN, 1, INT64_MIN},
                        Case{INT64_MIN, 2, INT64_MIN / 2}, Case{INT64_MAX, -1, -INT64_MAX}, Case{INT64_MIN, INT64_MIN, 1}}) {
    CAPTURE(t.x);
    CAPTURE(t.y);
    CHECK(binary(Kind::floor_div, t.x, t.y) == t.q);
  }
  const Expr fd = R(Kind::floor_div, {a, b});
  CHECK(message(eval(fd, Bindings{}.set(a, 5).set(b, 0))) == "division by zero in " + quoted(fd));
  CHECK(message(eval(fd, Bindings{}.set(a, INT64_MIN).set(b, -1))) ==
        "integer overflow: the value of " + quoted(fd) + " does not fit in int64");
}

TEST_CASE_FIXTURE(Fixture, "eval: CleanDiv is exact or an error") {
  CHECK(binary(Kind::clean_div, 12, 4) == 3);
  CHECK(binary(Kind::clean_div, -12, 4) == -3);
  CHECK(binary(Kind::clean_div, 12, -4) == -3);
  const Expr cd = R(Kind::clean_div, {a, b});
  CHECK(message(eval(cd, Bindings{}.set(a, 7).set(b, 2))) == "CleanDiv is not exact in " + quoted(cd) + ": 2 does not divide 7");
  CHECK(message(eval(cd, Bindings{}.set(a, -7).set(b, 2))) == "CleanDiv is not exact in " + quoted(cd) + ": 2 does not divide -7");
  CHECK(message(eval(cd, Bindings{}.set(a, 7).set(b, 0))) == "division by zero in " + quoted(cd));
}

TEST_CASE_FIXTURE(Fixture, "eval: PythonMod takes the sign of the divisor") {
  struct Case {
    std::int64_t x, y, r;
  };
  for (const Case& t : {Case{7, 3, 1}, Case{-7, 3, 2}, Case{7, -3, -2}, Case{-7, -3, -1}, Case{6, 3, 0}, Case{-6, 3, 0},
                        Case{0, -5, 0}, Case{INT64_MIN, -1, 0}, Case{INT64_MIN, 3, 1}, Case{INT64_MAX, -2, -1},
                        Case{-1, INT64_MAX, INT64_MAX - 1}}) {
    CAPTURE(t.x);
    CAPTURE(t.y);
    CHECK(binary(Kind::python_mod, t.x, t.y) == t.r);
  }
  const Expr pm = R(Kind::python_mod, {a, b});
  CHECK(message(eval(pm, Bindings{}.set(a, 5).set(b, 0))) == "modulo by zero in " + quoted(pm));
}

TEST_CASE_FIXTURE(Fixture, "eval: Mod is defined for a non-negative dividend and a positive modulus") {
  CHECK(binary(Kind::mod, 7, 3) == 1);
  CHECK(binary(Kind::mod, 0, 3) == 0);
  const Expr m = R(Kind::mod, {a, b});
  CHECK(message(eval(m, Bindings{}.set(a, -7).set(b, 3))) ==
        "Mod is defined only for a non-negative dividend and a positive modulus, got -7 % 3 in " + quoted(m));
  CHECK(message(eval(m, Bindings{}.set(a, 7).set(b, -3))) ==
        "Mod is defined only for a non-negative dividend and a positive modulus, got 7 % -3 in " + quoted(m));
  CHECK(message(eval(m, Bindings{}.set(a, 7).set(b, 0))) == "modulo by zero in " + quoted(m));
}

TEST_CASE_FIXTURE(Fixture, "eval: ModularIndexing is (x // d) % m with Python signs") {
  const Expr mi = R(Kind::modular_indexing, {a, b, c});
  auto at = [&](std::int64_t x, std::int64_t d, std::int64_t m) { return eval(mi, Bindings{}.set(a, x).set(b, d).set(c, m)); };
  CHECK(at(37, 4, 8) == 1);
  CHECK(at(-7, 2, 3) == 2);   // (-4) % 3
  CHECK(at(7, -2, 3) == 2);   // (-4) % 3
  CHECK(at(7, 2, -2) == -1);  // 3 % -2
  CHECK(at(100, 1, 7) == 2);
  CHECK(message(at(1, 0, 3)) == "division by zero in " + quoted(mi));
  CHECK(message(at(1, 2, 0)) == "modulo by zero in " + quoted(mi));
  CHECK(message(at(INT64_MIN, -1, 3)) == "integer overflow: the value of " + quoted(mi) + " does not fit in int64");
}

TEST_CASE_FIXTURE(Fixture, "eval: Min and Max") {
  const Bindings bind = Bindings{}.set(a, -3).set(b, 4).set(c, 10);
  CHECK(eval(R(Kind::min, {a, b, c}), bind) == -3);
  CHECK(eval(R(Kind::max, {a, b, c}), bind) == 10);
  CHECK(eval(R(Kind::min, {c, b}), bind) == 4);
  CHECK(eval(R(Kind::max, {I(INT64_MIN), a}), bind) == -3);
  CHECK(eval(R(Kind::min, {I(INT64_MAX), I(INT64_MIN)}), bind) == INT64_MIN);
}

TEST_CASE_FIXTURE(Fixture, "eval: comparisons give 1 or 0") {
  struct Case {
    Kind kind;
    std::int64_t x, y, r;
  };
  for (const Case& t : {Case{Kind::eq, 3, 3, 1}, Case{Kind::eq, 3, -3, 0}, Case{Kind::ne, 3, -3, 1}, Case{Kind::ne, 3, 3, 0},
                        Case{Kind::lt, -3, 3, 1}, Case{Kind::lt, 3, 3, 0}, Case{Kind::le, 3, 3, 1}, Case{Kind::le, 4, 3, 0},
                        Case{Kind::gt, 4, 3, 1}, Case{Kind::gt, 3, 3, 0}, Case{Kind::ge, 3, 3, 1}, Case{Kind::ge, -4, 3, 0},
                        Case{Kind::lt, INT64_MIN, INT64_MAX, 1}, Case{Kind::gt, INT64_MIN, INT64_MAX, 0}}) {
    CAPTURE(kind_name(t.kind));
    CAPTURE(t.x);
    CAPTURE(t.y);
    CHECK(binary(t.kind, t.x, t.y) == t.r);
  }
}

TEST_CASE_FIXTURE(Fixture, "eval: align rounds up to the alignment") {
  auto aligned = [&](std::int64_t x, std::int64_t alignment) {
    return eval(R(Kind::align, {a}, alignment), Bindings{}.set(a, x));
  };
  CHECK(aligned(65, 64) == 128);
  CHECK(aligned(64, 64) == 64);
  CHECK(aligned(0, 64) == 0);
  CHECK(aligned(1, 64) == 64);
  CHECK(aligned(-65, 64) == -64);
  CHECK(aligned(-64, 64) == -64);
  CHECK(aligned(5, 1) == 5);
  CHECK(aligned(INT64_MIN, 64) == INT64_MIN);
  CHECK(aligned(INT64_MAX - 63, 64) == INT64_MAX - 63);
  CHECK(message(aligned(INT64_MAX - 62, 64)).find("integer overflow") == 0);  // 2^63 does not fit
  const Expr al = R(Kind::align, {a}, 64);
  CHECK(message(eval(al, Bindings{}.set(a, INT64_MAX - 1))) ==
        "integer overflow: the value of " + quoted(al) + " does not fit in int64");
}

TEST_CASE_FIXTURE(Fixture, "eval: Where evaluates only the chosen branch") {
  // The branch not taken divides by a symbol bound to 0.
  const Expr w = R(Kind::where, {a, R(Kind::floor_div, {I(100), a}), I(-1)});
  CHECK(eval(w, Bindings{}.set(a, 0)) == -1);
  CHECK(eval(w, Bindings{}.set(a, 5)) == 20);
  CHECK(eval(w, Bindings{}.set(a, -5)) == -20);
  const Expr w2 = R(Kind::where, {R(Kind::eq, {a, I(0)}), I(7), R(Kind::python_mod, {I(100), a})});
  CHECK(eval(w2, Bindings{}.set(a, 0)) == 7);
  CHECK(eval(w2, Bindings{}.set(a, 30)) == 10);
  // An unbound symbol in the branch not taken is fine too.
  CHECK(eval(R(Kind::where, {I(1), s0, s1}), Bindings{}.set(s0, 3)) == 3);
  // The chosen branch's errors are reported.
  const Expr bad = R(Kind::floor_div, {I(100), b});
  CHECK(message(eval(R(Kind::where, {a, bad, I(0)}), Bindings{}.set(a, 1).set(b, 0))) == "division by zero in " + quoted(bad));
}

TEST_CASE_FIXTURE(Fixture, "eval: Identity is its operand") {
  CHECK(eval(R(Kind::identity, {R(Kind::add, {a, I(1)})}), Bindings{}.set(a, -5)) == -4);
}

TEST_CASE_FIXTURE(Fixture, "eval: overflow is judged per node") {
  SUBCASE("a sum whose partial sums overflow but whose total fits") {
    const Expr sum = R(Kind::add, {I(INT64_MAX), I(1), I(-1)});
    CHECK(eval(sum, Bindings{}) == INT64_MAX);
    CHECK(eval(R(Kind::add, {I(INT64_MIN), I(-1), I(1), I(INT64_MAX), I(1)}), Bindings{}) == 0);
    CHECK(eval(R(Kind::add, {a, b, c}), Bindings{}.set(a, INT64_MAX).set(b, INT64_MAX).set(c, INT64_MIN)) == INT64_MAX - 1);
    const Expr over = R(Kind::add, {a, b});
    CHECK(message(eval(over, Bindings{}.set(a, INT64_MAX).set(b, 1))) ==
          "integer overflow: the value of " + quoted(over) + " does not fit in int64");
  }
  SUBCASE("a product that just fits") {
    CHECK(eval(R(Kind::mul, {I(std::int64_t{1} << 62), I(-2)}), Bindings{}) == INT64_MIN);
    CHECK(eval(R(Kind::mul, {I(INT64_MIN), I(1)}), Bindings{}) == INT64_MIN);
    const Expr neg = R(Kind::mul, {I(-1), I(INT64_MIN)});
    CHECK(message(eval(neg, Bindings{})) == "integer overflow: the value of " + quoted(neg) + " does not fit in int64");
  }
  SUBCASE("a product with a zero factor is zero") {
    CHECK(eval(R(Kind::mul, {I(0), I(INT64_MAX), I(INT64_MAX)}), Bindings{}) == 0);
    CHECK(eval(R(Kind::mul, {I(INT64_MAX), I(INT64_MAX), a}), Bindings{}.set(a, 0)) == 0);
  }
  SUBCASE("the message names the overflowing sub-expression") {
    const Expr product = s0 * s1;
    const Expr whole = floor_div(product, I(2)) + 1;
    const auto r = eval(whole, Bindings{}.set(s0, std::int64_t{1} << 32).set(s1, std::int64_t{1} << 31));
    CHECK(message(r) == "integer overflow: the value of `s0*s1` does not fit in int64");
    CHECK(message(r).find(print_python(whole)) == std::string::npos);
    // Just below the limit it evaluates.
    CHECK(eval(whole, Bindings{}.set(s0, std::int64_t{1} << 31).set(s1, std::int64_t{1} << 31)) == (std::int64_t{1} << 61) + 1);
  }
  SUBCASE("long sub-expressions are shortened in messages") {
    Expr sum = s0;
    for (int i = 1; i < 60; ++i) sum = sum + ctx.symbol("t" + std::to_string(i));
    const Expr big = R(Kind::mul, {sum, I(INT64_MAX)});
    Bindings bind;
    bind.set(s0, 2);
    for (int i = 1; i < 60; ++i) bind.set(ctx.symbol("t" + std::to_string(i)), 1);
    const std::string m = message(eval(big, bind));
    CHECK(m.rfind("integer overflow: the value of `", 0) == 0);
    CHECK(m.find("...` does not fit in int64") != std::string::npos);
    CHECK(m.size() < 200);
  }
  SUBCASE("huge sub-expressions are named by kind and size") {
    std::vector<Expr> terms;
    Bindings bind;
    for (int i = 0; i < 300; ++i) {
      terms.push_back(ctx.symbol("t" + std::to_string(i)));
      bind.set(terms.back(), 1);
    }
    const Expr big = R(Kind::mul, {add(terms), I(INT64_MAX)});
    REQUIRE(big.tree_size() == 303);
    CHECK(message(eval(big, bind)) == "integer overflow: the value of a Mul of 303 nodes does not fit in int64");
  }
}

TEST_CASE_FIXTURE(Fixture, "eval: symbols must be bound and respect their assumptions") {
  CHECK(message(eval(s0 + s1, Bindings{}.set(s0, 1))) == "unbound symbol 's1'");
  CHECK(message(eval(s0 + 1, Bindings{}.set(s0, 0))) == "symbol 's0' = 0 breaks its assumption (positive)");
  CHECK(message(eval(s0 + 1, Bindings{}.set(s0, -4))) == "symbol 's0' = -4 breaks its assumption (positive)");
  CHECK(message(eval(n0 + 1, Bindings{}.set(n0, -1))) == "symbol 'n0' = -1 breaks its assumption (nonnegative)");
  CHECK(eval(n0 + 1, Bindings{}.set(n0, 0)) == 1);
  CHECK(eval(a + 1, Bindings{}.set(a, INT64_MIN)) == INT64_MIN + 1);
  // A binding from another context does not bind this context's symbol.
  Context other;
  CHECK(message(eval(s0, Bindings{}.set(other.symbol("s0"), 3))) == "unbound symbol 's0'");
}

TEST_CASE_FIXTURE(Fixture, "eval: null and deep expressions") {
  CHECK(message(eval(Expr{}, Bindings{})) == "cannot evaluate a null expression");
  CHECK(message(eval_with(Expr{}, {})) == "cannot evaluate a null expression");
  Expr fine = s0;
  for (int i = 0; i < 500; ++i) fine = R(Kind::identity, {fine});
  CHECK(eval(fine, Bindings{}.set(s0, 9)) == 9);
  // Deeper trees are refused before the stack is at risk (a frame is about
  // 4 KiB under AddressSanitizer).
  Expr deep = s0;
  for (int i = 0; i < 3000; ++i) deep = R(Kind::identity, {deep});
  CHECK(message(eval(deep, Bindings{}.set(s0, 1))) == "expression is nested deeper than 512 levels");
}

TEST_CASE_FIXTURE(Fixture, "eval_with binds symbols by name") {
  const Expr e = ceil_div(s0 * s1, I(1024));
  CHECK(eval_with(e, {{"s0", 1000}, {"s1", 3}}) == 3);
  CHECK(eval_with(e, {{"s0", 1024}, {"s1", 1}}) == 1);
  CHECK(eval_with(e, {{"s1", 1025}, {"s0", 1}}) == 2);
  CHECK(eval_with(I(5), {}) == 5);
  CHECK(message(eval_with(e, {{"s0", 1}, {"nope", 1}})) == "no symbol named 'nope' exists in this context");
  CHECK(message(eval_with(e, {{"s0", 1}})) == "unbound symbol 's1'");
  // A symbol of the context that the expression does not use is harmless.
  CHECK(eval_with(s0 + 1, {{"s0", 1}, {"a", 4}}) == 2);
  // The last binding of a name wins.
  CHECK(eval_with(s0 + 1, {{"s0", 1}, {"s0", 10}}) == 11);
}

TEST_CASE_FIXTURE(Fixture, "eval: canonical forms keep the value of what they stand for") {
  // Inductor-style grid and index expressions at several bindings, against
  // values computed by hand with Python semantics.
  const Expr x = ctx.symbol("x", Assumption::nonnegative);
  struct Case {
    Expr e;
    std::int64_t s0v, s1v, xv, expected;
  };
  const std::vector<Case> cases{
      {ceil_div(s0, I(1024)), 5000, 1, 0, 5},
      {ceil_div(s0 * s1, I(128)), 3, 43, 0, 2},
      {python_mod(floor_div(x, 4), 8), 1, 1, 37, 1},
      {modular_indexing(x, s0, s1), 4, 8, 37, 1},
      {floor_div(x, s0 * s1), 4, 8, 100, 3},
      {max(I(1), floor_div(s0, 4)), 3, 1, 0, 1},
      {min(s0, I(64)) * s1, 100, 2, 0, 128},
      {align(s0 * 3), 5, 1, 0, 64},
      {where(lt(x, s0), x, s0 - 1), 10, 1, 99, 9},
      {-floor_div(-x, 4), 1, 1, 9, 3},
  };
  for (const Case& t : cases) {
    CAPTURE(print_python(t.e));
    CHECK(eval(t.e, Bindings{}.set(s0, t.s0v).set(s1, t.s1v).set(x, t.xv)) == t.expected);
  }
}

// Every factor of a product is evaluated, so whether a product is an error
// does not depend on the order of its factors (the canonical order, and so
// simplify, may reorder them; compiled evaluation agrees).
TEST_CASE_FIXTURE(Fixture, "eval: a product's errors do not depend on the order of its factors") {
  const Expr zero_first = R(Kind::mul, {R(Kind::python_mod, {a, I(2)}), R(Kind::floor_div, {I(7), b})});
  const Expr zero_last = R(Kind::mul, {R(Kind::floor_div, {I(7), b}), R(Kind::python_mod, {a, I(2)})});
  const Bindings bind = Bindings{}.set(a, 2).set(b, 0);
  CHECK(message(eval(zero_first, bind)) == "division by zero in `7 // b`");
  CHECK(message(eval(zero_last, bind)) == "division by zero in `7 // b`");
  CHECK(eval(zero_first, Bindings{}.set(a, 2).set(b, 3)) == 0);
  const Expr over_first = R(Kind::mul, {a, R(Kind::mul, {b, b})});
  CHECK(message(eval(over_first, Bindings{}.set(a, 0).set(b, INT64_MAX))).find("integer overflow") == 0);
}
