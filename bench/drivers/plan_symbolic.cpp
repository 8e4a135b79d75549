// CPU time and peak resident set of plan_arena on a program whose every
// other buffer has its own symbolic size (program_from_trace(...,
// {.symbolic = true})): the driver behind the scratch-driver table of
// "Symbolic offsets by family" in docs/performance.md. A plain program, not
// a Google Benchmark binary: one run per process, so that the peak resident
// set is this run's.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/drivers/plan_symbolic.cpp -o plan_symbolic
//   ./plan_symbolic BUFFERS [chain|random|transformer]

#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/traces.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>

int main(int argc, char** argv) {
  using namespace wrapir::pass;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BUFFERS [chain|random|transformer]\n", argv[0]);
    return 2;
  }
  const std::size_t n = std::strtoull(argv[1], nullptr, 10);
  const std::string_view shape = argc > 2 ? argv[2] : "transformer";
  const AllocationTrace t = shape == "chain"    ? chain_trace({.blocks = n}, 1)
                            : shape == "random" ? random_trace({.blocks = n}, 2)
                                                : transformer_trace({.layers = n / 14}, 1);
  auto program = program_from_trace(t, {.symbolic = true});
  const std::clock_t start = std::clock();
  auto planned = plan_arena(program);
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  if (!planned) {
    std::printf("error: %s\n", planned.error().message.c_str());
    return 1;
  }
  const auto& stats = planned.value().stats;
  std::printf("%.*s n=%zu cpu=%.3f s peak/bound=%.3f maxrss=%ld MB\n", static_cast<int>(shape.size()), shape.data(),
              t.allocations.size(), seconds,
              static_cast<double>(stats.peak_bytes) / static_cast<double>(stats.lower_bound_bytes), usage.ru_maxrss / 1024);
  return 0;
}
