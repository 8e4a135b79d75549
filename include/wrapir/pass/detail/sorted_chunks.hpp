#pragma once
/// \file
/// A sorted sequence kept in chunks of at most `chunk_capacity` elements,
/// for the pool planner's large range sets and child indexes
/// (pass/detail/pool_live_ranges.hpp, pass/detail/pool_forest.hpp).
///
/// Why not `std::map`: on a chain trace of a million blocks a pool's range
/// sets and its root's child index hold hundreds of thousands of entries,
/// and every block looks them up and inserts into them; a red-black tree
/// of that size misses the cache at each of its ~18 levels (about 3 µs a
/// lookup on the development VM), and allocates a node per entry. Here a
/// lookup is one binary search over the chunks' first keys (a small,
/// contiguous array) and one inside a chunk; an insertion or erasure moves
/// at most a chunk's elements. Everything stays O(log n) comparisons plus
/// O(chunk_capacity) moves per operation.
///
/// Elements are ordered by `key_of(element)`; equal keys are allowed and
/// keep their insertion order only as far as `insert` is given positions.
/// Positions are (chunk, index) pairs and are invalidated by any change.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wrapir::pass::detail {

template <class T, class KeyOf>
class SortedChunks {
 public:
  static constexpr std::size_t chunk_capacity = 512;
  struct Pos {
    std::size_t chunk = 0, index = 0;
    friend bool operator==(const Pos&, const Pos&) = default;
  };

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] Pos begin_pos() const noexcept { return {0, 0}; }
  [[nodiscard]] Pos end_pos() const noexcept { return {chunks_.size(), 0}; }
  [[nodiscard]] bool is_end(Pos p) const noexcept { return p.chunk >= chunks_.size(); }
  [[nodiscard]] const T& at(Pos p) const { return chunks_[p.chunk][p.index]; }
  [[nodiscard]] T& at(Pos p) { return chunks_[p.chunk][p.index]; }
  [[nodiscard]] const T& front() const { return chunks_.front().front(); }
  [[nodiscard]] const T& back() const { return chunks_.back().back(); }

  [[nodiscard]] Pos next(Pos p) const noexcept {
    if (++p.index < chunks_[p.chunk].size()) return p;
    return {p.chunk + 1, 0};
  }
  /// The position before `p`; `p` must not be the first.
  [[nodiscard]] Pos prev(Pos p) const noexcept {
    if (p.index > 0) return {p.chunk, p.index - 1};
    return {p.chunk - 1, chunks_[p.chunk - 1].size() - 1};
  }

  /// The first element whose key is greater than `key`.
  [[nodiscard]] Pos upper_bound(std::int64_t key) const {
    // The first chunk whose first key is greater; the answer is in the one before it, or is its start.
    auto c = std::upper_bound(firsts_.begin(), firsts_.end(), key);
    if (c == firsts_.begin()) return {0, 0};
    const std::size_t k = static_cast<std::size_t>(c - firsts_.begin()) - 1;
    const std::vector<T>& v = chunks_[k];
    auto i = std::upper_bound(v.begin(), v.end(), key, [](std::int64_t x, const T& e) { return x < KeyOf{}(e); });
    if (i == v.end()) return {k + 1, 0};
    return {k, static_cast<std::size_t>(i - v.begin())};
  }
  /// The first element whose key is not less than `key`.
  [[nodiscard]] Pos lower_bound(std::int64_t key) const {
    auto c = std::lower_bound(firsts_.begin(), firsts_.end(), key);
    if (c == firsts_.begin()) return {0, 0};
    const std::size_t k = static_cast<std::size_t>(c - firsts_.begin()) - 1;
    const std::vector<T>& v = chunks_[k];
    auto i = std::lower_bound(v.begin(), v.end(), key, [](const T& e, std::int64_t x) { return KeyOf{}(e) < x; });
    if (i == v.end()) return {k + 1, 0};
    return {k, static_cast<std::size_t>(i - v.begin())};
  }

  /// Inserts `value` before `p` (which must keep the order).
  void insert(Pos p, const T& value) {
    if (chunks_.empty()) {
      chunks_.emplace_back();
      chunks_.back().reserve(8);
      firsts_.push_back(KeyOf{}(value));
      p = {0, 0};
    } else if (p.chunk == chunks_.size()) {  // at the end: into the last chunk
      p = {chunks_.size() - 1, chunks_.back().size()};
    }
    std::vector<T>& v = chunks_[p.chunk];
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(p.index), value);
    ++size_;
    firsts_[p.chunk] = KeyOf{}(v.front());
    if (v.size() > chunk_capacity) split(p.chunk);
  }

  /// After the element at `p` was given a key that keeps the order.
  void refresh_first(Pos p) {
    if (p.index == 0) firsts_[p.chunk] = KeyOf{}(chunks_[p.chunk].front());
  }

  /// Erases `[first, last)` and returns the position of what followed.
  Pos erase(Pos first, Pos last) {
    if (first == last) return first;
    if (first.chunk == last.chunk) {
      std::vector<T>& v = chunks_[first.chunk];
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(first.index), v.begin() + static_cast<std::ptrdiff_t>(last.index));
      size_ -= last.index - first.index;
      return settle(first.chunk, first.index);
    }
    // The tail of the first chunk, every chunk between, the head of the last.
    std::vector<T>& head = chunks_[first.chunk];
    size_ -= head.size() - first.index;
    head.resize(first.index);
    for (std::size_t c = first.chunk + 1; c < last.chunk; ++c) {
      size_ -= chunks_[c].size();
      chunks_[c].clear();
    }
    if (last.chunk < chunks_.size()) {
      std::vector<T>& tail = chunks_[last.chunk];
      tail.erase(tail.begin(), tail.begin() + static_cast<std::ptrdiff_t>(last.index));
      size_ -= last.index;
    }
    // Drop the emptied chunks between; the first and the last may be empty too.
    const std::size_t from = first.chunk + 1;
    const std::size_t to = std::min(last.chunk, chunks_.size());
    if (to > from) {
      chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(from), chunks_.begin() + static_cast<std::ptrdiff_t>(to));
      firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(from), firsts_.begin() + static_cast<std::ptrdiff_t>(to));
    }
    // What followed is now at the start of chunk from (if it exists).
    if (from < chunks_.size()) settle(from, 0);
    return settle(first.chunk, first.index);
  }
  Pos erase(Pos p) { return erase(p, next(p)); }

  template <class F>
  void for_each(F&& f) const {
    for (const std::vector<T>& v : chunks_)
      for (const T& e : v) f(e);
  }

  void clear() {
    chunks_.clear();
    firsts_.clear();
    size_ = 0;
  }

 private:
  /// After an erasure in chunk `c` at `index`: drops the chunk when empty,
  /// refreshes its first key, and returns the position now at `index`.
  Pos settle(std::size_t c, std::size_t index) {
    if (chunks_[c].empty()) {
      chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(c));
      firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(c));
      return {c, 0};
    }
    firsts_[c] = KeyOf{}(chunks_[c].front());
    if (index >= chunks_[c].size()) return {c + 1, 0};
    return {c, index};
  }

  void split(std::size_t c) {
    std::vector<T>& v = chunks_[c];
    const std::size_t half = v.size() / 2;
    std::vector<T> upper(v.begin() + static_cast<std::ptrdiff_t>(half), v.end());
    v.resize(half);
    const std::int64_t first = KeyOf{}(upper.front());
    chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(c + 1), std::move(upper));
    firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(c + 1), first);
  }

  std::vector<std::vector<T>> chunks_;  // none empty
  std::vector<std::int64_t> firsts_;    // the first key of each chunk
  std::size_t size_ = 0;
};

}  // namespace wrapir::pass::detail
