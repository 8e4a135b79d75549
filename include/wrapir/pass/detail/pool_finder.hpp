#pragma once
/// \file
/// Which pool of a device may take a block, without asking every pool: the
/// pool planner (pass/pools.hpp) offers each block to the pools of its
/// device in creation order and keeps the first that takes it, and most
/// pools refuse at once, because the block is larger than the pool (which
/// may not grow) or overlaps in time a block that the pool's root holds as
/// a leaf. A segment tree over the pools in creation order keeps, per
/// pool, its size and one such leaf's live range `[lo, hi)` (none: lo =
/// INT64_MAX), and per subtree the largest size, the largest `lo` and the
/// smallest `hi`: a subtree whose pools are all too small, or all hold a
/// leaf overlapping the block (every lo < end and every hi > begin), is
/// skipped as a whole. The skip is only ever a refusal the pool would have
/// given, so the pool found is the one the linear search finds.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace wrapir::pass::detail {

class PoolFinder {
 public:
  struct Summary {
    std::int64_t size = std::numeric_limits<std::int64_t>::min();
    /// A live range `[lo, hi)` the pool surely refuses blocks overlapping;
    /// the defaults say there is none.
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  };

  [[nodiscard]] std::size_t size() const noexcept { return count_; }

  void push(const Summary& s) {
    if (count_ == width_) grow();
    set(count_++, s);
  }

  void set(std::size_t pool, const Summary& s) {
    std::size_t node = width_ + pool;
    tree_[node] = {s.size, s.lo, s.hi};
    for (node >>= 1; node >= 1; node >>= 1) tree_[node] = join(tree_[2 * node], tree_[2 * node + 1]);
  }

  /// The first pool in `[from, limit)` not surely refusing a block of
  /// `size` bytes live over `[begin, end)`, or `limit`.
  [[nodiscard]] std::size_t next(std::size_t from, std::size_t limit, std::int64_t size, std::int64_t begin,
                                 std::int64_t end) const {
    limit = std::min(limit, count_);
    if (from >= limit) return limit;
    const std::size_t found = search(1, 0, width_, from, limit, size, begin, end);
    return found == npos ? limit : found;
  }

 private:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  // A pool without a known leaf never counts as overlapping (its lo is the
  // largest value and its hi the smallest); the default, for slots not yet
  // used, changes no join.
  struct Node {
    std::int64_t max_size = std::numeric_limits<std::int64_t>::min();
    std::int64_t max_lo = std::numeric_limits<std::int64_t>::min();
    std::int64_t min_hi = std::numeric_limits<std::int64_t>::max();
  };
  static Node join(const Node& a, const Node& b) {
    return {std::max(a.max_size, b.max_size), std::max(a.max_lo, b.max_lo), std::min(a.min_hi, b.min_hi)};
  }
  static bool refuses(const Node& x, std::int64_t size, std::int64_t begin, std::int64_t end) {
    return x.max_size < size || (x.max_lo < end && x.min_hi > begin);
  }

  std::size_t search(std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t limit,
                     std::int64_t size, std::int64_t begin, std::int64_t end) const {
    if (hi <= from || lo >= limit || refuses(tree_[node], size, begin, end)) return npos;
    if (hi - lo == 1) return lo;
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::size_t left = search(2 * node, lo, mid, from, limit, size, begin, end);
    return left != npos ? left : search(2 * node + 1, mid, hi, from, limit, size, begin, end);
  }

  void grow() {
    const std::size_t old = width_;
    width_ = std::max<std::size_t>(2 * width_, 16);
    std::vector<Node> tree(2 * width_);
    for (std::size_t k = 0; k < count_; ++k) tree[width_ + k] = tree_[old + k];
    for (std::size_t node = width_; node-- > 1;) tree[node] = join(tree[2 * node], tree[2 * node + 1]);
    tree_ = std::move(tree);
  }

  std::vector<Node> tree_;
  std::size_t width_ = 0, count_ = 0;
};

}  // namespace wrapir::pass::detail
