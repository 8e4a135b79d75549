// Host-only checks of the executor's PTX, cubin and CUDA C++ kernels
// (run/cuda/binary_kernels.hpp, run/cuda/cuda_cpp_kernels.hpp) and of the
// executor's part in them (the grid a PTX or cubin call gives is passed
// after the arguments; the GPU test's program run with its kernels emulated
// over their grids; the chain of every device language): what must work, or fail with a clear diagnostic,
// without a GPU. Binary paths that escape the kernel directory, missing,
// linked and mislabelled files, metadata without num_warps; nvcc missing
// (WRAPIR_NVCC naming no file); real CUDA C++ compiled by nvcc where this
// machine has one (no GPU needed): the cache's identity follows the source,
// the flags and the architecture, a second load is a hit, and nvcc's error
// message reaches the diagnostic, with the line and the kernel when the
// executor prepares the program.

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/cuda/binary_kernels.hpp>
#include <wrapir/run/cuda/cuda_cpp_kernels.hpp>
#include <wrapir/run/cuda/kernel_providers.hpp>
#include <wrapir/run/executor.hpp>

#include <doctest/doctest.h>

#include "support/device_kernels_program.hpp"
#include "support/float_tensor.hpp"
#include "support/tagged_host_backend.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A fresh directory, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& what) {
    std::string pattern = (fs::temp_directory_path() / ("wrapir_" + what + "_XXXXXX")).string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Sets an environment variable for one scope, then restores it.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value != nullptr) ::setenv(name.c_str(), value, 1);
    else ::unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

const std::vector<ir::KernelParam> add_signature{{"out", {true, ir::DType::float32}},
                                                 {"a", {true, ir::DType::float32}},
                                                 {"b", {true, ir::DType::float32}},
                                                 {"n", {false, ir::DType::int32}}};

ir::KernelMetadata warps(std::int64_t n) {
  ir::KernelMetadata m;
  m.num_warps = n;
  return m;
}

std::string refusal(const run::KernelProvider& p, ir::KernelLanguage language, const ir::BinaryRef* binary,
                    const ir::KernelMetadata* metadata) {
  const run::KernelRequest request{"add_kernel", language, "", add_signature, metadata, binary};
  auto r = p.provide(request);
  REQUIRE_MESSAGE(!r.has_value(), "expected a diagnostic");
  return r.error().message;
}

const char* scale_source = wrapir_test::cuda_scale_source;

const std::vector<ir::KernelParam> scale_signature{{"y", {true, ir::DType::float32}},
                                                   {"x", {true, ir::DType::float32}},
                                                   {"alpha", {false, ir::DType::float32}},
                                                   {"n", {false, ir::DType::int32}}};

bool have_nvcc() {
  if (rc::find_nvcc()) return true;
  MESSAGE("no nvcc on this machine: CUDA C++ compiles not checked here");
  return false;
}

}  // namespace

TEST_CASE("binary kernels: paths must stay inside the kernel directory") {
  const fs::path dir = "/kernels";
  CHECK(*rc::kernel_file_path(dir, "a/k.ptx") == fs::path("/kernels/a/k.ptx"));
  CHECK(contains(rc::kernel_file_path(dir, "").error().message, "empty"));
  CHECK(contains(rc::kernel_file_path(dir, "/etc/passwd").error().message, "is absolute"));
  CHECK(contains(rc::kernel_file_path(dir, "../k.cubin").error().message, "leaves the kernel directory"));
  CHECK(contains(rc::kernel_file_path(dir, "a/../../k.cubin").error().message, "leaves the kernel directory"));
}

TEST_CASE("binary kernels: refusals before any driver call") {
  TempDir dir("binary_kernels");
  fs::create_directories(dir.path / "k");
  std::ofstream(dir.path / "k" / "add.ptx") << ".version 8.0\n.target sm_90\n";
  std::ofstream(dir.path / "k" / "empty.cubin");
  fs::create_symlink(dir.path / "k" / "add.ptx", dir.path / "k" / "link.ptx");
  const rc::BinaryKernelProvider p(dir.path, nullptr);
  const ir::KernelMetadata four = warps(4);

  SUBCASE("other languages are not its") {
    const run::KernelRequest triton{"t", ir::KernelLanguage::triton, "src", add_signature, &four, nullptr};
    auto r = p.provide(triton);
    REQUIRE(r.has_value());
    CHECK_FALSE(*r);
  }
  SUBCASE("a definition without a binary") {
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, nullptr, &four), "defined by a binary"));
  }
  SUBCASE("metadata without num_warps, or out of range") {
    const ir::BinaryRef ref{"k/add.ptx", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &ref, nullptr), "no num_warps"));
    const ir::KernelMetadata none{};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &ref, &none), "no num_warps"));
    const ir::KernelMetadata many = warps(33);
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &ref, &many), "outside 1..32"));
  }
  SUBCASE("paths that escape, missing files, links, empty files") {
    const ir::BinaryRef absolute{(dir.path / "k" / "add.ptx").string(), "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &absolute, &four), "is absolute"));
    const ir::BinaryRef up{"k/../../add.ptx", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &up, &four), "leaves the kernel directory"));
    const ir::BinaryRef missing{"k/missing.ptx", "add_f32"};
    const std::string gone = refusal(p, ir::KernelLanguage::ptx, &missing, &four);
    CHECK(contains(gone, "missing.ptx"));
    CHECK(contains(gone, "No such file"));
    const ir::BinaryRef link{"k/link.ptx", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &link, &four), "link"));
    const ir::BinaryRef empty{"k/empty.cubin", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::cubin, &empty, &four), "is empty"));
    const ir::BinaryRef directory{"k", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &directory, &four), "directory"));
  }
  SUBCASE("a file of the other kind") {
    const ir::BinaryRef ptx{"k/add.ptx", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::cubin, &ptx, &four), "is not a cubin"));
    std::ofstream(dir.path / "k" / "elf.cubin", std::ios::binary) << "\x7f" "ELF....";
    const ir::BinaryRef elf{"k/elf.cubin", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &elf, &four), "is a cubin, but the kernel's language is ptx"));
  }
  SUBCASE("a good file, but no backend to load it on") {
    const ir::BinaryRef ptx{"k/add.ptx", "add_f32"};
    CHECK(contains(refusal(p, ir::KernelLanguage::ptx, &ptx, &four), "no CUDA backend"));
  }
}

// The executor's part, on the CPU: a kernel registered for a PTX kernel's
// name receives the grid its call gives after its arguments; a call of it
// without a grid is refused naming the line and the kernel.
TEST_CASE("the executor passes a PTX or cubin call's grid after the arguments") {
  for (const auto language : {ir::KernelLanguage::ptx, ir::KernelLanguage::cubin}) {
    for (const bool typed : {false, true}) {
      ir::Program p{"grid"};
      ir::Builder b{p, wrapir::cpu_device()};
      auto& ctx = p.ctx();
      const auto n = b.size_symbol("s0", 1000);
      const auto x = b.input("x", {n}, wrapir::f32);
      const auto k = b.kernel("add_kernel", language, ir::BinaryRef{"k.bin", "add_f32"}, "x: *fp32, n: i64",
                              warps(4));
      ir::CallOptions call;
      if (typed)
        call.grid = ir::TypedGrid{ir::GridType::grid_1d, {ir::NamedExpr{ir::Name{"xnumel"}, n}},
                                  {ir::BlockSize{ir::Name{"XBLOCK"}, 128}}};
      else
        call.grid = ir::ExplicitGrid{wrapir::expr::ceil_div(n, ctx.integer(128)), ctx.integer(2), ctx.integer(3)};
      b.call(k, {x, n}, call);
      b.output(x);

      auto registry = std::make_shared<run::KernelRegistry>();
      std::vector<std::int64_t> seen;
      REQUIRE(registry->add("add_kernel", run::KernelFn{[&seen](std::span<void* const> args) -> wrapir::Result<void> {
                              seen.clear();
                              for (std::size_t i = 1; i < args.size(); ++i) {
                                std::int64_t v = 0;
                                std::memcpy(&v, args[i], sizeof v);
                                seen.push_back(v);
                              }
                              return {};
                            }}));
      auto exe = run::Executor::prepare(p, run::ExecutorOptions{.kernels = registry});
      REQUIRE_MESSAGE(exe, exe.error().message);
      const std::vector<run::Tensor> in{wrapir_test::float_tensor({1000}, std::vector<float>(1000, 1.0f))};
      const std::vector<std::int64_t> scalars{1000};
      auto r = exe->run(in, scalars);
      REQUIRE_MESSAGE(r, r.error().message);
      // n, then the grid: ceil(1000 / 128) = 8 blocks.
      CHECK(seen == (typed ? std::vector<std::int64_t>{1000, 8, 1, 1} : std::vector<std::int64_t>{1000, 8, 2, 3}));
    }
  }
  // Without a grid at the call: refused when prepared, naming line and kernel.
  ir::Program p{"no_grid"};
  ir::Builder b{p, wrapir::cpu_device()};
  const auto x = b.input("x", {p.ctx().integer(4)}, wrapir::f32);
  const auto k = b.kernel("add_kernel", ir::KernelLanguage::ptx, ir::BinaryRef{"k.bin", "add_f32"}, "x: *fp32",
                          warps(4));
  b.call(k, {x});
  b.output(x);
  auto registry = std::make_shared<run::KernelRegistry>();
  REQUIRE(registry->add("add_kernel", run::KernelFn{[](std::span<void* const>) -> wrapir::Result<void> { return {}; }}));
  auto exe = run::Executor::prepare(p, run::ExecutorOptions{.kernels = registry});
  REQUIRE_FALSE(exe);
  CHECK(contains(exe.error().message, "(KernelCall)"));
  CHECK(contains(exe.error().message, "'add_kernel' is a ptx kernel, launched over the grid its call gives"));
}

TEST_CASE("CUDA C++ kernels: nvcc missing is a diagnostic, not a crash") {
  TempDir cache("cuda_cpp_cache");
  const ScopedEnv nvcc("WRAPIR_NVCC", "/nonexistent/nvcc");
  const std::string why = rc::find_nvcc().error().message;
  CHECK(contains(why, "WRAPIR_NVCC names '/nonexistent/nvcc'"));
  const rc::CudaCppKernelProvider p(nullptr, {.cache_directory = cache.path, .arch = "sm_90"});
  const run::KernelRequest request{"cuda_scale", ir::KernelLanguage::cuda, scale_source, scale_signature, nullptr};
  auto r = p.provide(request);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "WRAPIR_NVCC"));
  // Not its language: not its kernel, and nvcc is never looked for.
  const run::KernelRequest triton{"t", ir::KernelLanguage::triton, "src", scale_signature, nullptr};
  auto other = p.provide(triton);
  REQUIRE(other.has_value());
  CHECK_FALSE(*other);
  // Without a backend and without an architecture there is nothing to target.
  const ScopedEnv unset("WRAPIR_NVCC", nullptr);
  if (!have_nvcc()) return;
  const rc::CudaCppKernelProvider no_arch(nullptr, {.cache_directory = cache.path});
  CHECK(contains(no_arch.provide(request).error().message, "no architecture"));
}

TEST_CASE("CUDA C++ kernels: compiled by nvcc, cached by identity") {
  if (!have_nvcc()) return;
  TempDir cache("cuda_cpp_cache");
  const rc::CudaCppKernelProvider p(nullptr, {.cache_directory = cache.path, .arch = "sm_90"});
  auto first = p.compile("cuda_scale", scale_source, scale_signature);
  REQUIRE_MESSAGE(first, first.error().message);
  CHECK_FALSE(first->from_cache);
  auto again = p.compile("cuda_scale", scale_source, scale_signature);
  REQUIRE_MESSAGE(again, again.error().message);
  CHECK(again->from_cache);
  CHECK(again->identity == first->identity);

  // The identity follows the source, the flags and the architecture.
  const std::string edited = std::string(scale_source) + "\n// edited\n";
  auto other_source = p.compile("cuda_scale", edited, scale_signature);
  REQUIRE_MESSAGE(other_source, other_source.error().message);
  CHECK(other_source->identity != first->identity);
  const rc::CudaCppKernelProvider flagged(nullptr,
                                          {.cache_directory = cache.path, .arch = "sm_90", .flags = {"-DWRAPIR_X=1"}});
  auto other_flags = flagged.compile("cuda_scale", scale_source, scale_signature);
  REQUIRE_MESSAGE(other_flags, other_flags.error().message);
  CHECK(other_flags->identity != first->identity);
  const rc::CudaCppKernelProvider hopper_a(nullptr, {.cache_directory = cache.path, .arch = "sm_90a"});
  auto other_arch = hopper_a.compile("cuda_scale", scale_source, scale_signature);
  REQUIRE_MESSAGE(other_arch, other_arch.error().message);
  CHECK(other_arch->identity != first->identity);

  // The function provide returns checks its argument count before calling;
  // the cache's identity names the kernel in the multi-kernel choice cache.
  const run::KernelRequest request{"cuda_scale", ir::KernelLanguage::cuda, scale_source, scale_signature, nullptr};
  auto fn = p.provide(request);
  REQUIRE_MESSAGE(fn, fn.error().message);
  REQUIRE(*fn);
  CHECK(fn->identity == first->identity.hex());
  void* one = nullptr;
  auto r = fn->fn(std::span<void* const>(&one, 1));
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "called with 1 arguments, expected 4"));
}

TEST_CASE("CUDA C++ kernels: nvcc's message and signature mismatches reach the diagnostic") {
  if (!have_nvcc()) return;
  TempDir cache("cuda_cpp_cache");
  const rc::CudaCppKernelProvider p(nullptr, {.cache_directory = cache.path, .arch = "sm_90"});
  const std::string broken = std::string(scale_source) + "\nthis is not CUDA;\n";
  auto r = p.compile("cuda_scale", broken, scale_signature);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "CUDA C++ kernel 'cuda_scale': does not compile"));
  CHECK(contains(r.error().message, "kernel.cpp("));  // nvcc's own message, with the source's line
  CHECK(contains(r.error().message, "error"));

  // A signature that disagrees with the host function: a compile error
  // naming the parameter.
  std::vector<ir::KernelParam> wrong = scale_signature;
  wrong[2].type = {true, ir::DType::float32};
  auto mismatch = p.compile("cuda_scale", scale_source, wrong);
  REQUIRE_FALSE(mismatch);
  CHECK(contains(mismatch.error().message, "parameter 2 is a pointer in the signature"));
  // No stream parameter: refused too.
  const std::string no_stream = R"CU(extern "C" int k(float* y) { return y == nullptr; })CU";
  auto streamless = p.compile("k", no_stream, {{ir::KernelParam{"y", {true, ir::DType::float32}}}});
  REQUIRE_FALSE(streamless);
  CHECK(contains(streamless.error().message, "and the stream"));
}

TEST_CASE("CUDA C++ kernels: a compile error names the line and the kernel when prepared") {
  if (!have_nvcc()) return;
  TempDir cache("cuda_cpp_cache");
  ir::Program p{"broken"};
  ir::Builder b{p, wrapir::cpu_device()};
  const auto x = b.input("x", {p.ctx().integer(4)}, wrapir::f32);
  const auto k = b.kernel("cuda_scale", ir::KernelLanguage::cuda,
                          ir::SourceText{std::string(scale_source) + "\nthis is not CUDA;\n"},
                          "y: *fp32, x: *fp32, alpha: fp32, n: i32");
  b.call(k, {x, x, 2.0, 4});
  b.output(x);
  auto provider = std::make_shared<rc::CudaCppKernelProvider>(
      nullptr, rc::CudaCppOptions{.cache_directory = cache.path, .arch = "sm_90"});
  auto exe = run::Executor::prepare(p, run::ExecutorOptions{.kernels = provider});
  REQUIRE_FALSE(exe);
  const std::string& why = exe.error().message;
  INFO(why);
  CHECK(contains(why, "(KernelDefinition)"));
  CHECK(contains(why, "kernel 'cuda_scale'"));
  CHECK(contains(why, "does not compile"));
}

namespace {

template <class T>
T arg(std::span<void* const> args, std::size_t i) {
  T v{};
  std::memcpy(&v, args[i], sizeof v);
  return v;
}

/// The grid a PTX or cubin kernel's launch gets after its `arity` arguments.
std::array<std::int64_t, 3> grid_after(std::span<void* const> args, std::size_t arity) {
  REQUIRE(args.size() == arity + run::call_grid_arguments);
  return {arg<std::int64_t>(args, arity), arg<std::int64_t>(args, arity + 1), arg<std::int64_t>(args, arity + 2)};
}

/// Runs `thread(i)` for every global thread index of a 1-D launch over
/// `grid` with `block` threads a block, as the device would.
template <class F>
void each_thread(const std::array<std::int64_t, 3>& grid, std::int64_t block, F thread) {
  CHECK(grid[1] == 1);
  CHECK(grid[2] == 1);
  for (std::int64_t b = 0; b < grid[0]; ++b)
    for (std::int64_t t = 0; t < block; ++t) thread(b * block + t, t);
}

/// test_kernels.cu's add_f32, axpy_f32 and shared_rotate and the CUDA C++
/// cuda_scale, on host memory, each over the grid and block its launch gets.
std::shared_ptr<run::KernelRegistry> emulated_device_kernels() {
  auto r = std::make_shared<run::KernelRegistry>();
  REQUIRE(r->add("add_ptx", run::KernelFn{[](std::span<void* const> args) -> wrapir::Result<void> {
    auto* out = arg<float*>(args, 0);
    const auto* a = arg<const float*>(args, 1);
    const auto* b = arg<const float*>(args, 2);
    const auto n = arg<std::int32_t>(args, 3);
    each_thread(grid_after(args, 4), 32 * 4, [&](std::int64_t i, std::int64_t) {
      if (i < n) out[i] = a[i] + b[i];
    });
    return {};
  }}));
  REQUIRE(r->add("axpy_cubin", run::KernelFn{[](std::span<void* const> args) -> wrapir::Result<void> {
    auto* y = arg<float*>(args, 0);
    const auto* x = arg<const float*>(args, 1);
    const auto alpha = arg<float>(args, 2);
    const auto n = arg<std::int64_t>(args, 3);
    each_thread(grid_after(args, 4), 32 * 8, [&](std::int64_t i, std::int64_t) {
      if (i < n) y[i] = alpha * x[i] + y[i];
    });
    return {};
  }}));
  REQUIRE(r->add("cuda_scale", run::KernelFn{[](std::span<void* const> args) -> wrapir::Result<void> {
    REQUIRE(args.size() == 4);  // a host function: no grid
    auto* y = arg<float*>(args, 0);
    const auto* x = arg<const float*>(args, 1);
    const auto alpha = arg<float>(args, 2);
    const auto n = arg<std::int32_t>(args, 3);
    for (std::int32_t i = 0; i < n; ++i) y[i] = alpha * x[i];
    return {};
  }}));
  REQUIRE(r->add("rotate_cubin", run::KernelFn{[](std::span<void* const> args) -> wrapir::Result<void> {
    auto* out = arg<std::int32_t*>(args, 0);
    const auto words = arg<std::int32_t>(args, 1);
    std::vector<std::int32_t> slots(static_cast<std::size_t>(words));
    const std::int64_t block = 32 * 8;
    const auto grid = grid_after(args, 2);
    each_thread(grid, block, [&](std::int64_t, std::int64_t t) {
      for (std::int64_t i = t; i < words; i += block) slots[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * 3);
    });
    each_thread(grid, block, [&](std::int64_t, std::int64_t t) {
      for (std::int64_t i = t; i < words; i += block) out[i] = slots[static_cast<std::size_t>((i + 1) % words)];
    });
    return {};
  }}));
  return r;
}

}  // namespace

TEST_CASE("the GPU test's program runs on tagged host memory with its kernels emulated over their grids") {
  auto backend = std::make_shared<wrapir_test::TaggedHostBackend>();
  const ir::Program program = wrapir_test::device_kernels_program("test_kernels.ptx", "test_kernels.cubin");
  auto exe = run::Executor::prepare(program, {.device = backend, .kernels = emulated_device_kernels()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (const std::int64_t n : {1000, 37, 1}) {  // s0 is a size: positive
    std::vector<float> a(static_cast<std::size_t>(n)), x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      a[static_cast<std::size_t>(i)] = 0.25f * static_cast<float>(i);
      x[static_cast<std::size_t>(i)] = 1.0f - 0.5f * static_cast<float>(i % 7);
    }
    std::vector<run::Tensor> inputs;
    for (const std::vector<float>* v : {&a, &x}) {
      run::Tensor t = run::empty_cpu({n}, ir::DType::float32).value();
      t.storage = backend->allocate(wrapir::cuda_device(0), t.storage->nbytes).value();
      if (n > 0) std::memcpy(t.data(), v->data(), v->size() * sizeof(float));
      inputs.push_back(t);
    }
    const std::vector<std::int64_t> scalars{n};
    auto outputs = exe->run(inputs, scalars);
    REQUIRE_MESSAGE(outputs, outputs.error().message);
    const run::Tensor& d = *(*outputs)[0].get_if<run::Tensor>();
    REQUIRE(d.numel() == n);
    const auto* got = static_cast<const float*>(d.data());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      worst = std::max(worst, std::abs(double(got[i]) - 2.5 * (double(a[i]) + 1.5 * double(x[i]))));
    CHECK(worst < 1e-4);
    const run::Tensor& e = *(*outputs)[1].get_if<run::Tensor>();
    const auto* rotated = static_cast<const std::int32_t*>(e.data());
    int wrong = 0;
    for (int i = 0; i < wrapir_test::rotate_words; ++i) wrong += rotated[i] != ((i + 1) % wrapir_test::rotate_words) * 3;
    CHECK(wrong == 0);
  }
}

TEST_CASE("cuda_kernel_providers: Triton only with a kernels.json; a language none runs names the line and kernel") {
  TempDir dir("kernel_providers");
  auto chain = rc::cuda_kernel_providers(dir.path, nullptr, {.cache_directory = dir.path / "cache", .arch = "sm_90"});
  REQUIRE_MESSAGE(chain, chain.error().message);
  CHECK_FALSE(contains((*chain)->describe(), "Triton"));
  CHECK(contains((*chain)->describe(), "PTX and cubin kernels of"));
  CHECK(contains((*chain)->describe(), "CUDA C++ kernels compiled by nvcc"));

  // A C++ kernel (and a Triton kernel without kernels.json) is no provider's:
  // the executor says so when it prepares the definition.
  for (const auto language : {ir::KernelLanguage::cpp, ir::KernelLanguage::triton}) {
    ir::Program p{"other_language"};
    ir::Builder b{p, wrapir::cpu_device()};
    const auto x = b.input("x", {p.ctx().integer(4)}, wrapir::f32);
    const auto k = b.kernel("k_other", language, ir::SourceText{"// source"}, "x: *fp32");
    b.call(k, {x});
    b.output(x);
    auto exe = run::Executor::prepare(p, run::ExecutorOptions{.kernels = *chain});
    REQUIRE_FALSE(exe);
    const std::string& why = exe.error().message;
    INFO(why);
    CHECK(contains(why, "(KernelDefinition)"));
    CHECK(contains(why, "no kernel provider has kernel 'k_other' (language " +
                            std::string(ir::kernel_language_name(language))));
  }

  // A malformed kernels.json is a diagnostic, not a chain without Triton.
  std::ofstream(dir.path / "kernels.json") << "{not json";
  auto bad = rc::cuda_kernel_providers(dir.path, nullptr);
  REQUIRE_FALSE(bad);
  CHECK(contains(bad.error().message, "kernels.json"));
}
