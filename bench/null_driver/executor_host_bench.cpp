// The CUDA executor's own host cost, without a GPU (issue 14 §5): the real
// CUDA backend (caching allocator, stream), the real Triton kernel provider
// (kernels.json, metadata, the launcher that computes grids and calls
// cuLaunchKernel) and the real line handlers, on top of a null CUDA driver
// (bench/null_driver/null_cuda.cpp: every entry point returns success at
// once and is counted). What is timed is then everything but the driver:
// a figure to hold against the ~3 µs a real cuLaunchKernel costs on an H100
// (target: the executor's own cost per Triton launch ≤ 0.15 × 3 µs).
// Externs are stubs that return at once (no cuBLAS), as `Stubbed/` in
// bench/gpu/executor_overhead_bench.cpp.
//
//   build/dev/bench/null_driver/executor_host_bench     (built with the benchmarks when the CUDA toolkit's headers are found)
//
// Programs (written here as program JSON, the exporter's shape; their
// kernels are the Triton kernels of tests/cuda/data/mlp_layernorm_gelu):
//
// * add_relu — one Allocate, one launch, the output (a Triton-only program).
// * deep_mlp/L — a first launch, then L layers of {Allocate; mm(prev,
//   weight.t()) out=; FreeIfNotReused prev; Reuse; bias+gelu launch}: 2L+1
//   kernel and extern lines, L+1 Triton launches, 2L+2 inputs.
// * addmm_mlp/L — L layers of {Allocate; addmm(bias, prev, weight.t())
//   out=; relu launch in place; FreeIfNotReused prev}.
// * launches/L — one buffer, L launches on it (the per-launch line cost).
// * alloc_free/L — L pairs of Allocate and Free (the per-buffer cost).
// * streams/L — L rounds of two side-stream regions of one launch each
//   (stream contexts: a fork, an exit per region; the end joins both).
// * externs/L — L `mm(x, w.t(), out=o)` lines (the per-extern-line cost).
// * mlp_layernorm_gelu — the real export in tests/cuda/data (two Triton
//   launches, an `mm` and an `addmm`, 7 inputs each freed, one output): the
//   program whose per-call fixed cost the H100 figure divides by two.
//
// Counters per program call: `launches` (cuLaunchKernel), `mem_alloc` and
// `mem_free` (cuMemAlloc, cuMemFree: both must be 0 in steady state, the
// caching allocator serving every buffer), `driver_calls` (all driver
// calls), `heap_allocs` (host heap allocations through operator new per
// call: this binary replaces the global operator new to count them), and
// `ns_per_launch` (time per call / Triton launches) or `ns_per_line` for
// the per-kind programs.

#include <wrapir/detail/phase_clock.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#include <wrapir/run/executor.hpp>

#include <benchmark/benchmark.h>

#include "null_cuda.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

// Every host allocation through operator new is counted (the executor,
// the backend's bookkeeping and the outputs allocate through it).
namespace {
std::atomic<std::uint64_t> heap_allocations{0};
}
void* operator new(std::size_t n) {
  heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

#ifndef WRAPIR_SOURCE_DIR
#define WRAPIR_SOURCE_DIR "."
#endif

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;

// ---- program JSON ----------------------------------------------------------

std::string buffer(const std::string& name, const char* role, std::vector<std::int64_t> sizes) {
  std::string s = "{\"name\": \"" + name + "\", \"role\": \"" + role + "\", \"dtype\": \"float32\", \"device\": \"cuda:0\", \"sizes\": [";
  std::vector<std::int64_t> strides(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", \"" : "\"") + std::to_string(sizes[i]) + "\"";
  s += "], \"strides\": [";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", \"" : "\"") + std::to_string(strides[i]) + "\"";
  return s + "]}";
}

/// The kernels every program declares (signatures of Inductor's).
const char* const kernel_decls =
    R"({"name": "k_norm", "language": "triton", "signature": [{"name": "in_ptr0", "type": "*fp32"}, {"name": "in_ptr1", "type": "*fp32"}, {"name": "in_ptr2", "type": "*fp32"}, {"name": "out_ptr2", "type": "*fp32"}, {"name": "xnumel", "type": "i32"}, {"name": "r0_numel", "type": "i32"}]},
{"name": "k_bias_gelu", "language": "triton", "signature": [{"name": "in_out_ptr0", "type": "*fp32"}, {"name": "in_ptr0", "type": "*fp32"}, {"name": "xnumel", "type": "i32"}]},
{"name": "k_relu", "language": "triton", "signature": [{"name": "in_out_ptr0", "type": "*fp32"}, {"name": "xnumel", "type": "i32"}]},
{"name": "k_add_relu", "language": "triton", "signature": [{"name": "in_ptr0", "type": "*fp32"}, {"name": "in_ptr1", "type": "*fp32"}, {"name": "out_ptr0", "type": "*fp32"}, {"name": "xnumel", "type": "i32"}]})";

std::string definitions() {
  std::string s;
  for (const char* k : {"k_norm", "k_bias_gelu", "k_relu", "k_add_relu"})
    s += std::string("{\"kind\": \"KernelDefinition\", \"kernel\": \"") + k + "\", \"source\": {\"kind\": \"text\", \"text\": \"\"}, \"metadata\": {}},\n";
  return s;
}

std::string call(const char* kernel, std::vector<std::string> buffers, std::vector<std::int64_t> ints) {
  std::string s = std::string("{\"kind\": \"KernelCall\", \"kernel\": \"") + kernel + "\", \"args\": [";
  bool first = true;
  for (const std::string& b : buffers) s += (std::exchange(first, false) ? "" : ", ") + ("{\"buffer\": \"" + b + "\"}");
  for (std::int64_t i : ints) s += (std::exchange(first, false) ? "" : ", ") + ("{\"int\": " + std::to_string(i) + "}");
  s += "], \"arg_types\": [";
  first = true;
  for (std::size_t i = 0; i < buffers.size(); ++i) s += std::exchange(first, false) ? "\"*fp32\"" : ", \"*fp32\"";
  for (std::size_t i = 0; i < ints.size(); ++i) s += std::exchange(first, false) ? "\"i32\"" : ", \"i32\"";
  return s + "], \"grid\": {\"kind\": \"launcher\"}, \"device\": \"cuda:0\", \"stream\": 0}";
}

std::string transposed(const std::string& b, std::int64_t rows, std::int64_t cols) {
  // b is [cols, rows] row-major; its .t() is [rows, cols] with strides [1, rows].
  return "{\"buffer\": \"" + b + "\", \"view\": {\"sizes\": [\"" + std::to_string(rows) + "\", \"" + std::to_string(cols) +
         "\"], \"strides\": [\"1\", \"" + std::to_string(rows) + "\"], \"offset\": \"0\"}}";
}

std::string line(const std::string& kind, const std::string& fields) { return "{\"kind\": \"" + kind + "\", " + fields + "}"; }

std::string program(const std::vector<std::string>& buffers, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& body, const std::vector<std::string>& outputs) {
  std::string s = "{\"format\": \"wrapir\", \"version\": 1, \"program\": {\"name\": \"call\", \"symbols\": [], \"buffers\": [";
  for (std::size_t i = 0; i < buffers.size(); ++i) s += (i ? ",\n" : "") + buffers[i];
  s += std::string("], \"kernels\": [") + kernel_decls + "], \"pools\": [], \"inputs\": [";
  for (std::size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + ("{\"buffer\": \"" + inputs[i] + "\"}");
  s += "], \"body\": [" + definitions();
  for (std::size_t i = 0; i < body.size(); ++i) s += (i ? ",\n" : "") + body[i];
  s += "], \"outputs\": [";
  for (std::size_t i = 0; i < outputs.size(); ++i) s += (i ? ", " : "") + ("{\"buffer\": \"" + outputs[i] + "\"}");
  return s + "], \"subgraphs\": []}}";
}

constexpr std::int64_t rows = 32, width = 64;

std::string add_relu() {
  return program({buffer("x", "input", {1024}), buffer("y", "input", {1024}), buffer("buf0", "output", {1024})}, {"x", "y"},
                 {line("Allocate", "\"buffer\": \"buf0\""), call("k_add_relu", {"x", "y", "buf0"}, {1024})}, {"buf0"});
}

/// deep_mlp's shape: mm + a fused bias/activation launch per layer.
std::string deep_mlp(int layers) {
  std::vector<std::string> buffers{buffer("x", "input", {rows, width}), buffer("g", "input", {width}), buffer("h", "input", {width})};
  std::vector<std::string> inputs{"x", "g", "h"}, body;
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    buffers.push_back(buffer("w" + n, "input", {width, width}));
    buffers.push_back(buffer("b" + n, "input", {width}));
    inputs.push_back("w" + n);
    inputs.push_back("b" + n);
  }
  buffers.push_back(buffer("n0", "intermediate", {rows, width}));
  body.push_back(line("Allocate", "\"buffer\": \"n0\""));
  body.push_back(call("k_norm", {"x", "g", "h", "n0"}, {rows, width}));
  std::string prev = "n0";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i), a = "a" + n, r = i + 1 == layers ? "out" : "r" + n;
    buffers.push_back(buffer(a, "intermediate", {rows, width}));
    buffers.push_back(buffer(r, i + 1 == layers ? "output" : "intermediate", {rows, width}));
    body.push_back(line("Allocate", "\"buffer\": \"" + a + "\""));
    body.push_back(line("ExternKernelOut", "\"kernel\": \"extern_kernels.mm\", \"args\": [{\"buffer\": \"" + prev + "\"}, " +
                                               transposed("w" + n, width, width) + "], \"kwargs\": [], \"out\": {\"buffer\": \"" + a + "\"}"));
    body.push_back(line("FreeIfNotReused", "\"buffer\": \"" + prev + "\", \"reused\": false"));
    body.push_back(line("Reuse", "\"old_buffer\": \"" + a + "\", \"new_buffer\": \"" + r + "\", \"delete_old\": true"));
    body.push_back(call("k_bias_gelu", {r, "b" + n}, {rows * width}));
    prev = r;
  }
  return program(buffers, inputs, body, {"out"});
}

/// addmm + an in-place activation per layer.
std::string addmm_mlp(int layers) {
  std::vector<std::string> buffers{buffer("x", "input", {rows, width})};
  std::vector<std::string> inputs{"x"}, body;
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i);
    buffers.push_back(buffer("w" + n, "input", {width, width}));
    buffers.push_back(buffer("b" + n, "input", {width}));
    inputs.push_back("w" + n);
    inputs.push_back("b" + n);
  }
  std::string prev = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string n = std::to_string(i), a = i + 1 == layers ? "out" : "a" + n;
    buffers.push_back(buffer(a, i + 1 == layers ? "output" : "intermediate", {rows, width}));
    body.push_back(line("Allocate", "\"buffer\": \"" + a + "\""));
    body.push_back(line("ExternKernelOut", "\"kernel\": \"extern_kernels.addmm\", \"args\": [{\"buffer\": \"b" + n +
                                               "\"}, {\"buffer\": \"" + prev + "\"}, " + transposed("w" + n, width, width) +
                                               "], \"kwargs\": [{\"name\": \"alpha\", \"value\": {\"int\": 1}}, {\"name\": \"beta\", \"value\": {\"int\": 1}}], \"out\": {\"buffer\": \"" +
                                               a + "\"}"));
    body.push_back(call("k_relu", {a}, {rows * width}));
    if (prev != "x") body.push_back(line("FreeIfNotReused", "\"buffer\": \"" + prev + "\", \"reused\": false"));
    prev = a;
  }
  return program(buffers, inputs, body, {"out"});
}

std::string launches(int n) {
  std::vector<std::string> body{line("Allocate", "\"buffer\": \"t\"")};
  for (int i = 0; i < n; ++i) body.push_back(call("k_relu", {"t"}, {1024}));
  return program({buffer("t", "output", {1024})}, {}, body, {"t"});
}

/// L rounds of {stream 1: relu(a)} {stream 2: relu(b)}: the regions share
/// no buffer and free nothing, so no line joins them (each fork orders its
/// region after stream 0); the end of the call joins both side streams.
std::string streams(int n) {
  std::vector<std::string> body{line("Allocate", "\"buffer\": \"a\""), line("Allocate", "\"buffer\": \"b\"")};
  for (int i = 0; i < n; ++i) {
    body.push_back(line("EnterStreamContext", "\"stream\": 1"));
    body.push_back(call("k_relu", {"a"}, {1024}));
    body.push_back("{\"kind\": \"ExitStreamContext\"}");
    body.push_back(line("EnterStreamContext", "\"stream\": 2"));
    body.push_back(call("k_relu", {"b"}, {1024}));
    body.push_back("{\"kind\": \"ExitStreamContext\"}");
  }
  return program({buffer("a", "output", {1024}), buffer("b", "output", {1024})}, {}, body, {"a", "b"});
}

std::string alloc_free(int n) {
  std::vector<std::string> buffers{buffer("o", "output", {1024})}, body{line("Allocate", "\"buffer\": \"o\"")};
  for (int i = 0; i < n; ++i) {
    const std::string t = "t" + std::to_string(i);
    buffers.push_back(buffer(t, "intermediate", {rows, width}));
    body.push_back(line("Allocate", "\"buffer\": \"" + t + "\""));
    body.push_back(line("Free", "\"buffer\": \"" + t + "\""));
  }
  return program(buffers, {}, body, {"o"});
}

std::string externs(int n) {
  std::vector<std::string> body{line("Allocate", "\"buffer\": \"o\"")};
  for (int i = 0; i < n; ++i)
    body.push_back(line("ExternKernelOut", "\"kernel\": \"extern_kernels.mm\", \"args\": [{\"buffer\": \"x\"}, " +
                                               transposed("w", width, width) + "], \"kwargs\": [], \"out\": {\"buffer\": \"o\"}"));
  return program({buffer("x", "input", {rows, width}), buffer("w", "input", {width, width}), buffer("o", "output", {rows, width})},
                 {"x", "w"}, body, {"o"});
}

// ---- the fixture -----------------------------------------------------------

struct Counts {
  std::array<std::uint64_t, wrapir_null_cuda_function_count> c{};
  static Counts now() {
    Counts out;
    wrapir_null_cuda_counts(out.c.data(), wrapir_null_cuda_function_count);
    return out;
  }
  std::uint64_t of(const char* name) const { return c[static_cast<std::size_t>(wrapir_null_cuda_count_of(name))]; }
  std::uint64_t total() const {
    std::uint64_t t = 0;
    for (std::uint64_t x : c) t += x;
    return t;
  }
};

struct Setup {
  std::shared_ptr<rc::CudaBackend> backend;
  std::shared_ptr<rc::TritonKernelProvider> kernels;
  std::shared_ptr<run::ExternRegistry> externs;
  fs::path directory;
};

/// kernels.json naming the test export's two cubins under the programs'
/// kernel names (the null driver loads any bytes); the files are copied
/// beside it, as the provider reads only paths inside its directory.
fs::path write_kernels_json() {
  const fs::path data = fs::path(WRAPIR_SOURCE_DIR) / "tests/cuda/data/mlp_layernorm_gelu/kernels";
  const fs::path dir = fs::temp_directory_path() / "wrapir_executor_host_bench";
  fs::create_directories(dir / "kernels");
  for (const auto& file : fs::directory_iterator(data))
    fs::copy_file(file.path(), dir / "kernels" / file.path().filename(), fs::copy_options::overwrite_existing);
  auto entry = [&](const char* name, const char* real, int block, int warps, int shared) {
    return std::string("{\"name\": \"") + name + "\", \"language\": \"triton\", \"cubin\": \"kernels/" + real +
           ".cubin\", \"metadata\": \"kernels/" + real + ".json\", \"symbol\": \"" + real +
           "\", \"constants\": {\"XBLOCK\": " + std::to_string(block) + "}, \"num_warps\": " + std::to_string(warps) +
           ", \"shared_memory_bytes\": " + std::to_string(shared) + ", \"grid_type\": \"Grid1D\"}";
  };
  const char* norm = "triton_per_fused_native_layer_norm_0";
  const char* point = "triton_poi_fused_addmm_gelu_1";
  std::ofstream(dir / "kernels.json") << "{\"kernels\": [" << entry("k_norm", norm, 8, 2, 1024) << ", "
                                      << entry("k_bias_gelu", point, 128, 4, 0) << ", " << entry("k_relu", point, 128, 4, 0)
                                      << ", " << entry("k_add_relu", point, 128, 4, 0) << "]}";
  return dir;
}

Setup& setup() {
  static Setup s = [] {
    Setup out;
    out.backend = rc::CudaBackend::create(0).value();
    out.directory = write_kernels_json();
    out.kernels = rc::TritonKernelProvider::load(out.directory, out.backend).value();
    out.externs = std::make_shared<run::ExternRegistry>();
    for (const char* op : {"extern_kernels.mm", "extern_kernels.addmm", "extern_kernels.bmm"})
      (void)out.externs->add(op, [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
        benchmark::DoNotOptimize(c.args.data());
        return run::Value{};
      });
    return out;
  }();
  return s;
}

struct Prepared {
  run::Executor executor;
  std::vector<run::Tensor> inputs;
  std::int64_t triton = 0, lines = 0;
};

/// The test export's directory (its program.json and kernels.json).
fs::path export_directory() { return fs::path(WRAPIR_SOURCE_DIR) / "tests/cuda/data/mlp_layernorm_gelu"; }

std::string mlp_layernorm_gelu() {
  std::ifstream in(export_directory() / "program.json");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// `kernels`: the provider (null: the synthetic programs' kernels).
Prepared prepare(const std::string& json, bool graph = false,
                 run::CpuKernelProviderPtr kernels = nullptr) {
  Setup& s = setup();
  ir::Program p = wrapir::io::program_from_json(json).value();
  run::ExecutorOptions options{.device = s.backend, .kernels = kernels ? kernels : run::CpuKernelProviderPtr(s.kernels), .externs = s.externs};
  options.graph.enabled = graph;
  auto exe = run::Executor::prepare(p, options);
  if (!exe) {
    std::fprintf(stderr, "prepare: %s\n", exe.error().message.c_str());
    std::abort();
  }
  Prepared out{*std::move(exe), {}, 0, 0};
  for (const ir::ProgramInput& in : p.inputs) {
    const ir::BufferDecl& d = p.buffer(boost::variant2::get<ir::BufferId>(in));
    std::vector<std::int64_t> sizes, strides;
    for (wrapir::expr::Expr e : d.layout.sizes) sizes.push_back(e.value());
    for (wrapir::expr::Expr e : d.layout.strides) strides.push_back(e.value());
    const std::int64_t bytes = run::bytes_spanned(sizes, strides, 0, d.layout.dtype).value();
    out.inputs.push_back(run::Tensor{s.backend->allocate(d.layout.device, bytes).value(), d.layout.dtype, sizes, strides, 0});
  }
  for (const ir::Line& l : p.body) {
    if (std::holds_alternative<ir::KernelCall>(l)) ++out.triton;
    if (!std::holds_alternative<ir::KernelDefinition>(l)) ++out.lines;
  }
  return out;
}

void run_program(benchmark::State& state, const std::string& json, bool per_line, bool graph = false,
                 run::CpuKernelProviderPtr kernels = nullptr) {
  Prepared p = prepare(json, graph, std::move(kernels));
  for (int warm = 0; warm < 3; ++warm)
    if (auto r = p.executor.run(p.inputs); !r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
  const Counts before = Counts::now();
  const std::uint64_t heap_before = heap_allocations.load(std::memory_order_relaxed);
#if WRAPIR_EXECUTOR_PHASE_CLOCK
  wrapir::phase_clock::totals() = {};
#endif
  for (auto _ : state) {
    WRAPIR_PHASE_START();
    auto r = p.executor.run(p.inputs);
    benchmark::DoNotOptimize(r);
  }
  const std::uint64_t heap_after = heap_allocations.load(std::memory_order_relaxed);
  const Counts after = Counts::now();
  const double calls = static_cast<double>(state.iterations());
  auto per_call = [&](const char* name) { return static_cast<double>(after.of(name) - before.of(name)) / calls; };
  state.counters["launches"] = per_call("cuLaunchKernel");
  state.counters["mem_alloc"] = per_call("cuMemAlloc");
  state.counters["mem_free"] = per_call("cuMemFree");
  state.counters["heap_allocs"] = static_cast<double>(heap_after - heap_before) / calls;
  state.counters["driver_calls"] = static_cast<double>(after.total() - before.total()) / calls;
  // Event records and waits: 0 for a program without stream contexts.
  state.counters["stream_events"] = per_call("cuEventRecord") + per_call("cuStreamWaitEvent");
  const double items = static_cast<double>(per_line ? p.lines : std::max<std::int64_t>(p.triton, 1));
  state.counters[per_line ? "ns_per_line" : "ns_per_launch"] =
      benchmark::Counter(items * calls, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
#if WRAPIR_EXECUTOR_PHASE_CLOCK
  // Built with -DWRAPIR_EXECUTOR_PHASE_CLOCK=1: ns per call in each phase.
  const wrapir::phase_clock::Totals& t = wrapir::phase_clock::totals();
  for (std::size_t i = 0; i < t.ticks.size(); ++i)
    if (t.marks[i] != 0)
      state.counters[std::string("ns_") + wrapir::phase_clock::phase_names[i]] =
          static_cast<double>(t.ticks[i]) * wrapir::phase_clock::ns_per_tick() / calls;
#endif
  if (after.of("cuMemAlloc") != before.of("cuMemAlloc") || after.of("cuMemFree") != before.of("cuMemFree"))
    state.SkipWithError("the driver allocated or freed in steady state (the caching allocator should serve every buffer)");
}

void BM_add_relu(benchmark::State& state) { run_program(state, add_relu(), false); }
void BM_deep_mlp(benchmark::State& state) { run_program(state, deep_mlp(static_cast<int>(state.range(0))), false); }
void BM_addmm_mlp(benchmark::State& state) { run_program(state, addmm_mlp(static_cast<int>(state.range(0))), false); }
void BM_mlp_layernorm_gelu(benchmark::State& state) {
  static const std::shared_ptr<rc::TritonKernelProvider> kernels =
      rc::TritonKernelProvider::load(export_directory(), setup().backend).value();
  run_program(state, mlp_layernorm_gelu(), false, false, kernels);
}
void BM_launches(benchmark::State& state) { run_program(state, launches(static_cast<int>(state.range(0))), true); }
void BM_streams(benchmark::State& state) { run_program(state, streams(static_cast<int>(state.range(0))), false); }
void BM_alloc_free(benchmark::State& state) { run_program(state, alloc_free(static_cast<int>(state.range(0))), true); }
void BM_externs(benchmark::State& state) { run_program(state, externs(static_cast<int>(state.range(0))), true); }

/// The floor on this driver: the launches of `launches/L` as a loop of
/// cuLaunchKernel calls through the loaded table, arguments packed once.
void BM_raw_launch(benchmark::State& state) {
  (void)setup();
  const wrapir::cuda::Driver& d = wrapir::cuda::loaded_driver();
  std::uint64_t ptr = 0x7f0000000000ull, s0 = 0, s1 = 0;
  std::int32_t n = 1024;
  void* params[] = {&ptr, &n, &s0, &s1};
  const auto f = reinterpret_cast<CUfunction>(std::uintptr_t{0x3000});
  for (auto _ : state)
    for (std::int64_t i = 0; i < state.range(0); ++i)
      benchmark::DoNotOptimize(d.cuLaunchKernel(f, 8, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  state.counters["ns_per_launch"] =
      benchmark::Counter(static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_add_relu);
BENCHMARK(BM_deep_mlp)->Arg(64);
BENCHMARK(BM_addmm_mlp)->Arg(64);
BENCHMARK(BM_mlp_layernorm_gelu);
BENCHMARK(BM_launches)->Arg(64);
BENCHMARK(BM_alloc_free)->Arg(64);
BENCHMARK(BM_streams)->Arg(32);
BENCHMARK(BM_externs)->Arg(64);
BENCHMARK(BM_raw_launch)->Arg(64);
BENCHMARK_MAIN();
