#pragma once
/// \file
/// Inductor's live ranges for the pool tree (pass/detail/pool_forest.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <vector>
#include <wrapir/pass/detail/sorted_chunks.hpp>

namespace wrapir::pass::detail {

struct PoolLiveRange {
  std::int64_t begin, end;
};

/// Inductor's LiveRanges: sorted, touching or overlapping ranges merged
/// (so no two share a begin). Most nodes hold one to a few ranges, kept in
/// a sorted vector; a set that grows past `small_limit` moves to sorted
/// chunks (pass/detail/sorted_chunks.hpp), so that adding a range costs
/// O(log n) (a pool's root on a chain trace holds hundreds of thousands:
/// inserting into the middle of one vector made placing n blocks quadratic,
/// and a `std::map`, the previous remedy, missed the cache at every level).
class PoolLiveRanges {
 public:
  PoolLiveRanges() = default;
  PoolLiveRanges(std::initializer_list<PoolLiveRange> ranges) {
    for (const PoolLiveRange& r : ranges) add(r);
  }
  PoolLiveRanges(const PoolLiveRanges& o)
      : small_(o.small_), large_(o.large_ ? std::make_unique<Large>(*o.large_) : nullptr) {}
  PoolLiveRanges& operator=(const PoolLiveRanges& o) {
    if (this != &o) *this = PoolLiveRanges(o);
    return *this;
  }
  PoolLiveRanges(PoolLiveRanges&&) noexcept = default;
  PoolLiveRanges& operator=(PoolLiveRanges&&) noexcept = default;
  ~PoolLiveRanges() = default;

  [[nodiscard]] std::size_t size() const noexcept { return !large_ ? small_.size() : large_->size(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  /// The first and the last range; the set must not be empty.
  [[nodiscard]] PoolLiveRange front() const {
    return !large_ ? small_.front() : large_->front();
  }
  [[nodiscard]] PoolLiveRange back() const {
    return !large_ ? small_.back() : large_->back();
  }

  /// Calls `f(range)` in increasing order.
  template <class F>
  void for_each(F&& f) const {
    if (!large_) {
      for (const PoolLiveRange& r : small_) f(r);
    } else {
      large_->for_each(f);
    }
  }
  [[nodiscard]] std::vector<PoolLiveRange> to_vector() const {
    std::vector<PoolLiveRange> out;
    for_each([&](PoolLiveRange r) { out.push_back(r); });
    return out;
  }

  /// Adds `r`, merging the ranges it touches or overlaps.
  void add(PoolLiveRange r) {
    if (large_) return add_large(r);
    // The first range that ends at or after r begins can merge with it.
    auto first = std::lower_bound(small_.begin(), small_.end(), r.begin,
                                  [](const PoolLiveRange& x, std::int64_t b) { return x.end < b; });
    auto last = first;
    for (; last != small_.end() && last->begin <= r.end; ++last) {
      r.begin = std::min(r.begin, last->begin);
      r.end = std::max(r.end, last->end);
    }
    if (first != last) {
      *first = r;
      small_.erase(first + 1, last);
      return;
    }
    if (small_.size() < small_limit) {
      small_.insert(first, r);
      return;
    }
    large_ = std::make_unique<Large>();
    for (const PoolLiveRange& x : small_) large_->insert(large_->end_pos(), x);
    std::vector<PoolLiveRange>().swap(small_);
    add_large(r);
  }

  /// `tree.overlaps(block)` of Inductor for a block with one range: taking
  /// the range that begins first (the tree's on a tie), it ends after the
  /// other begins.
  [[nodiscard]] bool overlaps(PoolLiveRange r) const {
    if (!large_) {
      auto after = std::upper_bound(small_.begin(), small_.end(), r.begin,
                                    [](std::int64_t b, const PoolLiveRange& x) { return b < x.begin; });
      if (after != small_.begin() && std::prev(after)->end > r.begin) return true;
      return after != small_.end() && r.end > after->begin;
    }
    const Large::Pos after = large_->upper_bound(r.begin);
    if (after != large_->begin_pos() && large_->at(large_->prev(after)).end > r.begin) return true;
    return !large_->is_end(after) && r.end > large_->at(after).begin;
  }

  /// The first range that ends at or after `t`; one must exist.
  [[nodiscard]] PoolLiveRange first_ending_from(std::int64_t t) const {
    if (!large_)
      return *std::lower_bound(small_.begin(), small_.end(), t,
                               [](const PoolLiveRange& x, std::int64_t b) { return x.end < b; });
    // Ends increase with begins (the ranges are disjoint): the range
    // holding t, else the first beginning after it.
    Large::Pos it = large_->upper_bound(t);
    if (it != large_->begin_pos() && large_->at(large_->prev(it)).end >= t) it = large_->prev(it);
    return large_->at(it);
  }

 private:
  struct BeginOf {
    std::int64_t operator()(const PoolLiveRange& r) const noexcept { return r.begin; }
  };
  using Large = SortedChunks<PoolLiveRange, BeginOf>;
  static constexpr std::size_t small_limit = Large::chunk_capacity;

  void add_large(PoolLiveRange r) {
    Large::Pos first = large_->upper_bound(r.begin);
    if (first != large_->begin_pos() && large_->at(large_->prev(first)).end >= r.begin) first = large_->prev(first);
    Large::Pos last = first;
    for (; !large_->is_end(last) && large_->at(last).begin <= r.end; last = large_->next(last)) {
      r.begin = std::min(r.begin, large_->at(last).begin);
      r.end = std::max(r.end, large_->at(last).end);
    }
    if (first == last) return large_->insert(first, r);
    // The first merged range takes the union in place (its key only moves
    // down to r.begin, past no other range); the rest go.
    large_->at(first) = r;
    large_->erase(large_->next(first), last);
    large_->refresh_first(first);
  }

  std::vector<PoolLiveRange> small_;
  std::unique_ptr<Large> large_;  // once large
};

}  // namespace wrapir::pass::detail
