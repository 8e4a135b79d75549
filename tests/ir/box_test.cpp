// Tests of include/wrapir/ir/box.hpp: OptionalBox and Box keep the value
// semantics of the optional and plain members they replace, and the records
// that hold them stay small (the sizes are what a long program's memory is
// made of: docs/performance.md, "Loading").

#include <wrapir/ir/box.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

using wrapir::ir::Box;
using wrapir::ir::OptionalBox;

TEST_CASE("OptionalBox: empty, engaged, copied deep, compared by value") {
  OptionalBox<std::string> a;
  CHECK_FALSE(a);
  CHECK_FALSE(a.has_value());
  CHECK(a == std::nullopt);
  CHECK(a.value_or("fallback") == "fallback");
  CHECK_THROWS_AS((void)a.value(), std::bad_optional_access);

  a = std::string("x");
  REQUIRE(a);
  CHECK(*a == "x");
  CHECK(a->size() == 1);
  CHECK(a == std::string("x"));

  OptionalBox<std::string> b = a;  // a deep copy: changing it leaves `a`
  b->append("y");
  CHECK(*a == "x");
  CHECK(*b == "xy");
  CHECK(a != b);
  b = a;
  CHECK(a == b);
  const auto& self = b;
  b = self;  // self-assignment keeps the value
  CHECK(*b == "x");

  OptionalBox<std::string> c = std::move(b);
  CHECK(*c == "x");
  c = std::nullopt;
  CHECK_FALSE(c);
  CHECK(c == OptionalBox<std::string>{});
  CHECK(c.to_optional() == std::nullopt);
  c.emplace(3, 'z');
  CHECK(*c == "zzz");
  CHECK(c.to_optional() == std::optional<std::string>("zzz"));
  c.reset();
  CHECK_FALSE(c);

  const OptionalBox<std::string> from_optional = std::optional<std::string>("o");
  CHECK(*from_optional == "o");
  const OptionalBox<std::string> from_empty_optional = std::optional<std::string>{};
  CHECK_FALSE(from_empty_optional);
}

TEST_CASE("Box: always a value, copied deep, read as the value") {
  Box<std::vector<int>> a;
  CHECK(a->empty());
  a->push_back(1);
  Box<std::vector<int>> b = a;
  b->push_back(2);
  CHECK(a->size() == 1);
  CHECK(b->size() == 2);
  CHECK(a != b);
  b = a;
  CHECK(a == b);
  b = std::vector<int>{4, 5};
  const std::vector<int>& read = b;  // passes where a const T& is expected
  CHECK(read == std::vector<int>{4, 5});
  Box<std::vector<int>> c = std::move(b);
  CHECK((*c)[1] == 5);
}

TEST_CASE("Box: a moved-from box stays valid: copied, compared, assigned (regression)") {
  // A line moved out of a vector slot and the slot later copied (planning
  // in place moves lines) dereferenced a null pointer here.
  Box<std::vector<int>> a = std::vector<int>{1, 2};
  Box<std::vector<int>> taken = std::move(a);
  const Box<std::vector<int>> copy = a;  // NOLINT(bugprone-use-after-move): the point of the test
  CHECK(copy == a);
  CHECK_FALSE(copy == taken);
  Box<std::vector<int>> assigned;
  assigned = a;  // NOLINT(bugprone-use-after-move)
  CHECK(assigned == a);
  a = std::vector<int>{3};
  CHECK(a->size() == 1);
  wrapir::ir::KernelDefinition d{};
  wrapir::ir::KernelDefinition moved = std::move(d);
  const wrapir::ir::Line copied{d};  // NOLINT(bugprone-use-after-move)
  CHECK_FALSE(copied == wrapir::ir::Line{moved});
}

TEST_CASE("the records a long program is made of stay small") {
  // What a 1M-line program holds per line: these sizes times the lines.
  // The large, rare members (a view, kernel metadata, a comm group) are
  // boxed so that they do not set the size of every argument and line.
  CHECK(sizeof(wrapir::ir::BufferArg) <= 16);
  CHECK(sizeof(wrapir::ir::Arg) <= 40);
  CHECK(sizeof(wrapir::ir::KernelDefinition) <= 96);
  // KernelCall sets it: 136 bytes of fields (its grid is a 64-byte variant)
  // and the boxed provenance Inductor records for launches (8), + the index.
  CHECK(sizeof(wrapir::ir::Line) <= 152);
  CHECK(sizeof(wrapir::ir::BufferDecl) <= 136);
}

TEST_CASE("a boxed view and boxed metadata keep line equality and hashing") {
  using namespace wrapir::ir;
  wrapir::ir::Program p{"p"};
  auto& ctx = p.ctx();
  View v{{ctx.integer(2)}, {ctx.integer(1)}, ctx.integer(0)};
  KernelCall a{};
  a.args = {Arg{BufferArg{BufferId{0}, v}}, Arg{BufferArg{BufferId{0}, std::nullopt}}};
  KernelCall b = a;
  CHECK(Line{a} == Line{b});
  CHECK(hash_value(a) == hash_value(b));
  b.args[1] = Arg{BufferArg{BufferId{0}, v}};
  CHECK_FALSE(Line{a} == Line{b});

  KernelDefinition d{};
  d.metadata->num_warps = 4;
  KernelDefinition e = d;
  CHECK(Line{d} == Line{e});
  CHECK(hash_value(d) == hash_value(e));
  e.metadata->num_warps = 8;
  CHECK_FALSE(Line{d} == Line{e});
  CHECK(d.metadata->num_warps == 4);
}
