#pragma once
/// \file
/// Inductor's live ranges for the pool tree (pass/detail/pool_forest.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <vector>

namespace wrapir::pass::detail {

struct PoolLiveRange {
  std::int64_t begin, end;
};

/// Inductor's LiveRanges: sorted, touching or overlapping ranges merged
/// (so no two share a begin). Most nodes hold one to a few ranges, kept in
/// a sorted vector; a set that grows past `small_limit` moves to a map, so
/// that adding a range costs O(log n) (a pool's root on a chain trace holds
/// tens of thousands, and inserting into the middle of a vector made
/// placing n blocks quadratic).
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
    return !large_ ? small_.front() : PoolLiveRange{large_->begin()->first, large_->begin()->second};
  }
  [[nodiscard]] PoolLiveRange back() const {
    return !large_ ? small_.back() : PoolLiveRange{large_->rbegin()->first, large_->rbegin()->second};
  }

  /// Calls `f(range)` in increasing order.
  template <class F>
  void for_each(F&& f) const {
    if (!large_) {
      for (const PoolLiveRange& r : small_) f(r);
    } else {
      for (const auto& [begin, end] : *large_) f(PoolLiveRange{begin, end});
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
    for (const PoolLiveRange& x : small_) large_->emplace_hint(large_->end(), x.begin, x.end);
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
    auto after = large_->upper_bound(r.begin);
    if (after != large_->begin() && std::prev(after)->second > r.begin) return true;
    return after != large_->end() && r.end > after->first;
  }

  /// The first range that ends at or after `t`; one must exist.
  [[nodiscard]] PoolLiveRange first_ending_from(std::int64_t t) const {
    if (!large_)
      return *std::lower_bound(small_.begin(), small_.end(), t,
                               [](const PoolLiveRange& x, std::int64_t b) { return x.end < b; });
    // Ends increase with begins (the ranges are disjoint): the range
    // holding t, else the first beginning after it.
    auto it = large_->upper_bound(t);
    if (it != large_->begin() && std::prev(it)->second >= t) --it;
    return {it->first, it->second};
  }

 private:
  static constexpr std::size_t small_limit = 8192;

  void add_large(PoolLiveRange r) {
    auto it = large_->upper_bound(r.begin);
    if (it != large_->begin() && std::prev(it)->second >= r.begin) --it;
    while (it != large_->end() && it->first <= r.end) {
      r.begin = std::min(r.begin, it->first);
      r.end = std::max(r.end, it->second);
      it = large_->erase(it);
    }
    large_->emplace_hint(it, r.begin, r.end);
  }

  using Large = std::map<std::int64_t, std::int64_t>;  // begin -> end
  std::vector<PoolLiveRange> small_;
  std::unique_ptr<Large> large_;  // once large
};

}  // namespace wrapir::pass::detail
