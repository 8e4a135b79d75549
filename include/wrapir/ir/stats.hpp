#pragma once
/// \file
/// Program statistics: lines per kind, kernels, launches, allocations, the
/// bytes allocated, and a naive peak of live bytes.
///
/// The peak is naive on purpose: it walks the body once, adding a buffer's
/// storage bytes when a line creates storage for it and subtracting them
/// when a line releases it, as the line kinds' effects say (`ir/effects.hpp`):
/// `Allocated` storage (Allocate, WorkspaceAllocate, CommBufferAllocate,
/// extern results that are not multi-output tuples) and `PoolCreated`
/// pools grow it; the outputs of Conditional and WhileLoop grow it too,
/// from their line on, but are not counted as allocations (their
/// subgraphs' lines created them); `Released` storage that is not offered to a
/// Reuse (FreeIfNotReused not reused, Free of a donated input, WorkspaceFree,
/// CommBufferFree) and pools a `PoolReturned` releases shrink it. Inputs and
/// constants are not counted. Symbolic sizes are evaluated at the symbols'
/// hints (`ir/hints.hpp`); when a symbol has no hint the numbers are absent
/// and `bytes_allocated` stays symbolic. A size or sum that does not fit
/// int64 makes the numbers absent (and `bytes_allocated` null when no
/// expression holds it): statistics are never wrapped or partial.
/// Memory of different devices is separate: the peak of a program is each
/// device's own peak, summed over its devices (as the planners' max-live
/// bound and their one arena per device are, pass/trace.hpp), so a CUDA
/// program with host buffers is not measured at a moment when neither
/// device peaks. Subgraphs are counted into the totals with their parent's
/// hints; the peak is the largest of any one program's, not their sum.

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

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
  /// The sum of the storage bytes those lines create, symbolic; null when
  /// a size has no expression (a malformed layout, a constant size or sum
  /// past int64).
  expr::Expr bytes_allocated;
  /// `bytes_allocated` and the naive peak at the size hints, when every
  /// symbol they need has one and every figure fits int64 (absent
  /// otherwise, never wrapped or partial).
  std::optional<std::int64_t> bytes_allocated_at_hints;
  std::optional<std::int64_t> peak_bytes_at_hints;
};

/// Statistics of `p` and its subgraphs (see the file comment). Never
/// throws for a malformed program: what cannot be computed is left absent.
[[nodiscard]] WRAPIR_DECL ProgramStats program_stats(const Program& p);

}  // namespace wrapir::ir

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/ir/impl/stats.ipp>
#endif
