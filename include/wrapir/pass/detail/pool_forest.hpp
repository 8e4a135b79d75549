#pragma once
/// \file
/// Inductor's allocation tree for the pool planner (pass/pools.hpp, whose
/// file comment gives its rules): placing blocks, finalizing offsets.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/pass/detail/pool_finder.hpp>
#include <wrapir/pass/detail/pool_live_ranges.hpp>
#include <wrapir/pass/detail/sorted_chunks.hpp>
#include <wrapir/pass/pool_policy.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass::detail {

[[noreturn]] inline void throw_pool_overflow() {
  throw std::invalid_argument("pool planner: a pool exceeds 2^63 bytes at the size hints");
}

/// `n` rounded up to 64 bytes; throws `std::invalid_argument` when that
/// overflows (a size hint within 63 of 2^63).
[[nodiscard]] inline std::int64_t align64(std::int64_t n) {
  std::int64_t up = 0;
  if (!checked::add(n, 63, up)) throw_pool_overflow();
  return up & -64;
}

/// A SpatialSplit's size hint: its left side rounded up, then its right
/// side; throws `std::invalid_argument` on overflow.
[[nodiscard]] inline std::int64_t spatial_hint(std::int64_t left, std::int64_t right) {
  std::int64_t sum = 0;
  if (!checked::add(align64(left), right, sum)) throw_pool_overflow();
  return sum;
}

/// Inductor's allocation tree for one pool set. Nodes live in one vector and
/// refer to each other by index.
class PoolForest {
 public:
  enum class Kind : std::uint8_t { block, empty, temporal, spatial };
  static constexpr std::uint32_t no_index = std::numeric_limits<std::uint32_t>::max();
  struct Node {
    Kind kind;
    std::int64_t hint = 0;              // cached size hint
    PoolLiveRanges ranges;              // cached live ranges
    std::size_t block = 0;              // block
    std::vector<std::size_t> children;  // temporal
    std::size_t left = 0, right = 0;    // spatial (both temporal)
    std::uint32_t index = no_index;     // temporal: its `ChildIndex`, if any
  };
  struct Pool {
    std::int32_t device;
    std::size_t root;  // a temporal node
    bool can_expand;
    /// At least the number of levels of its tree (see `max_tree_depth`).
    std::size_t height = 2;
    /// A live range `[begin, end)` whose overlapping blocks the root surely
    /// refuses (see `summary`), or none.
    PoolLiveRange refused{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  };

  /// No tree grows deeper than this many levels: a block that would go
  /// below it is refused there, and a pool that would grow "at the end"
  /// past it stays as it is while a new pool takes the block (as if the
  /// old one could not grow). Inductor has no such bound: a trace whose
  /// blocks all overlap appends every block at the end, nesting the tree
  /// one level deeper each time, so each block descended through all the
  /// others (20k blocks took 86 s) and 200k overflowed the stack; chains
  /// and fan-outs nest padded SpatialSplits and grow "at the end" too (a
  /// 250k-block chain reached 346 levels, and every block descends its
  /// pool's tree and adds its range to every node on the way). A block's
  /// work is at most the nodes on its paths to the blocks it overlaps, so
  /// the bound caps it. 64 levels: a 1M-block chain took 5.9 s of CPU time
  /// at 64, 13.3 s at 128, and a 250k one 18.7 s at 1,024 (2026-11-26);
  /// 32 changed five corpus traces' plans (transformer_train under
  /// `outputs` +3.6 %). Plans differ from Inductor's only
  /// where its tree would be deeper than this: on the corpus,
  /// random_long_lived under `intermediates` (+0.01 % peak) and `outputs`
  /// (-2.6 %) and random_small_sizes under `outputs` and `combined`
  /// (-0.6 %, -0.03 %); docs/memory-planning.md, "Depth bound".
  static constexpr std::size_t max_tree_depth = 64;

  /// Nodes visited while placing blocks so far: the work measure that the
  /// tests bound (a visit costs O(log n)).
  [[nodiscard]] std::size_t visits() const noexcept { return visits_; }

  /// How a block finds its place: `indexed` (the planner's) or `linear`,
  /// Inductor's plain scans over every pool and every child, which the
  /// tests hold the indexed search to.
  enum class Search : std::uint8_t { indexed, linear };

  PoolForest(std::vector<PoolBlock> blocks, PoolPolicy policy, Search search = Search::indexed)
      : blocks_(std::move(blocks)), policy_(policy), search_(search) {}

  /// Inductor's `allocate_groups` without the finalization.
  void allocate_all() {
    std::vector<std::size_t> outputs, intermediates;
    for (std::size_t i = 0; i < blocks_.size(); ++i)
      (blocks_[i].is_output && policy_ != PoolPolicy::combined ? outputs : intermediates).push_back(i);
    const auto length = [&](std::size_t i) { return blocks_[i].end - blocks_[i].begin; };
    std::stable_sort(outputs.begin(), outputs.end(), [&](std::size_t a, std::size_t b) {
      if (blocks_[a].size_hint != blocks_[b].size_hint) return blocks_[a].size_hint < blocks_[b].size_hint;
      return length(a) > length(b);
    });
    std::stable_sort(intermediates.begin(), intermediates.end(), [&](std::size_t a, std::size_t b) {
      if (blocks_[a].size_hint != blocks_[b].size_hint) return blocks_[a].size_hint > blocks_[b].size_hint;
      return length(a) > length(b);
    });
    for (const std::size_t i : outputs) allocate_output(i);
    for (const std::size_t i : intermediates) allocate(i);
  }

  /// Pools in naming order: by device in order of first use, then creation.
  [[nodiscard]] std::vector<std::size_t> pool_order() const {
    std::vector<std::size_t> order;
    for (const std::int32_t d : device_order_)
      for (std::size_t k = 0; k < pools_.size(); ++k)
        if (pools_[k].device == d) order.push_back(k);
    return order;
  }

  [[nodiscard]] const std::vector<Pool>& pools() const noexcept { return pools_; }
  [[nodiscard]] const Node& node(std::size_t n) const { return nodes_[n]; }

  /// The pool's size hint (Inductor's `get_size_hint`, padding included).
  [[nodiscard]] std::int64_t hint_of_pool(std::size_t k) const { return nodes_[pools_[k].root].hint; }
  /// The pool's live ranges.
  [[nodiscard]] const PoolLiveRanges& ranges_of_pool(std::size_t k) const { return nodes_[pools_[k].root].ranges; }

  /// Finalizes every pool with size arithmetic `S` (see `IntSizes`): sets
  /// `offset_of[block]` and `pool_of[block]`, and returns each pool's size.
  template <class S>
  std::vector<typename S::value> finalize(S& sizes, std::vector<typename S::value>& offset_of,
                                          std::vector<std::size_t>& pool_of) {
    offset_of.assign(blocks_.size(), sizes.zero());
    pool_of.assign(blocks_.size(), 0);
    std::vector<typename S::value> pool_sizes;
    // A node's size is asked for only once its subtree is finalized, after
    // which the subtree no longer changes, so each is computed once (a
    // SpatialSplit asks for its left side's size, and recomputing it was
    // quadratic in the depth of nested splits).
    std::vector<std::optional<typename S::value>> known(nodes_.size());
    for (std::size_t k = 0; k < pools_.size(); ++k) {
      // The pool keeps its root; the root's children are finalized (and
      // may collapse), then its size is taken.
      finalize_node(pools_[k].root, k, sizes.zero(), sizes, offset_of, pool_of, known);
      pool_sizes.push_back(symbolic_size(pools_[k].root, sizes, known));
    }
    return pool_sizes;
  }

 private:
  std::size_t make(Node n) {
    nodes_.push_back(std::move(n));
    return nodes_.size() - 1;
  }
  std::size_t make_block(std::size_t b) {
    return make(Node{Kind::block, blocks_[b].size_hint, {{blocks_[b].begin, blocks_[b].end}}, b, {}, 0, 0});
  }
  std::size_t make_temporal(std::vector<std::size_t> children) {
    Node n{Kind::temporal, 0, {}, 0, std::move(children), 0, 0};
    for (const std::size_t c : n.children) {
      n.hint = std::max(n.hint, nodes_[c].hint);
      nodes_[c].ranges.for_each([&](PoolLiveRange r) { n.ranges.add(r); });
    }
    return make(std::move(n));
  }
  std::size_t make_spatial(std::size_t left, std::size_t right) {
    Node n{Kind::spatial, spatial_hint(nodes_[left].hint, nodes_[right].hint), nodes_[left].ranges, 0, {}, left, right};
    nodes_[right].ranges.for_each([&](PoolLiveRange r) { n.ranges.add(r); });
    return make(std::move(n));
  }
  /// `SpatialSplit.create(node, extra)`: `node` followed by `extra` bytes
  /// of padding.
  std::size_t pad(std::size_t node, std::int64_t extra) {
    const std::size_t left = make_temporal({node});
    const std::size_t empty = make(Node{Kind::empty, extra, {}, 0, {}, 0, 0});
    return make_spatial(left, make_temporal({empty}));
  }

  /// Places block `b` into node `n` of pool `pool`, at depth `depth`.
  bool allocate_in(std::size_t n, std::size_t b, bool is_last, std::size_t pool, std::size_t depth) {
    ++visits_;
    if (depth >= max_tree_depth) return false;
    switch (nodes_[n].kind) {
      case Kind::block:
      case Kind::empty:
        return false;
      case Kind::spatial: {
        const bool done = allocate_in(nodes_[n].left, b, false, pool, depth + 1) ||
                          allocate_in(nodes_[n].right, b, is_last, pool, depth + 1);
        if (done) {
          Node& s = nodes_[n];
          s.hint = spatial_hint(nodes_[s.left].hint, nodes_[s.right].hint);
          s.ranges.add({blocks_[b].begin, blocks_[b].end});
        }
        return done;
      }
      case Kind::temporal:
        break;
    }
    const std::int64_t slot = nodes_[n].hint;
    const std::int64_t size = blocks_[b].size_hint;
    if (!is_last && size > slot) return false;
    const PoolLiveRange range{blocks_[b].begin, blocks_[b].end};
    std::size_t overlapping = 0;
    const std::size_t count = overlapping_children(n, range, overlapping);
    if (count > 1) return false;
    if (count == 1) {
      if (!allocate_in(overlapping, b, is_last, pool, depth + 1)) return false;
      Node& t = nodes_[n];
      t.hint = std::max(t.hint, nodes_[overlapping].hint);
      t.ranges.add(range);
      if (t.index != no_index) reindex_child(n, overlapping, range);
      return true;
    }
    // A new child, appended in place (copying the list made a node of k
    // children cost O(k) per block it took).
    bool dropped_empty = false;
    if (nodes_[n].children.size() == 1 && nodes_[nodes_[n].children[0]].kind == Kind::empty) {
      nodes_[n].children.pop_back();
      dropped_empty = true;
    }
    const std::size_t leaf = make_block(b);
    if (slot >= size) {
      const std::size_t child = slot == size ? leaf : pad(leaf, slot - size);
      Node& t = nodes_[n];
      t.children.push_back(child);
      // The hint is the largest of the children's (their hints only grow).
      t.hint = dropped_empty ? nodes_[child].hint : std::max(t.hint, nodes_[child].hint);
      if (t.index != no_index) index_range(n, range, child);
      pools_[pool].height = std::max(pools_[pool].height, depth + 4);  // a padded child: three levels
    } else {
      for (std::size_t k = 0; k < nodes_[n].children.size(); ++k) {
        const std::size_t padded = pad(nodes_[n].children[k], size - slot);
        nodes_[n].children[k] = padded;
      }
      Node& t = nodes_[n];
      t.children.push_back(leaf);
      t.hint = 0;
      for (const std::size_t c : t.children) t.hint = std::max(t.hint, nodes_[c].hint);
      drop_index(n);  // every child is a new node
      pools_[pool].height += 2;  // every subtree below n is two levels deeper
    }
    nodes_[n].ranges.add(range);
    return true;
  }

  /// Per temporal node with many children, their live ranges in one sorted
  /// map, so that finding the children a block overlaps reads only the
  /// ranges near it. The children of a TemporalSplit never overlap in time
  /// (a block joins a child only when it overlaps no other, and becomes a
  /// child only when it overlaps none), so their non-empty ranges are
  /// disjoint and one map keyed by begin holds them; empty ranges `[t, t]`
  /// (which overlap a block only strictly inside it) are kept apart. A
  /// child overlaps `[b, e]` iff one of its non-empty ranges holds `b`
  /// (begins at or before it and ends after it) or one of its ranges begins
  /// strictly inside `(b, e)`: what `PoolLiveRanges::overlaps` answers for a
  /// child with merged ranges.
  struct IndexedRange {
    std::int64_t begin, end;
    std::size_t child;
  };
  struct BeginOf {
    std::int64_t operator()(const IndexedRange& r) const noexcept { return r.begin; }
  };
  /// Sorted chunks rather than `std::map`s: a root on a chain trace indexes
  /// hundreds of thousands of ranges (see pass/detail/sorted_chunks.hpp).
  using IndexedRanges = SortedChunks<IndexedRange, BeginOf>;
  struct ChildIndex {
    IndexedRanges spans;   // by begin; non-empty ranges, no two with one begin
    IndexedRanges points;  // [t, t], by t
  };
  /// Below this many children a scan is cheaper than an index.
  static constexpr std::size_t indexed_children = 16;
  static constexpr std::uint32_t broken_index = no_index - 1;

  /// How many children of temporal node `n` overlap `range` (counting up
  /// to 2); `first` is the one when it is 1.
  std::size_t overlapping_children(std::size_t n, PoolLiveRange range, std::size_t& first) {
    std::size_t count = 0;
    const auto note = [&](std::size_t c) {
      if (count == 0) {
        first = c;
        count = 1;
      } else if (c != first) {
        count = 2;
      }
    };
    if (search_ == Search::indexed && nodes_[n].index == no_index && nodes_[n].children.size() >= indexed_children)
      build_index(n);
    if (nodes_[n].index >= broken_index) {
      for (const std::size_t c : nodes_[n].children) {
        if (!nodes_[c].ranges.overlaps(range)) continue;
        note(c);
        if (count > 1) break;
      }
      return count;
    }
    const ChildIndex& ix = indexes_[nodes_[n].index];
    IndexedRanges::Pos it = ix.spans.upper_bound(range.begin);
    if (it != ix.spans.begin_pos()) {
      const IndexedRange& before = ix.spans.at(ix.spans.prev(it));
      if (before.end > range.begin) note(before.child);
    }
    for (; count < 2 && !ix.spans.is_end(it) && ix.spans.at(it).begin < range.end; it = ix.spans.next(it))
      note(ix.spans.at(it).child);
    for (IndexedRanges::Pos p = ix.points.upper_bound(range.begin);
         count < 2 && !ix.points.is_end(p) && ix.points.at(p).begin < range.end; p = ix.points.next(p))
      note(ix.points.at(p).child);
    return count;
  }

  void build_index(std::size_t n) {
    if (free_indexes_.empty()) {
      nodes_[n].index = static_cast<std::uint32_t>(indexes_.size());
      indexes_.emplace_back();
    } else {
      nodes_[n].index = free_indexes_.back();
      free_indexes_.pop_back();
    }
    for (const std::size_t c : nodes_[n].children)
      nodes_[c].ranges.for_each([&](PoolLiveRange r) {
        if (nodes_[n].index < broken_index) index_range(n, r, c);
      });
  }
  void drop_index(std::size_t n) {
    const std::uint32_t k = nodes_[n].index;
    if (k < broken_index) {
      indexes_[k].spans.clear();
      indexes_[k].points.clear();
      free_indexes_.push_back(k);
    }
    nodes_[n].index = no_index;
  }
  /// Adds `child`'s range `r` to `n`'s index; should two non-empty ranges
  /// ever begin together (they cannot, see `ChildIndex`), the node falls
  /// back to scanning, so the answer never depends on the claim.
  void index_range(std::size_t n, PoolLiveRange r, std::size_t child) {
    ChildIndex& ix = indexes_[nodes_[n].index];
    if (r.begin == r.end) {
      ix.points.insert(ix.points.upper_bound(r.begin), {r.begin, r.end, child});
      return;
    }
    const IndexedRanges::Pos at = ix.spans.lower_bound(r.begin);
    if (!ix.spans.is_end(at) && ix.spans.at(at).begin == r.begin) {
      drop_index(n);
      nodes_[n].index = broken_index;
      return;
    }
    ix.spans.insert(at, {r.begin, r.end, child});
  }
  /// `child` of `n` took a block live over `r`: its ranges that merged with
  /// `r` are replaced by the merged one.
  void reindex_child(std::size_t n, std::size_t child, PoolLiveRange r) {
    const PoolLiveRange merged = nodes_[child].ranges.first_ending_from(r.begin);
    ChildIndex& ix = indexes_[nodes_[n].index];
    for (IndexedRanges* set : {&ix.spans, &ix.points})
      for (IndexedRanges::Pos it = set->lower_bound(merged.begin); !set->is_end(it) && set->at(it).begin <= merged.end;)
        it = set->at(it).child == child ? set->erase(it) : set->next(it);
    index_range(n, merged, child);
  }

  /// The pools of one device in creation order, and their finder.
  struct DevicePools {
    std::vector<std::size_t> pools;
    PoolFinder finder;
  };
  DevicePools& pools_of(std::int32_t device) {
    const auto [it, inserted] = device_pools_.try_emplace(device);
    if (inserted) device_order_.push_back(device);
    return it->second;
  }
  /// What the finder knows of pool `k`: its size, and `refused_`, a live
  /// range whose overlapping blocks the root surely refuses.
  [[nodiscard]] PoolFinder::Summary summary(std::size_t k) const {
    return PoolFinder::Summary{nodes_[pools_[k].root].hint, pools_[k].refused.begin, pools_[k].refused.end};
  }
  /// The range of the root's first child when that is a block (a block
  /// overlapping it overlaps that leaf, into which nothing goes, so the
  /// root refuses it), or none (begin = INT64_MAX, end = INT64_MIN).
  [[nodiscard]] PoolLiveRange first_leaf_refusal(std::size_t root) const {
    const Node& r = nodes_[root];
    if (!r.children.empty()) {
      const Node& first = nodes_[r.children[0]];
      if (first.kind == Kind::block && first.ranges.front().begin < first.ranges.front().end)
        return first.ranges.front();
    }
    return no_refusal;
  }
  static constexpr PoolLiveRange no_refusal{std::numeric_limits<std::int64_t>::max(),
                                            std::numeric_limits<std::int64_t>::min()};
  void new_pool(std::size_t b, bool can_expand) {
    DevicePools& mine = pools_of(blocks_[b].device);
    const std::size_t root = make_temporal({make_block(b)});
    pools_.push_back({blocks_[b].device, root, can_expand, 2, first_leaf_refusal(root)});
    mine.pools.push_back(pools_.size() - 1);
    mine.finder.push(summary(pools_.size() - 1));
  }

  /// False, leaving the pool as it is, when that would nest the tree
  /// deeper than `max_tree_depth`.
  [[nodiscard]] bool allocate_at_end(std::size_t k, std::size_t b) {
    if (pools_[k].height + 2 > max_tree_depth) return false;
    const std::size_t block = make_temporal({make_block(b)});
    pools_[k].root = make_temporal({make_spatial(pools_[k].root, block)});
    pools_[k].height += 2;
    // The new root's one child, a SpatialSplit, refuses what both its sides
    // do: the old root (`refused`) and the block's TemporalSplit (the
    // block's range). A block overlapping the intersection of the two
    // ranges overlaps both, so the new root refuses it. (Without this, a
    // trace whose blocks all overlap made every block descend into every
    // full pool.)
    PoolLiveRange& r = pools_[k].refused;
    const std::int64_t lo = std::max(r.begin, blocks_[b].begin), hi = std::min(r.end, blocks_[b].end);
    r = lo < hi && blocks_[b].begin < blocks_[b].end ? PoolLiveRange{lo, hi} : no_refusal;
    return true;
  }

  /// Inductor's order: the block goes into the first pool of its device
  /// that takes it (the last one, when it may grow, growing or at its end),
  /// else into a new pool. The finder skips pools that would refuse it, and
  /// a refusing pool is left as it was, so the result is the same.
  void allocate(std::size_t b) {
    DevicePools& mine = pools_of(blocks_[b].device);
    const std::size_t count = mine.pools.size();
    const bool last_grows = count > 0 && pools_[mine.pools.back()].can_expand;
    const std::size_t fixed = last_grows ? count - 1 : count;
    const PoolBlock& block = blocks_[b];
    const bool linear = search_ == Search::linear;
    for (std::size_t m = linear ? 0 : mine.finder.next(0, fixed, block.size_hint, block.begin, block.end); m < fixed;
         m = linear ? m + 1 : mine.finder.next(m + 1, fixed, block.size_hint, block.begin, block.end)) {
      if (allocate_in(pools_[mine.pools[m]].root, b, false, mine.pools[m], 0)) {
        pools_[mine.pools[m]].refused = first_leaf_refusal(pools_[mine.pools[m]].root);
        mine.finder.set(m, summary(mine.pools[m]));
        return;
      }
    }
    if (last_grows) {
      const std::size_t k = mine.pools.back();
      if (allocate_in(pools_[k].root, b, true, k, 0)) {
        pools_[k].refused = first_leaf_refusal(pools_[k].root);
        mine.finder.set(count - 1, summary(k));
        return;
      }
      if (allocate_at_end(k, b)) {
        mine.finder.set(count - 1, summary(k));
        return;
      }
    }
    new_pool(b, policy_ != PoolPolicy::none);
  }

  void allocate_output(std::size_t b) {
    DevicePools& mine = pools_of(blocks_[b].device);
    if (!mine.pools.empty() && (policy_ == PoolPolicy::outputs || policy_ == PoolPolicy::combined)) {
      if (allocate_at_end(mine.pools.back(), b)) {
        mine.finder.set(mine.pools.size() - 1, summary(mine.pools.back()));
        return;
      }
    }
    new_pool(b, policy_ == PoolPolicy::combined);
  }

  template <class S>
  typename S::value symbolic_size(std::size_t n, S& sizes, std::vector<std::optional<typename S::value>>& known) const {
    if (known[n]) return *known[n];
    const Node& x = nodes_[n];
    switch (x.kind) {
      case Kind::block:
        return *(known[n] = sizes.of_block(x.block));
      case Kind::empty:
        return *(known[n] = sizes.zero());
      case Kind::spatial: {
        typename S::value left = sizes.align(symbolic_size(x.left, sizes, known));
        return *(known[n] = sizes.add(std::move(left), symbolic_size(x.right, sizes, known)));
      }
      case Kind::temporal:
        break;
    }
    if (x.children.empty()) return *(known[n] = sizes.zero());
    std::vector<typename S::value> parts;
    parts.reserve(x.children.size());
    for (const std::size_t c : x.children) parts.push_back(symbolic_size(c, sizes, known));
    return *(known[n] = sizes.max(parts));
  }

  [[nodiscard]] bool is_empty(std::size_t n) const {
    const Node& x = nodes_[n];
    if (x.kind == Kind::empty) return true;
    return x.kind == Kind::temporal && x.children.size() == 1 && nodes_[x.children[0]].kind == Kind::empty;
  }

  /// Inductor's `finalize(pool, offset)`: returns the node that replaces `n`.
  template <class S>
  std::size_t finalize_node(std::size_t n, std::size_t pool, typename S::value offset, S& sizes,
                            std::vector<typename S::value>& offset_of, std::vector<std::size_t>& pool_of,
                            std::vector<std::optional<typename S::value>>& known) {
    switch (nodes_[n].kind) {
      case Kind::block:
        offset_of[nodes_[n].block] = offset;
        pool_of[nodes_[n].block] = pool;
        return n;
      case Kind::empty:
        return n;
      case Kind::temporal: {
        for (std::size_t k = 0; k < nodes_[n].children.size(); ++k) {
          const std::size_t c = finalize_node(nodes_[n].children[k], pool, offset, sizes, offset_of, pool_of, known);
          nodes_[n].children[k] = c;
        }
        return nodes_[n].children.size() == 1 ? nodes_[n].children[0] : n;
      }
      case Kind::spatial: {
        const std::size_t left = finalize_node(nodes_[n].left, pool, offset, sizes, offset_of, pool_of, known);
        nodes_[n].left = left;
        const typename S::value right_offset = sizes.add(offset, sizes.align(symbolic_size(left, sizes, known)));
        const std::size_t right =
            finalize_node(nodes_[n].right, pool, right_offset, sizes, offset_of, pool_of, known);
        nodes_[n].right = right;
        return is_empty(right) ? left : n;
      }
    }
    return n;
  }

  std::vector<PoolBlock> blocks_;
  PoolPolicy policy_;
  Search search_;
  std::vector<Node> nodes_;
  std::vector<Pool> pools_;
  std::vector<std::int32_t> device_order_;
  std::map<std::int32_t, DevicePools> device_pools_;
  std::vector<ChildIndex> indexes_;
  std::vector<std::uint32_t> free_indexes_;
  std::size_t visits_ = 0;
};

/// Integer size arithmetic for `PoolForest::finalize` at trace level.
struct IntSizes {
  using value = std::int64_t;
  const std::vector<PoolBlock>* blocks;
  [[nodiscard]] value zero() const { return 0; }
  [[nodiscard]] value of_block(std::size_t b) const { return (*blocks)[b].size_hint; }
  [[nodiscard]] value align(value v) const { return align64(v); }
  [[nodiscard]] value add(value a, value b) const {
    value sum = 0;
    if (!checked::add(a, b, sum)) throw_pool_overflow();
    return sum;
  }
  [[nodiscard]] value max(const std::vector<value>& v) const { return *std::max_element(v.begin(), v.end()); }
};

/// Symbolic size arithmetic for `PoolForest::finalize` at program level.
struct ExprSizes {
  using value = expr::Expr;
  expr::Context* ctx;
  std::vector<expr::Expr> block_bytes;
  [[nodiscard]] value zero() const { return ctx->integer(0); }
  [[nodiscard]] value of_block(std::size_t b) const { return block_bytes[b]; }
  [[nodiscard]] value align(value v) const { return expr::align(v, planner_alignment); }
  [[nodiscard]] value add(value a, value b) const { return expr::add(a, b); }
  [[nodiscard]] value max(const std::vector<value>& v) const { return expr::max(v); }
};

}  // namespace wrapir::pass::detail
