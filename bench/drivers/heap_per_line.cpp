// Heap per line of the arena pipeline's stages, by counting allocations:
// the driver behind the heap tables of docs/performance.md ("The plan
// stage's tables narrowed", "`sizeof(Line)` from 152 to 104 bytes"). It
// replaces `operator new`/`delete` (and their aligned forms) and counts `malloc_usable_size + 8`
// (glibc's header) per block, loads a program with
// `io::program_from_json(bytes, read_at)` (the text never held), then
// prints the heap the loaded program holds and the peaks `plan_arena` and
// `python::to_python` reach above what they start from, in bytes per line:
// `to_python` twice, returning the module as a string, then writing it to
// a sink that only counts the bytes (the emitter's own memory).
// Unlike the resident set (bench/pipeline_bench.cpp), this counts capacity
// never written, and memory freed but kept by the allocator is not counted.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/drivers/heap_per_line.cpp -o heap_per_line -lboost_json
//   ./heap_per_line PROGRAM.json     # e.g. the chain of `pipeline_bench --lines=1000000 --keep=FILE`

#include <wrapir/emit/python.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/pass/arena.hpp>

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>

// The replaced operators pair malloc with free; g++ cannot see that through
// inlined library code (a std::inplace_merge temporary buffer) and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
long live_bytes = 0;
long peak_bytes = 0;
long counted(void* p) { return static_cast<long>(malloc_usable_size(p)) + 8; }
}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n != 0 ? n : 1);
  if (p == nullptr) throw std::bad_alloc{};
  live_bytes += counted(p);
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  live_bytes -= counted(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
// The aligned forms too: std::pmr's new_delete_resource allocates with them
// (the arena planner's skyline pools its map nodes, pass/detail/skyline.hpp).
void* operator new(std::size_t n, std::align_val_t al) {
  const auto a = static_cast<std::size_t>(al);
  void* p = std::aligned_alloc(a, (std::max<std::size_t>(n, 1) + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc{};
  live_bytes += counted(p);
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
  return p;
}
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { operator delete(p); }

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.json\n", argv[0]);
    return 2;
  }
  std::FILE* file = std::fopen(argv[1], "rb");
  if (file == nullptr || std::fseek(file, 0, SEEK_END) != 0) {
    std::fprintf(stderr, "cannot open %s\n", argv[1]);
    return 1;
  }
  const std::size_t bytes = static_cast<std::size_t>(std::ftell(file));
  const auto read_at = [file](std::size_t offset, std::span<char> out) -> wrapir::Result<std::size_t> {
    if (std::fseek(file, static_cast<long>(offset), SEEK_SET) != 0) return wrapir::Diagnostic{"seek failed"};
    return std::fread(out.data(), 1, out.size(), file);
  };
  const long before = live_bytes;
  auto loaded = wrapir::io::program_from_json(bytes, read_at, {});
  if (!loaded) {
    std::fprintf(stderr, "load: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const double lines = static_cast<double>(loaded.value().body.size());
  std::printf("lines %.0f: the loaded program %.1f B/line\n", lines, (live_bytes - before) / lines);

  long base = peak_bytes = live_bytes;
  auto planned = wrapir::pass::plan_arena(std::move(loaded.value()));
  if (!planned) {
    std::fprintf(stderr, "plan_arena: %s\n", planned.error().message.c_str());
    return 1;
  }
  std::printf("plan_arena: peak %.1f B/line above the program\n", (peak_bytes - base) / lines);

  base = peak_bytes = live_bytes;
  auto python = wrapir::python::to_python(planned.value().program);
  if (!python) {
    std::fprintf(stderr, "to_python: %s\n", python.error().message.c_str());
    return 1;
  }
  std::printf("to_python: peak %.1f B/line above the planned program (the module %.1f B/line)\n",
              (peak_bytes - base) / lines, static_cast<double>(python.value().size()) / lines);
  const std::size_t string_bytes = python.value().size();
  std::string().swap(python.value());

  base = peak_bytes = live_bytes;
  std::size_t sink_bytes = 0;
  const wrapir::TextSink counts{[&](std::string_view piece) -> wrapir::Result<void> {
    sink_bytes += piece.size();
    return {};
  }};
  if (auto done = wrapir::python::to_python(planned.value().program, counts); !done) {
    std::fprintf(stderr, "to_python (sink): %s\n", done.error().message.c_str());
    return 1;
  }
  if (sink_bytes != string_bytes) {
    std::fprintf(stderr, "to_python: the sink took %zu bytes, the string has %zu\n", sink_bytes, string_bytes);
    return 1;
  }
  std::printf("to_python to a sink: peak %.1f B/line above the planned program\n", (peak_bytes - base) / lines);
  std::fclose(file);
}
