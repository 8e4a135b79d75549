// Heap peak of plan_arena(Program&&) above the loaded program, per line:
// the driver behind "The plan stage's own memory" in docs/performance.md.
// A plain program (a replaced operator new counts the heap), not a Google
// Benchmark binary, so it is not in bench/*_bench.cpp.
#include "bench_programs.hpp"
#include <malloc.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>
#include <wrapir/pass/arena.hpp>
static std::size_t live = 0, peak = 0;
void* operator new(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  live += malloc_usable_size(p);
  if (live > peak) peak = live;
  return p;
}
void operator delete(void* p) noexcept { if (p) { live -= malloc_usable_size(p); std::free(p); } }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
int main(int argc, char** argv) {
  std::size_t lines = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  wrapir::ir::Program p = wrapir::bench::make_program(lines, false);
  const double n = static_cast<double>(p.body.size());
  const std::size_t base = live;
  peak = live;
  const double c0 = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  auto planned = wrapir::pass::plan_arena(std::move(p));
  const double c1 = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  if (!planned) { std::printf("error %s\n", planned.error().message.c_str()); return 1; }
  std::printf("lines %.0f: program %.1f B/line; plan_arena peak above it %.1f B/line, after %.1f B/line; CPU %.2f s\n", n,
              base / n, (peak - base) / n, (double(live) - double(base)) / n, c1 - c0);
}
