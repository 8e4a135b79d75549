#pragma once
// The heap counter of the memory drivers (heap_per_line.cpp,
// program_heap.cpp): `operator new`/`delete` replaced, aligned forms
// included (std::pmr allocates with them), counting per block
// `malloc_usable_size + 8` (glibc's header), so that a figure is what the
// allocator holds, not what was asked for. Capacity never written counts;
// memory freed but kept by the allocator does not. Include it in one
// translation unit: it defines the replaced operators.
#include <wrapir/io/json.hpp>

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <span>

// The replaced operators pair malloc with free; g++ cannot see that through
// inlined library code (a std::inplace_merge temporary buffer) and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace counting_heap {
inline long live_bytes = 0;
inline long live_blocks = 0;
inline long peak_bytes = 0;  // the drivers reset it to `live_bytes` where a stage starts
inline long counted(void* p) { return static_cast<long>(malloc_usable_size(p)) + 8; }
inline void* note(void* p) {
  if (p == nullptr) throw std::bad_alloc{};
  live_bytes += counted(p);
  ++live_blocks;
  peak_bytes = std::max(peak_bytes, live_bytes);
  return p;
}

/// The program in the JSON file at `path`, loaded with
/// `io::program_from_json(bytes, read_at)` (the text never held whole, as
/// pipeline_bench's `--load=chunks`), or an exit with the reason.
inline wrapir::Program load_or_exit(const char* path) {
  std::FILE* file = std::fopen(path, "rb");
  if (file == nullptr || std::fseek(file, 0, SEEK_END) != 0) {
    std::fprintf(stderr, "cannot open %s\n", path);
    std::exit(1);
  }
  const std::size_t bytes = static_cast<std::size_t>(std::ftell(file));
  const auto read_at = [file](std::size_t offset, std::span<char> out) -> wrapir::Result<std::size_t> {
    if (std::fseek(file, static_cast<long>(offset), SEEK_SET) != 0) return wrapir::Diagnostic{"seek failed"};
    return std::fread(out.data(), 1, out.size(), file);
  };
  auto loaded = wrapir::io::program_from_json(bytes, read_at, {});
  std::fclose(file);
  if (!loaded) {
    std::fprintf(stderr, "load: %s\n", loaded.error().message.c_str());
    std::exit(1);
  }
  return std::move(loaded).value();
}
}  // namespace counting_heap

void* operator new(std::size_t n) { return counting_heap::note(std::malloc(n != 0 ? n : 1)); }
void* operator new(std::size_t n, std::align_val_t al) {
  const auto a = static_cast<std::size_t>(al);
  return counting_heap::note(std::aligned_alloc(a, (std::max<std::size_t>(n, 1) + a - 1) / a * a));
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  counting_heap::live_bytes -= counting_heap::counted(p);
  --counting_heap::live_blocks;
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { operator delete(p); }
