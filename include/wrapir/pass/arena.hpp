#pragma once
/// \file
/// wrapir's arena planner: one arena per device, every block at a byte
/// offset chosen so that blocks live at the same time never share a byte.
///
/// Algorithm (trace level, `place_in_arenas`)
/// ------------------------------------------
/// This is offline dynamic storage allocation, NP-hard in general; like
/// XLA's heap simulator and TFLite's "greedy by size" we place the blocks
/// one at a time in some order, each into the smallest gap that fits it
/// between the already-placed blocks whose lifetimes overlap its own (best
/// fit), or above all of them when no gap fits. Several orders are tried
/// and the smallest arena kept (`ArenaOrder`). Offsets are multiples of the
/// alignment (64 bytes) because every block occupies its size rounded up.
///
/// Finding the placed blocks whose lifetimes overlap a block's is the cost
/// that matters. Time is compressed to the distinct begin steps, and two
/// segment trees over it answer the query without looking at any block
/// that does not overlap: a block that began at or before `begin` overlaps
/// iff it covers the point `begin` (a stabbing query: every block is kept
/// in the O(log n) nodes that decompose its interval), and a block that
/// began later overlaps iff its begin lies in `(begin, end)` (a range query:
/// every block is kept in the nodes above its begin). The node lists are
/// slices of chunked storage reused by every order, and the upper part of
/// a block's path is read as one cached, merged union (`ArenaPacker`'s
/// path unions). Work is proportional to the number of overlapping pairs
/// (counted as if every list were read); after the first order,
/// an order that would exceed `ArenaOptions::work_limit` pair visits is
/// abandoned, so a pathological trace (thousands of blocks alive at once)
/// still plans in bounded time, with fewer orders tried. Effort is also
/// adaptive: once a packing comes within `ArenaOptions::stop_within` (0.1%)
/// of the lower bound, no further order or repacking round runs, which is
/// what keeps 100k-block traces near one packing (tens of milliseconds).
///
/// Symbolic sizes (`symbolic_placement`)
/// -------------------------------------
/// Dynamic shapes give blocks symbolic sizes. We plan at the size hints and
/// then make the placement safe for every binding: each block's symbolic
/// offset is the Max, over the time-overlapping blocks placed below it at
/// the hints, of their symbolic offset plus their aligned symbolic size
/// (0 when there are none) — a longest path over the "below" relation,
/// which is acyclic because it follows the hint offsets. For any binding,
/// a block starts at or above the end of every overlapping block below it,
/// so no two live blocks overlap whatever the sizes turn out to be; at the
/// hints each offset is at most the planned one, so the arena is at most
/// the planned arena. The arena size is the Max over its blocks of offset
/// plus size. With static sizes everything folds to integers.
///
/// Program level (`plan_arena`)
/// ----------------------------
/// The storage that Allocate lines create (pass/liveness.hpp: lifetimes
/// from the creating line to the last line naming the storage or an alias)
/// is placed at the hints, made symbolic as above, and the program is
/// rewritten: one pool per device (`arena0`, `arena1`, ... in device order,
/// skipping names in use) whose size is the symbolic arena size; the first
/// AllocFromPool of an arena is preceded by its PoolCreate; Allocate becomes
/// AllocFromPool at the block's offset; FreeIfNotReused and Free of a placed
/// storage (through any of its names) become DeallocFromPool, and the last
/// one of an arena releases it when no block of the arena is used later and
/// none is a program output; a FreeIfNotReused marked reused becomes Null
/// (the storage stays in the arena for the Reuse that follows). Workspaces,
/// comm buffers, extern results, control-flow results and existing pools
/// are left as they are. A block whose size is 0 at the hints but not
/// statically 0 is planned as 1 byte, so that it is kept apart from the
/// others. Subgraphs are planned on their own.
///
/// Re-planning: because the symbolic offsets are safe for every binding, a
/// binding that exceeds the hints never corrupts memory; only the packing
/// degrades (blocks that were interleaved at the hints stack up). Sizes are
/// monotone in the offsets, so a binding with every block at or below its
/// hint needs at most the planned arena; `needs_replan` says whether some
/// block exceeds its hint, which is when a caller that cares about the
/// footprint should plan again with the new sizes as hints (and, for a
/// long-running process, cache one plan per shape bucket).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#include <wrapir/detail/hash.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/detail/pool_lines.hpp>
#include <wrapir/pass/detail/radix_sort.hpp>
#include <wrapir/pass/detail/skyline.hpp>
#include <wrapir/pass/detail/prefetch.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

/// The orders in which `place_in_arenas` may place blocks (each breaks ties
/// by size, then by index, so every order is deterministic).
enum class ArenaOrder : std::uint8_t {
  /// Largest first, then longest-lived (TFLite's greedy by size; XLA's
  /// spatial order).
  size,
  /// The largest peak of live bytes during the block's lifetime first:
  /// blocks in the tightest region, which decides the lower bound, go in
  /// first, while there is room to pack them.
  pressure,
  /// Largest size times lifetime first (XLA's "area").
  area,
  /// Longest-lived first (XLA's temporal order).
  lifetime,
  /// Most bytes of time-overlapping blocks first: the most constrained.
  conflict,
  /// Earliest begin first: what an online allocator would see.
  begin,
};

/// Every order, in the sequence `place_in_arenas` tries them by default.
/// `conflict` goes first: it packs the most constrained blocks while there
/// is room, leaves few fragments behind (so its packing visits few ranges:
/// on 100k random blocks 16 times fewer than `size`), and is often at the
/// lower bound already, when the adaptive stop skips the others
/// (`ArenaOptions::stop_within`).
inline constexpr ArenaOrder all_arena_orders[] = {ArenaOrder::conflict, ArenaOrder::size,     ArenaOrder::pressure,
                                                  ArenaOrder::area,     ArenaOrder::lifetime, ArenaOrder::begin};

[[nodiscard]] constexpr std::string_view arena_order_name(ArenaOrder o) noexcept {
  switch (o) {
    case ArenaOrder::size:
      return "size";
    case ArenaOrder::pressure:
      return "pressure";
    case ArenaOrder::area:
      return "area";
    case ArenaOrder::lifetime:
      return "lifetime";
    case ArenaOrder::conflict:
      return "conflict";
    case ArenaOrder::begin:
      return "begin";
  }
  return "<invalid arena order>";
}

struct ArenaOptions {
  /// Offsets are multiples of this (a power of two).
  std::int64_t alignment = planner_alignment;
  /// The orders to try, in this order; the first one always runs to the
  /// end. Empty means all of `all_arena_orders`.
  std::vector<ArenaOrder> orders{};
  /// After the first order, an order is abandoned once it has visited this
  /// many overlapping pairs on one device.
  std::size_t work_limit = 20'000'000;
  /// Adaptive effort: once a packing is within this fraction above the
  /// max-live lower bound of the aligned sizes (no packing can be below it
  /// by more than the alignment), the remaining orders and the repacking
  /// rounds are skipped: at most 0.1% is given up, and the result is never
  /// worse than the first order's packing. On the corpus traces the plans
  /// are those of the exhaustive search, while a large trace, where one
  /// order costs tens of milliseconds, often plans with one packing. 0
  /// stops only at the bound; a finite non-negative number.
  double stop_within = 0.001;
  /// After the orders, at most this many rounds of "squeaky wheel"
  /// repacking: the blocks that ended above the lower bound go first in the
  /// next round's order. A round runs only while the arena exceeds the
  /// (aligned) max-live bound by more than `stop_within`, so easy traces
  /// pay nothing.
  std::size_t improvement_rounds = 8;
  /// Program level: the prefix of the arenas' pool names (`arena0`, ...).
  std::string name_prefix = "arena";
};

/// A trace-level arena plan.
struct ArenaPlan {
  /// One arena per device, in increasing device order.
  Placement placement;
  /// Per arena, the order whose packing was kept.
  std::vector<ArenaOrder> chosen;
  /// The orders that ran to the end, summed over devices.
  std::size_t orders_completed = 0;
  /// Repacking rounds that ran (see `ArenaOptions::improvement_rounds`).
  std::size_t improvement_rounds = 0;
  /// Byte ranges visited, summed over orders, rounds and devices.
  std::size_t pair_visits = 0;
};

namespace detail {

[[nodiscard]] inline std::int64_t align_up_checked(std::int64_t bytes, std::int64_t alignment,
                                                   const TracedAllocation& a) {
  if (bytes > std::numeric_limits<std::int64_t>::max() - (alignment - 1))
    throw std::invalid_argument("arena planner: block " + a.name + " of " + std::to_string(bytes) +
                                " bytes cannot be aligned without overflowing 64 bits");
  return (bytes + alignment - 1) & -alignment;
}

/// The blocks of one device, packed by best fit in several orders.
class ArenaPacker {
 public:
  struct Block {
    std::int64_t size;  // aligned
    std::size_t begin, end;
    std::uint32_t lo, hi;  // the begin points it covers: [lo, hi)
  };

  explicit ArenaPacker(std::vector<Block> blocks) : blocks_(std::move(blocks)) {
    std::size_t last_end = 0;
    for (const Block& b : blocks_) last_end = std::max(last_end, b.end);
    // Traces number their steps densely, so a table over the steps ranks
    // every time in O(1); binary searches over the sorted begins were a
    // tenth of a packing. Sparse times fall back to sorting.
    if (last_end <= 4 * blocks_.size() + 1024) {
      // begins_below[t]: the distinct begins before time t.
      std::vector<std::uint32_t> begins_below(last_end + 2, 0);
      for (const Block& b : blocks_) begins_below[b.begin + 1] = 1;
      for (std::size_t t = 1; t < begins_below.size(); ++t) begins_below[t] += begins_below[t - 1];
      points_ = begins_below.back();
      width_ = std::bit_ceil(std::max<std::size_t>(points_, 1));
      for (Block& b : blocks_) {
        b.lo = begins_below[b.begin];
        b.hi = begins_below[b.end];
      }
      uses_path_unions_ = width_ >= std::size_t{1} << path_union_level;
      return;
    }
    std::vector<std::size_t> begins;
    begins.reserve(blocks_.size());
    for (const Block& b : blocks_) begins.push_back(b.begin);
    std::sort(begins.begin(), begins.end());
    begins.erase(std::unique(begins.begin(), begins.end()), begins.end());
    points_ = begins.size();
    width_ = std::bit_ceil(std::max<std::size_t>(points_, 1));
    for (Block& b : blocks_) {
      b.lo = static_cast<std::uint32_t>(std::lower_bound(begins.begin(), begins.end(), b.begin) - begins.begin());
      b.hi = static_cast<std::uint32_t>(std::lower_bound(begins.begin(), begins.end(), b.end) - begins.begin());
    }
    uses_path_unions_ = width_ >= std::size_t{1} << path_union_level;
  }

  /// The blocks in `order`.
  [[nodiscard]] std::vector<std::uint32_t> order(ArenaOrder kind) const {
    const std::size_t n = blocks_.size();
    std::vector<std::uint32_t> ids(n);
    std::vector<double> key(n, 0.0);
    switch (kind) {
      case ArenaOrder::size:
        break;
      case ArenaOrder::pressure:
        key = peak_pressure();
        break;
      case ArenaOrder::area:
        for (std::size_t i = 0; i < n; ++i)
          key[i] = static_cast<double>(blocks_[i].size) * static_cast<double>(blocks_[i].end - blocks_[i].begin);
        break;
      case ArenaOrder::lifetime:
        for (std::size_t i = 0; i < n; ++i) key[i] = static_cast<double>(blocks_[i].end - blocks_[i].begin);
        break;
      case ArenaOrder::conflict:
        key = overlapping_bytes();
        break;
      case ArenaOrder::begin:
        for (std::size_t i = 0; i < n; ++i) key[i] = -static_cast<double>(blocks_[i].begin);
        break;
    }
    // Sorted as self-contained records: a comparison that looked the keys
    // up by index missed the cache on both sides.
    struct Ranked {
      double key;
      std::int64_t size;
      std::size_t lifetime;
      std::uint32_t id;
    };
    std::vector<Ranked> ranked(n);
    for (std::size_t i = 0; i < n; ++i)
      ranked[i] = {key[i], blocks_[i].size, blocks_[i].end - blocks_[i].begin, static_cast<std::uint32_t>(i)};
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      if (a.key != b.key) return a.key > b.key;
      if (a.size != b.size) return a.size > b.size;
      if (a.lifetime != b.lifetime) return a.lifetime > b.lifetime;
      return a.id < b.id;
    });
    for (std::size_t k = 0; k < n; ++k) ids[k] = ranked[k].id;
    return ids;
  }

  /// The max-live bound of the aligned sizes.
  [[nodiscard]] std::int64_t aligned_lower_bound() const {
    std::vector<std::int64_t> live(points_ + 1, 0);
    for (const Block& b : blocks_) {
      live[b.lo] += b.size;
      live[b.hi] -= b.size;
    }
    std::int64_t now = 0, peak = 0;
    for (std::size_t k = 0; k < points_; ++k) peak = std::max(peak, now += live[k]);
    return peak;
  }

  /// Best-fit packing in `order`: the offsets and the arena size (the top
  /// of the highest block, `raw` sizes at the top), or nothing when the
  /// work limit was hit.
  struct Packing {
    std::vector<std::int64_t> offsets;
    std::int64_t arena = 0;
  };
  [[nodiscard]] bool pack(std::span<const std::uint32_t> order, std::span<const std::int64_t> raw, std::size_t limit,
                          Packing& out, std::size_t& visits) {
    const std::size_t n = blocks_.size();
    // Emptied, not freed: the next order reuses the slices' storage.
    slices_.clear();
    nodes_.assign(2 * width_, Node{});
    changes_ = 0;
    changed_at_.assign(uses_path_unions_ ? (2 * width_) >> path_union_level : 0, 0);
    path_unions_.assign(uses_path_unions_ ? width_ >> path_union_level : 0, PathUnion{});
    out.offsets.assign(n, 0);
    out.arena = 0;
    // The blocks copied into placing order first: reading them by index in
    // the loop below made every block a cache miss that the loop waited on,
    // while this gather's loads are independent and overlap.
    in_order_.clear();
    for (const std::uint32_t i : order) in_order_.push_back({blocks_[i], raw[i], i});
    for (std::size_t k = 0; k < in_order_.size(); ++k) {
      if (k + 2 * prefetch_ahead < in_order_.size()) prefetch_nodes(in_order_[k + 2 * prefetch_ahead].block);
      if (k + prefetch_ahead < in_order_.size()) prefetch_ranges(in_order_[k + prefetch_ahead].block);
      const Placing& placing = in_order_[k];
      const Block& b = placing.block;  // a reference, not a structured binding: lambdas below capture it
      // `taken_` only grows; its first `taken` entries are this block's.
      // (vector::insert per node, most holding zero to two ranges, was a
      // tenth of the time.)
      std::size_t taken = 0;
      const auto take = [&](const Range* ranges, std::size_t count) {
        if (taken + count > taken_.size()) taken_.resize(std::max(2 * taken_.size(), taken + count));
        copy_ranges(ranges, count, taken_.data() + taken);
        taken += count;
      };
      // The work counted is the ranges of every list below, whether read
      // or served by a path union.
      const auto visit = [&](const RangeList& set) {
        take(set.data, set.size);
        visits += set.size;
      };
      std::size_t path_node = width_ + b.lo;
      if (uses_path_unions_) {
        for (std::size_t level = 0; level < path_union_level; ++level, path_node >>= 1)
          visit(nodes_[path_node].cover);
        const RangeList& above = path_union(path_node, visits);
        take(above.data, above.size);
      } else {
        for (; path_node >= 1; path_node >>= 1) visit(nodes_[path_node].cover);
      }
      for_each_cover_node(b.lo + 1, b.hi, [&](std::size_t node) { visit(nodes_[node].starts); });
      if (visits > limit) return false;
      // By begin only: among ranges that begin at the same byte, the scan
      // below finds the same gaps whatever their order, so the result stays
      // deterministic with the cheaper comparison.
      const std::span<Range> overlapping{taken_.data(), taken};
      sort_by_lo(overlapping);
      // Best fit: the smallest gap that holds the block, else the top.
      std::int64_t top = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
      for (const auto& [lo, hi] : overlapping) {
        if (lo > top && lo - top >= b.size && lo - top < best_gap) {
          best = top;
          best_gap = lo - top;
        }
        top = std::max(top, hi);
      }
      const std::int64_t offset = best >= 0 ? best : top;
      out.offsets[placing.index] = offset;
      out.arena = std::max(out.arena, offset + placing.raw);
      for_each_cover_node(b.lo, b.hi, [&](std::size_t node) {
        if (add(nodes_[node].cover, offset, offset + b.size) && node < changed_at_.size())
          changed_at_[node] = ++changes_;
      });
      // A node's start list holds every range of its descendants' lists, so
      // once the bytes are already in one, they are in all the lists above.
      for (std::size_t node = width_ + b.lo; node >= 1; node >>= 1)
        if (!add(nodes_[node].starts, offset, offset + b.size)) break;
    }
    return true;
  }

 private:
  template <class F>
  void for_each_cover_node(std::size_t lo, std::size_t hi, F&& f) const {
    for (std::size_t l = lo + width_, r = hi + width_; l < r; l >>= 1, r >>= 1) {
      if (l & 1) f(l++);
      if (r & 1) f(--r);
    }
  }

  /// Per block, the largest sum of live (aligned) bytes at one of the begin
  /// points it covers.
  [[nodiscard]] std::vector<double> peak_pressure() const {
    // Live bytes at each begin point: a difference array over [lo, hi).
    std::vector<double> live(points_ + 1, 0.0);
    for (const Block& b : blocks_) {
      live[b.lo] += static_cast<double>(b.size);
      live[b.hi] -= static_cast<double>(b.size);
    }
    for (std::size_t k = 1; k <= points_; ++k) live[k] += live[k - 1];
    // Range maxima with a sparse table.
    std::vector<std::vector<double>> table{std::vector<double>(live.begin(), live.begin() + points_)};
    for (std::size_t span = 1; 2 * span <= points_; span *= 2) {
      const std::vector<double>& prev = table.back();
      std::vector<double> next(points_ - 2 * span + 1);
      for (std::size_t k = 0; k < next.size(); ++k) next[k] = std::max(prev[k], prev[k + span]);
      table.push_back(std::move(next));
    }
    std::vector<double> key(blocks_.size());
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const std::size_t lo = blocks_[i].lo, len = blocks_[i].hi - lo;
      const std::size_t level = static_cast<std::size_t>(std::bit_width(len)) - 1;
      key[i] = std::max(table[level][lo], table[level][blocks_[i].hi - (std::size_t{1} << level)]);
    }
    return key;
  }

  /// Per block, the bytes of the blocks whose lifetimes overlap its own
  /// (itself included): those that begin before it ends minus those that
  /// end by its begin. On the compressed time, block j begins before block
  /// i ends iff `j.lo < i.hi`, and ends by i's begin iff `j.hi <= i.lo`, so
  /// two prefix sums over the points answer every block in O(1). The sums
  /// are exact integers (the total was checked against overflow).
  [[nodiscard]] std::vector<double> overlapping_bytes() const {
    std::vector<std::int64_t> begun(points_ + 1, 0), ended(points_ + 1, 0);
    for (const Block& b : blocks_) {
      if (b.lo < points_) begun[b.lo + 1] += b.size;  // begun[k]: blocks with lo < k
      ended[b.hi] += b.size;                           // ended[k]: blocks with hi <= k
    }
    for (std::size_t k = 1; k <= points_; ++k) {
      begun[k] += begun[k - 1];
      ended[k] += ended[k - 1];
    }
    std::vector<double> key(blocks_.size());
    for (std::size_t i = 0; i < blocks_.size(); ++i)
      key[i] = static_cast<double>(begun[blocks_[i].hi] - ended[blocks_[i].lo]);
    return key;
  }

  /// The bytes `[lo, hi)`.
  struct Range {
    std::int64_t lo, hi;
  };

  // Range lists are copied and sorted with plain loops: most hold one to
  // three ranges, and libstdc++'s algorithms hand trivially copyable
  // elements to memmove, whose call costs more than such a copy. Measured
  // with g++ 12.2 / libstdc++ 12 at -O3 (medians of 3, on a loaded 2-core
  // VM): with std::copy and std::sort, BM_arena_transformer_100k was 4-8%
  // slower and BM_arena_random_100k 0-5%.
  static void copy_ranges(const Range* from, std::size_t count, Range* to) noexcept {
    for (std::size_t k = 0; k < count; ++k) to[k] = from[k];
  }
  /// Sorts `ranges` by `lo` (insertion sort up to 16 ranges, as std::sort
  /// does, without its memmove).
  static void sort_by_lo(std::span<Range> ranges) {
    if (ranges.size() > 16) {
      std::sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) { return x.lo < y.lo; });
      return;
    }
    for (std::size_t i = 1; i < ranges.size(); ++i) {
      const Range r = ranges[i];
      std::size_t j = i;
      for (; j > 0 && r.lo < ranges[j - 1].lo; --j) ranges[j] = ranges[j - 1];
      ranges[j] = r;
    }
  }

  /// Storage for the slices of range sets (`RangeList`): chunks that never
  /// move, so a slice is a pointer, and a set that outgrows its slice moves
  /// to one twice as large while the old one goes back to a free list of
  /// its size, for the next set that grows to it. One flat vector holding
  /// every slice was grown by reallocation, zero-filled and copied, and
  /// kept the abandoned slices: a third of a 100k-block packing went to
  /// that and to the page faults of its fresh memory (before that, a heap
  /// vector per node spent as much in malloc and free).
  class SliceStore {
   public:
    /// A slice of `2^size_class` ranges.
    [[nodiscard]] Range* allocate(unsigned size_class) {
      if (size_class < free_.size() && !free_[size_class].empty()) {
        Range* const slice = free_[size_class].back();
        free_[size_class].pop_back();
        return slice;
      }
      const std::size_t size = std::size_t{1} << size_class;
      // Not zero-filled: a slice's ranges are written before they are read.
      if (size > chunk_ranges) {  // a set larger than a chunk has its own
        large_.push_back(std::make_unique_for_overwrite<Range[]>(size));
        return large_.back().get();
      }
      if (used_ + size > chunk_ranges) {
        ++chunk_;
        used_ = 0;
      }
      if (chunk_ == chunks_.size()) chunks_.push_back(std::make_unique_for_overwrite<Range[]>(chunk_ranges));
      Range* const slice = chunks_[chunk_].get() + used_;
      used_ += size;
      return slice;
    }
    void release(Range* slice, unsigned size_class) {
      if (free_.size() <= size_class) free_.resize(size_class + 1);
      free_[size_class].push_back(slice);
    }
    /// Every slice free again; the chunks stay for the next packing.
    void clear() {
      chunk_ = 0;
      used_ = 0;
      for (std::vector<Range*>& f : free_) f.clear();
      large_.clear();
    }

   private:
    static constexpr std::size_t chunk_ranges = std::size_t{1} << 16;
    std::vector<std::unique_ptr<Range[]>> chunks_;
    std::vector<std::unique_ptr<Range[]>> large_;
    std::size_t chunk_ = 0, used_ = 0;  // the next free range: chunks_[chunk_][used_]
    std::vector<std::vector<Range*>> free_;
  };

  /// A node's byte ranges `[lo, hi)`: disjoint, in increasing order, and
  /// touching ranges merged, since only the gaps between them matter. They
  /// live in a slice of `2^size_class` ranges from `slices_`.
  struct RangeList {
    Range* data = nullptr;
    // A set holds at most one range per block (fewer than 2^32 - 1), so
    // 32 bits suffice for its size and a class of at most 32 for its slice.
    std::uint32_t size = 0, size_class = 0;
  };

  /// Adds `[lo, hi)` to `set`; false when the set held those bytes already.
  bool add(RangeList& set, std::int64_t lo, std::int64_t hi) {
    Range* const begin = set.data;
    Range* const end = begin + set.size;
    Range* const first = std::lower_bound(begin, end, lo, [](const Range& r, std::int64_t x) { return r.hi < x; });
    if (first != end && first->lo <= lo && hi <= first->hi) return false;
    Range* last = first;
    for (; last != end && last->lo <= hi; ++last) {
      lo = std::min(lo, last->lo);
      hi = std::max(hi, last->hi);
    }
    if (first != last) {  // merged into the ranges it touches: the set shrinks or keeps its size
      *first = {lo, hi};
      copy_ranges(last, static_cast<std::size_t>(end - last), first + 1);
      set.size -= static_cast<std::uint32_t>(last - first - 1);
      return true;
    }
    const std::size_t at = static_cast<std::size_t>(first - begin);
    if (set.data == nullptr || set.size == std::size_t{1} << set.size_class) {
      // A first slice of one range: most sets at the bottom of the trees
      // never hold more, and the smaller footprint is fewer cache misses.
      const unsigned size_class = set.data == nullptr ? 0 : set.size_class + 1;
      Range* const moved = slices_.allocate(size_class);
      copy_ranges(set.data, set.size, moved);
      if (set.data != nullptr) slices_.release(set.data, set.size_class);
      set.data = moved;
      set.size_class = size_class;
    }
    for (std::size_t k = set.size; k > at; --k) set.data[k] = set.data[k - 1];
    set.data[at] = {lo, hi};
    ++set.size;
    return true;
  }

  /// Path unions. The cover lists on a path from a leaf to the root hold
  /// most of a block's ranges (on 100k random blocks six in seven), and
  /// they are mostly the same for every leaf below a node and rarely
  /// change once the long-lived blocks are placed: the upper levels of the
  /// path overlap and touch each other (on 100k random blocks 1.4M ranges
  /// collected made 0.5M once merged). So for each node `path_union_level`
  /// levels above the leaves, the merged union of its cover list and its
  /// ancestors' is kept, and recomputed only when one of those lists has
  /// changed since (`changed_at_`, stamps from a counter of changes). A
  /// best fit depends only on the union of the ranges it sees, so the
  /// packing is the one the lists themselves give; the work limit still
  /// counts every range of every list.
  static constexpr std::size_t path_union_level = 6;
  struct PathUnion {
    RangeList ranges;
    std::size_t computed_at = 0;
    bool valid = false;
  };

  /// The union of the cover lists of `node` (at `path_union_level`) and its
  /// ancestors; adds their sizes to `visits`.
  const RangeList& path_union(std::size_t node, std::size_t& visits) {
    std::size_t latest = 0;
    for (std::size_t up = node; up >= 1; up >>= 1) {
      visits += nodes_[up].cover.size;
      latest = std::max(latest, changed_at_[up]);
    }
    PathUnion& cache = path_unions_[node - (width_ >> path_union_level)];
    if (cache.valid && latest <= cache.computed_at) return cache.ranges;
    scratch_.clear();
    for (std::size_t up = node; up >= 1; up >>= 1)
      scratch_.insert(scratch_.end(), nodes_[up].cover.data, nodes_[up].cover.data + nodes_[up].cover.size);
    std::sort(scratch_.begin(), scratch_.end(), [](const Range& x, const Range& y) { return x.lo < y.lo; });
    // Merged in place (touching ranges too), then stored in a slice.
    std::size_t merged = 0;
    for (const Range& r : scratch_) {
      if (merged > 0 && r.lo <= scratch_[merged - 1].hi)
        scratch_[merged - 1].hi = std::max(scratch_[merged - 1].hi, r.hi);
      else
        scratch_[merged++] = r;
    }
    RangeList& stored = cache.ranges;
    if (stored.data == nullptr || merged > std::size_t{1} << stored.size_class) {
      if (stored.data != nullptr) slices_.release(stored.data, stored.size_class);
      stored.size_class = static_cast<std::uint32_t>(std::bit_width(std::max<std::size_t>(merged, 2) - 1));
      stored.data = slices_.allocate(stored.size_class);
    }
    std::copy_n(scratch_.data(), merged, stored.data);
    stored.size = static_cast<std::uint32_t>(merged);
    cache.computed_at = changes_;
    cache.valid = true;
    return stored;
  }

  // A block's lists sit at the bottom of the trees, among hundreds of
  // thousands of nodes, so reading a node and then its ranges were two
  // cache misses per level that the loop waited on. The order is known,
  // so the nodes of the block placed `2 * prefetch_ahead` blocks later are
  // asked for, and the ranges of the one `prefetch_ahead` later (its nodes
  // are loaded by then; a list that moves before its block comes is only a
  // wasted hint).
  static constexpr std::size_t prefetch_ahead = 4;
  // The levels whose lists a block reads one by one: above them it reads
  // its path union, and without path unions (fewer than 2^path_union_level
  // leaves) the whole path has at most this many levels. The few nodes
  // above, read by every block, stay in the cache.
  static constexpr std::size_t prefetched_levels = path_union_level;

  void prefetch_nodes(const Block& b) const {
    std::size_t node = width_ + b.lo;
    for (std::size_t level = 0; level < prefetched_levels && node >= 1; ++level, node >>= 1) prefetch(&nodes_[node]);
  }
  void prefetch_ranges(const Block& b) const {
    std::size_t node = width_ + b.lo;
    for (std::size_t level = 0; level < prefetched_levels && node >= 1; ++level, node >>= 1) {
      prefetch(nodes_[node].cover.data);
      prefetch(nodes_[node].starts.data);
    }
  }

  std::vector<Block> blocks_;
  std::size_t points_ = 0, width_ = 1;
  // Per segment-tree node, the bytes taken by the placed blocks that cover
  // the node's time range or that begin in it; side by side because the
  // path from a leaf to the root reads the one and extends the other.
  struct Node {
    RangeList cover, starts;
  };
  std::vector<Node> nodes_;
  SliceStore slices_;
  // Path unions (see `path_union`): whether the trees are tall enough for
  // them, the changes made to cover lists at or above `path_union_level`, the
  // last change of each such list, and the unions of the nodes there.
  bool uses_path_unions_ = false;
  std::size_t changes_ = 0;
  std::vector<std::size_t> changed_at_;
  std::vector<PathUnion> path_unions_;
  std::vector<Range> scratch_;
  // The ranges that overlap the block being placed (a prefix of it).
  std::vector<Range> taken_;
  struct Placing {
    Block block;
    std::int64_t raw;
    std::uint32_t index;
  };
  std::vector<Placing> in_order_;
};

}  // namespace detail

/// Places `trace` into one arena per device (see the file comment). Blocks
/// of zero bytes sit at offset 0. Throws `std::invalid_argument` for an
/// invalid trace (`validate_trace`), an alignment that is not a power of
/// two, more than 2^32 - 1 blocks on one device, or sizes whose sum
/// overflows 64 bits.
[[nodiscard]] inline ArenaPlan place_in_arenas(const AllocationTrace& trace, const ArenaOptions& options = {}) {
  if (auto bad = validate_trace(trace)) throw std::invalid_argument("arena planner: " + *bad);
  const std::int64_t alignment = options.alignment;
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("arena planner: the alignment " + std::to_string(alignment) +
                                " is not a positive power of two");
  std::vector<ArenaOrder> orders = options.orders;
  if (orders.empty()) orders.assign(std::begin(all_arena_orders), std::end(all_arena_orders));
  if (!(options.stop_within >= 0) || !std::isfinite(options.stop_within))
    throw std::invalid_argument("arena planner: stop_within must be a finite non-negative fraction, not " +
                                std::to_string(options.stop_within));

  std::map<std::int32_t, std::vector<std::size_t>> by_device;
  for (std::size_t i = 0; i < trace.allocations.size(); ++i) by_device[trace.allocations[i].device].push_back(i);

  ArenaPlan plan;
  plan.placement.blocks.assign(trace.allocations.size(), BlockPlacement{});
  for (const auto& [device, members] : by_device) {
    const std::size_t arena = plan.placement.arenas.size();
    std::vector<detail::ArenaPacker::Block> blocks;
    std::vector<std::int64_t> raw;
    std::vector<std::size_t> trace_index;
    std::int64_t total = 0;
    for (const std::size_t i : members) {
      const TracedAllocation& a = trace.allocations[i];
      plan.placement.blocks[i] = {arena, 0};
      if (a.bytes == 0) continue;
      const std::int64_t size = detail::align_up_checked(a.bytes, alignment, a);
      if (total > std::numeric_limits<std::int64_t>::max() - size)
        throw std::invalid_argument("arena planner: the blocks of device " + std::to_string(device) +
                                    " need more than 2^63 bytes together");
      total += size;
      blocks.push_back({size, a.begin, a.end, 0, 0});
      raw.push_back(a.bytes);
      trace_index.push_back(i);
    }
    if (blocks.size() >= std::numeric_limits<std::uint32_t>::max())
      throw std::invalid_argument("arena planner: more than 2^32 - 1 blocks on device " + std::to_string(device));
    detail::ArenaPacker packer(std::move(blocks));
    detail::ArenaPacker::Packing best, candidate;
    ArenaOrder best_order = orders.front();
    bool have_best = false;
    std::vector<std::uint32_t> best_sequence;
    // Compared in floating point: the bound times a fraction cannot
    // overflow there, and the precision lost is far below the tolerance.
    const std::int64_t bound = packer.aligned_lower_bound();
    const auto good_enough = [&] {
      return static_cast<double>(best.arena) <= static_cast<double>(bound) * (1.0 + options.stop_within);
    };
    for (const ArenaOrder kind : orders) {
      if (have_best && good_enough()) break;
      std::size_t visits = 0;
      std::vector<std::uint32_t> order = packer.order(kind);
      const std::size_t limit = have_best ? options.work_limit : std::numeric_limits<std::size_t>::max();
      const bool done = packer.pack(order, raw, limit, candidate, visits);
      plan.pair_visits += visits;
      if (!done) continue;
      ++plan.orders_completed;
      if (!have_best || candidate.arena < best.arena) {
        std::swap(best, candidate);
        best_sequence = std::move(order);
        best_order = kind;
        have_best = true;
      }
    }
    // Squeaky wheel: the blocks that end above the lower bound are the ones
    // the order served badly; move them to the front and pack again.
    for (std::size_t round = 0; round < options.improvement_rounds && best.arena > bound && !good_enough(); ++round) {
      std::vector<std::uint32_t> order;
      order.reserve(best_sequence.size());
      for (const std::uint32_t i : best_sequence)
        if (best.offsets[i] + raw[i] > bound) order.push_back(i);
      for (const std::uint32_t i : best_sequence)
        if (best.offsets[i] + raw[i] <= bound) order.push_back(i);
      std::size_t visits = 0;
      const bool done = packer.pack(order, raw, options.work_limit, candidate, visits);
      plan.pair_visits += visits;
      if (!done) break;
      ++plan.improvement_rounds;
      if (candidate.arena < best.arena) {
        std::swap(best, candidate);
        best_sequence = std::move(order);
      } else if (order == best_sequence) {
        break;
      } else {
        best_sequence = std::move(order);  // keep squeaking from the new order, keep the best packing
      }
    }
    for (std::size_t k = 0; k < trace_index.size(); ++k) plan.placement.blocks[trace_index[k]].offset = best.offsets[k];
    plan.placement.arenas.push_back({device, best.arena});
    plan.chosen.push_back(best_order);
  }
  return plan;
}

namespace detail {

/// The symbolic sizes that offsets are sums of, numbered in first-seen
/// order. Forms then hold sorted lists of small integers, so the set
/// operations of pruning compare integers rather than expression trees;
/// expressions are hash-consed, so one size is one node and one number.
class OffsetTerms {
 public:
  [[nodiscard]] std::uint32_t id(expr::Expr size, std::int64_t hint) {
    const auto [it, inserted] = ids_.try_emplace(size.node(), static_cast<std::uint32_t>(sizes_.size()));
    if (inserted) {
      sizes_.push_back(size);
      hints_.push_back(hint);
    }
    return it->second;
  }
  [[nodiscard]] expr::Expr size(std::uint32_t id) const { return sizes_[id]; }
  [[nodiscard]] std::int64_t hint(std::uint32_t id) const { return hints_[id]; }

 private:
  std::unordered_map<const expr::Node*, std::uint32_t> ids_;
  std::vector<expr::Expr> sizes_;
  std::vector<std::int64_t> hints_;  // each size's value at the hints
};

[[noreturn]] inline void throw_offset_overflow() {
  throw std::invalid_argument("symbolic_placement: an offset exceeds 2^63 bytes at the hints");
}

/// A lower bound on a symbolic offset that is a sum: a constant plus
/// symbolic terms (aligned sizes along one chain of blocks stacked below a
/// block). A block's offset is the Max of its forms; keeping offsets as flat
/// sets of forms, rather than nesting `Max(offset + align(size))`, keeps
/// every expression small (nested Max would share subterms in memory but
/// print and evaluate as trees exponential in the depth of the stacking).
struct OffsetForm {
  std::int64_t constant = 0;
  std::vector<std::uint32_t> terms;  // `OffsetTerms` ids, sorted, with repeats
  std::int64_t at_hints = 0;

  [[nodiscard]] OffsetForm plus(expr::Expr size, std::int64_t hint, OffsetTerms& known) const {
    OffsetForm f = *this;
    if (f.at_hints > std::numeric_limits<std::int64_t>::max() - hint) throw_offset_overflow();
    f.at_hints += hint;
    if (size.is_integer()) {
      f.constant += size.value();
    } else {
      const std::uint32_t t = known.id(size, hint);
      f.terms.insert(std::upper_bound(f.terms.begin(), f.terms.end(), t), t);
    }
    return f;
  }
  /// Not smaller than `o` for any binding (terms are sizes: non-negative).
  [[nodiscard]] bool dominates(const OffsetForm& o) const {
    return constant >= o.constant && std::includes(terms.begin(), terms.end(), o.terms.begin(), o.terms.end());
  }
  /// `join(o).at_hints`, without building the join: pruning asks this of
  /// every pair. Saturates, so an overflowing join is never the cheapest.
  [[nodiscard]] std::int64_t join_at_hints(const OffsetForm& o, const OffsetTerms& known) const {
    std::int64_t sum = std::max(constant, o.constant);
    auto add = [&](std::uint32_t t) {
      if (!checked::add(sum, known.hint(t), sum)) sum = std::numeric_limits<std::int64_t>::max();
    };
    auto a = terms.begin(), b = o.terms.begin();
    while (a != terms.end() && b != o.terms.end()) {
      if (*a < *b) {
        add(*a++);
      } else if (*b < *a) {
        add(*b++);
      } else {
        add(*a++);
        ++b;
      }
    }
    for (; a != terms.end(); ++a) add(*a);
    for (; b != o.terms.end(); ++b) add(*b);
    return sum;
  }
  /// A form not smaller than either.
  [[nodiscard]] OffsetForm join(const OffsetForm& o, const OffsetTerms& known) const {
    OffsetForm f{std::max(constant, o.constant), {}, 0};
    std::set_union(terms.begin(), terms.end(), o.terms.begin(), o.terms.end(), std::back_inserter(f.terms));
    f.at_hints = f.constant;
    for (const std::uint32_t t : f.terms)
      if (!checked::add(f.at_hints, known.hint(t), f.at_hints)) throw_offset_overflow();
    return f;
  }
  [[nodiscard]] expr::Expr to_expr(expr::Context& ctx, const OffsetTerms& known) const {
    std::vector<expr::Expr> parts;
    parts.reserve(terms.size() + 1);
    for (const std::uint32_t t : terms) parts.push_back(known.size(t));
    parts.push_back(ctx.integer(constant));
    return expr::add(parts);
  }
};

/// At most this many forms per offset; beyond, the two whose join is
/// smallest at the hints are joined (safe for every binding, but no longer
/// at most the hint placement at the hints). Programs have few distinct
/// symbolic sizes, so the cap is rarely reached.
inline constexpr std::size_t max_offset_forms = 32;

/// Drops dominated forms, then joins the cheapest pair (the first in
/// (a, b) order among equals) until `max_offset_forms` remain. The join
/// costs live in a matrix over the forms' slots, with each row's cheapest
/// entry cached: a join recomputes one row and column and the rows whose
/// cheapest entry it touched, so k forms cost O(k^2) joins, not O(k^3).
/// Slots keep their order and a join lands in its first slot, which keeps
/// the choice the same as joining in a list.
inline void prune_offset_forms(std::vector<OffsetForm>& forms, const OffsetTerms& known) {
  std::vector<OffsetForm> kept;
  for (OffsetForm& f : forms) {
    bool dominated = false;
    for (const OffsetForm& k : kept)
      if (k.dominates(f)) {
        dominated = true;
        break;
      }
    if (dominated) continue;
    std::erase_if(kept, [&](const OffsetForm& k) { return f.dominates(k); });
    kept.push_back(std::move(f));
  }
  const std::size_t n = kept.size();
  if (n > max_offset_forms) {
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::vector<std::int64_t> cost(n * n);
    std::vector<bool> alive(n, true);
    std::vector<std::size_t> row_best(n, none);  // per row a: the first b > a of least cost
    auto refresh_row = [&](std::size_t a) {
      row_best[a] = none;
      for (std::size_t b = a + 1; b < n; ++b)
        if (alive[b] && (row_best[a] == none || cost[a * n + b] < cost[a * n + row_best[a]])) row_best[a] = b;
    };
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b) cost[a * n + b] = kept[a].join_at_hints(kept[b], known);
    for (std::size_t a = 0; a < n; ++a) refresh_row(a);
    for (std::size_t remaining = n; remaining > max_offset_forms; --remaining) {
      std::size_t best_a = none;
      for (std::size_t a = 0; a < n; ++a)
        if (alive[a] && row_best[a] != none &&
            (best_a == none || cost[a * n + row_best[a]] < cost[best_a * n + row_best[best_a]]))
          best_a = a;
      const std::size_t best_b = row_best[best_a];
      kept[best_a] = kept[best_a].join(kept[best_b], known);
      alive[best_b] = false;
      for (std::size_t c = 0; c < n; ++c) {
        if (!alive[c] || c == best_a) continue;
        const std::size_t lo = std::min(c, best_a), hi = std::max(c, best_a);
        cost[lo * n + hi] = kept[lo].join_at_hints(kept[hi], known);
      }
      // Rows above best_a: their entry at best_a changed, and best_b is gone.
      for (std::size_t c = 0; c < best_a; ++c) {
        if (!alive[c]) continue;
        const std::size_t r = row_best[c];
        if (r == best_a || r == best_b) {
          refresh_row(c);
        } else if (r == none || (cost[c * n + best_a] < cost[c * n + r] ||
                                 (cost[c * n + best_a] == cost[c * n + r] && best_a < r))) {
          row_best[c] = best_a;
        }
      }
      refresh_row(best_a);
      for (std::size_t c = best_a + 1; c < best_b; ++c)
        if (alive[c] && row_best[c] == best_b) refresh_row(c);
    }
    std::vector<OffsetForm> survivors;
    survivors.reserve(max_offset_forms);
    for (std::size_t a = 0; a < n; ++a)
      if (alive[a]) survivors.push_back(std::move(kept[a]));
    kept = std::move(survivors);
  }
  forms = std::move(kept);
}

/// The Max of `forms` as an expression.
[[nodiscard]] inline expr::Expr max_of_forms(expr::Context& ctx, const std::vector<OffsetForm>& forms,
                                             const OffsetTerms& known) {
  std::vector<expr::Expr> parts;
  parts.reserve(forms.size());
  for (const OffsetForm& f : forms) parts.push_back(f.to_expr(ctx, known));
  return expr::max(parts);
}

/// Sets of offset forms, interned by content (forms in order), with what
/// `symbolic_placement` derives from them memoized: a program's blocks
/// mostly stack the same few sizes (a chain alternates two offsets), and
/// building, pruning and printing the same sets once per block (a vector
/// per form, a Max to intern) was most of a 333k-block placement. A
/// derivation's result depends only on its key (the sets and sizes it
/// reads), so a memoized one is the set computing it again would give.
class FormSets {
 public:
  using Key = std::vector<std::uint64_t>;

  /// The id of `forms`' content.
  [[nodiscard]] std::uint32_t intern(std::vector<OffsetForm>&& forms) {
    content_.clear();
    for (const OffsetForm& f : forms) {
      content_.push_back(static_cast<std::uint64_t>(f.constant));
      for (const std::uint32_t t : f.terms) content_.push_back(t);
      content_.push_back(end_of_form);
    }
    const auto [it, fresh] = ids_.try_emplace(content_, static_cast<std::uint32_t>(sets_.size()));
    if (fresh) {
      sets_.push_back(std::move(forms));
      exprs_.emplace_back();
    }
    return it->second;
  }
  [[nodiscard]] const std::vector<OffsetForm>& operator[](std::uint32_t id) const { return sets_[id]; }

  /// The Max of set `id` as an expression.
  [[nodiscard]] expr::Expr max_of(std::uint32_t id, expr::Context& ctx, const OffsetTerms& known) {
    if (!exprs_[id]) exprs_[id] = max_of_forms(ctx, sets_[id], known);
    return exprs_[id];
  }

  /// The memoized result of the derivation `key`, or null.
  [[nodiscard]] const std::uint32_t* derived(const Key& key) const {
    const auto it = derived_.find(key);
    return it == derived_.end() ? nullptr : &it->second;
  }
  void derive(const Key& key, std::uint32_t id) { derived_.emplace(key, id); }

 private:
  // Constants and term ids are below 2^63: this value ends a form.
  static constexpr std::uint64_t end_of_form = ~std::uint64_t{0};
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t h = k.size();
      for (const std::uint64_t v : k) h = wrapir::detail::hash_mix(h, static_cast<std::size_t>(v));
      return h;
    }
  };
  std::vector<std::vector<OffsetForm>> sets_;
  std::vector<expr::Expr> exprs_;
  Key content_;
  std::unordered_map<Key, std::uint32_t, KeyHash> ids_;
  std::unordered_map<Key, std::uint32_t, KeyHash> derived_;
};

}  // namespace detail

/// A placement whose offsets and arena sizes are expressions (see the file
/// comment): safe for every binding of the symbols.
struct SymbolicPlacement {
  /// Per block (trace order): its arena and its byte offset.
  std::vector<std::size_t> arena_of;
  std::vector<expr::Expr> offsets;
  /// Per arena: its device and its size in bytes.
  std::vector<std::int32_t> arena_device;
  std::vector<expr::Expr> arena_bytes;
};

/// Turns `hint_placement`, a valid placement of `trace` (whose sizes are the
/// hints), into offsets safe for any binding of `symbolic_bytes` (one
/// non-negative size expression per block, equal to the block's `bytes` at
/// the hints; all of one context). Throws `std::invalid_argument` when the
/// spans do not match, when the placement is invalid, or when a block of
/// zero bytes at the hints has a size that is not the integer 0 (a plan at
/// the hints cannot keep it apart from anything). Cost: one Max term per
/// pair of time-overlapping blocks, so meant for program-sized traces.
[[nodiscard]] inline SymbolicPlacement symbolic_placement(const AllocationTrace& trace, const Placement& hint_placement,
                                                          std::span<const expr::Expr> symbolic_bytes,
                                                          std::int64_t alignment = planner_alignment);

namespace detail {

/// `symbolic_placement` of a placement known to be valid (the arena
/// planner's own): checking it again was a tenth of a large program's plan.
[[nodiscard]] inline SymbolicPlacement symbolic_placement_of(const AllocationTrace& trace,
                                                             const Placement& hint_placement,
                                                             std::span<const expr::Expr> symbolic_bytes,
                                                             std::int64_t alignment) {
  const auto& blocks = trace.allocations;
  if (symbolic_bytes.size() != blocks.size())
    throw std::invalid_argument("symbolic_placement: " + std::to_string(symbolic_bytes.size()) +
                                " symbolic sizes for " + std::to_string(blocks.size()) + " blocks");
  SymbolicPlacement out;
  for (const ArenaExtent& a : hint_placement.arenas) out.arena_device.push_back(a.device);
  if (blocks.empty()) {
    for (std::size_t k = 0; k < hint_placement.arenas.size(); ++k) out.arena_bytes.push_back(expr::Expr{});
    return out;
  }
  expr::Context& ctx = symbolic_bytes.front().context();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (!symbolic_bytes[i])
      throw std::invalid_argument("symbolic_placement: block " + blocks[i].name + " has a null size");
    if (&symbolic_bytes[i].context() != &ctx)
      throw std::invalid_argument("symbolic_placement: the sizes belong to different expression contexts");
    if (blocks[i].bytes == 0 && !symbolic_bytes[i].is_integer(0))
      throw std::invalid_argument("symbolic_placement: block " + blocks[i].name +
                                  " has 0 bytes at the hints but the size " + expr::to_string(symbolic_bytes[i]));
  }
  // Blocks by hint offset: every block below another comes first.
  // Offsets are not negative (the placement is valid), and the sort is
  // stable, so equal offsets keep the blocks in trace order.
  std::vector<detail::KeyedIndex> offset_order(blocks.size()), scratch;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    offset_order[i] = {static_cast<std::uint64_t>(hint_placement.blocks[i].offset), static_cast<std::uint32_t>(i)};
  detail::radix_sort(offset_order, scratch);
  std::vector<std::size_t> by_offset(blocks.size());
  for (std::size_t k = 0; k < blocks.size(); ++k) by_offset[k] = offset_order[k].index;
  std::vector<detail::KeyedIndex>().swap(offset_order);
  std::vector<detail::KeyedIndex>().swap(scratch);
  out.arena_of.resize(blocks.size());
  out.offsets.assign(blocks.size(), ctx.integer(0));
  detail::OffsetTerms known;
  FormSets sets;
  // Per block its forms, per arena the forms of its size, as sets.
  const std::uint32_t lone_zero = sets.intern({detail::OffsetForm{}});
  constexpr std::uint32_t no_tops = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> form_set(blocks.size(), lone_zero);
  std::vector<std::uint32_t> arena_tops(hint_placement.arenas.size(), no_tops);
  std::vector<expr::Expr> aligned(blocks.size());
  // `align(size)` per distinct size: interning it once per block cost as
  // much as the rest of the block.
  std::unordered_map<const expr::Node*, expr::Expr> aligned_size;
  // Per arena, the block placed last at each time step. The placed blocks
  // under block i that overlap it in time and that no block placed after
  // them (and under i) overlaps in time are exactly those on top somewhere
  // in i's lifetime that no later one of those overlaps (by Helly's
  // property of intervals, a later block overlapping one of them and i
  // overlaps both at one step, where some block at least as late is on top),
  // so reading the skyline finds them without looking at other blocks.
  std::vector<detail::Skyline> skylines(hint_placement.arenas.size());
  std::vector<std::size_t> rank(blocks.size());
  for (std::size_t k = 0; k < by_offset.size(); ++k) rank[by_offset[k]] = k;
  std::vector<std::uint32_t> under, uncovered;
  std::map<std::size_t, std::size_t> later_lifetimes;  // merged [begin, end) of the later blocks seen
  const auto overlaps_later = [&](const TracedAllocation& b) {
    auto it = later_lifetimes.upper_bound(b.begin);
    if (it != later_lifetimes.begin() && std::prev(it)->second > b.begin) return true;
    return it != later_lifetimes.end() && it->first < b.end;
  };
  const auto add_later = [&](const TracedAllocation& b) {
    std::size_t lo = b.begin, hi = b.end;
    auto it = later_lifetimes.upper_bound(lo);
    if (it != later_lifetimes.begin() && std::prev(it)->second >= lo) --it;
    while (it != later_lifetimes.end() && it->first <= hi) {
      lo = std::min(lo, it->first);
      hi = std::max(hi, it->second);
      it = later_lifetimes.erase(it);
    }
    later_lifetimes.emplace_hint(it, lo, hi);
  };
  const auto node_key = [](const expr::Expr& e) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(e.node())); };
  FormSets::Key key;
  for (const std::size_t i : by_offset) {
    const TracedAllocation& a = blocks[i];
    const std::size_t arena = hint_placement.blocks[i].arena;
    out.arena_of[i] = arena;
    std::uint32_t mine = lone_zero;
    if (a.bytes > 0) {
      under.clear();
      skylines[arena].paint(a.begin, a.end, static_cast<std::uint32_t>(i), under);
      std::sort(under.begin(), under.end(), [&](std::uint32_t x, std::uint32_t y) { return rank[x] < rank[y]; });
      under.erase(std::unique(under.begin(), under.end()), under.end());
      // A block below another one of these that it overlaps in time is
      // already counted in that one's forms, which dominate its own plus
      // its size: its forms would only be pruned again.
      uncovered.clear();
      later_lifetimes.clear();
      for (std::size_t x = under.size(); x-- > 0;) {
        const TracedAllocation& b = blocks[under[x]];
        if (!overlaps_later(b)) uncovered.push_back(under[x]);
        add_later(b);
      }
      if (!uncovered.empty()) {
        key.assign(1, 0);  // a block's forms
        for (std::size_t x = uncovered.size(); x-- > 0;) {
          const std::size_t j = uncovered[x];
          key.push_back(form_set[j]);
          key.push_back(node_key(aligned[j]));
          key.push_back(static_cast<std::uint64_t>(detail::align_up_checked(blocks[j].bytes, alignment, blocks[j])));
        }
        if (const std::uint32_t* known_set = sets.derived(key)) {
          mine = *known_set;
        } else {
          std::vector<detail::OffsetForm> forms;
          for (std::size_t x = uncovered.size(); x-- > 0;) {
            const std::size_t j = uncovered[x];
            const std::int64_t hint = detail::align_up_checked(blocks[j].bytes, alignment, blocks[j]);
            for (const detail::OffsetForm& f : sets[form_set[j]]) forms.push_back(f.plus(aligned[j], hint, known));
          }
          detail::prune_offset_forms(forms, known);
          if (forms.empty()) forms.push_back(detail::OffsetForm{});
          mine = sets.intern(std::move(forms));
          sets.derive(key, mine);
        }
      }
      auto [at, fresh] = aligned_size.try_emplace(symbolic_bytes[i].node());
      if (fresh) at->second = expr::align(symbolic_bytes[i], alignment);
      aligned[i] = at->second;
    }
    form_set[i] = mine;
    out.offsets[i] = sets.max_of(mine, ctx, known);
    // The arena's tops: its forms so far and this block's plus its size.
    key.assign({1, arena_tops[arena], mine, node_key(symbolic_bytes[i]), static_cast<std::uint64_t>(a.bytes)});
    if (const std::uint32_t* known_set = sets.derived(key)) {
      arena_tops[arena] = *known_set;
    } else {
      std::vector<detail::OffsetForm> tops;
      if (arena_tops[arena] != no_tops) tops = sets[arena_tops[arena]];
      for (const detail::OffsetForm& f : sets[mine]) tops.push_back(f.plus(symbolic_bytes[i], a.bytes, known));
      detail::prune_offset_forms(tops, known);
      const std::uint32_t made = sets.intern(std::move(tops));
      sets.derive(key, made);
      arena_tops[arena] = made;
    }
  }
  for (const std::uint32_t tops : arena_tops)
    out.arena_bytes.push_back(tops == no_tops ? ctx.integer(0) : sets.max_of(tops, ctx, known));
  return out;
}

}  // namespace detail

inline SymbolicPlacement symbolic_placement(const AllocationTrace& trace, const Placement& hint_placement,
                                            std::span<const expr::Expr> symbolic_bytes, std::int64_t alignment) {
  if (symbolic_bytes.size() != trace.allocations.size())
    throw std::invalid_argument("symbolic_placement: " + std::to_string(symbolic_bytes.size()) +
                                " symbolic sizes for " + std::to_string(trace.allocations.size()) + " blocks");
  if (auto bad = check_placement(trace, hint_placement, alignment))
    throw std::invalid_argument("symbolic_placement: the placement at the hints is invalid: " + *bad);
  return detail::symbolic_placement_of(trace, hint_placement, symbolic_bytes, alignment);
}

/// `placement` at `bindings`, to check or to run it; a diagnostic when an
/// expression cannot be evaluated there.
[[nodiscard]] inline Result<Placement> evaluate(const SymbolicPlacement& placement, const expr::Bindings& bindings) {
  Placement out;
  for (std::size_t k = 0; k < placement.arena_device.size(); ++k) {
    std::int64_t bytes = 0;
    if (placement.arena_bytes[k]) {
      auto v = expr::eval(placement.arena_bytes[k], bindings);
      if (!v) return Diagnostic{"the size of arena " + std::to_string(k) + ": " + v.error().message};
      bytes = v.value();
    }
    out.arenas.push_back({placement.arena_device[k], bytes});
  }
  for (std::size_t i = 0; i < placement.offsets.size(); ++i) {
    auto v = expr::eval(placement.offsets[i], bindings);
    if (!v) return Diagnostic{"the offset of block " + std::to_string(i) + ": " + v.error().message};
    out.blocks.push_back({placement.arena_of[i], v.value()});
  }
  return out;
}

/// Whether some block is larger at `bindings` than its hint in `trace`: then
/// the symbolic plan is still safe but may be much larger than a new plan
/// (see the file comment). A diagnostic when a size cannot be evaluated.
[[nodiscard]] inline Result<bool> needs_replan(const AllocationTrace& trace, std::span<const expr::Expr> symbolic_bytes,
                                               const expr::Bindings& bindings) {
  if (symbolic_bytes.size() != trace.allocations.size())
    return Diagnostic{std::to_string(symbolic_bytes.size()) + " symbolic sizes for " +
                      std::to_string(trace.allocations.size()) + " blocks"};
  for (std::size_t i = 0; i < symbolic_bytes.size(); ++i) {
    auto v = expr::eval(symbolic_bytes[i], bindings);
    if (!v) return Diagnostic{"the size of block " + trace.allocations[i].name + ": " + v.error().message};
    if (v.value() > trace.allocations[i].bytes) return true;
  }
  return false;
}

/// wrapir's arena planner on `program` (see the file comment), planned in
/// place and returned, with its statistics (`PlanStats::arenas` counts the
/// arenas): the overload for a caller that no longer needs the unplanned
/// program, which saves a copy of it. A diagnostic when the program cannot
/// be traced, a size cannot be built, or the name prefix does not make
/// valid names; after one, `program` may be partly planned.
[[nodiscard]] inline Result<PlanResult> plan_arena(ir::Program&& program, const ArenaOptions& options = {});

/// `plan_arena` of a copy of `program`.
[[nodiscard]] inline Result<PlanResult> plan_arena(const ir::Program& program, const ArenaOptions& options = {}) {
  return plan_arena(ir::Program(program), options);
}

namespace detail {

/// What planning one scope gives.
struct ArenaScope {
  std::size_t arenas = 0;
  /// The max-live bound of the scope's body before planning.
  std::int64_t lower_bound = 0;
};

/// `storage_bytes_expr` of buffers whose storage sizes come from `hints`
/// (built once per layout there), once per distinct size and item size:
/// building and interning the product once per buffer was a third of a
/// large program's plan.
class StorageBytes {
 public:
  [[nodiscard]] Result<expr::Expr> of(const ir::Program& p, ir::BufferId b, HintEvaluator& hints) {
    const Result<expr::Expr>& elements = hints.buffer_storage_size(p, b);
    if (!elements) return elements.error();
    const auto item = static_cast<std::int64_t>(ir::itemsize(p.buffer(b).layout.dtype));
    const auto [it, fresh] = made_.try_emplace(Key{elements.value().node(), item});
    if (!fresh) return it->second;
    try {
      it->second = expr::mul(elements.value(), elements.value().context().integer(item));
    } catch (const expr::Error& e) {
      made_.erase(it);
      return Diagnostic{std::string("its size in bytes cannot be built: ") + e.what()};
    }
    return it->second;
  }

 private:
  using Key = std::pair<const expr::Node*, std::int64_t>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return wrapir::detail::hash_mix(std::hash<const expr::Node*>{}(k.first), static_cast<std::size_t>(k.second));
    }
  };
  std::unordered_map<Key, expr::Expr, KeyHash> made_;
};

[[nodiscard]] inline Result<ArenaScope> plan_arena_in(ir::Program& p, const ArenaOptions& options,
                                                      HintEvaluator& hints) {
  ArenaScope scope;
  for (ir::Program& g : p.subgraphs) {
    HintEvaluator sub_hints{g, TraceOptions{}};
    Result<ArenaScope> sub = plan_arena_in(g, options, sub_hints);
    if (!sub) return Diagnostic{"subgraph " + g.name + ": " + sub.error().message};
    scope.arenas += sub.value().arenas;
  }
  // `trace_program`'s steps, without the names of the blocks not placed.
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  const Liveness& liveness = live.value();
  Result<std::vector<LiveSpan>> spans_or = spans_from(p, liveness, hints);
  if (!spans_or) return spans_or.error();
  const std::vector<LiveSpan>& spans = spans_or.value();
  scope.lower_bound = max_live_of(spans);
  // The blocks we place: storage created by Allocate.
  constexpr std::size_t unplaced = std::numeric_limits<std::size_t>::max();
  AllocationTrace trace;
  trace.steps = liveness.steps;
  std::vector<std::size_t> placed_of_block(spans.size(), unplaced);
  std::vector<std::size_t> block_of_placed;
  std::vector<expr::Expr> sizes;
  StorageBytes storage_bytes;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const BufferLifetime& l = liveness.lifetimes[i];
    if (l.origin != StorageOrigin::allocate) continue;
    const ir::BufferDecl& d = p.buffer(l.buffer);
    Result<expr::Expr> size = storage_bytes.of(p, l.buffer, hints);
    if (!size) return Diagnostic{"buffer " + d.name + ": " + size.error().message};
    sizes.push_back(size.value());
    const LiveSpan& s = spans[i];
    const std::int64_t bytes = s.bytes == 0 && !sizes.back().is_integer(0) ? 1 : s.bytes;
    placed_of_block[i] = block_of_placed.size();
    block_of_placed.push_back(i);
    trace.allocations.push_back(TracedAllocation{d.name, bytes, s.begin, s.end, s.device, s.is_output});
  }
  if (trace.allocations.empty()) return scope;
  ArenaPlan plan;
  SymbolicPlacement symbolic;
  try {
    plan = place_in_arenas(trace, options);
    symbolic = symbolic_placement_of(trace, plan.placement, sizes, options.alignment);
  } catch (const std::invalid_argument& e) {
    return Diagnostic{e.what()};
  } catch (const expr::Error& e) {
    return Diagnostic{std::string("an arena offset cannot be built: ") + e.what()};
  }
  // One pool per arena.
  const std::size_t arenas = symbolic.arena_bytes.size();
  std::unordered_set<std::string> names = names_with_prefix(p, options.name_prefix);
  std::size_t counter = 0;
  const std::size_t first_pool = p.pools.size();
  std::vector<std::size_t> last_use(arenas, 0);
  std::vector<bool> holds_output(arenas, false);
  std::vector<ir::Device> device(arenas);
  for (std::size_t j = 0; j < block_of_placed.size(); ++j) {
    const BufferLifetime& l = liveness.lifetimes[block_of_placed[j]];
    const std::size_t k = symbolic.arena_of[j];
    device[k] = p.buffer(l.buffer).layout.device;
    last_use[k] = std::max(last_use[k], l.last_line);
    holds_output[k] = holds_output[k] || l.is_output;
  }
  for (std::size_t k = 0; k < arenas; ++k)
    p.pools.push_back(
        ir::PoolDecl{fresh_numbered_name(options.name_prefix, counter, names), device[k], symbolic.arena_bytes[k]});
  const auto placed = [&](ir::BufferId b) -> std::size_t {
    if (!p.contains(b) || b.index >= liveness.storage_of.size()) return unplaced;
    const std::size_t block = liveness.storage_of[b.index];
    return block < placed_of_block.size() ? placed_of_block[block] : unplaced;
  };
  const auto pool_of_arena = [&](std::size_t k) { return ir::PoolId{static_cast<std::uint32_t>(first_pool + k)}; };
  const std::vector<PoolRelease> releases = rewrite_into_pools(
      p,
      [&](ir::BufferId b) -> std::optional<PoolSlot> {
        // Only the line that creates a placed block carves it.
        const std::size_t j = placed(b);
        if (j == unplaced || liveness.lifetimes[block_of_placed[j]].buffer != b) return std::nullopt;
        return PoolSlot{pool_of_arena(symbolic.arena_of[j]), symbolic.offsets[j]};
      },
      [&](ir::BufferId b) -> std::optional<ir::PoolId> {
        const std::size_t j = placed(b);
        if (j == unplaced) return std::nullopt;
        return pool_of_arena(symbolic.arena_of[j]);
      },
      [](const ir::Line&) {});
  // The last DeallocFromPool of an arena releases it when no block of the
  // arena is used later and none is a program output.
  std::vector<const PoolRelease*> last(arenas, nullptr);
  for (const PoolRelease& r : releases) last[r.pool.index - first_pool] = &r;
  for (std::size_t k = 0; k < last.size(); ++k)
    if (last[k] && !holds_output[k] && last[k]->original_line >= last_use[k])
      std::get<ir::DeallocFromPool>(p.body[last[k]->body_index]).releases_pool = true;
  scope.arenas += arenas;
  return scope;
}

}  // namespace detail

inline Result<PlanResult> plan_arena(ir::Program&& program, const ArenaOptions& options) {
  if (auto bad = ir::check_name(options.name_prefix + "0", "arena name"))
    return Diagnostic{"the arena name prefix " + ir::quote_for_diagnostic(options.name_prefix) +
                      " is unusable: " + *bad};
  // The planned program has the original's buffer table, so one evaluator
  // serves the plan and its statistics.
  HintEvaluator hints{program, TraceOptions{}};
  Result<detail::ArenaScope> scope = detail::plan_arena_in(program, options, hints);
  if (!scope) return scope.error();
  Result<PlanStats> stats = detail::measure_against(scope.value().lower_bound, program, TraceOptions{}, hints);
  if (!stats) return stats.error();
  PlanResult result{std::move(program), stats.value()};
  result.stats.arenas = scope.value().arenas;
  return result;
}

}  // namespace wrapir::pass
