#pragma once
// What the GPU benchmarks share: stopping on a failed setup step, the one
// fixture a benchmark binary holds (device objects outlive no main()), and
// the main() that skips without a device and names the GPU in the report.

#include <wrapir/cuda/context.hpp>
#include <wrapir/diagnostic.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace wrapir_bench {

/// The value, or the diagnostic on stderr and exit(1): setup must not fail.
template <class T>
T must(wrapir::Result<T> r) {
  if (!r) {
    std::fprintf(stderr, "GPU benchmark setup: %s\n", r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

/// The benchmark binary's fixture, made in main() and destroyed before the
/// context goes.
template <class Fixture>
std::optional<Fixture>& fixture() {
  static std::optional<Fixture> f;
  return f;
}

/// main(): without a device prints why and returns 0 (CI's smoke run);
/// otherwise makes the fixture with `setup()` (device 0's context current),
/// runs the benchmarks with the GPU's name and driver in the report.
template <class Fixture, class Setup>
int run_gpu_benchmarks(int argc, char** argv, const char* name, Setup&& setup) {
  namespace cuda = wrapir::cuda;
  if (auto why = cuda::no_device_reason()) {
    std::printf("%s: skipped: no CUDA device (%s)\n", name, why->c_str());
    return 0;
  }
  cuda::Context context = must(cuda::use_device(0));
  benchmark::AddCustomContext("gpu", must(cuda::device_info(0)).name);
  benchmark::AddCustomContext("cuda_driver", std::to_string(cuda::loaded_driver().version));
  fixture<Fixture>().emplace(setup());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fixture<Fixture>().reset();
  return 0;
}

}  // namespace wrapir_bench
