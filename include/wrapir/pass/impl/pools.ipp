#pragma once
/// \file
/// Definitions of <wrapir/pass/pools.hpp> (see <wrapir/detail/config.hpp>).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/memory_planning_line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/pass/detail/pool_lines.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/pools.hpp>

namespace wrapir::pass {

WRAPIR_DECL PoolPlan place_in_pools(const AllocationTrace& trace, PoolPolicy policy) {
  if (auto bad = validate_trace(trace)) throw std::invalid_argument("pool planner: " + *bad);
  std::vector<PoolBlock> blocks;
  blocks.reserve(trace.allocations.size());
  for (const TracedAllocation& a : trace.allocations)
    blocks.push_back(
        {a.bytes, static_cast<std::int64_t>(a.begin), static_cast<std::int64_t>(a.end), a.device, a.is_output});
  detail::PoolForest forest(blocks, policy);
  forest.allocate_all();
  detail::IntSizes sizes{&blocks};
  std::vector<std::int64_t> offsets;
  std::vector<std::size_t> pool_of;
  const std::vector<std::int64_t> pool_bytes = forest.finalize(sizes, offsets, pool_of);
  const std::vector<std::size_t> order = forest.pool_order();
  std::vector<std::size_t> arena_of_pool(order.size());
  PoolPlan plan;
  for (std::size_t a = 0; a < order.size(); ++a) {
    arena_of_pool[order[a]] = a;
    plan.placement.arenas.push_back({forest.pools()[order[a]].device, pool_bytes[order[a]]});
    plan.size_hints.push_back(forest.hint_of_pool(order[a]));
  }
  for (std::size_t i = 0; i < blocks.size(); ++i)
    plan.placement.blocks.push_back({arena_of_pool[pool_of[i]], offsets[i]});
  return plan;
}

namespace detail {

WRAPIR_DECL Result<void> plan_pools_in(ir::Program& p, const PoolOptions& options) {
  for (ir::Program& g : p.subgraphs)
    if (Result<void> planned = plan_pools_in(g, options); !planned)
      return Diagnostic{"subgraph " + g.name + ": " + planned.error().message};
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  const Liveness& liveness = live.value();

  // Time steps: runs of memory lines. `step_of_line[i]` is the run of a
  // memory line, or for another line the run before it (the segment it
  // executes in).
  std::vector<std::int64_t> step_of_line(p.body.size(), 0);
  std::int64_t step = 0;
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    const bool memory = ir::is_memory_planning_line(p.body[i]);
    if (memory && (i == 0 || !ir::is_memory_planning_line(p.body[i - 1]))) ++step;
    step_of_line[i] = step;
  }
  const std::int64_t final_step = step + 1;

  // Buffer groups.
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> group_of(p.buffers.size(), none);
  std::vector<ir::BufferId> group_first;
  for (const ir::Line& line : p.body) {
    if (const auto* a = std::get_if<ir::Allocate>(&line)) {
      if (!p.contains(a->buffer) || group_of[a->buffer.index] != none) continue;
      group_of[a->buffer.index] = group_first.size();
      group_first.push_back(a->buffer);
    } else if (const auto* r = std::get_if<ir::Reuse>(&line)) {
      if (p.contains(r->old_buffer) && p.contains(r->new_buffer) && group_of[r->old_buffer.index] != none)
        group_of[r->new_buffer.index] = group_of[r->old_buffer.index];
    }
  }
  if (group_first.empty()) return {};
  const std::vector<bool> is_output_buffer = program_output_buffers(p);

  std::vector<PoolBlock> blocks(group_first.size());
  std::vector<bool> used(group_first.size(), false);
  const auto touch = [&](std::size_t g, std::int64_t t) {
    PoolBlock& b = blocks[g];
    if (!used[g]) {
      b.begin = b.end = t;
      used[g] = true;
    } else {
      b.begin = std::min(b.begin, t);
      b.end = std::max(b.end, t);
    }
  };
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    const ir::Line& line = p.body[i];
    std::optional<ir::BufferId> b;
    if (const auto* a = std::get_if<ir::Allocate>(&line)) b = a->buffer;
    if (const auto* f = std::get_if<ir::FreeIfNotReused>(&line); f && !f->reused) b = f->buffer;
    if (const auto* f = std::get_if<ir::Free>(&line)) b = f->buffer;
    if (b && p.contains(*b) && group_of[b->index] != none) touch(group_of[b->index], step_of_line[i]);
  }
  // Safety: a group lives at least until the segment of its last use.
  for (const BufferLifetime& l : liveness.lifetimes) {
    const std::size_t g = l.buffer.index < group_of.size() ? group_of[l.buffer.index] : none;
    if (g == none || l.last_line >= p.body.size()) continue;
    const bool memory = ir::is_memory_planning_line(p.body[l.last_line]);
    touch(g, memory ? step_of_line[l.last_line] : step_of_line[l.last_line] + 1);
  }
  HintEvaluator hints{p, TraceOptions{.fallback_hint = options.fallback_hint, .hints = {}}};
  ExprSizes sizes{&p.ctx(), {}};
  std::vector<ir::Device> device_of_key;
  std::map<std::int32_t, ir::Device> devices;
  for (std::size_t g = 0; g < group_first.size(); ++g) {
    const ir::BufferDecl& d = p.buffer(group_first[g]);
    Result<std::int64_t> bytes = hints.bytes(d.layout);
    if (!bytes) return Diagnostic{"buffer " + d.name + ": " + bytes.error().message};
    try {
      sizes.block_bytes.push_back(storage_bytes_expr(d));
    } catch (const expr::Error& e) {
      return Diagnostic{"buffer " + d.name + ": its size in bytes cannot be built: " + e.what()};
    }
    blocks[g].size_hint = bytes.value();
    blocks[g].device = device_key(d.layout.device);
    devices.emplace(blocks[g].device, d.layout.device);
  }
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    if (group_of[b] != none && is_output_buffer[b]) blocks[group_of[b]].is_output = true;
  for (PoolBlock& b : blocks)
    if (b.is_output) b.end = std::max(b.end, final_step);

  PoolForest forest(blocks, options.policy);
  std::vector<expr::Expr> offsets;
  std::vector<std::size_t> pool_of;
  std::vector<expr::Expr> pool_bytes;
  try {
    forest.allocate_all();
    pool_bytes = forest.finalize(sizes, offsets, pool_of);
  } catch (const std::invalid_argument& e) {  // a size hint past 2^63
    return Diagnostic{e.what()};
  } catch (const expr::Error& e) {
    return Diagnostic{std::string("a pool size cannot be built: ") + e.what()};
  }
  std::unordered_set<std::string> names = names_with_prefix(p, options.name_prefix);
  std::size_t counter = 0;
  std::vector<ir::PoolId> pool_id(forest.pools().size());
  const std::size_t first_new_pool = p.pools.size();
  std::vector<std::size_t> forest_pool_of;  // by PoolId index - first_new_pool
  for (const std::size_t k : forest.pool_order()) {
    forest_pool_of.push_back(k);
    pool_id[k] = ir::PoolId{static_cast<std::uint32_t>(p.pools.size())};
    p.pools.push_back(ir::PoolDecl{fresh_numbered_name(options.name_prefix, counter, names),
                                   devices.at(forest.pools()[k].device), pool_bytes[k]});
  }

  // Rewrite: pool lines, PoolCreate before each pool's first use.
  const auto group = [&](ir::BufferId b) { return p.contains(b) ? group_of[b.index] : none; };
  const std::vector<PoolRelease> releases = rewrite_into_pools(
      p,
      [&](ir::BufferId b) -> std::optional<PoolSlot> {
        const std::size_t g = group(b);
        if (g == none) return std::nullopt;
        return PoolSlot{pool_id[pool_of[g]], offsets[g]};
      },
      [&](ir::BufferId b) -> std::optional<ir::PoolId> {
        const std::size_t g = group(b);
        if (g == none) return std::nullopt;
        return pool_id[pool_of[g]];
      },
      [&](ir::Line& line) {
        // The pool owns the memory: a Reuse hands on a name, not storage to delete.
        if (auto* r = std::get_if<ir::Reuse>(&line); r && group(r->old_buffer) != none) r->delete_old = false;
      });
  // The last DeallocFromPool of each pool releases it when every block of
  // the pool is dead by then.
  std::vector<bool> seen(forest.pools().size(), false);
  for (std::size_t d = releases.size(); d-- > 0;) {
    auto& dealloc = std::get<ir::DeallocFromPool>(p.body[releases[d].body_index]);
    const std::size_t forest_pool = forest_pool_of[dealloc.pool.index - first_new_pool];
    if (seen[forest_pool]) continue;
    seen[forest_pool] = true;
    const PoolLiveRanges& ranges = forest.ranges_of_pool(forest_pool);
    dealloc.releases_pool = !ranges.empty() && ranges.back().end <= step_of_line[releases[d].original_line];
  }
  return {};
}

}  // namespace detail

WRAPIR_DECL Result<PlanResult> plan_pools(ir::Program&& program, const PoolOptions& options) {
  if (auto bad = ir::check_name(options.name_prefix + "0", "pool name"))
    return Diagnostic{"the pool name prefix " + ir::quote_for_diagnostic(options.name_prefix) +
                      " is unusable: " + *bad};
  // The bound is the unplanned program's; the planned one keeps its buffer
  // table, so one evaluator serves both.
  HintEvaluator hints{program, TraceOptions{}};
  Result<std::int64_t> bound = detail::lower_bound_of(program, hints);
  if (Result<void> planned = detail::plan_pools_in(program, options); !planned) return std::move(planned).error();
  if (!bound) return bound.error();
  Result<PlanStats> stats = detail::measure_against(bound.value(), program, TraceOptions{}, hints);
  if (!stats) return stats.error();
  return PlanResult{std::move(program), stats.value()};
}

}  // namespace wrapir::pass
