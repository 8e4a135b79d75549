// Tests of include/wrapir/pass/pools.hpp: Inductor's pool tree on small
// cases derived by hand from memory_planning.py's rules (reference §3.4),
// the policies, laws on random traces, and the program rewrite.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>
#include <wrapir/emit/text.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/traces.hpp>

namespace {

using namespace wrapir::pass;
namespace ir = wrapir::ir;
namespace expr = wrapir::expr;

TracedAllocation block(std::string name, std::int64_t bytes, std::size_t begin, std::size_t end, bool is_output = false,
                       std::int32_t device = 0) {
  return TracedAllocation{std::move(name), bytes, begin, end, device, is_output};
}

}  // namespace

TEST_CASE("pools: a smaller block shares a slot in time, padded") {
  // a (1000 B, [0,4)) is placed first (largest). b (500 B, [4,8)) does not
  // overlap it: it becomes a second child of the root TemporalSplit,
  // SpatialSplit(b, Empty(500)). c (300 B, [2,6)) overlaps both children:
  // it cannot go into the root, so the pool grows at the end:
  // TemporalSplit([SpatialSplit(old root, TemporalSplit([c]))]), c at
  // align(max(1000, align(500) + 0)) = align(1000) = 1024.
  const AllocationTrace t{{block("a", 1000, 0, 4), block("b", 500, 4, 8), block("c", 300, 2, 6)}, 8};
  const PoolPlan plan = place_in_pools(t);
  CHECK_FALSE(check_placement(t, plan.placement));
  REQUIRE(plan.placement.arenas.size() == 1);
  CHECK(plan.placement.blocks[0].offset == 0);
  CHECK(plan.placement.blocks[1].offset == 0);
  CHECK(plan.placement.blocks[2].offset == 1024);
  CHECK(plan.placement.arenas[0].bytes == 1024 + 300);
  // Inductor's size hint counts the padding: align(b) + 500 = 1012 > 1000.
  CHECK(plan.size_hints[0] == 1024 + 300);
}

TEST_CASE("pools: a block that overlaps one child goes into its padding") {
  // a (1000, [0,4)), b (400, [4,8)) -> root [a, SpatialSplit(b, Empty(600))];
  // c (200, [5,7)) overlaps only the second child: into the SpatialSplit,
  // left side (b's TemporalSplit) overlaps, so the right side (the Empty
  // slot of 600) takes it, after align(400) = 448.
  const AllocationTrace t{{block("a", 1000, 0, 4), block("b", 400, 4, 8), block("c", 200, 5, 7)}, 8};
  const PoolPlan plan = place_in_pools(t);
  CHECK_FALSE(check_placement(t, plan.placement));
  CHECK(plan.placement.blocks[2].offset == 448);
  CHECK(plan.placement.arenas.size() == 1);
  CHECK(plan.placement.arenas[0].bytes == 1000);  // Max(1000, 448 + 200)
}

TEST_CASE("pools: policies place outputs as Inductor does") {
  const AllocationTrace t{
      {block("o1", 256, 0, 9, true), block("o2", 128, 1, 9, true), block("i1", 512, 0, 3), block("i2", 512, 3, 6)}, 9};
  // intermediates: every output its own pool (smallest output first), then
  // one pool for the intermediates (which share a slot).
  const PoolPlan inter = place_in_pools(t, PoolPolicy::intermediates);
  CHECK_FALSE(check_placement(t, inter.placement));
  REQUIRE(inter.placement.arenas.size() == 3);
  CHECK(inter.placement.blocks[1].arena == 0);  // o2, smaller, first
  CHECK(inter.placement.blocks[0].arena == 1);
  CHECK(inter.placement.blocks[2].arena == 2);
  CHECK(inter.placement.blocks[3].arena == 2);
  CHECK(inter.placement.arenas[2].bytes == 512);
  // outputs: outputs stacked in one pool (the second appended at the end),
  // intermediates cannot enter it (it may not grow and overlaps).
  const PoolPlan outs = place_in_pools(t, PoolPolicy::outputs);
  CHECK_FALSE(check_placement(t, outs.placement));
  REQUIRE(outs.placement.arenas.size() == 2);
  CHECK(outs.placement.blocks[1].offset == 0);
  CHECK(outs.placement.blocks[0].offset == 128);
  CHECK(outs.placement.arenas[0].bytes == 128 + 256);
  // combined: one pool for everything, placed largest first.
  const PoolPlan comb = place_in_pools(t, PoolPolicy::combined);
  CHECK_FALSE(check_placement(t, comb.placement));
  CHECK(comb.placement.arenas.size() == 1);
  // none: pools never grow, so overlapping blocks open new pools.
  const PoolPlan none = place_in_pools(t, PoolPolicy::none);
  CHECK_FALSE(check_placement(t, none.placement));
  CHECK(none.placement.arenas.size() == 3);
}

TEST_CASE("pools: pools are named by device, then creation") {
  const AllocationTrace t{
      {block("x", 64, 0, 2, false, 5), block("y", 128, 0, 2, false, 2), block("z", 64, 0, 2, false, 2)}, 2};
  // Sorted largest first: y (device 2) opens the first pool; x (device 5)
  // the second; z joins y's pool by growing it.
  const PoolPlan plan = place_in_pools(t);
  REQUIRE(plan.placement.arenas.size() == 2);
  CHECK(plan.placement.arenas[0].device == 2);
  CHECK(plan.placement.arenas[1].device == 5);
  CHECK(plan.placement.blocks[2].arena == 0);
  CHECK(plan.placement.blocks[2].offset == 128);
}

TEST_CASE("pools: laws on random traces under every policy") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    CAPTURE(seed);
    const AllocationTrace t = random_trace({.blocks = 10 + 5 * seed,
                                            .steps = 8 + seed,
                                            .min_bytes = 0,
                                            .max_bytes = 1 << 16,
                                            .max_lifetime = 1 + seed % 11,
                                            .devices = static_cast<std::int32_t>(1 + seed % 2),
                                            .output_share = 0.15,
                                            .unaligned_share = 0.5},
                                           seed);
    for (const PoolPolicy policy :
         {PoolPolicy::none, PoolPolicy::intermediates, PoolPolicy::outputs, PoolPolicy::combined}) {
      CAPTURE(pool_policy_name(policy));
      const PoolPlan plan = place_in_pools(t, policy);
      const auto bad = check_placement(t, plan.placement);
      CHECK_MESSAGE(!bad, *bad);
      CHECK(plan.placement.total_bytes() >= max_live_bytes(t));
      if (policy != PoolPolicy::combined) continue;
      // Inductor's law: under `combined` the last pool of a device always
      // grows, so each device has one pool; a second one opens only where
      // the first reached the depth bound (`PoolForest::max_tree_depth`).
      using Forest = wrapir::pass::detail::PoolForest;
      std::vector<PoolBlock> blocks;
      for (const TracedAllocation& a : t.allocations)
        blocks.push_back(
            {a.bytes, static_cast<std::int64_t>(a.begin), static_cast<std::int64_t>(a.end), a.device, a.is_output});
      Forest forest(blocks, policy);
      forest.allocate_all();
      CHECK(forest.pools().size() == plan.placement.arenas.size());
      std::map<std::int32_t, std::size_t> previous;
      for (std::size_t k = 0; k < forest.pools().size(); ++k) {
        const Forest::Pool& pool = forest.pools()[k];
        if (const auto it = previous.find(pool.device); it != previous.end())
          CHECK(forest.pools()[it->second].height + 2 > Forest::max_tree_depth);
        previous[pool.device] = k;
      }
    }
  }
}

TEST_CASE("plan_pools: a small program, golden lines") {
  ir::Program p{"prog"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const expr::Expr s0 = b.size_symbol("s0", 100);
  const ir::KernelId k =
      b.triton_kernel("k", "@triton.jit\ndef k(in_ptr0, out_ptr0):\n    pass\n", "in_ptr0: *fp32, out_ptr0: *fp32");
  const ir::BufferId x = b.input("arg0_1", {s0}, wrapir::f32);
  const ir::BufferId buf0 = b.empty({s0}, wrapir::f32);
  b.call(k, {x, buf0});
  const ir::BufferId buf1 = b.empty({ctx.integer(10)}, wrapir::f32);
  b.call(k, {buf0, buf1});
  const ir::BufferId buf2 = b.empty({s0}, wrapir::f32);
  b.call(k, {buf1, buf2}, {.free_after = {buf0, buf1}});
  b.output(buf2);
  const auto planned = plan_pools(p);
  REQUIRE(planned);
  const ir::Program& q = planned.value().program;
  CHECK(ir::verify(q).empty());
  // Runs of memory lines: buf0 lives over steps [1, 4], buf1 [2, 4], and
  // the output buf2 [3, 5]. buf2 gets a pool of its own (pool0, created
  // first); buf0 overlaps it and opens pool1; buf1 overlaps both, so pool1
  // (the last, growable) takes it at its end, after align(4*s0) (printed
  // `align(x)`: Inductor's align rounds to 64).
  REQUIRE(q.pools.size() == 2);
  CHECK(q.pools[0].name == "pool0");
  CHECK(q.pools[1].name == "pool1");
  CHECK(expr::to_string(q.pools[0].size_bytes) == "4*s0");
  CHECK(expr::to_string(q.pools[1].size_bytes) == "align(4*s0) + 40");
  std::string kinds;
  for (const ir::Line& l : q.body) kinds += std::string(ir::kind_name(l)) + " ";
  CHECK(kinds ==
        "KernelDefinition PoolCreate AllocFromPool KernelCall AllocFromPool KernelCall PoolCreate AllocFromPool "
        "KernelCall DeallocFromPool DeallocFromPool ");
  CHECK(std::get<ir::PoolCreate>(q.body[1]).pool.index == 1);
  CHECK(expr::to_string(std::get<ir::AllocFromPool>(q.body[4]).offset_bytes) == "align(4*s0)");
  CHECK_FALSE(std::get<ir::DeallocFromPool>(q.body[9]).releases_pool);
  CHECK(std::get<ir::DeallocFromPool>(q.body[10]).releases_pool);
  CHECK(planned.value().stats.pools == 2);
}

TEST_CASE("plan_pools: planned corpus programs verify, under every policy") {
  const auto corpus = trace_corpus(3);
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    if (corpus[i].trace.allocations.size() > 200) continue;  // keeps the debug build quick
    CAPTURE(corpus[i].name);
    for (const bool symbolic : {false, true}) {
      const ir::Program p = program_from_trace(corpus[i].trace, {.symbolic = symbolic});
      for (const PoolPolicy policy :
           {PoolPolicy::none, PoolPolicy::intermediates, PoolPolicy::outputs, PoolPolicy::combined}) {
        const auto planned = plan_pools(p, {.policy = policy});
        REQUIRE(planned);
        const auto findings = ir::verify(planned.value().program);
        CHECK(findings.empty());
        if (!findings.empty()) MESSAGE(ir::to_string(findings.front()));
        CHECK(planned.value().stats.peak_bytes >= planned.value().stats.lower_bound_bytes);
      }
    }
  }
}

TEST_CASE("plan_pools: a bad prefix is a diagnostic") {
  ir::Program p{"prog"};
  const auto planned = plan_pools(p, {.name_prefix = "1x"});
  REQUIRE_FALSE(planned);
  CHECK(planned.error().message.find("unusable") != std::string::npos);
}

namespace {

/// Places `blocks` with both searches and requires the same trees' results:
/// offsets, pools, sizes, hints and naming order.
void check_searches_agree(const std::vector<PoolBlock>& blocks, PoolPolicy policy) {
  using Forest = wrapir::pass::detail::PoolForest;
  Forest indexed(blocks, policy, Forest::Search::indexed), linear(blocks, policy, Forest::Search::linear);
  indexed.allocate_all();
  linear.allocate_all();
  REQUIRE(indexed.pools().size() == linear.pools().size());
  CHECK(indexed.pool_order() == linear.pool_order());
  for (std::size_t k = 0; k < indexed.pools().size(); ++k) {
    CHECK(indexed.hint_of_pool(k) == linear.hint_of_pool(k));
    const auto a = indexed.ranges_of_pool(k).to_vector();
    const auto b = linear.ranges_of_pool(k).to_vector();
    REQUIRE(a.size() == b.size());
    for (std::size_t r = 0; r < a.size(); ++r) CHECK((a[r].begin == b[r].begin && a[r].end == b[r].end));
  }
  wrapir::pass::detail::IntSizes sizes{&blocks};
  std::vector<std::int64_t> offsets_a, offsets_b;
  std::vector<std::size_t> pool_a, pool_b;
  CHECK(indexed.finalize(sizes, offsets_a, pool_a) == linear.finalize(sizes, offsets_b, pool_b));
  CHECK(offsets_a == offsets_b);
  CHECK(pool_a == pool_b);
}

std::vector<PoolBlock> pool_blocks(const AllocationTrace& t) {
  std::vector<PoolBlock> blocks;
  for (const TracedAllocation& a : t.allocations)
    blocks.push_back(
        {a.bytes, static_cast<std::int64_t>(a.begin), static_cast<std::int64_t>(a.end), a.device, a.is_output});
  return blocks;
}

}  // namespace

TEST_CASE("pools: the indexed search places every block where Inductor's scans do") {
  // Nodes with at least 16 children are indexed, and pools are skipped by
  // the finder: both only ever skip a refusal, so the plans are the same.
  std::vector<std::pair<std::string, AllocationTrace>> traces;
  traces.emplace_back("chain", chain_trace({.blocks = 3000}, 1));
  traces.emplace_back("chain_const", chain_trace({.blocks = 2000, .min_bytes = 4096, .max_bytes = 4096}, 2));
  traces.emplace_back("fan_out", fan_out_trace({.blocks = 3000, .fan = 12}, 3));
  traces.emplace_back("transformer", transformer_trace({.layers = 40, .training = true}, 4));
  for (std::uint64_t seed = 0; seed < 12; ++seed)
    traces.emplace_back("random" + std::to_string(seed),
                        random_trace({.blocks = 400 + 100 * seed,
                                      .min_bytes = 1,
                                      .max_bytes = seed % 2 ? 4096 : std::int64_t{1} << 24,
                                      .max_lifetime = 2 + 7 * seed,
                                      .devices = static_cast<std::int32_t>(1 + seed % 3),
                                      .output_share = 0.05 * static_cast<double>(seed % 4),
                                      .unaligned_share = 0.4},
                                     seed));
  for (const auto& entry : traces) {
    // Not a structured binding: CAPTURE uses a lambda, and clang 14 cannot capture those.
    const std::string& name = entry.first;
    const AllocationTrace& t = entry.second;
    CAPTURE(name);
    for (const PoolPolicy policy :
         {PoolPolicy::none, PoolPolicy::intermediates, PoolPolicy::outputs, PoolPolicy::combined}) {
      CAPTURE(pool_policy_name(policy));
      check_searches_agree(pool_blocks(t), policy);
    }
  }
}

TEST_CASE("pools: the indexed search agrees on empty live ranges and shared begins") {
  // Program-level blocks may live over [t, t] (one memory line), which
  // overlaps a block only strictly inside it; many of them at few steps
  // stress the index's points and its merging.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    CAPTURE(seed);
    SplitMix64 rng(seed);
    std::vector<PoolBlock> blocks;
    const std::int64_t steps = 6 + static_cast<std::int64_t>(seed);
    for (int i = 0; i < 300; ++i) {
      const std::int64_t begin = rng.uniform(0, steps);
      const std::int64_t end = rng.unit() < 0.4 ? begin : std::min(steps + 1, begin + rng.uniform(1, 4));
      blocks.push_back({64 * rng.uniform(1, 4), begin, end, 0, rng.unit() < 0.05});
    }
    for (const PoolPolicy policy : {PoolPolicy::intermediates, PoolPolicy::combined})
      check_searches_agree(blocks, policy);
  }
}

TEST_CASE("pools: the finder returns the first pool not surely refusing, as a scan does") {
  using wrapir::pass::detail::PoolFinder;
  SplitMix64 rng(7);
  PoolFinder finder;
  std::vector<PoolFinder::Summary> pools;
  const auto refuses = [](const PoolFinder::Summary& s, std::int64_t size, std::int64_t begin, std::int64_t end) {
    return s.size < size || (s.lo < end && s.hi > begin);
  };
  for (int round = 0; round < 400; ++round) {
    PoolFinder::Summary s{rng.uniform(0, 100)};
    if (rng.unit() < 0.7) {
      s.lo = rng.uniform(0, 50);
      s.hi = s.lo + rng.uniform(1, 20);
    }
    if (pools.empty() || rng.unit() < 0.5) {
      pools.push_back(s);
      finder.push(s);
    } else {
      const auto k = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(pools.size()) - 1));
      pools[k] = s;
      finder.set(k, s);
    }
    REQUIRE(finder.size() == pools.size());
    for (int q = 0; q < 20; ++q) {
      const std::int64_t size = rng.uniform(0, 110), begin = rng.uniform(0, 60), end = begin + rng.uniform(0, 10);
      const auto from = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(pools.size())));
      const auto limit = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(pools.size())));
      std::size_t expected = limit;
      for (std::size_t k = from; k < limit; ++k)
        if (!refuses(pools[k], size, begin, end)) {
          expected = k;
          break;
        }
      CHECK(finder.next(from, limit, size, begin, end) == expected);
    }
  }
}

TEST_CASE("plan_pools: a chain of 20k buffers with symbolic sizes plans") {
  // A chain of 20k buffers, every other one symbolic: the pool size
  // expressions once nested one level per block and failed past 512 levels.
  const AllocationTrace t = chain_trace({.blocks = 20'000}, 5);
  const ir::Program p = program_from_trace(t, {.symbolic = true});
  const auto planned = plan_pools(p);
  REQUIRE_MESSAGE(planned, planned.error().message);
  CHECK(planned.value().stats.peak_bytes >= planned.value().stats.lower_bound_bytes);
}

TEST_CASE("pools: size hints near 2^63 are a diagnostic, not an overflow") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  // b overlaps a, so the pool grows at its end: align(a) + b, past 2^63.
  const AllocationTrace both{{block("a", (std::int64_t{1} << 62) + 1, 0, 2), block("b", (std::int64_t{1} << 62) + 1, 1, 3)},
                             3};
  CHECK_THROWS_WITH_AS((void)place_in_pools(both), doctest::Contains("exceeds 2^63"), std::invalid_argument);
  // Rounding a hint within 63 bytes of 2^63 up to 64 bytes overflows alone.
  const AllocationTrace huge{{block("a", max - 10, 0, 2), block("b", 64, 1, 3)}, 3};
  CHECK_THROWS_WITH_AS((void)place_in_pools(huge), doctest::Contains("exceeds 2^63"), std::invalid_argument);
  // Just below: two blocks of 2^61 bytes fit (2^62 together).
  const AllocationTrace fits{{block("a", std::int64_t{1} << 61, 0, 2), block("b", std::int64_t{1} << 61, 1, 3)}, 3};
  const PoolPlan plan = place_in_pools(fits);
  CHECK_FALSE(check_placement(fits, plan.placement));
  CHECK(plan.placement.total_bytes() == std::int64_t{1} << 62);
}

TEST_CASE("plan_pools: buffers whose pool exceeds 2^63 bytes are a diagnostic") {
  ir::Program p{"prog"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const ir::KernelId k =
      b.triton_kernel("k", "@triton.jit\ndef k(in_ptr0, out_ptr0):\n    pass\n", "in_ptr0: *fp32, out_ptr0: *fp32");
  // Two float32 buffers of 2^60 elements (2^62 bytes each), live together.
  const ir::BufferId x = b.empty({ctx.integer(std::int64_t{1} << 60)}, wrapir::f32);
  const ir::BufferId y = b.empty({ctx.integer(std::int64_t{1} << 60)}, wrapir::f32);
  b.call(k, {x, y}, {.free_after = {x, y}});
  const auto planned = plan_pools(p);
  REQUIRE_FALSE(planned);
  CHECK(planned.error().message.find("exceeds 2^63") != std::string::npos);
}
