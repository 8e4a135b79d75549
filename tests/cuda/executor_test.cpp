// The executor on CUDA (include/wrapir/run/cuda/): a real Inductor export —
// tests/cuda/data/mlp_layernorm_gelu, written by `wrapir_inductor check
// --device cuda` on an H100 (two Triton kernels, extern mm and addmm) — run
// from C++ with its cubins and cuBLAS, compared with eager PyTorch's outputs
// saved beside it. The cubins are sm_90: on another GPU the test reports
// itself skipped, as it does without a device or without cuBLAS
// (WRAPIR_CUBLAS names the library where the loader does not find it).

#include "gpu_test_main.hpp"
#include "support/cuda_export.hpp"

#include <wrapir/io/json.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#include <wrapir/run/executor.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;
using wrapir_test::contains;
using wrapir_test::must;

const fs::path data = wrapir_test::mlp_export_dir();
using wrapir_test::to_device;
using wrapir_test::to_host;

ir::Program load_program() { return wrapir_test::load_export_program(); }

struct Prepared {
  std::shared_ptr<rc::CudaBackend> backend;
  run::Executor executor;
};

Prepared prepare(const ir::Program& program) {
  auto backend = must(rc::CudaBackend::create(0));
  auto kernels = must(rc::TritonKernelProvider::load(data, backend));
  run::ExecutorOptions options{.device = backend, .kernels = kernels, .externs = rc::cublas_externs(backend)};
  return Prepared{backend, must(run::Executor::prepare(program, options))};
}

}  // namespace

TEST_CASE("a real CUDA export runs on the executor and matches eager PyTorch") {
  const ir::Program program = load_program();
  Prepared p = prepare(program);
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  const auto expected_file = wrapir_test::load_export_tensors("outputs.safetensors");
  const std::vector<run::Tensor> inputs = wrapir_test::inputs_on_device(program, inputs_file, *p.backend);
  const run::Tensor* expected = expected_file.find("out0");
  REQUIRE(expected != nullptr);
  const auto* want = static_cast<const float*>(expected->data());
  for (int call = 0; call < 3; ++call) {  // the second and third calls reuse cached blocks
    auto outputs = p.executor.run(inputs);
    REQUIRE_MESSAGE(outputs, outputs.error().message);
    const run::Tensor& out = *(*outputs)[0].get_if<run::Tensor>();
    CHECK(out.device() == wrapir::cuda_device(0));
    CHECK(out.sizes == expected->sizes);
    const std::vector<float> got = to_host(*p.backend, out);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - double(want[i])));
    MESSAGE("call " << call << ": largest difference from eager " << worst);
    CHECK(worst < 1e-4);
  }
  CHECK(p.backend->stats().reused > 0);
}

namespace {

double largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

}  // namespace

TEST_CASE("graph mode on a real export: replays equal the uncaptured executor, moved inputs update the graph") {
  const ir::Program program = load_program();
  auto backend = must(rc::CudaBackend::create(0));
  auto kernels = must(rc::TritonKernelProvider::load(data, backend));
  const auto externs = rc::cublas_externs(backend);
  run::ExecutorOptions plain_options{.device = backend, .kernels = kernels, .externs = externs};
  run::ExecutorOptions graph_options = plain_options;
  graph_options.graph.enabled = true;
  const run::Executor plain = must(run::Executor::prepare(program, plain_options));
  const run::Executor graphed = must(run::Executor::prepare(program, graph_options));
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  const auto expected_file = wrapir_test::load_export_tensors("outputs.safetensors");
  std::vector<run::Tensor> a, b;
  for (std::size_t i = 0; i < program.inputs.size(); ++i) {
    const std::string& name = program.buffer(boost::variant2::get<ir::BufferId>(program.inputs[i])).name;
    const run::Tensor* t = inputs_file.find(name);
    REQUIRE_MESSAGE(t != nullptr, name);
    a.push_back(to_device(*backend, *t));
    // b: other addresses, and the first input halved, so that a graph still
    // reading a's memory would give a's results.
    run::Tensor host = *t;
    if (i == 0 && host.dtype == ir::DType::float32) {
      host = must(run::empty_cpu(t->sizes, t->dtype));
      const auto* from = static_cast<const float*>(t->data());
      auto* to = static_cast<float*>(host.data());
      for (std::int64_t k = 0; k < t->numel(); ++k) to[k] = from[k] * 0.5f;
    }
    b.push_back(to_device(*backend, host));
  }
  const run::Tensor* expected = expected_file.find("out0");
  REQUIRE(expected != nullptr);
  const auto* want_ptr = static_cast<const float*>(expected->data());
  const std::vector<float> want_a(want_ptr, want_ptr + expected->numel());
  auto plain_b = plain.run(b);
  REQUIRE_MESSAGE(plain_b, plain_b.error().message);
  const std::vector<float> want_b = to_host(*backend, *(*plain_b)[0].get_if<run::Tensor>());
  CHECK(largest_difference(want_a, want_b) > 1e-3);  // b really gives other results

  for (int call = 0; call < 3; ++call) {  // captured, then replayed
    auto out = graphed.run(a);
    REQUIRE_MESSAGE(out, out.error().message);
    const double d = largest_difference(to_host(*backend, *(*out)[0].get_if<run::Tensor>()), want_a);
    MESSAGE("graph call " << call << " on a: largest difference from eager " << d);
    CHECK(d < 1e-4);
  }
  CHECK(graphed.graph_stats().captured == 1);
  CHECK(graphed.graph_stats().replayed == 2);
  for (int call = 0; call < 2; ++call) {  // other addresses: updated in place, then replayed
    auto out = graphed.run(b);
    REQUIRE_MESSAGE(out, out.error().message);
    const double d = largest_difference(to_host(*backend, *(*out)[0].get_if<run::Tensor>()), want_b);
    MESSAGE("graph call " << call << " on b: largest difference from the uncaptured executor " << d);
    CHECK(d < 1e-5);
  }
  CHECK(graphed.graph_stats().updated == 1);
  CHECK(graphed.graph_stats().replayed == 3);
  auto back = graphed.run(a);  // and back to a's addresses
  REQUIRE_MESSAGE(back, back.error().message);
  CHECK(largest_difference(to_host(*backend, *(*back)[0].get_if<run::Tensor>()), want_a) < 1e-4);
  CHECK(graphed.graph_stats().updated == 2);
  CHECK(graphed.graph_stats().cached == 1);
}

TEST_CASE("an input on the host where the program wants the GPU is refused, naming it") {
  const ir::Program program = load_program();
  Prepared p = prepare(program);
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  std::vector<run::Tensor> inputs;
  for (const ir::ProgramInput& in : program.inputs)
    inputs.push_back(*inputs_file.find(program.buffer(boost::variant2::get<ir::BufferId>(in)).name));
  auto outputs = p.executor.run(inputs);
  REQUIRE_FALSE(outputs);
  CHECK(contains(outputs.error().message, "input 0 ('arg0_1') is on cpu, the program expects cuda:0"));
}

int main(int argc, char** argv) {
  if (auto why = wrapir::cuda::no_device_reason()) return wrapir_test::run_gpu_tests(argc, argv);  // prints the skip
  auto info = wrapir::cuda::device_info(0);
  if (info && info->compute_major != 9) {
    std::printf("skipped: the exported cubins are sm_90, this GPU is sm_%d%d\n", info->compute_major,
                info->compute_minor);
    return 77;
  }
  if (auto lib = rc::cublas_library(); !lib) {
    std::printf("skipped: %s\n", lib.error().message.c_str());
    return 77;
  }
  return wrapir_test::run_gpu_tests(argc, argv);
}
