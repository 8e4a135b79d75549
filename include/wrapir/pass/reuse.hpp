#pragma once
/// \file
/// `plan_reuse`: Inductor's default memory plan (`memory_plan_reuse`,
/// reference §3.2): a later allocation takes over the storage of a buffer
/// freed before it, when their reuse keys match and the reuse does not
/// raise the estimated peak.
///
/// For each program (the root, then each subgraph as its own scope with
/// its parent's hints):
/// 1. Trailing memory lines are removed (Allocate, FreeIfNotReused, Reuse,
///    Free, Null, Reinterpret, workspace, comm buffer and pool lines) while
///    none of the buffers they name is a program output: they would only
///    free at the very end. A trailing Reuse that takes storage a
///    FreeIfNotReused offered stops the removal (the offer would be left
///    without a taker).
/// 2. One forward pass with a stack of planning states: EnterSubgraph
///    pushes a fresh state, ExitSubgraph pops it, so no reuse crosses the
///    boundary of an inlined subgraph.
/// 3. A FreeIfNotReused offers its buffer's storage under the buffer's reuse
///    key `(device, dtype, storage size in elements, aligned, stream)`; the
///    size is the printed canonical expression (`print_python` of
///    `storage_elements`), so `s0` never matches `s1` whatever the hints.
///    Offers stack per key (LIFO).
/// 4. An Allocate pops the newest offer of its key. It is accepted when the
///    free is the line right before the allocation, or when
///    `size + max(estimate over the lines strictly between) <= peak`,
///    where the estimate is the bytes held at each line (the held trace of
///    pass/plan_stats.hpp, per device) and `peak` its maximum on the
///    allocation's device. On acceptance the free becomes
///    `FreeIfNotReused{reused = true}`, the Allocate becomes
///    `Reuse{old, new}`, and the estimate grows by `size` over the lines
///    between (the storage now stays alive there). Otherwise the offer goes
///    back and the Allocate stays.
/// 5. Comm buffers have their own offers, keyed by `(device, dtype, storage
///    size, comm type, group)`, offered by CommBufferFree and always
///    accepted (no peak guard): the CommBufferFree becomes a
///    `FreeIfNotReused{reused = true}` and the CommBufferAllocate a Reuse.
///
/// Sizes at the hints are those of `ReuseOptions::trace`. The estimate is
/// the held trace rather than Inductor's scheduler-node estimate: with the
/// peak guard, the planned program's peak (`PlanStats::peak_bytes`) is then
/// never above the unplanned program's, except through comm buffer reuses,
/// which are not guarded. Time steps are lines, so "the line right before"
/// stands for Inductor's "the scheduler node right before"; a free and an
/// allocation with only other frees between them pass the guard anyway.
///
/// What is never reused:
/// - graph inputs, even donated ones (they end with Free, which Inductor
///   never offers; in-place reuse may take a donated input, see
///   pass/inplace.hpp), and constants;
/// - multi-output tuples (they hold no storage of their own);
/// - workspaces: the IR defines a workspace only by WorkspaceAllocate (which
///   zeroes it as its mode says) and the verifier forbids Reuse of one, so
///   workspaces take part only in the estimate;
/// - storage that is still used after the FreeIfNotReused that would offer
///   it: by a view of it (Reinterpret), by a MultiOutput tuple holding it,
///   or by the buffer itself, or that is a program output; the rule is
///   "offer only when the storage's last use (pass/liveness.hpp) is at or
///   before the free", which a verified program meets except for tuples;
/// - buffers carved from pools, and buffers whose layout is malformed.
///
/// A verified program stays verified (the tests check it on random
/// programs). A program whose storage cannot be traced (an id out of range,
/// a size that overflows at the hints) gets a diagnostic.
///
/// Cost: one pass over the body plus O(log n) per offer taken or refused;
/// storage sizes are built and printed once per distinct layout.

#include <wrapir/detail/hash.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/memory_planning_line.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/detail/prefetch.hpp>
#include <wrapir/pass/detail/segment_tree.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/trace.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::pass {

struct ReuseOptions {
  /// Inductor's `config.allow_buffer_reuse`: without it only the trailing
  /// memory lines are removed.
  bool allow_reuse = true;
  /// Refuse reuses that would raise the estimated peak (step 4).
  bool peak_guard = true;
  /// Hints and fallback for sizes.
  TraceOptions trace{};
};

namespace detail {

/// The reuse key, with the size and comm group interned to integers.
struct ReuseKey {
  std::int32_t device = 0;
  std::uint8_t dtype = 0;
  bool aligned = true;
  bool comm = false;
  std::uint32_t stream = 0;
  std::uint32_t size = 0;   // interned printed storage size
  std::uint32_t group = 0;  // interned comm group (comm keys only)
  friend bool operator==(const ReuseKey&, const ReuseKey&) = default;
};

struct ReuseKeyHash {
  std::size_t operator()(const ReuseKey& k) const noexcept {
    // The hash only spreads the map's entries (whose order nothing reads:
    // keys get dense ids in the order they are first seen).
    using wrapir::detail::hash_mix;
    std::size_t h = static_cast<std::size_t>(static_cast<std::uint32_t>(k.device));
    h = hash_mix(h, k.dtype);
    h = hash_mix(h, static_cast<std::size_t>(k.aligned) | (static_cast<std::size_t>(k.comm) << 1));
    h = hash_mix(h, k.stream);
    h = hash_mix(h, k.size);
    return hash_mix(h, k.group);
  }
};

/// An offered storage: the buffer and the line of its free.
struct Offer {
  ir::BufferId buffer;
  std::size_t line;
};

/// The offers of one scope, per interned reuse key (see `ReusePlanner`).
using PlanningState = std::vector<std::vector<Offer>>;

[[nodiscard]] constexpr std::int64_t saturating_add(std::int64_t a, std::int64_t b) noexcept {
  if (b > 0 && a > std::numeric_limits<std::int64_t>::max() - b) return std::numeric_limits<std::int64_t>::max();
  if (b < 0 && a < std::numeric_limits<std::int64_t>::min() - b) return std::numeric_limits<std::int64_t>::min();
  return a + b;
}

struct MaxOp {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const noexcept { return std::max(a, b); }
};
struct AddOp {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const noexcept { return saturating_add(a, b); }
};
using PeakTree = LazySegmentTree<std::int64_t, MaxOp, AddOp>;

inline void remove_trailing_memory_lines(ir::Program& p) {
  std::vector<bool> is_output(p.buffers.size(), false);
  for (const ir::ProgramOutput& o : p.outputs)
    if (const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o); b && p.contains(b->buffer))
      is_output[b->buffer.index] = true;
  namespace fx = ir::effect;
  // Which storage a FreeIfNotReused of the whole body offered: a walk over
  // the body, made only when a trailing Reuse asks (the lines are erased
  // after the scan, so the walk still sees them all).
  std::vector<bool> offered;
  const auto was_offered = [&](ir::BufferId b) {
    if (offered.empty()) {
      offered.assign(p.buffers.size(), false);
      for (const ir::Line& line : p.body)
        ir::for_each_effect(line, fx::Handlers{[&](const fx::Released& e) {
                                                 if (e.offered && p.contains(e.buffer)) offered[e.buffer.index] = true;
                                               },
                                               [](const auto&) {}});
    }
    return offered[b.index];
  };
  const auto removable = [&](const ir::Line& last) {
    if (last.valueless_by_exception() || !ir::is_memory_planning_line(last)) return false;
    // A Reuse taking offered storage: the offer would be left without a
    // taker.
    bool takes_offer = false;
    ir::for_each_effect(last, fx::Handlers{[&](const fx::Reused& e) {
                                             takes_offer = takes_offer ||
                                                           (p.contains(e.old_buffer) && was_offered(e.old_buffer));
                                           },
                                           [](const auto&) {}});
    if (takes_offer) return false;
    bool names_output = false;
    ir::for_each_buffer_named(last, [&](ir::BufferId b) {
      names_output = names_output || !p.contains(b) || is_output[b.index];
    });
    return !names_output;
  };
  std::size_t kept = p.body.size();
  while (kept > 0 && removable(p.body[kept - 1])) --kept;
  p.body.erase(p.body.begin() + static_cast<std::ptrdiff_t>(kept), p.body.end());
}

class ReusePlanner {
 public:
  /// Plans `p`, whose body before trailing lines were removed had the
  /// liveness `live`; `hints` evaluates its sizes.
  ReusePlanner(ir::Program& p, const ReuseOptions& options, const Liveness& live, HintEvaluator& hints)
      : p_(p), options_(options), liveness_(live), hints_(hints) {}

  /// Plans `p_`'s body in place, with `held` (the held trace of the body
  /// before trailing lines were removed) as the first estimate; returns the
  /// number of reuses made.
  std::size_t run(std::span<const LiveSpan> held) {
    build_estimates(held);

    std::vector<PlanningState> states(1);
    std::size_t reuses = 0;
    namespace fx = ir::effect;
    // What a line does to planning, read from its effects first and acted
    // on after (acting rewrites the line).
    enum class Step : std::uint8_t { none, push, pop, offer, take };
    for (std::size_t i = 0; i < p_.body.size(); ++i) {
      if (i + prefetch_ahead < p_.body.size()) prefetch_declaration(p_.body[i + prefetch_ahead]);
      Step step = Step::none;
      ir::BufferId buffer{};
      bool comm = false;
      ir::for_each_effect(p_.body[i], fx::Handlers{
          [&](const fx::ScopeEntered& e) {
            if (e.kind == ir::ScopeKind::subgraph) step = Step::push;
          },
          [&](const fx::ScopeExited& e) {
            if (e.kind == ir::ScopeKind::subgraph) step = Step::pop;
          },
          // A FreeIfNotReused offers its storage, a CommBufferFree its comm
          // storage; an Allocate or CommBufferAllocate may take an offer.
          [&](const fx::Released& e) {
            if (e.offered || (e.how != ir::Release::free_if_not_reused && e.how != ir::Release::comm_free)) return;
            step = Step::offer;
            buffer = e.buffer;
            comm = e.how == ir::Release::comm_free;
          },
          [&](const fx::Allocated& e) {
            if (e.storage != ir::Storage::allocate && e.storage != ir::Storage::comm) return;
            step = Step::take;
            buffer = e.buffer;
            comm = e.storage == ir::Storage::comm;
          },
          [](const auto&) {},
      });
      switch (step) {
        case Step::push: states.emplace_back(); break;
        case Step::pop:
          if (states.size() > 1) states.pop_back();
          break;
        case Step::offer: offer(states.back(), buffer, i, comm); break;
        case Step::take:
          if (take(states.back(), buffer, i, comm)) ++reuses;
          break;
        case Step::none: break;
      }
    }
    return reuses;
  }

  [[nodiscard]] const expr::Bindings& bindings() const noexcept { return hints_.bindings(); }

  /// The (old, new) pairs of the reuses made, in line order.
  [[nodiscard]] const std::vector<std::pair<ir::BufferId, ir::BufferId>>& accepted() const noexcept {
    return accepted_;
  }

 private:
  static constexpr std::uint32_t no_key = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t no_tree = std::numeric_limits<std::size_t>::max();

  /// A buffer's first key reads its declaration: in a large program a cache
  /// miss or two per buffer, a good part of the walk, so the declaration of
  /// the buffer a line frees or allocates is asked for this many lines
  /// ahead.
  static constexpr std::size_t prefetch_ahead = 8;

  void prefetch_declaration(const ir::Line& line) const {
    std::optional<ir::BufferId> freed_or_allocated;
    namespace fx = ir::effect;
    ir::for_each_effect(line, fx::Handlers{
        [&](const fx::Released& e) {
          if (e.how == ir::Release::free_if_not_reused) freed_or_allocated = e.buffer;
        },
        [&](const fx::Allocated& e) {
          if (e.storage == ir::Storage::allocate) freed_or_allocated = e.buffer;
        },
        [](const auto&) {},
    });
    if (!freed_or_allocated || !p_.contains(*freed_or_allocated)) return;
    const ir::BufferId b = *freed_or_allocated;
    const ir::BufferDecl& d = p_.buffers[b.index];
    prefetch(&d.layout.device);  // the key's fields span two cache lines
    prefetch(&d.aligned);
  }

  /// The estimates of `held`, replacing any made before, with the keys
  /// already interned pointed at their device's new estimate.
  void build_estimates(std::span<const LiveSpan> held) {
    tree_devices_.clear();
    trees_.clear();
    peaks_.clear();
    const std::size_t steps = p_.body.size();
    std::vector<std::vector<std::int64_t>> deltas;
    for (const LiveSpan& a : held) {
      if (a.bytes <= 0 || a.begin >= steps) continue;
      std::size_t slot = find_tree_slot(a.device);
      if (slot == no_tree) slot = add_tree_slot(a.device);
      if (deltas.size() <= slot) deltas.resize(slot + 1);
      std::vector<std::int64_t>& d = deltas[slot];
      if (d.empty()) d.assign(steps + 1, 0);
      d[a.begin] = saturating_add(d[a.begin], a.bytes);
      d[std::min(a.end, steps)] = saturating_add(d[std::min(a.end, steps)], -a.bytes);
    }
    std::vector<std::int64_t> live(steps, 0);
    for (std::vector<std::int64_t>& d : deltas) {
      std::int64_t running = 0, peak = 0;
      for (std::size_t t = 0; t < steps; ++t) {
        running = saturating_add(running, d[t]);
        live[t] = running;
        peak = std::max(peak, running);
      }
      peaks_.push_back(peak);
      trees_.emplace_back(live, MaxOp{}, AddOp{}, std::numeric_limits<std::int64_t>::min());
    }
    for (const auto& [key, id] : key_ids_) key_trees_[id] = find_tree_slot(key.device);
  }

  /// The index of `device`'s estimate in `trees_` and `peaks_`, or `no_tree`
  /// when it has none (no storage held on it).
  [[nodiscard]] std::size_t find_tree_slot(std::int32_t device) const {
    for (std::size_t s = 0; s < tree_devices_.size(); ++s)
      if (tree_devices_[s] == device) return s;
    return no_tree;
  }

  /// A new slot for `device`, which has none yet; `build_estimates` fills
  /// it.
  std::size_t add_tree_slot(std::int32_t device) {
    tree_devices_.push_back(device);
    return tree_devices_.size() - 1;
  }

  /// The interned key of `b`, or `no_key` when `b` may not take part in
  /// reuse. Computed once per buffer: building it reads the buffer's
  /// declaration and its size, each a cache miss in a large program.
  std::uint32_t key_of(ir::BufferId b, bool comm) {
    if (!p_.contains(b)) return no_key;
    if (keys_.size() < p_.buffers.size()) keys_.resize(p_.buffers.size());
    CachedKey& cached = keys_[b.index];
    if (!cached.known) {
      cached.id = no_key;
      if (std::optional<ReuseKey> k = compute_key(b, comm)) {
        const auto next = static_cast<std::uint32_t>(key_ids_.size());
        const auto [it, added] = key_ids_.emplace(*k, next);
        if (added) key_trees_.push_back(find_tree_slot(k->device));
        cached.id = it->second;
      }
      cached.known = true;
      cached.comm = comm;
    }
    // A buffer is offered and taken by lines of its role only; a comm line
    // naming a plain buffer (or the reverse) gets no key.
    return cached.comm == comm ? cached.id : no_key;
  }

  std::optional<ReuseKey> compute_key(ir::BufferId b, bool comm) {
    if (!p_.contains(b)) return std::nullopt;
    const ir::BufferDecl& d = p_.buffer(b);
    if (d.multi_output) return std::nullopt;
    if (comm ? d.role != ir::BufferRole::comm || !d.comm
             : d.role != ir::BufferRole::intermediate && d.role != ir::BufferRole::output)
      return std::nullopt;
    const Result<expr::Expr>& size = hints_.buffer_storage_size(p_, b);
    if (!size) return std::nullopt;  // a malformed layout: never reused
    ReuseKey k;
    k.device = device_key(d.layout.device);
    k.dtype = static_cast<std::uint8_t>(d.layout.dtype);
    k.stream = d.stream;
    k.comm = comm;
    if (comm) {
      k.group = intern(groups_, d.comm->group + '\0' + std::to_string(static_cast<int>(d.comm->type)));
    } else {
      k.aligned = d.aligned;
    }
    auto it = printed_.find(size.value().node());
    if (it == printed_.end()) {
      std::string text;
      try {
        text = expr::print_python(size.value());
      } catch (const expr::Error&) {
        return std::nullopt;  // too large to print: never reused
      }
      it = printed_.emplace(size.value().node(), intern(sizes_, std::move(text))).first;
    }
    k.size = it->second;
    return k;
  }

  static std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& table, std::string s) {
    const auto next = static_cast<std::uint32_t>(table.size());
    return table.emplace(std::move(s), next).first->second;
  }

  void offer(PlanningState& state, ir::BufferId b, std::size_t line, bool comm) {
    if (!p_.contains(b)) return;
    const std::size_t s = liveness_.storage_of[b.index];
    // Only the storage's creator or its current holder through Reuse, and
    // only when nothing uses the storage after this line.
    if (s == Liveness::no_storage) return;
    const BufferLifetime& life = liveness_.lifetimes[s];
    if (life.is_output || life.last_line > line || life.origin == StorageOrigin::pool) return;
    const std::uint32_t k = key_of(b, comm);
    if (k == no_key) return;
    if (state.size() <= k) state.resize(k + std::size_t{1});
    state[k].push_back(Offer{b, line});
  }

  bool take(PlanningState& state, ir::BufferId b, std::size_t line, bool comm) {
    if (!options_.allow_reuse) return false;
    const std::uint32_t k = key_of(b, comm);
    if (k == no_key || k >= state.size() || state[k].empty()) return false;
    std::vector<Offer>& offers = state[k];
    const Offer offer = offers.back();
    offers.pop_back();
    Result<std::int64_t> bytes = hints_.buffer_bytes(p_, b);
    const std::int64_t size = bytes ? bytes.value() : 0;  // Inductor's fallback for an unknown size
    PeakTree* const tree = key_trees_[k] == no_tree ? nullptr : &trees_[key_trees_[k]];
    const bool adjacent = offer.line + 1 >= line;
    if (!comm && options_.peak_guard && !adjacent && tree) {
      const std::int64_t between = tree->query(offer.line + 1, line - 1);
      if (saturating_add(size, between) > peaks_[key_trees_[k]]) {
        offers.push_back(offer);
        return false;
      }
    }
    if (tree && !adjacent) tree->update(offer.line + 1, line - 1, size);
    p_.body[offer.line] = ir::FreeIfNotReused{offer.buffer, true};
    p_.body[line] = ir::Reuse{offer.buffer, b, true};
    accepted_.emplace_back(offer.buffer, b);
    return true;
  }

  ir::Program& p_;
  const ReuseOptions& options_;
  const Liveness& liveness_;
  HintEvaluator& hints_;
  // Per device holding storage (`tree_devices_`), the estimate and its peak.
  std::vector<std::int32_t> tree_devices_;
  std::vector<PeakTree> trees_;
  std::vector<std::int64_t> peaks_;
  struct CachedKey {
    std::uint32_t id = no_key;
    bool known = false;
    bool comm = false;
  };
  std::vector<CachedKey> keys_;
  // Keys are interned to dense ids, so that a scope's offers are a vector
  // indexed by key rather than a hash map probed on every free and
  // allocation; `key_trees_` is each key's device estimate.
  std::unordered_map<ReuseKey, std::uint32_t, ReuseKeyHash> key_ids_;
  std::vector<std::size_t> key_trees_;
  std::vector<std::pair<ir::BufferId, ir::BufferId>> accepted_;
  std::unordered_map<const expr::Node*, std::uint32_t> printed_;
  std::unordered_map<std::string, std::uint32_t> sizes_;
  std::unordered_map<std::string, std::uint32_t> groups_;
};

/// What planning one program gives: the plan, the reuses made and the
/// original's lower bound.
struct ScopePlan {
  std::size_t reuses = 0;
  std::int64_t lower_bound = 0;
  /// The planned body's max-live held bytes.
  std::int64_t peak = 0;
};

/// The held trace of the plan, derived from the original's (`held`, whose
/// first entries are the blocks of `live`) without tracing the plan again:
/// each reuse joins the new buffer's storage to the old one's, and storage
/// that a removed trailing line created is gone, or that it released is
/// held to the new end of the body. The tests check it against
/// `measure_plan`.
[[nodiscard]] inline std::vector<LiveSpan> planned_held_spans(
    std::span<const LiveSpan> held, const Liveness& live,
    const std::vector<std::pair<ir::BufferId, ir::BufferId>>& reuses, std::size_t steps) {
  std::vector<std::size_t> parent(held.size());
  for (std::size_t u = 0; u < parent.size(); ++u) parent[u] = u;
  auto find = [&](std::size_t u) {
    while (parent[u] != u) u = parent[u] = parent[parent[u]];
    return u;
  };
  std::vector<LiveSpan> joined(held.begin(), held.end());
  for (const auto& [old_buffer, new_buffer] : reuses) {
    const std::size_t o = live.storage_of[old_buffer.index], n = live.storage_of[new_buffer.index];
    if (o == Liveness::no_storage || n == Liveness::no_storage) continue;
    const std::size_t ro = find(o), rn = find(n);
    if (ro == rn) continue;
    parent[rn] = ro;
    joined[ro].begin = std::min(joined[ro].begin, joined[rn].begin);
    joined[ro].end = std::max(joined[ro].end, joined[rn].end);
    joined[ro].is_output = joined[ro].is_output || joined[rn].is_output;
  }
  // Compacted in place: entry u moves only to an index at or below u.
  std::size_t kept = 0;
  for (std::size_t u = 0; u < joined.size(); ++u) {
    if (find(u) != u || joined[u].begin >= steps) continue;
    joined[kept] = joined[u];
    joined[kept].end = std::min(joined[kept].end, steps);
    ++kept;
  }
  joined.resize(kept);
  return joined;
}

/// Plans `original` into `planned` (a copy of it) and its subgraphs in
/// place; `where` prefixes diagnostics with the subgraph's path. The
/// liveness and sizes of the original are computed once and serve the
/// lower bound, the estimate and the offers (trailing lines only end
/// lives, so the original's liveness holds for the trimmed body).
inline Result<ScopePlan> plan_scope(const ir::Program& original, ir::Program& planned, const ReuseOptions& options,
                                    HintEvaluator& hints, const std::string& where) {
  Result<Liveness> live = liveness_of(original);
  if (!live) return Diagnostic{where + live.error().message};
  Result<std::vector<LiveSpan>> bound = spans_from(original, live.value(), hints);
  if (!bound) return Diagnostic{where + bound.error().message};
  Result<HeldSpans> held = held_spans_from(original, live.value(), hints, bound.value());
  if (!held) return Diagnostic{where + held.error().message};
  ScopePlan out;
  out.lower_bound = max_live_of(bound.value());
  remove_trailing_memory_lines(planned);
  ReusePlanner planner{planned, options, live.value(), hints};
  out.reuses = planner.run(held.value().spans);
  out.peak = max_live_of(planned_held_spans(held.value().spans, live.value(), planner.accepted(), planned.body.size()));
  ReuseOptions sub = options;
  sub.trace.hints = hints.bindings();
  for (std::size_t g = 0; g < planned.subgraphs.size(); ++g) {
    HintEvaluator sub_hints{original.subgraphs[g], sub.trace};
    Result<ScopePlan> s = plan_scope(original.subgraphs[g], planned.subgraphs[g], sub, sub_hints,
                                     where + planned.subgraphs[g].name + ": ");
    if (!s) return s;
    out.reuses += s.value().reuses;
  }
  return out;
}

}  // namespace detail

/// Plans `p` in place and returns it (see the file comment): the overload
/// for a caller that no longer needs the unplanned program, which saves a
/// copy. `stats` measures the plan against the unplanned `p`
/// (pass/plan_stats.hpp); `reuses` there counts every Reuse line of the
/// result, in-place ones included. After a diagnostic `p` may be partly
/// planned.
[[nodiscard]] inline Result<PlanResult> plan_reuse(ir::Program&& p, const ReuseOptions& options = {}) {
  // plan_scope reads each scope's original before changing it, so the
  // original and the plan may be one program.
  HintEvaluator hints{p, options.trace};
  Result<detail::ScopePlan> made = detail::plan_scope(p, p, options, hints, "");
  if (!made) return made.error();
  PlanStats stats;
  stats.lower_bound_bytes = made.value().lower_bound;
  stats.peak_bytes = made.value().peak;
  detail::count_plan_lines(p, options.trace.hints, options.trace.fallback_hint, stats);
  return PlanResult{std::move(p), stats};
}

/// Plans a copy of `p` (see the file comment).
[[nodiscard]] inline Result<PlanResult> plan_reuse(const ir::Program& p, const ReuseOptions& options = {}) {
  return plan_reuse(ir::Program(p), options);
}

}  // namespace wrapir::pass
