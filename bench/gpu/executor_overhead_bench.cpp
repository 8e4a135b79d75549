// Host time per call and per launch of whole Inductor programs on the
// executor's CUDA backend, against a raw cuLaunchKernel loop over the same
// programs' Triton launches (issue 14 §5; bench/gpu/executor_overhead.py
// adds Inductor's own call() and torch.compile(mode="reduce-overhead") and
// writes the table of docs/performance.md).
//
//   WRAPIR_BENCH_EXPORTS=DIR[:DIR...] WRAPIR_CUBLAS=/path/libcublas.so.13 executor_overhead_bench
//
// Each DIR is an export of `wrapir_inductor check --device cuda` (program.json,
// kernels.json, kernels/, inputs.safetensors). Per program:
//
// * Executor/NAME — `Executor::run` on device-resident inputs: bind, every
//   line (allocations from the caching allocator, Triton launches, cuBLAS
//   GEMMs, frees), outputs. Each iteration is timed from the call to its
//   return (manual time), then the GPU is waited for, untimed, so the queue
//   never blocks the host. Items are the program's launches (kernels and
//   externs): ns per item is host time per launch.
// * Graph/NAME — the same executor in CUDA Graph mode
//   (`ExecutorOptions::graph`): after the capturing first call, each call
//   compares its input addresses and launches the cached graph. Items are
//   the program's launches too, but the figure to read is µs per call
//   (fixed cost: one cuGraphLaunch whatever the launch count).
// * Stubbed/NAME — the executor with every extern replaced by a function
//   that returns at once: the same Triton launches, allocations and line
//   dispatch, no cuBLAS. Divided by the Triton launches, this is the
//   figure to compare with RawLaunch per launch (the GPU computes garbage
//   where a GEMM result would be; the host's work is the same).
// * Paired/NAME — Stubbed/ and RawLaunch/ alternated call by call in one
//   loop (raw loop, wait, stubbed executor, wait): the two figures are
//   taken under the same machine state, which drifts by 10-40 % between
//   benchmarks run seconds apart on the GPU host. Counters: the medians of
//   each (`raw_us`, `stubbed_us`, per call) and the median of the per-pair
//   ratios per Triton launch (`stubbed_over_raw`): the figure.
// * RawLaunch/NAME — the program's Triton launches only, with their grids,
//   blocks and shared memory, as one loop of cuLaunchKernel calls on
//   argument arrays packed beforehand (pointers into one scratch buffer):
//   the driver's own cost, the floor any wrapper sits on.
//
// Built with -DWRAPIR_EXECUTOR_PHASE_CLOCK=1 (include/wrapir/detail/phase_clock.hpp),
// Executor/, Stubbed/ and RawLaunch/ also report where each call's host
// time went: counters `ns_PHASE` (ns per call, exclusive phases; the raw
// loop's are `driver_launch` and `raw_other`), from the time-stamp counter
// calibrated against steady_clock at start. Built as executor_overhead_phases.
//
// Without a device or without WRAPIR_BENCH_EXPORTS the binary says why and
// exits 0 (CI's smoke run). A program the executor cannot prepare is
// reported and skipped.

#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/triton.hpp>
#include <wrapir/cuda/triton_json.hpp>
#include <wrapir/detail/phase_clock.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/grid.hpp>

#include <benchmark/benchmark.h>
#include <boost/json/src.hpp>  // Boost.JSON compiled in: GPU-only builds have no wrapir::json

#include "gpu_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace drv = wrapir::cuda;
namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// One program's raw launch loop: functions, configurations and packed
/// argument arrays, made once.
struct RawLoop {
  std::vector<drv::Module> modules;
  std::vector<drv::TritonKernel> kernels;
  struct Launch {
    CUfunction f{};
    run::Dim3 grid{}, block{};
    unsigned shared = 0;
    std::vector<std::uint64_t> values;  // 8 bytes per argument (+2 null scratch)
    std::vector<void*> params;
  };
  std::vector<Launch> launches;
  drv::DeviceBuffer scratch;
};

wrapir::Result<std::unique_ptr<RawLoop>> make_raw_loop(const fs::path& dir, const ir::Program& p) {
  auto entries = rc::triton_entries_from_json(read_file(dir / "kernels.json"));
  if (!entries) return entries.error();
  auto loop = std::make_unique<RawLoop>();
  auto scratch = drv::DeviceBuffer::allocate(std::size_t{64} << 20);
  if (!scratch) return scratch.error();
  loop->scratch = *std::move(scratch);
  std::map<std::string, std::size_t> loaded;  // kernel name -> index in kernels
  loop->modules.reserve(entries->size());
  loop->kernels.reserve(entries->size());
  for (const ir::Line& line : p.body) {
    const auto* call = std::get_if<ir::KernelCall>(&line);
    if (call == nullptr) continue;
    const ir::KernelDecl& decl = p.kernel(call->kernel);
    const rc::TritonKernelEntry* e = nullptr;
    for (const auto& x : *entries)
      if (x.name == decl.name) e = &x;
    if (e == nullptr || e->cubin.empty() || !e->grid_type) return wrapir::Diagnostic{decl.name + ": no cubin"};
    auto it = loaded.find(decl.name);
    if (it == loaded.end()) {
      auto meta = drv::triton_metadata_from_json(read_file(dir / e->metadata));
      if (!meta) return meta.error();
      auto m = drv::Module::load_file(dir / e->cubin);
      if (!m) return m.error();
      loop->modules.push_back(*std::move(m));
      auto k = drv::TritonKernel::load(loop->modules.back(), *meta);
      if (!k) return k.error();
      loop->kernels.push_back(*std::move(k));
      it = loaded.emplace(decl.name, loop->kernels.size() - 1).first;
    }
    const drv::TritonKernel& k = loop->kernels[it->second];
    RawLoop::Launch l;
    l.f = k.function().get();
    l.block = k.block();
    l.shared = static_cast<unsigned>(k.metadata().shared_bytes);
    std::vector<run::NamedInt> numels, block;
    for (const auto& [name, value] : e->constants) block.push_back({name, value});
    for (std::size_t i = 0; i < call->args.size(); ++i) {
      std::uint64_t v = 0;
      if (call->args[i].holds<ir::BufferArg>()) {
        v = loop->scratch.address();
      } else if (const std::int64_t* n = call->args[i].get_if<std::int64_t>()) {
        v = static_cast<std::uint64_t>(*n);
        if (decl.signature[i].name.find("numel") != std::string::npos) numels.push_back({decl.signature[i].name, *n});
      } else {
        return wrapir::Diagnostic{decl.name + ": argument " + std::to_string(i) + " is not a constant"};
      }
      l.values.push_back(v);
    }
    auto grid = run::grid_dims(*e->grid_type, numels, block);
    if (!grid) return grid.error();
    l.grid = *grid;
    l.values.push_back(0);
    l.values.push_back(0);
    loop->launches.push_back(std::move(l));
  }
  // Pointers into values only once every vector has its final address.
  for (RawLoop::Launch& l : loop->launches)
    for (std::uint64_t& v : l.values) l.params.push_back(&v);
  return loop;
}

struct Program {
  std::string name;
  ir::Program program;
  std::optional<run::Executor> executor;
  std::optional<run::Executor> graphed;  // graph mode
  std::optional<run::Executor> stubbed;  // externs that do nothing
  std::vector<run::Tensor> inputs;
  std::vector<std::int64_t> scalars;
  std::int64_t launches = 0, triton_launches = 0;
  std::unique_ptr<RawLoop> raw;
};

struct Fixture {
  std::shared_ptr<rc::CudaBackend> backend;
  std::vector<std::unique_ptr<Program>> programs;
};
std::optional<Fixture> fixture;

std::int64_t count_launches(const ir::Program& p, bool triton_only) {
  std::int64_t n = 0;
  for (const ir::Line& line : p.body)
    std::visit(
        [&]<class K>(const K&) {
          if constexpr (std::is_same_v<K, ir::KernelCall> || std::is_same_v<K, ir::MultiKernelCall>) ++n;
          else if constexpr (std::is_same_v<K, ir::ExternKernelOut> || std::is_same_v<K, ir::ExternKernelAlloc> ||
                             std::is_same_v<K, ir::ExternKernelMultiOut> || std::is_same_v<K, ir::ScatterFallback> ||
                             std::is_same_v<K, ir::IndexPutFallback>)
            n += triton_only ? 0 : 1;
        },
        line);
  return n;
}

std::unique_ptr<Program> load(const fs::path& dir) {
  auto p = std::make_unique<Program>();
  p->name = dir.filename().string();
  auto program = wrapir::io::program_from_json(read_file(dir / "program.json"));
  if (!program) {
    std::fprintf(stderr, "%s: %s\n", p->name.c_str(), program.error().message.c_str());
    return nullptr;
  }
  p->program = *std::move(program);
  auto kernels = rc::TritonKernelProvider::load(dir, fixture->backend);
  if (!kernels) {
    std::fprintf(stderr, "%s: %s\n", p->name.c_str(), kernels.error().message.c_str());
    return nullptr;
  }
  run::ExecutorOptions options{.device = fixture->backend, .kernels = *kernels,
                               .externs = rc::cublas_externs(fixture->backend)};
  auto exe = run::Executor::prepare(p->program, options);
  if (!exe) {
    std::fprintf(stderr, "%s: skipped: %s\n", p->name.c_str(), exe.error().message.c_str());
    return nullptr;
  }
  p->executor.emplace(*std::move(exe));
  {
    auto stubs = std::make_shared<run::ExternRegistry>();
    for (const ir::Line& line : p->program.body)
      if (const auto* e = std::get_if<ir::ExternKernelOut>(&line))
        (void)stubs->add(e->kernel.text, [](const run::ExternCall&) -> wrapir::Result<run::Value> { return run::Value{}; });
    run::ExecutorOptions stubbed = options;
    stubbed.externs = stubs;
    if (auto s = run::Executor::prepare(p->program, stubbed)) p->stubbed.emplace(*std::move(s));
    else std::fprintf(stderr, "%s: no stubbed executor: %s\n", p->name.c_str(), s.error().message.c_str());
  }
  options.graph.enabled = true;
  if (auto graphed = run::Executor::prepare(p->program, options)) p->graphed.emplace(*std::move(graphed));
  else std::fprintf(stderr, "%s: no graph mode: %s\n", p->name.c_str(), graphed.error().message.c_str());
  auto file = wrapir::io::read_safetensors(dir / "inputs.safetensors");
  if (!file) {
    std::fprintf(stderr, "%s: %s\n", p->name.c_str(), file.error().message.c_str());
    return nullptr;
  }
  for (const ir::ProgramInput& in : p->program.inputs) {
    const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in);
    if (b == nullptr) {
      std::fprintf(stderr, "%s: skipped: scalar inputs are not benchmarked\n", p->name.c_str());
      return nullptr;
    }
    const ir::BufferDecl& d = p->program.buffer(*b);
    const run::Tensor* t = file->find(d.name);
    if (t == nullptr) return nullptr;
    if (d.layout.device.type == ir::DeviceType::cpu) {
      p->inputs.push_back(*t);
      continue;
    }
    auto storage = wrapir_bench::must(fixture->backend->allocate(d.layout.device, t->storage->nbytes));
    (void)fixture->backend->copy(storage->data, storage->device, t->storage->data, t->device(), t->storage->nbytes);
    p->inputs.push_back(run::Tensor{storage, t->dtype, t->sizes, t->strides, t->offset});
  }
  p->launches = count_launches(p->program, false);
  p->triton_launches = count_launches(p->program, true);
  if (auto raw = make_raw_loop(dir, p->program)) p->raw = *std::move(raw);
  else std::fprintf(stderr, "%s: no raw loop: %s\n", p->name.c_str(), raw.error().message.c_str());
  return p;
}

enum class Mode { plain, graph, stubbed };

namespace pc = wrapir::phase_clock;

/// Clears this thread's phase totals (a no-op without the phase clock).
void reset_phases() {
#if WRAPIR_EXECUTOR_PHASE_CLOCK
  pc::totals() = pc::Totals{};
#endif
}

/// The phase totals since `reset_phases`, as ns per call.
void report_phases(benchmark::State& state) {
#if WRAPIR_EXECUTOR_PHASE_CLOCK
  const pc::Totals& t = pc::totals();
  const double calls = static_cast<double>(state.iterations());
  for (std::size_t i = 0; i < t.ticks.size(); ++i)
    if (t.marks[i] != 0)
      state.counters[std::string("ns_") + pc::phase_names[i]] = static_cast<double>(t.ticks[i]) * pc::ns_per_tick() / calls;
#else
  (void)state;
#endif
}

void executor_call(benchmark::State& state, Program* p, Mode mode) {
  const bool graph = mode == Mode::graph;
  const run::Executor& exe = graph ? *p->graphed : mode == Mode::stubbed ? *p->stubbed : *p->executor;
  reset_phases();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    WRAPIR_PHASE_START();
    auto out = exe.run(p->inputs, p->scalars);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!out) {
      state.SkipWithError(out.error().message.c_str());
      break;
    }
    out->clear();  // the outputs' blocks go back to the allocator before the wait
    if (auto s = fixture->backend->synchronize(); !s) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * p->launches);
  state.counters["launches"] = static_cast<double>(p->launches);
  if (!graph) report_phases(state);
  if (graph) {
    const run::GraphModeStats g = exe.graph_stats();
    state.counters["captured"] = static_cast<double>(g.captured);
    state.counters["updated"] = static_cast<double>(g.updated);
  }
}

void raw_loop(benchmark::State& state, Program* p) {
  const drv::Driver& d = drv::loaded_driver();
  CUstream stream = fixture->backend->stream();
  reset_phases();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    WRAPIR_PHASE_START();
    bool ok = true;
    for (RawLoop::Launch& l : p->raw->launches) {
      WRAPIR_PHASE_MARK(raw_other);
      ok &= d.cuLaunchKernel(l.f, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.shared, stream,
                             l.params.data(), nullptr) == CUDA_SUCCESS;
      WRAPIR_PHASE_MARK(driver_launch);
    }
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!ok) {
      state.SkipWithError("a launch failed");
      break;
    }
    if (auto s = fixture->backend->synchronize(); !s) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(p->raw->launches.size()));
  state.counters["launches"] = static_cast<double>(p->raw->launches.size());
  report_phases(state);
}

/// Stubbed/ and RawLaunch/ alternated per call (see the file comment).
void paired(benchmark::State& state, Program* p) {
  const drv::Driver& d = drv::loaded_driver();
  CUstream stream = fixture->backend->stream();
  const run::Executor& exe = *p->stubbed;
  std::vector<double> raw_s, stubbed_s, ratio;
  raw_s.reserve(static_cast<std::size_t>(state.max_iterations));
  stubbed_s.reserve(raw_s.capacity());
  ratio.reserve(raw_s.capacity());
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    bool ok = true;
    for (RawLoop::Launch& l : p->raw->launches)
      ok &= d.cuLaunchKernel(l.f, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.shared, stream,
                             l.params.data(), nullptr) == CUDA_SUCCESS;
    const double raw = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ok || !fixture->backend->synchronize()) {
      state.SkipWithError("a raw launch failed");
      break;
    }
    t0 = std::chrono::steady_clock::now();
    auto out = exe.run(p->inputs, p->scalars);
    const double stubbed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!out) {
      state.SkipWithError(out.error().message.c_str());
      break;
    }
    out->clear();
    if (auto s = fixture->backend->synchronize(); !s) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
    state.SetIterationTime(raw + stubbed);
    raw_s.push_back(raw);
    stubbed_s.push_back(stubbed);
    // Per Triton launch on both sides: the raw loop has exactly those.
    ratio.push_back(stubbed / raw * static_cast<double>(p->raw->launches.size()) /
                    static_cast<double>(p->triton_launches));
  }
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  state.counters["raw_us"] = median(raw_s) * 1e6;
  state.counters["stubbed_us"] = median(stubbed_s) * 1e6;
  state.counters["stubbed_over_raw"] = median(ratio);
  state.counters["triton_launches"] = static_cast<double>(p->triton_launches);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto why = drv::no_device_reason()) {
    std::printf("executor_overhead_bench: skipped: no CUDA device (%s)\n", why->c_str());
    return 0;
  }
  const char* exports = std::getenv("WRAPIR_BENCH_EXPORTS");
  if (exports == nullptr || *exports == '\0') {
    std::printf("executor_overhead_bench: skipped: set WRAPIR_BENCH_EXPORTS to export folders (DIR[:DIR...])\n");
    return 0;
  }
#if WRAPIR_EXECUTOR_PHASE_CLOCK
  (void)pc::ns_per_tick();  // calibrated before any timing
#endif
  fixture.emplace();
  fixture->backend = wrapir_bench::must(rc::CudaBackend::create(0));
  benchmark::AddCustomContext("gpu", wrapir_bench::must(drv::device_info(0)).name);
  std::stringstream list(exports);
  for (std::string dir; std::getline(list, dir, ':');) {
    if (dir.empty()) continue;
    auto p = load(dir);
    if (!p) continue;
    // One unmeasured call: multi-kernels choose, the allocator fills its lists.
    if (auto first = p->executor->run(p->inputs, p->scalars); !first) {
      std::fprintf(stderr, "%s: skipped: %s\n", p->name.c_str(), first.error().message.c_str());
      continue;
    }
    (void)fixture->backend->synchronize();
    if (p->graphed) {
      // Two unmeasured calls: the first captures, the second replays once.
      for (int i = 0; i < 2 && p->graphed; ++i)
        if (auto r = p->graphed->run(p->inputs, p->scalars); !r) {
          std::fprintf(stderr, "%s: graph mode: %s\n", p->name.c_str(), r.error().message.c_str());
          p->graphed.reset();
        }
      (void)fixture->backend->synchronize();
    }
    Program* raw = p.get();
    if (p->stubbed && !p->stubbed->run(p->inputs, p->scalars)) p->stubbed.reset();
    (void)fixture->backend->synchronize();
    benchmark::RegisterBenchmark(("Executor/" + p->name).c_str(), executor_call, raw, Mode::plain)
        ->UseManualTime()
        ->Iterations(2000);
    if (p->stubbed)
      benchmark::RegisterBenchmark(("Stubbed/" + p->name).c_str(), executor_call, raw, Mode::stubbed)
          ->UseManualTime()
          ->Iterations(2000);
    if (p->graphed)
      benchmark::RegisterBenchmark(("Graph/" + p->name).c_str(), executor_call, raw, Mode::graph)
          ->UseManualTime()
          ->Iterations(2000);
    if (p->raw)
      benchmark::RegisterBenchmark(("RawLaunch/" + p->name).c_str(), raw_loop, raw)->UseManualTime()->Iterations(2000);
    if (p->raw && p->stubbed)
      benchmark::RegisterBenchmark(("Paired/" + p->name).c_str(), paired, raw)->UseManualTime()->Iterations(2000);
    fixture->programs.push_back(std::move(p));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fixture.reset();
  return 0;
}
