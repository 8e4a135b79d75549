// Tests of the planners' in-place overloads (plan_arena(Program&&),
// plan_pools(Program&&)) and of the pool tree's depth bound
// (pass/detail/pool_forest.hpp): regressions of issue 12 §4.

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include <wrapir/emit/text.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/traces.hpp>

using namespace wrapir::pass;
namespace ir = wrapir::ir;

TEST_CASE("plan_arena and plan_pools: planning in place gives the plan of a copy") {
  const auto corpus = trace_corpus(5);
  for (const NamedTrace& named : corpus) {
    if (named.trace.allocations.size() > 300) continue;  // keeps the debug build quick
    CAPTURE(named.name);
    for (const bool symbolic : {false, true}) {
      const ir::Program p = program_from_trace(named.trace, {.symbolic = symbolic});
      const auto copied = plan_arena(p);
      const auto moved = plan_arena(ir::Program(p));
      REQUIRE(copied);
      REQUIRE(moved);
      CHECK(wrapir::text::to_text(moved.value().program) == wrapir::text::to_text(copied.value().program));
      CHECK(moved.value().stats == copied.value().stats);
      // The statistics are those measure_plan gives against the original.
      const auto measured = measure_plan(p, moved.value().program);
      REQUIRE(measured);
      CHECK(measured.value().peak_bytes == moved.value().stats.peak_bytes);
      CHECK(measured.value().lower_bound_bytes == moved.value().stats.lower_bound_bytes);
      CHECK(ir::verify(moved.value().program).empty());
      const auto pools_copied = plan_pools(p);
      const auto pools_moved = plan_pools(ir::Program(p));
      REQUIRE(pools_copied);
      REQUIRE(pools_moved);
      CHECK(wrapir::text::to_text(pools_moved.value().program) ==
            wrapir::text::to_text(pools_copied.value().program));
      CHECK(pools_moved.value().stats == pools_copied.value().stats);
    }
  }
}

TEST_CASE("pools: blocks that all overlap stay within the depth bound and plan quickly") {
  // Every block overlaps every other: Inductor appends each at the end of
  // the last pool, one level deeper each time (20k blocks took 86 s, 200k
  // overflowed the stack). A pool's tree starts 2 levels deep and each
  // block appended at its end adds 2, so a pool takes max_tree_depth / 2
  // blocks before a new one opens; full pools refuse at once.
  for (const std::size_t n : {std::size_t{50}, std::size_t{3000}}) {
    AllocationTrace t;
    for (std::size_t i = 0; i < n; ++i)
      t.allocations.push_back(TracedAllocation{"b" + std::to_string(i), std::int64_t(1000 + i % 7), 0, 1, 0, false});
    t.steps = 1;
    const PoolPlan plan = place_in_pools(t);
    CHECK_FALSE(check_placement(t, plan.placement));
    const std::size_t bound = wrapir::pass::detail::PoolForest::max_tree_depth;
    CHECK(plan.placement.arenas.size() == (n + bound / 2 - 1) / (bound / 2));
  }
}
