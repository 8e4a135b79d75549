#pragma once
/// \file
/// Where the executor's host time goes, per phase of a call, counted in the
/// process (issue 14 §5): the GPU host has no profiler, and the null driver
/// cannot show what a real driver call does to the executor's own work.
///
/// Off by default and free when off: every `WRAPIR_PHASE_MARK(p)` is then
/// nothing. A build that defines `WRAPIR_EXECUTOR_PHASE_CLOCK=1` (every
/// translation unit alike) gets a per-thread clock: each mark reads the
/// time-stamp counter (`__rdtsc`, or `steady_clock` off x86) and adds the
/// ticks since the thread's previous mark to phase `p`. The phases are
/// therefore exclusive and sum to the wall time between the first and the
/// last mark: a mark closes the phase that just ran, it does not open one.
/// `bench/gpu/executor_overhead_bench.cpp` and
/// `bench/null_driver/executor_host_bench.cpp` read the totals
/// (`phase_clock::totals()`) and report nanoseconds (`ns_per_tick()`).
#include <array>
#include <cstddef>
#include <cstdint>

#if WRAPIR_EXECUTOR_PHASE_CLOCK
#include <chrono>
#if defined(__x86_64__) || defined(_M_X64)
#include <x86intrin.h>
#endif
#endif

namespace wrapir::phase_clock {

/// What ran since the previous mark.
enum class Phase : std::uint8_t {
  enter,          // Executor::run up to the frame: checks, the frame state taken
  bind,           // the inputs bound
  line_dispatch,  // the line loop and the visit, up to a handler's own work
  pack,           // a launch's arguments packed (FastLaunch)
  launcher,       // the Triton launcher: numels, grid, scratch, parameter array
  driver_launch,  // cuLaunchKernel itself
  after_launch,   // from cuLaunchKernel's return to the end of the line
  allocate,       // Allocate / Reuse / Reinterpret / views: the line's work
  free,           // Free / FreeIfNotReused / Del: the line's work
  extern_call,    // an extern line (arguments, the call)
  other_line,     // any other line kind
  outputs,        // the result vector built
  leave,          // the frame torn down and its state given back
  raw_other,      // the raw loop: everything but cuLaunchKernel
  count
};

inline constexpr std::array<const char*, static_cast<std::size_t>(Phase::count)> phase_names{
    "enter",    "bind", "line_dispatch", "pack",       "launcher", "driver_launch", "after_launch",
    "allocate", "free", "extern_call",   "other_line", "outputs",  "leave",         "raw_other"};

struct Totals {
  std::array<std::uint64_t, static_cast<std::size_t>(Phase::count)> ticks{};
  std::array<std::uint64_t, static_cast<std::size_t>(Phase::count)> marks{};
  std::uint64_t last = 0;
};

#if WRAPIR_EXECUTOR_PHASE_CLOCK
inline constexpr bool enabled = true;

[[nodiscard]] inline std::uint64_t now() noexcept {
#if defined(__x86_64__) || defined(_M_X64)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

/// Nanoseconds per tick, measured once against steady_clock (a 50 ms spin).
[[nodiscard]] inline double ns_per_tick() {
  static const double value = [] {
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t c0 = now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
    }
    const std::uint64_t c1 = now();
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    return c1 == c0 ? 1.0 : ns / static_cast<double>(c1 - c0);
  }();
  return value;
}

/// This thread's totals.
[[nodiscard]] inline Totals& totals() noexcept {
  thread_local Totals t;
  return t;
}

/// Starts a measured stretch: the next mark counts from here.
inline void start() noexcept { totals().last = now(); }

inline void mark(Phase p) noexcept {
  Totals& t = totals();
  const std::uint64_t n = now();
  t.ticks[static_cast<std::size_t>(p)] += n - t.last;
  ++t.marks[static_cast<std::size_t>(p)];
  t.last = n;
}

#define WRAPIR_PHASE_START() ::wrapir::phase_clock::start()
#define WRAPIR_PHASE_MARK(p) ::wrapir::phase_clock::mark(::wrapir::phase_clock::Phase::p)
#else
inline constexpr bool enabled = false;
#define WRAPIR_PHASE_START() ((void)0)
#define WRAPIR_PHASE_MARK(p) ((void)0)
#endif

}  // namespace wrapir::phase_clock
