#pragma once
/// \file
/// The arena planner's packing of one device's blocks (pass/arena.hpp):
/// best fit in a given order, with the segment trees and range lists the
/// file comment of pass/arena.hpp describes.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>
#include <wrapir/pass/arena_orders.hpp>
#include <wrapir/pass/detail/prefetch.hpp>

namespace wrapir::pass::detail {

/// The blocks of one device, packed by best fit in several orders.
class ArenaPacker {
 public:
  struct Block {
    std::int64_t size;  // rounded up to `align`
    std::size_t begin, end;
    std::uint32_t lo, hi;  // the begin points it covers: [lo, hi)
    std::int64_t align;    // its offset's alignment (`block_alignment`), a power of two
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
    in_order_.reserve(order.size());  // exactly: one per block, for every order
    for (const std::uint32_t i : order) {
      const Block& b = blocks_[i];
      in_order_.push_back({b.size, b.align, raw[i], b.lo, b.hi, i});
    }
    for (std::size_t k = 0; k < in_order_.size(); ++k) {
      if (k + 2 * prefetch_ahead < in_order_.size()) prefetch_nodes(in_order_[k + 2 * prefetch_ahead].lo);
      if (k + prefetch_ahead < in_order_.size()) prefetch_ranges(in_order_[k + prefetch_ahead].lo);
      const Placing& placing = in_order_[k];
      const Placing& b = placing;  // a reference, not a structured binding: lambdas below capture it
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
      // Best fit: the smallest gap that holds the block at its alignment,
      // else the top. (When every block has the same alignment and sizes
      // are its multiples, every `top` is aligned already.)
      const auto aligned = [mask = b.align - 1](std::int64_t at) { return (at + mask) & ~mask; };
      std::int64_t top = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
      for (const auto& [lo, hi] : overlapping) {
        const std::int64_t start = aligned(top);
        if (lo - start >= b.size && lo - start < best_gap) {
          best = start;
          best_gap = lo - start;
        }
        top = std::max(top, hi);
      }
      const std::int64_t offset = best >= 0 ? best : aligned(top);
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

  void prefetch_nodes(std::size_t lo) const {
    std::size_t node = width_ + lo;
    for (std::size_t level = 0; level < prefetched_levels && node >= 1; ++level, node >>= 1) prefetch(&nodes_[node]);
  }
  void prefetch_ranges(std::size_t lo) const {
    std::size_t node = width_ + lo;
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
  // What placing a block reads of it, in placing order: 40 bytes, not the
  // 56 of a `Block` with its raw size and index (at a million lines the
  // copy is as large as the blocks).
  struct Placing {
    std::int64_t size, align, raw;
    std::uint32_t lo, hi, index;
  };
  std::vector<Placing> in_order_;
};

}  // namespace wrapir::pass::detail
