#pragma once
/// \file
/// Symbolic offsets for a placement made at the size hints (the arena
/// planner's, pass/arena.hpp).
///
/// Symbolic sizes (`symbolic_placement`)
/// -------------------------------------
/// Dynamic shapes give blocks symbolic sizes. We plan at the size hints and
/// then make the placement safe for every binding: each block's symbolic
/// offset is the Max, over the time-overlapping blocks placed below it at
/// the hints, of their symbolic offset plus their aligned symbolic size
/// (0 when there are none) — a longest path over the "below" relation,
/// which is acyclic because it follows the hint offsets. For any binding,
/// a block starts at or above the end of every overlapping block below it,
/// so no two live blocks overlap whatever the sizes turn out to be; at the
/// hints each offset is at most the planned one, so the arena is at most
/// the planned arena. The arena size is the Max over its blocks of offset
/// plus size. With static sizes everything folds to integers.
///
/// Re-planning: because the symbolic offsets are safe for every binding, a
/// binding that exceeds the hints never corrupts memory; only the packing
/// degrades (blocks that were interleaved at the hints stack up). Sizes are
/// monotone in the offsets, so a binding with every block at or below its
/// hint needs at most the planned arena; `needs_replan` says whether some
/// block exceeds its hint, which is when a caller that cares about the
/// footprint should plan again with the new sizes as hints (and, for a
/// long-running process, cache one plan per shape bucket).


#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>
#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

namespace detail {

[[nodiscard]] inline std::int64_t align_up_checked(std::int64_t bytes, std::int64_t alignment,
                                                   const TracedAllocation& a) {
  if (bytes > std::numeric_limits<std::int64_t>::max() - (alignment - 1))
    throw std::invalid_argument("arena planner: block " + a.name + " of " + std::to_string(bytes) +
                                " bytes cannot be aligned without overflowing 64 bits");
  return (bytes + alignment - 1) & -alignment;
}

}  // namespace detail

/// A placement whose offsets and arena sizes are expressions (see the file
/// comment): safe for every binding of the symbols.
struct SymbolicPlacement {
  /// Per block (trace order): its arena and its byte offset.
  std::vector<std::size_t> arena_of;
  std::vector<expr::Expr> offsets;
  /// Per arena: its device and its size in bytes.
  std::vector<std::int32_t> arena_device;
  std::vector<expr::Expr> arena_bytes;
};

/// Turns `hint_placement`, a valid placement of `trace` (whose sizes are the
/// hints), into offsets safe for any binding of `symbolic_bytes` (one
/// non-negative size expression per block, equal to the block's `bytes` at
/// the hints; all of one context). Throws `std::invalid_argument` when the
/// spans do not match, when the placement is invalid, or when a block of
/// zero bytes at the hints has a size that is not the integer 0 (a plan at
/// the hints cannot keep it apart from anything). Cost: one Max term per
/// pair of time-overlapping blocks, so meant for program-sized traces.
[[nodiscard]] WRAPIR_DECL SymbolicPlacement symbolic_placement(const AllocationTrace& trace,
                                                               const Placement& hint_placement,
                                                               std::span<const expr::Expr> symbolic_bytes,
                                                               std::int64_t alignment = planner_alignment);

/// `placement` at `bindings`, to check or to run it; a diagnostic when an
/// expression cannot be evaluated there.
[[nodiscard]] WRAPIR_DECL Result<Placement> evaluate(const SymbolicPlacement& placement, const expr::Bindings& bindings);

/// Whether some block is larger at `bindings` than its hint in `trace`: then
/// the symbolic plan is still safe but may be much larger than a new plan
/// (see the file comment). A diagnostic when a size cannot be evaluated.
[[nodiscard]] WRAPIR_DECL Result<bool> needs_replan(const AllocationTrace& trace, std::span<const expr::Expr> symbolic_bytes,
                                                   const expr::Bindings& bindings);

namespace detail {

/// `symbolic_placement` of a placement known to be valid (the arena
/// planner's own): checking it again was a tenth of a large program's plan.
[[nodiscard]] WRAPIR_DECL SymbolicPlacement symbolic_placement_of(const AllocationTrace& trace,
                                                                  const Placement& hint_placement,
                                                                  std::span<const expr::Expr> symbolic_bytes,
                                                                  std::int64_t alignment);

}  // namespace detail

}  // namespace wrapir::pass

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/pass/impl/symbolic_placement.ipp>
#endif
