#pragma once
/// \file
/// Definitions of <wrapir/ir/stats.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/ir/stats.hpp>

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/int_math.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/hints.hpp>
#include <wrapir/ir/layout.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace wrapir::ir {

namespace detail {

class StatsWalker {
 public:
  StatsWalker(ProgramStats& stats, const Program& root) : root_(&root), stats_(stats) {}

  // Subgraphs see their parent's hints: they declare the same symbols,
  // usually without hints of their own.
  void walk(const Program& p, const expr::Bindings& inherited = {}) {
    expr::Bindings hints = inherited;
    bind_hints(p, hints);
    stats_.kernels += p.kernels.size();
    stats_.subgraphs += p.subgraphs.size();
    // Per device its live bytes and its peak (programs touch few devices).
    struct DeviceBytes {
      Device device;
      std::int64_t live = 0, peak = 0;
    };
    std::vector<DeviceBytes> devices;
    const auto on = [&](const Device& d) -> DeviceBytes& {
      for (DeviceBytes& b : devices)
        if (b.device == d) return b;
      return devices.emplace_back(DeviceBytes{d});
    };
    bool known = true;
    // Every creation and release is counted in bytes: a buffer's storage
    // bytes or a pool's size. A null `bytes` (a malformed layout, a size
    // past int64) makes the totals and the peak unknown, as does a sum past
    // int64: no figure rather than a wrapped or partial one.
    //
    // Live bytes on `device` grow by `bytes`, and its peak with them.
    auto hold = [&](expr::Expr bytes, const Device& device) {
      if (!bytes) {
        known = false;
        return;
      }
      DeviceBytes& d = on(device);
      const auto v = expr::eval(bytes, hints);
      if (!v || !wrapir::checked::add(d.live, *v, d.live)) {
        known = false;
        return;
      }
      d.peak = std::max(d.peak, d.live);
    };
    // A storage this program creates: counted as an allocation and in the
    // total, then held. (A control-flow result is only held: its subgraph's
    // lines created and counted it.)
    auto grow = [&](expr::Expr bytes, const Device& device) {
      ++stats_.allocations;
      if (!bytes) total_known_ = false;
      else if (total_known_) total_terms_.push_back(bytes);
      hold(bytes, device);
    };
    auto shrink = [&](expr::Expr bytes, const Device& device) {
      if (!bytes) return;
      DeviceBytes& d = on(device);
      if (const auto v = expr::eval(bytes, hints); v && !wrapir::checked::sub(d.live, *v, d.live)) known = false;
    };
    auto bytes_of = [&](BufferId id) { return storage_bytes_or_null(p.buffers[id.index].layout); };
    auto device_of = [&](BufferId id) -> const Device& { return p.buffers[id.index].layout.device; };
    for (const Line& line : p.body) {
      ++stats_.lines;
      ++stats_.lines_per_kind[line.index()];
      namespace fx = effect;
      for_each_effect(line, fx::Handlers{
          [&](const fx::KernelLaunched&) { ++stats_.launches; },
          // Storage of its own: not a tuple (its elements hold the storage),
          // not a pool region (the pool is counted). A control result is
          // held, not allocated here: its release below is counted, so
          // leaving it out made the live bytes drift low (regression).
          [&](const fx::Allocated& e) {
            if (!p.contains(e.buffer) || p.buffers[e.buffer.index].multi_output) return;
            if (e.storage == Storage::control_result) hold(bytes_of(e.buffer), device_of(e.buffer));
            else grow(bytes_of(e.buffer), device_of(e.buffer));
          },
          // An element of a multi-output result is a tensor the extern
          // operator allocated (the tuple itself holds no storage), and its
          // release is counted below: count it here too, or the live bytes
          // drift below zero.
          [&](const fx::Selected& e) {
            if (p.contains(e.element) && !p.buffers[e.element.index].multi_output)
              grow(bytes_of(e.element), device_of(e.element));
          },
          [&](const fx::PoolCreated& e) {
            if (!p.contains(e.pool)) return;
            if (const expr::Expr bytes = p.pools[e.pool.index].size_bytes) {
              grow(bytes, p.pools[e.pool.index].device);
            } else {
              ++stats_.allocations;  // a pool without a size: counted, not measured
            }
          },
          // Inputs, constants and multi-output tuples were never counted, so
          // their ends are not either; an offered storage lives on; a pool region's bytes go
          // with its pool.
          [&](const fx::Released& e) {
            if (e.offered || e.how == Release::pool_dealloc || !p.contains(e.buffer)) return;
            const BufferDecl& d = p.buffers[e.buffer.index];
            if (d.role == BufferRole::input || d.role == BufferRole::constant || d.multi_output) return;
            shrink(bytes_of(e.buffer), device_of(e.buffer));
          },
          [&](const fx::PoolReturned& e) {
            if (e.releases_pool && p.contains(e.pool))
              shrink(p.pools[e.pool.index].size_bytes, p.pools[e.pool.index].device);
          },
          [](const auto&) {},
      });
    }
    std::int64_t peak = 0;
    for (const DeviceBytes& d : devices)
      if (!wrapir::checked::add(peak, d.peak, peak)) known = false;
    if (!known) peaks_known_ = false;
    max_peak_ = std::max(max_peak_, peak);
    for (const Program& g : p.subgraphs) walk(g, hints);
    // The hints of the root decide the totals (subgraphs declare the same
    // symbols they receive).
    if (&p == root_) {
      // One canonical sum of every term (adding them one at a time
      // re-canonicalised the growing sum each time: quadratic in the
      // program's distinct sizes, seconds on a 1 MB program).
      expr::Expr total;
      if (total_known_ && !total_terms_.empty()) {
        try {
          total = expr::add(std::span<const expr::Expr>(total_terms_));
        } catch (const expr::Error&) {
          total_known_ = false;  // constant terms whose sum overflows int64
        }
      }
      if (!total_known_) {
        // Some size has no expression, or the sum overflows: neither the sum nor its value.
      } else if (total) {
        stats_.bytes_allocated = total;
        if (auto v = expr::eval(total, hints)) stats_.bytes_allocated_at_hints = *v;
      } else {
        stats_.bytes_allocated = p.ctx().integer(0);
        stats_.bytes_allocated_at_hints = 0;
      }
      if (peaks_known_) stats_.peak_bytes_at_hints = max_peak_;
    }
  }

 private:
  static expr::Expr storage_bytes_or_null(const Layout& l) {
    if (!validate(l)) return {};
    try {
      return storage_bytes(l);
    } catch (const expr::Error&) {
      return {};  // a product that overflows int64: no figure, never a wrong one
    }
  }

  const Program* root_;  // whose hints decide the totals
  ProgramStats& stats_;
  std::vector<expr::Expr> total_terms_;  // summed once, at the end of the root
  bool total_known_ = true;
  std::int64_t max_peak_ = 0;
  bool peaks_known_ = true;
};

}  // namespace detail

WRAPIR_DECL ProgramStats program_stats(const Program& p) {
  ProgramStats stats;
  detail::StatsWalker{stats, p}.walk(p);
  return stats;
}

}  // namespace wrapir::ir
