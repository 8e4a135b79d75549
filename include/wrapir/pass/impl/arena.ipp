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

namespace detail {

/// One device's packing: the best one, its order, and the work done.
struct DevicePacking {
  ArenaPacking best;
  ArenaOrder order = ArenaOrder::size;
  std::size_t orders_completed = 0, improvement_rounds = 0, pair_visits = 0;
};

/// Packs the `count` blocks `block(k)` (`PackerBlock`s; `raw(k)` their sizes
/// before rounding, `steps_of(k)` anything with their `begin` and `end`) in
/// `orders`, then in repacking rounds, with a `Packer`; false when the
/// packer's ranges were outgrown (`BasicArenaPacker`), `out` then partly
/// written.
template <class Packer, class BlockOf, class StepsOf, class RawOf>
bool pack_device(std::size_t count, BlockOf&& block, StepsOf&& steps_of, RawOf&& raw,
                 const std::vector<ArenaOrder>& orders, const ArenaOptions& options, DevicePacking& out) {
  Packer packer(count, block);
  ArenaPacking& best = out.best;
  ArenaPacking candidate;
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
    if (packer.outgrew_ranges()) return false;
    out.pair_visits += visits;
    if (!done) continue;
    ++out.orders_completed;
    if (!have_best || candidate.arena < best.arena) {
      std::swap(best, candidate);
      best_sequence = std::move(order);
      out.order = kind;
      have_best = true;
    }
  }
  // Squeaky wheel: the blocks that end above the lower bound are the ones
  // the order served badly; move them to the front and pack again.
  for (std::size_t round = 0; round < options.improvement_rounds && best.arena > bound && !good_enough(); ++round) {
    std::vector<std::uint32_t> order;
    order.reserve(best_sequence.size());
    for (const std::uint32_t i : best_sequence)
      if (best.offsets[i] + raw(i) > bound) order.push_back(i);
    for (const std::uint32_t i : best_sequence)
      if (best.offsets[i] + raw(i) <= bound) order.push_back(i);
    std::size_t visits = 0;
    const bool done = packer.pack(order, raw, options.work_limit, candidate, visits);
    if (packer.outgrew_ranges()) return false;
    out.pair_visits += visits;
    if (!done) break;
    ++out.improvement_rounds;
    if (candidate.arena < best.arena) {
      std::swap(best, candidate);
      best_sequence = std::move(order);
    } else if (order == best_sequence) {
      break;
    } else {
      best_sequence = std::move(order);  // keep squeaking from the new order, keep the best packing
    }
  }
  return true;
}

WRAPIR_DECL ArenaPlan place_blocks(std::span<const ArenaBlock> blocks, const ArenaOptions& options,
                                   const BlockNamer& block_name) {
  if (auto bad = validate_arena_blocks(blocks, block_name)) throw std::invalid_argument("arena planner: " + *bad);
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
  if (blocks.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("arena planner: more than 2^32 - 1 blocks");
  std::map<std::int32_t, std::vector<std::uint32_t>> by_device;
  {
    std::map<std::int32_t, std::size_t> counts;
    for (const ArenaBlock& a : blocks) ++counts[a.device];
    for (const auto& [device, count] : counts) by_device[device].reserve(count);
  }
  for (std::size_t i = 0; i < blocks.size(); ++i)
    by_device[blocks[i].device].push_back(static_cast<std::uint32_t>(i));

  ArenaPlan plan;
  for (auto& [device, members] : by_device) {
    const std::size_t arena = plan.placement.arenas.size();
    // The device's list, without its blocks of 0 bytes (which sit at offset
    // 0), maps the packer's blocks back to the trace.
    std::vector<std::uint32_t> trace_index = std::move(members);
    std::vector<std::uint32_t> zero_bytes;
    std::size_t kept = 0;
    std::int64_t total = 0;
    for (const std::uint32_t i : trace_index) {
      const ArenaBlock& a = blocks[i];
      if (a.bytes == 0) {
        zero_bytes.push_back(i);
        continue;
      }
      const std::int64_t own = block_alignment(a, alignment);
      const std::int64_t size = align_up_checked(a.bytes, own, block_name, i);
      // A block lands at most `own - 1` bytes above the top of the block it
      // is placed on, so the sum with those gaps bounds every offset.
      if (total > std::numeric_limits<std::int64_t>::max() - size - (own - 1))
        throw std::invalid_argument("arena planner: the blocks of device " + std::to_string(device) +
                                    " need more than 2^63 bytes together");
      total += size + (own - 1);
      trace_index[kept++] = i;  // never ahead of the loop's own position
    }
    trace_index.resize(kept);
    // A device that holds every block, none of 0 bytes (one device, the
    // common case), needs no map: its packer's blocks are the trace's.
    const bool all_blocks = kept == blocks.size();
    if (all_blocks) std::vector<std::uint32_t>().swap(trace_index);
    const auto index = [&](std::size_t k) -> std::size_t { return all_blocks ? k : trace_index[k]; };
    // What the packer reads of the trace, rather than keep: each block's
    // rounded size and alignment when it is made, the steps when it orders
    // the blocks, the raw sizes when it sizes an arena. In the packer's
    // order of the blocks, trace order.
    const auto block = [&](std::size_t k) {
      const ArenaBlock& a = blocks[index(k)];
      const std::int64_t own = block_alignment(a, alignment);
      return PackerBlock{(a.bytes + own - 1) & -own, a.begin, a.end, 0, 0, own};
    };
    const auto steps_of = [&](std::uint32_t k) -> const ArenaBlock& { return blocks[index(k)]; };
    const auto raw = [&](std::uint32_t k) { return blocks[index(k)].bytes; };
    // 32-bit ranges first; a device whose packing outgrows them (tens of
    // GiB) is packed again with 64-bit ones, with the same result.
    DevicePacking packed;
    packed.order = orders.front();
    if (!pack_device<NarrowArenaPacker>(kept, block, steps_of, raw, orders, options, packed)) {
      packed = DevicePacking{};
      packed.order = orders.front();
      pack_device<ArenaPacker>(kept, block, steps_of, raw, orders, options, packed);
    }
    plan.pair_visits += packed.pair_visits;
    plan.orders_completed += packed.orders_completed;
    plan.improvement_rounds += packed.improvement_rounds;
    // Made after the first device's packing, where the plan stage peaks.
    if (plan.placement.blocks.empty()) plan.placement.blocks.assign(blocks.size(), BlockPlacement{});
    for (const std::uint32_t i : zero_bytes) plan.placement.blocks[i] = {arena, 0};
    for (std::size_t k = 0; k < kept; ++k) plan.placement.blocks[index(k)] = {arena, packed.best.offsets[k]};
    plan.placement.arenas.push_back({device, packed.best.arena});
    plan.chosen.push_back(packed.order);
  }
  return plan;
}

}  // namespace detail

WRAPIR_DECL ArenaPlan place_in_arenas(const AllocationTrace& trace, const ArenaOptions& options) {
  if (auto bad = validate_trace(trace)) throw std::invalid_argument("arena planner: " + *bad);
  const std::vector<detail::ArenaBlock> blocks = detail::arena_blocks_of(trace, "arena planner");
  return detail::place_blocks(blocks, options, detail::names_of(trace));
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

WRAPIR_DECL Result<ArenaScope> plan_arena_in(ir::Program& p, const ArenaOptions& options, HintEvaluator& hints,
                                             OffsetNames& offset_names) {
  ArenaScope scope;
  for (ir::Program& g : p.subgraphs) {
    HintEvaluator sub_hints{g, TraceOptions{}};
    Result<ArenaScope> sub = plan_arena_in(g, options, sub_hints, offset_names);
    if (!sub) return Diagnostic{"subgraph " + g.name + ": " + sub.error().message};
    scope.arenas += sub.value().arenas;
  }
  Result<Liveness> live = liveness_of(p);
  if (!live) return live.error();
  const Liveness& liveness = live.value();
  const std::size_t steps = liveness.steps;
  if (steps > arena_step_limit)
    return Diagnostic{"arena planner: the body has " + std::to_string(steps) +
                      " lines; the arena planner numbers steps in 32 bits, up to 2^32 - 1"};
  const std::size_t count = liveness.lifetimes.size();
  if (count >= std::numeric_limits<std::uint32_t>::max())
    return Diagnostic{"arena planner: more than 2^32 - 1 blocks"};
  // Every block's span at the hints (`trace_program`'s, without names: the
  // arena path's trace, pass/detail/arena_blocks.hpp, which a diagnostic
  // names from the buffer table). The tables below are sized exactly (at a
  // million lines, doubling left up to half of each unused), and only what
  // packing reads lives through it.
  std::vector<ArenaBlock> blocks;
  blocks.reserve(count);
  {
    // The first size of a buffer reads its layout's sizes and strides: in
    // a large program two cache misses per block that the loop waited on;
    // asked for some blocks ahead, they overlap.
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < count; ++i) {
      if (i + ahead < count) prefetch_layout(p.buffer(liveness.lifetimes[i + ahead].buffer).layout);
      const BufferLifetime& l = liveness.lifetimes[i];
      Result<std::int64_t> bytes = hints.buffer_bytes(p, l.buffer);
      if (!bytes)
        return Diagnostic{"buffer " + p.buffer(l.buffer).name + ": " +
                          bytes.error().message};
      blocks.push_back(ArenaBlock{bytes.value(), static_cast<std::uint32_t>(l.first_line),
                                  static_cast<std::uint32_t>(l.last_line + 1), device_key(p.buffer(l.buffer).layout.device),
                                  l.is_output, true});
    }
  }
  // The blocks we place, storage created by Allocate, moved to the front
  // in order (the others after them, for the spill), each with its buffer;
  // for each buffer of the table, the placed block that holds it (its own
  // or the one it views), or `none`. A placed block's size expression is
  // made again after packing, rather than kept through it.
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::size_t placed = 0;
  std::vector<ir::BufferId> placed_buffers;
  std::vector<std::uint32_t> placed_of_buffer(liveness.storage_of.size(), none);
  {
    std::size_t allocated = 0;
    for (const BufferLifetime& l : liveness.lifetimes) allocated += l.origin == StorageOrigin::allocate ? 1 : 0;
    placed_buffers.reserve(allocated);
    EntrySymbols entry{p};
    StorageBytes storage_bytes;
    for (std::size_t i = 0; i < count; ++i) {
      const BufferLifetime& l = liveness.lifetimes[i];
      if (l.origin != StorageOrigin::allocate) continue;
      Result<expr::Expr> size = storage_bytes.of(p, l.buffer, hints);
      if (!size) return Diagnostic{"buffer " + p.buffer(l.buffer).name + ": " + size.error().message};
      if (!entry.reads_only_them(size.value())) continue;
      // Swaps touch only entries up to `i`, so `blocks[i]` is still block i.
      ArenaBlock& b = blocks[i];
      b.fixed_size = size.value().is_integer();
      std::swap(blocks[placed], b);
      if (l.buffer.index < placed_of_buffer.size()) placed_of_buffer[l.buffer.index] = static_cast<std::uint32_t>(placed);
      placed_buffers.push_back(l.buffer);
      ++placed;
    }
    for (std::size_t b = 0; b < placed_of_buffer.size(); ++b) {
      const std::size_t block = liveness.storage_of[b];
      if (block < count && liveness.lifetimes[block].buffer.index < placed_of_buffer.size())
        placed_of_buffer[b] = placed_of_buffer[liveness.lifetimes[block].buffer.index];
    }
  }
  live.value() = Liveness{};  // `liveness` is not read below
  // The bound over every block at the hints, before a block of 0 bytes
  // there is planned as 1 byte.
  scope.lower_bound = max_live_of_blocks(blocks);
  // A block of 0 bytes at the hints but not statically 0 (so not of fixed
  // size) is planned as 1 byte, so that it is kept apart from the others.
  for (std::size_t j = 0; j < placed; ++j)
    if (blocks[j].bytes == 0 && !blocks[j].fixed_size) blocks[j].bytes = 1;
  if (options.spill && placed > 0) {
    const std::span<const ArenaBlock> all{blocks};
    const std::vector<bool> spill = blocks_to_spill(all.first(placed), all.subspan(placed), steps, options.alignment);
    if (std::find(spill.begin(), spill.end(), true) != spill.end()) {
      std::vector<std::uint32_t> kept_of(placed, none);
      std::size_t kept = 0;
      for (std::size_t j = 0; j < placed; ++j) {
        if (spill[j]) continue;
        kept_of[j] = static_cast<std::uint32_t>(kept);
        blocks[kept] = blocks[j];
        placed_buffers[kept] = placed_buffers[j];
        ++kept;
      }
      for (std::uint32_t& j : placed_of_buffer)
        if (j != none) j = kept_of[j];
      placed = kept;
      placed_buffers.resize(kept);
    }
  }
  blocks.resize(placed);
  blocks.shrink_to_fit();  // the others' spans, where the program has any
  if (blocks.empty()) return scope;
  // Names for the offsets (pass/symbolic_placement.hpp) and the arenas.
  std::unordered_set<std::string> names = names_with_prefix(p, options.name_prefix);
  const std::string offset_prefix = options.name_prefix + "_offset";
  // The next name no scope of the program declares and no name of this
  // scope is. A symbol of that name already in the context (an earlier
  // plan of a copy made it) is taken again, unless it was made otherwise
  // than a name is (then `ctx.symbol` would refuse it).
  const auto fresh_offset_name = [&] {
    for (;; ++offset_names.next) {
      std::string name = offset_prefix + std::to_string(offset_names.next);
      if (names.contains(name) || offset_names.declared.contains(name)) continue;
      const expr::Expr known = p.ctx().find_symbol(name);
      if (known && (known.assumption() != expr::Assumption::nonnegative || known.unbacked())) continue;
      ++offset_names.next;
      offset_names.declared.insert(name);
      return name;
    }
  };
  const BlockNamer block_name = [&](std::size_t j) { return p.buffer(placed_buffers[j]).name; };
  SymbolicPlacement symbolic;
  try {
    ArenaPlan plan = place_blocks(blocks, options, block_name);
    // The sizes again (each buffer's is cached by `hints`), now that the
    // packer's tables are freed.
    std::vector<expr::Expr> sizes;
    sizes.reserve(placed);
    StorageBytes storage_bytes;
    for (const ir::BufferId b : placed_buffers) {
      Result<expr::Expr> size = storage_bytes.of(p, b, hints);
      if (!size) return Diagnostic{"buffer " + p.buffer(b).name + ": " + size.error().message};
      sizes.push_back(std::move(size).value());
    }
    symbolic = symbolic_placement_of(blocks, std::move(plan.placement), sizes, options.alignment, fresh_offset_name,
                                     block_name);
  } catch (const std::invalid_argument& e) {
    return Diagnostic{e.what()};
  } catch (const expr::Error& e) {
    return Diagnostic{std::string("an arena offset cannot be built: ") + e.what()};
  }
  // One pool per arena, on its blocks' device, used up to their last line.
  const std::size_t arenas = symbolic.arena_bytes.size();
  std::size_t counter = 0;
  const std::size_t first_pool = p.pools.size();
  std::vector<std::size_t> last_use(arenas, 0);
  std::vector<bool> holds_output(arenas, false);
  std::vector<ir::Device> device(arenas);
  for (std::size_t j = 0; j < placed; ++j) {
    const std::size_t k = symbolic.arena_of[j];
    device[k] = p.buffer(placed_buffers[j]).layout.device;
    last_use[k] = std::max<std::size_t>(last_use[k], blocks[j].end - 1);
    holds_output[k] = holds_output[k] || blocks[j].is_output;
  }
  std::vector<ArenaBlock>().swap(blocks);
  for (std::size_t k = 0; k < arenas; ++k)
    p.pools.push_back(
        ir::PoolDecl{fresh_numbered_name(options.name_prefix, counter, names), device[k], symbolic.arena_bytes[k]});
  const auto placed_index = [&](ir::BufferId b) -> std::size_t {
    if (!p.contains(b) || b.index >= placed_of_buffer.size() || placed_of_buffer[b.index] == none)
      return std::numeric_limits<std::size_t>::max();
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
        const std::size_t j = placed_index(b);
        if (j == std::numeric_limits<std::size_t>::max() || placed_buffers[j] != b) return std::nullopt;
        return PoolSlot{pool_of_arena(symbolic.arena_of[j]), symbolic.offsets[j]};
      },
      [&](ir::BufferId b) -> std::optional<ir::PoolId> {
        const std::size_t j = placed_index(b);
        if (j == std::numeric_limits<std::size_t>::max()) return std::nullopt;
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
  detail::OffsetNames offset_names;
  const std::string offset_prefix = options.name_prefix + "_offset";
  const auto note_declared = [&](const auto& self, const ir::Program& scope) -> void {
    for (const ir::SymbolDecl& s : scope.symbols)
      if (s.symbol && s.symbol.is_symbol() && s.symbol.name().starts_with(offset_prefix))
        offset_names.declared.emplace(s.symbol.name());
    for (const ir::Program& g : scope.subgraphs) self(self, g);
  };
  note_declared(note_declared, program);
  Result<detail::ArenaScope> scope = detail::plan_arena_in(program, options, hints, offset_names);
  if (!scope) return scope.error();
  Result<PlanStats> stats = detail::measure_against(scope.value().lower_bound, program, TraceOptions{}, hints);
  if (!stats) return stats.error();
  PlanResult result{std::move(program), stats.value()};
  result.stats.arenas = scope.value().arenas;
  return result;
}

}  // namespace wrapir::pass
