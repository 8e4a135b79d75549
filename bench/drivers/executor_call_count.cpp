// Instructions and heap allocations per steady executor call, on the null
// CUDA driver: the driver behind "A call's fixed cost" in
// docs/performance.md. It is bench/null_driver/executor_host_bench.cpp
// (its programs, its counting `operator new`, its null-driver fixture)
// with a main of its own: `count PROGRAM N [whole]` prepares mlp (the
// tests/cuda/data export), deep (deep_mlp/64) or add (add_relu), makes 5
// warm calls, then N calls with callgrind's collection on around
// `Executor::run` only (with `whole`: around the call and the result's
// destruction), and prints the heap allocations per call. Without `count`
// it is the benchmark.
//
//   g++ -std=c++20 -O2 -g -DNDEBUG -DWRAPIR_SOURCE_DIR=\"$PWD\" -Iinclude -I/usr/local/cuda/include
//       bench/drivers/executor_call_count.cpp -o count -L. -l:libcuda.so.1 -Wl,-rpath,.
//       -lbenchmark -lboost_json -lpthread -ldl                       (one command)
//   (libcuda.so.1: bench/null_driver/null_cuda.cpp, built as that file's comment says)
//   valgrind --tool=callgrind --collect-atstart=no ./count count mlp 1000
#include <benchmark/benchmark.h>
#undef BENCHMARK_MAIN
#define BENCHMARK_MAIN() static_assert(true)
#include "../null_driver/executor_host_bench.cpp"

#include <valgrind/callgrind.h>

#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  if (argc > 3 && std::strcmp(argv[1], "count") == 0) {
    const std::string which = argv[2];
    const int n = std::atoi(argv[3]);
    const bool whole = argc > 4 && std::strcmp(argv[4], "whole") == 0;
    run::CpuKernelProviderPtr kernels;
    std::string json;
    if (which == "mlp") {
      kernels = rc::TritonKernelProvider::load(export_directory(), setup().backend).value();
      json = mlp_layernorm_gelu();
    } else if (which == "deep") {
      json = deep_mlp(64);
    } else {
      json = add_relu();
    }
    Prepared p = prepare(json, false, kernels);
    for (int i = 0; i < 5; ++i) (void)p.executor.run(p.inputs).value();
    const std::uint64_t heap_before = heap_allocations.load();
    for (int i = 0; i < n; ++i) {
      CALLGRIND_TOGGLE_COLLECT;
      auto r = p.executor.run(p.inputs);
      if (!whole) CALLGRIND_TOGGLE_COLLECT;
      benchmark::DoNotOptimize(r);
      if (!r) {
        std::cerr << r.error().message << "\n";
        return 1;
      }
      r = wrapir::Result<std::vector<run::Value>>(std::vector<run::Value>{});  // the outputs go
      if (whole) CALLGRIND_TOGGLE_COLLECT;
    }
    std::cout << which << ": heap allocations per call "
              << static_cast<double>(heap_allocations.load() - heap_before) / n << "\n";
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
}
