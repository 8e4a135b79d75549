// Google Benchmark figures for the C++ emitter (emit/cpp.hpp) on the
// programs of bench/bench_programs.hpp: at 100k and 1M lines moved to the
// CPU (buffers and calls on the CPU, the 64 kernels C++ with a small
// `extern "C" void kernel(...)` source), and at 100k lines as the CUDA
// program they are (64 Triton kernels launched from cubins, Grid1D with
// XBLOCK 1024, stream-ordered device memory). IR lines rendered per second
// ("lines/s"); the target is >= 2 M lines/s.
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

constexpr std::size_t million = 1'000'000;

const ir::Program& program(bool mixed, std::size_t lines) {
  static const ir::Program m = on_cpu(wrapir::bench::make_program(wrapir::bench::target_lines, true));
  static const ir::Program plain = on_cpu(wrapir::bench::make_program(wrapir::bench::target_lines, false));
  if (lines == million) {
    // Built on first use: the 1M-line programs take a while and 400 MB.
    static const ir::Program m1 = on_cpu(wrapir::bench::make_program(million, true));
    static const ir::Program plain1 = on_cpu(wrapir::bench::make_program(million, false));
    return mixed ? m1 : plain1;
  }
  return mixed ? m : plain;
}

const ir::Program& cuda_program(bool mixed) {
  static const ir::Program m = wrapir::bench::make_program(wrapir::bench::target_lines, true);
  static const ir::Program plain = wrapir::bench::make_program(wrapir::bench::target_lines, false);
  return mixed ? m : plain;
}

/// The launch configurations of the 64 Triton kernels, as the exporter's
/// kernels.json would give them.
wrapir::cpp::CppOptions cuda_options() {
  wrapir::cpp::CppOptions o;
  for (int k = 0; k < 64; ++k) {
    wrapir::cpp::CudaKernelLaunch l;
    l.name = "triton_poi_fused_" + std::to_string(k);
    l.cubin = "kernels/" + l.name + ".cubin";
    l.symbol = l.name;
    l.constants = {{"XBLOCK", 1024}};
    o.cuda_kernels.push_back(std::move(l));
  }
  return o;
}

void emit(benchmark::State& state, const ir::Program& p, const wrapir::cpp::CppOptions& options) {
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto unit = wrapir::cpp::to_cpp(p, options);
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

void BM_cpp_emit(benchmark::State& state) {
  emit(state, program(state.range(0) != 0, static_cast<std::size_t>(state.range(1))), {});
}

void BM_cpp_emit_cuda(benchmark::State& state) {
  static const wrapir::cpp::CppOptions options = cuda_options();
  emit(state, cuda_program(state.range(0) != 0), options);
}

BENCHMARK(BM_cpp_emit)
    ->ArgNames({"mixed", "lines"})
    ->Args({0, 100'000})
    ->Args({1, 100'000})
    ->Args({0, 1'000'000})
    ->Args({1, 1'000'000})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_cpp_emit_cuda)->ArgName("mixed")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
