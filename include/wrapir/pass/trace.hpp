#pragma once
/// \file
/// Allocation traces: what a memory planner sees of a program. Each entry is
/// one block of storage with its size in bytes and the half-open interval of
/// time steps `[begin, end)` during which it must exist. The planners in
/// `pass/` place traces; `pass/liveness.hpp` extracts one from a program,
/// and benchmarks and property tests make synthetic ones.
///
/// The max-live lower bound is the largest sum of the sizes of blocks alive
/// at one time step (per device): no placement of the blocks into memory can
/// use less, so every planner's peak is measured against it.
///
/// A `Placement` is what a planner answers for a trace: for each block an
/// arena (a pool of memory on one device) and a byte offset into it, and for
/// each arena its size. `check_placement` is the oracle every planner is
/// tested with: it says, in one sentence, the first way a placement is wrong
/// (two blocks sharing bytes while both are live, a misaligned offset, a
/// block past its arena's end, a block on another device's arena), or
/// nothing.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::pass {

/// One block of storage in a trace.
struct TracedAllocation {
  /// The buffer's name in the program (diagnostics and timelines only).
  std::string name;
  /// Size in bytes at the size hints; never negative.
  std::int64_t bytes = 0;
  /// First time step the block must exist at.
  std::size_t begin = 0;
  /// One past the last time step it must exist at; `end > begin`.
  std::size_t end = 1;
  /// Device index (blocks on different devices never share memory); the
  /// device type is part of the key too, folded into `device` by whoever
  /// builds the trace (see `pass/liveness.hpp`).
  std::int32_t device = 0;
  /// A graph output: its storage is handed to the caller, so planners that
  /// pool outputs separately (Inductor's policies) can tell.
  bool is_output = false;
  /// `bytes` is the block's size under every binding of the program's
  /// symbols, not only at the hints: only then may a block smaller than the
  /// planner alignment take a smaller one (`block_alignment`), since a
  /// symbolic size can grow past it at run time.
  bool fixed_size = true;

  friend bool operator==(const TracedAllocation&, const TracedAllocation&) = default;
};

struct AllocationTrace {
  std::vector<TracedAllocation> allocations;
  /// One past the last time step of the program.
  std::size_t steps = 0;

  friend bool operator==(const AllocationTrace&, const AllocationTrace&) = default;
};

/// `{device, max-live bytes}` for every device in `trace`: the largest sum of
/// `bytes` over the blocks alive at one time step. Saturates at INT64_MAX
/// rather than overflowing.
[[nodiscard]] inline std::map<std::int32_t, std::int64_t> max_live_bytes_per_device(const AllocationTrace& trace) {
  // Sweep over begin/end events; at equal times ends come first because the
  // intervals are half-open.
  struct Event {
    std::size_t time;
    bool is_begin;
    std::int32_t device;
    std::int64_t bytes;
  };
  std::vector<Event> events;
  events.reserve(trace.allocations.size() * 2);
  for (const TracedAllocation& a : trace.allocations) {
    if (a.end <= a.begin || a.bytes <= 0) continue;
    events.push_back({a.begin, true, a.device, a.bytes});
    events.push_back({a.end, false, a.device, a.bytes});
  }
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    return x.time != y.time ? x.time < y.time : (!x.is_begin && y.is_begin);
  });
  // Until a device's live sum reaches INT64_MAX it is exact; once it does,
  // its peak is INT64_MAX whatever follows, so the device is left alone
  // (subtracting from a clamped sum would undercount, then overflow).
  std::map<std::int32_t, std::int64_t> live, peak;
  constexpr std::int64_t max = INT64_MAX;
  for (const Event& e : events) {
    std::int64_t& p = peak[e.device];
    if (p == max) continue;
    std::int64_t& l = live[e.device];
    if (e.is_begin) {
      l = l > max - e.bytes ? max : l + e.bytes;
      p = std::max(p, l);
    } else {
      l -= e.bytes;
    }
  }
  return peak;
}

/// The max-live lower bound summed over devices (each device's memory is
/// separate, so the bound of the whole trace is the sum of theirs).
[[nodiscard]] inline std::int64_t max_live_bytes(const AllocationTrace& trace) {
  std::int64_t total = 0;
  for (const auto& [device, bytes] : max_live_bytes_per_device(trace))
    total = total > INT64_MAX - bytes ? INT64_MAX : total + bytes;
  return total;
}

/// The alignment of every offset wrapir's planners hand out (Inductor's
/// `ALIGN_BYTES`) to blocks of at least that many bytes.
inline constexpr std::int64_t planner_alignment = 64;

/// The least alignment a planner gives a block: Inductor's `ALIGNMENT`, the
/// divisibility its Triton kernels are specialised for and what its
/// `assert_alignment` lines check.
inline constexpr std::int64_t min_block_alignment = 16;

/// The alignment of a block of `bytes` (`fixed_size`: see
/// `TracedAllocation`), or of block `a`, under the planner alignment
/// `alignment` (a power of two). A block of fixed size smaller than `alignment` takes its
/// size rounded up to a power of two, at least `min_block_alignment`: small
/// blocks then share aligned slots like a buddy allocator's (two 32-byte
/// blocks fill one 64-byte slot, where each used to take a whole one),
/// while every block of `alignment` bytes or more, and every block whose
/// size is only a hint, still starts at a multiple of `alignment`.
[[nodiscard]] inline std::int64_t block_alignment(std::int64_t bytes, bool fixed_size, std::int64_t alignment) noexcept {
  if (!fixed_size || bytes >= alignment || !std::has_single_bit(static_cast<std::uint64_t>(alignment)))
    return alignment;
  std::int64_t own = std::min(min_block_alignment, alignment);
  while (own < bytes) own *= 2;
  return own;
}
[[nodiscard]] inline std::int64_t block_alignment(const TracedAllocation& a, std::int64_t alignment) noexcept {
  return block_alignment(a.bytes, a.fixed_size, alignment);
}

/// Where one block of a trace lives: an arena and a byte offset into it.
struct BlockPlacement {
  /// Index into `Placement::arenas`.
  std::size_t arena = 0;
  std::int64_t offset = 0;

  friend bool operator==(const BlockPlacement&, const BlockPlacement&) = default;
};

/// One contiguous allocation that blocks are carved from.
struct ArenaExtent {
  std::int32_t device = 0;
  std::int64_t bytes = 0;

  friend bool operator==(const ArenaExtent&, const ArenaExtent&) = default;
};

/// A planner's answer for a trace: `blocks[i]` places
/// `trace.allocations[i]`.
struct Placement {
  std::vector<BlockPlacement> blocks;
  std::vector<ArenaExtent> arenas;

  /// The memory the placement needs: the sum of its arenas' sizes (all
  /// arenas are assumed to exist at once, which is what a planner's peak
  /// means), saturating at INT64_MAX.
  [[nodiscard]] std::int64_t total_bytes() const noexcept {
    std::int64_t total = 0;
    for (const ArenaExtent& a : arenas) total = total > INT64_MAX - a.bytes ? INT64_MAX : total + a.bytes;
    return total;
  }

  friend bool operator==(const Placement&, const Placement&) = default;
};

namespace detail {

inline std::string block_label(const AllocationTrace& trace, std::size_t i) {
  const std::string& n = trace.allocations[i].name;
  return "block " + std::to_string(i) + (n.empty() ? std::string() : " (" + n + ")");
}

}  // namespace detail

/// Why `trace` is not a trace planners accept, or nothing: every block
/// needs `bytes >= 0` and `end > begin`.
[[nodiscard]] inline std::optional<std::string> validate_trace(const AllocationTrace& trace) {
  for (std::size_t i = 0; i < trace.allocations.size(); ++i) {
    const TracedAllocation& a = trace.allocations[i];
    if (a.bytes < 0)
      return detail::block_label(trace, i) + " has a negative size of " + std::to_string(a.bytes) + " bytes";
    if (a.end <= a.begin)
      return detail::block_label(trace, i) + " has the empty live range [" + std::to_string(a.begin) + ", " +
             std::to_string(a.end) + "); a block must live for at least one time step";
  }
  return std::nullopt;
}

/// The first way in which `placement` is not a valid placement of `trace`
/// with offsets aligned as `block_alignment` says under the planner
/// alignment `alignment`, as one sentence, or nothing.
///
/// Checked in this order: the trace itself (`validate_trace`), the shape of
/// the placement (one entry per block, arena indices in range, arena sizes
/// not negative), then per block in trace order its arena's device, its
/// offset's alignment and sign, and that it ends within its arena; then,
/// sweeping time steps in order, that no two blocks of one arena share a
/// byte while both are live. Zero-byte blocks occupy no bytes, so they
/// never overlap anything (their offset must still be aligned and within
/// the arena). `alignment` must be positive (blocks take a smaller one only
/// when it is a power of two).
///
/// O(n log n): a block only needs comparing with its neighbours by offset
/// among the live blocks of its arena, since those never overlap each other
/// until the first violation.
[[nodiscard]] inline std::optional<std::string> check_placement(const AllocationTrace& trace,
                                                                const Placement& placement,
                                                                std::int64_t alignment = planner_alignment) {
  if (alignment <= 0) return "the alignment " + std::to_string(alignment) + " is not positive";
  if (auto bad = validate_trace(trace)) return "the trace is invalid: " + *bad;
  const auto& blocks = trace.allocations;
  if (placement.blocks.size() != blocks.size())
    return "the placement places " + std::to_string(placement.blocks.size()) + " blocks but the trace has " +
           std::to_string(blocks.size());
  for (std::size_t k = 0; k < placement.arenas.size(); ++k)
    if (placement.arenas[k].bytes < 0)
      return "arena " + std::to_string(k) + " has a negative size of " + std::to_string(placement.arenas[k].bytes) +
             " bytes";
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const BlockPlacement& at = placement.blocks[i];
    const TracedAllocation& a = blocks[i];
    if (at.arena >= placement.arenas.size())
      return detail::block_label(trace, i) + " is placed on arena " + std::to_string(at.arena) + ", but there are " +
             std::to_string(placement.arenas.size()) + " arenas";
    const ArenaExtent& arena = placement.arenas[at.arena];
    if (arena.device != a.device)
      return detail::block_label(trace, i) + " of device " + std::to_string(a.device) + " is placed on arena " +
             std::to_string(at.arena) + " of device " + std::to_string(arena.device);
    if (at.offset < 0) return detail::block_label(trace, i) + " has the negative offset " + std::to_string(at.offset);
    if (const std::int64_t own = block_alignment(a, alignment); at.offset % own != 0)
      return detail::block_label(trace, i) + " has the offset " + std::to_string(at.offset) +
             ", which is not a multiple of " + std::to_string(own);
    if (at.offset > arena.bytes || a.bytes > arena.bytes - at.offset)
      return detail::block_label(trace, i) + " occupies bytes [" + std::to_string(at.offset) + ", " +
             std::to_string(at.offset) + " + " + std::to_string(a.bytes) + ") but arena " + std::to_string(at.arena) +
             " has only " + std::to_string(arena.bytes) + " bytes";
  }
  // Sweep: at each time step first retire the blocks that ended, then add
  // the ones that begin, checking each against its neighbours by offset.
  std::vector<std::size_t> by_begin, by_end;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].bytes > 0) by_begin.push_back(i);
  by_end = by_begin;
  std::sort(by_begin.begin(), by_begin.end(), [&](std::size_t x, std::size_t y) {
    return blocks[x].begin != blocks[y].begin ? blocks[x].begin < blocks[y].begin : x < y;
  });
  std::sort(by_end.begin(), by_end.end(), [&](std::size_t x, std::size_t y) {
    return blocks[x].end != blocks[y].end ? blocks[x].end < blocks[y].end : x < y;
  });
  // Live blocks per arena, keyed by (offset, block).
  std::map<std::pair<std::size_t, std::int64_t>, std::size_t> live;
  const auto describe = [&](std::size_t i) {
    const BlockPlacement& at = placement.blocks[i];
    return detail::block_label(trace, i) + " (bytes [" + std::to_string(at.offset) + ", " +
           std::to_string(at.offset + blocks[i].bytes) + "), live [" + std::to_string(blocks[i].begin) + ", " +
           std::to_string(blocks[i].end) + "))";
  };
  std::size_t e = 0;
  for (const std::size_t i : by_begin) {
    const std::size_t now = blocks[i].begin;
    for (; e < by_end.size() && blocks[by_end[e]].end <= now; ++e) {
      const std::size_t j = by_end[e];
      const auto it = live.find({placement.blocks[j].arena, placement.blocks[j].offset});
      if (it != live.end() && it->second == j) live.erase(it);
    }
    const std::size_t arena = placement.blocks[i].arena;
    const std::int64_t lo = placement.blocks[i].offset;
    const std::int64_t hi = lo + blocks[i].bytes;
    auto next = live.lower_bound({arena, lo});
    const auto clash = [&](std::size_t j) {
      return describe(j) + " and " + describe(i) + " overlap in arena " + std::to_string(arena) + " at time step " +
             std::to_string(now) + ", when both are live";
    };
    if (next != live.end() && next->first.first == arena && next->first.second < hi) return clash(next->second);
    if (next != live.begin()) {
      const auto prev = std::prev(next);
      const std::size_t j = prev->second;
      if (prev->first.first == arena && prev->first.second + blocks[j].bytes > lo) return clash(j);
    }
    live.emplace(std::pair{arena, lo}, i);
  }
  return std::nullopt;
}

}  // namespace wrapir::pass
