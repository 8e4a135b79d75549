// The identity a CUDA kernel provider gives with each kernel (label gpu;
// skipped without a device): what names the kernel in the multi-kernel
// choice cache (run/kernel_identity.hpp). A PTX file rebuilt under the same
// path must get a new identity, so that a multi-kernel benchmarks it again
// rather than replaying the choice measured with the old build; the
// identity is the bytes', not the path's. (The hash itself is tested
// without a device in tests/run/kernel_identity_test.cpp; the CUDA C++
// provider's identity, the kernel cache's, in
// host/device_kernels_host_test.cpp.)

#include "gpu_test_main.hpp"

#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/binary_kernels.hpp>
#include <wrapir/run/executor_kernels.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;
using wrapir_test::must;

/// A fresh directory, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "wrapir_kernel_identity_XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("binary kernels: a PTX file rebuilt under the same path gets a new identity") {
  auto backend = must(rc::CudaBackend::create(0));
  TempDir dir;
  const fs::path ptx = dir.path / "add.ptx";
  fs::copy_file(WRAPIR_TEST_KERNELS_PTX, ptx);
  const rc::BinaryKernelProvider binaries(dir.path, backend);
  const std::vector<ir::KernelParam> four{{"out", {true, ir::DType::float32}},
                                          {"a", {true, ir::DType::float32}},
                                          {"b", {true, ir::DType::float32}},
                                          {"n", {false, ir::DType::int32}}};
  ir::KernelMetadata metadata;
  metadata.num_warps = 4;
  const ir::BinaryRef add{"add.ptx", "add_f32"};
  const run::KernelRequest request{"add_f32", ir::KernelLanguage::ptx, "", four, &metadata, &add};

  auto first = binaries.provide(request);
  REQUIRE_MESSAGE(first, first.error().message);
  REQUIRE(*first);
  CHECK(first->identity.starts_with("add_f32#"));
  auto again = binaries.provide(request);
  REQUIRE_MESSAGE(again, again.error().message);
  CHECK(again->identity == first->identity);

  // Rebuilt in place (a comment is enough to change the bytes).
  std::ofstream(ptx, std::ios::app) << "\n// rebuilt\n";
  auto rebuilt = binaries.provide(request);
  REQUIRE_MESSAGE(rebuilt, rebuilt.error().message);
  REQUIRE(*rebuilt);
  CHECK(rebuilt->identity != first->identity);
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
