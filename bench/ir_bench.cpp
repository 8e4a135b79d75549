// Google Benchmark figures for the IR core on a 100k-line program: building
// it, verifying it, saving and loading JSON, printing and parsing the text
// form. Each benchmark reports IR lines per second ("lines/s"); the issue's
// targets are verify and JSON load at >= 1 million lines/s. Freeing what a
// benchmark made is outside its timed region.
// docs/performance.md records the results next to the command.

#include "bench_programs.hpp"

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace {

namespace ir = wrapir::ir;

using wrapir::bench::make_program;
using wrapir::bench::target_lines;

const ir::Program& program(bool mixed = true) {
  static const ir::Program m = make_program(target_lines, true);
  static const ir::Program plain = make_program(target_lines, false);
  return mixed ? m : plain;
}

void report_lines(benchmark::State& state, std::size_t lines) {
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(lines), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lines"] = static_cast<double>(lines);
}

void BM_build(benchmark::State& state) {
  std::size_t lines = 0;
  for (auto _ : state) {
    auto p = std::make_unique<ir::Program>(make_program(target_lines));
    lines = p->body.size();
    benchmark::DoNotOptimize(p->body.data());
    state.PauseTiming();
    p.reset();
    state.ResumeTiming();
  }
  report_lines(state, lines);
}
BENCHMARK(BM_build)->Unit(benchmark::kMillisecond);

void BM_verify(benchmark::State& state) {
  const ir::Program& p = program(state.range(0) != 0);
  for (auto _ : state) {
    auto findings = ir::verify(p);
    if (!findings.empty()) {
      state.SkipWithError(ir::to_string(findings.front()).c_str());
      return;
    }
    benchmark::DoNotOptimize(findings.data());
  }
  report_lines(state, p.body.size());
}
BENCHMARK(BM_verify)->ArgName("mixed")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_json_save(benchmark::State& state) {
  const ir::Program& p = program(state.range(0) != 0);
  std::string out;
  for (auto _ : state) {
    out.clear();
    wrapir::io::to_json(p, out);
    benchmark::DoNotOptimize(out.data());
  }
  report_lines(state, p.body.size());
  state.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_json_save)->ArgName("mixed")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_json_load(benchmark::State& state) {
  const ir::Program& p = program(state.range(0) != 0);
  const std::string text = wrapir::io::to_json(p);
  for (auto _ : state) {
    auto loaded = wrapir::io::program_from_json(text);
    if (!loaded) {
      state.SkipWithError(loaded.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(loaded->body.data());
    state.PauseTiming();  // freeing the loaded program is not loading it
    loaded = wrapir::Diagnostic{};
    state.ResumeTiming();
  }
  report_lines(state, p.body.size());
}
BENCHMARK(BM_json_load)->ArgName("mixed")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_text_print(benchmark::State& state) {
  const ir::Program& p = program();
  for (auto _ : state) {
    std::string text = wrapir::text::to_text(p);
    benchmark::DoNotOptimize(text.data());
  }
  report_lines(state, p.body.size());
}
BENCHMARK(BM_text_print)->Unit(benchmark::kMillisecond);

void BM_text_parse(benchmark::State& state) {
  const ir::Program& p = program();
  const std::string text = wrapir::text::to_text(p);
  for (auto _ : state) {
    auto parsed = wrapir::text::parse_program_text(text);
    if (!parsed) {
      state.SkipWithError(parsed.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(parsed->body.data());
    state.PauseTiming();
    parsed = wrapir::Diagnostic{};
    state.ResumeTiming();
  }
  report_lines(state, p.body.size());
}
BENCHMARK(BM_text_parse)->Unit(benchmark::kMillisecond);

}  // namespace
