// Google Benchmark figures for the IR core on a 100k-line program: building
// it, verifying it, saving and loading JSON, printing and parsing the text
// form. Each benchmark reports IR lines per second ("lines/s"); the issue's
// targets are verify and JSON load at >= 1 million lines/s. Freeing what a
// benchmark made is outside its timed region.
// docs/performance.md records the results next to the command.

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

constexpr std::size_t target_lines = 100'000;

// Two programs of `lines` lines with dynamic shapes and 64 kernel
// definitions. `mixed` is like an Inductor wrapper for a long graph: blocks
// of "allocate [s0, s1], launch on two inputs (or an extern mm), sometimes
// a view and a second launch, free the buffer that died". The plain one is
// only Allocate / KernelCall / FreeIfNotReused triples on 1-D buffers, the
// smallest lines there are, so the two bracket what lines/s means.
ir::Program make_program(std::size_t lines, bool mixed = true) {
  ir::Program p{"bench"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 4096);
  const auto s1 = b.size_symbol("s1", 1024);
  const auto numel = b.computed_symbol("xnumel", s0 * s1);
  const auto c4 = ctx.integer(4);
  ir::BufferId prev = b.input("arg0_1", {s0, s1}, wrapir::f32);
  const ir::BufferId weight = b.input("arg1_1", {s1, s1}, wrapir::f32);
  std::vector<ir::KernelId> kernels;
  for (int k = 0; k < 64; ++k)
    kernels.push_back(b.triton_kernel(
        "triton_poi_fused_" + std::to_string(k),
        "@triton.jit\ndef kernel(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n    pass\n",
        "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32",
        ir::KernelMetadata{.num_warps = 4, .grid_type = ir::GridType::grid_1d, .block = {{"XBLOCK", 1024}}}));
  std::size_t i = 0;
  while (p.body.size() + 4 < lines) {
    if (!mixed) {
      const ir::BufferId out = b.empty({numel}, wrapir::f32);
      b.call(kernels[i % kernels.size()], {prev, weight, out, numel});
      if (i > 0) b.free({prev});
      prev = out;
      ++i;
      continue;
    }
    const ir::BufferId out = b.empty({s0, s1}, wrapir::f32);
    if (i % 16 == 15) {
      b.extern_out("extern_kernels.mm", {prev, weight}, ir::BufferArg{out});
    } else {
      b.call(kernels[i % kernels.size()], {prev, weight, out, numel});
    }
    if (i % 8 == 7) {
      const ir::BufferId v = b.view(out, {s0, s1 - c4}, {s1, ctx.integer(1)}, c4);
      b.call(kernels[(i + 1) % kernels.size()], {v, weight, out, numel});
    }
    if (i > 0) b.free({prev});
    prev = out;
    ++i;
  }
  b.output(prev);
  return p;
}

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
