// Host overhead of the CPU executor (run/executor.hpp) per line: a program
// of L kernel calls on a one-element buffer (each call of a kernel that
// does almost nothing) against a hand-written loop calling the same
// kernels through the same std::function with the same packed arguments.
// The difference per call, divided by the lines, is the executor's own
// cost per line: the frame, the visit, evaluating argument expressions,
// packing and the diagnostic plumbing.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/executor_bench.cpp -o executor_bench
//       -lbenchmark -lbenchmark_main -lpthread      (one command line)
//   ./executor_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Counters: `per_line_ns` is the time per call divided by the program's
// lines (kernel calls, allocations and frees included).

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/executor.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;

void add_one(float* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) x[i] += 1.0f;
  benchmark::ClobberMemory();
}

std::shared_ptr<run::KernelRegistry> registry() {
  auto r = std::make_shared<run::KernelRegistry>();
  (void)r->add("add_one", run::cpu_kernel(&add_one));
  return r;
}

/// `launches` calls of add_one on a symbolic-size buffer: the shape a chain
/// of pointwise kernels has after fusion, with an allocation and a free.
ir::Program chain(std::int64_t launches) {
  ir::Program p{"chain"};
  ir::Builder b{p, wrapir::cpu_device()};
  auto n = b.size_symbol("s0", 1);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto k = b.kernel("add_one", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32, n: i64");
  auto t = b.empty({n}, ir::DType::float32);
  b.append(ir::DeviceCopy{ir::BufferArg{t, std::nullopt}, ir::BufferArg{x, std::nullopt}, false});
  for (std::int64_t i = 0; i < launches; ++i) b.call(k, {t, n});
  b.output(t);
  return p;
}

void BM_executor_run(benchmark::State& state) {
  const std::int64_t launches = state.range(0);
  const ir::Program p = chain(launches);
  auto exe = run::Executor::prepare(p, {.kernels = registry()}).value();
  const std::vector<run::Tensor> inputs{run::empty_cpu({1}, ir::DType::float32).value()};
  const std::vector<std::int64_t> scalars{1};
  for (auto _ : state) {
    auto r = exe.run(inputs, scalars);
    benchmark::DoNotOptimize(r);
  }
  state.counters["per_line_ns"] = benchmark::Counter(static_cast<double>(p.body.size()) * static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// The floor: the same kernels through the same std::function, arguments
/// packed once, plus one allocation — what any runtime must pay.
void BM_direct_calls(benchmark::State& state) {
  const std::int64_t launches = state.range(0);
  const run::TypedCpuKernel k = run::cpu_kernel(&add_one);
  for (auto _ : state) {
    run::Tensor t = run::empty_cpu({1}, ir::DType::float32).value();
    void* data = t.data();
    std::int64_t n = 1;
    void* params[2] = {&data, &n};
    for (std::int64_t i = 0; i < launches; ++i) {
      auto r = k.fn(std::span<void* const>(params, 2));
      benchmark::DoNotOptimize(r);
    }
    benchmark::DoNotOptimize(t);
  }
}

void BM_prepare(benchmark::State& state) {
  const ir::Program p = chain(state.range(0));
  const auto kernels = registry();
  for (auto _ : state) {
    auto exe = run::Executor::prepare(p, {.kernels = kernels, .verify = false});
    benchmark::DoNotOptimize(exe);
  }
}

/// `kernels` distinct kernel definitions (each a 2 KB source, as Inductor's
/// C++ kernels are a few KB), each launched once, all provided by one
/// registered callable: prepare's cost per kernel definition, which names
/// every kernel for the multi-kernel choice cache (run/kernel_identity.hpp).
ir::Program many_kernels(std::int64_t kernels) {
  ir::Program p{"many_kernels"};
  ir::Builder b{p, wrapir::cpu_device()};
  auto n = b.size_symbol("s0", 1);
  auto x = b.input("x", {n}, ir::DType::float32);
  const std::string body(2048, ' ');
  for (std::int64_t i = 0; i < kernels; ++i) {
    auto k = b.kernel("add_one_" + std::to_string(i), ir::KernelLanguage::cpp,
                      ir::SourceText{"// kernel " + std::to_string(i) + body}, "x: *fp32, n: i64");
    b.call(k, {x, n});
  }
  b.output(x);
  return p;
}

void BM_prepare_kernels(benchmark::State& state) {
  const ir::Program p = many_kernels(state.range(0));
  auto kernels = std::make_shared<run::KernelRegistry>();
  for (std::int64_t i = 0; i < state.range(0); ++i)
    (void)kernels->add("add_one_" + std::to_string(i), run::cpu_kernel(&add_one));
  for (auto _ : state) {
    auto exe = run::Executor::prepare(p, {.kernels = kernels, .verify = false});
    benchmark::DoNotOptimize(exe);
  }
  state.counters["per_kernel_ns"] =
      benchmark::Counter(static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_executor_run)->Arg(1)->Arg(16)->Arg(128);
BENCHMARK(BM_direct_calls)->Arg(1)->Arg(16)->Arg(128);
BENCHMARK(BM_prepare)->Arg(128);
BENCHMARK(BM_prepare_kernels)->Arg(1000);
