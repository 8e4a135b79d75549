#pragma once
/// \file
/// Stream contexts on a device backend (docs/runtime.md, "Streams"): the
/// ordering between streams, derived once per graph when the program is
/// prepared from the lines' effects (`ir::for_each_effect`), as a list of
/// actions the line loop runs as steps. A program without stream contexts
/// gets no action, so its calls do no stream work at all.
///
/// The rule. Stream 0 is the frame's base stream (the backend's stream at
/// the top level; a subgraph's base is the stream its call ran on).
/// - `EnterStreamContext{k}` forks: the current stream records its event
///   and side stream k waits for it, so k sees everything queued before;
///   the lines inside run on k.
/// - `ExitStreamContext` records k's event; the region stays *pending*.
/// - A later line on another stream s joins a pending region (s waits for
///   k's event) before it runs when one of the two writes a buffer the
///   other names, or one sharing its storage (views, reuses, multi-output
///   elements, pool regions: one alias class; defining and freeing count as
///   writing; an extern's result is in the class of every buffer the call
///   is passed, as it may be a view of one), or when it allocates (Allocate, a pool, a
///   workspace, an extern's result) and the region freed memory (Free, a
///   pool released): the caching allocator, and the frame's spare storages,
///   hand a block freed on one stream to the next allocation, which must
///   not race the stream still using it. (A free needs no rule of its own:
///   freeing a buffer names it, so it joins every region that used it.) A
///   subgraph call (Conditional, WhileLoop) counts as naming every buffer,
///   allocating and freeing.
/// - The end of the body joins every region still pending into the base
///   stream, so outputs are complete on it and a graph capture ends with
///   every forked stream joined.
/// Reads alone never conflict, but the IR says which buffers a call only
/// reads for no callee: a kernel or extern call may write every buffer it
/// is passed (ir/effects.hpp), so two regions that pass one buffer to
/// kernels are ordered. Joining waits for k's latest record, which is never earlier than the
/// region's own end: one event per stream is enough, and a join may wait
/// for more than it needs, never less.
///
/// A stream index of `max_streams` or more is refused, naming the line, as
/// is a `KernelCall` or `MultiKernelCall` whose `stream` names another
/// stream than its context's: the context decides where a line runs, and a
/// call's `stream` is either 0 (the current stream, what the builder
/// writes) or the context's index.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace wrapir::run::executor_detail {

/// One thing the line loop does for streams.
struct StreamAction {
  enum class Kind : std::uint8_t {
    enter,  // line `line` (EnterStreamContext): `other` records, `stream` waits, `stream` becomes current
    exit,   // line `line` (ExitStreamContext): `stream` records, `other` becomes current
    join,   // before line `line` (or at the end): `other` waits for `stream`'s last record
  };
  Kind kind = Kind::join;
  std::uint32_t line = 0;
  std::uint32_t stream = 0;
  std::uint32_t other = 0;
};

struct StreamPlan {
  /// Enter, exit and the joins before a line, by line, in the order they run.
  std::vector<StreamAction> actions;
  /// Joins after the last line (`line`: the exit line of the region joined).
  std::vector<StreamAction> at_end;
  /// Whether the graph has stream contexts at all.
  bool any = false;
};

namespace streams_detail {

/// Alias classes of buffers (union-find): buffers that may share storage.
/// Pools are classes too, after the buffers.
class AliasClasses {
 public:
  explicit AliasClasses(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), std::uint32_t{0}); }
  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) { parent_[find(a)] = find(b); }
  [[nodiscard]] std::size_t size() const noexcept { return parent_.size(); }

 private:
  std::vector<std::uint32_t> parent_;
};

/// What a line touches: alias classes (sorted, unique), whether it
/// allocates or frees memory, whether it touches everything (a subgraph
/// call).
struct Touch {
  std::vector<std::uint32_t> reads, writes;
  bool allocates = false;
  bool frees = false;
  bool everything = false;
};

struct Region {
  std::uint32_t stream = 0;
  std::uint32_t exit_line = 0;
  bool exited = false;
  bool frees = false;
  bool everything = false;
  std::vector<std::uint32_t> reads, writes;  // sorted, unique
  std::uint64_t joined = 0;            // bit s: stream s waited for it
};

inline bool intersects(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  auto i = a.begin(), j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    if (*i < *j) ++i;
    else ++j;
  }
  return false;
}

inline void merge_into(std::vector<std::uint32_t>& to, const std::vector<std::uint32_t>& from) {
  std::vector<std::uint32_t> out;
  out.reserve(to.size() + from.size());
  std::set_union(to.begin(), to.end(), from.begin(), from.end(), std::back_inserter(out));
  to = std::move(out);
}

}  // namespace streams_detail

/// The stream plan of `p`'s body (see the file comment). `label(i)` names
/// line i for diagnostics (`line 3 (EnterStreamContext)`); bad input
/// throws `Failure`. `max_streams`: the backend's cap.
template <class Label>
StreamPlan plan_streams(const ir::Program& p, std::uint32_t max_streams, Label&& label) {
  using namespace streams_detail;
  StreamPlan plan;
  bool has_stream_field = false;
  for (const ir::Line& line : p.body) {
    if (std::holds_alternative<ir::EnterStreamContext>(line) || std::holds_alternative<ir::ExitStreamContext>(line))
      plan.any = true;
    if (const auto* k = std::get_if<ir::KernelCall>(&line); k != nullptr && k->stream != 0) has_stream_field = true;
    if (const auto* k = std::get_if<ir::MultiKernelCall>(&line); k != nullptr && k->stream != 0) has_stream_field = true;
  }
  if (!plan.any && !has_stream_field) return plan;

  const auto buffers = static_cast<std::uint32_t>(p.buffers.size());
  AliasClasses classes(p.buffers.size() + p.pools.size());
  auto known = [&](ir::BufferId b) { return b.index < buffers; };
  auto unite = [&](ir::BufferId a, ir::BufferId b) {
    if (known(a) && known(b)) classes.unite(a.index, b.index);
  };
  const auto aliases = ir::effect::Handlers{
      [&](const ir::effect::Reused& e) { unite(e.new_buffer, e.old_buffer); },
      [&](const ir::effect::Aliased& e) { unite(e.view, e.base); },
      [&](const ir::effect::Selected& e) { unite(e.element, e.tuple); },
      [&](const ir::effect::Carved& e) {
        if (known(e.buffer) && e.pool.index < p.pools.size()) classes.unite(e.buffer.index, buffers + e.pool.index);
      },
      [](const auto&) {},
  };
  for (const ir::Line& line : p.body) {
    // An extern's result may be a view of an argument (the IR cannot say):
    // one class for the result and every buffer the call is passed.
    if (std::holds_alternative<ir::ExternKernelAlloc>(line) || std::holds_alternative<ir::ExternKernelMultiOut>(line)) {
      std::optional<ir::BufferId> first;
      ir::for_each_buffer_named(line, [&](ir::BufferId b) {
        if (first) unite(b, *first);
        else first = b;
      });
    }
    ir::for_each_effect(line, aliases);
  }

  auto touch_of = [&](const ir::Line& line) {
    Touch t;
    auto read = [&](ir::BufferId b) {
      if (known(b)) t.reads.push_back(classes.find(b.index));
    };
    auto write = [&](ir::BufferId b) {
      if (known(b)) t.writes.push_back(classes.find(b.index));
    };
    auto pool = [&](ir::PoolId id) {
      if (id.index < p.pools.size()) t.writes.push_back(classes.find(buffers + id.index));
    };
    // Defining, freeing and passing to a callee that may write count as
    // writing; `read` and `read_result` accesses as reading.
    ir::for_each_effect(line, ir::effect::Handlers{
        [&](const ir::effect::Accessed& e) {
          if (e.access == ir::Access::read || e.access == ir::Access::read_result) read(e.buffer);
          else write(e.buffer);
        },
        [&](const ir::effect::Allocated& e) {
          write(e.buffer);
          t.allocates = true;
        },
        [&](const ir::effect::Released& e) {
          write(e.buffer);
          t.frees = t.frees || !e.offered;
        },
        [&](const ir::effect::Reused& e) {
          write(e.old_buffer);
          write(e.new_buffer);
        },
        [&](const ir::effect::Aliased& e) {
          read(e.base);
          write(e.view);
        },
        [&](const ir::effect::Selected& e) {
          read(e.tuple);
          write(e.element);
        },
        [&](const ir::effect::Carved& e) { write(e.buffer); },
        [&](const ir::effect::PoolCreated& e) {
          pool(e.pool);
          t.allocates = true;
        },
        [&](const ir::effect::PoolReturned& e) {
          pool(e.pool);
          t.frees = t.frees || e.releases_pool;
        },
        [&](const ir::effect::SubgraphCalled&) { t.allocates = t.frees = t.everything = true; },
        [](const auto&) {},
    });
    for (std::vector<std::uint32_t>* v : {&t.reads, &t.writes}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    return t;
  };

  std::vector<Region> regions;
  std::vector<std::size_t> open;       // indices into `regions`, innermost last
  auto current = [&]() -> std::uint32_t { return open.empty() ? 0 : regions[open.back()].stream; };
  auto join_all_of = [&](std::uint32_t stream, std::uint32_t waiter) {
    // One join waits for the stream's latest record: every region of that
    // stream that had exited is covered.
    for (Region& r : regions)
      if (r.exited && r.stream == stream) r.joined |= std::uint64_t{1} << waiter;
  };

  for (std::size_t i = 0; i < p.body.size(); ++i) {
    const ir::Line& line = p.body[i];
    const auto at = static_cast<std::uint32_t>(i);
    if (const auto* e = std::get_if<ir::EnterStreamContext>(&line)) {
      if (e->stream == 0 || e->stream >= max_streams)
        wrapir::detail::fail(label(i) + ": stream " + std::to_string(e->stream) +
                             " is not a side stream of the backend (1 to " + std::to_string(max_streams - 1) + ")");
      plan.actions.push_back(StreamAction{StreamAction::Kind::enter, at, e->stream, current()});
      regions.push_back(Region{e->stream, 0, false, false, false, {}, {}, 0});
      open.push_back(regions.size() - 1);
      continue;
    }
    if (std::holds_alternative<ir::ExitStreamContext>(line)) {
      if (open.empty()) wrapir::detail::fail(label(i) + ": ExitStreamContext closes no stream context");
      Region& r = regions[open.back()];
      open.pop_back();
      r.exited = true;
      r.exit_line = at;
      plan.actions.push_back(StreamAction{StreamAction::Kind::exit, at, r.stream, current()});
      continue;
    }
    const std::uint32_t s = current();
    auto check_field = [&](std::uint32_t field, const char* what) {
      if (field != 0 && field != s)
        wrapir::detail::fail(
            label(i) + ": the " + what + " names stream " + std::to_string(field) + " but runs " +
            (s == 0 ? std::string("outside any stream context") : "in the context of stream " + std::to_string(s)) +
            " (the context decides; a call's stream is 0 or its context's)");
    };
    if (const auto* k = std::get_if<ir::KernelCall>(&line)) check_field(k->stream, "kernel call");
    if (const auto* k = std::get_if<ir::MultiKernelCall>(&line)) check_field(k->stream, "multi-kernel call");
    if (!plan.any) continue;
    const Touch t = touch_of(line);
    if (t.reads.empty() && t.writes.empty() && !t.allocates && !t.frees && !t.everything) continue;
    for (std::size_t r = 0; r < regions.size(); ++r) {
      Region& region = regions[r];
      if (!region.exited || region.stream == s || (region.joined >> s & 1u) != 0) continue;
      const bool conflict = t.everything || region.everything || (t.allocates && region.frees) ||
                            intersects(t.writes, region.writes) || intersects(t.writes, region.reads) ||
                            intersects(t.reads, region.writes);
      if (!conflict) continue;
      plan.actions.push_back(StreamAction{StreamAction::Kind::join, at, region.stream, s});
      join_all_of(region.stream, s);
    }
    if (!open.empty()) {
      Region& region = regions[open.back()];
      merge_into(region.reads, t.reads);
      merge_into(region.writes, t.writes);
      region.frees = region.frees || t.frees;
      region.everything = region.everything || t.everything;
    }
  }
  if (!open.empty())
    wrapir::detail::fail("the body ends inside " + std::to_string(open.size()) + " open stream context(s)");
  for (Region& region : regions) {
    if ((region.joined & 1u) != 0) continue;
    plan.at_end.push_back(StreamAction{StreamAction::Kind::join, region.exit_line, region.stream, 0});
    join_all_of(region.stream, 0);
  }
  return plan;
}

}  // namespace wrapir::run::executor_detail
