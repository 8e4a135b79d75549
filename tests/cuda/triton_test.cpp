// Triton's cubins launched by wrapir, checked against PyTorch's results.
//
// tests/cuda/triton/make_triton_kernels.py (run on the GPU machine) compiles
// the kernels with Triton and writes cubin, metadata JSON, inputs and the
// expected output; WRAPIR_TRITON_KERNELS names that folder. Without it the
// test reports itself skipped (exit 77).

#include "gpu_test_main.hpp"

#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/triton.hpp>
#include <wrapir/cuda/triton_json.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>  // Boost.JSON compiled into this test (no libboost_json here)
#endif

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cuda = wrapir::cuda;
namespace fs = std::filesystem;

namespace {

using wrapir_test::contains;
using wrapir_test::must;

fs::path kernel_dir() { return fs::path(std::getenv("WRAPIR_TRITON_KERNELS")); }

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class T>
std::vector<T> read_array(const fs::path& p) {
  const std::string bytes = read_text(p);
  REQUIRE(bytes.size() % sizeof(T) == 0);
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

cuda::DeviceBuffer upload(const std::string& bytes) {
  cuda::DeviceBuffer b = must(cuda::DeviceBuffer::allocate(bytes.size()));
  must(cuda::copy_to_device(b.address(), bytes.data(), bytes.size()));
  return b;
}

struct Loaded {
  cuda::Module module;
  cuda::TritonKernel kernel;
};

Loaded load(const std::string& name) {
  const fs::path dir = kernel_dir();
  cuda::TritonMetadata meta = must(cuda::triton_metadata_from_json(read_text(dir / (name + ".json"))));
  cuda::Module module = must(cuda::Module::load_file(dir / (name + ".cubin")));
  cuda::TritonKernel kernel = must(cuda::TritonKernel::load(module, meta));
  if (cuda::loaded_driver().cuFuncGetParamInfo)
    MESSAGE(name << ": " << must(kernel.function().parameter_sizes()).size() << " parameters in the cubin, "
                 << meta.shared_bytes << " bytes of shared memory, block " << kernel.block().x);
  return {std::move(module), std::move(kernel)};
}

}  // namespace

TEST_CASE("a pointwise Triton kernel computes what PyTorch computed") {
  Loaded k = load("add");
  const fs::path dir = kernel_dir();
  const std::vector<float> expected = read_array<float>(dir / "add.expected");
  const auto n = static_cast<std::int32_t>(expected.size());
  cuda::DeviceBuffer x = upload(read_text(dir / "add.in0"));
  cuda::DeviceBuffer y = upload(read_text(dir / "add.in1"));
  cuda::DeviceBuffer out = must(cuda::DeviceBuffer::allocate(expected.size() * sizeof(float)));
  const cuda::Dim3 grid{static_cast<std::uint32_t>((n + 1023) / 1024)};
  CHECK(k.kernel.block().x == static_cast<std::uint32_t>(k.kernel.metadata().num_warps) * 32);
  must(k.kernel.launch(grid, nullptr, x.address(), y.address(), out.address(), n));
  std::vector<float> got(expected.size());
  must(cuda::copy_to_host(std::span(got), out.as<float>()));
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == expected[i]);

  // Too many arguments for the cubin's parameters: refused, nothing launched.
  if (cuda::loaded_driver().cuFuncGetParamInfo) {
    auto wrong = k.kernel.launch(grid, nullptr, x.address(), y.address(), out.address(), n, n, n, n);
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().message.find("arguments were given") != std::string::npos);
  }
  // An empty grid launches nothing.
  must(k.kernel.launch(cuda::Dim3{0}, nullptr, x.address(), y.address(), out.address(), n));
}

TEST_CASE("a Triton matmul over 48 KB of shared memory launches after the opt-in") {
  Loaded k = load("matmul");
  CHECK(k.kernel.metadata().shared_bytes > 48 * 1024);
  CHECK(k.kernel.function().attributes().max_dynamic_shared_bytes >= k.kernel.metadata().shared_bytes);
  const fs::path dir = kernel_dir();
  const std::vector<float> expected = read_array<float>(dir / "matmul.expected");
  const std::int32_t m = 256, n = 256, kk = 512;
  REQUIRE(expected.size() == static_cast<std::size_t>(m * n));
  cuda::DeviceBuffer a = upload(read_text(dir / "matmul.in0"));
  cuda::DeviceBuffer b = upload(read_text(dir / "matmul.in1"));
  cuda::DeviceBuffer c = must(cuda::DeviceBuffer::allocate(expected.size() * sizeof(float)));
  must(k.kernel.launch(cuda::Dim3{2, 2, 1}, nullptr, a.address(), b.address(), c.address(), m, n, kk));
  std::vector<float> got(expected.size());
  must(cuda::copy_to_host(std::span(got), c.as<float>()));
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
  MESSAGE("matmul: largest difference from PyTorch " << worst);
  CHECK(worst < 1e-2);
}

int main(int argc, char** argv) {
  const char* dir = std::getenv("WRAPIR_TRITON_KERNELS");
  if (!dir || !fs::exists(fs::path(dir) / "kernels.txt")) {
    std::printf(
        "skipped: no Triton kernels (run tests/cuda/triton/make_triton_kernels.py DIR on a GPU machine and set "
        "WRAPIR_TRITON_KERNELS=DIR)\n");
    return 77;
  }
  return wrapir_test::run_gpu_tests(argc, argv);
}
