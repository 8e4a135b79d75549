#pragma once
/// \file
/// What every memory planner returns (`PlanResult`: the planned program and
/// its `PlanStats`), and how the statistics are measured.
///
/// Two traces of a program matter here:
/// - the liveness trace (`trace_of`, pass/liveness.hpp): each block of
///   storage from its creation to its last use. Its max-live bytes are the
///   lower bound no placement beats; planners are measured against the
///   lower bound of the program they were given.
/// - the held trace (`held_trace`, below): storage as the program actually
///   holds it, from the line that creates it to the line that releases it.
///   A Reuse hands storage on (the old and new buffers' lives form one
///   entry), a pool counts its whole size from PoolCreate to the
///   DeallocFromPool that releases it (the regions carved from it are
///   entries of zero bytes), and storage that no line releases is held to the end
///   of the body. Its max-live bytes are the planned
///   program's peak.
///
/// Creating lines and their storage are those of pass/liveness.hpp; the
/// releasing lines are FreeIfNotReused (not reused), Free, WorkspaceFree,
/// CommBufferFree, and DeallocFromPool with `releases_pool` for pools. A
/// MultiOutput element is held by its own name and by its tuple: it is
/// released when both are freed. A Reinterpret view holds nothing (views
/// are never freed). A FreeIfNotReused marked reused releases nothing: the
/// Reuse that follows takes the storage.
///
/// Sizes are at the hints with the fallback of `TraceOptions`; devices are
/// separate memories, so peaks and lower bounds are per device and summed
/// (as `max_live_bytes` does). Only the top-level body is measured for the
/// peak and the bound; the counts cover subgraphs too.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/detail/arena_blocks.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/trace.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::pass {

/// Statistics of a planned program.
struct PlanStats {
  /// Max-live bytes of the planned program's held trace (its peak).
  std::int64_t peak_bytes = 0;
  /// Max-live bytes of the original program's liveness trace.
  std::int64_t lower_bound_bytes = 0;
  /// Lines of the planned program that create storage (Allocate,
  /// WorkspaceAllocate, CommBufferAllocate, PoolCreate, extern results,
  /// MultiOutput elements, Conditional/WhileLoop outputs), subgraphs
  /// included.
  std::size_t allocations = 0;
  /// Reuse lines of the planned program, subgraphs included.
  std::size_t reuses = 0;
  /// PoolCreate lines of the planned program, subgraphs included.
  std::size_t pools = 0;
  /// Pools that an arena planner made (one per device holding every
  /// planned buffer); set by that planner, 0 for the others.
  std::size_t arenas = 0;
  /// The sum of the pools' sizes at the hints, subgraphs included.
  std::int64_t pool_bytes = 0;

  friend bool operator==(const PlanStats&, const PlanStats&) = default;
};

/// A planner's result.
struct PlanResult {
  ir::Program program;
  PlanStats stats;
};

/// One held storage of `held_trace`, with the buffer or pool behind it.
struct HeldStorage {
  /// The buffer whose line created it; for a pool, none.
  std::optional<ir::BufferId> buffer{};
  std::optional<ir::PoolId> pool{};
};

/// The held trace of `p`'s body (see the file comment), with the buffer or
/// pool behind each entry in `owners` (parallel to `trace.allocations`).
struct HeldTrace {
  AllocationTrace trace;
  std::vector<HeldStorage> owners;
};

namespace detail {

/// `max_live_bytes` of the trace made of `spans`. When time is dense (the
/// last end within a few times the number of spans) and no device's bytes
/// add up past 2^63, a difference array per device gives the same sums as
/// the sweep over sorted events, without the sort, which was the larger
/// part of measuring a plan; otherwise it is that sweep. (Live bytes peak
/// after the begins of some step, and between steps they only fall, so the
/// largest prefix sum over all steps is the sweep's peak; without overflow
/// no sum saturates. Every partial sum of a device's array, and every live
/// sum, lies between minus and plus that device's total, which was checked
/// to fit, so none of them overflows.)
/// Spans are `LiveSpan`s or the arena path's `ArenaBlock`s.
template <class Span>
[[nodiscard]] std::int64_t max_live_of_spans(std::span<const Span> spans) {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int32_t> devices;
  std::vector<std::int64_t> totals;
  std::size_t last_end = 0;
  bool dense = true;
  for (const Span& s : spans) {
    if (s.end <= s.begin || s.bytes <= 0) continue;
    const auto d = static_cast<std::size_t>(std::find(devices.begin(), devices.end(), s.device) - devices.begin());
    if (d == devices.size()) {
      devices.push_back(s.device);
      totals.push_back(0);
    }
    if (totals[d] > max - s.bytes) {
      dense = false;
      break;
    }
    totals[d] += s.bytes;
    last_end = std::max<std::size_t>(last_end, s.end);
  }
  // One array per device: bounded like the time, or it is the sweep.
  dense = dense && last_end < (4 * spans.size() + 1024) / std::max<std::size_t>(devices.size(), 1);
  if (!dense) {
    AllocationTrace trace;
    trace.allocations.reserve(spans.size());
    for (const Span& s : spans)
      trace.allocations.push_back(TracedAllocation{{}, s.bytes, s.begin, s.end, s.device, s.is_output});
    return max_live_bytes(trace);
  }
  const std::size_t width = last_end + 1;
  std::vector<std::int64_t> delta(devices.size() * width, 0);
  for (const Span& s : spans) {
    if (s.end <= s.begin || s.bytes <= 0) continue;
    const auto d = static_cast<std::size_t>(std::find(devices.begin(), devices.end(), s.device) - devices.begin());
    delta[d * width + s.begin] += s.bytes;
    delta[d * width + s.end] -= s.bytes;
  }
  std::int64_t total = 0;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    std::int64_t live = 0, peak = 0;
    for (std::size_t t = d * width; t < (d + 1) * width; ++t) peak = std::max(peak, live += delta[t]);
    total = total > max - peak ? max : total + peak;
  }
  return total;
}
[[nodiscard]] inline std::int64_t max_live_of(std::span<const LiveSpan> spans) { return max_live_of_spans(spans); }
[[nodiscard]] inline std::int64_t max_live_of_blocks(std::span<const ArenaBlock> blocks) {
  return max_live_of_spans(blocks);
}

/// `held_trace_from` without names: `spans[u]` is block `u` of the
/// liveness, and the entries after the blocks are the pools `pools` lists.
struct HeldSpans {
  std::vector<LiveSpan> spans;
  std::vector<ir::PoolId> pools;
};

/// The storage units of `p`'s held trace, whose liveness is `l`: one per
/// block of `l`, then one per pool a line creates. Each unit's end, and for
/// the pools, each one's unit (or `Liveness::no_storage`) and each pool
/// unit's begin; a block's begin is its first line.
struct HeldUnits {
  std::vector<std::size_t> end;
  std::vector<std::size_t> pool_unit;
  std::vector<std::size_t> pool_begin;
};

[[nodiscard]] inline HeldUnits held_units_of(const ir::Program& p, const Liveness& l) {
  constexpr std::size_t none = Liveness::no_storage;
  // `holders` counts the names holding a unit; `end` stays `steps` until
  // the last one releases.
  const std::size_t blocks = l.lifetimes.size();
  HeldUnits out;
  out.pool_unit.assign(p.pools.size(), none);
  // Reserved for every pool too: grown by doubling, both were twice the
  // blocks at a million lines.
  std::vector<std::size_t>& end = out.end;
  std::vector<std::uint8_t> holders;
  holders.reserve(blocks + p.pools.size());
  for (const BufferLifetime& b : l.lifetimes) holders.push_back(b.origin == StorageOrigin::multi_output_element ? 2 : 1);
  end.reserve(blocks + p.pools.size());
  end.assign(blocks, l.steps);
  // The unit each buffer name holds now (a Reuse moves it).
  std::vector<std::size_t> held(p.buffers.size(), none);
  // Sized at the first MultiOutput, as in `liveness_of`.
  std::vector<std::vector<std::size_t>> tuple_elements;
  for (std::size_t i = 0; i < blocks; ++i) held[l.lifetimes[i].buffer.index] = i;

  auto release_unit = [&](std::size_t u, std::size_t line) {
    if (u == none || holders[u] == 0) return;
    if (--holders[u] == 0) end[u] = line + 1;
  };
  auto release = [&](ir::BufferId b, std::size_t line) {
    if (!p.contains(b)) return;
    release_unit(held[b.index], line);
    held[b.index] = none;
    if (tuple_elements.empty()) return;
    for (const std::size_t u : tuple_elements[b.index]) release_unit(u, line);
    tuple_elements[b.index].clear();
  };

  namespace fx = ir::effect;
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    ir::for_each_effect(p.body[i], fx::Handlers{
        [&](const fx::Selected& e) {
          if (p.contains(e.tuple) && p.contains(e.element) && l.storage_of[e.element.index] != none &&
              l.lifetimes[l.storage_of[e.element.index]].buffer == e.element) {
            if (tuple_elements.empty()) tuple_elements.resize(p.buffers.size());
            tuple_elements[e.tuple.index].push_back(l.storage_of[e.element.index]);
          }
        },
        [&](const fx::Reused& e) {
          if (p.contains(e.old_buffer) && p.contains(e.new_buffer)) {
            held[e.new_buffer.index] = held[e.old_buffer.index];
            held[e.old_buffer.index] = none;
          }
        },
        // Offered storage passes to its Reuse; a pool region's memory is its
        // pool's, held until the pool is released.
        [&](const fx::Released& e) {
          if (!e.offered && e.how != ir::Release::pool_dealloc) release(e.buffer, i);
        },
        [&](const fx::PoolCreated& e) {
          if (p.contains(e.pool) && out.pool_unit[e.pool.index] == none) {
            out.pool_unit[e.pool.index] = end.size();
            out.pool_begin.push_back(i);
            end.push_back(l.steps);
            holders.push_back(1);
          }
        },
        [&](const fx::PoolReturned& e) {
          if (e.releases_pool && p.contains(e.pool)) release_unit(out.pool_unit[e.pool.index], i);
        },
        [](const auto&) {},
    });
  }
  return out;
}

/// The spans of `units` (`held_units_of(p, l)`), with sizes from `hints`
/// or, when not empty, `known_blocks` (see `held_spans_from`): `LiveSpan`s,
/// or the arena path's 24-byte `ArenaBlock`s when every step fits their
/// 32 bits. `pools`, when given, gets the pool of each unit after the
/// blocks.
template <class Span>
[[nodiscard]] Result<std::vector<Span>> held_spans_of(const ir::Program& p, const Liveness& l, HintEvaluator& hints,
                                                      const HeldUnits& units, std::span<const LiveSpan> known_blocks,
                                                      std::vector<ir::PoolId>* pools) {
  using Step = decltype(Span::begin);
  const std::size_t blocks = l.lifetimes.size();
  std::vector<Span> spans;
  spans.reserve(units.end.size());
  for (std::size_t u = 0; u < blocks; ++u) {
    const BufferLifetime& b = l.lifetimes[u];
    std::int64_t bytes = 0;
    std::int32_t device = 0;
    if (!known_blocks.empty()) {
      bytes = known_blocks[u].bytes;
      device = known_blocks[u].device;
    } else {
      Result<std::int64_t> at_hints = hints.buffer_bytes(p, b.buffer);
      if (!at_hints)
        return Diagnostic{"buffer " + p.buffer(b.buffer).name + ": " +
                          at_hints.error().message};
      bytes = at_hints.value();
      device = device_key(p.buffer(b.buffer).layout.device);
    }
    // A use after the release (a malformed program) still needs the memory.
    const std::size_t e = std::max(units.end[u], b.last_line + 1);
    // A region carved from a pool is memory the pool already holds: zero
    // bytes here, kept so that entry u stays block u of the liveness.
    const std::int64_t held_bytes = b.origin == StorageOrigin::pool ? 0 : bytes;
    Span span{};
    span.begin = static_cast<Step>(b.first_line);
    span.end = static_cast<Step>(e);
    span.bytes = held_bytes;
    span.device = device;
    span.is_output = b.is_output;
    spans.push_back(span);
  }
  for (std::size_t q = 0; q < p.pools.size(); ++q) {
    const std::size_t u = units.pool_unit[q];
    if (u == Liveness::no_storage) continue;
    const ir::PoolDecl& pool = p.pools[q];
    const std::size_t begin = units.pool_begin[u - blocks];
    Result<std::int64_t> bytes = hints.value(pool.size_bytes);
    if (!bytes || bytes.value() < 0)
      return Diagnostic{"line " + std::to_string(begin) + ": pool " + pool.name +
                        ": its size does not evaluate to a non-negative number of bytes at the hints" +
                        (bytes ? std::string() : ": " + bytes.error().message)};
    Span span{};
    span.begin = static_cast<Step>(begin);
    span.end = static_cast<Step>(units.end[u]);
    span.bytes = bytes.value();
    span.device = device_key(pool.device);
    span.is_output = false;
    spans.push_back(span);
    if (pools) pools->push_back(ir::PoolId{static_cast<std::uint32_t>(q)});
  }
  return spans;
}

/// The held trace of `p`, whose liveness is `l`, with sizes from `hints`,
/// without names. `known_blocks`, when not empty, is `spans_from(p, l,
/// hints)`: the blocks' bytes and devices are taken from there rather than
/// read from the buffer table again. A diagnostic when it is not one entry
/// per block of `l`.
[[nodiscard]] inline Result<HeldSpans> held_spans_from(const ir::Program& p, const Liveness& l, HintEvaluator& hints,
                                                       std::span<const LiveSpan> known_blocks = {}) {
  if (!known_blocks.empty() && known_blocks.size() != l.lifetimes.size())
    return Diagnostic{"the held trace: " + std::to_string(known_blocks.size()) +
                      " known block sizes were given for a liveness of " + std::to_string(l.lifetimes.size()) +
                      " blocks; they must be spans_from of the same liveness"};
  HeldSpans out;
  Result<std::vector<LiveSpan>> spans = held_spans_of<LiveSpan>(p, l, hints, held_units_of(p, l), known_blocks, &out.pools);
  if (!spans) return spans.error();
  out.spans = std::move(spans).value();
  return out;
}

/// The held trace of `p`, whose liveness is `l`, with sizes from `hints`.
[[nodiscard]] inline Result<HeldTrace> held_trace_from(const ir::Program& p, const Liveness& l,
                                                       HintEvaluator& hints) {
  Result<HeldSpans> held = held_spans_from(p, l, hints);
  if (!held) return held.error();
  const std::vector<LiveSpan>& spans = held.value().spans;
  HeldTrace out;
  out.trace.steps = l.steps;
  out.trace.allocations.reserve(spans.size());
  out.owners.reserve(spans.size());
  const std::size_t blocks = l.lifetimes.size();
  for (std::size_t u = 0; u < spans.size(); ++u) {
    const LiveSpan& s = spans[u];
    const bool block = u < blocks;
    const ir::PoolId pool = block ? ir::PoolId{} : held.value().pools[u - blocks];
    out.trace.allocations.push_back(TracedAllocation{block ? p.buffer(l.lifetimes[u].buffer).name : p.pool(pool).name,
                                                     s.bytes, s.begin, s.end, s.device, s.is_output});
    out.owners.push_back(block ? HeldStorage{l.lifetimes[u].buffer, std::nullopt} : HeldStorage{std::nullopt, pool});
  }
  return out;
}

}  // namespace detail

[[nodiscard]] inline Result<HeldTrace> held_trace(const ir::Program& p, const TraceOptions& options = {}) {
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  HintEvaluator hints{p, options};
  return detail::held_trace_from(p, live.value(), hints);
}

namespace detail {

/// Adds the line counts of `p` and its subgraphs to `s`.
inline void count_plan_lines(const ir::Program& p, const expr::Bindings& inherited, std::int64_t fallback,
                             PlanStats& s) {
  TraceOptions o;
  o.fallback_hint = fallback;
  o.hints = inherited;
  HintEvaluator hints{p, o};
  namespace fx = ir::effect;
  for (const ir::Line& line : p.body) {
    ir::for_each_effect(line, fx::Handlers{
        // A multi-output tuple holds no storage (its elements do).
        [&](const fx::Allocated& e) {
          if (e.storage == ir::Storage::extern_result && (!p.contains(e.buffer) || p.buffer(e.buffer).multi_output))
            return;
          ++s.allocations;
        },
        [&](const fx::Selected&) { ++s.allocations; },
        [&](const fx::PoolCreated& e) {
          ++s.allocations;
          ++s.pools;
          if (p.contains(e.pool))
            if (Result<std::int64_t> v = hints.value(p.pool(e.pool).size_bytes); v && v.value() > 0)
              s.pool_bytes = s.pool_bytes > std::numeric_limits<std::int64_t>::max() - v.value()
                                 ? std::numeric_limits<std::int64_t>::max()
                                 : s.pool_bytes + v.value();
        },
        [&](const fx::Reused&) { ++s.reuses; },
        [](const auto&) {},
    });
  }
  for (const ir::Program& g : p.subgraphs) count_plan_lines(g, hints.bindings(), fallback, s);
}

/// The max-live bound of `original`'s body (`PlanStats::lower_bound_bytes`),
/// sizes from `hints`; a diagnostic says it is about the original program.
[[nodiscard]] inline Result<std::int64_t> lower_bound_of(const ir::Program& original, HintEvaluator& hints) {
  Result<Liveness> live = liveness_of(original);
  if (!live) return Diagnostic{"the original program: " + live.error().message};
  Result<std::vector<LiveSpan>> spans = spans_from(original, live.value(), hints);
  if (!spans) return Diagnostic{"the original program: " + spans.error().message};
  return max_live_of(spans.value());
}

/// The statistics of `planned` with a lower bound already known; `hints`
/// evaluates sizes of `planned`'s buffer table.
[[nodiscard]] inline Result<PlanStats> measure_against(std::int64_t lower_bound, const ir::Program& planned,
                                                       const TraceOptions& options, HintEvaluator& hints) {
  PlanStats s;
  Result<Liveness> live = liveness_of(planned);
  if (!live) return Diagnostic{"the planned program: " + live.error().message};
  // The held spans as 24-byte `ArenaBlock`s where the steps fit them, made
  // after the units' tables are freed and freed before the peak is swept:
  // at a million lines this was the plan stage's peak (pass/arena.hpp).
  if (live.value().steps <= arena_step_limit) {
    Result<std::vector<ArenaBlock>> held = [&] {
      const HeldUnits units = held_units_of(planned, live.value());
      return held_spans_of<ArenaBlock>(planned, live.value(), hints, units, {}, nullptr);
    }();
    if (!held) return Diagnostic{"the planned program: " + held.error().message};
    live.value() = Liveness{};
    s.peak_bytes = max_live_of_blocks(held.value());
  } else {
    Result<HeldSpans> held = held_spans_from(planned, live.value(), hints);
    if (!held) return Diagnostic{"the planned program: " + held.error().message};
    s.peak_bytes = max_live_of(held.value().spans);
  }
  s.lower_bound_bytes = lower_bound;
  count_plan_lines(planned, options.hints, options.fallback_hint, s);
  return s;
}

}  // namespace detail

/// The statistics of `planned`, a plan of `original` (see the file
/// comment). A diagnostic when either program's storage cannot be traced.
[[nodiscard]] inline Result<PlanStats> measure_plan(const ir::Program& original, const ir::Program& planned,
                                                    const TraceOptions& options = {}) {
  HintEvaluator original_hints{original, options};
  Result<std::int64_t> bound = detail::lower_bound_of(original, original_hints);
  if (!bound) return bound.error();
  HintEvaluator hints{planned, options};
  return detail::measure_against(bound.value(), planned, options, hints);
}

}  // namespace wrapir::pass
