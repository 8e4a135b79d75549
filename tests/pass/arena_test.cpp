// Tests of include/wrapir/pass/arena.hpp: laws on random traces (every
// placement checks, the peak is at least the lower bound, symbolic offsets
// are safe at any binding), quality on the corpus against the lower bound
// and the pool planner, and the program rewrite.

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/traces.hpp>

namespace {

using namespace wrapir::pass;
namespace ir = wrapir::ir;
namespace expr = wrapir::expr;

/// The arena placement must check and respect the lower bound per device.
void check_laws(const AllocationTrace& t, const ArenaOptions& options = {}) {
  const ArenaPlan plan = place_in_arenas(t, options);
  const auto bad = check_placement(t, plan.placement, options.alignment);
  CHECK_MESSAGE(!bad, *bad);
  const auto bounds = max_live_bytes_per_device(t);
  for (const ArenaExtent& a : plan.placement.arenas) {
    const auto it = bounds.find(a.device);
    CHECK(a.bytes >= (it == bounds.end() ? 0 : it->second));
  }
  CHECK(plan.placement.total_bytes() >= max_live_bytes(t));
}

}  // namespace

TEST_CASE("arena: small cases pack as best fit says") {
  // a and b overlap in time; c fits in the gap left by d below b.
  const AllocationTrace t{{{"a", 256, 0, 4, 0, false}, {"b", 128, 2, 6, 0, false}, {"c", 100, 4, 8, 0, false}}, 8};
  CHECK(place_in_arenas(t).placement.total_bytes() == 384);
  // The offsets are those of the size order (the default tries `conflict`
  // first, which reaches the same 384 bytes with b below a).
  const ArenaPlan plan = place_in_arenas(t, {.orders = {ArenaOrder::size}});
  CHECK_FALSE(check_placement(t, plan.placement));
  CHECK(plan.placement.total_bytes() == 384);
  CHECK(plan.placement.blocks[0].offset == 0);
  CHECK(plan.placement.blocks[1].offset == 256);
  CHECK(plan.placement.blocks[2].offset == 0);  // a is dead by then
  // Two devices: two arenas, in device order.
  const AllocationTrace two{{{"x", 64, 0, 2, 3, false}, {"y", 64, 0, 2, 1, false}}, 2};
  const ArenaPlan p2 = place_in_arenas(two);
  REQUIRE(p2.placement.arenas.size() == 2);
  CHECK(p2.placement.arenas[0].device == 1);
  CHECK(p2.placement.arenas[1].device == 3);
  CHECK(p2.placement.blocks[0].arena == 1);
  // Empty traces and zero-byte blocks.
  CHECK(place_in_arenas(AllocationTrace{}).placement.arenas.empty());
  check_laws(AllocationTrace{{{"z", 0, 0, 3, 0, false}, {"w", 64, 1, 2, 0, false}}, 3});
}

TEST_CASE("arena: bad input is rejected with a reason") {
  CHECK_THROWS_WITH_AS((void)place_in_arenas(AllocationTrace{{{"a", 64, 2, 2, 0, false}}, 3}),
                       "arena planner: block 0 (a) has the empty live range [2, 2); a block must live for at least "
                       "one time step",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)place_in_arenas(AllocationTrace{{{"a", 64, 0, 1, 0, false}}, 1}, {.alignment = 48}),
                       "arena planner: the alignment 48 is not a positive power of two", std::invalid_argument);
  CHECK_THROWS_AS((void)place_in_arenas(AllocationTrace{{{"a", INT64_MAX - 10, 0, 1, 0, false}}, 1}),
                  std::invalid_argument);
  CHECK_THROWS_AS(
      (void)place_in_arenas(AllocationTrace{
          {{"a", INT64_MAX / 2, 0, 1, 0, false}, {"b", INT64_MAX / 2, 0, 1, 0, false}, {"c", 4096, 0, 1, 0, false}},
          1}),
      std::invalid_argument);
}

TEST_CASE("arena: laws on random traces, every order alone and together") {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    CAPTURE(seed);
    const AllocationTrace t = random_trace({.blocks = 20 + 7 * seed,
                                            .steps = 10 + seed,
                                            .min_bytes = 0,
                                            .max_bytes = 1 << 20,
                                            .max_lifetime = 1 + seed % 13,
                                            .devices = static_cast<std::int32_t>(1 + seed % 3),
                                            .output_share = 0.1,
                                            .unaligned_share = 0.5},
                                           seed);
    check_laws(t);
    for (const ArenaOrder o : all_arena_orders) check_laws(t, {.orders = {o}, .improvement_rounds = 0});
    check_laws(t, {.alignment = 256});
    check_laws(t, {.work_limit = 10});  // later orders abandoned, still valid
  }
}

TEST_CASE("arena: on the corpus, near the lower bound and never worse than the pool planner") {
  double ratio_sum = 0;
  const auto corpus = trace_corpus();
  for (const NamedTrace& n : corpus) {
    CAPTURE(n.name);
    const ArenaPlan plan = place_in_arenas(n.trace);
    CHECK_FALSE(check_placement(n.trace, plan.placement));
    const std::int64_t arena = plan.placement.total_bytes();
    ratio_sum += static_cast<double>(arena) / static_cast<double>(max_live_bytes(n.trace));
    for (const PoolPolicy policy :
         {PoolPolicy::none, PoolPolicy::intermediates, PoolPolicy::outputs, PoolPolicy::combined})
      CHECK(arena <= place_in_pools(n.trace, policy).placement.total_bytes());
  }
  CHECK(ratio_sum / static_cast<double>(corpus.size()) <= 1.02);
}

/// Per device, the max-live bound of the sizes rounded up to `alignment`:
/// what the adaptive stop measures a packing against.
std::map<std::int32_t, std::int64_t> aligned_bound_per_device(const AllocationTrace& t, std::int64_t alignment) {
  AllocationTrace aligned = t;
  for (TracedAllocation& a : aligned.allocations) a.bytes = (a.bytes + alignment - 1) / alignment * alignment;
  return max_live_bytes_per_device(aligned);
}

TEST_CASE("arena: the adaptive stop gives up at most stop_within and never beats the first order's packing") {
  std::size_t stopped_early = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    CAPTURE(seed);
    const AllocationTrace t = random_trace({.blocks = 50 + 13 * seed,
                                            .steps = 20 + 3 * seed,
                                            .min_bytes = 1,
                                            .max_bytes = std::int64_t{1} << (10 + seed % 12),
                                            .max_lifetime = 1 + seed % 17,
                                            .devices = static_cast<std::int32_t>(1 + seed % 2),
                                            .output_share = 0.1,
                                            .unaligned_share = 0.5},
                                           seed);
    const ArenaPlan adaptive = place_in_arenas(t);
    const ArenaPlan exhaustive = place_in_arenas(t, {.stop_within = 0});
    const ArenaPlan first = place_in_arenas(t, {.orders = {all_arena_orders[0]}, .improvement_rounds = 0});
    CHECK_FALSE(check_placement(t, adaptive.placement));
    // Per arena: never worse than the first order alone, and when the
    // search stopped before the end, within 0.1% of the aligned bound.
    const auto bound = aligned_bound_per_device(t, planner_alignment);
    REQUIRE(adaptive.placement.arenas.size() == first.placement.arenas.size());
    for (std::size_t k = 0; k < adaptive.placement.arenas.size(); ++k) {
      const std::int64_t bytes = adaptive.placement.arenas[k].bytes;
      CHECK(bytes <= first.placement.arenas[k].bytes);
      if (bytes > exhaustive.placement.arenas[k].bytes)
        CHECK(static_cast<double>(bytes) <= 1.001 * static_cast<double>(bound.at(adaptive.placement.arenas[k].device)));
    }
    if (adaptive.orders_completed < exhaustive.orders_completed) ++stopped_early;
    // Deterministic: the same plan twice.
    const ArenaPlan again = place_in_arenas(t);
    for (std::size_t i = 0; i < t.allocations.size(); ++i)
      CHECK(again.placement.blocks[i].offset == adaptive.placement.blocks[i].offset);
    CHECK(again.chosen == adaptive.chosen);
  }
  CHECK(stopped_early > 0);  // the property above was exercised
  // A tolerance that everything meets: one packing per device, the first
  // order's.
  const AllocationTrace t = random_trace({.blocks = 300, .devices = 2}, 7);
  const ArenaPlan one = place_in_arenas(t, {.stop_within = 1e9});
  CHECK(one.orders_completed == one.placement.arenas.size());
  CHECK(one.improvement_rounds == 0);
  const ArenaPlan first = place_in_arenas(t, {.orders = {all_arena_orders[0]}, .improvement_rounds = 0});
  for (std::size_t i = 0; i < t.allocations.size(); ++i)
    CHECK(one.placement.blocks[i].offset == first.placement.blocks[i].offset);
}

TEST_CASE("arena: a bad stop_within is rejected with a reason") {
  const AllocationTrace t{{{"a", 64, 0, 1, 0, false}}, 1};
  CHECK_THROWS_WITH_AS((void)place_in_arenas(t, {.stop_within = -0.5}),
                       "arena planner: stop_within must be a finite non-negative fraction, not -0.500000",
                       std::invalid_argument);
  CHECK_THROWS_AS((void)place_in_arenas(t, {.stop_within = std::numeric_limits<double>::quiet_NaN()}),
                  std::invalid_argument);
  CHECK_THROWS_AS((void)place_in_arenas(t, {.stop_within = std::numeric_limits<double>::infinity()}),
                  std::invalid_argument);
}

TEST_CASE("arena: sparse time steps plan exactly as dense ones") {
  // Dense steps are ranked through a table, sparse ones by sorting: the
  // same trace with its times spread out must get the same plan.
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    CAPTURE(seed);
    const AllocationTrace dense =
        random_trace({.blocks = 200 + 50 * seed, .devices = static_cast<std::int32_t>(1 + seed % 2)}, seed);
    AllocationTrace sparse = dense;
    const std::size_t spread = 1'000'003;
    for (TracedAllocation& a : sparse.allocations) {
      a.begin = a.begin * spread + seed;
      a.end = a.end * spread + seed;
    }
    sparse.steps = dense.steps * spread + seed + 1;
    const ArenaPlan d = place_in_arenas(dense), s = place_in_arenas(sparse);
    CHECK_FALSE(check_placement(sparse, s.placement));
    CHECK(s.placement.total_bytes() == d.placement.total_bytes());
    for (std::size_t i = 0; i < dense.allocations.size(); ++i)
      CHECK(s.placement.blocks[i].offset == d.placement.blocks[i].offset);
  }
}

TEST_CASE("arena: symbolic offsets are safe at every binding") {
  for (std::uint64_t seed = 0; seed < 25; ++seed) {
    CAPTURE(seed);
    expr::Context ctx;
    const expr::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
    const std::int64_t h0 = 16, h1 = 100;
    AllocationTrace t = random_trace({.blocks = 40, .steps = 30, .max_lifetime = 12, .devices = 2}, seed);
    std::vector<expr::Expr> sizes;
    SplitMix64 rng(seed);
    // Programs have few distinct sizes: then the symbolic plan is at most
    // the hint plan at the hints. With many, it is still safe.
    const bool few_sizes = seed % 2 == 0;
    for (TracedAllocation& a : t.allocations) {
      // Sizes k*s0, k*s1 + c, or static, with their values at the hints.
      const std::int64_t k = few_sizes ? std::int64_t{1} << rng.uniform(0, 2) : rng.uniform(1, 64);
      const std::int64_t c = few_sizes ? 0 : rng.uniform(0, 200);
      switch (rng.uniform(0, 2)) {
        case 0:
          sizes.push_back(expr::mul(ctx.integer(k), s0));
          a.bytes = k * h0;
          break;
        case 1:
          sizes.push_back(expr::add(expr::mul(ctx.integer(k), s1), ctx.integer(c)));
          a.bytes = k * h1 + c;
          break;
        default:
          sizes.push_back(ctx.integer(a.bytes % 100000));
          a.bytes %= 100000;
          break;
      }
      if (a.bytes == 0) sizes.back() = ctx.integer(0);
    }
    const ArenaPlan plan = place_in_arenas(t);
    const SymbolicPlacement sym = symbolic_placement(t, plan.placement, sizes);
    for (const auto& values : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {h0, h1}, {1, 1}, {3, 7}, {h0, 1000}, {1000, h1}, {5000, 3}, {h0 - 1, h1 + 1}}) {
      const std::int64_t v0 = values.first, v1 = values.second;
      CAPTURE(v0);
      CAPTURE(v1);
      expr::Bindings b;
      b.set(s0, v0).set(s1, v1);
      AllocationTrace at = t;
      for (std::size_t i = 0; i < at.allocations.size(); ++i) at.allocations[i].bytes = expr::eval(sizes[i], b).value();
      const auto placed = evaluate(sym, b);
      REQUIRE(placed);
      const auto bad = check_placement(at, placed.value());
      CHECK_MESSAGE(!bad, *bad);
      const bool exceeds = needs_replan(t, sizes, b).value();
      CHECK(exceeds == (v0 > h0 || v1 > h1));
      if (!exceeds && few_sizes) CHECK(placed.value().total_bytes() <= plan.placement.total_bytes());
    }
    // At the hints the symbolic plan is the hint plan or better.
    expr::Bindings hints;
    hints.set(s0, h0).set(s1, h1);
    if (few_sizes) CHECK(evaluate(sym, hints).value().total_bytes() <= plan.placement.total_bytes());
    // Expressions stay small: a few forms per offset.
    for (const expr::Expr& o : sym.offsets) CHECK(expr::to_string(o).size() < 2000);
  }
}

TEST_CASE("arena: symbolic_placement rejects what it cannot make safe") {
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0");
  const AllocationTrace t{{{"a", 0, 0, 2, 0, false}, {"b", 64, 0, 2, 0, false}}, 2};
  const ArenaPlan plan = place_in_arenas(t);
  const std::vector<expr::Expr> sizes{s0, ctx.integer(64)};
  CHECK_THROWS_WITH_AS((void)symbolic_placement(t, plan.placement, sizes),
                       "symbolic_placement: block a has 0 bytes at the hints but the size s0", std::invalid_argument);
  const std::vector<expr::Expr> one{ctx.integer(64)};
  CHECK_THROWS_AS((void)symbolic_placement(t, plan.placement, one), std::invalid_argument);
}

TEST_CASE("plan_arena rewrites a program into one arena per device") {
  const AllocationTrace t = random_trace({.blocks = 120, .devices = 2}, 11);
  for (const bool symbolic : {false, true}) {
    CAPTURE(symbolic);
    const ir::Program p = program_from_trace(t, {.symbolic = symbolic});
    const auto planned = plan_arena(p);
    REQUIRE(planned);
    const ir::Program& q = planned.value().program;
    const auto findings = ir::verify(q);
    CHECK(findings.empty());
    for (const auto& f : findings) MESSAGE(ir::to_string(f));
    CHECK(q.pools.size() == 2);
    CHECK(q.pools[0].name == "arena0");
    CHECK(planned.value().stats.arenas == 2);
    CHECK(planned.value().stats.pools == 2);
    std::size_t allocs = 0, creates = 0;
    for (const ir::Line& l : q.body) {
      allocs += std::holds_alternative<ir::Allocate>(l);
      creates += std::holds_alternative<ir::PoolCreate>(l);
    }
    CHECK(allocs == 0);
    CHECK(creates == 2);
    CHECK(planned.value().stats.peak_bytes >= planned.value().stats.lower_bound_bytes);
    if (!symbolic) {
      // Static sizes fold: every offset and pool size is an integer.
      for (const ir::PoolDecl& d : q.pools) CHECK(d.size_bytes.is_integer());
      // The arena is near the bound; the reuse planner cannot do better.
      CHECK(planned.value().stats.peak_bytes <= plan_pools(p).value().stats.peak_bytes);
    }
  }
}

TEST_CASE("plan_arena picks fresh names and rejects a bad prefix") {
  ir::Program p{"prog"};
  ir::Builder b{p};
  const ir::KernelId k = b.triton_kernel("arena0", "@triton.jit\ndef k(in_ptr0):\n    pass\n", "in_ptr0: *u8");
  const ir::BufferId x = b.empty({p.ctx().integer(100)}, ir::DType::uint8);
  b.call(k, {x});
  b.free({x});
  const auto planned = plan_arena(p);
  REQUIRE(planned);
  REQUIRE(planned.value().program.pools.size() == 1);
  CHECK(planned.value().program.pools[0].name == "arena1");
  CHECK(ir::verify(planned.value().program).empty());
  const auto bad = plan_arena(p, {.name_prefix = "bad name"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("unusable") != std::string::npos);
}
