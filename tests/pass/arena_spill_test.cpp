// Tests of include/wrapir/pass/detail/arena_spill.hpp and ArenaOptions::spill:
// blocks that would raise the arena while storage it does not hold (an
// extern's result) is small stay with the allocator, so that the arena plus
// that storage peaks at the max-live bound; and nothing is spilled where it
// would not pay.

#include <doctest/doctest.h>

#include <cstdint>
#include <variant>
#include <vector>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/detail/arena_spill.hpp>

namespace {

using namespace wrapir::pass;
namespace ir = wrapir::ir;

detail::ArenaBlock span(std::uint32_t begin, std::uint32_t end, std::int64_t bytes, std::int32_t device = 0) {
  return detail::ArenaBlock{bytes, begin, end, device, false, false};
}

/// `blocks_to_spill` of the blocks of `placed`, over its steps.
std::vector<bool> to_spill(const AllocationTrace& placed, const std::vector<detail::ArenaBlock>& others,
                           std::size_t work_limit = 1u << 24) {
  return detail::blocks_to_spill(detail::arena_blocks_of(placed, "test"), others, placed.steps, 64, work_limit);
}

}  // namespace

TEST_CASE("arena spill: the block that raises the arena after the extern's result is gone is spilled") {
  // x lives throughout (40 KiB); an extern's 8 KiB result lives at [2, 5);
  // y (8 KiB) at [6, 9). Bound: max(40 + 8, 48 + 0) = 48 KiB; arena + max U
  // would be 48 + 8 = 56 KiB. Spilling y: arena 40 KiB, total 48 KiB.
  const AllocationTrace t{{{"x", 40960, 0, 10, 0, false}, {"y", 8192, 6, 9, 0, false}}, 10};
  const std::vector<detail::ArenaBlock> others{span(2, 5, 8192)};
  CHECK(to_spill(t, others) == std::vector<bool>{false, true});
}

TEST_CASE("arena spill: nothing is spilled where it cannot lower the total") {
  const AllocationTrace t{{{"x", 40960, 0, 10, 0, false}, {"y", 8192, 3, 9, 0, false}}, 10};
  // No storage beside the arena.
  CHECK(to_spill(t, {}) == std::vector<bool>{false, false});
  // y overlaps the extern's result: the bound is arena + max U already.
  const std::vector<detail::ArenaBlock> overlapping{span(2, 5, 8192)};
  CHECK(to_spill(t, overlapping) == std::vector<bool>{false, false});
  // Storage on another device does not count against this one.
  const AllocationTrace late{{{"x", 40960, 0, 10, 0, false}, {"y", 8192, 6, 9, 0, false}}, 10};
  const std::vector<detail::ArenaBlock> elsewhere{span(2, 5, 8192, 1)};
  CHECK(to_spill(late, elsewhere) == std::vector<bool>{false, false});
  // A block too large to fit under the bound alone is kept (no other choice
  // helps: the device keeps every block).
  const AllocationTrace big{{{"x", 4096, 0, 10, 0, false}, {"y", 16384, 6, 9, 0, false}}, 10};
  const std::vector<detail::ArenaBlock> small{span(2, 5, 8192)};
  CHECK(to_spill(big, small) == std::vector<bool>{false, false});
  // Past the work limit nothing is spilled.
  CHECK(to_spill(t, std::vector<detail::ArenaBlock>{span(2, 5, 8192)}, 1) == std::vector<bool>{false, false});
}

TEST_CASE("arena spill: the program's arena plus an extern's result peaks at the bound") {
  // The transformer block's shape: `a` lives throughout; an extern allocates
  // `e` (read once); after `e` is freed `y` is made. The arena places a and
  // y; y stays an Allocate line.
  ir::Program p{"spill"};
  ir::Builder b{p, wrapir::cpu_device()};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(2048)}, ir::DType::float32);
  auto k = b.kernel("k", ir::KernelLanguage::cpp, ir::SourceText{"// k"}, "a: *fp32, b: *fp32");
  auto a = b.empty({c.integer(10240)}, ir::DType::float32);
  b.call(k, {x, a});
  auto e = b.extern_alloc("aten.foo.default", {x}, ir::Layout::contiguous(c, {c.integer(2048)}, ir::DType::float32,
                                                                           wrapir::cpu_device()));
  b.call(k, {e, a});
  b.free({e});
  auto y = b.empty({c.integer(2048)}, ir::DType::float32);
  b.call(k, {a, y});
  b.output(a);
  b.output(y);
  REQUIRE(ir::verify(p).empty());

  auto spilled = plan_arena(p);
  REQUIRE_MESSAGE(spilled, spilled.error().message);
  CHECK(spilled->stats.lower_bound_bytes == 49152);
  CHECK(spilled->stats.peak_bytes == 49152);
  CHECK(spilled->stats.pool_bytes == 40960);
  std::size_t allocates = 0;
  for (const ir::Line& l : spilled->program.body) allocates += std::holds_alternative<ir::Allocate>(l) ? 1 : 0;
  CHECK(allocates == 1);  // y
  CHECK(ir::verify(spilled->program).empty());

  auto plain = plan_arena(p, {.spill = false});
  REQUIRE(plain);
  CHECK(plain->stats.peak_bytes == 57344);
  CHECK(plain->stats.pool_bytes == 49152);
}
