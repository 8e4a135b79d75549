// Google Benchmark figures for the C++ emitter (emit/cpp.hpp) on the
// 100k-line programs of bench/bench_programs.hpp, moved to the CPU (the
// emitter renders CPU programs): buffers and calls on the CPU, the 64
// kernels C++ with a small `extern "C" void kernel(...)` source. IR lines
// rendered per second ("lines/s"); the target is >= 2 M lines/s.
//
//   cmake --preset release && cmake --build build/release --target emit_cpp_bench
//   build/release/bench/emit_cpp_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "bench_programs.hpp"

#include <wrapir/emit/cpp.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <variant>

namespace {

namespace ir = wrapir::ir;

/// The benchmark program with every buffer, pool and call on the CPU and
/// every kernel a C++ one.
ir::Program on_cpu(ir::Program p) {
  for (ir::BufferDecl& b : p.buffers) b.layout.device = wrapir::cpu_device();
  for (ir::KernelDecl& k : p.kernels) k.language = ir::KernelLanguage::cpp;
  for (ir::Line& line : p.body) {
    if (auto* d = std::get_if<ir::KernelDefinition>(&line)) {
      d->source = ir::SourceText{
          "#include <cstdint>\nextern \"C\" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0, "
          "int32_t xnumel)\n{\n    for (int32_t x0 = 0; x0 < xnumel; ++x0) out_ptr0[x0] = in_ptr0[x0] + in_ptr1[x0];\n}\n"};
      d->metadata = ir::Box<ir::KernelMetadata>{};
    } else if (auto* c = std::get_if<ir::KernelCall>(&line)) {
      c->device = wrapir::cpu_device();
      c->grid = ir::LaunchGrid{};
    }
  }
  return p;
}

const ir::Program& program(bool mixed) {
  static const ir::Program m = on_cpu(wrapir::bench::make_program(wrapir::bench::target_lines, true));
  static const ir::Program plain = on_cpu(wrapir::bench::make_program(wrapir::bench::target_lines, false));
  return mixed ? m : plain;
}

void BM_cpp_emit(benchmark::State& state) {
  const ir::Program& p = program(state.range(0) != 0);
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto unit = wrapir::cpp::to_cpp(p);
    if (!unit) {
      state.SkipWithError(unit.error().message.c_str());
      return;
    }
    bytes = unit->size();
    benchmark::DoNotOptimize(unit->data());
  }
  state.counters["lines/s"] =
      benchmark::Counter(static_cast<double>(p.body.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lines"] = static_cast<double>(p.body.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}

BENCHMARK(BM_cpp_emit)->ArgName("mixed")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
