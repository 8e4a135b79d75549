// Tests of the executor's recycled per-call state (run/detail/executor_prepare.hpp,
// executor_lines.hpp): what a call leaves for the next one — each buffer's
// tensor keeping its static layout's dimensions (`FrameState::static_dims`),
// an extern line's kept argument lists remembering what their dimensions
// hold, the compact per-buffer record the memory lines read — must never
// show through: every call sees the layouts, views and storages it would
// see on a fresh state, and every check still runs.

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/executor.hpp>

#include <doctest/doctest.h>

#include "support/float_tensor.hpp"
#include "support/tagged_host_backend.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
using wrapir::expr::Expr;

constexpr ir::Device gpu = wrapir::cuda_device(0);
constexpr ir::Device cpu = wrapir::cpu_device();
constexpr auto make = wrapir_test::float_tensor;
using wrapir_test::TaggedHostBackend;

const run::Tensor& tensor_of(const run::Value& v) { return *v.get_if<run::Tensor>(); }

/// The Triton kernel `add(a, b, out, n)` declared in `b`'s program (run by
/// `add_kernel()`'s host function).
ir::KernelId add_kernel_decl(ir::Builder& b) {
  return b.kernel("add", ir::KernelLanguage::triton, ir::SourceText{"# triton"}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
}

/// What an extern saw of its tensor arguments and outputs, one call.
struct Seen {
  std::vector<std::vector<std::int64_t>> sizes, strides;
  std::vector<std::int64_t> offsets;
  std::vector<const void*> data;
};

/// An extern `extern_kernels.record` that records every tensor it is passed
/// (positional, then keyword) and does nothing else.
std::shared_ptr<run::ExternRegistry> recording(std::vector<Seen>& calls) {
  auto externs = std::make_shared<run::ExternRegistry>();
  REQUIRE(externs->add("extern_kernels.record", [&calls](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    Seen s;
    auto add = [&](const run::Value& v) {
      if (const run::Tensor* t = v.get_if<run::Tensor>()) {
        s.sizes.push_back(t->sizes);
        s.strides.push_back(t->strides);
        s.offsets.push_back(t->offset);
        s.data.push_back(t->data());
      }
    };
    for (const run::Value& v : c.args) add(v);
    for (const run::KeywordArg& k : c.kwargs) add(k.value);
    calls.push_back(std::move(s));
    return run::Value{};
  }));
  return externs;
}

run::Tensor on_device(const TaggedHostBackend& backend, std::vector<std::int64_t> sizes, std::vector<float> values) {
  run::Tensor t = run::empty_cpu(sizes, ir::DType::float32).value();
  t.storage = backend.allocate(gpu, t.storage->nbytes).value();
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::shared_ptr<run::KernelRegistry> add_kernel() {
  auto r = std::make_shared<run::KernelRegistry>();
  REQUIRE(r->add("add", run::cpu_kernel([](const float* a, const float* b, float* out, std::int64_t n) {
                   for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
                 })));
  return r;
}

std::vector<float> read(const run::Tensor& t, std::size_t n) {
  const auto* p = static_cast<const float*>(t.data());
  return std::vector<float>(p, p + n);
}

}  // namespace

TEST_CASE("executor state: an input bound with other strides than its static layout's is seen with them") {
  // x is [2, 1] with strides [1, 1]; a size-1 dimension may have any
  // stride, so [1, 7] binds too (not from the static layout). The output
  // and the extern must see the strides of each call's input, whatever the
  // call before it bound.
  ir::Program p{"strides"};
  ir::Builder b{p, cpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(2), c.integer(1)}, ir::DType::float32);
  auto y = b.empty({c.integer(2), c.integer(1)}, ir::DType::float32);
  b.extern_out("extern_kernels.record", {x}, ir::BufferArg{y, std::nullopt});
  b.output(x);
  std::vector<Seen> calls;
  auto exe = run::Executor::prepare(p, {.externs = recording(calls)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<std::vector<std::int64_t>> strides{{1, 1}, {1, 7}, {1, 1}, {1, 7}};
  for (std::size_t call = 0; call < strides.size(); ++call) {
    run::Tensor in = make({2, 1}, {1, 2});
    in.strides = strides[call];
    auto r = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(tensor_of((*r)[0]).strides == strides[call]);
    REQUIRE(calls.size() == call + 1);
    REQUIRE(calls[call].strides.size() == 2);
    CHECK(calls[call].strides[0] == strides[call]);                    // x, as bound
    CHECK(calls[call].strides[1] == std::vector<std::int64_t>{1, 1});  // y, allocated
    CHECK(calls[call].data[0] == in.data());
  }
}

TEST_CASE("executor state: a static view passed to an extern is measured when prepared and still checked") {
  ir::Program p{"view"};
  ir::Builder b{p, cpu};
  auto& c = b.ctx();
  auto w = b.input("w", {c.integer(2), c.integer(3)}, ir::DType::float32);
  auto o = b.empty({c.integer(3)}, ir::DType::float32);
  // w.t() with an offset, and a view past w's end on another line.
  const ir::BufferArg transposed{w, ir::View{{c.integer(3), c.integer(1)}, {c.integer(1), c.integer(3)}, c.integer(1)}};
  b.extern_out("extern_kernels.record", {transposed}, ir::BufferArg{o, std::nullopt});
  b.output(o);
  std::vector<Seen> calls;
  auto exe = run::Executor::prepare(p, {.externs = recording(calls)});
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (int call = 0; call < 3; ++call) {
    const run::Tensor in = make({2, 3}, {1, 2, 3, 4, 5, 6});
    auto r = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    REQUIRE(calls.size() == static_cast<std::size_t>(call + 1));
    const Seen& s = calls.back();
    CHECK(s.sizes[0] == std::vector<std::int64_t>{3, 1});
    CHECK(s.strides[0] == std::vector<std::int64_t>{1, 3});
    CHECK(s.offsets[0] == 1);
    CHECK(s.data[0] == static_cast<const float*>(in.data()) + 1);  // aliases this call's input
    CHECK(s.sizes[1] == std::vector<std::int64_t>{3});
  }

  // The same view one element further reaches past w's 24 bytes: refused
  // on every call, naming the line, though the view is static.
  ir::Program q{"past"};
  ir::Builder bq{q, cpu};
  auto& cq = bq.ctx();
  auto wq = bq.input("w", {cq.integer(2), cq.integer(3)}, ir::DType::float32);
  auto oq = bq.empty({cq.integer(3)}, ir::DType::float32);
  const ir::BufferArg past{wq, ir::View{{cq.integer(3), cq.integer(2)}, {cq.integer(1), cq.integer(3)}, cq.integer(1)}};
  bq.extern_out("extern_kernels.record", {past}, ir::BufferArg{oq, std::nullopt});
  auto bad = run::Executor::prepare(q, {.externs = recording(calls), .verify = false});
  REQUIRE_MESSAGE(bad, bad.error().message);
  for (int call = 0; call < 2; ++call) {
    const run::Tensor in = make({2, 3}, {1, 2, 3, 4, 5, 6});
    auto r = bad->run(std::span(&in, 1));
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().message.find("line 1 (ExternKernelOut)") != std::string::npos);
    CHECK(r.error().message.find("the view reaches 28 bytes but its storage has 24") != std::string::npos);
  }
}

TEST_CASE("executor state: memory lines on a buffer whose layout is symbolic follow each call's size") {
  ir::Program p{"symbolic"};
  ir::Builder b{p, gpu};
  Expr n = b.size_symbol("s0", 4);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto k = add_kernel_decl(b);
  auto t1 = b.empty({n}, ir::DType::float32);
  b.call(k, {x, x, t1, n});
  auto t2 = b.empty({n}, ir::DType::float32);
  b.call(k, {t1, x, t2, n}, {.free_after = {t1}});
  b.output(t2);
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = add_kernel()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (const std::int64_t size : {4, 2, 3, 4}) {
    std::vector<float> values;
    for (std::int64_t i = 0; i < size; ++i) values.push_back(static_cast<float>(i + 1));
    const run::Tensor in = on_device(*backend, {size}, values);
    const std::int64_t s = size;
    auto r = exe->run(std::span(&in, 1), std::span(&s, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    const run::Tensor& out = tensor_of((*r)[0]);
    CHECK(out.sizes == std::vector<std::int64_t>{size});
    CHECK(out.storage->nbytes == size * 4);
    std::vector<float> want;
    for (float v : values) want.push_back(3 * v);
    CHECK(read(out, static_cast<std::size_t>(size)) == want);
  }
}

TEST_CASE("executor state: a Free of a view's base leaves the view its storage, never a later Allocate") {
  // x2 = x + x; v = x2[1:3] (Reinterpret); y = v + v; Free x2 while v
  // still holds the storage: it is not kept for y3 (of x2's size), which
  // gets its own, so v still reads what x2 held.
  ir::Program p{"view_base_freed"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k = add_kernel_decl(b);
  auto x2 = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, x2, 4});
  auto v = b.view(x2, {c.integer(2)}, {c.integer(1)}, c.integer(1));
  auto y = b.empty({c.integer(2)}, ir::DType::float32);
  b.call(k, {v, v, y, 2});
  b.free({x2});
  auto y3 = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, y3, 4});
  b.call(k, {y3, y3, y3, 4});
  auto y4 = b.empty({c.integer(2)}, ir::DType::float32);
  b.call(k, {v, v, y4, 2});  // v after its base's Free: what x2 held
  b.output(y);
  b.output(y3);
  b.output(y4);
  // The verifier refuses a view used after its base's Free; unverified,
  // the executor still keeps the storage for the view (the spare list takes
  // only a storage nothing else holds).
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = add_kernel(), .verify = false});
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (int call = 0; call < 3; ++call) {
    const run::Tensor in = on_device(*backend, {4}, {1, 2, 3, 4});
    const int before = backend->allocations;
    auto r = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(backend->allocations - before == 4);  // x2, y, y3, y4: y3 does not take x2's storage
    const run::Tensor& out_y = tensor_of((*r)[0]);
    const run::Tensor& out_y3 = tensor_of((*r)[1]);
    const run::Tensor& out_y4 = tensor_of((*r)[2]);
    CHECK(read(out_y, 2) == std::vector<float>{8, 12});
    CHECK(read(out_y3, 4) == std::vector<float>{4, 8, 12, 16});
    CHECK(read(out_y4, 2) == std::vector<float>{8, 12});  // y3's writes did not reach v
    CHECK(out_y3.storage.use_count() == 1);
  }

  // A view reaching past its base (offset 3, two elements of four) is
  // refused on every call, though its layout is static.
  ir::Program q{"past"};
  ir::Builder bq{q, gpu};
  auto& cq = bq.ctx();
  auto xq = bq.input("x", {cq.integer(4)}, ir::DType::float32);
  auto vq = bq.view(xq, {cq.integer(2)}, {cq.integer(1)}, cq.integer(3));
  bq.output(vq);
  auto bad = run::Executor::prepare(q, {.device = backend, .kernels = add_kernel(), .verify = false});
  REQUIRE_MESSAGE(bad, bad.error().message);
  for (int call = 0; call < 2; ++call) {
    const run::Tensor in = on_device(*backend, {4}, {1, 2, 3, 4});
    auto r = bad->run(std::span(&in, 1));
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("(Reinterpret)") != std::string::npos);
    CHECK(r.error().message.find("the view reaches 20 bytes but its storage has 16") != std::string::npos);
  }
}

TEST_CASE("executor state: a Reuse chain passes one storage on, each buffer with its own layout") {
  // t1 [4] -> t2 [2, 2] -> t3 [4, 1] (Reuse, delete_old): one storage per
  // call; t3's layout is its own on every call.
  ir::Program p{"chain"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k = add_kernel_decl(b);
  auto t1 = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, t1, 4});
  auto t2 = b.declare("t2", ir::Layout::contiguous(c, {c.integer(2), c.integer(2)}, ir::DType::float32, gpu),
                      ir::BufferRole::intermediate);
  b.append(ir::Reuse{t1, t2, true});
  auto t3 = b.declare("t3", ir::Layout::contiguous(c, {c.integer(4), c.integer(1)}, ir::DType::float32, gpu),
                      ir::BufferRole::intermediate);
  b.append(ir::Reuse{t2, t3, true});
  b.call(k, {t3, x, t3, 4});
  b.output(t3);
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = add_kernel()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (int call = 0; call < 3; ++call) {
    const run::Tensor in = on_device(*backend, {4}, {1, 2, 3, 4});
    const int before = backend->allocations;
    auto r = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(backend->allocations - before == 1);
    const run::Tensor& out = tensor_of((*r)[0]);
    CHECK(out.sizes == std::vector<std::int64_t>{4, 1});
    CHECK(out.strides == std::vector<std::int64_t>{1, 1});
    CHECK(out.storage.use_count() == 1);
    CHECK(read(out, 4) == std::vector<float>{3, 6, 9, 12});
  }
}

namespace {

/// t = x + x (freed after its use); out = t + x: `t`'s storage, freed in a
/// call, may wait for the next call's Allocate of `t`; `out` is the
/// caller's. `size` elements each.
ir::Program freed_then_output(std::int64_t size) {
  ir::Program p{"freed_then_output"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(size)}, ir::DType::float32);
  auto k = add_kernel_decl(b);
  auto t = b.empty({c.integer(size)}, ir::DType::float32);
  b.call(k, {x, x, t, size});
  auto out = b.empty({c.integer(size)}, ir::DType::float32);
  b.call(k, {t, x, out, size}, {.free_after = {t}});
  b.output(out);
  return p;
}

}  // namespace

TEST_CASE("executor state: a storage freed in one call serves the next call, never an earlier call's output") {
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(freed_then_output(4), {.device = backend, .kernels = add_kernel()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  std::vector<run::Tensor> kept_outputs;
  for (int call = 0; call < 4; ++call) {
    const float base = static_cast<float>(call + 1);
    const run::Tensor in = on_device(*backend, {4}, {base, 2 * base, 3 * base, 4 * base});
    const int before = backend->allocations;
    auto r = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    // The first call allocates t and out; later ones only out: t takes the
    // storage t freed in the call before (kept by the recycled state).
    CHECK(backend->allocations - before == (call == 0 ? 2 : 1));
    kept_outputs.push_back(tensor_of((*r)[0]));
    CHECK(kept_outputs.back().storage.use_count() == 2);  // the result and the copy here: the executor holds none
  }
  // Every call's output is still its own, with its own values: no later
  // call wrote into it.
  for (std::size_t call = 0; call < kept_outputs.size(); ++call) {
    const float base = static_cast<float>(call + 1);
    CHECK(read(kept_outputs[call], 4) == std::vector<float>{3 * base, 6 * base, 9 * base, 12 * base});
    CHECK(kept_outputs[call].storage.use_count() == 1);
    for (std::size_t other = 0; other < call; ++other) CHECK(kept_outputs[other].data() != kept_outputs[call].data());
  }
}

TEST_CASE("executor state: a failed call keeps no storage for the next; a large one is never kept") {
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(freed_then_output(4), {.device = backend, .kernels = add_kernel()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor in = on_device(*backend, {4}, {1, 2, 3, 4});
  REQUIRE(exe->run(std::span(&in, 1)));
  // A call that fails (an input of another dtype) gives back what the
  // state kept: the next call allocates t again.
  run::Tensor wrong = in;
  wrong.dtype = ir::DType::int32;
  auto failed = exe->run(std::span(&wrong, 1));
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message.find("input 0") != std::string::npos);
  int before = backend->allocations;
  REQUIRE(exe->run(std::span(&in, 1)));
  CHECK(backend->allocations - before == 2);
  before = backend->allocations;
  REQUIRE(exe->run(std::span(&in, 1)));
  CHECK(backend->allocations - before == 1);

  // A freed storage above the state's bound goes back to the allocator at
  // the end of each call: every call allocates both buffers.
  const std::int64_t large = (std::int64_t{16} << 20) / 4 + 1;  // floats: one past 16 MiB
  auto big = run::Executor::prepare(freed_then_output(large), {.device = backend, .kernels = add_kernel()});
  REQUIRE_MESSAGE(big, big.error().message);
  run::Tensor big_in = run::empty_cpu({large}, ir::DType::float32).value();
  big_in.storage = backend->allocate(gpu, big_in.storage->nbytes).value();
  std::memset(big_in.data(), 0, static_cast<std::size_t>(big_in.storage->nbytes));
  for (int call = 0; call < 3; ++call) {
    before = backend->allocations;
    auto r = big->run(std::span(&big_in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(backend->allocations - before == 2);
  }
}

TEST_CASE("executor state: outputs sharing a storage alias each other on every call") {
  // out = x + x; v = out[1:3] (Reinterpret); outputs out, v, out again and
  // a view of out: one storage for all, held by the outputs alone, and the
  // next call's outputs are others.
  ir::Program p{"aliases"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(4)}, ir::DType::float32);
  auto k = add_kernel_decl(b);
  auto out = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, out, 4});
  auto v = b.view(out, {c.integer(2)}, {c.integer(1)}, c.integer(1));
  auto w = b.empty({c.integer(4)}, ir::DType::float32);
  b.call(k, {x, x, w, 4});
  b.output(out);
  b.output(v);
  b.output(w);
  b.output(w);
  b.output(ir::ProgramOutput{ir::BufferArg{w, ir::View{{c.integer(2)}, {c.integer(2)}, c.integer(0)}}});
  auto backend = std::make_shared<TaggedHostBackend>();
  auto exe = run::Executor::prepare(p, {.device = backend, .kernels = add_kernel()});
  REQUIRE_MESSAGE(exe, exe.error().message);
  std::vector<std::vector<run::Value>> results;
  for (int call = 0; call < 3; ++call) {
    const float base = static_cast<float>(call + 1);
    const run::Tensor in = on_device(*backend, {4}, {base, 2 * base, 3 * base, 4 * base});
    auto r = exe->run(std::span(&in, 1));
    REQUIRE_MESSAGE(r, r.error().message);
    results.push_back(*std::move(r));
  }
  for (std::size_t call = 0; call < results.size(); ++call) {
    const float base = static_cast<float>(call + 1);
    const std::vector<run::Value>& r = results[call];
    REQUIRE(r.size() == 5);
    const run::Tensor &o = tensor_of(r[0]), &view = tensor_of(r[1]), &w1 = tensor_of(r[2]), &w2 = tensor_of(r[3]),
                      &strided = tensor_of(r[4]);
    CHECK(view.storage == o.storage);  // the view aliases its base
    CHECK(view.offset == 1);
    CHECK(view.sizes == std::vector<std::int64_t>{2});
    CHECK(o.storage.use_count() == 2);  // out and v: the executor holds none
    CHECK(w1.storage == w2.storage);
    CHECK(strided.storage == w1.storage);
    CHECK(strided.strides == std::vector<std::int64_t>{2});
    CHECK(w1.storage.use_count() == 3);
    CHECK(o.storage != w1.storage);
    CHECK(read(o, 4) == std::vector<float>{2 * base, 4 * base, 6 * base, 8 * base});
    CHECK(read(view, 2) == std::vector<float>{4 * base, 6 * base});
    CHECK(read(w1, 4) == std::vector<float>{2 * base, 4 * base, 6 * base, 8 * base});
    for (std::size_t other = 0; other < call; ++other) {
      CHECK(tensor_of(results[other][0]).storage != o.storage);
      CHECK(tensor_of(results[other][2]).storage != w1.storage);
    }
  }
}
