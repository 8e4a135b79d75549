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

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
  std::map<std::int32_t, std::int64_t> live, peak;
  constexpr std::int64_t max = INT64_MAX;
  for (const Event& e : events) {
    std::int64_t& l = live[e.device];
    if (e.is_begin) {
      l = l > max - e.bytes ? max : l + e.bytes;
      std::int64_t& p = peak[e.device];
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

}  // namespace wrapir::pass
