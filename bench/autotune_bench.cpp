// The cost of `run::autotune` (include/wrapir/run/autotune.hpp) on the test
// fixture: x: f32[2048] -> out = 2 * x through a multi-kernel of a slow
// candidate (the doubling recomputed 200 times) and a fast one, both plain
// C++ callables. One iteration is one whole pass: verify, synthesise the
// input, prepare the executor, benchmark both candidates (warm-up 3, then
// `repetitions` timed runs each), rewrite. Counters: `timed_ms`, the
// candidates' medians times their runs (what benchmarking itself must
// cost), `measuring_run_ms`, the executor's run that benchmarks; the
// iteration time less `timed_ms` is what the pass adds.

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/autotune.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;

void twice_fast(const float* a, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = 2 * a[i];
}
void twice_slow(const float* a, float* out, std::int64_t n, std::int64_t reps) {
  for (std::int64_t r = 0; r < reps; ++r)
    for (std::int64_t i = 0; i < n; ++i) {
      volatile float v = a[i] + a[i];
      out[i] = v;
    }
}

ir::Program fixture() {
  ir::Program p{"doubling"};
  ir::Builder b{p, wrapir::cpu_device()};
  const auto n = b.size_symbol("s0", 2048);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto slow = b.kernel("twice_slow", ir::KernelLanguage::cpp, ir::SourceText{"// slow"},
                       "a: *fp32, out: *fp32, n: i64, reps: i64");
  auto fast = b.kernel("twice_fast", ir::KernelLanguage::cpp, ir::SourceText{"// fast"}, "a: *fp32, out: *fp32, n: i64");
  auto mk = b.multi_kernel({slow, fast}, {{{0, 4}}, {{0, 3}}});
  auto out = b.empty({n}, ir::DType::float32);
  b.call_multi(mk, {x, out, n, 200});
  b.output(out);
  return p;
}

void BM_autotune_fixture(benchmark::State& state) {
  const ir::Program program = fixture();
  auto kernels = std::make_shared<run::KernelRegistry>();
  (void)kernels->add("twice_fast", run::cpu_kernel(twice_fast));
  (void)kernels->add("twice_slow", run::cpu_kernel(twice_slow));
  run::AutotuneOptions options;
  options.executor.kernels = kernels;
  options.executor.multi_kernel.warmup = 3;
  options.executor.multi_kernel.repetitions = static_cast<std::size_t>(state.range(0));
  double timed_ms = 0, wall_ms = 0;
  for (auto _ : state) {
    auto tuned = run::autotune(program, options);
    if (!tuned || tuned->choices.size() != 1 || tuned->choices[0].record.chosen != "twice_fast") {
      state.SkipWithError(tuned ? "the fast candidate was not chosen" : tuned.error().message.c_str());
      return;
    }
    const run::AutotuneRecord& r = tuned->choices[0].record;
    for (const auto& c : r.candidates) timed_ms += c.median_ms.value_or(0) * static_cast<double>(r.warmup + r.repetitions);
    wall_ms += tuned->wall_ms;
    benchmark::DoNotOptimize(tuned);
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["timed_ms"] = timed_ms / n;
  state.counters["measuring_run_ms"] = wall_ms / n;
  state.counters["candidates_x_runs"] = 2.0 * static_cast<double>(3 + state.range(0));
}
BENCHMARK(BM_autotune_fixture)->Arg(1)->Arg(5)->Arg(25)->Unit(benchmark::kMillisecond);

}  // namespace
