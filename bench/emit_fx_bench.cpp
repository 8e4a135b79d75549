// Google Benchmark figures for the FX emitter (emit/fx.hpp): the graph text
// (`fx`) and the torch.fx builder module (`fx-python`) of the 100k-line
// programs of bench/bench_programs.hpp and of a 1M-line one. IR lines
// rendered per second ("lines/s"); the target is >= 2 M lines/s.
//
//   cmake --preset release && cmake --build build/release --target emit_fx_bench
//   build/release/bench/emit_fx_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "bench_programs.hpp"

#include <wrapir/emit/fx.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>

namespace {

namespace ir = wrapir::ir;

/// range(0): 0 plain, 1 mixed; range(1): lines.
const ir::Program& program(bool mixed, std::size_t lines) {
  static const ir::Program plain = wrapir::bench::make_program(wrapir::bench::target_lines, false);
  static const ir::Program m = wrapir::bench::make_program(wrapir::bench::target_lines, true);
  static const ir::Program big = wrapir::bench::make_program(1'000'000, true);
  if (lines > wrapir::bench::target_lines) return big;
  return mixed ? m : plain;
}

template <class Emit>
void run(benchmark::State& state, Emit emit) {
  const ir::Program& p = program(state.range(0) != 0, static_cast<std::size_t>(state.range(1)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto out = emit(p);
    if (!out) {
      state.SkipWithError(out.error().message.c_str());
      return;
    }
    bytes = out->size();
    benchmark::DoNotOptimize(out->data());
  }
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(p.body.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lines"] = static_cast<double>(p.body.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}

void BM_fx_emit(benchmark::State& state) {
  run(state, [](const ir::Program& p) { return wrapir::fx::to_fx(p); });
}
void BM_fx_python_emit(benchmark::State& state) {
  run(state, [](const ir::Program& p) { return wrapir::fx::to_fx_python(p); });
}

BENCHMARK(BM_fx_emit)
    ->ArgNames({"mixed", "lines"})
    ->Args({0, 100'000})
    ->Args({1, 100'000})
    ->Args({1, 1'000'000})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_fx_python_emit)
    ->ArgNames({"mixed", "lines"})
    ->Args({0, 100'000})
    ->Args({1, 100'000})
    ->Args({1, 1'000'000})
    ->Unit(benchmark::kMillisecond);

/// The floor under any emitter of the 1M-line program: writing its output
/// (about 170 MB for `fx`) into a fresh string reserved at its size, 64
/// bytes at a time, converting nothing. Fresh pages cost what they cost
/// whatever writes them.
void BM_output_floor(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  static constexpr char piece[] = "0123456789012345678901234567890123456789012345678901234567890123";
  for (auto _ : state) {
    std::string out;
    out.reserve(bytes);
    for (std::size_t i = 0; i < bytes; i += 64) out.append(piece, 64);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["MB"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_output_floor)->Arg(170)->Unit(benchmark::kMillisecond);

}  // namespace
