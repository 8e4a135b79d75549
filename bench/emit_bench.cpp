// Google Benchmark figures for the Python emitter (emit/python.hpp) on a
// 100k-line Inductor-like program: IR lines rendered per second ("lines/s").
// The target is >= 2 million lines/s on one thread. The program has
// the shape of bench/ir_bench.cpp's: dynamic shapes, 64 kernel definitions,
// blocks of "allocate, launch (or extern mm), sometimes a view and a second
// launch, free what died", plus the plain Allocate / KernelCall / Free
// triples that bracket what a line costs.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude bench/emit_bench.cpp -o eb -lbenchmark -lbenchmark_main -lpthread

#include <wrapir/emit/python.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;

constexpr std::size_t target_lines = 100'000;

ir::Program make_program(std::size_t lines, bool mixed) {
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
    if (auto err = wrapir::python::to_python(p, out, options)) {
      state.SkipWithError(err->message.c_str());
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

}  // namespace
