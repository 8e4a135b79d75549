#pragma once
/// \file
/// wrapir's arena planner: one arena per device, every block at a byte
/// offset chosen so that blocks live at the same time never share a byte.
///
/// Algorithm (trace level, `place_in_arenas`)
/// ------------------------------------------
/// This is offline dynamic storage allocation, NP-hard in general; like
/// XLA's heap simulator and TFLite's "greedy by size" we place the blocks
/// one at a time in some order, each into the smallest gap that fits it
/// between the already-placed blocks whose lifetimes overlap its own (best
/// fit), or above all of them when no gap fits. Several orders are tried
/// and the smallest arena kept (`ArenaOrder`). Every block occupies its
/// size rounded up to its alignment (`block_alignment`: 64 bytes, or for a
/// block of fixed size under 64 bytes its size's power of two, at least
/// 16), and a gap's start is rounded up to it: with one alignment for all
/// blocks every start is aligned already, and small blocks pack two or
/// more to a 64-byte slot as Inductor's buffers of those sizes do.
///
/// Finding the placed blocks whose lifetimes overlap a block's is the cost
/// that matters. Time is compressed to the distinct begin steps, and two
/// segment trees over it answer the query without looking at any block
/// that does not overlap: a block that began at or before `begin` overlaps
/// iff it covers the point `begin` (a stabbing query: every block is kept
/// in the O(log n) nodes that decompose its interval), and a block that
/// began later overlaps iff its begin lies in `(begin, end)` (a range query:
/// every block is kept in the nodes above its begin). The node lists are
/// slices of chunked storage reused by every order, and the upper part of
/// a block's path is read as one cached, merged union (`ArenaPacker`'s
/// path unions). A range is two 32-bit numbers, in units of the device's
/// smallest block alignment, while the device's blocks stay below 2^31
/// such units (32 GiB at 16-byte units); a packing that would pass that is
/// done again with 64-bit ranges, to the same placement. Work is proportional to the number of overlapping pairs
/// (counted as if every list were read); after the first order,
/// an order that would exceed `ArenaOptions::work_limit` pair visits is
/// abandoned, so a pathological trace (thousands of blocks alive at once)
/// still plans in bounded time, with fewer orders tried. Effort is also
/// adaptive: once a packing comes within `ArenaOptions::stop_within` (0.1%)
/// of the lower bound, no further order or repacking round runs, which is
/// what keeps 100k-block traces near one packing (tens of milliseconds).
///
/// Symbolic sizes: pass/symbolic_placement.hpp makes the placement at the
/// hints safe for every binding of the symbols.
///
/// Program level (`plan_arena`)
/// ----------------------------
/// The storage that Allocate lines create (pass/liveness.hpp: lifetimes
/// from the creating line to the last line naming the storage or an alias)
/// is placed at the hints, made symbolic as above, and the program is
/// rewritten: one pool per device (`arena0`, `arena1`, ... in device order,
/// skipping names in use) whose size is the symbolic arena size; the first
/// AllocFromPool of an arena is preceded by its PoolCreate, and that by the
/// SymbolicCallArg lines defining the arena's named offsets (computed
/// symbols `arena_offset0`, ...; see pass/symbolic_placement.hpp); Allocate becomes
/// AllocFromPool at the block's offset; FreeIfNotReused and Free of a placed
/// storage (through any of its names) become DeallocFromPool, and the last
/// one of an arena releases it when no block of the arena is used later and
/// none is a program output; a FreeIfNotReused marked reused becomes Null
/// (the storage stays in the arena for the Reuse that follows). Workspaces,
/// comm buffers, extern results, control-flow results and existing pools
/// are left as they are, and so is storage whose size reads a symbol not
/// bound before the body's first Allocate (an unbacked one): the arena is
/// created before that symbol exists. A block whose size is 0 at the hints but not
/// statically 0 is planned as 1 byte, so that it is kept apart from the
/// others. Subgraphs are planned on their own. Where storage the arena does
/// not hold would otherwise push the total above the max-live bound, some
/// blocks stay Allocate lines (`ArenaOptions::spill`). The planner reads
/// a trace without names (pass/detail/arena_blocks.hpp), its steps in 32
/// bits: a body of more than 2^32 - 1 lines gets a diagnostic.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#include <wrapir/detail/config.hpp>
#include <wrapir/detail/hash.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/arena_orders.hpp>
#include <wrapir/pass/detail/arena_blocks.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/symbolic_placement.hpp>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass {

struct ArenaOptions {
  /// Offsets are multiples of this (a power of two), or for a smaller block
  /// of fixed size, of `block_alignment`.
  std::int64_t alignment = planner_alignment;
  /// The orders to try, in this order; the first one always runs to the
  /// end. Empty means all of `all_arena_orders`.
  std::vector<ArenaOrder> orders{};
  /// After the first order, an order is abandoned once it has visited this
  /// many overlapping pairs on one device.
  std::size_t work_limit = 20'000'000;
  /// Adaptive effort: once a packing is within this fraction above the
  /// max-live lower bound of the aligned sizes (no packing can be below it
  /// by more than the alignment), the remaining orders and the repacking
  /// rounds are skipped: at most 0.1% is given up, and the result is never
  /// worse than the first order's packing. On the corpus traces the plans
  /// are those of the exhaustive search, while a large trace, where one
  /// order costs tens of milliseconds, often plans with one packing. 0
  /// stops only at the bound; a finite non-negative number.
  double stop_within = 0.001;
  /// After the orders, at most this many rounds of "squeaky wheel"
  /// repacking: the blocks that ended above the lower bound go first in the
  /// next round's order. A round runs only while the arena exceeds the
  /// (aligned) max-live bound by more than `stop_within`, so easy traces
  /// pay nothing.
  std::size_t improvement_rounds = 8;
  /// Program level: the prefix of the arenas' pool names (`arena0`, ...).
  std::string name_prefix = "arena";
  /// Program level: leave to the allocator the blocks that would raise the
  /// arena while storage it does not hold (extern results, control-flow
  /// results, workspaces) is small, so that the arena plus that storage
  /// peaks at the max-live bound where it can (pass/detail/arena_spill.hpp).
  bool spill = true;
};

/// A trace-level arena plan.
struct ArenaPlan {
  /// One arena per device, in increasing device order.
  Placement placement;
  /// Per arena, the order whose packing was kept.
  std::vector<ArenaOrder> chosen;
  /// The orders that ran to the end, summed over devices.
  std::size_t orders_completed = 0;
  /// Repacking rounds that ran (see `ArenaOptions::improvement_rounds`).
  std::size_t improvement_rounds = 0;
  /// Byte ranges visited, summed over orders, rounds and devices.
  std::size_t pair_visits = 0;
};

/// Places `trace` into one arena per device (see the file comment). Blocks
/// of zero bytes sit at offset 0. Throws `std::invalid_argument` for an
/// invalid trace (`validate_trace`), a block that ends past step 2^32 - 1
/// (steps are numbered in 32 bits), an alignment that is not a power of
/// two, more than 2^32 - 1 blocks, sizes whose sum overflows 64 bits, or a
/// packing whose segment trees would hold more than 2^31 byte ranges (16
/// GiB of 32-bit ranges, 32 GiB of 64-bit ones) on one device.
[[nodiscard]] WRAPIR_DECL ArenaPlan place_in_arenas(const AllocationTrace& trace, const ArenaOptions& options = {});

/// wrapir's arena planner on `program` (see the file comment), planned in
/// place and returned, with its statistics (`PlanStats::arenas` counts the
/// arenas): the overload for a caller that no longer needs the unplanned
/// program, which saves a copy of it. A diagnostic when the program cannot
/// be traced, a size cannot be built, or the name prefix does not make
/// valid names; after one, `program` may be partly planned.
[[nodiscard]] WRAPIR_DECL Result<PlanResult> plan_arena(ir::Program&& program, const ArenaOptions& options = {});

/// `plan_arena` of a copy of `program`.
[[nodiscard]] inline Result<PlanResult> plan_arena(const ir::Program& program, const ArenaOptions& options = {}) {
  return plan_arena(ir::Program(program), options);
}

namespace detail {

/// What planning one scope gives.
struct ArenaScope {
  std::size_t arenas = 0;
  /// The max-live bound of the scope's body before planning.
  std::int64_t lower_bound = 0;
};

/// `storage_bytes_expr` of buffers whose storage sizes come from `hints`
/// (built once per layout there), once per distinct size and item size:
/// building and interning the product once per buffer was a third of a
/// large program's plan.
class StorageBytes {
 public:
  [[nodiscard]] Result<expr::Expr> of(const ir::Program& p, ir::BufferId b, HintEvaluator& hints) {
    const Result<expr::Expr>& elements = hints.buffer_storage_size(p, b);
    if (!elements) return elements.error();
    const auto item = static_cast<std::int64_t>(ir::itemsize(p.buffer(b).layout.dtype));
    const auto [it, fresh] = made_.try_emplace(Key{elements.value().node(), item});
    if (!fresh) return it->second;
    try {
      it->second = expr::mul(elements.value(), elements.value().context().integer(item));
    } catch (const expr::Error& e) {
      made_.erase(it);
      return Diagnostic{std::string("its size in bytes cannot be built: ") + e.what()};
    }
    return it->second;
  }

 private:
  using Key = std::pair<const expr::Node*, std::int64_t>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return wrapir::detail::hash_mix(std::hash<const expr::Node*>{}(k.first), static_cast<std::size_t>(k.second));
    }
  };
  std::unordered_map<Key, expr::Expr, KeyHash> made_;
};

/// `place_in_arenas` of the arena trace `blocks` (pass/detail/arena_blocks.hpp),
/// whose blocks `block_name` names in diagnostics.
[[nodiscard]] WRAPIR_DECL ArenaPlan place_blocks(std::span<const ArenaBlock> blocks, const ArenaOptions& options,
                                                 const BlockNamer& block_name);

/// The names of a program's arena offsets (`<prefix>_offset<n>`), given
/// across its scopes: the symbols its scopes declare with that prefix, and
/// the number to try next. Names depend on the program alone, not on what
/// else its expression context has seen: a second plan of a copy (which
/// shares the context) names its offsets as the first did.
struct OffsetNames {
  std::unordered_set<std::string> declared;
  std::size_t next = 0;
};

[[nodiscard]] WRAPIR_DECL Result<ArenaScope> plan_arena_in(ir::Program& p, const ArenaOptions& options,
                                                           HintEvaluator& hints, OffsetNames& offset_names);

}  // namespace detail

}  // namespace wrapir::pass

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/pass/impl/arena.ipp>
#endif
