// CPU time, peak/bound and peak resident set of place_in_pools on one
// generated trace: the driver behind "Pools past the depth bound" in
// docs/performance.md (how the pool planner grows once its trees reach
// their depth bound). A plain program, not a Google Benchmark binary: one
// run per process, so that the peak resident set is this run's.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude bench/drivers/pools_growth.cpp -o pools_growth
//   ./pools_growth BLOCKS [chain|fan_out|random]

#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/traces.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>

int main(int argc, char** argv) {
  using namespace wrapir::pass;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BLOCKS [chain|fan_out|random]\n", argv[0]);
    return 2;
  }
  const std::size_t n = std::strtoull(argv[1], nullptr, 10);
  const std::string_view shape = argc > 2 ? argv[2] : "chain";
  const AllocationTrace t = shape == "fan_out"  ? fan_out_trace({.blocks = n}, 1)
                            : shape == "random" ? random_trace({.blocks = n}, 2)
                                                : chain_trace({.blocks = n}, 1);
  const std::clock_t c0 = std::clock();
  const PoolPlan plan = place_in_pools(t);
  const std::clock_t c1 = std::clock();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%.*s %zu blocks: %.2f s CPU, peak/bound %.3f, max RSS %ld MB\n", static_cast<int>(shape.size()),
              shape.data(), n, static_cast<double>(c1 - c0) / CLOCKS_PER_SEC,
              static_cast<double>(plan.placement.total_bytes()) / static_cast<double>(max_live_bytes(t)),
              usage.ru_maxrss / 1024);
}
