// Tests of include/wrapir/expr/expr.hpp: the uniquing Context, Expr handles,
// symbol names and assumptions, the structural order `compare`, and
// `make_raw`.

#include <wrapir/expr/expr.hpp>

#include <doctest/doctest.h>

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

using namespace wrapir::expr;

static_assert(std::is_trivially_copyable_v<Expr>, "Expr is a pointer-sized value");
static_assert(sizeof(Expr) == sizeof(void*));
static_assert(!std::is_copy_constructible_v<Context>, "handles point into the context");
static_assert(!std::is_move_constructible_v<Context>);

std::vector<Expr> ops(std::initializer_list<Expr> list) { return {list}; }

}  // namespace

TEST_CASE("expr: integers are uniqued by value") {
  Context ctx;
  const Expr a = ctx.integer(42);
  const Expr b = ctx.integer(42);
  CHECK(a == b);
  CHECK(a.node() == b.node());
  CHECK(a != ctx.integer(43));
  CHECK(a.is_integer());
  CHECK(a.is_integer(42));
  CHECK_FALSE(a.is_integer(41));
  CHECK(a.kind() == Kind::integer);
  CHECK(a.value() == 42);
  CHECK(a.operands().empty());
  CHECK(a.tree_size() == 1);
  CHECK(&a.context() == &ctx);
  CHECK(ctx.integer(INT64_MIN).value() == INT64_MIN);
  CHECK(ctx.integer(INT64_MAX).value() == INT64_MAX);
  CHECK(ctx.integer(INT64_MIN) != ctx.integer(INT64_MAX));
  CHECK(ctx.integer(0) != ctx.integer(-0 - 1));
}

TEST_CASE("expr: a default Expr is null") {
  const Expr e;
  CHECK_FALSE(static_cast<bool>(e));
  CHECK(e.node() == nullptr);
  CHECK(e == Expr{});
  Context ctx;
  CHECK(static_cast<bool>(ctx.integer(0)));
}

TEST_CASE("expr: structural equality is handle equality") {
  Context ctx;
  const Expr s0 = ctx.symbol("s0");
  const Expr s1 = ctx.symbol("s1");
  const Expr a = ctx.make_raw(Kind::add, ops({s0, ctx.integer(1)}));
  const Expr b = ctx.make_raw(Kind::add, ops({ctx.symbol("s0"), ctx.integer(1)}));
  CHECK(a == b);
  // Operand order is structure: raw nodes are not reordered.
  CHECK(a != ctx.make_raw(Kind::add, ops({ctx.integer(1), s0})));
  CHECK(a != ctx.make_raw(Kind::mul, ops({s0, ctx.integer(1)})));
  CHECK(a != ctx.make_raw(Kind::add, ops({s1, ctx.integer(1)})));
  // Alignment is part of an align node's identity.
  CHECK(ctx.make_raw(Kind::align, ops({s0}), 64) == ctx.make_raw(Kind::align, ops({s0}), 64));
  CHECK(ctx.make_raw(Kind::align, ops({s0}), 64) != ctx.make_raw(Kind::align, ops({s0}), 128));
  // Deeper trees unique too, and equal trees share one node.
  const Expr deep1 = ctx.make_raw(Kind::floor_div, ops({a, ctx.make_raw(Kind::mul, ops({s0, s1}))}));
  const Expr deep2 = ctx.make_raw(Kind::floor_div, ops({b, ctx.make_raw(Kind::mul, ops({s0, s1}))}));
  CHECK(deep1 == deep2);
  CHECK(deep1.operand(0) == a);
  CHECK(deep1.tree_size() == 7);
  CHECK(std::hash<Expr>{}(deep1) == deep1.hash());
}

TEST_CASE("expr: the context counts distinct nodes only") {
  Context ctx;
  CHECK(ctx.size() == 0);
  const Expr s0 = ctx.symbol("s0");
  (void)ctx.integer(1);
  CHECK(ctx.size() == 2);
  (void)ctx.integer(1);
  (void)ctx.symbol("s0");
  (void)ctx.make_raw(Kind::add, ops({s0, ctx.integer(1)}));
  CHECK(ctx.size() == 3);
  (void)ctx.make_raw(Kind::add, ops({s0, ctx.integer(1)}));
  CHECK(ctx.size() == 3);
}

TEST_CASE("expr: uniquing survives growth of the table") {
  Context ctx;
  const Expr s0 = ctx.symbol("s0");
  std::vector<Expr> made;
  for (std::int64_t i = 0; i < 20000; ++i) made.push_back(ctx.make_raw(Kind::add, ops({s0, ctx.integer(i)})));
  const std::size_t size = ctx.size();
  CHECK(size == 1 + 2 * 20000);
  for (std::int64_t i = 0; i < 20000; i += 7) {
    CHECK(ctx.make_raw(Kind::add, ops({s0, ctx.integer(i)})) == made[static_cast<std::size_t>(i)]);
    CHECK(made[static_cast<std::size_t>(i)].operand(1).value() == i);
  }
  CHECK(ctx.size() == size);
}

TEST_CASE("expr: distinct contexts are independent") {
  Context a, b;
  CHECK(a.integer(1) != b.integer(1));
  CHECK(a.symbol("s0") != b.symbol("s0"));
  CHECK(&a.symbol("s0").context() == &a);
  // Each context may give the same name its own assumption.
  CHECK_NOTHROW((void)a.symbol("x", Assumption::positive));
  CHECK_NOTHROW((void)b.symbol("x", Assumption::integer));
}

TEST_CASE("expr: symbols") {
  Context ctx;
  const Expr s0 = ctx.symbol("s0");
  CHECK(s0.is_symbol());
  CHECK(s0.kind() == Kind::symbol);
  CHECK(s0.name() == "s0");
  CHECK(s0.assumption() == Assumption::positive);  // Inductor's sizes are positive
  CHECK_FALSE(s0.unbacked());
  CHECK(s0.operands().empty());
  CHECK(ctx.symbol("s0") == s0);

  const Expr n = ctx.symbol("n", Assumption::nonnegative);
  CHECK(n.assumption() == Assumption::nonnegative);
  const Expr u = ctx.symbol("u0", Assumption::integer, true);
  CHECK(u.assumption() == Assumption::integer);
  CHECK(u.unbacked());
  CHECK(ctx.symbol("u0", Assumption::integer, true) == u);

  SUBCASE("find_symbol") {
    CHECK(ctx.find_symbol("s0") == s0);
    CHECK(ctx.find_symbol("u0") == u);
    CHECK_FALSE(static_cast<bool>(ctx.find_symbol("s1")));
    CHECK_FALSE(static_cast<bool>(ctx.find_symbol("")));
  }
  SUBCASE("the context owns the name") {
    std::string name = "temporary_name";
    const Expr t = ctx.symbol(name);
    name.assign("xxxxxxxxxxxxxx");
    CHECK(t.name() == "temporary_name");
    CHECK(ctx.find_symbol("temporary_name") == t);
  }
}

TEST_CASE("expr: redeclaring a symbol with other assumptions throws") {
  Context ctx;
  (void)ctx.symbol("s0");
  CHECK_THROWS_WITH_AS((void)ctx.symbol("s0", Assumption::integer),
                       "symbol 's0' already exists as positive, cannot redeclare it as integer", Error);
  CHECK_THROWS_WITH_AS((void)ctx.symbol("s0", Assumption::positive, true),
                       "symbol 's0' already exists as positive, cannot redeclare it as positive unbacked", Error);
  (void)ctx.symbol("u0", Assumption::nonnegative, true);
  CHECK_THROWS_WITH_AS((void)ctx.symbol("u0", Assumption::nonnegative),
                       "symbol 'u0' already exists as nonnegative unbacked, cannot redeclare it as nonnegative", Error);
  // The failed requests changed nothing.
  CHECK(ctx.symbol("s0").assumption() == Assumption::positive);
  CHECK(ctx.size() == 2);
}

TEST_CASE("expr: symbol name validation") {
  SUBCASE("valid names") {
    for (std::string_view name : {"s0", "x", "_", "_x", "ks0", "xnumel", "S_1", "a1b2", "minimum", "maxi", "Floor",
                                  "std_", "int64", "mod"}) {
      CAPTURE(name);
      CHECK(is_valid_symbol_name(name));
      Context ctx;
      CHECK(ctx.symbol(name).name() == name);
    }
    CHECK(is_valid_symbol_name(std::string(256, 'a')));
  }
  SUBCASE("invalid names") {
    for (std::string_view name :
         {"", "0s", "9", "s-0", "s 0", "s.0", "s0\n", "é", "__x", "__", "for", "if", "lambda", "None", "True", "class",
          "int", "return", "auto", "nullptr", "min", "max", "align", "FloorDiv", "ModularIndexing", "PythonMod", "Mod",
          "CeilDiv", "Where", "std", "math", "torch", "c10", "int64_t", "match", "case"}) {
      CAPTURE(name);
      CHECK_FALSE(is_valid_symbol_name(name));
      Context ctx;
      CHECK_THROWS_AS((void)ctx.symbol(name), Error);
      CHECK(ctx.size() == 0);
    }
    CHECK_FALSE(is_valid_symbol_name(std::string(257, 'a')));
    CHECK_FALSE(is_valid_symbol_name(std::string_view("s\0x", 3)));
  }
  SUBCASE("the message names the symbol and the rule") {
    Context ctx;
    CHECK_THROWS_WITH_AS((void)ctx.symbol("for"),
                         "invalid symbol name 'for': expected an identifier [A-Za-z_][A-Za-z0-9_]* that is not a keyword "
                         "or a reserved function name",
                         Error);
    // Long names are cut in the message.
    const std::string long_name(300, 'q');
    try {
      (void)ctx.symbol(long_name);
      FAIL("expected Error");
    } catch (const Error& e) {
      const std::string message = e.what();
      CHECK(message.find(std::string(64, 'q')) != std::string::npos);
      CHECK(message.find(std::string(65, 'q')) == std::string::npos);
    }
  }
}

TEST_CASE("expr: kind names") {
  CHECK(kind_name(Kind::integer) == "Integer");
  CHECK(kind_name(Kind::pow) == "PowByNatural");
  CHECK(kind_name(Kind::floor_div) == "FloorDiv");
  CHECK(kind_name(Kind::modular_indexing) == "ModularIndexing");
  CHECK(kind_name(Kind::python_mod) == "PythonMod");
  CHECK(kind_name(Kind::align) == "align");
  CHECK(kind_name(Kind::identity) == "Identity");
  CHECK(kind_count == 21);
  CHECK(is_comparison(Kind::eq));
  CHECK(is_comparison(Kind::ge));
  CHECK_FALSE(is_comparison(Kind::where));
  CHECK_FALSE(is_comparison(Kind::max));
  CHECK(assumption_name(Assumption::positive) == "positive");
  CHECK(assumption_name(Assumption::nonnegative) == "nonnegative");
  CHECK(assumption_name(Assumption::integer) == "integer");
}

TEST_CASE("expr: compare orders integers, then symbols naturally, then compound nodes") {
  Context ctx;
  const Expr s2 = ctx.symbol("s2");
  const Expr s10 = ctx.symbol("s10");
  const Expr add = ctx.make_raw(Kind::add, ops({s2, s10}));
  const Expr mul = ctx.make_raw(Kind::mul, ops({s2, s10}));

  CHECK(compare(s2, s10) < 0);
  CHECK(compare(s10, s2) > 0);
  CHECK(compare(s2, s2) == 0);
  CHECK(compare(ctx.integer(-5), ctx.integer(3)) < 0);
  CHECK(compare(ctx.integer(INT64_MAX), s2) < 0);
  CHECK(compare(s10, add) < 0);
  CHECK(compare(add, mul) < 0);  // by kind
  CHECK(ExprLess{}(s2, s10));
  CHECK_FALSE(ExprLess{}(s10, s2));
  CHECK_FALSE(ExprLess{}(s2, s2));

  SUBCASE("compound nodes compare operand-wise, then by operand count") {
    const Expr a = ctx.make_raw(Kind::add, ops({s2, ctx.integer(1)}));
    const Expr b = ctx.make_raw(Kind::add, ops({s2, ctx.integer(2)}));
    const Expr c = ctx.make_raw(Kind::add, ops({s2, ctx.integer(1), ctx.integer(0)}));
    CHECK(compare(a, b) < 0);
    CHECK(compare(a, c) < 0);
    CHECK(compare(c, b) < 0);
    CHECK(compare(ctx.make_raw(Kind::align, ops({s2}), 64), ctx.make_raw(Kind::align, ops({s2}), 128)) < 0);
  }
  SUBCASE("the order depends only on structure, never on the context") {
    Context other;
    const Expr s2b = other.symbol("s2");
    const Expr s10b = other.symbol("s10");
    // Made in the opposite order in the second context.
    CHECK(compare(other.make_raw(Kind::add, ops({s2b, s10b})), add) == 0);
    CHECK(compare(s10b, s2) > 0);
    CHECK(compare(s2b, s10) < 0);
  }
}

TEST_CASE("expr: natural order of names") {
  struct Case {
    std::string_view less, greater;
  };
  for (const Case& c : {Case{"s2", "s10"}, Case{"s9", "s10"}, Case{"s10", "s11"}, Case{"a", "b"}, Case{"s", "s0"},
                        Case{"s10", "s010"}, Case{"x1y2", "x1y10"}, Case{"ks0", "s0"}, Case{"A", "a"},
                        Case{"s99999999999999999999", "s100000000000000000000"}, Case{"u2", "u10a"}}) {
    CAPTURE(c.less);
    CAPTURE(c.greater);
    Context ctx;
    const Expr lo = ctx.symbol(c.less);
    const Expr hi = ctx.symbol(c.greater);
    CHECK(compare(lo, hi) < 0);
    CHECK(compare(hi, lo) > 0);
  }
}

TEST_CASE("expr: make_raw keeps nodes exactly as given") {
  Context ctx;
  const Expr s0 = ctx.symbol("s0");
  const Expr one = ctx.integer(1);
  const Expr raw = ctx.make_raw(Kind::add, ops({one, s0, s0}));
  CHECK(raw.kind() == Kind::add);
  REQUIRE(raw.operands().size() == 3);
  CHECK(raw.operand(0) == one);
  CHECK(raw.operand(1) == s0);
  CHECK(raw.operand(2) == s0);
  CHECK(raw.tree_size() == 4);
  // The value is kept for align only.
  CHECK(ctx.make_raw(Kind::add, ops({s0, one}), 7) == ctx.make_raw(Kind::add, ops({s0, one})));
  CHECK(ctx.make_raw(Kind::add, ops({s0, one}), 7).value() == 0);
  CHECK(ctx.make_raw(Kind::align, ops({s0}), 16).value() == 16);
  // An integer kind makes the literal.
  CHECK(ctx.make_raw(Kind::integer, {}, 9) == ctx.integer(9));
  // Raw nodes are kept even when they are constant.
  const Expr folded_later = ctx.make_raw(Kind::floor_div, ops({ctx.integer(7), ctx.integer(2)}));
  CHECK(folded_later.kind() == Kind::floor_div);
}

TEST_CASE("expr: make_raw checks arity") {
  Context ctx;
  const Expr s0 = ctx.symbol("s0");
  const Expr one = ctx.integer(1);
  struct Case {
    Kind kind;
    std::vector<Expr> operands;
    const char* message;
  };
  const std::vector<Case> cases{
      {Kind::floor_div, {s0}, "FloorDiv takes 2 operands, got 1"},
      {Kind::floor_div, {s0, one, one}, "FloorDiv takes 2 operands, got 3"},
      {Kind::add, {s0}, "Add takes 2 or more operands, got 1"},
      {Kind::mul, {}, "Mul takes 2 or more operands, got 0"},
      {Kind::min, {one}, "Min takes 2 or more operands, got 1"},
      {Kind::max, {}, "Max takes 2 or more operands, got 0"},
      {Kind::pow, {s0}, "PowByNatural takes 2 operands, got 1"},
      {Kind::modular_indexing, {s0, one}, "ModularIndexing takes 3 operands, got 2"},
      {Kind::where, {s0, one, one, one}, "Where takes 3 operands, got 4"},
      {Kind::align, {}, "align takes 1 operands, got 0"},
      {Kind::identity, {s0, s0}, "Identity takes 1 operands, got 2"},
      {Kind::eq, {s0}, "Eq takes 2 operands, got 1"},
      {Kind::python_mod, {s0, one, one}, "PythonMod takes 2 operands, got 3"},
  };
  for (const Case& c : cases) {
    CAPTURE(kind_name(c.kind));
    const std::size_t before = ctx.size();
    CHECK_THROWS_WITH_AS((void)ctx.make_raw(c.kind, c.operands, 64), c.message, Error);
    CHECK(ctx.size() == before);
  }
  // Enough operands for n-ary kinds.
  CHECK_NOTHROW((void)ctx.make_raw(Kind::add, std::vector<Expr>(100, s0)));
}

TEST_CASE("expr: make_raw rejects bad operands") {
  Context ctx, other;
  const Expr s0 = ctx.symbol("s0");
  CHECK_THROWS_WITH_AS((void)ctx.make_raw(Kind::symbol, {}), "make_raw cannot make a symbol; use Context::symbol", Error);
  CHECK_THROWS_WITH_AS((void)ctx.make_raw(Kind::add, ops({s0, Expr{}})), "Add: an operand is a null expression (a default-constructed Expr, which denotes no expression)", Error);
  CHECK_THROWS_WITH_AS((void)ctx.make_raw(Kind::add, ops({s0, other.integer(1)})), "Add: operand belongs to another context",
                       Error);
  for (std::int64_t alignment : {std::int64_t{0}, std::int64_t{-64}, std::int64_t{3}, std::int64_t{96}, INT64_MIN}) {
    CAPTURE(alignment);
    CHECK_THROWS_WITH_AS((void)ctx.make_raw(Kind::align, ops({s0}), alignment),
                         ("align: alignment " + std::to_string(alignment) + " is not a positive power of two").c_str(), Error);
  }
  CHECK(ctx.make_raw(Kind::align, ops({s0}), std::int64_t{1} << 62).value() == (std::int64_t{1} << 62));
  CHECK(ctx.make_raw(Kind::align, ops({s0}), 1).value() == 1);
}

TEST_CASE("expr: tree_size counts shared sub-trees once per use and saturates") {
  Context ctx;
  Expr e = ctx.symbol("s0");
  for (int i = 0; i < 10; ++i) e = ctx.make_raw(Kind::add, ops({e, e}));
  CHECK(e.tree_size() == 2047);  // 2^11 - 1
  for (int i = 0; i < 30; ++i) e = ctx.make_raw(Kind::add, ops({e, e}));
  CHECK(e.tree_size() == 0xffffffffU);
  CHECK(ctx.size() == 41);
}
