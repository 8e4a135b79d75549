// Host cost of launching through wrapir::cuda, against the driver itself.
//
// Every benchmark launches the same empty kernel with four parameters
// (float*, const float*, int, int64) on one stream, back to back, and
// synchronises only after its timing loop: the figure is host time per
// launch, which is what a wrapper adds. Targets (issue 5): wrapir::cuda::launch
// within 5 % of a raw cuLaunchKernel loop; multi-kernel dispatch after the
// choice within 20 ns of a direct launch. Anchors (../shared/reference/
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
#include <wrapir/cuda/stream.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <benchmark/benchmark.h>

#include <array>
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
  cuda::Context context;
  cuda::Module module;
  cuda::Function empty;
  cuda::Stream stream;
  cuda::DeviceBuffer a, b;
};

std::optional<Fixture>& fixture() {
  static std::optional<Fixture> f;
  return f;
}

template <class T>
T must(wrapir::Result<T> r) {
  if (!r) {
    std::fprintf(stderr, "launch_bench: %s\n", r.error().message.c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

void sync_or_fail(benchmark::State& state) {
  if (auto s = fixture()->stream.synchronize(); !s) state.SkipWithError(s.error().message.c_str());
}

constexpr cuda::Dim3 one{1, 1, 1};

void BM_RawCuLaunchKernel(benchmark::State& state) {
  Fixture& f = *fixture();
  const cuda::Driver& d = cuda::loaded_driver();
  CUdeviceptr out = f.a.address(), in = f.b.address();
  int n = 1024;
  std::int64_t m = 4096;
  std::array<void*, 4> params{&out, &in, &n, &m};
  const CUfunction fn = f.empty.get();
  const CUstream stream = f.stream.get();
  for (auto _ : state) {
    if (d.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, params.data(), nullptr) != CUDA_SUCCESS) {
      state.SkipWithError("cuLaunchKernel failed");
      break;
    }
  }
  sync_or_fail(state);
}
BENCHMARK(BM_RawCuLaunchKernel);

void BM_WrapirLaunch(benchmark::State& state) {
  Fixture& f = *fixture();
  const cuda::LaunchConfig config{one, {32}, 0, f.stream.get()};
  const CUdeviceptr out = f.a.address(), in = f.b.address();
  const int n = 1024;
  const std::int64_t m = 4096;
  for (auto _ : state) {
    auto s = cuda::launch(f.empty, config, out, in, n, m);
    if (!s) [[unlikely]] {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
  sync_or_fail(state);
}
BENCHMARK(BM_WrapirLaunch);

void BM_WrapirTypedKernel(benchmark::State& state) {
  Fixture& f = *fixture();
  using Empty = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, int, std::int64_t>;
  const Empty kernel = must(Empty::bind(f.empty));
  const cuda::LaunchConfig config{one, {32}, 0, f.stream.get()};
  const auto out = f.a.as<float>();
  const auto in = f.b.as<float>();
  const int n = 1024;
  const std::int64_t m = 4096;
  for (auto _ : state) {
    auto s = kernel(config, out, in, n, m);
    if (!s) [[unlikely]] {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
  sync_or_fail(state);
}
BENCHMARK(BM_WrapirTypedKernel);

// ---- multi-kernel dispatch ----------------------------------------------
// A combined argument list of 8-byte slots; each candidate's launcher packs
// the addresses of its slice, as a generated launcher would.

using Slot = std::uint64_t;

struct SlotLauncher {
  const std::array<cuda::Function, 2>* functions;
  CUstream stream;
  // The dispatcher's launchers return nothing: a failed launch throws.
  void operator()(std::size_t candidate, wrapir::run::SlicedArgs<Slot> args) const {
    const std::span<const Slot> slots = *args.contiguous();  // one slice: always contiguous
    std::array<void*, 4> params{};
    for (std::size_t i = 0; i < 4; ++i) params[i] = const_cast<Slot*>(&slots[i]);
    auto s = cuda::detail::launch_packed((*functions)[candidate], {one, {32}, 0, stream}, params.data());
    if (!s) [[unlikely]]
      throw std::runtime_error(s.error().message);
  }
};

/// Both candidates "take" 1 ms and 2 ms: the choice is made before timing.
struct ScriptedTimer {
  template <class Prepare, class Run>
  std::vector<double> operator()(const wrapir::run::BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    prepare();
    run();
    return {plan.candidate == 1 ? 1.0 : 2.0};
  }
};

std::array<Slot, 4> slots() {
  Fixture& f = *fixture();
  std::array<Slot, 4> s{f.a.address(), f.b.address(), 0, 4096};
  const int n = 1024;
  std::memcpy(&s[2], &n, sizeof n);  // the int parameter reads the first 4 bytes
  return s;
}

wrapir::run::MultiKernelPlan plan() {
  wrapir::run::MultiKernelOptions options;
  options.cache_enabled = false;
  options.warmup = 0;
  options.repetitions = 1;
  return must(wrapir::run::make_multi_kernel_plan(
      wrapir::run::MultiKernelSpec{"multi_kernel_0", 4, {{"empty_a", "", {{0, 4}}, {}}, {"empty_b", "", {{0, 4}}, {}}}},
      options));
}

void BM_DirectSlotLaunch(benchmark::State& state) {
  Fixture& f = *fixture();
  const std::array<cuda::Function, 2> functions{f.empty, f.empty};
  const SlotLauncher launcher{&functions, f.stream.get()};
  const std::array<Slot, 4> args = slots();
  const auto p = plan();
  const wrapir::run::SlicedArgs<Slot> view = *p.arguments_for<Slot>(1, args);
  for (auto _ : state) launcher(1, view);
  sync_or_fail(state);
}
BENCHMARK(BM_DirectSlotLaunch);

void BM_MultiKernelDispatch(benchmark::State& state) {
  Fixture& f = *fixture();
  const std::array<cuda::Function, 2> functions{f.empty, f.empty};
  auto dispatcher = wrapir::run::make_multi_kernel_dispatcher<Slot>(plan(), SlotLauncher{&functions, f.stream.get()},
                                                                    ScriptedTimer{}, wrapir::run::NoRestore{});
  const std::array<Slot, 4> args = slots();
  if (!(dispatcher(args) == std::size_t{1})) state.SkipWithError("the dispatcher chose the wrong candidate");
  for (auto _ : state) {
    auto launched = dispatcher(args);
    benchmark::DoNotOptimize(launched);
  }
  sync_or_fail(state);
}
BENCHMARK(BM_MultiKernelDispatch);

}  // namespace

int main(int argc, char** argv) {
  if (auto why = cuda::no_device_reason()) {
    std::printf("launch_bench: skipped: no CUDA device (%s)\n", why->c_str());
    return 0;
  }
  cuda::Context context = must(cuda::use_device(0));
  cuda::Module module = must(cuda::Module::load_file(WRAPIR_BENCH_KERNELS_CUBIN));
  cuda::Function empty = must(module.function("empty_with_args"));
  cuda::Stream stream = must(cuda::Stream::create());
  cuda::DeviceBuffer a = must(cuda::DeviceBuffer::allocate(4096));
  cuda::DeviceBuffer b = must(cuda::DeviceBuffer::allocate(4096));
  const cuda::DeviceInfo info = must(cuda::device_info(0));
  benchmark::AddCustomContext("gpu", info.name);
  benchmark::AddCustomContext("cuda_driver", std::to_string(cuda::loaded_driver().version));
  fixture().emplace(Fixture{std::move(context), std::move(module), empty, std::move(stream), std::move(a), std::move(b)});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fixture().reset();
  return 0;
}
