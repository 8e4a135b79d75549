// Tests of include/wrapir/pass/inplace.hpp: an output takes the storage of
// an input that dies at the call, only where the caller allows it and the
// storage provably fits, and the result verifies.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/inplace.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

namespace {

using namespace wrapir::ir;
using wrapir::cuda_device;
using wrapir::expr::Expr;
namespace pass = wrapir::pass;
namespace ex = wrapir::expr;

std::string findings(const Program& p) {
  std::string text;
  for (const Finding& f : verify(p)) text += to_string(f) + "\n";
  return text;
}

/// `add_one(in_ptr0, out_ptr0)`, elementwise: the output may alias the input.
struct Fixture {
  Program p{"graph"};
  Builder b{p};
  Expr s0 = b.size_symbol("s0", 16);
  Expr s1 = b.size_symbol("s1", 16);
  KernelId k = b.triton_kernel("add_one", "src", "in_ptr0: *fp32, out_ptr0: *fp32");
  KernelId k16 = b.triton_kernel("to_half", "src", "in_ptr0: *fp32, out_ptr0: *fp16");
  KernelId touch = b.triton_kernel("touch", "src", "ptr: *fp32");

  Expr n(std::int64_t v) { return p.ctx().integer(v); }
  BufferId produced(std::vector<Expr> sizes) {
    BufferId x = b.empty(std::move(sizes), DType::float32);
    b.call(touch, {x});
    return x;
  }
};

pass::InplaceOptions elementwise() {
  pass::InplaceOptions o;
  o.may_alias = [](const KernelDecl& k, std::size_t in, std::size_t out) {
    return k.name == "add_one" && in == 0 && out == 1;
  };
  return o;
}

pass::PlanResult planned(const Program& p, const pass::InplaceOptions& o) {
  REQUIRE(findings(p).empty());
  auto r = pass::plan_inplace(p, o);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  CHECK(findings(r.value().program).empty());
  return std::move(r).value();
}

}  // namespace

TEST_CASE("inplace: the output takes the storage of an input that dies at the call") {
  Fixture f;
  BufferId x = f.produced({f.s0});     // line 3, used at 4
  BufferId y = f.b.empty({f.s0}, DType::float32);  // 5
  f.b.call(f.k, {x, y}, {.free_after = {x}});      // 6, free at 7
  f.b.output(y);
  const pass::PlanResult r = planned(f.p, elementwise());
  CHECK(r.stats.reuses == 1);
  REQUIRE(r.program.body.size() == f.p.body.size());
  CHECK(r.program.body[5] == Line{Reuse{x, y, true}});
  const auto& call = std::get<KernelCall>(r.program.body[6]);
  CHECK(call.args[0] == Arg{y});
  CHECK(call.args[1] == Arg{y});
  CHECK(r.program.body[7] == Line{Null{}});
  CHECK(r.stats.peak_bytes == 64);
  CHECK(pass::measure_plan(f.p, f.p).value().peak_bytes == 128);
}

TEST_CASE("inplace: nothing happens without the caller's permission") {
  Fixture f;
  BufferId x = f.produced({f.s0});
  BufferId y = f.b.empty({f.s0}, DType::float32);
  f.b.call(f.k, {x, y}, {.free_after = {x}});
  f.b.output(y);
  CHECK(planned(f.p, {}).program.body == f.p.body);
  pass::InplaceOptions never;
  never.may_alias = [](const KernelDecl&, std::size_t, std::size_t) { return false; };
  CHECK(planned(f.p, never).program.body == f.p.body);
  pass::InplaceOptions swapped;  // the pair is (input 0, output 1), not the reverse
  swapped.may_alias = [](const KernelDecl&, std::size_t in, std::size_t out) { return in == 1 && out == 0; };
  CHECK(planned(f.p, swapped).stats.reuses == 0);
}

TEST_CASE("inplace: an input still used after the call, an output, or a plain graph input is kept") {
  Fixture f;
  BufferId x;
  SUBCASE("used later") {
    x = f.produced({f.s0});
    BufferId y = f.b.empty({f.s0}, DType::float32);
    f.b.call(f.k, {x, y});
    f.b.call(f.touch, {x});
    f.b.free({x});
    f.b.output(y);
  }
  SUBCASE("used later through a view") {
    x = f.produced({f.s0});
    BufferId v = f.b.view(x, {f.s0}, {f.n(1)}, f.n(0));
    BufferId y = f.b.empty({f.s0}, DType::float32);
    f.b.call(f.k, {x, y});
    f.b.call(f.touch, {v});
    f.b.free({x});
    f.b.output(y);
  }
  SUBCASE("a program output") {
    x = f.produced({f.s0});
    BufferId y = f.b.empty({f.s0}, DType::float32);
    f.b.call(f.k, {x, y});
    f.b.output(x);
    f.b.output(y);
  }
  SUBCASE("a graph input that was not donated") {
    x = f.b.input("arg0_1", {f.s0}, DType::float32);
    BufferId y = f.b.empty({f.s0}, DType::float32);
    f.b.call(f.k, {x, y});
    f.b.output(y);
  }
  SUBCASE("another dtype") {
    x = f.produced({f.s0});
    BufferId y = f.b.empty({f.s0}, DType::float16);
    f.b.call(f.k16, {x, y}, {.free_after = {x}});
    f.b.output(y);
  }
  CHECK(planned(f.p, elementwise()).stats.reuses == 0);
}

TEST_CASE("inplace: a donated graph input gives its storage") {
  Fixture f;
  BufferId x = f.b.input("arg0_1", Layout::contiguous(f.p.ctx(), {f.s0}, DType::float32, cuda_device(0)), true);
  BufferId y = f.b.empty({f.s0}, DType::float32);
  f.b.call(f.k, {x, y}, {.free_after = {x}});
  f.b.output(y);
  const pass::PlanResult r = planned(f.p, elementwise());
  CHECK(r.stats.reuses == 1);
  CHECK(std::holds_alternative<Null>(r.program.body.back()));
}

TEST_CASE("inplace: the storage must provably fit: same printed size or 0.95 * in <= out <= in") {
  Fixture f;
  ex::Context& ctx = f.p.ctx();
  CHECK(pass::can_match_storage_size(f.s0, f.s0));
  CHECK(pass::can_match_storage_size(ctx.integer(100), ctx.integer(96)));
  CHECK(pass::can_match_storage_size(ctx.integer(100), ctx.integer(95)));
  CHECK_FALSE(pass::can_match_storage_size(ctx.integer(100), ctx.integer(94)));
  CHECK_FALSE(pass::can_match_storage_size(ctx.integer(100), ctx.integer(101)));
  // Equal hints prove nothing.
  CHECK_FALSE(pass::can_match_storage_size(f.s0, f.s1));
  // s0 + 2 >= s0 always, but s0 >= 0.95 * (s0 + 2) only for s0 >= 38.
  CHECK_FALSE(pass::can_match_storage_size(ex::add(f.s0, ctx.integer(2)), f.s0));
  CHECK(pass::can_match_storage_size(ex::add(ex::mul(ctx.integer(40), f.s0), ctx.integer(2)),
                                     ex::mul(ctx.integer(40), f.s0)));

  BufferId x = f.produced({f.n(100)});
  BufferId y = f.b.empty({f.n(96)}, DType::float32);
  f.b.call(f.k, {x, y}, {.free_after = {x}});
  BufferId z = f.produced({f.n(100)});
  BufferId w = f.b.empty({f.n(90)}, DType::float32);
  f.b.call(f.k, {z, w}, {.free_after = {z}});
  f.b.output(y);
  f.b.output(w);
  const pass::PlanResult r = planned(f.p, elementwise());
  CHECK(r.stats.reuses == 1);
  CHECK(std::holds_alternative<Reuse>(r.program.body[5]));
  CHECK(std::holds_alternative<Allocate>(r.program.body[10]));
}

TEST_CASE("inplace: a chain of elementwise kernels runs in one storage") {
  Fixture f;
  BufferId x = f.produced({f.s0});
  for (int i = 0; i < 4; ++i) {
    BufferId y = f.b.empty({f.s0}, DType::float32);
    f.b.call(f.k, {x, y}, {.free_after = {x}});
    x = y;
  }
  f.b.output(x);
  const pass::PlanResult r = planned(f.p, elementwise());
  // Each buffer takes part once per run: every other link.
  CHECK(r.stats.reuses == 2);
  auto again = pass::plan_inplace(r.program, elementwise());
  REQUIRE(again.ok());
  CHECK(findings(again.value().program).empty());
  CHECK(again.value().stats.reuses == 4);
  CHECK(again.value().stats.peak_bytes == 64);
}
