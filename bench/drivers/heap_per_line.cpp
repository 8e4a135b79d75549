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

#include "counting_heap.hpp"

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

int main(int argc, char** argv) {
  using counting_heap::live_bytes;
  using counting_heap::peak_bytes;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.json\n", argv[0]);
    return 2;
  }
  const long before = live_bytes;
  wrapir::Program loaded = counting_heap::load_or_exit(argv[1]);
  const double lines = static_cast<double>(loaded.body.size());
  std::printf("lines %.0f: the loaded program %.1f B/line\n", lines, (live_bytes - before) / lines);

  long base = peak_bytes = live_bytes;
  auto planned = wrapir::pass::plan_arena(std::move(loaded));
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
}
