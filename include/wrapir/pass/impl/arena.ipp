#pragma once
/// \file
/// Definitions of <wrapir/pass/arena.hpp> (see <wrapir/detail/config.hpp>).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>
#include <wrapir/expr/query.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/detail/arena_packer.hpp>
#include <wrapir/pass/detail/arena_spill.hpp>
#include <wrapir/pass/detail/pool_lines.hpp>

namespace wrapir::pass {

WRAPIR_DECL ArenaPlan place_in_arenas(const AllocationTrace& trace, const ArenaOptions& options) {
  if (auto bad = validate_trace(trace)) throw std::invalid_argument("arena planner: " + *bad);
  const std::int64_t alignment = options.alignment;
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("arena planner: the alignment " + std::to_string(alignment) +
                                " is not a positive power of two");
  std::vector<ArenaOrder> orders = options.orders;
  if (orders.empty()) orders.assign(std::begin(all_arena_orders), std::end(all_arena_orders));
  if (!(options.stop_within >= 0) || !std::isfinite(options.stop_within))
    throw std::invalid_argument("arena planner: stop_within must be a finite non-negative fraction, not " +
                                std::to_string(options.stop_within));

  // Each device's blocks by trace index, counted first so that each list
  // is allocated once, exactly. 32 bits a block: a device's list becomes
  // its packer's map back to the trace, which lives through every packing.
  if (trace.allocations.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("arena planner: more than 2^32 - 1 blocks");
  std::map<std::int32_t, std::vector<std::uint32_t>> by_device;
  {
    std::map<std::int32_t, std::size_t> counts;
    for (const TracedAllocation& a : trace.allocations) ++counts[a.device];
    for (const auto& [device, count] : counts) by_device[device].reserve(count);
  }
  for (std::size_t i = 0; i < trace.allocations.size(); ++i)
    by_device[trace.allocations[i].device].push_back(static_cast<std::uint32_t>(i));

  ArenaPlan plan;
  for (auto& [device, members] : by_device) {
    const std::size_t arena = plan.placement.arenas.size();
    // The device's list, without its blocks of 0 bytes (which sit at offset
    // 0), maps the packer's blocks back to the trace.
    std::vector<std::uint32_t> trace_index = std::move(members);
    std::vector<std::uint32_t> zero_bytes;
    detail::ArenaPacker::Packing best;
    ArenaOrder best_order = orders.front();
    {  // the packer and its tables freed before the placement is made
      // Reserved exactly: at a million lines, doubling left up to half of it unused.
      std::vector<detail::ArenaPacker::Block> blocks;
      blocks.reserve(trace_index.size());
      std::size_t kept = 0;
      std::int64_t total = 0;
      for (const std::uint32_t i : trace_index) {
        const TracedAllocation& a = trace.allocations[i];
        if (a.bytes == 0) {
          zero_bytes.push_back(i);
          continue;
        }
        const std::int64_t own = block_alignment(a, alignment);
        const std::int64_t size = detail::align_up_checked(a.bytes, own, a);
        // A block lands at most `own - 1` bytes above the top of the block it
        // is placed on, so the sum with those gaps bounds every offset.
        if (total > std::numeric_limits<std::int64_t>::max() - size - (own - 1))
          throw std::invalid_argument("arena planner: the blocks of device " + std::to_string(device) +
                                      " need more than 2^63 bytes together");
        total += size + (own - 1);
        blocks.push_back({size, a.begin, a.end, 0, 0, own});
        trace_index[kept++] = i;  // never ahead of the loop's own position
      }
      trace_index.resize(kept);
      detail::ArenaPacker packer(blocks);
      std::vector<detail::ArenaPacker::Block>().swap(blocks);  // the packer keeps what it reads
      // What the packer reads of the trace again, rather than keep: the
      // steps when it orders the blocks, the raw sizes when it sizes an
      // arena. In the packer's order of the blocks, trace order.
      const auto steps_of = [&](std::uint32_t k) -> const TracedAllocation& {
        return trace.allocations[trace_index[k]];
      };
      const auto raw = [&](std::uint32_t k) { return trace.allocations[trace_index[k]].bytes; };
      detail::ArenaPacker::Packing candidate;
      bool have_best = false;
      std::vector<std::uint32_t> best_sequence;
      // Compared in floating point: the bound times a fraction cannot
      // overflow there, and the precision lost is far below the tolerance.
      const std::int64_t bound = packer.aligned_lower_bound();
      const auto good_enough = [&] {
        return static_cast<double>(best.arena) <= static_cast<double>(bound) * (1.0 + options.stop_within);
      };
      for (const ArenaOrder kind : orders) {
        if (have_best && good_enough()) break;
        std::size_t visits = 0;
        std::vector<std::uint32_t> order = packer.order(kind, steps_of);
        const std::size_t limit = have_best ? options.work_limit : std::numeric_limits<std::size_t>::max();
        const bool done = packer.pack(order, raw, limit, candidate, visits);
        plan.pair_visits += visits;
        if (!done) continue;
        ++plan.orders_completed;
        if (!have_best || candidate.arena < best.arena) {
          std::swap(best, candidate);
          best_sequence = std::move(order);
          best_order = kind;
          have_best = true;
        }
      }
      // Squeaky wheel: the blocks that end above the lower bound are the ones
      // the order served badly; move them to the front and pack again.
      for (std::size_t round = 0; round < options.improvement_rounds && best.arena > bound && !good_enough();
           ++round) {
        std::vector<std::uint32_t> order;
        order.reserve(best_sequence.size());
        for (const std::uint32_t i : best_sequence)
          if (best.offsets[i] + raw(i) > bound) order.push_back(i);
        for (const std::uint32_t i : best_sequence)
          if (best.offsets[i] + raw(i) <= bound) order.push_back(i);
        std::size_t visits = 0;
        const bool done = packer.pack(order, raw, options.work_limit, candidate, visits);
        plan.pair_visits += visits;
        if (!done) break;
        ++plan.improvement_rounds;
        if (candidate.arena < best.arena) {
          std::swap(best, candidate);
          best_sequence = std::move(order);
        } else if (order == best_sequence) {
          break;
        } else {
          best_sequence = std::move(order);  // keep squeaking from the new order, keep the best packing
        }
      }
    }
    // Made after the first device's packing, where the plan stage peaks.
    if (plan.placement.blocks.empty()) plan.placement.blocks.assign(trace.allocations.size(), BlockPlacement{});
    for (const std::uint32_t i : zero_bytes) plan.placement.blocks[i] = {arena, 0};
    for (std::size_t k = 0; k < trace_index.size(); ++k) plan.placement.blocks[trace_index[k]] = {arena, best.offsets[k]};
    plan.placement.arenas.push_back({device, best.arena});
    plan.chosen.push_back(best_order);
  }
  return plan;
}

namespace detail {

/// The symbols bound before `p`'s first Allocate line: inputs, those read
/// from an input's shape, and those the lines before it define. An arena is
/// created before its first block, and names its offsets there
/// (pass/symbolic_placement.hpp), so it places only blocks whose sizes read
/// no other symbol: a size read from a symbol the body defines later (an
/// unbacked one, say) stays a plain allocation where it is.
class EntrySymbols {
 public:
  explicit EntrySymbols(const ir::Program& p) {
    for (const ir::SymbolDecl& s : p.symbols)
      if (s.symbol && (s.origin == ir::SymbolOrigin::input || s.origin == ir::SymbolOrigin::input_shape))
        bound_.insert(s.symbol.node());
    for (const ir::Line& line : p.body) {
      if (std::holds_alternative<ir::Allocate>(line)) break;
      ir::for_each_effect(line, ir::effect::Handlers{
                                    [&](const ir::effect::SymbolDefined& e) {
                                      if (e.symbol && e.symbol.is_symbol()) bound_.insert(e.symbol.node());
                                    },
                                    [](const auto&) {},
                                });
    }
  }
  /// Whether `size` reads only such symbols.
  [[nodiscard]] bool reads_only_them(const expr::Expr& size) {
    if (size.is_integer()) return true;
    const auto [it, fresh] = checked_.try_emplace(size.node(), true);
    if (fresh)
      for (const expr::Expr& symbol : expr::free_symbols(size))
        if (!bound_.contains(symbol.node())) it->second = false;
    return it->second;
  }

 private:
  std::unordered_set<const expr::Node*> bound_;
  std::unordered_map<const expr::Node*, bool> checked_;
};

WRAPIR_DECL Result<ArenaScope> plan_arena_in(ir::Program& p, const ArenaOptions& options, HintEvaluator& hints) {
  ArenaScope scope;
  for (ir::Program& g : p.subgraphs) {
    HintEvaluator sub_hints{g, TraceOptions{}};
    Result<ArenaScope> sub = plan_arena_in(g, options, sub_hints);
    if (!sub) return Diagnostic{"subgraph " + g.name + ": " + sub.error().message};
    scope.arenas += sub.value().arenas;
  }
  // `trace_program`'s steps, without the names of the blocks not placed.
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  const Liveness& liveness = live.value();
  Result<std::vector<LiveSpan>> spans_or = spans_from(p, liveness, hints);
  if (!spans_or) return spans_or.error();
  std::vector<LiveSpan> spans = std::move(spans_or.value());
  scope.lower_bound = max_live_of(spans);
  // The blocks we place: storage created by Allocate. The tables below are
  // sized exactly (at a million lines, doubling left up to half of each
  // unused), and those the rewrite does not read are freed before it.
  constexpr std::size_t unplaced = std::numeric_limits<std::size_t>::max();
  std::size_t placed_count = 0;
  for (std::size_t i = 0; i < spans.size(); ++i)
    placed_count += liveness.lifetimes[i].origin == StorageOrigin::allocate ? 1 : 0;
  EntrySymbols entry{p};
  AllocationTrace trace;
  trace.steps = liveness.steps;
  trace.allocations.reserve(placed_count);
  std::vector<std::size_t> placed_of_block(spans.size(), unplaced);
  std::vector<std::size_t> block_of_placed;
  block_of_placed.reserve(placed_count);
  std::vector<expr::Expr> sizes;
  sizes.reserve(placed_count);
  StorageBytes storage_bytes;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const BufferLifetime& l = liveness.lifetimes[i];
    if (l.origin != StorageOrigin::allocate) continue;
    const ir::BufferDecl& d = p.buffer(l.buffer);
    Result<expr::Expr> size = storage_bytes.of(p, l.buffer, hints);
    if (!size) return Diagnostic{"buffer " + d.name + ": " + size.error().message};
    if (!entry.reads_only_them(size.value())) continue;
    sizes.push_back(size.value());
    const LiveSpan& s = spans[i];
    const std::int64_t bytes = s.bytes == 0 && !sizes.back().is_integer(0) ? 1 : s.bytes;
    placed_of_block[i] = block_of_placed.size();
    block_of_placed.push_back(i);
    trace.allocations.push_back(
        TracedAllocation{d.name, bytes, s.begin, s.end, s.device, s.is_output, sizes.back().is_integer()});
  }
  if (options.spill && !trace.allocations.empty()) {
    std::vector<LiveSpan> others;
    for (std::size_t i = 0; i < spans.size(); ++i)
      if (placed_of_block[i] == unplaced) others.push_back(spans[i]);
    const std::vector<bool> spill = blocks_to_spill(trace, others, options.alignment);
    if (std::find(spill.begin(), spill.end(), true) != spill.end()) {
      std::size_t kept = 0;
      for (std::size_t j = 0; j < spill.size(); ++j) {
        if (spill[j]) {
          placed_of_block[block_of_placed[j]] = unplaced;
          continue;
        }
        placed_of_block[block_of_placed[j]] = kept;
        block_of_placed[kept] = block_of_placed[j];
        sizes[kept] = std::move(sizes[j]);
        trace.allocations[kept] = std::move(trace.allocations[j]);
        ++kept;
      }
      block_of_placed.resize(kept);
      sizes.resize(kept);
      trace.allocations.resize(kept);
    }
  }
  std::vector<LiveSpan>().swap(spans);
  if (trace.allocations.empty()) return scope;
  // What the pools and the rewrite read of the liveness, kept compactly so
  // that the lifetimes (56 bytes a block) and the block tables are freed
  // before packing, where the plan stage peaks.
  struct PlacedBlock {
    ir::BufferId buffer;
    bool is_output;
    std::size_t last_line;
  };
  std::vector<PlacedBlock> placed_blocks;
  placed_blocks.reserve(block_of_placed.size());
  for (const std::size_t block : block_of_placed) {
    const BufferLifetime& l = liveness.lifetimes[block];
    placed_blocks.push_back({l.buffer, l.is_output, l.last_line});
  }
  // For each buffer of the table, the placed block that holds it (its own
  // or the one it views), or `none`: 32 bits a buffer, as place_in_arenas
  // takes fewer than 2^32 - 1 blocks.
  if (block_of_placed.size() >= std::numeric_limits<std::uint32_t>::max())
    return Diagnostic{"arena planner: more than 2^32 - 1 blocks"};
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> placed_of_buffer(liveness.storage_of.size(), none);
  for (std::size_t b = 0; b < placed_of_buffer.size(); ++b) {
    const std::size_t block = liveness.storage_of[b];
    if (block < placed_of_block.size() && placed_of_block[block] != unplaced)
      placed_of_buffer[b] = static_cast<std::uint32_t>(placed_of_block[block]);
  }
  std::vector<std::size_t>().swap(block_of_placed);
  std::vector<std::size_t>().swap(placed_of_block);
  live.value() = Liveness{};  // `liveness` is not read below
  // Names for the offsets (pass/symbolic_placement.hpp) and the arenas.
  std::unordered_set<std::string> names = names_with_prefix(p, options.name_prefix);
  std::size_t offset_counter = 0;
  const std::string offset_prefix = options.name_prefix + "_offset";
  const auto fresh_offset_name = [&] { return fresh_symbol_name(offset_prefix, offset_counter, p.ctx(), &names); };
  SymbolicPlacement symbolic;
  try {
    const ArenaPlan plan = place_in_arenas(trace, options);
    symbolic = symbolic_placement_of(trace, plan.placement, sizes, options.alignment, fresh_offset_name);
  } catch (const std::invalid_argument& e) {
    return Diagnostic{e.what()};
  } catch (const expr::Error& e) {
    return Diagnostic{std::string("an arena offset cannot be built: ") + e.what()};
  }
  std::vector<TracedAllocation>().swap(trace.allocations);
  std::vector<expr::Expr>().swap(sizes);
  // One pool per arena.
  const std::size_t arenas = symbolic.arena_bytes.size();
  std::size_t counter = 0;
  const std::size_t first_pool = p.pools.size();
  std::vector<std::size_t> last_use(arenas, 0);
  std::vector<bool> holds_output(arenas, false);
  std::vector<ir::Device> device(arenas);
  for (std::size_t j = 0; j < placed_blocks.size(); ++j) {
    const PlacedBlock& l = placed_blocks[j];
    const std::size_t k = symbolic.arena_of[j];
    device[k] = p.buffer(l.buffer).layout.device;
    last_use[k] = std::max(last_use[k], l.last_line);
    holds_output[k] = holds_output[k] || l.is_output;
  }
  for (std::size_t k = 0; k < arenas; ++k)
    p.pools.push_back(
        ir::PoolDecl{fresh_numbered_name(options.name_prefix, counter, names), device[k], symbolic.arena_bytes[k]});
  const auto placed = [&](ir::BufferId b) -> std::size_t {
    if (!p.contains(b) || b.index >= placed_of_buffer.size() || placed_of_buffer[b.index] == none) return unplaced;
    return placed_of_buffer[b.index];
  };
  const auto pool_of_arena = [&](std::size_t k) { return ir::PoolId{static_cast<std::uint32_t>(first_pool + k)}; };
  std::vector<std::vector<ir::Line>> before_create(symbolic.named.empty() ? 0 : p.pools.size());
  for (NamedOffset& n : symbolic.named) {
    Result<std::int64_t> at_hints = hints.define(n.symbol, n.value);
    if (!at_hints) return Diagnostic{"the arena offset " + std::string(n.symbol.name()) + ": " + at_hints.error().message};
    p.symbols.push_back(ir::SymbolDecl{n.symbol, ir::SymbolOrigin::computed, std::nullopt, {}, at_hints.value()});
    before_create[pool_of_arena(n.arena).index].push_back(ir::SymbolicCallArg{n.symbol, std::move(n.value)});
  }
  const std::vector<PoolRelease> releases = rewrite_into_pools(
      p,
      [&](ir::BufferId b) -> std::optional<PoolSlot> {
        // Only the line that creates a placed block carves it.
        const std::size_t j = placed(b);
        if (j == unplaced || placed_blocks[j].buffer != b) return std::nullopt;
        return PoolSlot{pool_of_arena(symbolic.arena_of[j]), symbolic.offsets[j]};
      },
      [&](ir::BufferId b) -> std::optional<ir::PoolId> {
        const std::size_t j = placed(b);
        if (j == unplaced) return std::nullopt;
        return pool_of_arena(symbolic.arena_of[j]);
      },
      [](const ir::Line&) {}, before_create);
  // The last DeallocFromPool of an arena releases it when no block of the
  // arena is used later and none is a program output.
  std::vector<const PoolRelease*> last(arenas, nullptr);
  for (const PoolRelease& r : releases) last[r.pool.index - first_pool] = &r;
  for (std::size_t k = 0; k < last.size(); ++k)
    if (last[k] && !holds_output[k] && last[k]->original_line >= last_use[k])
      std::get<ir::DeallocFromPool>(p.body[last[k]->body_index]).releases_pool = true;
  scope.arenas += arenas;
  return scope;
}

}  // namespace detail

WRAPIR_DECL Result<PlanResult> plan_arena(ir::Program&& program, const ArenaOptions& options) {
  if (auto bad = ir::check_name(options.name_prefix + "0", "arena name"))
    return Diagnostic{"the arena name prefix " + ir::quote_for_diagnostic(options.name_prefix) +
                      " is unusable: " + *bad};
  // The planned program has the original's buffer table, so one evaluator
  // serves the plan and its statistics.
  HintEvaluator hints{program, TraceOptions{}};
  Result<detail::ArenaScope> scope = detail::plan_arena_in(program, options, hints);
  if (!scope) return scope.error();
  Result<PlanStats> stats = detail::measure_against(scope.value().lower_bound, program, TraceOptions{}, hints);
  if (!stats) return stats.error();
  PlanResult result{std::move(program), stats.value()};
  result.stats.arenas = scope.value().arenas;
  return result;
}

}  // namespace wrapir::pass
