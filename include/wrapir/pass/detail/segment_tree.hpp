#pragma once
/// \file
/// A lazy segment tree: range updates and range queries in O(log n), as
/// the reuse planner's peak estimate needs them (add bytes over a range of
/// time steps, ask the largest estimate over a range).
///
/// Generic over the value type and two operations: `combine(a, b)`, the
/// associative query operation with identity `identity` (max, with the
/// smallest value as identity), and `apply(value, update)`, which applies an
/// update to a value and also composes two updates, with `no_update` doing
/// nothing (add, with 0). They must satisfy
/// `apply(combine(a, b), u) == combine(apply(a, u), apply(b, u))` and
/// updates must commute, which max and add do: Inductor's
/// `SegmentedTree(values, add, max, 0)`; `T` must be equality-comparable
/// (to skip `no_update`). Bottom-up over 2 * 2^k nodes without recursion:
/// a node holds the combined value of its range with the updates applied
/// at it or below, `pending` the updates applied at it that its children
/// have not seen; queries push those down along the two boundary paths.

#include <cstddef>
#include <utility>
#include <vector>

namespace wrapir::pass::detail {

template <class T, class Combine, class Apply>
class LazySegmentTree {
 public:
  LazySegmentTree(const std::vector<T>& values, Combine combine, Apply apply, T identity, T no_update = T{})
      : n_(values.size()), combine_(std::move(combine)), apply_(std::move(apply)), identity_(identity),
        no_update_(no_update) {
    while (leaves_ < n_) {
      leaves_ *= 2;
      ++height_;
    }
    tree_.assign(2 * leaves_, identity_);
    pending_.assign(2 * leaves_, no_update_);
    for (std::size_t i = 0; i < n_; ++i) tree_[leaves_ + i] = values[i];
    for (std::size_t i = leaves_; i-- > 1;) tree_[i] = combine_(tree_[2 * i], tree_[2 * i + 1]);
  }

  [[nodiscard]] std::size_t size() const noexcept { return n_; }

  /// Applies `update` to every value in `[first, last]` (inclusive); an
  /// empty or out-of-range part is ignored.
  void update(std::size_t first, std::size_t last, const T& u) {
    if (n_ == 0 || first > last || first >= n_) return;
    if (last >= n_) last = n_ - 1;
    std::size_t l = first + leaves_, r = last + 1 + leaves_;
    const std::size_t l0 = l, r0 = r - 1;
    for (; l < r; l /= 2, r /= 2) {
      if (l & 1) apply_at(l++, u);
      if (r & 1) apply_at(--r, u);
    }
    rebuild_above(l0);
    rebuild_above(r0);
  }

  /// `combine` over `[first, last]` (inclusive); `identity` when empty.
  [[nodiscard]] T query(std::size_t first, std::size_t last) {
    if (n_ == 0 || first > last || first >= n_) return identity_;
    if (last >= n_) last = n_ - 1;
    std::size_t l = first + leaves_, r = last + 1 + leaves_;
    push_above(l);
    push_above(r - 1);
    T left = identity_, right = identity_;
    for (; l < r; l /= 2, r /= 2) {
      if (l & 1) left = combine_(left, tree_[l++]);
      if (r & 1) right = combine_(tree_[--r], right);
    }
    return combine_(left, right);
  }

 private:
  void apply_at(std::size_t node, const T& u) {
    tree_[node] = apply_(tree_[node], u);
    if (node < leaves_) pending_[node] = apply_(pending_[node], u);
  }

  /// Recomputes the ancestors of `node` from their children.
  void rebuild_above(std::size_t node) {
    for (node /= 2; node >= 1; node /= 2)
      tree_[node] = apply_(combine_(tree_[2 * node], tree_[2 * node + 1]), pending_[node]);
  }

  /// Pushes the pending updates of `node`'s ancestors down, root first.
  void push_above(std::size_t node) {
    for (std::size_t shift = height_; shift > 0; --shift) {
      const std::size_t i = node >> shift;
      if (pending_[i] == no_update_) continue;
      apply_at(2 * i, pending_[i]);
      apply_at(2 * i + 1, pending_[i]);
      pending_[i] = no_update_;
    }
  }

  std::size_t n_;
  std::size_t leaves_ = 1;
  std::size_t height_ = 0;
  Combine combine_;
  Apply apply_;
  T identity_;
  T no_update_;
  std::vector<T> tree_;
  std::vector<T> pending_;
};

}  // namespace wrapir::pass::detail
