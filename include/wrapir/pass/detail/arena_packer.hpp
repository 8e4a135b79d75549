#pragma once
/// \file
/// The arena planner's packing of one device's blocks (pass/arena.hpp):
/// best fit in a given order, with the segment trees and range lists the
/// file comment of pass/arena.hpp describes.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <stdexcept>
#include <utility>
#include <vector>
#include <wrapir/pass/arena_orders.hpp>
#include <wrapir/pass/detail/prefetch.hpp>

namespace wrapir::pass::detail {

/// A block as the caller describes it to `BasicArenaPacker`, which keeps
/// only what packing reads and asks the caller for the steps again when it
/// orders the blocks.
struct PackerBlock {
  std::int64_t size;  // rounded up to `align`
  std::size_t begin, end;
  std::uint32_t lo, hi;  // ignored: the packer computes them
  std::int64_t align;    // its offset's alignment (`block_alignment`), a power of two
};

/// A best-fit packing: the offsets and the arena size (the top of the
/// highest block, raw sizes at the top).
struct ArenaPacking {
  std::vector<std::int64_t> offsets;
  std::int64_t arena = 0;
};

/// The blocks of one device, packed by best fit in several orders.
///
/// The segment trees' byte ranges are kept in units of the smallest
/// alignment of the device's blocks (every offset and every rounded size is
/// a multiple of it, so the packing is the same), as `Offset`s: with
/// `std::int32_t` a range takes 8 bytes and a tree node 16, half of what
/// 64-bit ranges take, for a device whose blocks reach at most
/// `2^31 - 1` units (32 GiB at 16-byte units, 128 GiB at 64). A packing
/// that would place a block past that stops (`pack` gives false and
/// `outgrew_ranges()` true), and the caller packs with `std::int64_t`
/// (`ArenaPacker`) instead, which the 64-bit sum checked before packing
/// always bounds.
template <class Offset>
class BasicArenaPacker {
  static_assert(std::is_same_v<Offset, std::int32_t> || std::is_same_v<Offset, std::int64_t>);

 public:
  using Block = PackerBlock;
  using Packing = ArenaPacking;

  explicit BasicArenaPacker(std::span<const Block> blocks)
      : BasicArenaPacker(blocks.size(), [&](std::size_t i) -> const Block& { return blocks[i]; }) {}

  /// `count` blocks, `block(i)` the `i`-th (anything with a `Block`'s
  /// `size`, `begin`, `end` and `align`), read a few times here and never
  /// kept: a caller need not hold a table of them.
  template <class BlockOf>
  BasicArenaPacker(std::size_t count, BlockOf&& block) {
    blocks_.reserve(count);
    align_log2_.reserve(count);
    std::size_t last_end = 0;
    unsigned unit_log2 = 63;
    for (std::size_t i = 0; i < count; ++i) {
      const auto& b = block(i);
      const auto align_log2 = static_cast<unsigned>(std::countr_zero(static_cast<std::uint64_t>(b.align)));
      align_log2_.push_back(static_cast<std::uint8_t>(align_log2));
      unit_log2 = std::min(unit_log2, align_log2);
      last_end = std::max(last_end, static_cast<std::size_t>(b.end));
    }
    unit_log2_ = count == 0 ? 0 : unit_log2;
    // Sizes in units too: every order and bound reads them scaled by the
    // same power of two, which changes no comparison. A block larger than
    // the ranges reach cannot be packed with them.
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t units = block(i).size >> unit_log2_;
      if (units > std::int64_t{std::numeric_limits<Offset>::max()}) too_large_ = true;
      blocks_.push_back({too_large_ ? Offset{0} : static_cast<Offset>(units), 0, 0});
    }
    // Traces number their steps densely, so a table over the steps ranks
    // every time in O(1); binary searches over the sorted begins were a
    // tenth of a packing. Sparse times fall back to sorting.
    if (last_end <= 4 * count + 1024) {
      // begins_below[t]: the distinct begins before time t.
      std::vector<std::uint32_t> begins_below(last_end + 2, 0);
      for (std::size_t i = 0; i < count; ++i) begins_below[static_cast<std::size_t>(block(i).begin) + 1] = 1;
      for (std::size_t t = 1; t < begins_below.size(); ++t) begins_below[t] += begins_below[t - 1];
      points_ = begins_below.back();
      for (std::size_t i = 0; i < count; ++i) {
        const auto& b = block(i);
        blocks_[i].lo = begins_below[static_cast<std::size_t>(b.begin)];
        blocks_[i].hi = begins_below[static_cast<std::size_t>(b.end)];
      }
    } else {
      std::vector<std::size_t> begins;
      begins.reserve(count);
      for (std::size_t i = 0; i < count; ++i) begins.push_back(static_cast<std::size_t>(block(i).begin));
      std::sort(begins.begin(), begins.end());
      begins.erase(std::unique(begins.begin(), begins.end()), begins.end());
      points_ = begins.size();
      for (std::size_t i = 0; i < count; ++i) {
        const auto& b = block(i);
        blocks_[i].lo = static_cast<std::uint32_t>(
            std::lower_bound(begins.begin(), begins.end(), static_cast<std::size_t>(b.begin)) - begins.begin());
        blocks_[i].hi = static_cast<std::uint32_t>(
            std::lower_bound(begins.begin(), begins.end(), static_cast<std::size_t>(b.end)) - begins.begin());
      }
    }
    width_ = std::bit_ceil(std::max<std::size_t>(points_, 1));
    uses_path_unions_ = width_ >= std::size_t{1} << path_union_level;
  }

  /// Whether the last `pack` stopped because a block would have reached
  /// past the `Offset` ranges (see the class comment).
  [[nodiscard]] bool outgrew_ranges() const noexcept { return outgrew_ranges_; }

  /// The blocks in `order`; `steps_of(i)` is block `i` as given (anything
  /// with its `begin` and `end`, such as its `Block` or its traced
  /// allocation), read once per block.
  template <class StepsOf>
  [[nodiscard]] std::vector<std::uint32_t> order(ArenaOrder kind, StepsOf&& steps_of) const {
    const std::size_t n = blocks_.size();
    // Sorted as self-contained records: a comparison that looked the keys
    // up by index missed the cache on both sides. Made one at a time, and
    // the table of keys (two orders need one) freed before the sort: the
    // first order is ranked while the trees are not yet made, and at a
    // million lines this was the plan stage's peak.
    struct Ranked {
      double key;
      std::int64_t size;
      std::size_t lifetime;
      std::uint32_t id;
    };
    std::vector<Ranked> ranked(n);
    {
      std::vector<double> key;
      if (kind == ArenaOrder::pressure) key = peak_pressure();
      if (kind == ArenaOrder::conflict) key = overlapping_bytes();
      for (std::size_t i = 0; i < n; ++i) {
        const auto& steps = steps_of(static_cast<std::uint32_t>(i));
        const std::size_t begin = steps.begin, lifetime = steps.end - steps.begin;
        double k = 0.0;  // ArenaOrder::size: by size alone
        if (!key.empty())
          k = key[i];
        else if (kind == ArenaOrder::area)
          k = static_cast<double>(blocks_[i].size) * static_cast<double>(lifetime);
        else if (kind == ArenaOrder::lifetime)
          k = static_cast<double>(lifetime);
        else if (kind == ArenaOrder::begin)
          k = -static_cast<double>(begin);
        ranked[i] = {k, blocks_[i].size, lifetime, static_cast<std::uint32_t>(i)};
      }
    }
    std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      if (a.key != b.key) return a.key > b.key;
      if (a.size != b.size) return a.size > b.size;
      if (a.lifetime != b.lifetime) return a.lifetime > b.lifetime;
      return a.id < b.id;
    });
    std::vector<std::uint32_t> ids(n);
    for (std::size_t k = 0; k < n; ++k) ids[k] = ranked[k].id;
    return ids;
  }

  /// The max-live bound of the aligned sizes.
  [[nodiscard]] std::int64_t aligned_lower_bound() const {
    std::vector<std::int64_t> live(points_ + 1, 0);
    for (const Packed& b : blocks_) {
      live[b.lo] += b.size;
      live[b.hi] -= b.size;
    }
    std::int64_t now = 0, peak = 0;
    for (std::size_t k = 0; k < points_; ++k) peak = std::max(peak, now += live[k]);
    return peak << unit_log2_;
  }

  /// Best-fit packing in `order` into `out`; false when the work limit was
  /// hit, or a block would reach past the ranges (`outgrew_ranges`).
  /// `order` holds every block once; `raw(i)` is block `i`'s size before
  /// rounding up, read once per block after placing them (from the
  /// caller's trace: a table of them would live through every packing).
  template <class RawOf>
  [[nodiscard]] bool pack(std::span<const std::uint32_t> order, RawOf&& raw, std::size_t limit, Packing& out,
                          std::size_t& visits) {
    const std::size_t n = blocks_.size();
    // Emptied, not freed: the next order reuses the slices' storage.
    slices_.clear();
    if (nodes_.empty())  // made at the first packing, after the first order is ranked
      lay_out_nodes();
    else
      nodes_.assign(nodes_.size(), Node{});
    changes_ = 0;
    changed_at_.assign(uses_path_unions_ ? (2 * width_) >> path_union_level : 0, 0);
    path_unions_.assign(uses_path_unions_ ? width_ >> path_union_level : 0, PathUnion{});
    out.offsets.assign(n, 0);
    out.arena = 0;
    outgrew_ranges_ = too_large_;
    if (too_large_) return false;
    const unsigned unit_log2 = unit_log2_;
    // The blocks are read in placing order, each a cache miss unless asked
    // for early: a block's record `4 * prefetch_ahead` blocks ahead, its
    // nodes `2 * prefetch_ahead` ahead, its ranges `prefetch_ahead` ahead.
    // (A copy of the blocks in placing order did the same with independent
    // loads, but was as large as the blocks.)
    const std::size_t count = order.size();
    for (std::size_t k = 0; k < count; ++k) {
      if (k + 4 * prefetch_ahead < count) {
        prefetch(&blocks_[order[k + 4 * prefetch_ahead]]);
        prefetch(&align_log2_[order[k + 4 * prefetch_ahead]]);
      }
      if (k + 2 * prefetch_ahead < count) prefetch_nodes(blocks_[order[k + 2 * prefetch_ahead]].lo);
      if (k + prefetch_ahead < count) prefetch_ranges(blocks_[order[k + prefetch_ahead]].lo);
      const std::uint32_t index = order[k];
      const Packed& b = blocks_[index];  // a reference, not a structured binding: lambdas below capture it
      const unsigned align_log2 = align_log2_[index] - unit_log2;  // in units, as the ranges
      const std::int64_t size = b.size;
      // `taken_` only grows; its first `taken` entries are this block's.
      // (vector::insert per node, most holding zero to two ranges, was a
      // tenth of the time.)
      std::size_t taken = 0;
      const auto take = [&](const RangeList& set) {
        const std::size_t size = set.size();
        if (taken + size > taken_.size()) taken_.resize(std::max(2 * taken_.size(), taken + size));
        copy_ranges(ranges_of(set), size, taken_.data() + taken);
        taken += size;
      };
      // The work counted is the ranges of every list below, whether read
      // or served by a path union.
      const auto visit = [&](const RangeList& set) {
        take(set);
        visits += set.size();
      };
      std::size_t path_node = width_ + b.lo;
      if (uses_path_unions_) {
        for (std::size_t level = 0; level < path_union_level; ++level, path_node >>= 1) visit(node(path_node).cover);
        take(path_union(path_node, visits));
      } else {
        for (; path_node >= 1; path_node >>= 1) visit(node(path_node).cover);
      }
      for_each_cover_node(b.lo + 1, b.hi, [&](std::size_t v) { visit(node(v).starts); });
      if (visits > limit) return false;
      // By begin only: among ranges that begin at the same byte, the scan
      // below finds the same gaps whatever their order, so the result stays
      // deterministic with the cheaper comparison.
      const std::span<Range> overlapping{taken_.data(), taken};
      sort_by_lo(overlapping);
      // Best fit: the smallest gap that holds the block at its alignment,
      // else the top. (When every block has the same alignment and sizes
      // are its multiples, every `top` is aligned already.)
      const auto aligned = [mask = (std::int64_t{1} << align_log2) - 1](std::int64_t at) {
        return (at + mask) & ~mask;
      };
      std::int64_t top = 0, best = -1, best_gap = std::numeric_limits<std::int64_t>::max();
      for (const Range& r : overlapping) {
        const std::int64_t lo = r.lo;
        const std::int64_t start = aligned(top);
        if (lo - start >= size && lo - start < best_gap) {
          best = start;
          best_gap = lo - start;
        }
        top = std::max(top, std::int64_t{r.hi});
      }
      const std::int64_t offset = best >= 0 ? best : aligned(top);
      if (offset > std::int64_t{std::numeric_limits<Offset>::max()} - size) {
        outgrew_ranges_ = true;
        return false;
      }
      out.offsets[index] = offset << unit_log2;
      const auto lo = static_cast<Offset>(offset), hi = static_cast<Offset>(offset + size);
      for_each_cover_node(b.lo, b.hi, [&](std::size_t v) {
        if (add(node(v).cover, lo, hi) && v < changed_at_.size()) changed_at_[v] = ++changes_;
      });
      // A node's start list holds every range of its descendants' lists, so
      // once the bytes are already in one, they are in all the lists above.
      for (std::size_t v = width_ + b.lo; v >= 1; v >>= 1)
        if (!add(node(v).starts, lo, hi)) break;
    }
    // The arena: the highest top of a block at its raw size (a maximum, so
    // taken after the loop, which then carries no raw sizes).
    for (std::size_t i = 0; i < n; ++i)
      out.arena = std::max(out.arena, out.offsets[i] + raw(static_cast<std::uint32_t>(i)));
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
    for (const Packed& b : blocks_) {
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
    for (const Packed& b : blocks_) {
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

  /// The bytes `[lo, hi)`, in units of `2^unit_log2_` bytes.
  struct Range {
    Offset lo, hi;
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
  /// move, and a set that outgrows its slice moves to one twice as large
  /// while the old one goes back to a free list of its size, for the next
  /// set that grows to it. One flat vector holding every slice was grown by
  /// reallocation, zero-filled and copied, and kept the abandoned slices: a
  /// third of a 100k-block packing went to that and to the page faults of
  /// its fresh memory (before that, a heap vector per node spent as much in
  /// malloc and free).
  ///
  /// A slice is named by a 32-bit handle, not a pointer, so that a list
  /// fits the 16 bytes of the one range it holds in place of a slice
  /// (`RangeList`; at a million lines the nodes were the plan stage's
  /// largest table, 32 bytes each). The ranges are numbered across the
  /// chunks (`chunk_ranges` each); a slice of `2^c` ranges starts at a
  /// multiple of `2^c`, so its first range `f` and its class fit one
  /// number, `2f + 2^c`, whose lowest set bit is the class. Handle 0 is no
  /// slice.
  class SliceStore {
   public:
    using Handle = std::uint32_t;

    /// The size class of `slice` (not 0): it holds `2^size_class` ranges.
    [[nodiscard]] static unsigned size_class(Handle slice) noexcept {
      return static_cast<unsigned>(std::countr_zero(slice));
    }
    /// The first range of `slice` (not 0).
    [[nodiscard]] Range* data(Handle slice) const noexcept {
      const std::size_t first = (slice & (slice - 1)) >> 1;
      return bases_[first >> chunk_bits] + (first & (chunk_ranges - 1));
    }

    /// A slice of `2^size_class` ranges.
    [[nodiscard]] Handle allocate(unsigned size_class) {
      if (size_class < free_.size() && !free_[size_class].empty()) {
        const Handle slice = free_[size_class].back();
        free_[size_class].pop_back();
        return slice;
      }
      const std::size_t size = std::size_t{1} << size_class;
      if (size > chunk_ranges) {  // a set larger than a chunk has its own, on chunks of its own
        const std::size_t chunks = size >> chunk_bits;
        const std::size_t first_chunk = (bases_.size() + chunks - 1) / chunks * chunks;
        reserve_numbers(first_chunk + chunks);
        // Not zero-filled: a slice's ranges are written before they are read.
        large_.push_back(std::make_unique_for_overwrite<Range[]>(size));
        bases_.resize(first_chunk, nullptr);
        for (std::size_t k = 0; k < chunks; ++k) bases_.push_back(large_.back().get() + (k << chunk_bits));
        return handle(first_chunk << chunk_bits, size_class);
      }
      // Aligned to its size; the ranges skipped go to the free lists, in
      // the largest aligned pieces.
      std::size_t at = (used_ + size - 1) & ~(size - 1);
      if (at + size > chunk_ranges) {
        free_up_to(chunk_ranges);
        ++chunk_;
        used_ = 0;
        at = 0;
      }
      free_up_to(at);
      if (chunk_ == chunk_ids_.size()) {
        reserve_numbers(bases_.size() + 1);
        chunks_.push_back(std::make_unique_for_overwrite<Range[]>(chunk_ranges));
        chunk_ids_.push_back(bases_.size());
        bases_.push_back(chunks_.back().get());
      }
      used_ = at + size;
      return handle((chunk_ids_[chunk_] << chunk_bits) + at, size_class);
    }
    void release(Handle slice) {
      const unsigned size_class = SliceStore::size_class(slice);
      if (free_.size() <= size_class) free_.resize(size_class + 1);
      free_[size_class].push_back(slice);
    }
    /// Every slice free again; the chunks stay for the next packing,
    /// numbered from 0.
    void clear() {
      chunk_ = 0;
      used_ = 0;
      for (std::vector<Handle>& f : free_) f.clear();
      large_.clear();
      bases_.clear();
      chunk_ids_.clear();
      for (const std::unique_ptr<Range[]>& chunk : chunks_) {
        chunk_ids_.push_back(bases_.size());
        bases_.push_back(chunk.get());
      }
    }

   private:
    static constexpr unsigned chunk_bits = 16;
    static constexpr std::size_t chunk_ranges = std::size_t{1} << chunk_bits;

    [[nodiscard]] static Handle handle(std::size_t first, unsigned size_class) noexcept {
      return static_cast<Handle>(2 * first + (std::size_t{1} << size_class));
    }
    /// Checks that ranges numbered below `chunks * chunk_ranges` have
    /// handles: `2f + 2^c` fits 32 bits while `f + 2^c <= 2^31`.
    static void reserve_numbers(std::size_t chunks) {
      if (chunks > (std::size_t{1} << (31 - chunk_bits)))
        throw std::invalid_argument("arena planner: the packing of one device needs more than 2^31 byte ranges");
    }
    /// Frees the ranges of the current chunk from `used_` up to `end`.
    void free_up_to(std::size_t end) {
      while (used_ < end) {
        // The largest piece aligned at `used_` that ends by `end`.
        unsigned c = static_cast<unsigned>(std::countr_zero(used_ | chunk_ranges));
        while (used_ + (std::size_t{1} << c) > end) --c;
        release(handle((chunk_ids_[chunk_] << chunk_bits) + used_, c));
        used_ += std::size_t{1} << c;
      }
    }

    std::vector<std::unique_ptr<Range[]>> chunks_;  // `chunk_ranges` each
    std::vector<std::unique_ptr<Range[]>> large_;
    std::vector<Range*> bases_;           // per `chunk_ranges` numbers, their storage
    std::vector<std::size_t> chunk_ids_;  // where each of `chunks_` is numbered
    std::size_t chunk_ = 0, used_ = 0;    // the next free range: chunks_[chunk_][used_]
    std::vector<std::vector<Handle>> free_;
  };

  /// A node's byte ranges `[lo, hi)`: disjoint, in increasing order, and
  /// touching ranges merged, since only the gaps between them matter. A
  /// list of one range holds it in place of a slice (on a chain program
  /// every list holds one: a slice of one range cost a handle and the
  /// range, 24 bytes, and a cache miss more); a longer list lives in a
  /// slice of `slices_`. Ranges never begin below 0 and are never empty, so
  /// `first` tells them apart:
  /// - no range: `{0, 0}`;
  /// - one range: the range itself;
  /// - a slice: `{-1 - count, handle}` (the count may then fall to 1 or 0;
  ///   the handle's 32 bits stored as they are, and a count below 2^30,
  ///   since ranges that neither overlap nor touch take two units each).
  struct RangeList {
    Range first{0, 0};

    [[nodiscard]] bool in_slice() const noexcept { return first.lo < 0; }
    [[nodiscard]] typename SliceStore::Handle slice() const noexcept {
      return static_cast<typename SliceStore::Handle>(first.hi);
    }
    [[nodiscard]] std::size_t size() const noexcept {
      if (in_slice()) return static_cast<std::size_t>(-1 - std::int64_t{first.lo});
      return first.hi > first.lo ? 1 : 0;
    }
    void set_slice(typename SliceStore::Handle slice, std::size_t size) noexcept {
      first = {static_cast<Offset>(-1 - static_cast<std::int64_t>(size)), static_cast<Offset>(slice)};
    }
  };
  [[nodiscard]] const Range* ranges_of(const RangeList& set) const noexcept {
    return set.in_slice() ? slices_.data(set.slice()) : &set.first;
  }

  /// Adds `[lo, hi)` to `set`; false when the set held those bytes already.
  bool add(RangeList& set, Offset lo, Offset hi) {
    const bool in_slice = set.in_slice();
    Range* const begin = in_slice ? slices_.data(set.slice()) : &set.first;
    const std::size_t size = set.size();
    Range* const end = begin + size;
    Range* const first = std::lower_bound(begin, end, lo, [](const Range& r, Offset x) { return r.hi < x; });
    if (first != end && first->lo <= lo && hi <= first->hi) return false;
    Range* last = first;
    for (; last != end && last->lo <= hi; ++last) {
      lo = std::min(lo, last->lo);
      hi = std::max(hi, last->hi);
    }
    if (first != last) {  // merged into the ranges it touches: the set shrinks or keeps its size
      *first = {lo, hi};
      copy_ranges(last, static_cast<std::size_t>(end - last), first + 1);
      if (in_slice) set.set_slice(set.slice(), size - static_cast<std::size_t>(last - first - 1));
      return true;
    }
    if (!in_slice && size == 0) {  // the first range, in place
      set.first = {lo, hi};
      return true;
    }
    const std::size_t at = static_cast<std::size_t>(first - begin);
    Range* data = begin;
    typename SliceStore::Handle slice = in_slice ? set.slice() : 0;
    if (!in_slice || size == std::size_t{1} << SliceStore::size_class(slice)) {
      // Full: moved to a slice twice as large (two ranges for the first).
      const unsigned size_class = in_slice ? SliceStore::size_class(slice) + 1 : 1;
      const typename SliceStore::Handle moved = slices_.allocate(size_class);
      data = slices_.data(moved);
      copy_ranges(begin, size, data);
      if (in_slice) slices_.release(slice);
      slice = moved;
    }
    for (std::size_t k = size; k > at; --k) data[k] = data[k - 1];
    data[at] = {lo, hi};
    set.set_slice(slice, size + 1);
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

  /// The union of the cover lists of `v` (at `path_union_level`) and its
  /// ancestors; adds their sizes to `visits`.
  const RangeList& path_union(std::size_t v, std::size_t& visits) {
    std::size_t latest = 0;
    for (std::size_t up = v; up >= 1; up >>= 1) {
      visits += node(up).cover.size();
      latest = std::max(latest, changed_at_[up]);
    }
    PathUnion& cache = path_unions_[v - (width_ >> path_union_level)];
    if (cache.valid && latest <= cache.computed_at) return cache.ranges;
    scratch_.clear();
    for (std::size_t up = v; up >= 1; up >>= 1) {
      const RangeList& cover = node(up).cover;
      const Range* const ranges = ranges_of(cover);
      scratch_.insert(scratch_.end(), ranges, ranges + cover.size());
    }
    std::sort(scratch_.begin(), scratch_.end(), [](const Range& x, const Range& y) { return x.lo < y.lo; });
    // Merged in place (touching ranges too), then stored in a slice.
    std::size_t merged = 0;
    for (const Range& r : scratch_) {
      if (merged > 0 && r.lo <= scratch_[merged - 1].hi)
        scratch_[merged - 1].hi = std::max(scratch_[merged - 1].hi, r.hi);
      else
        scratch_[merged++] = r;
    }
    // In place while it has at most one range, else in a slice it keeps.
    RangeList& stored = cache.ranges;
    if (!stored.in_slice() && merged <= 1) {
      stored.first = merged == 1 ? scratch_.front() : Range{0, 0};
    } else {
      typename SliceStore::Handle slice = stored.in_slice() ? stored.slice() : 0;
      if (slice == 0 || merged > std::size_t{1} << SliceStore::size_class(slice)) {
        if (slice != 0) slices_.release(slice);
        slice = slices_.allocate(static_cast<unsigned>(std::bit_width(std::max<std::size_t>(merged, 2) - 1)));
      }
      std::copy_n(scratch_.data(), merged, slices_.data(slice));
      stored.set_slice(slice, merged);
    }
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
    std::size_t v = width_ + lo;
    for (std::size_t level = 0; level < prefetched_levels && v >= 1; ++level, v >>= 1) prefetch(&node(v));
  }
  void prefetch_ranges(std::size_t lo) const {
    std::size_t v = width_ + lo;
    for (std::size_t level = 0; level < prefetched_levels && v >= 1; ++level, v >>= 1) {
      const Node& at = node(v);
      if (at.cover.in_slice()) prefetch(slices_.data(at.cover.slice()));
      if (at.starts.in_slice()) prefetch(slices_.data(at.starts.slice()));
    }
  }

  // Per segment-tree node, the bytes taken by the placed blocks that cover
  // the node's time range or that begin in it; side by side because the
  // path from a leaf to the root reads the one and extends the other.
  struct Node {
    RangeList cover, starts;
  };

  /// The trees are numbered as over `width_` leaves (node 1 the root, node
  /// `v`'s children `2v` and `2v + 1`, leaf `k` node `width_ + k`), but a
  /// node whose leaves all lie at or past `points_` is never read, so only
  /// the others are stored: at each depth a run of nodes from the first
  /// one, and `node(v)` finds `v` in its depth's run. At a million lines
  /// (333k points, 512k leaves) that stores 0.67M nodes, not 1M.
  void lay_out_nodes() {
    const unsigned height = static_cast<unsigned>(std::countr_zero(width_));
    std::size_t stored = 0;
    for (unsigned depth = 0; depth <= height; ++depth) {
      const std::size_t first = std::size_t{1} << depth;
      const std::size_t last = (width_ + std::max<std::size_t>(points_, 1) - 1) >> (height - depth);
      // Stored at `stored` onwards: node v at `v + (stored - first)`, mod 2^64.
      depth_shift_[depth + 1] = stored - first;
      stored += last - first + 1;
    }
    nodes_.assign(stored, Node{});
  }
  [[nodiscard]] Node& node(std::size_t v) noexcept { return nodes_[v + depth_shift_[std::bit_width(v)]]; }
  [[nodiscard]] const Node& node(std::size_t v) const noexcept {
    return nodes_[v + depth_shift_[std::bit_width(v)]];
  }

  // What packing reads of a block (12 bytes with 32-bit ranges, 16 with
  // 64-bit ones), and its alignment's logarithm apart (padding would make
  // the record 16 or 24).
  struct Packed {
    Offset size;  // in units, as the ranges
    std::uint32_t lo, hi;  // the begin points it covers: [lo, hi)
  };
  std::vector<Packed> blocks_;
  std::vector<std::uint8_t> align_log2_;
  unsigned unit_log2_ = 0;  // the ranges' unit: the smallest alignment's logarithm
  bool outgrew_ranges_ = false;
  bool too_large_ = false;  // a block's size alone is past the ranges
  std::size_t points_ = 0, width_ = 1;
  std::vector<Node> nodes_;
  std::array<std::size_t, 66> depth_shift_{};  // by `bit_width` of a node number
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
};

/// The packer with 64-bit ranges: any device whose blocks' sum fits 63 bits.
using ArenaPacker = BasicArenaPacker<std::int64_t>;
/// The packer with 32-bit ranges (see `BasicArenaPacker`).
using NarrowArenaPacker = BasicArenaPacker<std::int32_t>;

}  // namespace wrapir::pass::detail
