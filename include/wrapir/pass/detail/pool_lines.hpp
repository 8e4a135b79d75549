#pragma once
/// \file
/// The body rewrite the pool and arena planners share: once each planned
/// buffer has a pool and an offset, its Allocate becomes AllocFromPool (the
/// pool's first one preceded by PoolCreate) and its frees become
/// DeallocFromPool, or Null for a free that a Reuse took over. Which
/// DeallocFromPool releases its pool is each planner's own rule, so the
/// rewrite only reports where it put them. Also here: how both name
/// their pools and size their blocks.

#include <boost/variant2/variant.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::pass::detail {

/// Where a planner put a buffer's storage.
struct PoolSlot {
  ir::PoolId pool{};
  expr::Expr offset_bytes{};
};

/// A DeallocFromPool the rewrite made: its index in the new body, the
/// index of the free line it replaces, and its pool.
struct PoolRelease {
  std::size_t body_index = 0;
  std::size_t original_line = 0;
  ir::PoolId pool{};
};

/// Rewrites `p.body` as the file comment says. `slot(b)` is where the
/// Allocate of buffer `b` goes (nullopt: not planned, the line stays);
/// `pool_of(b)` is the pool holding the storage a free of `b` releases
/// (nullopt: not pooled, the line stays); `keep(line)` sees every line
/// that stays as it was; `before_create[k]`, where given, are lines that go
/// just before pool k's PoolCreate (what its size and offsets read: the
/// arena planner's named offsets), moved from. Returns the
/// DeallocFromPool lines in body order, none releasing its pool yet.
///
/// In place: every line but the PoolCreates keeps its index, so lines are
/// replaced where they stand and the few PoolCreates are then inserted in
/// one pass from the back. Building a second body held two copies of a
/// million-line body at once.
template <class Slot, class PoolOf, class Keep>
std::vector<PoolRelease> rewrite_into_pools(ir::Program& p, Slot&& slot, PoolOf&& pool_of, Keep&& keep,
                                            std::span<std::vector<ir::Line>> before_create = {}) {
  std::vector<bool> created(p.pools.size(), false);
  std::vector<PoolRelease> releases;
  // (line, pool): a PoolCreate goes before that line of the old body.
  std::vector<std::pair<std::size_t, ir::PoolId>> creates;
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    ir::Line& line = p.body[i];
    if (const auto* a = std::get_if<ir::Allocate>(&line)) {
      if (std::optional<PoolSlot> s = slot(a->buffer)) {
        if (!created[s->pool.index]) {
          creates.emplace_back(i, s->pool);
          created[s->pool.index] = true;
        }
        line = ir::AllocFromPool{a->buffer, s->pool, std::move(s->offset_bytes)};
        continue;
      }
    }
    std::optional<ir::BufferId> freed;
    bool reused = false;
    if (const auto* offer = std::get_if<ir::FreeIfNotReused>(&line)) {
      freed = offer->buffer;
      reused = offer->reused;
    } else if (const auto* free_line = std::get_if<ir::Free>(&line)) {
      freed = free_line->buffer;
    }
    if (freed) {
      if (const std::optional<ir::PoolId> pool = pool_of(*freed)) {
        if (reused) {
          line = ir::Null{};
        } else {
          releases.push_back(PoolRelease{i, i, *pool});
          line = ir::DeallocFromPool{*freed, *pool, false};
        }
        continue;
      }
    }
    keep(line);
  }
  if (creates.empty()) return releases;
  // The lines that go before pool `pool`'s PoolCreate, itself included.
  const auto inserted = [&](ir::PoolId pool) {
    return 1 + (pool.index < before_create.size() ? before_create[pool.index].size() : 0);
  };
  // Line i moves down by the number of lines inserted before it.
  std::size_t added = 0;
  for (const auto& [line, pool] : creates) added += inserted(pool);
  const std::size_t old_size = p.body.size();
  p.body.resize(old_size + added);
  std::size_t to = p.body.size();
  std::size_t next = creates.size();  // creates[next - 1] is the last one not yet inserted
  for (std::size_t from = old_size; next > 0 && from-- > 0;) {  // below the first insertion nothing moves
    p.body[--to] = std::move(p.body[from]);
    while (next > 0 && creates[next - 1].first == from) {
      const ir::PoolId pool = creates[--next].second;
      p.body[--to] = ir::PoolCreate{pool};
      if (pool.index < before_create.size())
        for (auto it = before_create[pool.index].rbegin(); it != before_create[pool.index].rend(); ++it)
          p.body[--to] = std::move(*it);
    }
  }
  std::size_t shift = 0, done = 0;
  for (PoolRelease& r : releases) {
    while (done < creates.size() && creates[done].first <= r.original_line) shift += inserted(creates[done++].second);
    r.body_index = r.original_line + shift;
  }
  return releases;
}

/// The names of `p`'s tables that start with `prefix`: the only ones a
/// name `<prefix><n>` can clash with. (Collecting every name of a 333k
/// buffer table into a set took half a second.)
[[nodiscard]] inline std::unordered_set<std::string> names_with_prefix(const ir::Program& p, std::string_view prefix) {
  std::unordered_set<std::string> names;
  const auto note = [&](std::string_view name) {
    if (name.starts_with(prefix)) names.emplace(name);
  };
  for (const ir::BufferDecl& b : p.buffers) note(b.name);
  for (const ir::KernelDecl& k : p.kernels) note(k.name);
  for (const ir::PoolDecl& q : p.pools) note(q.name);
  for (const ir::Program& g : p.subgraphs) note(g.name);
  for (const ir::SymbolDecl& s : p.symbols)
    if (s.symbol && s.symbol.is_symbol()) note(s.symbol.name());
  note(p.name);
  return names;
}

/// `<prefix><n>` for the next `n` (from `counter`) that names nothing yet.
[[nodiscard]] inline std::string fresh_numbered_name(const std::string& prefix, std::size_t& counter,
                                                     std::unordered_set<std::string>& used) {
  for (;; ++counter) {
    std::string name = prefix + std::to_string(counter);
    if (used.insert(name).second) {
      ++counter;
      return name;
    }
  }
}

/// Per buffer of `p`, whether it is (the base of) a program output.
[[nodiscard]] inline std::vector<bool> program_output_buffers(const ir::Program& p) {
  std::vector<bool> out(p.buffers.size(), false);
  for (const ir::ProgramOutput& o : p.outputs)
    if (const auto* b = boost::variant2::get_if<ir::BufferArg>(&o))
      if (b->buffer.index < out.size()) out[b->buffer.index] = true;
  return out;
}

/// The storage bytes of `d` as an expression: storage elements times the
/// item size.
[[nodiscard]] inline expr::Expr storage_bytes_expr(const ir::BufferDecl& d) {
  const expr::Expr elements = ir::storage_elements(d.layout);
  return expr::mul(elements, elements.context().integer(static_cast<std::int64_t>(ir::itemsize(d.layout.dtype))));
}

}  // namespace wrapir::pass::detail
