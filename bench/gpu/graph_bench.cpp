// CUDA graph replay against direct launches, and the cost of keeping a
// captured graph current (cuda/graph.hpp).
//
// For K = 1, 100 and 1000 empty kernels (four parameters each, one block):
//   BM_DirectLaunchHost/K   host time to enqueue K launches with cuda::launch
//   BM_GraphReplayHost/K    host time of one replay (cuGraphLaunch) of K nodes
//   BM_GraphReplayGpu/K     GPU time of one replay, by events
//   BM_CaptureInstantiate/K capture + instantiate, once per shape
//   BM_UpdateArguments/K    point all K kernel nodes at other buffers in place
// Each iteration waits for the GPU outside its timed part (manual time), so
// host figures are not inflated by a full launch queue. items/s is kernels/s:
// the table's ns/item is the cost per kernel. Anchors (../shared/reference/
// anchors.md): replay of 1000 empty kernels ≈ 0.79 µs per node (GPU-bound),
// cudaGraphInstantiate ≈ 4 µs per node, raw launch 3.1–3.6 µs.
//
//   graph_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/graph.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/stream.hpp>

#include <benchmark/benchmark.h>

#include "gpu_bench.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace cuda = wrapir::cuda;

namespace {

using Empty = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, int, std::int64_t>;

struct Fixture {
  cuda::Module module;
  Empty empty;
  cuda::Stream stream;
  cuda::DeviceBuffer a, b;
  cuda::Event start, stop;
};

Fixture& fixture() { return *wrapir_bench::fixture<Fixture>(); }
using wrapir_bench::must;

bool ok(benchmark::State& state, const cuda::Status& s) {
  if (s) return true;
  state.SkipWithError(s.error().message.c_str());
  return false;
}

// Manual time counts only the timed part of an iteration, and the library
// runs iterations until that part reaches its minimum time: a 2 µs replay
// followed by a 0.8 ms wait for the GPU would run for minutes. So each size
// gets a fixed iteration count (about 0.5 s of wall time per repetition).
#define WRAPIR_PER_SIZE(bm)                                \
  BENCHMARK(bm)->Arg(1)->Iterations(4000)->UseManualTime(); \
  BENCHMARK(bm)->Arg(100)->Iterations(1000)->UseManualTime(); \
  BENCHMARK(bm)->Arg(1000)->Iterations(200)->UseManualTime()

constexpr cuda::LaunchConfig config_on(CUstream s) { return {{1, 1, 1}, {32, 1, 1}, 0, s}; }

cuda::Status launch_k(std::int64_t k, CUstream s) {
  Fixture& f = fixture();
  for (std::int64_t i = 0; i < k; ++i)
    if (auto st = f.empty(config_on(s), f.a.as<float>(), f.b.as<float>(), 1024, i); !st) return st;
  return {};
}

cuda::GraphExec capture(std::int64_t k) {
  Fixture& f = fixture();
  return must(cuda::capture_and_instantiate(f.stream, [k](CUstream s) { return launch_k(k, s); }));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_DirectLaunchHost(benchmark::State& state) {
  Fixture& f = fixture();
  const std::int64_t k = state.range(0);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const cuda::Status s = launch_k(k, f.stream);
    state.SetIterationTime(seconds_since(t0));
    if (!ok(state, s) || !ok(state, f.stream.synchronize())) break;
  }
  state.SetItemsProcessed(state.iterations() * k);
}
WRAPIR_PER_SIZE(BM_DirectLaunchHost);

void BM_GraphReplayHost(benchmark::State& state) {
  Fixture& f = fixture();
  const std::int64_t k = state.range(0);
  const cuda::GraphExec exec = capture(k);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const cuda::Status s = exec.launch(f.stream);
    state.SetIterationTime(seconds_since(t0));
    if (!ok(state, s) || !ok(state, f.stream.synchronize())) break;
  }
  state.SetItemsProcessed(state.iterations() * k);
}
WRAPIR_PER_SIZE(BM_GraphReplayHost);

void BM_GraphReplayGpu(benchmark::State& state) {
  Fixture& f = fixture();
  const std::int64_t k = state.range(0);
  const cuda::GraphExec exec = capture(k);
  for (auto _ : state) {
    if (!ok(state, f.start.record(f.stream)) || !ok(state, exec.launch(f.stream)) ||
        !ok(state, f.stop.record(f.stream)))
      break;
    auto ms = cuda::elapsed_ms(f.start, f.stop);
    if (!ms) {
      state.SkipWithError(ms.error().message.c_str());
      break;
    }
    state.SetIterationTime(static_cast<double>(*ms) / 1e3);
  }
  state.SetItemsProcessed(state.iterations() * k);
}
WRAPIR_PER_SIZE(BM_GraphReplayGpu);

void BM_CaptureInstantiate(benchmark::State& state) {
  const std::int64_t k = state.range(0);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    cuda::GraphExec exec = capture(k);
    state.SetIterationTime(seconds_since(t0));
    benchmark::DoNotOptimize(exec.get());
  }
  state.SetItemsProcessed(state.iterations() * k);
}
WRAPIR_PER_SIZE(BM_CaptureInstantiate);

void BM_UpdateArguments(benchmark::State& state) {
  Fixture& f = fixture();
  const std::int64_t k = state.range(0);
  cuda::GraphExec exec = capture(k);
  bool flip = false;
  for (auto _ : state) {
    flip = !flip;
    const auto out = flip ? f.b.as<float>() : f.a.as<float>();
    const auto in = flip ? f.a.as<float>() : f.b.as<float>();
    const auto t0 = std::chrono::steady_clock::now();
    cuda::Status s;
    for (std::int64_t i = 0; i < k && s; ++i)
      s = exec.update_kernel(static_cast<std::size_t>(i), out, cuda::DevicePtr<const float>(in), 1024, i);
    state.SetIterationTime(seconds_since(t0));
    if (!ok(state, s)) break;
  }
  state.SetItemsProcessed(state.iterations() * k);
}
WRAPIR_PER_SIZE(BM_UpdateArguments);

}  // namespace

int main(int argc, char** argv) {
  return wrapir_bench::run_gpu_benchmarks<Fixture>(argc, argv, "graph_bench", [] {
    cuda::Module module = must(cuda::Module::load_file(WRAPIR_BENCH_KERNELS_CUBIN));
    Empty empty = must(Empty::bind(must(module.function("empty_with_args"))));
    return Fixture{std::move(module),
                   empty,
                   must(cuda::Stream::create()),
                   must(cuda::DeviceBuffer::allocate(4096)),
                   must(cuda::DeviceBuffer::allocate(4096)),
                   must(cuda::Event::create()),
                   must(cuda::Event::create())};
  });
}
