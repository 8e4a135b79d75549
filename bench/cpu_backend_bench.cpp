// The CPU backend (include/wrapir/run/cpu): what a kernel costs to get
// cold (compile) and warm (cache hit: read the dependency list, hash the
// headers it names, check and dlopen the object), and the reference mm
// through OpenBLAS against a naive triple loop.
//
// The compile benchmarks use an Inductor-style kernel that includes
// torch's prefix header (the real cost of a corpus kernel) when the torch
// venv is found (cpu::find_torch_include), else a plain C++ kernel; the
// benchmark's label says which.
//
//   cmake --build --preset release --target cpu_backend_bench
//   build/release/bench/cpu_backend_bench

// g++ 12 at -O3 reports a -Wrestrict false positive in std::string
// concatenation inlined from wrapir/detail/safe_file.hpp (quoted_path); set
// before any include so that it covers the inlined library code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <wrapir/run/cpu/externs.hpp>
#include <wrapir/run/cpu/kernel_cache.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace cpu = wrapir::run::cpu;
namespace fs = std::filesystem;

/// Written for this benchmark in the shape of Inductor's generated kernels.
const char* const inductor_style_kernel = R"(#include <torch/csrc/inductor/cpp_prefix.h>
extern "C" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0)
{
    for (int64_t x0 = 0; x0 < 8192; x0 += at::vec::Vectorized<float>::size())
    {
        auto a = at::vec::Vectorized<float>::loadu(in_ptr0 + x0);
        auto b = at::vec::Vectorized<float>::loadu(in_ptr1 + x0);
        at::vec::clamp_min(a + b, decltype(a)(0)).store(out_ptr0 + x0);
    }
}
)";

const char* const plain_kernel = R"(#include <cstdint>
extern "C" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0) {
  for (std::int64_t i = 0; i < 8192; ++i) out_ptr0[i] = in_ptr0[i] + in_ptr1[i] > 0 ? in_ptr0[i] + in_ptr1[i] : 0;
}
)";

struct Setup {
  cpu::CompileOptions options;
  const char* source;
  const char* label;
};

Setup setup() {
  if (auto torch = cpu::find_torch_include())
    return {cpu::inductor_compile_options(*torch), inductor_style_kernel, "inductor prefix header"};
  cpu::CompileOptions o;
  o.flags = {"-O3", "-std=c++17"};
  return {o, plain_kernel, "plain C++ (no torch venv)"};
}

const std::vector<wrapir::ir::KernelParam>& signature() {
  static const std::vector<wrapir::ir::KernelParam> s{
      {"in_ptr0", {true, wrapir::ir::DType::float32}},
      {"in_ptr1", {true, wrapir::ir::DType::float32}},
      {"out_ptr0", {true, wrapir::ir::DType::float32}}};
  return s;
}

fs::path fresh_directory() {
  std::string t = (fs::temp_directory_path() / "wrapir-cpu-bench.XXXXXX").string();
  if (::mkdtemp(t.data()) == nullptr) return {};
  return t;
}

void BM_KernelCompileCold(benchmark::State& state) {
  const Setup s = setup();
  std::vector<fs::path> dirs;
  for (auto _ : state) {
    state.PauseTiming();
    dirs.push_back(fresh_directory());
    cpu::KernelCache cache{dirs.back() / "cache", s.options};
    state.ResumeTiming();
    auto k = cache.load("bench_kernel", s.source, signature());
    if (!k || k->from_cache) {
      state.SkipWithError(k ? "unexpected cache hit" : k.error().message.c_str());
      break;
    }
  }
  std::error_code ec;
  for (const auto& d : dirs) fs::remove_all(d, ec);
  state.SetLabel(s.label);
}
BENCHMARK(BM_KernelCompileCold)->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_KernelCacheHit(benchmark::State& state) {
  const Setup s = setup();
  const fs::path dir = fresh_directory();
  {
    cpu::KernelCache warm{dir / "cache", s.options};
    if (!warm.load("bench_kernel", s.source, signature())) {
      state.SkipWithError("the kernel does not compile");
      return;
    }
  }
  for (auto _ : state) {
    // A new cache object each time: nothing is remembered but the process's
    // memo of file digests and compiler identities.
    cpu::KernelCache cache{dir / "cache", s.options};
    auto k = cache.load("bench_kernel", s.source, signature());
    if (!k || !k->from_cache) {
      state.SkipWithError("expected a cache hit");
      break;
    }
    benchmark::DoNotOptimize(k);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  state.SetLabel(s.label);
}
BENCHMARK(BM_KernelCacheHit)->Unit(benchmark::kMicrosecond);

std::vector<float> random_matrix(std::int64_t n, std::uint32_t seed) {
  std::vector<float> m(static_cast<std::size_t>(n * n));
  for (auto& x : m) {
    seed = seed * 1664525U + 1013904223U;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1U << 24) - 0.5F;
  }
  return m;
}

wrapir::run::Tensor tensor_of(std::vector<float>& data, std::int64_t n) {
  auto storage = std::make_shared<wrapir::run::Storage>();
  storage->data = reinterpret_cast<std::byte*>(data.data());
  storage->nbytes = static_cast<std::int64_t>(data.size() * sizeof(float));
  storage->device = wrapir::ir::Device{wrapir::ir::DeviceType::cpu, std::nullopt};
  return wrapir::run::Tensor{storage, wrapir::ir::DType::float32, {n, n}, {n, 1}, 0};
}

void BM_MmOpenBlas(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto a = random_matrix(n, 1), b = random_matrix(n, 2), c = std::vector<float>(static_cast<std::size_t>(n * n));
  const std::vector<wrapir::run::Value> args{wrapir::run::Value{tensor_of(a, n)}, wrapir::run::Value{tensor_of(b, n)}};
  const std::vector<wrapir::run::KeywordArg> kwargs{{"out", wrapir::run::Value{tensor_of(c, n)}}};
  for (auto _ : state) {
    auto r = cpu::mm_extern(wrapir::run::ExternCall{"extern_kernels.mm", args, kwargs});
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MmOpenBlas)->Arg(256)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_MmNaive(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  auto a = random_matrix(n, 1), b = random_matrix(n, 2), c = std::vector<float>(static_cast<std::size_t>(n * n));
  for (auto _ : state) {
    // i-k-j order (unit-stride inner loop), what a hand-written loop would be.
    std::fill(c.begin(), c.end(), 0.0F);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < n; ++k) {
        const float aik = a[i * n + k];
        for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
      }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MmNaive)->Arg(256)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
