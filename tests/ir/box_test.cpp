// Tests of include/wrapir/ir/box.hpp: OptionalBox, Box and VectorBox keep the
// value semantics of the optional, plain and vector members they replace, and the records
// that hold them stay small (the sizes are what a long program's memory is
// made of: docs/performance.md, "Loading").

#include <wrapir/ir/box.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/line_hash.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include <boost/variant2/variant.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using wrapir::ir::Box;
using wrapir::ir::OptionalBox;
using wrapir::ir::VectorBox;

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

TEST_CASE("VectorBox: reads and grows like the vector, holds nothing while empty") {
  VectorBox<std::string> a;
  CHECK(a.empty());
  CHECK(a.size() == 0);
  CHECK(a.begin() == a.end());
  CHECK(a.data() == nullptr);  // no allocation while empty
  CHECK(a == std::vector<std::string>{});
  const std::vector<std::string>& none = a;  // passes where a const vector& is expected
  CHECK(none.empty());

  a.push_back("x");
  a.emplace_back(2, 'y');
  REQUIRE(a.size() == 2);
  CHECK(a[0] == "x");
  CHECK(a.back() == "yy");
  std::string joined;
  for (const std::string& s : a) joined += s;
  CHECK(joined == "xyy");

  VectorBox<std::string> b = a;  // a deep copy
  b[0] = "z";
  CHECK(a[0] == "x");
  CHECK(a != b);
  b = a;
  CHECK(a == b);
  const auto& self = b;
  b = self;
  CHECK(b.size() == 2);

  VectorBox<std::string> c = std::move(b);
  CHECK(c.size() == 2);
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move): a moved-from box is empty and usable
  b.push_back("again");
  CHECK(b.size() == 1);

  c = {"p", "q", "r"};
  CHECK(c.vector() == std::vector<std::string>{"p", "q", "r"});
  c = std::vector<std::string>{};
  CHECK(c.empty());
  CHECK(c.data() == nullptr);
  c.reserve(4);
  CHECK(c.empty());
  CHECK(c == VectorBox<std::string>{});  // empty equals empty, however it was made
  c.push_back("s");
  c.clear();
  CHECK(c.data() == nullptr);
}

TEST_CASE("a launch grid boxes its explicit and typed forms and reads them through grid_if") {
  using namespace wrapir::ir;
  wrapir::ir::Program p{"p"};
  auto& ctx = p.ctx();
  LaunchGrid g;
  CHECK(grid_if<LauncherGrid>(g) != nullptr);
  CHECK(grid_if<ExplicitGrid>(g) == nullptr);
  g = ExplicitGrid{ctx.integer(1), ctx.integer(2), ctx.integer(3)};
  REQUIRE(grid_if<ExplicitGrid>(g) != nullptr);
  CHECK(grid_if<ExplicitGrid>(g)->y == ctx.integer(2));
  CHECK(grid_if<TypedGrid>(g) == nullptr);
  CHECK(grid_if<LauncherGrid>(g) == nullptr);
  grid_if<ExplicitGrid>(g)->z = ctx.integer(4);
  const LaunchGrid copy = g;  // a deep copy
  grid_if<ExplicitGrid>(g)->z = ctx.integer(5);
  CHECK(grid_if<ExplicitGrid>(copy)->z == ctx.integer(4));
  CHECK_FALSE(copy == g);
  g = TypedGrid{GridType::grid_2d, {NamedExpr{"xnumel", ctx.integer(8)}}, {BlockSize{"XBLOCK", 4}}};
  REQUIRE(grid_if<TypedGrid>(g) != nullptr);
  CHECK(grid_if<TypedGrid>(g)->block[0].value == 4);
  // A visitor written for the forms takes a boxed one as the form it holds.
  struct Form {
    int operator()(const LauncherGrid&) const { return 0; }
    int operator()(const ExplicitGrid&) const { return 1; }
    int operator()(const TypedGrid& t) const { return 2 + static_cast<int>(t.numels.size()); }
  };
  CHECK(boost::variant2::visit(Form{}, LaunchGrid{TypedGrid{}}) == 2);
  CHECK(boost::variant2::visit(Form{}, LaunchGrid{ExplicitGrid{}}) == 1);
  CHECK(boost::variant2::visit(Form{}, LaunchGrid{}) == 0);
}

TEST_CASE("the records a long program is made of stay small") {
  // What a 1M-line program holds per line: these sizes times the lines.
  // The large, rare members (a view, kernel metadata, a comm group) are
  // boxed so that they do not set the size of every argument and line.
  CHECK(sizeof(wrapir::ir::BufferArg) <= 16);
  CHECK(sizeof(wrapir::ir::Arg) <= 40);
  CHECK(sizeof(wrapir::ir::KernelDefinition) <= 96);
  // The largest kinds: a launch grid boxes its explicit and typed forms (it
  // was a 64-byte variant, and KernelCall 144 bytes); extern calls box
  // their keyword arguments and outs, a scatter its source.
  CHECK(sizeof(wrapir::ir::LaunchGrid) <= 16);
  CHECK(sizeof(wrapir::ir::KernelCall) <= 96);
  CHECK(sizeof(wrapir::ir::ScatterFallback) <= 96);
  CHECK(sizeof(wrapir::ir::ExternKernelMultiOut) <= 96);
  CHECK(sizeof(wrapir::ir::ExternKernelOut) <= 96);
  CHECK(sizeof(wrapir::ir::Line) <= 104);  // also a static_assert in ir/line.hpp
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

  ScatterFallback s{};
  s.src = Arg{1.5};
  s.kwargs.push_back(NamedArg{"reduce", Arg{std::string("add")}});
  ScatterFallback t = s;
  CHECK(Line{s} == Line{t});
  CHECK(hash_value(s) == hash_value(t));
  *t.src = Arg{2.5};
  CHECK_FALSE(Line{s} == Line{t});
  t = s;
  t.kwargs.clear();
  CHECK_FALSE(Line{s} == Line{t});
  CHECK(Line{t} == Line{ScatterFallback{"aten.scatter_", {}, 0, {}, Arg{1.5}, {}, {}}});
}
