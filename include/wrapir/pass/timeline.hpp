#pragma once
/// \file
/// The memory timeline of a planned program: where each block of storage
/// sits over time, as a trace and a placement that `io/timeline_svg.hpp`
/// draws (`wrapir plan --timeline`).
///
/// Blocks carved from a pool (`AllocFromPool`) sit in that pool's arena at
/// their offset, both evaluated at the size hints. Storage the program
/// allocates on its own (Allocate, extern results, workspaces, storage
/// handed on by Reuse lines: one block from its creation to its last use)
/// has no address in the program — the caching allocator picks one at run
/// time — so it is drawn in one more arena per device, "unpooled", at the
/// lowest offset that is free over its whole life (first fit in order of
/// creation): a picture of what a simple allocator would do, not a claim
/// about the real one. Lives are those of `pass/liveness.hpp`; only the
/// top-level body is drawn.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/trace.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::pass {

struct PlannedTimeline {
  AllocationTrace trace;
  Placement placement;
  /// The role of each block's buffer (`ir::buffer_role_name`), parallel to
  /// `trace.allocations`.
  std::vector<std::string_view> roles;
  /// Arenas `[0, pools)` are the program's pools, in table order; the rest
  /// hold unpooled storage, one per device.
  std::size_t pools = 0;
};

/// The timeline of `planned`'s body (see the file comment); a diagnostic
/// when the program cannot be traced or a pool's size or an offset does not
/// evaluate at the hints.
[[nodiscard]] inline Result<PlannedTimeline> planned_timeline(const ir::Program& planned,
                                                              const TraceOptions& options = {}) {
  Result<ProgramTrace> traced = trace_program(planned, options);
  if (!traced) return traced.error();
  ProgramTrace& pt = traced.value();
  HintEvaluator hints{planned, options};

  PlannedTimeline out;
  out.pools = planned.pools.size();
  for (const ir::PoolDecl& pool : planned.pools) {
    Result<std::int64_t> bytes = hints.value(pool.size_bytes);
    if (!bytes) return Diagnostic{"pool " + pool.name + ": its size does not evaluate at the hints: " + bytes.error().message};
    out.placement.arenas.push_back(ArenaExtent{device_key(pool.device), bytes.value()});
  }

  const std::size_t blocks = pt.trace.allocations.size();
  out.placement.blocks.assign(blocks, BlockPlacement{});
  out.roles.reserve(blocks);
  std::vector<std::size_t> unpooled;
  for (std::size_t i = 0; i < blocks; ++i) {
    const ir::BufferId b = pt.buffers[i];
    out.roles.push_back(ir::buffer_role_name(planned.buffer(b).role));
    const BufferLifetime& life = pt.liveness.lifetimes[i];
    const auto* carve = life.first_line < planned.body.size() ? std::get_if<ir::AllocFromPool>(&planned.body[life.first_line])
                                                             : nullptr;
    if (!carve || carve->buffer != b || carve->pool.index >= planned.pools.size()) {
      unpooled.push_back(i);
      continue;
    }
    Result<std::int64_t> offset = hints.value(carve->offset_bytes);
    if (!offset)
      return Diagnostic{"line " + std::to_string(life.first_line) + ": buffer " + planned.buffer(b).name +
                        ": its offset does not evaluate at the hints: " + offset.error().message};
    out.placement.blocks[i] = BlockPlacement{carve->pool.index, offset.value()};
  }

  // First fit for unpooled storage, per device, in order of creation.
  std::map<std::int32_t, std::vector<std::size_t>> by_device;
  for (std::size_t i : unpooled) by_device[pt.trace.allocations[i].device].push_back(i);
  for (auto& [device, members] : by_device) {
    const std::size_t arena = out.placement.arenas.size();
    std::int64_t top = 0;
    std::vector<std::size_t> live;  // placed blocks still alive, by offset
    for (std::size_t i : members) {
      const TracedAllocation& a = pt.trace.allocations[i];
      std::erase_if(live, [&](std::size_t j) { return pt.trace.allocations[j].end <= a.begin; });
      std::int64_t offset = 0;
      for (std::size_t j : live) {
        const BlockPlacement& p = out.placement.blocks[j];
        if (p.offset - offset >= a.bytes) break;  // the gap below j fits
        offset = std::max(offset, p.offset + pt.trace.allocations[j].bytes);
      }
      out.placement.blocks[i] = BlockPlacement{arena, offset};
      live.insert(std::upper_bound(live.begin(), live.end(), offset,
                                   [&](std::int64_t o, std::size_t j) { return o < out.placement.blocks[j].offset; }),
                  i);
      top = std::max(top, offset + a.bytes);
    }
    out.placement.arenas.push_back(ArenaExtent{device, top});
  }
  out.trace = std::move(pt.trace);
  return out;
}

}  // namespace wrapir::pass
