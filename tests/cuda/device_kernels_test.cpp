// The executor on CUDA running every kernel language but C++ (label gpu;
// skipped without a device): the program of
// tests/support/device_kernels_program.hpp — a PTX kernel, cubin kernels
// (of tests/cuda/kernels/test_kernels.cu, as the build writes them; one
// with more than 48 KB of dynamic shared memory) and a CUDA C++ kernel
// compiled by nvcc at prepare time — checked against the same computation
// on the host (its host emulation is in host/device_kernels_host_test.cpp);
// the same program in graph mode (the CUDA C++ kernel's own launch
// captured with the rest); and the real Triton export of executor_test.cpp
// with a CUDA C++ and a PTX kernel appended, through one provider chain,
// checked against eager PyTorch's outputs.

#include "gpu_test_main.hpp"
#include "support/cuda_export.hpp"
#include "support/device_kernels_program.hpp"

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/binary_kernels.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/cuda/cuda_cpp_kernels.hpp>
#include <wrapir/run/cuda/kernel_providers.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#include <wrapir/run/executor.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;
using wrapir_test::contains;
using wrapir_test::must;

const fs::path kernel_dir = fs::path(WRAPIR_TEST_KERNELS_PTX).parent_path();
const std::string ptx_file = fs::path(WRAPIR_TEST_KERNELS_PTX).filename().string();
const std::string cubin_file = fs::path(WRAPIR_TEST_KERNELS_CUBIN).filename().string();

const char* scale_source = wrapir_test::cuda_scale_source;

/// A private cache directory for the CUDA C++ kernels of one test.
struct TempCache {
  fs::path path;
  TempCache() {
    std::string pattern = (fs::temp_directory_path() / "wrapir_cuda_kernels_XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempCache() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

run::Tensor device_floats(const rc::CudaBackend& backend, const std::vector<float>& values) {
  run::Tensor host = must(run::empty_cpu({static_cast<std::int64_t>(values.size())}, ir::DType::float32));
  std::copy(values.begin(), values.end(), static_cast<float*>(host.data()));
  return wrapir_test::to_device(backend, host);
}

/// The program of tests/support/device_kernels_program.hpp.
ir::Program three_languages() { return wrapir_test::device_kernels_program(ptx_file, cubin_file); }

/// a and x of n elements: a[i] = i / 4, x[i] = 1 - (i mod 7) / 2, times `scale`.
struct ThreeLanguagesInputs {
  std::vector<float> a, x;
  ThreeLanguagesInputs(std::int64_t n, float scale) : a(static_cast<std::size_t>(n)), x(static_cast<std::size_t>(n)) {
    for (std::int64_t i = 0; i < n; ++i) {
      a[static_cast<std::size_t>(i)] = scale * 0.25f * static_cast<float>(i);
      x[static_cast<std::size_t>(i)] = scale * (1.0f - 0.5f * static_cast<float>(i % 7));
    }
  }
  std::vector<run::Tensor> on_device(const rc::CudaBackend& backend) const {
    return {device_floats(backend, a), device_floats(backend, x)};
  }
};

/// Checks the program's outputs against the host: d = 2.5 (a + 1.5 x) and
/// e[i] = 3 ((i + 1) mod 16384).
void check_three_languages(const rc::CudaBackend& backend, const std::vector<run::Value>& outputs,
                           const ThreeLanguagesInputs& in) {
  REQUIRE(outputs.size() == 2);
  const std::vector<float> d = wrapir_test::to_host(backend, *outputs[0].get_if<run::Tensor>());
  REQUIRE(d.size() == in.a.size());
  double worst = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double want = 2.5 * (double(in.a[i]) + 1.5 * double(in.x[i]));
    worst = std::max(worst, std::abs(double(d[i]) - want));
  }
  MESSAGE("n = " << d.size() << ": largest difference from the host " << worst);
  CHECK(worst < 1e-4);
  const run::Tensor& e = *outputs[1].get_if<run::Tensor>();
  std::vector<std::int32_t> rotated(wrapir_test::rotate_words);
  must(backend.copy(reinterpret_cast<std::byte*>(rotated.data()), ir::Device{}, static_cast<const std::byte*>(e.data()),
                    e.device(), rotated.size() * sizeof(std::int32_t)));
  must(backend.synchronize());
  int wrong = 0;
  for (int i = 0; i < wrapir_test::rotate_words; ++i)
    wrong += rotated[static_cast<std::size_t>(i)] != ((i + 1) % wrapir_test::rotate_words) * 3;
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("PTX, cubin and CUDA C++ kernels run on the executor and match the host") {
  auto backend = must(rc::CudaBackend::create(0));
  TempCache cache;
  auto chain = std::make_shared<run::ProviderChain>();
  chain->add(std::make_shared<rc::BinaryKernelProvider>(kernel_dir, backend));
  chain->add(std::make_shared<rc::CudaCppKernelProvider>(backend, rc::CudaCppOptions{.cache_directory = cache.path}));
  const ir::Program program = three_languages();
  run::ExecutorOptions options{.device = backend, .kernels = chain, .externs = rc::cublas_externs(backend)};
  auto executor = run::Executor::prepare(program, options);
  REQUIRE_MESSAGE(executor, executor.error().message);
  for (const std::int64_t n : {1000, 37, 1}) {  // s0 is a size: positive
    const ThreeLanguagesInputs in(n, 1.0f);
    const std::vector<std::int64_t> scalars{n};  // s0, the size symbol
    auto outputs = executor->run(in.on_device(*backend), scalars);
    REQUIRE_MESSAGE(outputs, outputs.error().message);
    check_three_languages(*backend, *outputs, in);
  }
  // The second executor finds the CUDA C++ kernel in the cache.
  const auto started = run::cpu::detail::processes_started().load();
  auto again = run::Executor::prepare(program, options);
  REQUIRE_MESSAGE(again, again.error().message);
  CHECK(run::cpu::detail::processes_started().load() == started);
}

TEST_CASE("PTX, cubin and CUDA C++ kernels in graph mode: captured per size, replayed, updated when inputs move") {
  auto backend = must(rc::CudaBackend::create(0));
  TempCache cache;
  auto chain = std::make_shared<run::ProviderChain>();
  chain->add(std::make_shared<rc::BinaryKernelProvider>(kernel_dir, backend));
  chain->add(std::make_shared<rc::CudaCppKernelProvider>(backend, rc::CudaCppOptions{.cache_directory = cache.path}));
  run::ExecutorOptions options{.device = backend, .kernels = chain, .externs = rc::cublas_externs(backend)};
  options.graph.enabled = true;
  auto graphed = run::Executor::prepare(three_languages(), options);
  REQUIRE_MESSAGE(graphed, graphed.error().message);
  // Two sizes, two graphs; the second call of each size replays, the third
  // (other addresses, other values) updates its graph in place. The CUDA C++
  // kernel launches on the stream it is given, so its launch is captured
  // too: a graph that missed it would leave d as the capture found it.
  const ThreeLanguagesInputs ones1000(1000, 1.0f), ones37(37, 1.0f), halves1000(1000, 0.5f);
  const std::vector<run::Tensor> at1000 = ones1000.on_device(*backend), at37 = ones37.on_device(*backend);
  const std::vector<std::int64_t> n1000{1000}, n37{37};
  for (int call = 0; call < 2; ++call) {
    auto out1000 = graphed->run(at1000, n1000);
    REQUIRE_MESSAGE(out1000, out1000.error().message);
    check_three_languages(*backend, *out1000, ones1000);
    auto out37 = graphed->run(at37, n37);
    REQUIRE_MESSAGE(out37, out37.error().message);
    check_three_languages(*backend, *out37, ones37);
  }
  CHECK(graphed->graph_stats().captured == 2);
  CHECK(graphed->graph_stats().replayed == 2);
  auto moved = graphed->run(halves1000.on_device(*backend), n1000);
  REQUIRE_MESSAGE(moved, moved.error().message);
  check_three_languages(*backend, *moved, halves1000);
  CHECK(graphed->graph_stats().updated == 1);
  for (int call = 0; call < 2; ++call) {  // back to the first addresses: updated again, then replayed
    auto back = graphed->run(at1000, n1000);
    REQUIRE_MESSAGE(back, back.error().message);
    check_three_languages(*backend, *back, ones1000);
  }
  CHECK(graphed->graph_stats().updated == 2);
  CHECK(graphed->graph_stats().replayed == 3);
  CHECK(graphed->graph_stats().captured == 2);
}

TEST_CASE("device kernels: refusals that need the driver") {
  auto backend = must(rc::CudaBackend::create(0));
  const rc::BinaryKernelProvider binaries(kernel_dir, backend);
  const std::vector<ir::KernelParam> three{{"out", {true, ir::DType::float32}},
                                           {"a", {true, ir::DType::float32}},
                                           {"n", {false, ir::DType::int32}}};
  ir::KernelMetadata four;
  four.num_warps = 4;
  const ir::BinaryRef add{ptx_file, "add_f32"};
  const ir::BinaryRef missing_entry{ptx_file, "no_such_kernel"};
  auto entry = binaries.provide(run::KernelRequest{"k", ir::KernelLanguage::ptx, "", three, &four, &missing_entry});
  REQUIRE_FALSE(entry);
  CHECK(contains(entry.error().message, "no_such_kernel"));
  auto count = binaries.provide(run::KernelRequest{"k", ir::KernelLanguage::ptx, "", three, &four, &add});
  if (wrapir::cuda::loaded_driver().cuFuncGetParamInfo) {
    REQUIRE_FALSE(count);
    CHECK(contains(count.error().message, "has 4 parameters but the program's signature has 3"));
  } else {
    MESSAGE("the driver cannot report parameter counts (before 12.4): not checked");
  }
}

TEST_CASE("a Triton export with CUDA C++ and PTX kernels appended runs through one provider chain") {
  // As executor_test.cpp: the export's cubins are sm_90, its GEMMs cuBLAS's.
  if (auto info = wrapir::cuda::device_info(0); !info || info->compute_major != 9) {
    MESSAGE("not run: the exported cubins are sm_90");
    return;
  }
  if (auto lib = rc::cublas_library(); !lib) {
    MESSAGE("not run: " << lib.error().message);
    return;
  }
  ir::Program program = wrapir_test::load_export_program();
  auto backend = must(rc::CudaBackend::create(0));
  TempCache cache;
  // The export's Triton kernels, then out = 2 (out0 + out0): a CUDA C++
  // kernel and a PTX kernel on the Triton kernels' result.
  ir::Builder b{program};
  auto& ctx = program.ctx();
  const ir::BufferId out0 = boost::variant2::get<ir::BufferArg>(program.outputs.at(0)).buffer;
  const ir::LayoutDims sizes = program.buffer(out0).layout.sizes;
  ex::Expr numel = ctx.integer(1);
  for (const ex::Expr& s : sizes) numel = numel * s;
  ir::KernelMetadata four;
  four.num_warps = 4;
  const auto add = b.kernel("add_ptx", ir::KernelLanguage::ptx, ir::BinaryRef{ptx_file, "add_f32"},
                            "out: *fp32, a: *fp32, b: *fp32, n: i32", four);
  const auto sum = b.empty(sizes, wrapir::f32);
  ir::CallOptions grid;
  grid.grid = ir::ExplicitGrid{ex::ceil_div(numel, ctx.integer(128)), ctx.integer(1), ctx.integer(1)};
  b.call(add, {sum, out0, out0, numel}, grid);
  const auto scale = b.kernel("cuda_scale", ir::KernelLanguage::cuda, ir::SourceText{scale_source},
                              "y: *fp32, x: *fp32, alpha: fp32, n: i32");
  const auto doubled = b.empty(sizes, wrapir::f32);
  b.call(scale, {doubled, sum, 2.0, numel});
  program.outputs.clear();
  b.output(doubled);

  auto chain = std::make_shared<run::ProviderChain>();
  chain->add(must(rc::TritonKernelProvider::load(wrapir_test::mlp_export_dir(), backend)));
  chain->add(std::make_shared<rc::BinaryKernelProvider>(kernel_dir, backend));
  chain->add(std::make_shared<rc::CudaCppKernelProvider>(backend, rc::CudaCppOptions{.cache_directory = cache.path}));
  run::ExecutorOptions options{.device = backend, .kernels = chain, .externs = rc::cublas_externs(backend)};
  auto executor = run::Executor::prepare(program, options);
  REQUIRE_MESSAGE(executor, executor.error().message);
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  const auto expected_file = wrapir_test::load_export_tensors("outputs.safetensors");
  const std::vector<run::Tensor> inputs = wrapir_test::inputs_on_device(program, inputs_file, *backend);
  const run::Tensor* expected = expected_file.find("out0");
  REQUIRE(expected != nullptr);
  const auto* want = static_cast<const float*>(expected->data());
  auto outputs = executor->run(inputs);
  REQUIRE_MESSAGE(outputs, outputs.error().message);
  const std::vector<float> got = wrapir_test::to_host(*backend, *(*outputs)[0].get_if<run::Tensor>());
  REQUIRE(static_cast<std::int64_t>(got.size()) == expected->numel());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - 4.0 * double(want[i])));
  MESSAGE("largest difference from 4 x eager: " << worst);
  CHECK(worst < 4e-4);

  // The factory builds the same chain from one directory: here the export's,
  // which holds no PTX file, so the PTX kernel is refused naming its line.
  auto factory = must(rc::cuda_kernel_providers(wrapir_test::mlp_export_dir(), backend,
                                                rc::CudaCppOptions{.cache_directory = cache.path}));
  run::ExecutorOptions from_factory{.device = backend, .kernels = factory, .externs = rc::cublas_externs(backend)};
  auto refused = run::Executor::prepare(program, from_factory);
  REQUIRE_FALSE(refused);
  CHECK(contains(refused.error().message, "(KernelDefinition)"));
  CHECK(contains(refused.error().message, "kernel 'add_ptx'"));
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
