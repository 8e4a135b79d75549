// What naming a loaded kernel costs (run/kernel_identity.hpp): the PTX,
// cubin and Triton providers hash the bytes of each file they load, once
// per kernel when the executor is prepared, so that a binary rebuilt in
// place is benchmarked again by a multi-kernel. Sizes: the Triton cubins of
// the export in tests/cuda/data are 9 and 16 KB; 1 MB stands for a large
// fatbin.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/kernel_identity_bench.cpp -o kernel_identity_bench
//       -lbenchmark -lbenchmark_main -lpthread      (one command line)
//   ./kernel_identity_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <wrapir/run/kernel_identity.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;

void BM_loaded_kernel_identity(benchmark::State& state) {
  std::string image(static_cast<std::size_t>(state.range(0)), '\0');
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<char>((i * 2654435761U) >> 24);
  const std::vector<ir::KernelParam> signature{{"out", ir::ParamType{true, ir::DType::float32}},
                                               {"x", ir::ParamType{true, ir::DType::float32}},
                                               {"n", ir::ParamType{false, ir::DType::int32}}};
  ir::KernelMetadata metadata;
  metadata.num_warps = 4;
  const ir::BinaryRef ref{"kernels/k.cubin", "k"};
  const run::KernelRequest request{"k", ir::KernelLanguage::cubin, "", signature, &metadata, &ref};
  const std::string_view loaded(image);
  for (auto _ : state) {
    std::string id = run::loaded_kernel_identity(request, std::span(&loaded, 1));
    benchmark::DoNotOptimize(id);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

}  // namespace

BENCHMARK(BM_loaded_kernel_identity)->Arg(16 << 10)->Arg(64 << 10)->Arg(1 << 20);
