#pragma once
/// \file
/// The trace the arena path reads (pass/arena.hpp): a `TracedAllocation`
/// without its name and with 32-bit steps, 24 bytes a block instead of 64.
/// The packer, the spill choice and the symbolic placement read only sizes,
/// steps, devices and flags; a name is wanted only when a diagnostic is
/// made, and the caller then gives it (`BlockNamer`): `plan_arena` from the
/// program's buffer table, `place_in_arenas` and `symbolic_placement` from
/// the `AllocationTrace` they were given. At a million lines the names were
/// half of the plan stage's trace, which lives through the packing.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>
#include <wrapir/pass/trace.hpp>

namespace wrapir::pass::detail {

/// One block of the arena path's trace (see the file comment).
struct ArenaBlock {
  /// Size in bytes at the size hints.
  std::int64_t bytes = 0;
  /// The steps `[begin, end)` it must exist at.
  std::uint32_t begin = 0, end = 1;
  std::int32_t device = 0;
  bool is_output = false;
  /// As `TracedAllocation::fixed_size`.
  bool fixed_size = true;
};
static_assert(sizeof(ArenaBlock) == 24, "the arena path's trace is 24 bytes a block");

/// The last step an `ArenaBlock` can name: its `end`, and a program's
/// step count, are at most this.
inline constexpr std::size_t arena_step_limit = std::numeric_limits<std::uint32_t>::max();

/// The name of block `i` of an arena trace, for a diagnostic.
using BlockNamer = std::function<std::string(std::size_t)>;

[[nodiscard]] inline std::int64_t block_alignment(const ArenaBlock& a, std::int64_t alignment) noexcept {
  return pass::block_alignment(a.bytes, a.fixed_size, alignment);
}

/// `bytes` rounded up to `alignment` (a power of two); throws
/// `std::invalid_argument` naming block `i` when that overflows 64 bits.
[[nodiscard]] inline std::int64_t align_up_checked(std::int64_t bytes, std::int64_t alignment, const BlockNamer& name,
                                                   std::size_t i) {
  if (bytes > std::numeric_limits<std::int64_t>::max() - (alignment - 1))
    throw std::invalid_argument("arena planner: block " + name(i) + " of " + std::to_string(bytes) +
                                " bytes cannot be aligned without overflowing 64 bits");
  return (bytes + alignment - 1) & -alignment;
}
/// `align_up_checked` of a traced block, named by its own name.
[[nodiscard]] inline std::int64_t align_up_checked(std::int64_t bytes, std::int64_t alignment,
                                                   const TracedAllocation& a) {
  return align_up_checked(bytes, alignment, [&](std::size_t) { return a.name; }, 0);
}

/// `validate_trace` of an arena trace: why it is not one the planners
/// accept, or nothing.
[[nodiscard]] inline std::optional<std::string> validate_arena_blocks(std::span<const ArenaBlock> blocks,
                                                                      const BlockNamer& name) {
  const auto label = [&](std::size_t i) {
    const std::string n = name(i);
    return "block " + std::to_string(i) + (n.empty() ? std::string() : " (" + n + ")");
  };
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const ArenaBlock& a = blocks[i];
    if (a.bytes < 0) return label(i) + " has a negative size of " + std::to_string(a.bytes) + " bytes";
    if (a.end <= a.begin)
      return label(i) + " has the empty live range [" + std::to_string(a.begin) + ", " + std::to_string(a.end) +
             "); a block must live for at least one time step";
  }
  return std::nullopt;
}

/// The arena trace of `trace` (a valid one: `validate_trace`). Throws
/// `std::invalid_argument` (prefixed by `who`) for a block that ends past
/// step `arena_step_limit`.
[[nodiscard]] inline std::vector<ArenaBlock> arena_blocks_of(const AllocationTrace& trace, const std::string& who) {
  std::vector<ArenaBlock> blocks;
  blocks.reserve(trace.allocations.size());
  for (std::size_t i = 0; i < trace.allocations.size(); ++i) {
    const TracedAllocation& a = trace.allocations[i];
    if (a.end > arena_step_limit || a.begin >= a.end)
      throw std::invalid_argument(who + ": " + detail::block_label(trace, i) + " ends at step " +
                                  std::to_string(a.end) + "; steps are numbered in 32 bits, up to 2^32 - 1");
    blocks.push_back({a.bytes, static_cast<std::uint32_t>(a.begin), static_cast<std::uint32_t>(a.end), a.device,
                      a.is_output, a.fixed_size});
  }
  return blocks;
}

/// Names the blocks of `trace` (`block_label` adds the index).
[[nodiscard]] inline BlockNamer names_of(const AllocationTrace& trace) {
  return [&trace](std::size_t i) { return trace.allocations[i].name; };
}

}  // namespace wrapir::pass::detail
