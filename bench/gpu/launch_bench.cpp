// Host cost of launching through wrapir::cuda, against the driver itself.
//
// Every benchmark launches the same empty kernel with four parameters
// (float*, const float*, int, int64) on one stream, in timed batches of 32
// with an untimed wait for the GPU after each: the figure is host time per
// launch, which is what a wrapper adds, not the GPU's pace. Targets (issue 5): wrapir::cuda::launch
// within 5 % of a raw cuLaunchKernel loop; multi-kernel dispatch after the
// choice within 20 ns of a direct launch (BM_MultiKernelDispatch against
// BM_WrapirLaunch). Anchors (../shared/reference/
// anchors.md): raw launch 3.1–3.6 µs, Inductor's Python wrapper ≈ 17 µs per
// launch, on an H100.
//
// Run on the GPU machine; alternate the variants so that drift in the
// machine's load falls on all of them:
//   launch_bench --benchmark_enable_random_interleaving=true --benchmark_repetitions=10
//                --benchmark_report_aggregates_only=true
// The kernels come from the cubin the build makes of tests/cuda/kernels/
// test_kernels.cu (WRAPIR_BENCH_KERNELS_CUBIN). Without a device the binary
// prints why and exits 0, so CI's smoke run passes.

#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/multi_kernel.hpp>
#include <wrapir/cuda/stream.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <benchmark/benchmark.h>

#include "gpu_bench.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuda = wrapir::cuda;

namespace {

struct Fixture {
  cuda::Module module;
  cuda::Function empty;
  cuda::Stream stream;
  cuda::DeviceBuffer a, b;
};

Fixture& fixture() { return *wrapir_bench::fixture<Fixture>(); }
using wrapir_bench::must;

constexpr cuda::Dim3 one{1, 1, 1};

// Host time per launch, without the GPU's pace in it: each iteration
// enqueues a batch of launches (timed, manual time) and then waits for the
// GPU (untimed), so the launch queue never fills and blocks the host. Items
// are launches: the report's ns/item is the cost of one.
constexpr int launches_per_batch = 32;

template <class LaunchOne>
void time_launches(benchmark::State& state, LaunchOne&& launch_one) {
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    for (int i = 0; i < launches_per_batch; ++i) ok &= launch_one();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!ok) [[unlikely]] {
      state.SkipWithError("a launch failed");
      break;
    }
    if (auto s = fixture().stream.synchronize(); !s) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * launches_per_batch);
}

#define WRAPIR_LAUNCH_BENCHMARK(bm) BENCHMARK(bm)->UseManualTime()->Iterations(4000)

void BM_RawCuLaunchKernel(benchmark::State& state) {
  Fixture& f = fixture();
  const cuda::Driver& d = cuda::loaded_driver();
  CUdeviceptr out = f.a.address(), in = f.b.address();
  int n = 1024;
  std::int64_t m = 4096;
  std::array<void*, 4> params{&out, &in, &n, &m};
  const CUfunction fn = f.empty.get();
  const CUstream stream = f.stream.get();
  time_launches(state,
                [&] { return d.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, params.data(), nullptr) == CUDA_SUCCESS; });
}
WRAPIR_LAUNCH_BENCHMARK(BM_RawCuLaunchKernel);

void BM_WrapirLaunch(benchmark::State& state) {
  Fixture& f = fixture();
  const cuda::LaunchConfig config{one, {32}, 0, f.stream.get()};
  const CUdeviceptr out = f.a.address(), in = f.b.address();
  const int n = 1024;
  const std::int64_t m = 4096;
  time_launches(state, [&] { return cuda::launch(f.empty, config, out, in, n, m).ok(); });
}
WRAPIR_LAUNCH_BENCHMARK(BM_WrapirLaunch);

void BM_WrapirTypedKernel(benchmark::State& state) {
  Fixture& f = fixture();
  using Empty = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, int, std::int64_t>;
  const Empty kernel = must(Empty::bind(f.empty));
  const cuda::LaunchConfig config{one, {32}, 0, f.stream.get()};
  const auto out = f.a.as<float>();
  const auto in = f.b.as<float>();
  const int n = 1024;
  const std::int64_t m = 4096;
  time_launches(state, [&] { return kernel(config, out, in, n, m).ok(); });
}
WRAPIR_LAUNCH_BENCHMARK(BM_WrapirTypedKernel);

// ---- multi-kernel dispatch ----------------------------------------------
// The CUDA backend's own launcher (cuda::MultiKernelLauncher: KernelArg
// packing, per-launch count and size checks) behind the dispatcher, against
// cuda::launch of the same kernel with the same arguments. The choice is made
// before timing by a scripted timer; what is left is the cost of dispatching.

/// Candidate 1 "takes" 1 ms and candidate 0 2 ms.
struct ScriptedTimer {
  template <class Prepare, class Run>
  std::vector<double> operator()(const wrapir::run::BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    prepare();
    run();
    return {plan.candidate == 1 ? 1.0 : 2.0};
  }
};

void BM_MultiKernelDispatch(benchmark::State& state) {
  Fixture& f = fixture();
  wrapir::run::MultiKernelOptions options;
  options.cache_enabled = false;
  options.warmup = 0;
  options.repetitions = 1;
  auto plan = must(wrapir::run::make_multi_kernel_plan(
      wrapir::run::MultiKernelSpec{"multi_kernel_0", 4, {{"empty_a", "", {{0, 4}}, {}}, {"empty_b", "", {{0, 4}}, {}}}},
      options));
  const cuda::LaunchConfig config{one, {32}, 0, f.stream.get()};
  auto dispatcher = wrapir::run::make_multi_kernel_dispatcher<cuda::KernelArg>(
      std::move(plan), must(cuda::MultiKernelLauncher::create({{f.empty, config}, {f.empty, config}})),
      ScriptedTimer{}, wrapir::run::NoRestore{});
  const std::array<cuda::KernelArg, 4> args{f.a.as<float>(), f.b.as<float>(), cuda::KernelArg::value(1024),
                                            cuda::KernelArg::value(std::int64_t{4096})};
  if (!(dispatcher(args) == std::size_t{1})) state.SkipWithError("the dispatcher chose the wrong candidate");
  time_launches(state, [&] { return dispatcher(args).ok(); });
}
WRAPIR_LAUNCH_BENCHMARK(BM_MultiKernelDispatch);

}  // namespace

int main(int argc, char** argv) {
  return wrapir_bench::run_gpu_benchmarks<Fixture>(argc, argv, "launch_bench", [] {
    cuda::Module module = must(cuda::Module::load_file(WRAPIR_BENCH_KERNELS_CUBIN));
    cuda::Function empty = must(module.function("empty_with_args"));
    return Fixture{std::move(module), empty, must(cuda::Stream::create()), must(cuda::DeviceBuffer::allocate(4096)),
                   must(cuda::DeviceBuffer::allocate(4096))};
  });
}
