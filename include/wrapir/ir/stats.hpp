#pragma once
/// \file
/// Program statistics: lines per kind, kernels, launches, allocations, the
/// bytes allocated, and a naive peak of live bytes.
///
/// The peak is naive on purpose: it walks the body once, adding a buffer's
/// storage bytes when a line creates storage for it (Allocate,
/// WorkspaceAllocate, CommBufferAllocate, PoolCreate, ExternKernelAlloc
/// results) and subtracting them when a line releases it (FreeIfNotReused
/// that was not reused, Free of a donated input, WorkspaceFree,
/// CommBufferFree, DeallocFromPool releasing its pool). Inputs and constants
/// are not counted. Symbolic sizes are evaluated at the symbols' hints; when
/// a symbol has no hint the numbers are absent and `bytes_allocated` stays
/// symbolic. Subgraphs are counted into the totals with their parent's hints;
/// the peak is the largest of any one program's, not their sum.

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

namespace wrapir::ir {

struct ProgramStats {
  /// Lines of each kind, indexed like `Line` (`line_kind_index<T>`).
  std::array<std::size_t, line_kind_count> lines_per_kind{};
  std::size_t lines = 0;
  std::size_t subgraphs = 0;
  std::size_t kernels = 0;
  /// KernelCall and MultiKernelCall lines.
  std::size_t launches = 0;
  /// Lines that create storage (see the file comment).
  std::size_t allocations = 0;
  /// The sum of the storage bytes those lines create, symbolic.
  expr::Expr bytes_allocated;
  /// `bytes_allocated` and the naive peak at the size hints, when every
  /// symbol they need has one.
  std::optional<std::int64_t> bytes_allocated_at_hints;
  std::optional<std::int64_t> peak_bytes_at_hints;
};

namespace detail {

// A template only so that its code is compiled where program_stats is
// called, not in every translation unit that includes this header.
template <class Deferred>
class StatsWalker {
 public:
  explicit StatsWalker(ProgramStats& stats) : stats_(stats) {}

  // Subgraphs see their parent's hints: they declare the same symbols,
  // usually without hints of their own.
  void walk(const Program& p, const expr::Bindings& inherited = {}) {
    expr::Bindings hints = inherited;
    for (const SymbolDecl& s : p.symbols)
      if (s.symbol && s.hint) hints.set(s.symbol, *s.hint);
    stats_.kernels += p.kernels.size();
    stats_.subgraphs += p.subgraphs.size();
    std::int64_t live = 0, peak = 0;
    bool known = true;
    // Every creation and release is counted in bytes: a buffer's storage
    // bytes or a pool's size. A null `bytes` (a malformed layout) makes the
    // peak unknown.
    auto grow = [&](expr::Expr bytes) {
      ++stats_.allocations;
      if (!bytes) {
        known = false;
        return;
      }
      total_ = total_ ? expr::add(total_, bytes) : bytes;
      auto v = expr::eval(bytes, hints);
      if (!v) {
        known = false;
        return;
      }
      live += *v;
      peak = std::max(peak, live);
    };
    auto shrink = [&](expr::Expr bytes) {
      if (!bytes) return;
      if (auto v = expr::eval(bytes, hints)) live -= *v;
    };
    auto bytes_of = [&](BufferId id) { return storage_bytes_or_null(p.buffers[id.index].layout); };
    for (const Line& line : p.body) {
      ++stats_.lines;
      ++stats_.lines_per_kind[line.index()];
      std::visit(
          [&](const auto& l) {
            using T = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<T, KernelCall> || std::is_same_v<T, MultiKernelCall>) {
              ++stats_.launches;
            } else if constexpr (std::is_same_v<T, Allocate> || std::is_same_v<T, CommBufferAllocate>) {
              if (p.contains(l.buffer)) grow(bytes_of(l.buffer));
            } else if constexpr (std::is_same_v<T, WorkspaceAllocate>) {
              if (p.contains(l.workspace)) grow(bytes_of(l.workspace));
            } else if constexpr (std::is_same_v<T, ExternKernelAlloc>) {
              if (l.result && p.contains(*l.result) && !p.buffers[l.result->index].multi_output)
                grow(bytes_of(*l.result));
            } else if constexpr (std::is_same_v<T, PoolCreate>) {
              if (!p.contains(l.pool)) return;
              if (const expr::Expr bytes = p.pools[l.pool.index].size_bytes) {
                grow(bytes);
              } else {
                ++stats_.allocations;  // a pool without a size: counted, not measured
              }
            } else if constexpr (std::is_same_v<T, FreeIfNotReused>) {
              if (!l.reused && p.contains(l.buffer)) shrink(bytes_of(l.buffer));
            } else if constexpr (std::is_same_v<T, Free> || std::is_same_v<T, CommBufferFree>) {
              if (p.contains(l.buffer) && p.buffers[l.buffer.index].role != BufferRole::input) shrink(bytes_of(l.buffer));
            } else if constexpr (std::is_same_v<T, WorkspaceFree>) {
              if (p.contains(l.workspace)) shrink(bytes_of(l.workspace));
            } else if constexpr (std::is_same_v<T, DeallocFromPool>) {
              if (l.releases_pool && p.contains(l.pool)) shrink(p.pools[l.pool.index].size_bytes);
            }
          },
          line);
    }
    if (!known) peaks_known_ = false;
    max_peak_ = std::max(max_peak_, peak);
    for (const Program& g : p.subgraphs) walk(g, hints);
    // The hints of the root decide the totals (subgraphs declare the same
    // symbols they receive).
    if (&p == root_) {
      if (total_) {
        stats_.bytes_allocated = total_;
        if (auto v = expr::eval(total_, hints)) stats_.bytes_allocated_at_hints = *v;
      } else {
        stats_.bytes_allocated = p.ctx().integer(0);
        stats_.bytes_allocated_at_hints = 0;
      }
      if (peaks_known_) stats_.peak_bytes_at_hints = max_peak_;
    }
  }

  const Program* root_ = nullptr;

 private:
  static expr::Expr storage_bytes_or_null(const Layout& l) {
    if (validate(l)) return {};
    try {
      return storage_bytes(l);
    } catch (const expr::Error&) {
      return {};  // a product that overflows int64: no figure, never a wrong one
    }
  }

  ProgramStats& stats_;
  expr::Expr total_;
  std::int64_t max_peak_ = 0;
  bool peaks_known_ = true;
};

}  // namespace detail

/// Statistics of `p` and its subgraphs (see the file comment). Never
/// throws for a malformed program: what cannot be computed is left absent.
template <class P>
  requires std::same_as<P, Program>
[[nodiscard]] ProgramStats program_stats(const P& p) {
  ProgramStats stats;
  detail::StatsWalker<P> walker{stats};
  walker.root_ = &p;
  walker.walk(p);
  return stats;
}

}  // namespace wrapir::ir
