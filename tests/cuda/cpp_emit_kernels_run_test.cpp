// The C++ emitter's CUDA units with PTX, cubin and CUDA C++ kernels and a
// host C++ kernel (tests/support/cpp_cuda_kernels_program.hpp) on a GPU:
// the unit compiled with g++ (-Wall -Wextra -Werror, against cuda.h), its
// companion .cu with nvcc, linked into one shared object with the driver
// and the static CUDA runtime, loaded with dlopen and run through its C
// entry point on the CUDA backend's stream: the PTX file loaded by an
// absolute path, the cubin from the directory `_init` names, and the PTX
// embedded. Checks d = 2.5 (a + b) on the device and h2 = 3 h on the host,
// and that a C++ kernel handed device memory is refused, naming it.
// Reports itself skipped without a device or without the toolkit.

#include "gpu_test_main.hpp"
#include "support/cpp_cuda_kernels_program.hpp"
#include "support/cpp_unit_loader.hpp"
#include "support/cuda_export.hpp"

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/cpp_cuda.hpp>
#include <wrapir/run/c_abi.h>
#include <wrapir/run/c_abi_adapter.hpp>
#include <wrapir/run/tensor.hpp>
#include <wrapir/run/cuda/backend.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

using wrapir_test::read_text;

using Unit = wrapir_test::LoadedUnit;

/// The unit and its companion compiled and linked into a shared object,
/// loaded; an empty Unit when there is no toolkit with nvcc.
Unit build(const ir::Program& program, const wrapir::cpp::CppOptions& options) {
  const fs::path home = wrapir_test::cuda_home();
  if (home.empty() || !fs::exists(home / "bin/nvcc") || std::system("g++ --version > /dev/null 2>&1") != 0) return {};
  const fs::path dir = wrapir_test::scratch_directory("wrapir_cpp_cuda_kernels_run");
  std::ofstream(dir / "unit.cpp", std::ios::binary) << must(wrapir::cpp::to_cpp(program, options));
  std::ofstream(dir / "companion.cu", std::ios::binary) << must(wrapir::cpp::cuda_companion(program, options));
  std::string lib = "-L" + (home / "lib64").string();
  if (fs::exists(home / "lib64/stubs/libcuda.so")) lib += " -L" + (home / "lib64/stubs").string();
  const std::string command =
      "cd " + dir.string() + " && " + (home / "bin/nvcc").string() +
      " -std=c++17 -O2 -Xcompiler -fPIC,-Wall,-Wextra,-Werror -c companion.cu -o companion.o > log.txt 2>&1 && "
      "g++ -std=c++17 -O2 -Wall -Wextra -Werror -shared -fPIC -isystem " + (home / "include").string() +
      " unit.cpp companion.o -o unit.so " + lib + " -lcudart_static -lcuda -ldl -lrt -lpthread >> log.txt 2>&1";
  const int rc = std::system(command.c_str());
  const std::string log = read_text(dir / "log.txt");
  REQUIRE_MESSAGE(rc == 0, "the emitted unit or its companion does not build cleanly:\n" << log.substr(0, 4000));
  CHECK(log.empty());
  Unit u = wrapir_test::load_unit(dir / "unit.so", "wrapir_model");
  fs::remove_all(dir);
  return u;
}

constexpr std::int64_t n = 1000;

run::Tensor device_f32(const rc::CudaBackend& backend, const std::vector<float>& values) {
  const auto bytes = static_cast<std::int64_t>(values.size() * sizeof(float));
  auto storage = must(backend.allocate(wrapir::cuda_device(0), bytes));
  must(backend.copy(storage->data, storage->device, reinterpret_cast<const std::byte*>(values.data()), ir::Device{}, bytes));
  return run::Tensor{storage, ir::DType::float32, {static_cast<std::int64_t>(values.size())}, {1}, 0};
}

/// Runs the unit once; the message on failure, else checks the outputs.
std::string run_once(const Unit& unit, const rc::CudaBackend& backend, bool host_in_device_memory = false) {
  std::vector<float> a(n), b(n);
  for (std::int64_t i = 0; i < n; ++i) {
    a[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
    b[static_cast<std::size_t>(i)] = 1.0f - static_cast<float>(i % 7);
  }
  run::Tensor h = must(run::empty_cpu({8}, ir::DType::int64));
  for (std::int64_t i = 0; i < 8; ++i) static_cast<std::int64_t*>(h.data())[i] = i - 3;
  std::vector<run::Value> in{run::Value{device_f32(backend, a)}, run::Value{device_f32(backend, b)}};
  if (host_in_device_memory) {
    auto storage = must(backend.allocate(wrapir::cuda_device(0), 64));
    in.push_back(run::Value{run::Tensor{storage, ir::DType::int64, {8}, {1}, 0}});
  } else {
    in.push_back(run::Value{h});
  }
  must(backend.synchronize());
  auto borrowed = must(run::c_abi::borrow(in));
  std::vector<wrapir_value> out(2);
  char message[2048] = {0};
  const wrapir_extern_table* no_externs = nullptr;
  const int rc = unit.run(no_externs, borrowed.data(), borrowed.size(), out.data(), out.size(), backend.stream(), message,
                          sizeof message);
  if (rc != WRAPIR_OK) return message;
  run::Value d = must(run::c_abi::adopt(out[0]));
  run::Value h2 = must(run::c_abi::adopt(out[1]));
  const run::Tensor& dt = *d.get_if<run::Tensor>();
  const run::Tensor& ht = *h2.get_if<run::Tensor>();
  CHECK(dt.device().type == ir::DeviceType::cuda);
  CHECK(ht.device().type == ir::DeviceType::cpu);
  std::vector<float> got(n);
  must(backend.copy(reinterpret_cast<std::byte*>(got.data()), ir::Device{}, static_cast<const std::byte*>(dt.data()),
                    dt.device(), static_cast<std::int64_t>(n * sizeof(float))));
  must(backend.synchronize());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - 2.5 * (double(a[i]) + b[i])));
  CHECK(worst < 1e-4);
  for (std::int64_t i = 0; i < 8; ++i) CHECK(static_cast<const std::int64_t*>(ht.data())[i] == 3 * (i - 3));
  return {};
}

}  // namespace

TEST_CASE("an emitted unit runs a PTX kernel loaded by an absolute path, a CUDA C++ kernel and a host C++ kernel") {
  const ir::Program p = wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, WRAPIR_TEST_KERNELS_PTX, n);
  Unit unit = build(p, {});
  if (unit.handle == nullptr) {
    MESSAGE("no nvcc or no CUDA Toolkit: not run");
    return;
  }
  auto backend = must(rc::CudaBackend::create(0));
  for (int call = 0; call < 2; ++call) CHECK(run_once(unit, *backend).empty());
  // A C++ kernel runs on the host: device memory there is refused.
  const std::string why = run_once(unit, *backend, true);
  CHECK(contains(why, "input 2 ('arg2_1') is in device memory"));
}

TEST_CASE("an emitted unit loads a cubin kernel from the directory its _init names") {
  const fs::path cubin = WRAPIR_TEST_KERNELS_CUBIN;
  const ir::Program p = wrapir_test::cuda_kernels_program(ir::KernelLanguage::cubin, cubin.filename().string(), n);
  Unit unit = build(p, {});
  if (unit.handle == nullptr) return;
  auto backend = must(rc::CudaBackend::create(0));
  const std::string before = run_once(unit, *backend);
  CHECK(contains(before, "call its _init first"));
  char message[512] = {0};
  REQUIRE(unit.init(cubin.parent_path().c_str(), message, sizeof message) == WRAPIR_OK);
  CHECK(run_once(unit, *backend).empty());
}

TEST_CASE("with its PTX embedded, an emitted unit needs no kernel files") {
  const fs::path ptx = WRAPIR_TEST_KERNELS_PTX;
  const ir::Program p = wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, ptx.filename().string(), n);
  wrapir::cpp::CppOptions options;
  options.cuda_kernels = must(wrapir::cpp::binary_kernel_images(p, ptx.parent_path()));
  Unit unit = build(p, options);
  if (unit.handle == nullptr) return;
  auto backend = must(rc::CudaBackend::create(0));
  CHECK(run_once(unit, *backend).empty());
}

TEST_CASE("a C++ kernel of a CUDA program handed device memory is refused, naming the buffer") {
  // Host work on a CUDA input: a wild pointer on the host, so the unit
  // refuses it before the call.
  ir::Program p{"call"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(8)}, wrapir::i64, wrapir::cuda_device(0));
  ir::KernelMetadata host;
  host.const_params = {ir::Name{"in_ptr0"}};
  const auto triple = b.kernel("cpp_fused_mul_0", ir::KernelLanguage::cpp, ir::SourceText{wrapir_test::host_triple_source},
                               "in_ptr0: *i64, out_ptr0: *i64", host);
  const auto y = b.empty({ctx.integer(8)}, wrapir::i64, wrapir::cpu_device());
  ir::CallOptions on_host;
  on_host.device = wrapir::cpu_device();
  b.call(triple, {x, y}, on_host);
  b.output(y);
  Unit unit = build(p, {});
  if (unit.handle == nullptr) return;
  auto backend = must(rc::CudaBackend::create(0));
  auto storage = must(backend->allocate(wrapir::cuda_device(0), 64));
  std::vector<run::Value> in{run::Value{run::Tensor{storage, ir::DType::int64, {8}, {1}, 0}}};
  auto borrowed = must(run::c_abi::borrow(in));
  std::vector<wrapir_value> out(1);
  char message[1024] = {0};
  const int rc = unit.run(nullptr, borrowed.data(), borrowed.size(), out.data(), out.size(), backend->stream(), message,
                          sizeof message);
  CHECK(rc != WRAPIR_OK);
  CHECK(contains(message, "(KernelCall 'cpp_fused_mul_0') of graph 'call'"));
  CHECK(contains(message, "arg0_1 is in device memory but is passed to a C++ kernel, which runs on the host"));
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
