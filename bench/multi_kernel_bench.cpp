// Multi-kernel dispatch after the choice vs a direct call of the same fake
// launcher (run/multi_kernel.hpp). The launcher calls one of two opaque
// "kernels" through a function-pointer table, as a real launcher calls
// cuLaunchKernel on a table of CUfunctions, so both sides pay the same
// indirect call and the difference is the dispatcher's own cost: an atomic
// load, two compares, building the argument view and returning a Result.
// Target (issue 5): <= 20 ns extra per call.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/multi_kernel_bench.cpp -o multi_kernel_bench
//       -lbenchmark -lbenchmark_main -lpthread      (one command line)
//   ./multi_kernel_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <wrapir/run/multi_kernel.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace {

using wrapir::run::Candidate;
using wrapir::run::MultiKernelOptions;
using wrapir::run::MultiKernelSpec;
using wrapir::run::SlicedArgs;

/// A kernel that does nothing the optimiser can see through.
void fake_kernel(SlicedArgs<int> args) {
  auto span = args.contiguous();
  benchmark::DoNotOptimize(span);
}

using Kernel = void (*)(SlicedArgs<int>);

struct TableLauncher {
  std::array<Kernel, 2>* kernels;
  void operator()(std::size_t candidate, SlicedArgs<int> args) const { (*kernels)[candidate](args); }
};

/// Says candidate 1 is faster; calls run() once so the contract holds.
struct FixedTimer {
  template <class Prepare, class Run>
  std::vector<double> operator()(const wrapir::run::BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    prepare();
    run();
    return {plan.candidate == 1 ? 1.0 : 2.0};
  }
};

std::array<Kernel, 2> kernel_table{fake_kernel, fake_kernel};
const std::vector<int> arguments{1, 2, 3, 4, 5, 6};

MultiKernelSpec spec() {
  return MultiKernelSpec{"multi_kernel_0",
                         arguments.size(),
                         {Candidate{"triton_red_fused_sum_0", "", {{0, 6}}, {}, wrapir::run::ShapeKey{{64, 64}}},
                          Candidate{"triton_per_fused_sum_1", "", {{0, 6}}, {}, wrapir::run::ShapeKey{{4096, 4096}}}}};
}

MultiKernelOptions no_cache() {
  MultiKernelOptions options;
  options.cache_enabled = false;
  options.warmup = 0;
  options.repetitions = 1;
  return options;
}

void BM_DirectLaunch(benchmark::State& state) {
  benchmark::DoNotOptimize(kernel_table);
  const TableLauncher launcher{&kernel_table};
  const auto plan = wrapir::run::make_multi_kernel_plan(spec(), no_cache());
  const SlicedArgs<int> view = *plan->arguments_for<int>(1, arguments);
  for (auto _ : state) {
    launcher(1, view);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_DirectLaunch);

/// One dispatcher shared by every thread of a run, chosen before timing.
void BM_MultiKernelDispatch(benchmark::State& state) {
  benchmark::DoNotOptimize(kernel_table);
  static auto dispatcher = wrapir::run::make_multi_kernel_dispatcher<int>(
      std::move(wrapir::run::make_multi_kernel_plan(spec(), no_cache())).value(), TableLauncher{&kernel_table},
      FixedTimer{}, wrapir::run::NoRestore{});
  if (state.thread_index() == 0 && !(dispatcher(arguments) == std::size_t{1})) state.SkipWithError("wrong choice");
  const std::span<const int> args(arguments);
  for (auto _ : state) {
    auto launched = dispatcher(args);
    benchmark::DoNotOptimize(launched);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_MultiKernelDispatch)->Threads(1)->Threads(2);

/// The size-hint variant looks the call's shapes up on every call.
void BM_SizeHintDispatch(benchmark::State& state) {
  benchmark::DoNotOptimize(kernel_table);
  wrapir::run::SizeHintDispatcher<int, TableLauncher> dispatcher(
      std::move(wrapir::run::make_multi_kernel_plan(spec(), no_cache())).value(), TableLauncher{&kernel_table});
  const wrapir::run::ShapeKey shapes{{2048, 4096}};
  const std::span<const int> args(arguments);
  for (auto _ : state) {
    auto launched = dispatcher(args, shapes);
    benchmark::DoNotOptimize(launched);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_SizeHintDispatch);

}  // namespace
