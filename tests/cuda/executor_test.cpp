// The executor on CUDA (include/wrapir/run/cuda/): a real Inductor export —
// tests/cuda/data/mlp_layernorm_gelu, written by `wrapir_inductor check
// --device cuda` on an H100 (two Triton kernels, extern mm and addmm) — run
// from C++ with its cubins and cuBLAS, compared with eager PyTorch's outputs
// saved beside it. The cubins are sm_90: on another GPU the test reports
// itself skipped, as it does without a device or without cuBLAS
// (WRAPIR_CUBLAS names the library where the loader does not find it).

#include "gpu_test_main.hpp"

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

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
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

const fs::path data = fs::path(WRAPIR_SOURCE_DIR) / "tests" / "cuda" / "data" / "mlp_layernorm_gelu";

ir::Program load_program() {
  std::ifstream in(data / "program.json", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return must(wrapir::io::program_from_json(text.str()));
}

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

run::Tensor to_device(const rc::CudaBackend& backend, const run::Tensor& t) {
  auto storage = must(backend.allocate(wrapir::cuda_device(0), t.storage->nbytes));
  must(backend.copy(storage->data, storage->device, t.storage->data, t.device(), t.storage->nbytes));
  return run::Tensor{storage, t.dtype, t.sizes, t.strides, t.offset};
}

std::vector<float> to_host(const rc::CudaBackend& backend, const run::Tensor& t) {
  REQUIRE(t.is_contiguous());
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  must(backend.copy(reinterpret_cast<std::byte*>(out.data()), ir::Device{}, static_cast<const std::byte*>(t.data()),
                    t.device(), static_cast<std::int64_t>(out.size() * sizeof(float))));
  return out;
}

}  // namespace

TEST_CASE("a real CUDA export runs on the executor and matches eager PyTorch") {
  const ir::Program program = load_program();
  Prepared p = prepare(program);
  const auto inputs_file = must(wrapir::io::read_safetensors(data / "inputs.safetensors"));
  const auto expected_file = must(wrapir::io::read_safetensors(data / "outputs.safetensors"));
  std::vector<run::Tensor> inputs;
  for (const ir::ProgramInput& in : program.inputs) {
    const std::string& name = program.buffer(boost::variant2::get<ir::BufferId>(in)).name;
    const run::Tensor* t = inputs_file.find(name);
    REQUIRE_MESSAGE(t != nullptr, name);
    inputs.push_back(to_device(*p.backend, *t));
  }
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

TEST_CASE("an input on the host where the program wants the GPU is refused, naming it") {
  const ir::Program program = load_program();
  Prepared p = prepare(program);
  const auto inputs_file = must(wrapir::io::read_safetensors(data / "inputs.safetensors"));
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
