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
/// Named offsets: offsets are Maxes of flat sums (pass/detail/offset_forms.hpp),
/// which stay short while stacks are shallow or repeat a few sizes. A block
/// deep in a stack of distinct sizes (a transformer's saved activations,
/// each `k*s0` for its own `k`) would carry a term per block below it, and
/// a program's offsets would cost time and memory quadratic in the depth.
/// So a set of forms one of which has more than `detail::max_form_terms`
/// terms, or of more than `detail::max_offset_forms` forms (a join of
/// forms of unrelated sizes would be their sum: blocks never live together
/// would be sized as if stacked), is given a name: a fresh symbol standing for its Max, listed in
/// `SymbolicPlacement::named` with its value, which offsets and arena
/// sizes above it use as one term. Named values are exact (the Max itself,
/// never a join), refer only to sizes and earlier names, and are evaluated
/// in order before the arena is created; forms that refer to names are
/// never joined, since a join of two names would count the blocks both
/// stand on twice. Only a small block's offset (aligned to less than
/// `alignment`, which a name's terms must be multiples of) is still
/// joined past `detail::max_offset_forms` forms. The offsets of a program then take time and memory
/// linear in its blocks times the blocks directly below each.

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
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/pass/detail/arena_blocks.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

/// A value that offsets and arena sizes refer to by name (see the file
/// comment): `symbol` (non-negative, fresh in the sizes' context) stands
/// for `value`, an expression of the sizes and of earlier names, which is
/// `at_hints` at the hints and is needed before arena `arena` is created.
struct NamedOffset {
  expr::Expr symbol;
  expr::Expr value;
  std::int64_t at_hints = 0;
  std::size_t arena = 0;
};

/// A placement whose offsets and arena sizes are expressions (see the file
/// comment): safe for every binding of the symbols.
struct SymbolicPlacement {
  /// The names the expressions below use, in the order to bind them.
  std::vector<NamedOffset> named;
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
/// the hints cannot keep it apart from anything). Names are
/// `<name_prefix><n>` for the first numbers `n` that no symbol of the
/// context has. Cost: linear in the blocks times the blocks directly below
/// each, with at most `detail::max_offset_forms` forms per offset.
[[nodiscard]] WRAPIR_DECL SymbolicPlacement symbolic_placement(const AllocationTrace& trace,
                                                               const Placement& hint_placement,
                                                               std::span<const expr::Expr> symbolic_bytes,
                                                               std::int64_t alignment = planner_alignment,
                                                               std::string_view name_prefix = "offset");

/// `placement` at `bindings` (its names bound in order from their values),
/// to check or to run it; a diagnostic when an
/// expression cannot be evaluated there.
[[nodiscard]] WRAPIR_DECL Result<Placement> evaluate(const SymbolicPlacement& placement, const expr::Bindings& bindings);

/// Whether some block is larger at `bindings` than its hint in `trace`: then
/// the symbolic plan is still safe but may be much larger than a new plan
/// (see the file comment). A diagnostic when a size cannot be evaluated.
[[nodiscard]] WRAPIR_DECL Result<bool> needs_replan(const AllocationTrace& trace, std::span<const expr::Expr> symbolic_bytes,
                                                   const expr::Bindings& bindings);

namespace detail {

/// `<prefix><n>` for the next `n` from `counter` that names no symbol of
/// `ctx`: the names of `symbolic_placement`. (The arena planner names its
/// offsets by the program alone, `detail::OffsetNames`, so that a copy's
/// second plan reuses the symbols its first made.)
[[nodiscard]] inline std::string fresh_symbol_name(std::string_view prefix, std::size_t& counter,
                                                   const expr::Context& ctx) {
  for (;; ++counter) {
    std::string name = std::string(prefix) + std::to_string(counter);
    if (ctx.find_symbol(name)) continue;
    ++counter;
    return name;
  }
}

/// `symbolic_placement` of a placement known to be valid (the arena
/// planner's own) of the arena trace `blocks` (pass/detail/arena_blocks.hpp),
/// whose blocks `block_name` names in diagnostics: checking the placement
/// again was a tenth of a large program's plan. The placement is taken by
/// value and its block table freed once read (moved in, at a million lines
/// that was where the plan stage peaked). `fresh_name` gives each
/// name; when empty, nothing is named (the sums grow with the depth of the
/// stacks, but every offset reads only sizes).
[[nodiscard]] WRAPIR_DECL SymbolicPlacement symbolic_placement_of(std::span<const ArenaBlock> blocks,
                                                                  Placement hint_placement,
                                                                  std::span<const expr::Expr> symbolic_bytes,
                                                                  std::int64_t alignment,
                                                                  const std::function<std::string()>& fresh_name,
                                                                  const BlockNamer& block_name);

}  // namespace detail

}  // namespace wrapir::pass

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/pass/impl/symbolic_placement.ipp>
#endif
