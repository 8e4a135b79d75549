#pragma once
/// \file
/// A portable software prefetch for the planners' loops over large
/// programs and traces. Each of those loops reads, per element, data that
/// sits elsewhere on the heap and is a cache miss the loop waits on; the
/// element some iterations ahead is known, so its data is asked for early
/// and the misses overlap. The loops that use it, with their reasons next
/// to them:
/// - `ArenaPacker::pack` (pass/arena.hpp): the segment-tree nodes and range
///   lists of the block placed a few blocks later;
/// - `ReusePlanner::run` (pass/reuse.hpp): the declaration of the buffer a
///   line some lines ahead frees or allocates;
/// - `spans_from` (pass/liveness.hpp): the sizes and strides of a block's
///   layout some blocks ahead.
/// Without it (g++ 12.2 -O3, medians of 3 on a loaded 2-core VM) the
/// 100k-block arena benchmarks of bench/plan_bench.cpp were 3-9% slower;
/// the gains in the other two loops were not measured on their own.
///
/// A hint only: it never faults and changes no result, so where no
/// prefetch instruction is known it does nothing.

#if defined(_MSC_VER) && !defined(__clang__) && (defined(_M_X64) || defined(_M_IX86))
#include <xmmintrin.h>
#endif

namespace wrapir::pass::detail {

/// Asks the processor to load the cache line at `address` (for reading,
/// into every cache level), which the caller reads soon.
inline void prefetch(const void* address) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(address);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
  _mm_prefetch(static_cast<const char*>(address), _MM_HINT_T0);
#else
  (void)address;
#endif
}

}  // namespace wrapir::pass::detail
