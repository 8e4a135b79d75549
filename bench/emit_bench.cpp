// Google Benchmark figures for the Python emitter (emit/python.hpp) and the
// DOT emitter (emit/dot.hpp) on a 100k-line Inductor-like program: IR lines
// rendered per second ("lines/s"); the DOT emitter also on 10k and 1M lines,
// to show that its time per line stays flat.
// The target is >= 2 million lines/s on one thread. The programs
// are ir_bench's (bench/bench_programs.hpp): dynamic shapes, 64 kernel
// definitions, blocks of "allocate, launch (or extern mm), sometimes a view
// and a second launch, free what died", plus the plain Allocate /
// KernelCall / Free triples that bracket what a line costs.
//
//   cmake --preset release && cmake --build build/release --target emit_bench
//   build/release/bench/emit_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "bench_programs.hpp"

#include <wrapir/emit/dot.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;

using wrapir::bench::make_program;
using wrapir::bench::target_lines;

const ir::Program& program(bool mixed) {
  static const ir::Program m = make_program(target_lines, true);
  static const ir::Program plain = make_program(target_lines, false);
  return mixed ? m : plain;
}

void BM_python_emit(benchmark::State& state) {
  const ir::Program& p = program(state.range(0) != 0);
  wrapir::python::PythonOptions options;
  options.size_asserts = state.range(1) != 0 ? wrapir::python::SizeAsserts::deferred : wrapir::python::SizeAsserts::eager;
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (auto done = wrapir::python::to_python(p, out, options); !done) {
      state.SkipWithError(done.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(p.body.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lines"] = static_cast<double>(p.body.size());
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_python_emit)
    ->ArgNames({"mixed", "deferred"})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond);

/// The mixed program at `lines` lines, built once per size.
const ir::Program& sized_program(std::size_t lines) {
  if (lines == 10'000) {
    static const ir::Program small = make_program(lines, true);
    return small;
  }
  if (lines == 1'000'000) {
    static const ir::Program huge = make_program(lines, true);
    return huge;
  }
  return program(true);
}

void BM_dot_emit(benchmark::State& state) {
  const ir::Program& p = sized_program(static_cast<std::size_t>(state.range(0)));
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (auto done = wrapir::dot::to_dot(p, out); !done) {
      state.SkipWithError(done.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(p.body.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lines"] = static_cast<double>(p.body.size());
  state.counters["bytes"] = static_cast<double>(out.size());
  state.counters["bytes/line"] = static_cast<double>(out.size()) / static_cast<double>(p.body.size());
}
BENCHMARK(BM_dot_emit)->ArgName("lines")->Arg(10'000)->Arg(static_cast<std::int64_t>(target_lines))->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The Python emitter on the same sizes: a baseline for how the time per line
// of a whole-program pass grows once the program no longer fits in cache.
void BM_python_emit_sized(benchmark::State& state) {
  const ir::Program& p = sized_program(static_cast<std::size_t>(state.range(0)));
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (auto done = wrapir::python::to_python(p, out); !done) {
      state.SkipWithError(done.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(p.body.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_python_emit_sized)->ArgName("lines")->Arg(10'000)->Arg(static_cast<std::int64_t>(target_lines))->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
