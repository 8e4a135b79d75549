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
    nodes_.assign(2 * leaves_, Node{identity_, no_update_});
    for (std::size_t i = 0; i < n_; ++i) nodes_[leaves_ + i].value = values[i];
    for (std::size_t i = leaves_; i-- > 1;) nodes_[i].value = combine_(nodes_[2 * i].value, nodes_[2 * i + 1].value);
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
    rebuild_above(l0, r0);
  }

  /// `combine` over `[first, last]` (inclusive); `identity` when empty.
  [[nodiscard]] T query(std::size_t first, std::size_t last) {
    if (n_ == 0 || first > last || first >= n_) return identity_;
    if (last >= n_) last = n_ - 1;
    std::size_t l = first + leaves_, r = last + 1 + leaves_;
    push_above(l, r - 1);
    T left = identity_, right = identity_;
    for (; l < r; l /= 2, r /= 2) {
      if (l & 1) left = combine_(left, nodes_[l++].value);
      if (r & 1) right = combine_(nodes_[--r].value, right);
    }
    return combine_(left, right);
  }

 private:
  // A node's value and pending update side by side: every step of a walk
  // reads both, which in two arrays were two cache misses per step in a
  // large tree.
  struct Node {
    T value;
    T pending;  // for inner nodes only
  };

  void apply_at(std::size_t node, const T& u) {
    nodes_[node].value = apply_(nodes_[node].value, u);
    if (node < leaves_) nodes_[node].pending = apply_(nodes_[node].pending, u);
  }

  // The ancestors of the two boundary leaves `l <= r` are walked level by
  // level, so that those the leaves share (all but a few for a short
  // range) are visited once; each node still sees the same steps in the
  // same order as along one path and then the other.

  /// Recomputes the ancestors of leaves `l` and `r` from their children.
  void rebuild_above(std::size_t l, std::size_t r) {
    for (l /= 2, r /= 2; l >= 1; l /= 2, r /= 2) {
      recompute(l);
      if (r != l) recompute(r);
    }
  }

  void recompute(std::size_t node) {
    nodes_[node].value = apply_(combine_(nodes_[2 * node].value, nodes_[2 * node + 1].value), nodes_[node].pending);
  }

  /// Pushes the pending updates of the ancestors of leaves `l` and `r`
  /// down, root first.
  void push_above(std::size_t l, std::size_t r) {
    for (std::size_t shift = height_; shift > 0; --shift) {
      push(l >> shift);
      if ((r >> shift) != (l >> shift)) push(r >> shift);
    }
  }

  void push(std::size_t node) {
    if (nodes_[node].pending == no_update_) return;
    apply_at(2 * node, nodes_[node].pending);
    apply_at(2 * node + 1, nodes_[node].pending);
    nodes_[node].pending = no_update_;
  }

  std::size_t n_;
  std::size_t leaves_ = 1;
  std::size_t height_ = 0;
  Combine combine_;
  Apply apply_;
  T identity_;
  T no_update_;
  std::vector<Node> nodes_;
};

}  // namespace wrapir::pass::detail
