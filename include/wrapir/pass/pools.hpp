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

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/detail/pool_forest.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/pool_policy.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

struct PoolOptions {
  PoolPolicy policy = PoolPolicy::intermediates;
  /// Pools are named `<prefix>0`, `<prefix>1`, ... (skipping names the
  /// program already uses); must make valid names.
  std::string name_prefix = "pool";
  /// The hint of a symbol without one (Inductor's pool planner uses 64).
  std::int64_t fallback_hint = 64;
};

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
[[nodiscard]] WRAPIR_DECL PoolPlan place_in_pools(const AllocationTrace& trace,
                                                  PoolPolicy policy = PoolPolicy::intermediates);

/// Inductor's pool planner on `program` (see the file comment), planned in
/// place and returned: the program rewritten into PoolCreate /
/// AllocFromPool / DeallocFromPool lines, and its statistics; the overload
/// for a caller that no longer needs the unplanned program, which saves a
/// copy of it. A diagnostic when the program cannot be traced (see
/// `trace_program`), a size cannot be built or evaluated at the hints, or
/// the name prefix does not make valid names; after one, `program` may be
/// partly planned.
[[nodiscard]] WRAPIR_DECL Result<PlanResult> plan_pools(ir::Program&& program, const PoolOptions& options = {});

/// `plan_pools` of a copy of `program`.
[[nodiscard]] inline Result<PlanResult> plan_pools(const ir::Program& program, const PoolOptions& options = {}) {
  return plan_pools(ir::Program(program), options);
}

namespace detail {

[[nodiscard]] WRAPIR_DECL Result<void> plan_pools_in(ir::Program& p, const PoolOptions& options);

}  // namespace detail

}  // namespace wrapir::pass

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/pass/impl/pools.ipp>
#endif
