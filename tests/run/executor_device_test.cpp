// Tests of the executor's device path (include/wrapir/run/executor_backend.hpp)
// without a GPU: a backend whose "device" memory is host memory tagged
// cuda:0 and which counts what it is asked. Every device allocation, fill,
// copy and scalar read must go through the backend; a program on a device
// the executor has no backend for is refused naming the buffer.

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/executor.hpp>

#include "support/tagged_host_backend.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;

constexpr ir::Device gpu = wrapir::cuda_device(0);
constexpr ir::Device cpu = wrapir::cpu_device();

using wrapir_test::TaggedHostBackend;  // host memory that says it is on cuda:0

run::Tensor on_device(const TaggedHostBackend& backend, std::vector<std::int64_t> sizes, std::vector<float> values) {
  run::Tensor t = run::empty_cpu(sizes, ir::DType::float32).value();
  t.storage = backend.allocate(gpu, t.storage->nbytes).value();
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::shared_ptr<run::KernelRegistry> kernels() {
  auto r = std::make_shared<run::KernelRegistry>();
  REQUIRE(r->add("add", run::cpu_kernel([](const float* a, const float* b, float* out, std::int64_t n) {
                   for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
                 })));
  return r;
}

/// out = x + x on the device; a strided device->host copy of out's
/// transpose; symbol `s` from the device tensor's first element.
ir::Program device_program() {
  ir::Program p{"dev"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(2), c.integer(3)}, ir::DType::float32);
  auto k = b.kernel("add", ir::KernelLanguage::triton, ir::SourceText{"# triton"},
                    "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto y = b.empty({c.integer(2), c.integer(3)}, ir::DType::float32);
  b.call(k, {x, x, y, 6});
  auto host = b.empty({c.integer(3), c.integer(2)}, ir::DType::float32, cpu);
  ir::BufferArg transposed{y, ir::View{{c.integer(3), c.integer(2)}, {c.integer(1), c.integer(3)}, c.integer(0)}};
  b.append(ir::DeviceCopy{ir::BufferArg{host}, transposed, false});
  b.output(y);
  b.output(host);
  return p;
}

}  // namespace

TEST_CASE("executor device path: allocations, launches and copies go through the backend") {
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(device_program(), {.device = backend, .kernels = kernels()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(*backend, {2, 3}, {1, 2, 3, 4, 5, 6});
  const int before = backend->allocations;
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  const run::Tensor& y = *(*out)[0].get_if<run::Tensor>();
  const run::Tensor& host = *(*out)[1].get_if<run::Tensor>();
  CHECK(y.device() == gpu);
  CHECK(host.device().type == ir::DeviceType::cpu);
  CHECK(backend->allocations - before == 1);  // y; the host buffer is the executor's own
  const auto* h = static_cast<const float*>(host.data());
  // host = (x + x).t()
  CHECK(std::vector<float>(h, h + 6) == std::vector<float>{2, 8, 4, 10, 6, 12});
  CHECK(backend->to_host >= 1);
}

TEST_CASE("executor device path: a buffer freed in a call serves the call's next allocation of its size") {
  // t1 = x + x; t2 = t1 + x, t1 freed; t3 = t2 + x, t2 freed: t3 takes t1's
  // storage (nothing else holds it), so the first call asks the backend for
  // two blocks, not three; t2's, freed last, waits for the next call's t1,
  // so later calls ask for one (t2's). Every call computes what it did.
  ir::Program p{"chain"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k = b.kernel("add", ir::KernelLanguage::triton, ir::SourceText{"# triton"},
                    "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto t1 = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, t1, 4});
  auto t2 = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {t1, x, t2, 4}, {.free_after = {t1}});
  auto t3 = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {t2, x, t3, 4}, {.free_after = {t2}});
  b.output(t3);
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = kernels()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(*backend, {4}, {1, 2, 3, 4});
  for (int call = 0; call < 3; ++call) {
    const int before = backend->allocations;
    auto out = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(out, out.error().message);
    CHECK(backend->allocations - before == (call == 0 ? 2 : 1));
    const run::Tensor& t = *(*out)[0].get_if<run::Tensor>();
    const auto* v = static_cast<const float*>(t.data());
    CHECK(std::vector<float>(v, v + 4) == std::vector<float>{4, 8, 12, 16});  // 2x + x + x
    CHECK(t.storage.use_count() == 1);  // the output alone: the call kept nothing
  }
}

TEST_CASE("executor device path: a device scalar is read through the backend") {
  auto backend = std::make_shared<TaggedHostBackend>();
  ir::Program p{"item"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(1)}, ir::DType::int64);
  auto u = b.unbacked_symbol("u0");
  b.dynamic_scalar(u, x);
  b.output(u);
  auto exe = run::Executor::prepare(p, {.device = backend});
  REQUIRE_MESSAGE(exe, exe.error().message);
  run::Tensor in = run::empty_cpu({1}, ir::DType::int64).value();
  in.storage = backend->allocate(gpu, 8).value();
  const std::int64_t seven = 7;
  std::memcpy(in.data(), &seven, 8);
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  CHECK(*(*out)[0].get_if<std::int64_t>() == 7);
  CHECK(backend->to_host == 1);
}

TEST_CASE("executor device path: diagnostics") {
  SUBCASE("no backend for the program's device") {
    auto exe = run::Executor::prepare(device_program(), {.kernels = kernels()});
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("buffer 'x' is on cuda:0; the executor has no backend for cuda") !=
          std::string::npos);
  }
  SUBCASE("a host input where the program expects the device") {
    auto backend = std::make_shared<TaggedHostBackend>();
    auto exe = run::Executor::prepare(device_program(), {.device = backend, .kernels = kernels()});
    REQUIRE(exe);
    const run::Tensor in = run::empty_cpu({2, 3}, ir::DType::float32).value();
    auto out = exe->run(std::span(&in, 1));
    REQUIRE_FALSE(out);
    CHECK(out.error().message.find("input 0 ('x') is on cpu, the program expects cuda:0") != std::string::npos);
  }
  SUBCASE("a failed device allocation names the line and the buffer") {
    auto backend = std::make_shared<TaggedHostBackend>();
    auto exe = run::Executor::prepare(device_program(), {.device = backend, .kernels = kernels()});
    REQUIRE(exe);
    const run::Tensor in = on_device(*backend, {2, 3}, {1, 2, 3, 4, 5, 6});
    backend->fail_allocation = true;
    auto out = exe->run(std::span(&in, 1));
    REQUIRE_FALSE(out);
    CHECK(out.error().message.find("(Allocate): cannot allocate 'buf") != std::string::npos);
    CHECK(out.error().message.find("out of memory") != std::string::npos);
  }
  SUBCASE("a grid written at a device launch is refused when prepared") {
    ir::Program p{"grid"};
    ir::Builder b{p, gpu};
    auto& c = b.ctx();
    auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
    auto k = b.kernel("add", ir::KernelLanguage::triton, ir::SourceText{"#"}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
    auto y = b.empty({c.integer(4)}, ir::DType::float32);
    b.call(k, {x, x, y, 4}, {.grid = ir::ExplicitGrid{c.integer(1), c.integer(1), c.integer(1)}});
    b.output(y);
    auto exe = run::Executor::prepare(p, {.device = std::make_shared<TaggedHostBackend>(), .kernels = kernels()});
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("launcher's grid only") != std::string::npos);
  }
}
