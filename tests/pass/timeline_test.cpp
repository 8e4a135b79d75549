// Tests of include/wrapir/pass/timeline.hpp: pooled blocks where their
// pools put them, unpooled storage first fit, never overlapping.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/pass/timeline.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace pass = wrapir::pass;

// A chain of pointwise kernels over [s0] buffers of different sizes, each
// freed after its consumer, plus one long-lived buffer.
ir::Program chain(int length) {
  ir::Program p{"chain"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  auto s0 = b.size_symbol("s0", 1000);
  auto k = b.triton_kernel("triton_poi_0", "pass", "in_ptr0: *fp32, out_ptr0: *fp32");
  ir::BufferId prev = b.input("arg0_1", {s0}, wrapir::f32);
  const ir::BufferId keep = b.empty({s0 * ctx.integer(3)}, wrapir::f32);
  b.call(k, {prev, keep});
  for (int i = 0; i < length; ++i) {
    const ir::BufferId out = b.empty({s0 * ctx.integer(1 + i % 3)}, wrapir::f32);
    b.call(k, {prev, out});
    if (i > 0) b.free({prev});
    prev = out;
  }
  b.call(k, {keep, prev});
  b.free({keep});
  b.output(prev);
  return p;
}

}  // namespace

TEST_CASE("pass/timeline: an arena plan draws every block at its pool offset, without overlap") {
  const ir::Program p = chain(12);
  auto planned = pass::plan_arena(p);
  REQUIRE(planned);
  auto t = pass::planned_timeline(planned->program);
  REQUIRE(t);
  CHECK(t->pools == planned->program.pools.size());
  REQUIRE(t->placement.arenas.size() >= 1);
  CHECK(t->trace.allocations.size() == 13);
  for (std::size_t i = 0; i < t->trace.allocations.size(); ++i) CHECK(t->placement.blocks[i].arena < t->pools);
  CHECK(pass::check_placement(t->trace, t->placement, 64) == std::nullopt);
  CHECK(t->placement.total_bytes() == planned->stats.pool_bytes);
  CHECK(t->roles.back() == "output");
}

TEST_CASE("pass/timeline: unpooled storage is placed first fit and never overlaps") {
  const ir::Program p = chain(30);
  auto planned = pass::plan_reuse(p);
  REQUIRE(planned);
  auto t = pass::planned_timeline(planned->program);
  REQUIRE(t);
  CHECK(t->pools == 0);
  REQUIRE(t->placement.arenas.size() == 1);  // one device
  CHECK(pass::check_placement(t->trace, t->placement, 1) == std::nullopt);
  // First fit needs no more than the sum of all blocks and at least their max-live bytes.
  CHECK(t->placement.arenas[0].bytes >= pass::max_live_bytes(t->trace));
  std::int64_t sum = 0;
  for (const auto& a : t->trace.allocations) sum += a.bytes;
  CHECK(t->placement.arenas[0].bytes <= sum);
}

TEST_CASE("pass/timeline: an offset that does not evaluate is a diagnostic") {
  const ir::Program p = chain(2);
  auto planned = pass::plan_arena(p);
  REQUIRE(planned);
  ir::Program q = planned->program;
  auto& ctx = q.ctx();
  const auto s0 = ctx.find_symbol("s0");
  for (ir::Line& line : q.body)
    if (auto* carve = std::get_if<ir::AllocFromPool>(&line)) {
      carve->offset_bytes = wrapir::expr::floor_div(ctx.integer(64), s0 - ctx.integer(1000));  // s0's hint is 1000
      break;
    }
  auto t = pass::planned_timeline(q);
  REQUIRE(!t);
  CHECK(t.error().message.find("its offset does not evaluate at the hints") != std::string::npos);
}
