// Stream contexts and a borrowed stream on a GPU (label gpu; skipped
// without a device; docs/runtime.md, "Streams"): a program with two
// side-stream regions of PTX kernels (tests/cuda/kernels/test_kernels.cu)
// whose first region is long (many launches) so that a missing join would
// let the last kernel read unfinished results, checked against the host on
// the backend's own stream, on a borrowed stream, and in graph mode (the
// side streams join the capture); and a cuBLAS GEMM inside a side region
// (skipped without cuBLAS).
//
//   ctest --test-dir build/cuda -R 'gpu\.streams_test' --output-on-failure

#include "gpu_test_main.hpp"

#include <wrapir/cuda/stream.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/binary_kernels.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/executor.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace drv = wrapir::cuda;
namespace fs = std::filesystem;
using wrapir_test::must;

const fs::path kernel_dir = fs::path(WRAPIR_TEST_KERNELS_PTX).parent_path();
const std::string ptx_file = fs::path(WRAPIR_TEST_KERNELS_PTX).filename().string();

constexpr std::int64_t n = std::int64_t{1} << 22;  // 16 MiB of float32 a buffer
constexpr int long_region = 64;                     // launches in region 1

/// a = x + y (stream 0); {1: b = a + a, then `long_region` times b += x;
/// a freed}; {2: c = x + x}; d = b + c on stream 0, which must wait for
/// both regions (and d's allocation for region 1, which freed a).
/// d = 2(x + y) + long_region x + 2x.
ir::Program streams_program() {
  ir::Program p{"streams"};
  ir::Builder b{p, wrapir::cuda_device(0)};
  auto& c = b.ctx();
  const ex::Expr size = c.integer(n);
  auto x = b.input("x", {size}, wrapir::f32);
  auto y = b.input("y", {size}, wrapir::f32);
  ir::KernelMetadata four;
  four.num_warps = 4;
  const auto add = b.kernel("add_ptx", ir::KernelLanguage::ptx, ir::BinaryRef{ptx_file, "add_f32"},
                            "out: *fp32, a: *fp32, b: *fp32, n: i32", four);
  ir::CallOptions grid;
  grid.grid = ir::ExplicitGrid{c.integer((n + 127) / 128), c.integer(1), c.integer(1)};
  auto a = b.empty({size}, wrapir::f32);
  b.call(add, {a, x, y, n}, grid);
  b.append(ir::EnterStreamContext{1});
  auto bb = b.empty({size}, wrapir::f32);
  b.call(add, {bb, a, a, n}, grid);
  for (int i = 0; i < long_region; ++i) b.call(add, {bb, bb, x, n}, grid);
  b.free({a});
  b.append(ir::ExitStreamContext{});
  b.append(ir::EnterStreamContext{2});
  auto cc = b.empty({size}, wrapir::f32);
  b.call(add, {cc, x, x, n}, grid);
  b.append(ir::ExitStreamContext{});
  auto d = b.empty({size}, wrapir::f32);
  b.call(add, {d, bb, cc, n}, grid);
  b.output(d);
  return p;
}

std::vector<float> host_values(int seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(seed)) % 13);
  return v;
}

run::Tensor on_device(const rc::CudaBackend& backend, const std::vector<float>& v) {
  auto storage = must(backend.allocate(wrapir::cuda_device(0), static_cast<std::int64_t>(v.size() * sizeof(float))));
  must(backend.copy(storage->data, storage->device, reinterpret_cast<const std::byte*>(v.data()), ir::Device{},
                    storage->nbytes));
  must(backend.synchronize());
  return run::Tensor{storage, ir::DType::float32, {static_cast<std::int64_t>(v.size())}, {1}, 0};
}

std::vector<float> on_host(const rc::CudaBackend& backend, const run::Value& value) {
  const run::Tensor& t = *value.get_if<run::Tensor>();
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  must(backend.copy(reinterpret_cast<std::byte*>(out.data()), ir::Device{}, static_cast<const std::byte*>(t.data()),
                    t.device(), static_cast<std::int64_t>(out.size() * sizeof(float))));
  return out;
}

/// How many elements of `got` differ from the host's d (exact: small integers).
std::size_t mismatches(const std::vector<float>& got, const std::vector<float>& x, const std::vector<float>& y) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != 2 * (x[i] + y[i]) + static_cast<float>(long_region) * x[i] + 2 * x[i]) ++bad;
  return bad;
}

void check_program(const std::shared_ptr<rc::CudaBackend>& backend, bool graph) {
  run::ExecutorOptions options{.device = backend, .kernels = std::make_shared<rc::BinaryKernelProvider>(kernel_dir, backend)};
  options.graph.enabled = graph;
  auto executor = run::Executor::prepare(streams_program(), options);
  REQUIRE_MESSAGE(executor, executor.error().message);
  const std::vector<float> x = host_values(1), y = host_values(5);
  const std::vector<run::Tensor> inputs{on_device(*backend, x), on_device(*backend, y)};
  for (int call = 0; call < 4; ++call) {  // graph mode: record, capture, then replays
    auto outputs = executor->run(inputs);
    REQUIRE_MESSAGE(outputs, outputs.error().message);
    // The copy goes to stream 0 after the call's end joined every region.
    const std::vector<float> got = on_host(*backend, (*outputs)[0]);
    CHECK_MESSAGE(mismatches(got, x, y) == 0, "call " << call);
  }
  if (graph) CHECK(executor->graph_stats().replayed >= 2);
}

}  // namespace

TEST_CASE("streams: two side-stream regions of PTX kernels equal the host") {
  auto backend = must(rc::CudaBackend::create(0));
  check_program(backend, false);
}

TEST_CASE("streams: a borrowed stream runs the program and stays the caller's") {
  drv::Stream mine = must(drv::Stream::create());
  {
    auto backend = must(rc::CudaBackend::create(0, rc::CudaBackend::Options{.borrowed_stream = mine.get()}));
    CHECK(backend->stream() == mine.get());
    CHECK(backend->borrows_stream());
    check_program(backend, false);
  }
  // The backend is gone; the caller's stream still works.
  must(mine.synchronize());
}

TEST_CASE("streams: graph mode captures the side streams with the rest") {
  auto backend = must(rc::CudaBackend::create(0));
  check_program(backend, true);
}

TEST_CASE("streams: a cuBLAS GEMM inside a side region") {
  if (auto lib = rc::cublas_library(); !lib) {
    MESSAGE("skipped: " << lib.error().message);
    return;
  }
  // out1 = a @ b on stream 1 while out0 = a + a on stream 0; then
  // out1 + out0 on stream 0.
  constexpr std::int64_t m = 256;
  ir::Program p{"gemm_on_side_stream"};
  ir::Builder b{p, wrapir::cuda_device(0)};
  auto& c = b.ctx();
  auto a = b.input("a", {c.integer(m), c.integer(m)}, wrapir::f32);
  ir::KernelMetadata four;
  four.num_warps = 4;
  const auto add = b.kernel("add_ptx", ir::KernelLanguage::ptx, ir::BinaryRef{ptx_file, "add_f32"},
                            "out: *fp32, a: *fp32, b: *fp32, n: i32", four);
  ir::CallOptions grid;
  grid.grid = ir::ExplicitGrid{c.integer(m * m / 128), c.integer(1), c.integer(1)};
  b.append(ir::EnterStreamContext{1});
  auto prod = b.empty({c.integer(m), c.integer(m)}, wrapir::f32);
  b.append(ir::ExternKernelOut{ir::OpName{"extern_kernels.mm"}, {ir::BufferArg{a}, ir::BufferArg{a}}, {}, ir::BufferArg{prod}});
  b.append(ir::ExitStreamContext{});
  auto twice = b.empty({c.integer(m), c.integer(m)}, wrapir::f32);
  b.call(add, {twice, a, a, m * m}, grid);
  auto sum = b.empty({c.integer(m), c.integer(m)}, wrapir::f32);
  b.call(add, {sum, prod, twice, m * m}, grid);
  b.output(sum);
  auto backend = must(rc::CudaBackend::create(0));
  run::ExecutorOptions options{.device = backend,
                               .kernels = std::make_shared<rc::BinaryKernelProvider>(kernel_dir, backend),
                               .externs = rc::cublas_externs(backend)};
  auto executor = run::Executor::prepare(p, options);
  REQUIRE_MESSAGE(executor, executor.error().message);
  std::vector<float> host(static_cast<std::size_t>(m * m));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 3);
  const run::Tensor in = on_device(*backend, host);
  run::Tensor in2 = in;
  in2.sizes = {m, m};
  in2.strides = {m, 1};
  auto outputs = executor->run(std::span(&in2, 1));
  REQUIRE_MESSAGE(outputs, outputs.error().message);
  const std::vector<float> got = on_host(*backend, (*outputs)[0]);
  std::size_t bad = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      float want = 2 * host[static_cast<std::size_t>(i * m + j)];
      for (std::int64_t k = 0; k < m; ++k)
        want += host[static_cast<std::size_t>(i * m + k)] * host[static_cast<std::size_t>(k * m + j)];
      if (got[static_cast<std::size_t>(i * m + j)] != want) ++bad;
    }
  CHECK(bad == 0);  // small integers: exact in float32
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
