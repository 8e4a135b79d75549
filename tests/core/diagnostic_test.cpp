// Result<T>, Result<void> and the internal Failure: the std::expected-shaped
// error vocabulary every fallible wrapir function returns.
#include <wrapir/diagnostic.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

using wrapir::BadResultAccess;
using wrapir::Diagnostic;
using wrapir::Result;

namespace {

Result<int> parse_digit(char c) {
  if (c < '0' || c > '9') return Diagnostic{std::string("not a digit: ") + c, 0};
  return c - '0';
}

// A value that counts its live instances and can be told to throw when
// copied, to check the storage's lifetimes and its assignment's guarantee.
struct Tracked {
  static inline int live = 0;
  static inline bool copies_throw = false;
  int v = 0;
  explicit Tracked(int value) : v(value) { ++live; }
  Tracked(const Tracked& o) : v(o.v) {
    if (copies_throw) throw std::runtime_error("copy refused");
    ++live;
  }
  Tracked(Tracked&& o) noexcept(false) : v(o.v) { ++live; }  // a move that may throw: the hardest case
  Tracked& operator=(const Tracked& o) {
    if (copies_throw) throw std::runtime_error("copy refused");
    v = o.v;
    return *this;
  }
  Tracked& operator=(Tracked&& o) noexcept(false) {
    v = o.v;
    return *this;
  }
  ~Tracked() { --live; }
};

}  // namespace

TEST_CASE("Result: value access on a diagnostic reports the diagnostic") {
  const Result<int> bad = parse_digit('x');
  CHECK_FALSE(bad.has_value());
  CHECK_FALSE(bad.ok());
  CHECK_FALSE(static_cast<bool>(bad));
  CHECK(bad.error().message == "not a digit: x");
  try {
    (void)bad.value();
    FAIL("value() on a diagnostic must throw");
  } catch (const BadResultAccess& e) {
    CHECK(std::string(e.what()) == "bad Result access: column 1: not a digit: x");
    CHECK(e.error().message == "not a digit: x");
  }
  CHECK_THROWS_AS((void)*bad, BadResultAccess);
  const Result<std::string> s = Diagnostic{"no"};
  CHECK_THROWS_AS((void)s->size(), BadResultAccess);
}

TEST_CASE("Result: error() on a value is a checked programming error") {
  const Result<int> good = parse_digit('7');
  CHECK(good.has_value());
  CHECK(good.value() == 7);
  CHECK(*good == 7);
  CHECK(good == 7);
  CHECK_FALSE(good == 8);
  CHECK_THROWS_AS((void)good.error(), std::logic_error);
  CHECK_THROWS_AS((void)Result<void>{}.error(), std::logic_error);
}

TEST_CASE("Result: value_or, and_then, transform, or_else, transform_error") {
  CHECK(parse_digit('3').value_or(-1) == 3);
  CHECK(parse_digit('?').value_or(-1) == -1);

  auto twice = [](int v) -> Result<int> {
    if (v > 4) return Diagnostic{"too big"};
    return 2 * v;
  };
  CHECK(parse_digit('4').and_then(twice) == 8);
  CHECK(parse_digit('5').and_then(twice).error().message == "too big");
  CHECK(parse_digit('z').and_then(twice).error().message == "not a digit: z");

  const Result<std::string> text = parse_digit('9').transform([](int v) { return std::to_string(v * 11); });
  CHECK(text == std::string("99"));
  CHECK(parse_digit('-').transform([](int v) { return v + 1; }).error().message == "not a digit: -");

  int seen = 0;
  const Result<void> side = parse_digit('2').transform([&](int v) { seen = v; });
  CHECK(side.has_value());
  CHECK(seen == 2);

  CHECK(parse_digit('a').or_else([](const Diagnostic&) -> Result<int> { return 0; }) == 0);
  CHECK(parse_digit('1').or_else([](const Diagnostic&) -> Result<int> { return 0; }) == 1);
  const auto with_context = parse_digit('q').transform_error([](const Diagnostic& d) {
    return Diagnostic{"argument 2: " + d.message};
  });
  CHECK(with_context.error().message == "argument 2: not a digit: q");
}

TEST_CASE("Result: move-only values move out") {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  std::unique_ptr<int> p = std::move(r).value();
  REQUIRE(p);
  CHECK(*p == 5);
  Result<std::unique_ptr<int>> chained =
      Result<std::unique_ptr<int>>(std::make_unique<int>(6)).transform([](std::unique_ptr<int> q) {
        *q += 1;
        return q;
      });
  CHECK(*chained.value() == 7);

  // or_else and transform_error move a move-only value through (review of issue 12).
  std::unique_ptr<int> kept =
      Result<std::unique_ptr<int>>(std::make_unique<int>(8))
          .or_else([](const Diagnostic&) -> Result<std::unique_ptr<int>> { return Diagnostic{"unused"}; })
          .transform_error([](const Diagnostic& d) { return "context: " + d.message; })
          .value();
  REQUIRE(kept);
  CHECK(*kept == 8);
  const Result<std::unique_ptr<int>> recovered =
      Result<std::unique_ptr<int>>(Diagnostic{"gone"}).or_else([](Diagnostic d) -> Result<std::unique_ptr<int>> {
        return std::make_unique<int>(static_cast<int>(d.message.size()));
      });
  CHECK(*recovered.value() == 4);
}

TEST_CASE("Result: transform_error with a message keeps the column (review of issue 12)") {
  const Result<int> bad = parse_digit('x');
  REQUIRE(bad.error().column);
  const Result<int> with_context = bad.transform_error([](const Diagnostic& d) { return "argument 2: " + d.message; });
  CHECK(with_context.error().message == "argument 2: not a digit: x");
  CHECK(with_context.error().column == bad.error().column);
  CHECK(with_context.error().to_string() == "column 1: argument 2: not a digit: x");
  // A returned Diagnostic is taken as it is, column included.
  CHECK_FALSE(bad.transform_error([](const Diagnostic& d) { return Diagnostic{d.message}; }).error().column);
  const Result<void> void_bad = Diagnostic{"at the end", 3};
  CHECK(void_bad.transform_error([](const Diagnostic& d) { return "read: " + d.message; }).error().column == 3U);
}

TEST_CASE("Result<void>: success by default, a diagnostic otherwise") {
  const Result<void> ok{};
  CHECK(ok.has_value());
  CHECK_NOTHROW(ok.value());
  const Result<void> bad = Diagnostic{"disk full"};
  CHECK_FALSE(bad.has_value());
  CHECK(bad.error().message == "disk full");
  CHECK_THROWS_WITH_AS(bad.value(), "bad Result access: disk full", BadResultAccess);
  CHECK(ok.and_then([] { return Result<int>(4); }) == 4);
  CHECK(bad.and_then([] { return Result<int>(4); }).error().message == "disk full");
  CHECK(ok.transform([] { return 3; }) == 3);
  CHECK(bad.or_else([](const Diagnostic&) { return Result<void>{}; }).has_value());
}

TEST_CASE("detail::catch_failure turns a deep failure into a value at the boundary") {
  const auto deep = [](int depth) -> int {
    if (depth > 2) wrapir::detail::fail(Diagnostic{"too deep", 3});
    return depth;
  };
  CHECK(wrapir::detail::catch_failure([&] { return deep(1); }) == 1);
  const Result<int> r = wrapir::detail::catch_failure([&] { return deep(3); });
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "too deep");
  CHECK(r.error().column == std::optional<std::size_t>(3));
  const Result<void> v = wrapir::detail::catch_failure([] { wrapir::detail::fail("void walk failed"); });
  CHECK(v.error().message == "void walk failed");
  // Other exceptions are not failures: they pass through.
  CHECK_THROWS_AS(wrapir::detail::catch_failure([]() -> int { throw std::runtime_error("bug"); }), std::runtime_error);
}

TEST_CASE("Result: assignment between a value and a diagnostic keeps one alive, and is undone by a throw") {
  Tracked::live = 0;
  Tracked::copies_throw = false;
  {
    Result<Tracked> a = Tracked(1);
    Result<Tracked> b = Diagnostic{"no value", 3};
    CHECK(Tracked::live == 1);

    a = b;  // value -> diagnostic: the value is destroyed
    CHECK(Tracked::live == 0);
    REQUIRE_FALSE(a.has_value());
    CHECK(a.error() == Diagnostic{"no value", 3});

    const Result<Tracked> c = Tracked(2);
    a = c;  // diagnostic -> value
    CHECK(Tracked::live == 2);
    REQUIRE(a.has_value());
    CHECK(a.value().v == 2);

    a = Result<Tracked>(Tracked(3));  // value -> value, moved
    CHECK(a.value().v == 3);
    CHECK(Tracked::live == 2);

    b = Result<Tracked>(Diagnostic{"other"});  // diagnostic -> diagnostic
    CHECK(b.error().message == "other");

    // A copy that throws leaves the target as it was, whichever it held.
    Tracked::copies_throw = true;
    b = Diagnostic{"kept"};
    CHECK_THROWS_AS(b = c, std::runtime_error);
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error().message == "kept");
    CHECK_THROWS_AS(a = c, std::runtime_error);
    REQUIRE(a.has_value());
    CHECK(a.value().v == 3);
    Tracked::copies_throw = false;

    Result<Tracked>& same = a;
    a = same;  // self-assignment keeps the value
    CHECK(a.value().v == 3);
    Result<Tracked> moved_from = Tracked(4);
    Result<Tracked> moved_to = std::move(moved_from);
    CHECK(moved_to.value().v == 4);
    CHECK(Tracked::live == 4);  // a, c, moved_to, and the moved-from value
  }
  CHECK(Tracked::live == 0);
}

TEST_CASE("Result: copyable and movable exactly as its value") {
  static_assert(std::is_copy_constructible_v<Result<std::string>>);
  static_assert(std::is_nothrow_move_constructible_v<Result<std::string>>);
  static_assert(std::is_nothrow_move_assignable_v<Result<std::string>>);
  static_assert(!std::is_copy_constructible_v<Result<std::unique_ptr<int>>>);
  static_assert(!std::is_copy_assignable_v<Result<std::unique_ptr<int>>>);
  static_assert(std::is_move_assignable_v<Result<std::unique_ptr<int>>>);
  static_assert(!std::is_nothrow_move_constructible_v<Result<Tracked>>);

  Result<std::unique_ptr<int>> a = std::make_unique<int>(1);
  Result<std::unique_ptr<int>> b = Diagnostic{"none"};
  a = std::move(b);
  REQUIRE_FALSE(a.has_value());
  b = Result<std::unique_ptr<int>>(std::make_unique<int>(2));
  a = std::move(b);
  REQUIRE(a.has_value());
  CHECK(*a.value() == 2);
}
