// Tests of the pool planner's cost on every trace shape (issue 12 §4):
// the sorted chunks that replaced its maps (pass/detail/sorted_chunks.hpp)
// against std::multimap, its large live-range sets against a brute-force
// reference, plans pinned to main's, and the work on hostile shapes counted
// in node visits (not timed).

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>
#include <wrapir/pass/detail/pool_forest.hpp>
#include <wrapir/pass/detail/pool_live_ranges.hpp>
#include <wrapir/pass/detail/sorted_chunks.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/traces.hpp>

namespace {

using namespace wrapir::pass;
using wrapir::pass::detail::PoolLiveRange;
using wrapir::pass::detail::PoolLiveRanges;

struct Entry {
  std::int64_t key;
  int value;
};
struct KeyOf {
  std::int64_t operator()(const Entry& e) const noexcept { return e.key; }
};
using Chunks = wrapir::pass::detail::SortedChunks<Entry, KeyOf>;

std::vector<std::pair<std::int64_t, int>> contents(const Chunks& c) {
  std::vector<std::pair<std::int64_t, int>> out;
  c.for_each([&](const Entry& e) { out.emplace_back(e.key, e.value); });
  return out;
}

std::vector<std::pair<std::int64_t, int>> contents(const std::multimap<std::int64_t, int>& m) {
  return {m.begin(), m.end()};
}

/// The position of `it` in `m`, as an index.
std::size_t index_of(const std::multimap<std::int64_t, int>& m, std::multimap<std::int64_t, int>::const_iterator it) {
  return static_cast<std::size_t>(std::distance(m.begin(), it));
}

/// The index of position `p` in `c` (walking from the start).
std::size_t index_of(const Chunks& c, Chunks::Pos p) {
  std::size_t k = 0;
  for (Chunks::Pos q = c.begin_pos(); q != p && !c.is_end(q); q = c.next(q)) ++k;
  return k;
}

/// The merged ranges of `added` by brute force: sort, then merge touching.
std::vector<PoolLiveRange> merged(std::vector<PoolLiveRange> added) {
  std::sort(added.begin(), added.end(), [](const PoolLiveRange& a, const PoolLiveRange& b) { return a.begin < b.begin; });
  std::vector<PoolLiveRange> out;
  for (const PoolLiveRange& r : added) {
    if (!out.empty() && r.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

/// Inductor's overlap of a range with a set of ranges, by brute force.
bool overlaps(const std::vector<PoolLiveRange>& set, PoolLiveRange r) {
  return std::any_of(set.begin(), set.end(), [&](const PoolLiveRange& x) {
    return x.begin <= r.begin ? x.end > r.begin : r.end > x.begin;
  });
}

std::uint64_t plan_hash(const PoolPlan& p) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
  for (const BlockPlacement& b : p.placement.blocks) {
    mix(b.arena);
    mix(static_cast<std::uint64_t>(b.offset));
  }
  for (const ArenaExtent& a : p.placement.arenas) mix(static_cast<std::uint64_t>(a.bytes));
  return h;
}

std::vector<PoolBlock> pool_blocks(const AllocationTrace& t) {
  std::vector<PoolBlock> blocks;
  for (const TracedAllocation& a : t.allocations)
    blocks.push_back(
        {a.bytes, static_cast<std::int64_t>(a.begin), static_cast<std::int64_t>(a.end), a.device, a.is_output});
  return blocks;
}

}  // namespace

TEST_CASE("sorted chunks: insertions, erasures and bounds agree with std::multimap") {
  // Thousands of entries over few keys (many equal) and many keys, so that
  // chunks split, empty and vanish, and erasures span chunks.
  for (const std::int64_t keys : {std::int64_t{50}, std::int64_t{100'000}}) {
    CAPTURE(keys);
    SplitMix64 rng(static_cast<std::uint64_t>(keys));
    Chunks c;
    std::multimap<std::int64_t, int> m;
    for (int round = 0; round < 6000; ++round) {
      const std::int64_t key = rng.uniform(0, keys);
      const double what = rng.unit();
      if (what < 0.7 || m.empty()) {
        // Insert at the upper end of the equal keys, as multimap does.
        c.insert(c.upper_bound(key), {key, round});
        m.emplace(key, round);
      } else if (what < 0.9) {
        // Erase [lower_bound(key), that + span).
        const auto span = rng.uniform(0, 700);
        auto first = m.lower_bound(key);
        Chunks::Pos p = c.lower_bound(key);
        REQUIRE(index_of(c, p) == index_of(m, first));
        auto last = first;
        Chunks::Pos q = p;
        for (std::int64_t k = 0; k < span && last != m.end(); ++k) {
          ++last;
          q = c.next(q);
        }
        const auto after = m.erase(first, last);
        const Chunks::Pos next = c.erase(p, q);
        CHECK(index_of(c, next) == index_of(m, after));
        if (after != m.end()) CHECK(c.at(next).value == after->second);
      } else {
        // Edit a key in place within its neighbours' bounds, then refresh.
        const Chunks::Pos p = c.lower_bound(key);
        if (!c.is_end(p)) {
          const std::int64_t floor = p == c.begin_pos() ? -1 : c.at(c.prev(p)).key;
          auto it = m.lower_bound(key);
          const std::int64_t lowered = std::max(floor, c.at(p).key - 1);
          const int value = it->second;
          m.erase(it);
          m.emplace_hint(m.upper_bound(lowered), lowered, value);
          c.at(p).key = lowered;
          c.refresh_first(p);
        }
      }
      REQUIRE(c.size() == m.size());
      if (round % 97 == 0) {
        REQUIRE(contents(c) == contents(m));
        for (int q = 0; q < 20; ++q) {
          const std::int64_t k = rng.uniform(-1, keys + 1);
          CHECK(index_of(c, c.lower_bound(k)) == index_of(m, m.lower_bound(k)));
          CHECK(index_of(c, c.upper_bound(k)) == index_of(m, m.upper_bound(k)));
        }
      }
    }
    CHECK(contents(c) == contents(m));
    // Walking backwards visits the same entries.
    std::vector<int> back;
    if (!c.empty())
      for (Chunks::Pos p = c.prev(c.end_pos());; p = c.prev(p)) {
        back.push_back(c.at(p).value);
        if (p == c.begin_pos()) break;
      }
    std::vector<int> forward;
    for (const auto& [key, value] : m) forward.push_back(value);
    std::reverse(back.begin(), back.end());
    CHECK(back == forward);
  }
}

TEST_CASE("pool live ranges: large sets merge and answer as brute force does") {
  // Past 512 ranges the set moves to sorted chunks; short ranges over a long
  // time axis keep it large, touching and overlapping ones merge across
  // chunk boundaries, and empty ranges [t, t] occur.
  for (const std::int64_t span : {std::int64_t{3}, std::int64_t{40}}) {
    CAPTURE(span);
    SplitMix64 rng(static_cast<std::uint64_t>(span));
    PoolLiveRanges set;
    std::vector<PoolLiveRange> added;
    for (int i = 0; i < 5000; ++i) {
      const std::int64_t begin = rng.uniform(0, 60'000);
      const PoolLiveRange r{begin, begin + (rng.unit() < 0.1 ? 0 : rng.uniform(1, span))};
      set.add(r);
      added.push_back(r);
      if (i % 250 != 249) continue;
      const std::vector<PoolLiveRange> expected = merged(added);
      const std::vector<PoolLiveRange> got = set.to_vector();
      REQUIRE(got.size() == expected.size());
      for (std::size_t k = 0; k < got.size(); ++k)
        REQUIRE((got[k].begin == expected[k].begin && got[k].end == expected[k].end));
      CHECK(set.front().begin == expected.front().begin);
      CHECK(set.back().end == expected.back().end);
      for (int q = 0; q < 50; ++q) {
        const std::int64_t b = rng.uniform(-2, 60'050);
        const PoolLiveRange probe{b, b + rng.uniform(0, 30)};
        CHECK(set.overlaps(probe) == overlaps(expected, probe));
        if (probe.begin <= expected.back().end) {
          const auto first = std::find_if(expected.begin(), expected.end(),
                                          [&](const PoolLiveRange& x) { return x.end >= probe.begin; });
          const PoolLiveRange found = set.first_ending_from(probe.begin);
          CHECK((found.begin == first->begin && found.end == first->end));
        }
      }
    }
    CHECK(set.size() > 512);  // the large representation was exercised
  }
}

TEST_CASE("pools: chain and fan-out plans are main's where trees stay shallow") {
  // FNV-1a of every block's (pool, offset) and every pool's size, computed
  // with main's headers (std::map sets, trees up to 1,024 levels) before
  // the sorted chunks and the bound of 64 levels: under the default policy
  // these traces' trees stay within 64 levels, so the plans are unchanged.
  CHECK(plan_hash(place_in_pools(chain_trace({.blocks = 10'000}, 1))) == 2971950023240437805ULL);
  CHECK(plan_hash(place_in_pools(fan_out_trace({.blocks = 10'000}, 1))) == 12967960972728442917ULL);
  CHECK(plan_hash(place_in_pools(fan_out_trace({.blocks = 10'000}, 1), PoolPolicy::combined)) ==
        13735964242263066315ULL);
}

TEST_CASE("pools: hostile shapes cost a bounded number of node visits per block") {
  using Forest = wrapir::pass::detail::PoolForest;
  // Every block overlapping every other, largest first: each block is
  // appended at the end of the last pool, one level deeper each time, and
  // descends all of it. With trees of 1,024 levels that was about 1,000
  // visits per block (2M for these 2,000 blocks); now at most the bound.
  std::vector<PoolBlock> all;
  const std::int64_t n = 2000;
  for (std::int64_t i = 0; i < n; ++i) all.push_back({64 * (n - i), i, n + i, 0, false});
  Forest hostile(all, PoolPolicy::intermediates);
  hostile.allocate_all();
  CHECK(hostile.visits() <= all.size() * (Forest::max_tree_depth + 1));
  for (const Forest::Pool& p : hostile.pools()) CHECK(p.height <= Forest::max_tree_depth);

  // A chain nests padded SpatialSplits: at 20k blocks its tree reached 110
  // levels and 5.4 visits per block (346 levels and 39 per block at 250k);
  // bounded now.
  const std::vector<PoolBlock> chain = pool_blocks(chain_trace({.blocks = 20'000}, 1));
  Forest forest(chain, PoolPolicy::intermediates);
  forest.allocate_all();
  CHECK(forest.visits() <= chain.size() * 4);
  const PoolPlan plan = place_in_pools(chain_trace({.blocks = 20'000}, 1));
  CHECK(plan.placement.blocks.size() == chain.size());
}
