#pragma once
/// \file
/// `advise_huge_pages`: asks Linux to back a large, freshly reserved
/// buffer with 2 MiB pages (`madvise(MADV_HUGEPAGE)`); elsewhere, nothing.
///
/// Why: an emitter that writes a 170 MB output (the FX text of a 1M-line
/// program) into fresh memory takes a page fault for every 4 KiB it
/// touches, about 43 000 of them, and on the development VM the faults'
/// own cost (entry, memory-cgroup charge, page allocation) was more than
/// the zeroing of the pages: a fifth of the emission. With 2 MiB pages
/// there are about a hundred faults; the pages are zeroed all the same.
/// Measured in docs/performance.md (helper `fx2m`): the 1M-line FX
/// emission went from about 650 to about 360 ms CPU, the first emission of
/// a fresh process included.
///
/// What it costs: where the system's THP setting is `madvise` (a common
/// default) the kernel may compact memory to find a 2 MiB page when free
/// memory is fragmented, a stall the fault then waits for; where it is
/// `never`, the advice is ignored. A buffer reserved and not written is
/// still not touched (the pages come on first write, 2 MiB at a time), so
/// at most 2 MiB past the written end is committed.
///
/// Only buffers of at least `huge_page_threshold` bytes are advised: glibc
/// maps every allocation that large on its own (32 MiB is its largest
/// mmap threshold), so the advice never covers memory of other objects.

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace wrapir::detail {

inline constexpr std::size_t huge_page_threshold = std::size_t{32} << 20;

/// Advises the whole 2 MiB pages inside [data, data + bytes); failure is
/// ignored (the advice is only a hint, and the memory works either way).
inline void advise_huge_pages([[maybe_unused]] void* data, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < huge_page_threshold) return;
  constexpr std::uintptr_t page = std::uintptr_t{1} << 21;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(page - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

}  // namespace wrapir::detail
