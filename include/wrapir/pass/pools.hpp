#pragma once
/// \file
/// Inductor's pool planner (`torch/_inductor/codegen/memory_planning.py`,
/// run when `config.memory_planning` is set), with its semantics.
///
/// Blocks (Inductor's buffer groups) are packed into pools, each a tree:
/// - a TemporalSplit holds children whose live ranges never overlap, all at
///   the same offset; its size is the Max of theirs;
/// - a SpatialSplit holds a left and a right TemporalSplit, the right one
///   immediately after the left one rounded up to 64 bytes; its size is
///   `align(left) + right`;
/// - leaves are blocks, or Empty padding (size hint only; 0 bytes
///   symbolically).
///
/// Placing a block into a TemporalSplit fails when it is larger than the
/// slot and the pool may not grow, or when it overlaps more than one child
/// in time; overlapping exactly one, it recurses into that child (a
/// SpatialSplit tries its left side without growing, then its right side);
/// overlapping none, it becomes a new child: padded by Empty when smaller
/// than the slot, and when larger (growing) every existing child is padded
/// instead; a lone Empty child is dropped first. A pool that may grow and
/// is the last of its device also accepts a block "at the end": its root
/// becomes `TemporalSplit([SpatialSplit(old root, TemporalSplit([block]))])`.
///
/// Live ranges are Inductor's: `[begin, end]` with two ranges overlapping
/// when, taking the one that begins first (the tree's side on a tie), it
/// ends after the other begins; a node's ranges are the union of its
/// children's, touching ranges merged. At trace level a block's range is
/// its trace interval `[begin, end)`, which gives exactly the trace's
/// overlap relation.
///
/// Policies (`config.memory_pool`): `none` (pools never grow), `intermediates`
/// (the default: every output gets a pool of its own), `outputs` (outputs
/// share a pool, appended at the end of the last one), `combined` (outputs
/// are placed like intermediates). Outputs are placed first, smallest first
/// (then longest-lived), then intermediates largest first (then
/// longest-lived); sorts are stable. Pools are named `pool0, pool1, ...` in
/// the order of their devices' first pool, then creation order.
///
/// Finalizing walks each tree from offset 0: a TemporalSplit gives all
/// children its offset and collapses into its child when it has one; a
/// SpatialSplit places its right side at `offset + align(size of left)` and
/// collapses into its left side when the right is only Empty. Sizes after
/// finalizing are the pool sizes: symbolic `Max`/`+`/`align` expressions at
/// program level (expr's `align` node, which folds for integers and
/// vanishes on multiples of 64), integers at trace level.
///
/// Program level (`plan_pools`): each Allocate starts a buffer group, a
/// Reuse of a grouped buffer adds its new buffer to the group (the Reuse
/// keeps the old name bound: `delete_old = false`), Allocate becomes
/// AllocFromPool and FreeIfNotReused (and Free) of a grouped buffer
/// DeallocFromPool; a FreeIfNotReused marked reused becomes Null, since the
/// pool owns the storage. Time steps count runs of consecutive memory lines;
/// a group lives from the first to the last step of its pool lines, and
/// outputs to one past the last step. The first AllocFromPool of a pool is
/// preceded by its PoolCreate; the last DeallocFromPool of a pool releases
/// it when the pool's live range ends by then (so pools holding outputs are
/// never released). Workspaces, comm buffers, extern results and control
/// flow results are not pooled. Subgraphs are planned on their own, each
/// with its own pools.
///
/// Differences from Inductor, all in the direction of safety: a group whose
/// buffer a line uses after its last pool line (a buffer never freed) lives
/// until that use, where Inductor would let it share memory while in use;
/// `Free` counts as a memory line like FreeIfNotReused.

#include <algorithm>
#include <boost/variant2/variant.hpp>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/detail/pool_finder.hpp>
#include <wrapir/pass/detail/pool_lines.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

/// Inductor's `config.memory_pool`.
enum class PoolPolicy : std::uint8_t { none, intermediates, outputs, combined };

[[nodiscard]] constexpr std::string_view pool_policy_name(PoolPolicy p) noexcept {
  switch (p) {
    case PoolPolicy::none:
      return "none";
    case PoolPolicy::intermediates:
      return "intermediates";
    case PoolPolicy::outputs:
      return "outputs";
    case PoolPolicy::combined:
      return "combined";
  }
  return "<invalid pool policy>";
}

struct PoolOptions {
  PoolPolicy policy = PoolPolicy::intermediates;
  /// Pools are named `<prefix>0`, `<prefix>1`, ... (skipping names the
  /// program already uses); must make valid names.
  std::string name_prefix = "pool";
  /// The hint of a symbol without one (Inductor's pool planner uses 64).
  std::int64_t fallback_hint = 64;
};

/// A block for the pool tree: Inductor's `Allocation`.
struct PoolBlock {
  std::int64_t size_hint = 0;
  /// Inductor's PoolLiveRange: see the file comment.
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int32_t device = 0;
  bool is_output = false;
};

namespace detail {

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
  /// one level deeper each time, so each block descends through all the
  /// others (20k blocks took 86 s) and 200k overflowed the stack. Plans
  /// differ from Inductor's only where its tree would be deeper (the
  /// corpus and benchmark traces stay below 100 levels), and the bound
  /// keeps symbolic pool sizes well within expression nesting limits.
  static constexpr std::size_t max_tree_depth = 192;

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
  struct ChildIndex {
    std::map<std::int64_t, std::pair<std::int64_t, std::size_t>> spans;  // begin -> {end, child}
    std::multimap<std::int64_t, std::size_t> points;                     // [t, t] -> child
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
    auto it = ix.spans.upper_bound(range.begin);
    if (it != ix.spans.begin() && std::prev(it)->second.first > range.begin) note(std::prev(it)->second.second);
    for (; count < 2 && it != ix.spans.end() && it->first < range.end; ++it) note(it->second.second);
    for (auto p = ix.points.upper_bound(range.begin); count < 2 && p != ix.points.end() && p->first < range.end; ++p)
      note(p->second);
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
      ix.points.emplace(r.begin, child);
    } else if (!ix.spans.try_emplace(r.begin, r.end, child).second) {
      drop_index(n);
      nodes_[n].index = broken_index;
    }
  }
  /// `child` of `n` took a block live over `r`: its ranges that merged with
  /// `r` are replaced by the merged one.
  void reindex_child(std::size_t n, std::size_t child, PoolLiveRange r) {
    const PoolLiveRange merged = nodes_[child].ranges.first_ending_from(r.begin);
    ChildIndex& ix = indexes_[nodes_[n].index];
    for (auto it = ix.spans.lower_bound(merged.begin); it != ix.spans.end() && it->first <= merged.end;)
      it = it->second.second == child ? ix.spans.erase(it) : std::next(it);
    for (auto it = ix.points.lower_bound(merged.begin); it != ix.points.end() && it->first <= merged.end;)
      it = it->second == child ? ix.points.erase(it) : std::next(it);
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

}  // namespace detail

/// A trace-level pool plan.
struct PoolPlan {
  /// One arena per pool, in naming order (`pool0` is arena 0).
  Placement placement;
  /// Per pool, Inductor's size hint (with Empty padding, which can exceed
  /// the real size).
  std::vector<std::int64_t> size_hints;
};

/// Inductor's pool planner on a trace (see the file comment): block `i`
/// of the trace is a buffer group living over `[begin, end)`. Throws
/// `std::invalid_argument` for an invalid trace or pools beyond 2^63 bytes.
[[nodiscard]] inline PoolPlan place_in_pools(const AllocationTrace& trace,
                                             PoolPolicy policy = PoolPolicy::intermediates) {
  if (auto bad = validate_trace(trace)) throw std::invalid_argument("pool planner: " + *bad);
  std::vector<PoolBlock> blocks;
  blocks.reserve(trace.allocations.size());
  for (const TracedAllocation& a : trace.allocations)
    blocks.push_back(
        {a.bytes, static_cast<std::int64_t>(a.begin), static_cast<std::int64_t>(a.end), a.device, a.is_output});
  detail::PoolForest forest(blocks, policy);
  forest.allocate_all();
  detail::IntSizes sizes{&blocks};
  std::vector<std::int64_t> offsets;
  std::vector<std::size_t> pool_of;
  const std::vector<std::int64_t> pool_bytes = forest.finalize(sizes, offsets, pool_of);
  const std::vector<std::size_t> order = forest.pool_order();
  std::vector<std::size_t> arena_of_pool(order.size());
  PoolPlan plan;
  for (std::size_t a = 0; a < order.size(); ++a) {
    arena_of_pool[order[a]] = a;
    plan.placement.arenas.push_back({forest.pools()[order[a]].device, pool_bytes[order[a]]});
    plan.size_hints.push_back(forest.hint_of_pool(order[a]));
  }
  for (std::size_t i = 0; i < blocks.size(); ++i)
    plan.placement.blocks.push_back({arena_of_pool[pool_of[i]], offsets[i]});
  return plan;
}

namespace detail {

/// The names of `p`'s tables that start with `prefix`: the only ones a
/// name `<prefix><n>` can clash with. (Collecting every name of a 333k
/// buffer table into a set took half a second.)
[[nodiscard]] inline std::unordered_set<std::string> names_with_prefix(const ir::Program& p, std::string_view prefix) {
  std::unordered_set<std::string> names;
  const auto note = [&](std::string_view name) {
    if (name.starts_with(prefix)) names.emplace(name);
  };
  for (const ir::BufferDecl& b : p.buffers) note(b.name);
  for (const ir::KernelDecl& k : p.kernels) note(k.name);
  for (const ir::PoolDecl& q : p.pools) note(q.name);
  for (const ir::Program& g : p.subgraphs) note(g.name);
  for (const ir::SymbolDecl& s : p.symbols)
    if (s.symbol && s.symbol.is_symbol()) note(s.symbol.name());
  note(p.name);
  return names;
}

/// `<prefix><n>` for the next `n` (from `counter`) that names nothing yet.
[[nodiscard]] inline std::string fresh_numbered_name(const std::string& prefix, std::size_t& counter,
                                                     std::unordered_set<std::string>& used) {
  for (;; ++counter) {
    std::string name = prefix + std::to_string(counter);
    if (used.insert(name).second) {
      ++counter;
      return name;
    }
  }
}

/// Per buffer of `p`, whether it is (the base of) a program output.
[[nodiscard]] inline std::vector<bool> program_output_buffers(const ir::Program& p) {
  std::vector<bool> out(p.buffers.size(), false);
  for (const ir::ProgramOutput& o : p.outputs)
    if (const auto* b = boost::variant2::get_if<ir::BufferArg>(&o))
      if (b->buffer.index < out.size()) out[b->buffer.index] = true;
  return out;
}

/// The storage bytes of `d` as an expression: storage elements times the
/// item size.
[[nodiscard]] inline expr::Expr storage_bytes_expr(const ir::BufferDecl& d) {
  const expr::Expr elements = ir::storage_elements(d.layout);
  return expr::mul(elements, elements.context().integer(static_cast<std::int64_t>(ir::itemsize(d.layout.dtype))));
}

}  // namespace detail

/// Inductor's pool planner on `program` (see the file comment), planned in
/// place and returned: the program rewritten into PoolCreate /
/// AllocFromPool / DeallocFromPool lines, and its statistics; the overload
/// for a caller that no longer needs the unplanned program, which saves a
/// copy of it. A diagnostic when the program cannot be traced (see
/// `trace_program`), a size cannot be built or evaluated at the hints, or
/// the name prefix does not make valid names; after one, `program` may be
/// partly planned.
[[nodiscard]] inline Result<PlanResult> plan_pools(ir::Program&& program, const PoolOptions& options = {});

/// `plan_pools` of a copy of `program`.
[[nodiscard]] inline Result<PlanResult> plan_pools(const ir::Program& program, const PoolOptions& options = {}) {
  return plan_pools(ir::Program(program), options);
}

namespace detail {

[[nodiscard]] inline std::optional<Diagnostic> plan_pools_in(ir::Program& p, const PoolOptions& options) {
  for (ir::Program& g : p.subgraphs)
    if (auto bad = plan_pools_in(g, options)) return Diagnostic{"subgraph " + g.name + ": " + bad->message};
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  const Liveness& liveness = live.value();

  // Time steps: runs of memory lines. `step_of_line[i]` is the run of a
  // memory line, or for another line the run before it (the segment it
  // executes in).
  std::vector<std::int64_t> step_of_line(p.body.size(), 0);
  std::int64_t step = 0;
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    const bool memory = ir::is_memory_planning_line(p.body[i]);
    if (memory && (i == 0 || !ir::is_memory_planning_line(p.body[i - 1]))) ++step;
    step_of_line[i] = step;
  }
  const std::int64_t final_step = step + 1;

  // Buffer groups.
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> group_of(p.buffers.size(), none);
  std::vector<ir::BufferId> group_first;
  for (const ir::Line& line : p.body) {
    if (const auto* a = std::get_if<ir::Allocate>(&line)) {
      if (!p.contains(a->buffer) || group_of[a->buffer.index] != none) continue;
      group_of[a->buffer.index] = group_first.size();
      group_first.push_back(a->buffer);
    } else if (const auto* r = std::get_if<ir::Reuse>(&line)) {
      if (p.contains(r->old_buffer) && p.contains(r->new_buffer) && group_of[r->old_buffer.index] != none)
        group_of[r->new_buffer.index] = group_of[r->old_buffer.index];
    }
  }
  if (group_first.empty()) return std::nullopt;
  const std::vector<bool> is_output_buffer = program_output_buffers(p);

  std::vector<PoolBlock> blocks(group_first.size());
  std::vector<bool> used(group_first.size(), false);
  const auto touch = [&](std::size_t g, std::int64_t t) {
    PoolBlock& b = blocks[g];
    if (!used[g]) {
      b.begin = b.end = t;
      used[g] = true;
    } else {
      b.begin = std::min(b.begin, t);
      b.end = std::max(b.end, t);
    }
  };
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    const ir::Line& line = p.body[i];
    std::optional<ir::BufferId> b;
    if (const auto* a = std::get_if<ir::Allocate>(&line)) b = a->buffer;
    if (const auto* f = std::get_if<ir::FreeIfNotReused>(&line); f && !f->reused) b = f->buffer;
    if (const auto* f = std::get_if<ir::Free>(&line)) b = f->buffer;
    if (b && p.contains(*b) && group_of[b->index] != none) touch(group_of[b->index], step_of_line[i]);
  }
  // Safety: a group lives at least until the segment of its last use.
  for (const BufferLifetime& l : liveness.lifetimes) {
    const std::size_t g = l.buffer.index < group_of.size() ? group_of[l.buffer.index] : none;
    if (g == none || l.last_line >= p.body.size()) continue;
    const bool memory = ir::is_memory_planning_line(p.body[l.last_line]);
    touch(g, memory ? step_of_line[l.last_line] : step_of_line[l.last_line] + 1);
  }
  HintEvaluator hints{p, TraceOptions{.fallback_hint = options.fallback_hint, .hints = {}}};
  ExprSizes sizes{&p.ctx(), {}};
  std::vector<ir::Device> device_of_key;
  std::map<std::int32_t, ir::Device> devices;
  for (std::size_t g = 0; g < group_first.size(); ++g) {
    const ir::BufferDecl& d = p.buffer(group_first[g]);
    Result<std::int64_t> bytes = hints.bytes(d.layout);
    if (!bytes) return Diagnostic{"buffer " + d.name + ": " + bytes.error().message};
    try {
      sizes.block_bytes.push_back(storage_bytes_expr(d));
    } catch (const expr::Error& e) {
      return Diagnostic{"buffer " + d.name + ": its size in bytes cannot be built: " + e.what()};
    }
    blocks[g].size_hint = bytes.value();
    blocks[g].device = device_key(d.layout.device);
    devices.emplace(blocks[g].device, d.layout.device);
  }
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    if (group_of[b] != none && is_output_buffer[b]) blocks[group_of[b]].is_output = true;
  for (PoolBlock& b : blocks)
    if (b.is_output) b.end = std::max(b.end, final_step);

  PoolForest forest(blocks, options.policy);
  std::vector<expr::Expr> offsets;
  std::vector<std::size_t> pool_of;
  std::vector<expr::Expr> pool_bytes;
  try {
    forest.allocate_all();
    pool_bytes = forest.finalize(sizes, offsets, pool_of);
  } catch (const std::invalid_argument& e) {  // a size hint past 2^63
    return Diagnostic{e.what()};
  } catch (const expr::Error& e) {
    return Diagnostic{std::string("a pool size cannot be built: ") + e.what()};
  }
  std::unordered_set<std::string> names = names_with_prefix(p, options.name_prefix);
  std::size_t counter = 0;
  std::vector<ir::PoolId> pool_id(forest.pools().size());
  const std::size_t first_new_pool = p.pools.size();
  std::vector<std::size_t> forest_pool_of;  // by PoolId index - first_new_pool
  for (const std::size_t k : forest.pool_order()) {
    forest_pool_of.push_back(k);
    pool_id[k] = ir::PoolId{static_cast<std::uint32_t>(p.pools.size())};
    p.pools.push_back(ir::PoolDecl{fresh_numbered_name(options.name_prefix, counter, names),
                                   devices.at(forest.pools()[k].device), pool_bytes[k]});
  }

  // Rewrite: pool lines, PoolCreate before each pool's first use.
  const auto group = [&](ir::BufferId b) { return p.contains(b) ? group_of[b.index] : none; };
  const std::vector<PoolRelease> releases = rewrite_into_pools(
      p,
      [&](ir::BufferId b) -> std::optional<PoolSlot> {
        const std::size_t g = group(b);
        if (g == none) return std::nullopt;
        return PoolSlot{pool_id[pool_of[g]], offsets[g]};
      },
      [&](ir::BufferId b) -> std::optional<ir::PoolId> {
        const std::size_t g = group(b);
        if (g == none) return std::nullopt;
        return pool_id[pool_of[g]];
      },
      [&](ir::Line& line) {
        // The pool owns the memory: a Reuse hands on a name, not storage to delete.
        if (auto* r = std::get_if<ir::Reuse>(&line); r && group(r->old_buffer) != none) r->delete_old = false;
      });
  // The last DeallocFromPool of each pool releases it when every block of
  // the pool is dead by then.
  std::vector<bool> seen(forest.pools().size(), false);
  for (std::size_t d = releases.size(); d-- > 0;) {
    auto& dealloc = std::get<ir::DeallocFromPool>(p.body[releases[d].body_index]);
    const std::size_t forest_pool = forest_pool_of[dealloc.pool.index - first_new_pool];
    if (seen[forest_pool]) continue;
    seen[forest_pool] = true;
    const PoolLiveRanges& ranges = forest.ranges_of_pool(forest_pool);
    dealloc.releases_pool = !ranges.empty() && ranges.back().end <= step_of_line[releases[d].original_line];
  }
  return std::nullopt;
}

}  // namespace detail

inline Result<PlanResult> plan_pools(ir::Program&& program, const PoolOptions& options) {
  if (auto bad = ir::check_name(options.name_prefix + "0", "pool name"))
    return Diagnostic{"the pool name prefix " + ir::quote_for_diagnostic(options.name_prefix) +
                      " is unusable: " + *bad};
  // The bound is the unplanned program's; the planned one keeps its buffer
  // table, so one evaluator serves both.
  HintEvaluator hints{program, TraceOptions{}};
  Result<std::int64_t> bound = detail::lower_bound_of(program, hints);
  if (auto bad = detail::plan_pools_in(program, options)) return *bad;
  if (!bound) return bound.error();
  Result<PlanStats> stats = detail::measure_against(bound.value(), program, TraceOptions{}, hints);
  if (!stats) return stats.error();
  return PlanResult{std::move(program), stats.value()};
}

}  // namespace wrapir::pass
