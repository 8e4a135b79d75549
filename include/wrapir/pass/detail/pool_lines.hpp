#pragma once
/// \file
/// The body rewrite the pool and arena planners share: once each planned
/// buffer has a pool and an offset, its Allocate becomes AllocFromPool (the
/// pool's first one preceded by PoolCreate) and its frees become
/// DeallocFromPool, or Null for a free that a Reuse took over. Which
/// DeallocFromPool releases its pool is each planner's own rule, so the
/// rewrite only reports where it put them.

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <optional>
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
/// that stays as it was, before it is kept. Returns the DeallocFromPool
/// lines in body order, none releasing its pool yet.
template <class Slot, class PoolOf, class Keep>
std::vector<PoolRelease> rewrite_into_pools(ir::Program& p, Slot&& slot, PoolOf&& pool_of, Keep&& keep) {
  std::vector<ir::Line> body;
  body.reserve(p.body.size() + p.pools.size());
  std::vector<bool> created(p.pools.size(), false);
  std::vector<PoolRelease> releases;
  for (std::size_t i = 0; i < p.body.size(); ++i) {
    ir::Line& line = p.body[i];
    if (const auto* a = std::get_if<ir::Allocate>(&line)) {
      if (std::optional<PoolSlot> s = slot(a->buffer)) {
        if (!created[s->pool.index]) {
          body.push_back(ir::PoolCreate{s->pool});
          created[s->pool.index] = true;
        }
        body.push_back(ir::AllocFromPool{a->buffer, s->pool, s->offset_bytes});
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
          body.push_back(ir::Null{});
        } else {
          releases.push_back(PoolRelease{body.size(), i, *pool});
          body.push_back(ir::DeallocFromPool{*freed, *pool, false});
        }
        continue;
      }
    }
    keep(line);
    body.push_back(std::move(line));
  }
  p.body = std::move(body);
  return releases;
}

}  // namespace wrapir::pass::detail
