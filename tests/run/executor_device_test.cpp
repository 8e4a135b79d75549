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

// ---- stream contexts (run/detail/executor_streams.hpp) ---------------------

namespace {

/// Tagged host memory that logs, in order, what a CUDA backend would do on
/// its streams: `use k`, `record k`, `wait w<-k`, `alloc@s` (the thread's
/// current stream), and the kernels log `launch NAME@s`.
class StreamLog final : public run::DeviceBackend {
 public:
  TaggedHostBackend memory;
  mutable std::vector<std::string> log;
  mutable std::uint32_t current = 0;

  [[nodiscard]] ir::DeviceType device_type() const noexcept override { return ir::DeviceType::cuda; }
  [[nodiscard]] std::string describe() const override { return "stream log"; }
  [[nodiscard]] wrapir::Result<std::shared_ptr<run::Storage>> allocate(const ir::Device& device,
                                                                       std::int64_t bytes) const override {
    log.push_back("alloc@" + std::to_string(current));
    return memory.allocate(device, bytes);
  }
  [[nodiscard]] wrapir::Result<void> zero(std::byte* data, std::int64_t bytes) const override {
    return memory.zero(data, bytes);
  }
  [[nodiscard]] wrapir::Result<void> copy(std::byte* dst, const ir::Device& dd, const std::byte* src,
                                          const ir::Device& sd, std::int64_t bytes) const override {
    return memory.copy(dst, dd, src, sd, bytes);
  }
  [[nodiscard]] wrapir::Result<void> synchronize() const override { return {}; }
  [[nodiscard]] wrapir::Result<void> use_stream(std::uint32_t k) const override {
    log.push_back("use " + std::to_string(k));
    current = k;
    return {};
  }
  [[nodiscard]] wrapir::Result<void> record_stream(std::uint32_t k) const override {
    log.push_back("record " + std::to_string(k));
    return {};
  }
  [[nodiscard]] wrapir::Result<void> wait_stream(std::uint32_t waiter, std::uint32_t k) const override {
    log.push_back("wait " + std::to_string(waiter) + "<-" + std::to_string(k));
    return {};
  }
};

std::shared_ptr<run::KernelRegistry> logging_kernels(const StreamLog& backend) {
  auto r = std::make_shared<run::KernelRegistry>();
  for (const char* name : {"k0", "k1", "k2", "k3"})
    REQUIRE(r->add(name, run::cpu_kernel([&backend, name](const float* a, const float* b, float* out, std::int64_t n) {
                     backend.log.push_back(std::string("launch ") + name + "@" + std::to_string(backend.current));
                     for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
                   })));
  return r;
}

ir::KernelId add_kernel(ir::Builder& b, const char* name) {
  return b.kernel(name, ir::KernelLanguage::triton, ir::SourceText{"#"}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
}

std::string joined(const std::vector<std::string>& log) {
  std::string out;
  for (const std::string& s : log) out += s + "; ";
  return out;
}

std::vector<float> values(const run::Value& v) {
  const run::Tensor& t = *v.get_if<run::Tensor>();
  const auto* f = static_cast<const float*>(t.data());
  return {f, f + t.numel()};
}

}  // namespace

TEST_CASE("executor streams: two side regions fork, run on their streams and join before their reader") {
  // a = x+x (stream 0); {1: b = x+x}; {2: c = a+a}; d = b+c (stream 0).
  // The regions pass no buffer in common and only allocate (no free), so
  // region 2 does not wait for region 1; d's launch waits for both, after
  // d's allocation.
  ir::Program p{"two_regions"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k0 = add_kernel(b, "k0"), k1 = add_kernel(b, "k1"), k2 = add_kernel(b, "k2"), k3 = add_kernel(b, "k3");
  auto a = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k0, {x, x, a, 4});
  b.append(ir::EnterStreamContext{1});
  auto bb = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k1, {x, x, bb, 4});
  b.append(ir::ExitStreamContext{});
  b.append(ir::EnterStreamContext{2});
  auto cc = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k2, {a, a, cc, 4});
  b.append(ir::ExitStreamContext{});
  auto d = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k3, {bb, cc, d, 4});
  b.output(d);
  b.output(a);
  auto backend = std::make_shared<StreamLog>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(backend->memory, {4}, {1, 2, 3, 4});
  for (int call = 0; call < 2; ++call) {
    backend->log.clear();
    auto out = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(out, out.error().message);
    CHECK(values((*out)[0]) == std::vector<float>{6, 12, 18, 24});
    CHECK(values((*out)[1]) == std::vector<float>{2, 4, 6, 8});
    const std::vector<std::string> want{
        "alloc@0",  "launch k0@0",                                 // a
        "record 0", "wait 1<-0",   "use 1",                        // fork 0 -> 1
        "alloc@1",  "launch k1@1", "record 1", "use 0",            // b, exit
        "record 0", "wait 2<-0",   "use 2",                        // fork 0 -> 2
        "alloc@2",  "launch k2@2", "record 2", "use 0",            // c, exit
        "alloc@0",                                                 // d: no region freed memory
        "wait 0<-1", "wait 0<-2",  "launch k3@0",                 // d = b + c joins both
    };
    // The first call allocates every buffer; later ones reuse nothing here
    // either (no buffer is freed), so the log is the same.
    CHECK_MESSAGE(backend->log == want, joined(backend->log));
  }
}

TEST_CASE("executor streams: an allocation after a region that freed memory joins it first") {
  // t = x+x; {1: u = t+x; free t}; v = x+x on stream 0: v's allocation
  // could be handed t's block, which stream 1 may still read.
  ir::Program p{"freed_in_region"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k0 = add_kernel(b, "k0"), k1 = add_kernel(b, "k1"), k2 = add_kernel(b, "k2");
  auto t = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k0, {x, x, t, 4});
  b.append(ir::EnterStreamContext{1});
  auto u = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k1, {t, x, u, 4}, {.free_after = {t}});
  b.append(ir::ExitStreamContext{});
  auto v = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k2, {x, x, v, 4});
  b.output(u);
  b.output(v);
  auto backend = std::make_shared<StreamLog>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(backend->memory, {4}, {1, 2, 3, 4});
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  CHECK(values((*out)[0]) == std::vector<float>{3, 6, 9, 12});
  CHECK(values((*out)[1]) == std::vector<float>{2, 4, 6, 8});
  const std::vector<std::string> want{
      "alloc@0",  "launch k0@0", "record 0", "wait 1<-0", "use 1", "alloc@1", "launch k1@1", "record 1", "use 0",
      // v reuses t's storage (the frame's spare): it waits for stream 1 first.
      "wait 0<-1", "launch k2@0",
  };
  CHECK_MESSAGE(backend->log == want, joined(backend->log));
}

TEST_CASE("executor streams: two regions passing one buffer to kernels are ordered") {
  // A kernel may write every buffer it is passed (the IR has no per-parameter
  // mutation), so region 2 waits for region 1, which passed x too.
  ir::Program p{"shared_input"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k1 = add_kernel(b, "k1"), k2 = add_kernel(b, "k2");
  auto y = b.empty({c.integer(4)}, ir::DType::float32);
  auto z = b.empty({c.integer(4)}, ir::DType::float32);
  b.append(ir::EnterStreamContext{1});
  b.call(k1, {x, x, y, 4});
  b.append(ir::ExitStreamContext{});
  b.append(ir::EnterStreamContext{2});
  b.call(k2, {x, x, z, 4});
  b.append(ir::ExitStreamContext{});
  b.output(y);
  b.output(z);
  auto backend = std::make_shared<StreamLog>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(backend->memory, {4}, {1, 2, 3, 4});
  REQUIRE(exe->run(std::span(&in, 1)));
  const std::vector<std::string> want{
      "alloc@0",   "alloc@0",   "record 0",    "wait 1<-0", "use 1",     "launch k1@1", "record 1", "use 0",
      "record 0",  "wait 2<-0", "use 2",       "wait 2<-1", "launch k2@2", "record 2",  "use 0",
      "wait 0<-1", "wait 0<-2",  // the end of the call
  };
  CHECK_MESSAGE(backend->log == want, joined(backend->log));
}

TEST_CASE("executor streams: a nested region is joined into the enclosing side stream that reads it") {
  // {1: a = x+x; {2: b = x+x}; a = a+b}: the nested region forks from
  // stream 1, and stream 1's last launch, which reads b, waits for it; the
  // end of the call joins both into stream 0.
  ir::Program p{"nested"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k1 = add_kernel(b, "k1"), k2 = add_kernel(b, "k2"), k3 = add_kernel(b, "k3");
  auto a = b.empty({c.integer(4)}, ir::DType::float32);
  auto bb = b.empty({c.integer(4)}, ir::DType::float32);
  b.append(ir::EnterStreamContext{1});
  b.call(k1, {x, x, a, 4});
  b.append(ir::EnterStreamContext{2});
  b.call(k2, {x, x, bb, 4});
  b.append(ir::ExitStreamContext{});
  b.call(k3, {a, bb, a, 4});
  b.append(ir::ExitStreamContext{});
  b.output(a);
  auto backend = std::make_shared<StreamLog>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(backend->memory, {4}, {1, 2, 3, 4});
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  CHECK(values((*out)[0]) == std::vector<float>{4, 8, 12, 16});
  const std::vector<std::string> want{
      "alloc@0",   "alloc@0",     "record 0", "wait 1<-0", "use 1",     "launch k1@1",  // region 1
      "record 1",  "wait 2<-1",   "use 2",    "launch k2@2", "record 2", "use 1",     // nested region 2
      "wait 1<-2", "launch k3@1", "record 1", "use 0",                              // a + b joins 2 into 1
      "wait 0<-1", "wait 0<-2",                                                      // the end of the call
  };
  CHECK_MESSAGE(backend->log == want, joined(backend->log));
}

TEST_CASE("executor streams: the end of a call joins a region nothing read") {
  ir::Program p{"unread"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k1 = add_kernel(b, "k1");
  b.append(ir::EnterStreamContext{3});
  auto y = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k1, {x, x, y, 4});
  b.append(ir::ExitStreamContext{});
  b.output(y);
  auto backend = std::make_shared<StreamLog>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(backend->memory, {4}, {1, 2, 3, 4});
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  CHECK(backend->log == std::vector<std::string>{"record 0", "wait 3<-0", "use 3", "alloc@3", "launch k1@3",
                                                 "record 3", "use 0", "wait 0<-3"});
}

TEST_CASE("executor streams: a program without stream contexts makes no stream call") {
  auto backend = std::make_shared<StreamLog>();
  ir::Program p{"plain"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k0 = add_kernel(b, "k0");
  auto y = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k0, {x, x, y, 4});
  b.output(y);
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(backend->memory, {4}, {1, 2, 3, 4});
  REQUIRE(exe->run(std::span(&in, 1)));
  CHECK(backend->log == std::vector<std::string>{"alloc@0", "launch k0@0"});
}

TEST_CASE("executor streams: on the CPU stream contexts are scope markers") {
  ir::Program p{"cpu_streams"};
  ir::Builder b{p, cpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k = add_kernel(b, "add");
  b.append(ir::EnterStreamContext{1});
  auto y = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, y, 4});
  b.append(ir::ExitStreamContext{});
  b.output(y);
  auto exe = run::Executor::prepare(p, {.kernels = kernels()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = run::empty_cpu({4}, ir::DType::float32).value();
  for (int i = 0; i < 4; ++i) static_cast<float*>(in.data())[i] = static_cast<float>(i);
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  CHECK(values((*out)[0]) == std::vector<float>{0, 2, 4, 6});
}

TEST_CASE("executor streams: diagnostics name the line") {
  auto backend = std::make_shared<StreamLog>();
  auto prepare = [&](auto&& build, bool verify = true) {
    ir::Program p{"bad"};
    ir::Builder b{p, gpu};
    auto& c = b.ctx();
    auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
    auto k = add_kernel(b, "k0");
    auto y = b.empty({c.integer(4)}, ir::DType::float32);
    build(b, p, k, x, y);
    b.output(y);
    return run::Executor::prepare(p, {.device = backend, .kernels = logging_kernels(*backend), .verify = verify});
  };
  SUBCASE("a stream index past the cap") {
    auto exe = prepare([](ir::Builder& b, ir::Program&, ir::KernelId k, ir::BufferId x, ir::BufferId y) {
      b.append(ir::EnterStreamContext{64});
      b.call(k, {x, x, y, 4});
      b.append(ir::ExitStreamContext{});
    });
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("(EnterStreamContext): stream 64 is not a side stream of the backend (1 to 63)") !=
          std::string::npos);
  }
  SUBCASE("a kernel call whose stream is not its context's") {
    auto exe = prepare([](ir::Builder& b, ir::Program& p, ir::KernelId k, ir::BufferId x, ir::BufferId y) {
      b.append(ir::EnterStreamContext{1});
      b.call(k, {x, x, y, 4});
      std::get<ir::KernelCall>(p.body.back()).stream = 2;
      b.append(ir::ExitStreamContext{});
    });
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("(KernelCall): the kernel call names stream 2 but runs in the context of stream 1") !=
          std::string::npos);
  }
  SUBCASE("an unclosed stream context, unverified") {
    auto exe = prepare(
        [](ir::Builder& b, ir::Program&, ir::KernelId k, ir::BufferId x, ir::BufferId y) {
          b.append(ir::EnterStreamContext{1});
          b.call(k, {x, x, y, 4});
        },
        false);
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("open stream context") != std::string::npos);
  }
  SUBCASE("an exit without an enter, unverified") {
    auto exe = prepare(
        [](ir::Builder& b, ir::Program&, ir::KernelId k, ir::BufferId x, ir::BufferId y) {
          b.call(k, {x, x, y, 4});
          b.append(ir::ExitStreamContext{});
        },
        false);
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("(ExitStreamContext): ExitStreamContext closes no stream context") !=
          std::string::npos);
  }
}
