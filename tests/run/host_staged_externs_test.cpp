// Host externs on device tensors through copies (run/host_staged_externs.hpp),
// on a backend whose device memory is tagged host memory: what is copied
// (only the bytes arguments reach, only the bytes an extern changed), that
// aliasing survives the trip, where results land, and the failures.
#include <wrapir/ir/builder.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/host_staged_externs.hpp>

#include "support/tagged_host_backend.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
using wrapir_test::TaggedHostBackend;

constexpr ir::Device gpu = wrapir::cuda_device(0);

/// A float32 device tensor of `sizes` (contiguous) in a storage of
/// `storage_floats` floats at element `offset`, the storage filled with
/// 100 + i and the tensor's elements with `values`.
run::Tensor device_tensor(const TaggedHostBackend& backend, std::vector<std::int64_t> sizes,
                          const std::vector<float>& values, std::int64_t storage_floats = -1, std::int64_t offset = 0) {
  if (storage_floats < 0) storage_floats = static_cast<std::int64_t>(values.size());
  run::Tensor t{backend.allocate(gpu, storage_floats * 4).value(), ir::DType::float32, std::move(sizes), {}, offset};
  t.strides = run::contiguous_strides(t.sizes).value();
  auto* all = reinterpret_cast<float*>(t.storage->data);
  for (std::int64_t i = 0; i < storage_floats; ++i) all[i] = 100.0f + static_cast<float>(i);
  std::memcpy(t.data(), values.data(), values.size() * 4);
  return t;
}

std::vector<float> floats(const run::Tensor& t) {
  const auto* p = static_cast<const float*>(t.data());
  return {p, p + t.numel()};
}

bool on_host(const run::Tensor& t) { return t.device().type == ir::DeviceType::cpu; }

wrapir::Result<run::Value> call(const run::ExternFn& fn, std::vector<run::Value> args,
                                std::vector<run::KeywordArg> kwargs = {}) {
  return fn(run::ExternCall{"test.op", args, kwargs});
}

}  // namespace

TEST_CASE("host-staged externs: out= is written back, only the bytes the extern changed") {
  auto backend = std::make_shared<TaggedHostBackend>();
  // `out` sits at elements 8..11 of a 64-float storage (an arena, say).
  const run::Tensor x = device_tensor(*backend, {4}, {0, 2, 3, 0});
  const run::Tensor out = device_tensor(*backend, {4}, {0, 0, 0, 0}, 64, 8);
  bool saw_host = false;
  auto twice = run::host_staged("test.twice", [&](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    const run::Tensor& in = *c.args[0].get_if<run::Tensor>();
    const run::Tensor& o = *c.kwarg("out")->get_if<run::Tensor>();
    saw_host = on_host(in) && on_host(o);
    for (int i = 0; i < 4; ++i) static_cast<float*>(o.data())[i] = 2 * static_cast<const float*>(in.data())[i];
    return run::Value{};
  }, backend);
  auto r = call(twice, {run::Value{x}}, {{"out", run::Value{out}}});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(saw_host);
  CHECK(floats(out) == std::vector<float>{0, 4, 6, 0});
  // The storage's other elements are untouched.
  const auto* all = reinterpret_cast<const float*>(out.storage->data);
  CHECK(all[7] == 107);
  CHECK(all[12] == 112);
  // Staged: x's 16 bytes and out's 16 (not the 256-byte storage); written
  // back: the changed bytes only, within elements 1 and 2 (0.0f -> 4.0f and
  // 6.0f changes the two high bytes of each: bytes 6 to 11 of out).
  CHECK(backend->bytes_to_host == 16 + 16);
  CHECK(backend->bytes_to_device == 6);
  CHECK(backend->syncs == 1);  // before the host buffers go
}

TEST_CASE("host-staged externs: arguments sharing a storage share one host copy") {
  auto backend = std::make_shared<TaggedHostBackend>();
  const run::Tensor base = device_tensor(*backend, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  run::Tensor low = base, high = base;
  low.sizes = {4};
  high.sizes = {4};
  high.offset = 4;
  bool shared = false;
  // In place: low += high, through two views of one storage.
  auto add_ = run::host_staged("test.add_", [&](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    const run::Tensor& a = *c.args[0].get_if<run::Tensor>();
    const run::Tensor& b = *c.args[1].get_if<run::Tensor>();
    shared = a.storage == b.storage;
    for (int i = 0; i < 4; ++i) static_cast<float*>(a.data())[i] += static_cast<const float*>(b.data())[i];
    return run::Value{};
  }, backend);
  auto r = call(add_, {run::Value{low}, run::Value{high}});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(shared);
  CHECK(floats(base) == std::vector<float>{6, 8, 10, 12, 5, 6, 7, 8});
  CHECK(backend->bytes_to_host == 32);  // one copy of the storage's 32 bytes
}

TEST_CASE("host-staged externs: results land on the device; views of arguments stay views") {
  auto backend = std::make_shared<TaggedHostBackend>();
  const run::Tensor x = device_tensor(*backend, {4}, {1, 2, 3, 4});
  // Returns (x[2:], a new tensor, the same new tensor's second half).
  auto op = run::host_staged("test.multi", [&](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    run::Tensor in = *c.args[0].get_if<run::Tensor>();
    run::Tensor tail = in;
    tail.sizes = {2};
    tail.offset += 2;
    run::Tensor fresh = run::empty_cpu({4}, ir::DType::float32).value();
    for (int i = 0; i < 4; ++i) static_cast<float*>(fresh.data())[i] = 10.0f * static_cast<float>(i);
    run::Tensor half = fresh;
    half.sizes = {2};
    half.offset = 2;
    return run::Value{run::ValueList{{run::Value{tail}, run::Value{fresh}, run::Value{half}}}};
  }, backend);
  const int allocations = backend->allocations;
  auto r = call(op, {run::Value{x}});
  REQUIRE_MESSAGE(r, r.error().message);
  const auto& items = r->get_if<run::ValueList>()->items;
  const run::Tensor& tail = *items[0].get_if<run::Tensor>();
  const run::Tensor& fresh = *items[1].get_if<run::Tensor>();
  const run::Tensor& half = *items[2].get_if<run::Tensor>();
  CHECK(tail.storage == x.storage);  // a view of the argument, on the device
  CHECK(tail.offset == 2);
  CHECK(fresh.device() == gpu);
  CHECK(fresh.storage == half.storage);  // one new storage, one device allocation
  CHECK(backend->allocations - allocations == 1);
  CHECK(floats(fresh) == std::vector<float>{0, 10, 20, 30});
  CHECK(floats(half) == std::vector<float>{20, 30});
}

TEST_CASE("host-staged externs: a call with no device tensor runs on the host unchanged") {
  auto backend = std::make_shared<TaggedHostBackend>();
  const run::Tensor x = run::empty_cpu({2}, ir::DType::float32).value();
  auto op = run::host_staged("test.same", [&](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    return c.args[0];
  }, backend);
  auto r = call(op, {run::Value{x}, run::Value{std::int64_t{3}}});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(r->get_if<run::Tensor>()->storage == x.storage);
  CHECK(backend->copies == 0);
  CHECK(backend->syncs == 0);
}

TEST_CASE("host-staged externs: the first use is announced once; failures name what failed") {
  auto backend = std::make_shared<TaggedHostBackend>();
  const run::Tensor x = device_tensor(*backend, {2}, {1, 2});
  std::vector<std::string> notices;
  run::HostStagingOptions options{[&](std::string_view op) { notices.emplace_back(op); }};
  auto ok = run::host_staged("aten.noop.default", [](const run::ExternCall&) -> wrapir::Result<run::Value> {
    return run::Value{};
  }, backend, options);
  REQUIRE(call(ok, {run::Value{x}}));
  REQUIRE(call(ok, {run::Value{x}}));
  CHECK(notices == std::vector<std::string>{"aten.noop.default"});

  auto failing = run::host_staged("aten.fails.default", [](const run::ExternCall&) -> wrapir::Result<run::Value> {
    return wrapir::Diagnostic{"aten.fails.default: k=9 is larger than the dimension (4)"};
  }, backend);
  auto r = call(failing, {run::Value{x}});
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "aten.fails.default: k=9 is larger than the dimension (4)");

  backend->fail_copy = true;
  auto copy = call(ok, {run::Value{x}});
  REQUIRE_FALSE(copy);
  CHECK(copy.error().message.find("copying an argument to the host: cuMemcpy: an illegal memory access") !=
        std::string::npos);
  backend->fail_copy = false;

  // A tensor that claims more bytes than its storage has is refused, not read.
  run::Tensor lying = x;
  lying.sizes = {100};
  auto bad = call(ok, {run::Value{}}, {{"self", run::Value{lying}}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("keyword 'self': an argument reaches 400 bytes of a 8-byte device storage") !=
        std::string::npos);
}

TEST_CASE("host-staged externs: add_host_staged_externs keeps the device's own implementations") {
  auto backend = std::make_shared<TaggedHostBackend>();
  run::ExternRegistry host, device;
  auto mark = [](float value) {
    return [value](const run::ExternCall& c) -> wrapir::Result<run::Value> {
      static_cast<float*>(c.kwarg("out")->get_if<run::Tensor>()->data())[0] = value;
      return run::Value{};
    };
  };
  REQUIRE(host.add("extern_kernels.mm", mark(1)));
  REQUIRE(host.add("aten.topk.default", mark(2)));
  REQUIRE(device.add("extern_kernels.mm", mark(3)));
  const auto added = run::add_host_staged_externs(device, host, backend);
  CHECK(added == std::vector<std::string>{"aten.topk.default"});
  const run::Tensor out = device_tensor(*backend, {1}, {0});
  REQUIRE((*device.find("extern_kernels.mm"))(run::ExternCall{"extern_kernels.mm", {}, std::vector<run::KeywordArg>{{"out", run::Value{out}}}}));
  CHECK(floats(out) == std::vector<float>{3});
  REQUIRE((*device.find("aten.topk.default"))(run::ExternCall{"aten.topk.default", {}, std::vector<run::KeywordArg>{{"out", run::Value{out}}}}));
  CHECK(floats(out) == std::vector<float>{2});
}

TEST_CASE("host-staged externs: the executor runs a device program's host-only extern") {
  // x on the device; y = twice(x), an ExternKernelAlloc with no device
  // implementation.
  ir::Program p{"staged"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(3)}, ir::DType::float32);
  auto y = b.extern_alloc("aten.twice.default", {x}, ir::Layout::contiguous(c, {c.integer(3)}, ir::DType::float32, gpu));
  b.output(y);
  b.output(x);

  run::ExternRegistry host;
  REQUIRE(host.add("aten.twice.default", [](const run::ExternCall& call) -> wrapir::Result<run::Value> {
    const run::Tensor& in = *call.args[0].get_if<run::Tensor>();
    if (!on_host(in)) return wrapir::Diagnostic{"twice: given a device tensor"};
    run::Tensor t = run::empty_cpu({3}, ir::DType::float32).value();
    for (int i = 0; i < 3; ++i) static_cast<float*>(t.data())[i] = 2 * static_cast<const float*>(in.data())[i];
    return run::Value{t};
  }));
  auto backend = std::make_shared<TaggedHostBackend>();
  auto device = std::make_shared<run::ExternRegistry>();
  run::add_host_staged_externs(*device, host, backend);
  auto exe = run::Executor::prepare(p, {.device = backend, .externs = device});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = device_tensor(*backend, {3}, {1, 2, 3});
  auto out = exe->run(std::span(&in, 1));
  REQUIRE_MESSAGE(out, out.error().message);
  const run::Tensor& result = *(*out)[0].get_if<run::Tensor>();
  CHECK(result.device() == gpu);
  CHECK(floats(result) == std::vector<float>{2, 4, 6});
}
