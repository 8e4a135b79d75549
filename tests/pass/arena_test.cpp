// Tests of include/wrapir/pass/arena.hpp: laws on random traces (every
// placement checks, the peak is at least the lower bound, symbolic offsets
// are safe at any binding), quality on the corpus against the lower bound
// and the pool planner, and the program rewrite.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/query.hpp>
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

TEST_CASE("arena: small blocks of fixed size share aligned slots") {
  // deep_mlp's pattern: an 8 KiB block beside two 32-byte ones. Each small
  // one used to take a 64-byte slot (8320 bytes); together they fill one.
  AllocationTrace t{{{"big", 8192, 0, 3, 0, false}, {"s1", 32, 0, 3, 0, false}, {"s2", 32, 1, 3, 0, false}}, 3};
  ArenaPlan plan = place_in_arenas(t);
  CHECK_FALSE(check_placement(t, plan.placement));
  CHECK(plan.placement.total_bytes() == 8256);
  for (const BlockPlacement& b : plan.placement.blocks) CHECK(b.offset % 32 == 0);
  // Sizes only at the hints keep the whole alignment.
  for (TracedAllocation& a : t.allocations) a.fixed_size = false;
  plan = place_in_arenas(t);
  CHECK_FALSE(check_placement(t, plan.placement));
  CHECK(plan.placement.total_bytes() == 8288);  // the top block counts its own 32 bytes
  // The alignment of a block: its size's power of two, 16 at least, the
  // planner's at most; the planner's for large blocks and hint sizes.
  const auto own = [](std::int64_t bytes, bool fixed = true, std::int64_t alignment = 64) {
    return block_alignment(TracedAllocation{"x", bytes, 0, 1, 0, false, fixed}, alignment);
  };
  CHECK(own(1) == 16);
  CHECK(own(16) == 16);
  CHECK(own(17) == 32);
  CHECK(own(33) == 64);
  CHECK(own(64) == 64);
  CHECK(own(100000) == 64);
  CHECK(own(8, false) == 64);
  CHECK(own(8, true, 8) == 8);
  CHECK(own(20, true, 256) == 32);
  CHECK(own(20, true, 48) == 48);  // not a power of two: no smaller one
  // A 64-byte block above small ones starts on a multiple of 64, never in
  // the 32 bytes a 16-byte block leaves free in a slot.
  const AllocationTrace mixed{{{"a", 16, 0, 4, 0, false}, {"b", 64, 1, 4, 0, false}, {"c", 16, 2, 4, 0, false},
                               {"d", 32, 3, 4, 0, false}},
                              4};
  for (const ArenaOrder o : all_arena_orders) {
    CAPTURE(arena_order_name(o));
    const ArenaPlan p = place_in_arenas(mixed, {.orders = {o}, .improvement_rounds = 0});
    CHECK_FALSE(check_placement(mixed, p.placement));
    CHECK(p.placement.blocks[1].offset % 64 == 0);
    CHECK(p.placement.total_bytes() == 128);
  }
}

TEST_CASE("check_placement: each block at its own alignment") {
  const AllocationTrace t{{{"s", 32, 0, 1, 0, false}, {"b", 64, 0, 1, 0, false}, {"odd", 20, 0, 1, 0, false}}, 1};
  Placement p{{{0, 32}, {0, 64}, {0, 0}}, {{0, 128}}};
  CHECK_FALSE(check_placement(t, p));
  p.blocks[1].offset = 96;
  CHECK(check_placement(t, p) == "block 1 (b) has the offset 96, which is not a multiple of 64");
  p.blocks[1].offset = 64;
  p.blocks[2].offset = 16;
  CHECK(check_placement(t, p) == "block 2 (odd) has the offset 16, which is not a multiple of 32");
  AllocationTrace hinted = t;
  hinted.allocations[0].fixed_size = false;
  p.blocks[2].offset = 0;
  CHECK(check_placement(hinted, p) == "block 0 (s) has the offset 32, which is not a multiple of 64");
}

TEST_CASE("arena: laws and plain best fit on traces of small blocks") {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    CAPTURE(seed);
    AllocationTrace t = random_trace({.blocks = 30 + 20 * seed,
                                      .steps = 8 + seed,
                                      .min_bytes = 1,
                                      .max_bytes = seed % 2 == 0 ? 100 : 300,
                                      .max_lifetime = 1 + seed % 9,
                                      .devices = static_cast<std::int32_t>(1 + seed % 2),
                                      .unaligned_share = 1.0},
                                     seed);
    if (seed % 3 == 2)
      for (std::size_t i = 0; i < t.allocations.size(); i += 3) t.allocations[i].fixed_size = false;
    check_laws(t);
    for (const ArenaOrder o : all_arena_orders) check_laws(t, {.orders = {o}, .improvement_rounds = 0});
    check_laws(t, {.alignment = 256});
    check_laws(t, {.alignment = 8});
  }
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

TEST_CASE("arena: steps past 2^32 - 1 are rejected with a reason") {
  // The arena path numbers steps in 32 bits (pass/detail/arena_blocks.hpp).
  constexpr std::size_t past = std::size_t{1} << 32;
  const AllocationTrace late{{{"a", 64, 0, 1, 0, false}, {"b", 64, past - 2, past, 0, false}}, past};
  CHECK_THROWS_WITH_AS((void)place_in_arenas(late),
                       "arena planner: block 1 (b) ends at step 4294967296; steps are numbered in 32 bits, up to "
                       "2^32 - 1",
                       std::invalid_argument);
  // The last step that can be numbered plans.
  const AllocationTrace last{{{"a", 64, 0, 1, 0, false}, {"b", 64, past - 3, past - 1, 0, false}}, past - 1};
  CHECK(place_in_arenas(last).placement.total_bytes() == 64);
  expr::Context ctx;
  const std::vector<expr::Expr> two{ctx.integer(64), ctx.integer(64)};
  const Placement at_zero{{{0, 0}, {0, 0}}, {{0, 64}}};
  CHECK_THROWS_WITH_AS((void)symbolic_placement(late, at_zero, two),
                       "symbolic_placement: block 1 (b) ends at step 4294967296; steps are numbered in 32 bits, up "
                       "to 2^32 - 1",
                       std::invalid_argument);
}

TEST_CASE("arena: a device past 2^31 units packs with 64-bit ranges, as 32-bit ones would") {
  // Three blocks of 2^36 bytes live together: in 64-byte units the third
  // ends at 3 * 2^30, past the 32-bit ranges, so the narrow packer stops
  // and the planner packs with 64-bit ones.
  constexpr std::int64_t big = std::int64_t{1} << 36;
  const AllocationTrace t{{{"a", big, 0, 3, 0, false}, {"b", big, 1, 3, 0, false}, {"c", big, 2, 3, 0, false},
                           {"d", 64, 3, 4, 0, false}},
                          4};
  std::vector<detail::PackerBlock> blocks;
  for (const TracedAllocation& a : t.allocations) blocks.push_back({a.bytes, a.begin, a.end, 0, 0, 64});
  const std::vector<std::uint32_t> order{0, 1, 2, 3};
  const auto raw = [&](std::uint32_t i) { return blocks[i].size; };
  std::size_t visits = 0;
  detail::NarrowArenaPacker narrow(blocks);
  detail::ArenaPacking packing;
  CHECK_FALSE(narrow.pack(order, raw, SIZE_MAX, packing, visits));
  CHECK(narrow.outgrew_ranges());
  detail::ArenaPacker wide(blocks);
  REQUIRE(wide.pack(order, raw, SIZE_MAX, packing, visits));
  CHECK(packing.offsets == std::vector<std::int64_t>{0, big, 2 * big, 0});
  const ArenaPlan plan = place_in_arenas(t);
  CHECK(plan.placement.arenas[0].bytes == 3 * big);
  CHECK_FALSE(check_placement(t, plan.placement));
  // Just under the limit the narrow packer fits: 2^31 - 1 units of 16 bytes.
  const std::int64_t most = ((std::int64_t{1} << 31) - 1) * 16;
  const std::vector<detail::PackerBlock> edge{{most - 16, 0, 2, 0, 0, 16}, {16, 1, 2, 0, 0, 16}};
  detail::NarrowArenaPacker fits(edge);
  REQUIRE(fits.pack(std::vector<std::uint32_t>{0, 1}, [&](std::uint32_t i) { return edge[i].size; }, SIZE_MAX,
                    packing, visits));
  CHECK(packing.offsets == std::vector<std::int64_t>{0, most - 16});
  CHECK(packing.arena == most);
  // A block whose size alone is past the ranges: the narrow packer cannot
  // hold it, the planner packs it with 64-bit ranges.
  constexpr std::int64_t huge = std::int64_t{1} << 40;
  const std::vector<detail::PackerBlock> alone{{huge, 0, 1, 0, 0, 64}};
  detail::NarrowArenaPacker cannot(alone);
  CHECK_FALSE(cannot.pack(std::vector<std::uint32_t>{0}, [&](std::uint32_t) { return huge; }, SIZE_MAX, packing, visits));
  CHECK(cannot.outgrew_ranges());
  CHECK(place_in_arenas(AllocationTrace{{{"h", huge, 0, 1, 0, false}}, 1}).placement.arenas[0].bytes == huge);
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

namespace {

using PlainRanges = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// Best fit in `order` against every placed block whose lifetime overlaps,
/// found by looking at all of them: what the packer's trees, with their
/// merged lists and path unions, must reproduce exactly.
std::vector<std::int64_t> plain_best_fit(const std::vector<detail::ArenaPacker::Block>& blocks,
                                         const std::vector<std::uint32_t>& order) {
  std::vector<std::int64_t> offsets(blocks.size(), -1);
  std::vector<std::uint32_t> placed;
  for (const std::uint32_t i : order) {
    PlainRanges taken;
    for (const std::uint32_t j : placed)
      if (blocks[j].begin < blocks[i].end && blocks[i].begin < blocks[j].end)
        taken.emplace_back(offsets[j], offsets[j] + blocks[j].size);
    std::sort(taken.begin(), taken.end());
    const std::int64_t align = blocks[i].align;
    const auto aligned = [&](std::int64_t at) { return (at + align - 1) / align * align; };
    std::int64_t top = 0, best = -1, best_gap = INT64_MAX;
    for (const auto& [lo, hi] : taken) {
      const std::int64_t start = aligned(top);
      if (lo > start && lo - start >= blocks[i].size && lo - start < best_gap) {
        best = start;
        best_gap = lo - start;
      }
      top = std::max(top, hi);
    }
    offsets[i] = best >= 0 ? best : aligned(top);
    placed.push_back(i);
  }
  return offsets;
}

/// The distinct begin steps of `blocks`, sorted: the points of the
/// packer's trees.
std::vector<std::size_t> begin_points(const std::vector<detail::ArenaPacker::Block>& blocks) {
  std::vector<std::size_t> points;
  for (const detail::ArenaPacker::Block& b : blocks) points.push_back(b.begin);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

/// The work `ArenaPacker::pack` counts for `order` with the block offsets
/// `offsets`, from plain per-node lists: before each block is placed, the
/// sizes of the cover lists on its first point's path to the root plus
/// those of the start lists of the nodes that decompose its later points.
/// A block goes into the cover lists of the nodes that decompose its
/// points (found top-down here) and into the start lists of its first
/// point's ancestors; a list holds its blocks' byte ranges with touching
/// ones merged.
std::size_t plain_visits(const std::vector<detail::ArenaPacker::Block>& blocks,
                         const std::vector<std::uint32_t>& order, const std::vector<std::int64_t>& offsets) {
  const std::vector<std::size_t> points = begin_points(blocks);
  std::size_t width = 1;
  while (width < points.size()) width *= 2;
  const auto rank = [&](std::size_t t) {
    return static_cast<std::size_t>(std::lower_bound(points.begin(), points.end(), t) - points.begin());
  };
  std::vector<PlainRanges> cover(2 * width), starts(2 * width);
  const auto add = [](PlainRanges& list, std::int64_t lo, std::int64_t hi) {
    list.emplace_back(lo, hi);
    std::sort(list.begin(), list.end());
    PlainRanges merged;
    for (const auto& r : list) {
      if (!merged.empty() && r.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, r.second);
      else
        merged.push_back(r);
    }
    list = std::move(merged);
  };
  // The nodes whose point ranges make up [lo, hi), for node `v` over
  // [first, last).
  std::vector<std::size_t> parts;
  const auto decompose = [&](auto& self, std::size_t v, std::size_t first, std::size_t last, std::size_t lo,
                             std::size_t hi) -> void {
    if (hi <= first || last <= lo) return;
    if (lo <= first && last <= hi) {
      parts.push_back(v);
      return;
    }
    const std::size_t middle = (first + last) / 2;
    self(self, 2 * v, first, middle, lo, hi);
    self(self, 2 * v + 1, middle, last, lo, hi);
  };
  std::size_t visits = 0;
  for (const std::uint32_t i : order) {
    const std::size_t lo = rank(blocks[i].begin), hi = rank(blocks[i].end);
    for (std::size_t v = width + lo; v >= 1; v /= 2) visits += cover[v].size();
    parts.clear();
    decompose(decompose, 1, 0, width, lo + 1, hi);
    for (const std::size_t v : parts) visits += starts[v].size();
    const std::int64_t at = offsets[i], top = offsets[i] + blocks[i].size;
    parts.clear();
    decompose(decompose, 1, 0, width, lo, hi);
    for (const std::size_t v : parts) add(cover[v], at, top);
    for (std::size_t v = width + lo; v >= 1; v /= 2) add(starts[v], at, top);
  }
  return visits;
}

/// Packs `t` in every order with one packer (its storage reused from one
/// order to the next) and checks each packing against the plain best fit
/// and its counted work against the plain lists'.
void check_packings_are_plain(const AllocationTrace& t) {
  std::vector<detail::ArenaPacker::Block> blocks;
  std::vector<std::int64_t> raw;
  for (const TracedAllocation& a : t.allocations) {
    const std::int64_t align = block_alignment(a, 64);
    blocks.push_back({(a.bytes + align - 1) / align * align, a.begin, a.end, 0, 0, align});
    raw.push_back(a.bytes);
  }
  detail::ArenaPacker packer(blocks);
  // The same packings with 32-bit ranges (the sizes fit them).
  detail::NarrowArenaPacker narrow(blocks);
  for (const ArenaOrder o : all_arena_orders) {
    CAPTURE(arena_order_name(o));
    const std::vector<std::uint32_t> order = packer.order(o, [&](std::uint32_t i) -> const detail::ArenaPacker::Block& { return blocks[i]; });
    detail::ArenaPacker::Packing packing;
    std::size_t visits = 0;
    REQUIRE(packer.pack(order, [&](std::uint32_t i) { return raw[i]; }, SIZE_MAX, packing, visits));
    const std::vector<std::int64_t> expected = plain_best_fit(blocks, order);
    CHECK(packing.offsets == expected);
    CHECK(visits == plain_visits(blocks, order, expected));
    detail::ArenaPacking narrow_packing;
    std::size_t narrow_visits = 0;
    REQUIRE(narrow.pack(order, [&](std::uint32_t i) { return raw[i]; }, SIZE_MAX, narrow_packing, narrow_visits));
    CHECK_FALSE(narrow.outgrew_ranges());
    CHECK(narrow_packing.offsets == expected);
    CHECK(narrow_packing.arena == packing.arena);
    CHECK(narrow_visits == visits);
  }
}

/// `sym` evaluated at `bindings`, after checking that no two blocks of `t`
/// overlap there when each has its symbolic size from `sizes`.
std::optional<Placement> safe_placement_at(const AllocationTrace& t, const std::vector<expr::Expr>& sizes,
                                           const SymbolicPlacement& sym, const expr::Bindings& bindings) {
  AllocationTrace at = t;
  for (std::size_t i = 0; i < at.allocations.size(); ++i)
    at.allocations[i].bytes = expr::eval(sizes[i], bindings).value();
  auto placed = evaluate(sym, bindings);
  REQUIRE(placed);
  const auto bad = check_placement(at, placed.value());
  CHECK_MESSAGE(!bad, *bad);
  if (bad) return std::nullopt;
  return std::move(placed).value();
}

/// The number of distinct begins of `t`.
std::size_t distinct_begins(const AllocationTrace& t) {
  std::vector<detail::ArenaPacker::Block> blocks;
  for (const TracedAllocation& a : t.allocations) blocks.push_back({64, a.begin, a.end, 0, 0, 64});
  return begin_points(blocks).size();
}

}  // namespace

TEST_CASE("arena: every packing and its counted work are those of plain lists over all placed blocks") {
  // Path unions switch on at 33 distinct begins (64 leaves): below that
  // every list is read one by one; from 33 to 64 begins the one path union
  // is the root's list; above 64 there are many, with long-lived blocks to
  // make the upper lists change. Dense and sparse time, and every order
  // packed by one packer in turn (storage reused).
  SUBCASE("fewer than 33 distinct begins: no path unions") {
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      CAPTURE(seed);
      AllocationTrace t = random_trace({.blocks = 40 + 50 * seed,
                                        .steps = 4 + 5 * seed,
                                        .min_bytes = 64,
                                        .max_bytes = std::int64_t{1} << (12 + seed),
                                        .max_lifetime = 1 + seed * 5,
                                        .output_share = 0.05},
                                       seed);
      REQUIRE(distinct_begins(t) < 33);
      check_packings_are_plain(t);
    }
  }
  SUBCASE("33 to 64 distinct begins: the path union is the root's") {
    // With all 64 begins, blocks that live throughout are in the root's
    // list, which only the path union reads.
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
      CAPTURE(seed);
      const bool all_points = seed >= 3;
      AllocationTrace t = random_trace({.blocks = all_points ? 700 : 150 + 40 * seed,
                                        .steps = all_points ? 64 : 36 + 8 * seed,
                                        .min_bytes = 64,
                                        .max_bytes = std::int64_t{1} << (12 + seed),
                                        .max_lifetime = 1 + seed * 9,
                                        .output_share = 0.05},
                                       seed);
      if (all_points)
        for (int k = 0; k < 3; ++k) t.allocations.push_back({"throughout", 4096 << k, 0, t.steps, 0, false});
      if (seed % 2 == 1)
        for (TracedAllocation& a : t.allocations) {
          a.begin *= 1000;
          a.end *= 1000;
        }
      const std::size_t begins = distinct_begins(t);
      REQUIRE(begins >= 33);
      REQUIRE(begins <= 64);
      if (all_points) REQUIRE(begins == 64);
      check_packings_are_plain(t);
    }
  }
  SUBCASE("more than 64 distinct begins: many path unions") {
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
      CAPTURE(seed);
      AllocationTrace t = random_trace({.blocks = 200 + 60 * seed,
                                        .steps = seed % 3 == 0 ? 0 : 60 + 30 * seed,
                                        .min_bytes = 64,
                                        .max_bytes = std::int64_t{1} << (12 + seed % 10),
                                        .max_lifetime = 1 + (seed * 37) % 150,
                                        .output_share = 0.05},
                                       seed);
      if (seed % 4 == 1)
        for (TracedAllocation& a : t.allocations) {
          a.begin *= 1000;
          a.end *= 1000;
        }
      REQUIRE(distinct_begins(t) > 64);
      check_packings_are_plain(t);
    }
  }
}

TEST_CASE("arena: a list of more than 65,536 ranges gets storage of its own, and the count is exact") {
  // Points 0..3. Blocks G (live at point 1) and L (points 1 to 3) alternate
  // in placing order, each going on top of the last, so G_k sits at 128k
  // and L_k at 128k + 64. The list of the node over points 2 and 3 holds
  // only the L blocks, 64 bytes apart: N ranges that never merge, past
  // the 65,536 of a chunk. Each block reads only merged lists: G_k the
  // one range of the G and L blocks below it (none for G_0), L_k that
  // range and the one of X2 and X3, which begin in its later points. So
  // the work is 0 for X0, X2, X3 and G_0, 2 for each L and 1 for each
  // later G: 3N - 1.
  constexpr std::uint32_t n = 65'537;
  std::vector<detail::ArenaPacker::Block> blocks{{64, 0, 1, 0, 0, 64}, {64, 2, 3, 0, 0, 64}, {64, 3, 4, 0, 0, 64}};
  std::vector<std::uint32_t> order{0, 1, 2};
  for (std::uint32_t k = 0; k < n; ++k) {
    order.push_back(static_cast<std::uint32_t>(blocks.size()));
    blocks.push_back({64, 1, 2, 0, 0, 64});  // G_k
    order.push_back(static_cast<std::uint32_t>(blocks.size()));
    blocks.push_back({64, 1, 4, 0, 0, 64});  // L_k
  }
  const std::vector<std::int64_t> raw(blocks.size(), 64);
  detail::ArenaPacker packer(blocks);
  // Twice: the second packing reuses the storage the first left behind.
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    detail::ArenaPacker::Packing packing;
    std::size_t visits = 0;
    REQUIRE(packer.pack(order, [&](std::uint32_t i) { return raw[i]; }, SIZE_MAX, packing, visits));
    CHECK(visits == 3 * std::size_t{n} - 1);
    CHECK(packing.arena == 128 * std::int64_t{n});
    bool all_as_expected = packing.offsets[0] == 0 && packing.offsets[1] == 0 && packing.offsets[2] == 0;
    for (std::uint32_t k = 0; k < n; ++k)
      all_as_expected = all_as_expected && packing.offsets[3 + 2 * k] == 128 * std::int64_t{k} &&
                        packing.offsets[4 + 2 * k] == 128 * std::int64_t{k} + 64;
    CHECK(all_as_expected);
  }
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
          a.fixed_size = false;
          break;
        case 1:
          sizes.push_back(expr::add(expr::mul(ctx.integer(k), s1), ctx.integer(c)));
          a.bytes = k * h1 + c;
          a.fixed_size = false;
          break;
        default:
          // Static, a third of them small enough to share 64-byte slots.
          a.bytes = rng.uniform(0, 2) == 0 ? rng.uniform(1, 63) : a.bytes % 100000;
          sizes.push_back(ctx.integer(a.bytes));
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
      const std::optional<Placement> placed = safe_placement_at(t, sizes, sym, b);
      const bool exceeds = needs_replan(t, sizes, b).value();
      CHECK(exceeds == (v0 > h0 || v1 > h1));
      if (!exceeds && few_sizes && placed) CHECK(placed->total_bytes() <= plan.placement.total_bytes());
    }
    // At the hints the symbolic plan is the hint plan or better.
    expr::Bindings hints;
    hints.set(s0, h0).set(s1, h1);
    if (few_sizes) CHECK(evaluate(sym, hints).value().total_bytes() <= plan.placement.total_bytes());
    // Expressions stay small: a few forms per offset.
    for (const expr::Expr& o : sym.offsets) CHECK(expr::to_string(o).size() < 2000);
  }
}

TEST_CASE("arena: pruning offset forms joins the same pairs as the cubic greedy") {
  // prune_offset_forms caches its pair costs; the reference recomputes every
  // pair before each join. Both must keep the same forms in the same order.
  using detail::OffsetForm;
  auto reference = [](std::vector<OffsetForm> forms, const detail::OffsetTerms& known) {
    std::vector<OffsetForm> kept;
    for (OffsetForm& f : forms) {
      if (std::any_of(kept.begin(), kept.end(), [&](const OffsetForm& k) { return k.dominates(f, known); })) continue;
      std::erase_if(kept, [&](const OffsetForm& k) { return f.dominates(k, known); });
      kept.push_back(std::move(f));
    }
    while (kept.size() > detail::max_offset_forms) {
      std::size_t best_a = 0, best_b = 1;
      std::int64_t best = std::numeric_limits<std::int64_t>::max();
      for (std::size_t a = 0; a < kept.size(); ++a)
        for (std::size_t b = a + 1; b < kept.size(); ++b)
          if (const std::int64_t v = kept[a].join(kept[b], known).at_hints; v < best) {
            best = v;
            best_a = a;
            best_b = b;
          }
      kept[best_a] = kept[best_a].join(kept[best_b], known);
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(best_b));
    }
    return kept;
  };
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    CAPTURE(seed);
    SplitMix64 rng(seed);
    expr::Context ctx;
    const expr::Expr s0 = ctx.symbol("s0");
    detail::OffsetTerms known;
    // Few distinct sizes and small hints make ties common, which is where a
    // cached choice could drift from the reference's first cheapest pair.
    const std::int64_t kinds = rng.uniform(1, 12);
    std::vector<OffsetForm> forms(static_cast<std::size_t>(rng.uniform(0, 150)));
    for (OffsetForm& f : forms) {
      const std::int64_t terms = rng.uniform(0, 8);
      for (std::int64_t t = 0; t < terms; ++t) {
        const std::int64_t k = rng.uniform(1, kinds);
        f = f.plus(expr::mul(ctx.integer(k), s0), 64 * k, known);
      }
      f = f.plus(ctx.integer(64 * rng.uniform(0, 4)), 0, known);
      f.at_hints = f.constant;
      for (const std::uint32_t t : f.terms) f.at_hints += known.hint(t);
    }
    const std::vector<OffsetForm> expected = reference(forms, known);
    detail::prune_offset_forms(forms, known);
    REQUIRE(forms.size() == expected.size());
    CHECK(forms.size() <= detail::max_offset_forms);
    for (std::size_t i = 0; i < forms.size(); ++i) {
      CAPTURE(i);
      CHECK(forms[i].constant == expected[i].constant);
      CHECK(forms[i].terms == expected[i].terms);
      CHECK(forms[i].at_hints == expected[i].at_hints);
    }
  }
}

TEST_CASE("arena: offset forms compare and join family by family, safely for every binding") {
  // Sizes of one family (`align(k*m)`, `k*m`) are monotone in k; others are
  // opaque. Dominance must imply "not smaller" and a join must be at least
  // both forms at every binding, and no larger than their union.
  using detail::OffsetForm;
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
  std::vector<expr::Expr> sizes;
  for (std::int64_t k : {1, 3, 4, 5, 64, 100}) {
    sizes.push_back(expr::align(expr::mul(ctx.integer(k), s0), 64));
    sizes.push_back(expr::mul(ctx.integer(k), expr::mul(s0, s1)));
    sizes.push_back(expr::align(expr::mul(ctx.integer(k), s1), 16));
  }
  sizes.push_back(expr::max(s0, s1));
  sizes.push_back(expr::ceil_div(s0, ctx.integer(3)));
  const auto value_at = [&](const expr::Expr& e, std::int64_t v0, std::int64_t v1) {
    expr::Bindings b;
    b.set(s0, v0).set(s1, v1);
    return expr::eval(e, b).value();
  };
  detail::OffsetTerms known;
  for (const expr::Expr& e : sizes) (void)known.id(e, value_at(e, 7, 3));
  const std::vector<std::pair<std::int64_t, std::int64_t>> bindings{{1, 1}, {2, 1}, {7, 3}, {64, 1}, {1, 64}, {1000, 33}};
  SplitMix64 rng(5);
  std::int64_t dominated = 0, joined_smaller = 0;
  for (int round = 0; round < 3000; ++round) {
    auto random_form = [&] {
      OffsetForm f;
      f.constant = 64 * rng.uniform(0, 3);
      f.at_hints = f.constant;
      for (std::int64_t t = rng.uniform(0, 5); t > 0; --t) {
        const expr::Expr& e = sizes[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(sizes.size()) - 1))];
        f = f.plus(e, value_at(e, 7, 3), known);
      }
      return f;
    };
    const OffsetForm a = random_form(), b = random_form();
    const OffsetForm j = a.join(b, known);
    CHECK(j.at_hints == a.join_at_hints(b, known));
    CHECK(j.at_hints <= a.at_hints + b.at_hints);
    if (j.terms.size() < a.terms.size() + b.terms.size()) ++joined_smaller;
    const bool a_over_b = a.dominates(b, known);
    dominated += a_over_b;
    for (const auto& [v0, v1] : bindings) {
      const std::int64_t va = value_at(a.to_expr(ctx, known), v0, v1);
      const std::int64_t vb = value_at(b.to_expr(ctx, known), v0, v1);
      const std::int64_t vj = value_at(j.to_expr(ctx, known), v0, v1);
      CHECK(vj >= va);
      CHECK(vj >= vb);
      if (a_over_b) CHECK(va >= vb);
    }
    // Terms stay in family order, scales largest first.
    for (const OffsetForm* f : {&a, &b, &j})
      for (std::size_t i = 1; i < f->terms.size(); ++i) CHECK(!known.before(f->terms[i], f->terms[i - 1]));
  }
  // The laws above are not vacuous: forms of one family compare and merge.
  CHECK(dominated > 100);
  CHECK(joined_smaller > 100);
  OffsetForm three, five;
  three = three.plus(sizes[3], value_at(sizes[3], 7, 3), known);   // align(3*s0)
  five = five.plus(sizes[9], value_at(sizes[9], 7, 3), known);     // align(5*s0)
  CHECK(five.dominates(three, known));
  CHECK(!three.dominates(five, known));
  CHECK(three.join(five, known).terms == five.terms);
}

TEST_CASE("arena: symbolic offsets stay safe when many forms must be joined") {
  // Long-lived blocks of many distinct symbolic sizes stack deep and wide,
  // so offsets collect far more than max_offset_forms forms. This is the
  // case that once took minutes at a few hundred blocks.
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
  AllocationTrace t = random_trace({.blocks = 300, .max_lifetime = 150}, 11);
  std::vector<expr::Expr> sizes;
  for (std::size_t i = 0; i < t.allocations.size(); ++i) {
    TracedAllocation& a = t.allocations[i];
    const std::int64_t k = a.bytes / 64 + 1;
    sizes.push_back(expr::mul(ctx.integer(k), i % 2 ? s0 : s1));
    a.bytes = k * 64;
  }
  const ArenaPlan plan = place_in_arenas(t);
  const SymbolicPlacement sym = symbolic_placement(t, plan.placement, sizes);
  for (const auto& values : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 64}, {1, 1}, {64, 1}, {1, 64}, {37, 5}}) {
    const std::int64_t v0 = values.first, v1 = values.second;
    CAPTURE(v0);
    CAPTURE(v1);
    expr::Bindings b;
    b.set(s0, v0).set(s1, v1);
    (void)safe_placement_at(t, sizes, sym, b);
  }
}

TEST_CASE("arena: offsets deep in a stack stay short, through names, and exact") {
  // Every block is live at once, so block i sits on the i blocks below it
  // and its offset is their sum: as flat sums the offsets would hold a term
  // per block below, quadratic in the depth. Past `max_form_terms` terms
  // they are named, distinct sizes or a few repeated ones alike.
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
  (void)ctx.symbol("offset0");  // taken: names skip it
  for (const bool few_sizes : {false, true}) {
    CAPTURE(few_sizes);
    AllocationTrace t;
    t.steps = 2;
    std::vector<expr::Expr> sizes;
    for (std::int64_t i = 0; i < 300; ++i) {
      const std::int64_t k = few_sizes ? i % 3 + 1 : i + 1;
      sizes.push_back(expr::mul(ctx.integer(k), i % 5 == 4 ? s1 : s0));
      t.allocations.push_back({"b" + std::to_string(i), 64 * k, 0, 2, 0, false, false});
    }
    const ArenaPlan plan = place_in_arenas(t);
    const SymbolicPlacement sym = symbolic_placement(t, plan.placement, sizes);
    CHECK(sym.named.size() >= 300 / detail::max_form_terms);
    std::set<std::string> names;
    for (const NamedOffset& n : sym.named) {
      CHECK(n.symbol.name() != "offset0");
      CHECK(names.insert(std::string(n.symbol.name())).second);
      // A name's value reads only sizes and earlier names.
      for (const expr::Expr& x : expr::free_symbols(n.value))
        CHECK((x == s0 || x == s1 || names.contains(std::string(x.name()))));
      CHECK(n.arena == 0);
    }
    for (const auto& values : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 64}, {1, 1}, {3, 700}, {1000, 1}}) {
      const std::int64_t v0 = values.first, v1 = values.second;
      CAPTURE(v0);
      CAPTURE(v1);
      expr::Bindings b;
      b.set(s0, v0).set(s1, v1);
      (void)safe_placement_at(t, sizes, sym, b);
    }
    // Offsets are a name plus at most `max_form_terms` terms; names are a
    // Max of at most `max_offset_forms` + 1 such sums: linear in all.
    std::size_t longest = 0, named_text = 0;
    for (const expr::Expr& o : sym.offsets) longest = std::max(longest, expr::to_string(o).size());
    for (const NamedOffset& n : sym.named) named_text += expr::to_string(n.value).size();
    CHECK(longest < 2000);
    CHECK(named_text < 1000 * t.allocations.size());
    // Names are exact: at the hints the plan is the hint plan.
    expr::Bindings hints;
    hints.set(s0, 64).set(s1, 64);
    CHECK(evaluate(sym, hints).value().total_bytes() <= plan.placement.total_bytes());
  }
}

TEST_CASE("plan_arena names deep offsets in the program, before the arena is created") {
  // 100 buffers of distinct symbolic sizes, all live at once: one stack.
  // `late` is the same program with sizes read from a symbol the body
  // defines after the arena's first block: the arena (created before it)
  // cannot hold them, and they stay plain allocations. (Placed, they made
  // a pool size that read the symbol before its definition.)
  for (const bool late : {false, true}) {
    CAPTURE(late);
    ir::Program p{"deep"};
    ir::Builder b{p};
    const ir::KernelId touch =
        b.triton_kernel("touch", "@triton.jit\ndef touch(in_ptr0):\n    pass\n", "in_ptr0: *u8");
    const expr::Expr s0 = b.size_symbol("s0", 64);
    // The arena starts here, before `n` is defined.
    std::vector<ir::BufferId> held{b.empty({p.ctx().integer(4096)}, ir::DType::uint8)};
    b.call(touch, {held.back()});
    const expr::Expr unit = late ? b.computed_symbol("n", expr::mul(p.ctx().integer(2), s0)) : s0;
    for (std::int64_t i = 1; i <= 100; ++i) {
      held.push_back(b.empty({expr::mul(p.ctx().integer(i), unit)}, ir::DType::uint8));
      b.call(touch, {held.back()});
    }
    for (const ir::BufferId x : held) b.call(touch, {x});
    b.free(held);
    const auto planned = plan_arena(p);
    REQUIRE(planned);
    const ir::Program& q = planned.value().program;
    CHECK(ir::verify(q).empty());
    CHECK(planned.value().stats.peak_bytes == planned.value().stats.lower_bound_bytes);
    std::size_t computed = 0, defined = 0;
    for (const ir::SymbolDecl& s : q.symbols)
      if (s.origin == ir::SymbolOrigin::computed && s.symbol.name() != "n") {
        ++computed;
        CHECK(std::string(s.symbol.name()).starts_with("arena_offset"));
        CHECK(s.hint.has_value());
      }
    if (late) {
      CHECK(computed == 0);
      const auto allocations = std::count_if(q.body.begin(), q.body.end(), [](const ir::Line& line) {
        return std::holds_alternative<ir::Allocate>(line);
      });
      CHECK(allocations == 100);
      continue;
    }
    REQUIRE(computed > 0);
    // Every definition comes before the PoolCreate of its arena.
    bool created = false;
    for (const ir::Line& line : q.body) {
      if (std::holds_alternative<ir::SymbolicCallArg>(line)) {
        CHECK_FALSE(created);
        ++defined;
      }
      created = created || std::holds_alternative<ir::PoolCreate>(line);
    }
    CHECK(defined == computed);
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
  CHECK_THROWS_WITH_AS((void)symbolic_placement(t, plan.placement, std::vector<expr::Expr>{ctx.integer(0), ctx.integer(64)},
                                                 planner_alignment, "bad name"),
                       "symbolic_placement: the name prefix 'bad name' does not begin a symbol name",
                       std::invalid_argument);
  const std::vector<expr::Expr> one{ctx.integer(64)};
  CHECK_THROWS_AS((void)symbolic_placement(t, plan.placement, one), std::invalid_argument);
  // Offsets are rounded to powers of two only.
  const std::vector<expr::Expr> fixed{ctx.integer(0), ctx.integer(64)};
  CHECK_THROWS_WITH_AS((void)symbolic_placement(t, plan.placement, fixed, 48),
                       "symbolic_placement: the alignment 48 is not a positive power of two", std::invalid_argument);
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

TEST_CASE("plan_arena: small static buffers share a slot, symbolic ones keep 64 bytes") {
  for (const bool symbolic : {false, true}) {
    CAPTURE(symbolic);
    ir::Program p{"prog"};
    ir::Builder b{p};
    const ir::KernelId k =
        b.triton_kernel("k", "@triton.jit\ndef k(a, b, c):\n    pass\n", "a: *fp32, b: *fp32, c: *fp32");
    const wrapir::expr::Expr eight = symbolic ? b.size_symbol("s0", 8) : p.ctx().integer(8);
    const ir::BufferId big = b.empty({p.ctx().integer(2048)}, ir::DType::float32);
    const ir::BufferId x = b.empty({eight}, ir::DType::float32);
    const ir::BufferId y = b.empty({p.ctx().integer(8)}, ir::DType::float32);
    b.call(k, {big, x, y});
    b.free({big, x, y});
    const auto planned = plan_arena(p);
    REQUIRE(planned);
    CHECK(ir::verify(planned.value().program).empty());
    // 8192 + 32 + 32 when both small sizes are fixed; a symbolic one takes
    // a whole 64-byte slot at the hints.
    CHECK(planned.value().stats.peak_bytes == (symbolic ? 8192 + 64 + 32 : 8192 + 64));
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

TEST_CASE("arena: the skyline reports what was on top and paints the block over it") {
  // Against a brute-force array of "last block painted" per time step.
  SplitMix64 rng(3);
  for (int round = 0; round < 30; ++round) {
    CAPTURE(round);
    detail::Skyline sky;
    const std::size_t steps = 5 + static_cast<std::size_t>(round) * 3;
    std::vector<std::int64_t> top(steps, -1);
    std::vector<std::uint32_t> under;
    for (std::uint32_t block = 0; block < 60; ++block) {
      const auto begin = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(steps) - 1));
      const auto end = begin + static_cast<std::size_t>(rng.uniform(1, static_cast<std::int64_t>(steps - begin)));
      std::vector<std::uint32_t> expected;
      for (std::size_t t = begin; t < end; ++t)
        if (top[t] >= 0 && (expected.empty() || expected.back() != static_cast<std::uint32_t>(top[t])))
          expected.push_back(static_cast<std::uint32_t>(top[t]));
      under.clear();
      sky.paint(begin, end, block, under);
      CHECK(under == expected);
      for (std::size_t t = begin; t < end; ++t) top[t] = block;
      // The segments are disjoint, in order, and say what the array says.
      std::size_t last_end = 0;
      for (const auto& [b, seg] : sky.segments()) {
        CHECK(b >= last_end);
        CHECK(seg.end > b);
        last_end = seg.end;
        for (std::size_t t = b; t < seg.end; ++t) CHECK(top[t] == seg.block);
      }
    }
  }
}

namespace {

/// symbolic_placement as it was before the skyline: every placed block
/// compared with every other, with offsets as exact Maxes (never joined,
/// never named). The skyline must find the same blocks in the same order,
/// so without names the expressions are the same nodes, and with names the
/// same values at every binding (a name is the exact Max it stands for).
SymbolicPlacement all_pairs_symbolic_placement(const AllocationTrace& trace, const Placement& hint,
                                               const std::vector<expr::Expr>& symbolic_bytes) {
  const auto& blocks = trace.allocations;
  const std::int64_t alignment = planner_alignment;
  SymbolicPlacement out;
  for (const ArenaExtent& a : hint.arenas) out.arena_device.push_back(a.device);
  expr::Context& ctx = symbolic_bytes.front().context();
  std::vector<std::size_t> by_offset(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(), [&](std::size_t x, std::size_t y) {
    return hint.blocks[x].offset != hint.blocks[y].offset ? hint.blocks[x].offset < hint.blocks[y].offset : x < y;
  });
  out.arena_of.resize(blocks.size());
  out.offsets.assign(blocks.size(), ctx.integer(0));
  std::vector<std::vector<detail::OffsetForm>> forms(blocks.size());
  std::vector<std::vector<detail::OffsetForm>> arena_tops(hint.arenas.size());
  std::vector<std::size_t> placed, below;
  std::vector<expr::Expr> aligned(blocks.size());
  detail::OffsetTerms known;
  const auto overlap = [&](std::size_t x, std::size_t y) {
    return blocks[x].begin < blocks[y].end && blocks[y].begin < blocks[x].end;
  };
  const auto own = [&](std::size_t x) {
    return symbolic_bytes[x].is_integer() ? block_alignment(blocks[x], alignment) : alignment;
  };
  for (const std::size_t i : by_offset) {
    const std::size_t arena = hint.blocks[i].arena;
    out.arena_of[i] = arena;
    std::vector<detail::OffsetForm>& mine = forms[i];
    if (blocks[i].bytes > 0) {
      below.clear();
      for (const std::size_t j : placed)
        if (hint.blocks[j].arena == arena && overlap(j, i)) below.push_back(j);
      for (std::size_t x = 0; x < below.size(); ++x) {
        const std::size_t j = below[x];
        bool covered = false;
        for (std::size_t y = x + 1; y < below.size() && !covered; ++y) covered = overlap(j, below[y]);
        if (covered) continue;
        for (const detail::OffsetForm& f : forms[j])
          mine.push_back(f.plus(aligned[j], detail::align_up_checked(blocks[j].bytes, own(j), blocks[j]), known));
      }
      detail::prune_offset_forms(mine, known, false);
      bool rounded = false;
      for (detail::OffsetForm& f : mine) {
        const std::int64_t up = (f.constant + own(i) - 1) / own(i) * own(i);
        f.at_hints += up - f.constant;
        rounded = rounded || up != f.constant;
        f.constant = up;
      }
      if (rounded) detail::prune_offset_forms(mine, known, false);
      aligned[i] = own(i) == alignment ? expr::align(symbolic_bytes[i], alignment)
                                       : ctx.integer(detail::align_up_checked(blocks[i].bytes, own(i), blocks[i]));
      placed.push_back(i);
    }
    if (mine.empty()) mine.push_back(detail::OffsetForm{});
    out.offsets[i] = detail::max_of_forms(ctx, mine, known);
    for (const detail::OffsetForm& f : mine)
      arena_tops[arena].push_back(f.plus(symbolic_bytes[i], blocks[i].bytes, known));
    detail::prune_offset_forms(arena_tops[arena], known, false);
  }
  for (auto& tops : arena_tops)
    out.arena_bytes.push_back(tops.empty() ? ctx.integer(0) : detail::max_of_forms(ctx, tops, known));
  return out;
}

}  // namespace

TEST_CASE("arena: symbolic offsets from the skyline are those of comparing all pairs") {
  std::vector<std::pair<std::string, AllocationTrace>> traces;
  for (std::uint64_t seed = 0; seed < 6; ++seed)
    traces.emplace_back("random" + std::to_string(seed),
                        random_trace({.blocks = 80 + 20 * seed,
                                      .steps = 40 + 10 * seed,
                                      .min_bytes = 0,
                                      .max_bytes = seed % 2 ? 5000 : 1 << 20,
                                      .max_lifetime = 2 + 4 * seed,
                                      .devices = static_cast<std::int32_t>(1 + seed % 3)},
                                     seed));
  traces.emplace_back("chain", chain_trace({.blocks = 400}, 1));
  traces.emplace_back("fan_out", fan_out_trace({.blocks = 400, .fan = 5}, 2));
  traces.emplace_back("transformer", transformer_trace({.layers = 2, .training = true}, 3));
  for (auto& entry : traces) {
    // Not a structured binding: CAPTURE uses a lambda, and clang 14 cannot capture those.
    const std::string& name = entry.first;
    AllocationTrace& t = entry.second;
    CAPTURE(name);
    expr::Context ctx;
    const expr::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
    std::vector<expr::Expr> sizes;
    SplitMix64 rng(name.size());
    for (TracedAllocation& a : t.allocations) {
      // A few distinct symbolic sizes (hint 64 each), and static ones.
      const std::int64_t k = a.bytes / 64 + 1;
      switch (rng.uniform(0, 2)) {
        case 0:
          sizes.push_back(expr::mul(ctx.integer(k % 7 + 1), s0));
          a.bytes = (k % 7 + 1) * 64;
          break;
        case 1:
          sizes.push_back(expr::mul(ctx.integer(k % 5 + 1), s1));
          a.bytes = (k % 5 + 1) * 64;
          break;
        default:
          // Static, 64 bytes or more: a smaller block's offset is still
          // joined past max_offset_forms forms, which the reference,
          // exact, does not do.
          if (a.bytes > 0) a.bytes = std::max<std::int64_t>(a.bytes, 64);
          sizes.push_back(ctx.integer(a.bytes));
          break;
      }
    }
    const ArenaPlan plan = place_in_arenas(t);
    const SymbolicPlacement fast = symbolic_placement(t, plan.placement, sizes);
    const SymbolicPlacement slow = all_pairs_symbolic_placement(t, plan.placement, sizes);
    CHECK(fast.arena_of == slow.arena_of);
    CHECK(fast.arena_device == slow.arena_device);
    REQUIRE(fast.offsets.size() == slow.offsets.size());
    if (fast.named.empty()) {
      for (std::size_t i = 0; i < fast.offsets.size(); ++i) {
        CAPTURE(i);
        CHECK(fast.offsets[i] == slow.offsets[i]);
      }
      CHECK(fast.arena_bytes == slow.arena_bytes);
    }
    for (const auto& values : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 64}, {1, 1000}, {777, 3}}) {
      const std::int64_t v0 = values.first, v1 = values.second;
      CAPTURE(v0);
      CAPTURE(v1);
      expr::Bindings b;
      b.set(s0, v0).set(s1, v1);
      const Placement f = evaluate(fast, b).value(), r = evaluate(slow, b).value();
      for (std::size_t i = 0; i < f.blocks.size(); ++i) {
        CAPTURE(i);
        CHECK(f.blocks[i].offset == r.blocks[i].offset);
      }
      CHECK(f.total_bytes() == r.total_bytes());
    }
  }
}
