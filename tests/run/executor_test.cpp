// Tests of include/wrapir/run/executor.hpp: builder programs run on the CPU
// with plain C++ kernels and externs — every line kind the executor runs,
// views aliasing their bases, inputs written in place, symbols bound and
// solved from input shapes, planned (reuse, pools, arena) programs agreeing
// with the unplanned run, and diagnostics naming the line.

#include <wrapir/ir/builder.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/kernel_identity.hpp>

#include <doctest/doctest.h>

#include "support/float_tensor.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
using wrapir::expr::Expr;

constexpr ir::Device cpu = wrapir::cpu_device();

constexpr auto make = wrapir_test::float_tensor;

std::vector<float> read(const run::Tensor& t) {
  std::vector<float> out;
  const auto* base = static_cast<const float*>(t.data());
  // Strided read, row-major order of the sizes.
  const std::size_t rank = t.sizes.size();
  std::vector<std::int64_t> idx(rank, 0);
  for (std::int64_t e = 0; e < t.numel(); ++e) {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < rank; ++k) off += idx[k] * t.strides[k];
    out.push_back(base[off]);
    for (std::size_t k = rank; k-- > 0;) {
      if (++idx[k] < t.sizes[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

const run::Tensor& tensor_of(const run::Value& v) {
  const run::Tensor* t = v.get_if<run::Tensor>();
  REQUIRE(t != nullptr);
  return *t;
}

/// add(a, b, out, n), relu_(x, n) and scale(in, out, n, factor) as plain C++.
std::shared_ptr<run::KernelRegistry> kernels() {
  auto r = std::make_shared<run::KernelRegistry>();
  REQUIRE(r->add("add", run::cpu_kernel([](const float* a, const float* b, float* out, std::int64_t n) {
                   for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
                 })));
  REQUIRE(r->add("relu_", run::cpu_kernel([](float* x, std::int64_t n) {
                   for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] > 0 ? x[i] : 0;
                 })));
  REQUIRE(r->add("scale", run::cpu_kernel([](const float* in, float* out, std::int32_t n, float factor) {
                   for (std::int32_t i = 0; i < n; ++i) out[i] = in[i] * factor;
                 })));
  return r;
}

ir::KernelId add_kernel(ir::Builder& b) {
  return b.kernel("add", ir::KernelLanguage::cpp, ir::SourceText{"// add"}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
}

run::ExecutorOptions options() {
  run::ExecutorOptions o;
  o.kernels = kernels();
  o.multi_kernel.cache_enabled = false;
  return o;
}

}  // namespace

TEST_CASE("executor: add then relu on a symbolic size, reading the size from the input") {
  ir::Program p{"add_relu"};
  ir::Builder b{p, cpu};
  Expr n = b.size_symbol("s0", 8);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto y = b.input("y", {n}, ir::DType::float32);
  auto add = add_kernel(b);
  auto relu = b.kernel("relu_", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32, n: i64");
  auto out = b.empty({n}, ir::DType::float32);
  b.call(add, {x, y, out, n});
  b.call(relu, {out, n});
  b.output(out);

  auto exe = run::Executor::prepare(p, options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({4}, {1, -2, 3, -4}), make({4}, {1, 1, 1, 1})};
  const std::vector<std::int64_t> scalars{4};
  auto r = exe->run(in, scalars);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(tensor_of((*r)[0])) == std::vector<float>{2, 0, 4, 0});
  // Run many: the prepared executor is reused with another size.
  const std::vector<run::Tensor> in2{make({2}, {5, 6}), make({2}, {-10, 1})};
  const std::vector<std::int64_t> scalars2{2};
  auto r2 = exe->run(in2, scalars2);
  REQUIRE_MESSAGE(r2, r2.error().message);
  CHECK(read(tensor_of((*r2)[0])) == std::vector<float>{0, 7});
  // A size that contradicts the scalar input is refused, naming the input.
  auto bad = exe->run(in2, scalars);
  REQUIRE_FALSE(bad);
  CHECK_MESSAGE(bad.error().message.find("('x') has sizes [2], the program expects [4]") != std::string::npos, bad.error().message);
}

TEST_CASE("executor: symbols bound from input shapes and solved from linear sizes") {
  ir::Program p{"shapes"};
  ir::Builder b{p, cpu};
  // x has 2*s0 elements; s0 is read from x's size and solved.
  Expr s0 = b.ctx().symbol("s0");
  const Expr two_s0 = wrapir::expr::mul(b.ctx().integer(2), s0);
  auto x = b.input("x", ir::Layout::contiguous(b.ctx(), {two_s0}, ir::DType::float32, cpu));
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input_shape, x, {ir::KeyStep{ir::KeyStepKind::size, 0}}, 4});
  auto scale = b.kernel("scale", ir::KernelLanguage::cpp, ir::SourceText{""}, "in_ptr: *fp32, out_ptr: *fp32, n: i32, f: fp32");
  auto out = b.empty({two_s0}, ir::DType::float32);
  b.call(scale, {x, out, two_s0, 0.5});
  b.output(out);
  b.output(s0);

  auto exe = run::Executor::prepare(p, options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({6}, {2, 4, 6, 8, 10, 12})};
  auto r = exe->run(in);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(tensor_of((*r)[0])) == std::vector<float>{1, 2, 3, 4, 5, 6});
  REQUIRE((*r)[1].get_if<std::int64_t>() != nullptr);
  CHECK(*(*r)[1].get_if<std::int64_t>() == 3);
  // An odd size has no integer solution.
  const std::vector<run::Tensor> odd{make({5}, {1, 2, 3, 4, 5})};
  auto bad = exe->run(odd);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("s0") != std::string::npos);
}

TEST_CASE("executor: views alias their bases and inputs are written in place") {
  ir::Program p{"views"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(2), b.ctx().integer(3)}, ir::DType::float32);
  auto relu = b.kernel("relu_", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32, n: i64");
  b.call(relu, {x, 6});  // in place on the input
  // The transpose of x, a view (Reinterpret), is an output.
  auto t = b.view(x, {b.ctx().integer(3), b.ctx().integer(2)}, {b.ctx().integer(1), b.ctx().integer(3)},
                  b.ctx().integer(0));
  b.output(t);
  b.output(x);

  auto exe = run::Executor::prepare(p, options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({2, 3}, {1, -2, 3, -4, 5, -6})};
  auto r = exe->run(in);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(in[0]) == std::vector<float>{1, 0, 3, 0, 5, 0});
  const run::Tensor& view = tensor_of((*r)[0]);
  CHECK(view.storage == in[0].storage);
  CHECK(read(view) == std::vector<float>{1, 0, 0, 5, 3, 0});
  CHECK(tensor_of((*r)[1]).storage == in[0].storage);
}

TEST_CASE("executor: outputs that alias an input own its storage after the caller drops the input") {
  // The executor borrows the caller's input storages for the call (no
  // reference count per input); what it hands back must own them again:
  // the input itself, a view of it, and an extern's result aliasing it.
  ir::Program p{"aliases"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(2), b.ctx().integer(3)}, ir::DType::float32);
  auto t = b.view(x, {b.ctx().integer(3), b.ctx().integer(2)}, {b.ctx().integer(1), b.ctx().integer(3)},
                  b.ctx().integer(0));
  auto same = b.extern_alloc("aten.alias.default", {x},
                             ir::Layout::contiguous(b.ctx(), {b.ctx().integer(2), b.ctx().integer(3)},
                                                    ir::DType::float32, cpu));
  b.output(x);
  b.output(t);
  b.output(same);
  auto externs = std::make_shared<run::ExternRegistry>();
  REQUIRE(externs->add("aten.alias.default", [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    return run::Value{*c.args[0].get_if<run::Tensor>()};
  }));
  run::ExecutorOptions o = options();
  o.externs = externs;
  auto exe = run::Executor::prepare(p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (int call = 0; call < 2; ++call) {  // the second call runs on the recycled frame state
    std::vector<run::Tensor> in{make({2, 3}, {1, 2, 3, 4, 5, 6})};
    const std::weak_ptr<run::Storage> input_storage = in[0].storage;
    auto r = exe->run(in);
    REQUIRE_MESSAGE(r, r.error().message);
    in.clear();  // the caller's reference goes: the outputs alone hold the storage
    CHECK_FALSE(input_storage.expired());
    CHECK(input_storage.use_count() == 3);
    for (const run::Value& v : *r) {
      CHECK(tensor_of(v).storage.use_count() == 3);
      CHECK(tensor_of(v).storage == input_storage.lock());
    }
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(read(tensor_of((*r)[1])) == std::vector<float>{1, 4, 2, 5, 3, 6});
    r->clear();
    CHECK(input_storage.expired());  // and nothing of the call kept it
  }
}

namespace {

/// A program with several intermediates whose lives overlap partly, so that
/// the planners have something to reuse and pack.
ir::Program chain_program() {
  ir::Program p{"chain"};
  ir::Builder b{p, cpu};
  Expr n = b.size_symbol("s0", 16);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto add = add_kernel(b);
  auto t1 = b.empty({n}, ir::DType::float32);
  b.call(add, {x, x, t1, n});
  auto t2 = b.empty({n}, ir::DType::float32);
  b.call(add, {t1, x, t2, n}, {.free_after = {t1}});
  auto t3 = b.empty({n}, ir::DType::float32);
  b.call(add, {t2, t2, t3, n}, {.free_after = {t2}});
  auto t4 = b.empty({n}, ir::DType::float32);
  b.call(add, {t3, x, t4, n}, {.free_after = {t3}});
  b.output(t4);
  return p;
}

std::vector<float> run_chain(const ir::Program& p) {
  auto exe = run::Executor::prepare(p, options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({3}, {1, 2, 3})};
  const std::vector<std::int64_t> scalars{3};
  auto r = exe->run(in, scalars);
  REQUIRE_MESSAGE(r, r.error().message);
  return read(tensor_of((*r)[0]));
}

}  // namespace

TEST_CASE("executor: reuse-, pool- and arena-planned programs compute what the unplanned one does") {
  const ir::Program p = chain_program();
  const std::vector<float> expected{7, 14, 21};  // ((2x + x) * 2) + x
  CHECK(run_chain(p) == expected);
  auto reused = wrapir::pass::plan_reuse(p);
  REQUIRE_MESSAGE(reused, reused.error().message);
  CHECK(run_chain(reused->program) == expected);
  auto pooled = wrapir::pass::plan_pools(p);
  REQUIRE_MESSAGE(pooled, pooled.error().message);
  CHECK(run_chain(pooled->program) == expected);
  auto arena = wrapir::pass::plan_arena(p);
  REQUIRE_MESSAGE(arena, arena.error().message);
  bool has_pool = false;
  for (const ir::Line& l : arena->program.body) has_pool = has_pool || std::holds_alternative<ir::AllocFromPool>(l);
  CHECK(has_pool);
  CHECK(run_chain(arena->program) == expected);
}

TEST_CASE("executor: externs (alloc, out, multi-output), dynamic scalars and asserts") {
  ir::Program p{"externs"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(4)}, ir::DType::float32);
  auto out = b.empty({b.ctx().integer(4)}, ir::DType::float32);
  b.extern_out("extern_kernels.neg", {x}, ir::BufferArg{out, std::nullopt});
  // A two-result operator: (sum as int64 [1], the input doubled [4]).
  auto pair = b.extern_alloc_multi("aten.sum_and_double.default", {x});
  auto parts = b.unpack(pair, {ir::Layout::contiguous(b.ctx(), {b.ctx().integer(1)}, ir::DType::int64, cpu),
                               ir::Layout::contiguous(b.ctx(), {b.ctx().integer(4)}, ir::DType::float32, cpu)});
  Expr u0 = b.unbacked_symbol("u0");
  b.dynamic_scalar(u0, parts[0]);
  b.assert_size_stride(parts[1]);
  auto copy = b.extern_alloc("aten.clone.default", {parts[1]},
                             ir::Layout::contiguous(b.ctx(), {b.ctx().integer(4)}, ir::DType::float32, cpu));
  b.comment("done");
  b.output(out);
  b.output(copy);
  b.output(u0);

  auto externs = std::make_shared<run::ExternRegistry>();
  REQUIRE(externs->add("extern_kernels.neg", [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    const run::Tensor& in = *c.arg(0, "self")->get_if<run::Tensor>();
    const run::Tensor& o = *c.kwarg("out")->get_if<run::Tensor>();
    for (std::int64_t i = 0; i < in.numel(); ++i)
      static_cast<float*>(o.data())[i] = -static_cast<const float*>(in.data())[i];
    return run::Value{};
  }));
  REQUIRE(externs->add("aten.sum_and_double.default", [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    const run::Tensor& in = *c.args[0].get_if<run::Tensor>();
    run::Tensor sum = run::empty_cpu({1}, ir::DType::int64).value();
    run::Tensor twice = run::empty_cpu({4}, ir::DType::float32).value();
    std::int64_t s = 0;
    for (std::int64_t i = 0; i < 4; ++i) {
      const float v = static_cast<const float*>(in.data())[i];
      s += static_cast<std::int64_t>(v);
      static_cast<float*>(twice.data())[i] = 2 * v;
    }
    *static_cast<std::int64_t*>(sum.data()) = s;
    run::ValueList list;
    list.items.push_back(run::Value{sum});
    list.items.push_back(run::Value{twice});
    return run::Value{std::move(list)};
  }));
  REQUIRE(externs->add("aten.clone.default", [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
    const run::Tensor& in = *c.args[0].get_if<run::Tensor>();
    run::Tensor t = run::empty_cpu(in.sizes, in.dtype).value();
    std::memcpy(t.data(), in.data(), static_cast<std::size_t>(in.numel()) * 4);
    return run::Value{t};
  }));
  run::ExecutorOptions o = options();
  o.externs = externs;
  auto exe = run::Executor::prepare(p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({4}, {1, 2, 3, 4})};
  auto r = exe->run(in);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(tensor_of((*r)[0])) == std::vector<float>{-1, -2, -3, -4});
  CHECK(read(tensor_of((*r)[1])) == std::vector<float>{2, 4, 6, 8});
  CHECK(*(*r)[2].get_if<std::int64_t>() == 10);

  // An extern nobody registered fails to prepare, naming the line and the op.
  run::ExecutorOptions missing = options();
  auto none = run::Executor::prepare(p, missing);
  REQUIRE_FALSE(none);
  CHECK(none.error().message.find("(ExternKernelOut)") != std::string::npos);
  CHECK(none.error().message.find("extern_kernels.neg") != std::string::npos);
}

TEST_CASE("executor: conditionals and while loops run their subgraphs") {
  ir::Program p{"control"};
  ir::Builder b{p, cpu};
  Expr n = b.size_symbol("s0", 4);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto flag = b.input("flag", {b.ctx().integer(1)}, ir::DType::bool_);
  auto outs = b.conditional(
      flag, {x, n},
      [](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const ir::BufferId a = boost::variant2::get<ir::BufferId>(in[0]);
        const Expr m = boost::variant2::get<Expr>(in[1]);
        auto k = add_kernel(sb);
        auto o = sb.empty({m}, ir::DType::float32);
        sb.call(k, {a, a, o, m});
        sb.output(o);
      },
      [](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const ir::BufferId a = boost::variant2::get<ir::BufferId>(in[0]);
        const Expr m = boost::variant2::get<Expr>(in[1]);
        auto o = sb.empty({m}, ir::DType::float32);
        sb.append(ir::DeviceCopy{ir::BufferArg{o, std::nullopt}, ir::BufferArg{a, std::nullopt}, false});
        sb.output(o);
      });
  b.output(outs[0]);

  auto exe = run::Executor::prepare(p, options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  run::Tensor yes = run::empty_cpu({1}, ir::DType::bool_).value();
  *static_cast<std::uint8_t*>(yes.data()) = 1;
  run::Tensor no = run::empty_cpu({1}, ir::DType::bool_).value();
  *static_cast<std::uint8_t*>(no.data()) = 0;
  const std::vector<std::int64_t> scalars{2};
  auto r1 = exe->run(std::vector<run::Tensor>{make({2}, {1, 2}), yes}, scalars);
  REQUIRE_MESSAGE(r1, r1.error().message);
  CHECK(read(tensor_of((*r1)[0])) == std::vector<float>{2, 4});
  auto r0 = exe->run(std::vector<run::Tensor>{make({2}, {1, 2}), no}, scalars);
  REQUIRE_MESSAGE(r0, r0.error().message);
  CHECK(read(tensor_of((*r0)[0])) == std::vector<float>{1, 2});
}

TEST_CASE("executor: a while loop doubles until the condition kernel says stop") {
  ir::Program p{"loop"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(1)}, ir::DType::float32);
  auto lt = b.kernel("less_than_100", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32, out: *i1");
  (void)lt;
  auto outs = b.while_loop(
      {x}, {},
      [](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const ir::BufferId a = boost::variant2::get<ir::BufferId>(in[0]);
        auto k = sb.kernel("less_than_100", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32, out: *i1");
        auto o = sb.empty({sb.ctx().integer(1)}, ir::DType::bool_);
        sb.call(k, {a, o});
        sb.output(o);
      },
      [](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const ir::BufferId a = boost::variant2::get<ir::BufferId>(in[0]);
        auto k = add_kernel(sb);
        auto o = sb.empty({sb.ctx().integer(1)}, ir::DType::float32);
        sb.call(k, {a, a, o, 1});
        sb.output(o);
      });
  b.output(outs[0]);
  run::ExecutorOptions o = options();
  auto reg = kernels();
  REQUIRE(reg->add("less_than_100", run::cpu_kernel([](const float* v, bool* out) { *out = *v < 100; })));
  o.kernels = reg;
  auto exe = run::Executor::prepare(p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  auto r = exe->run(std::vector<run::Tensor>{make({1}, {3})});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(tensor_of((*r)[0])) == std::vector<float>{192});
  // A loop that never ends stops at the limit with a diagnostic.
  o.max_loop_iterations = 3;
  auto capped = run::Executor::prepare(p, o);
  REQUIRE(capped);
  auto stopped = capped->run(std::vector<run::Tensor>{make({1}, {3})});
  REQUIRE_FALSE(stopped);
  CHECK(stopped.error().message.find("(WhileLoop)") != std::string::npos);
}

TEST_CASE("executor: multi-kernels choose once and launch the choice") {
  ir::Program p{"multi"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(3)}, ir::DType::float32);
  auto k0 = b.kernel("add", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto k1 = b.kernel("add_too", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto mk = b.multi_kernel({k0, k1});
  auto out = b.empty({b.ctx().integer(3)}, ir::DType::float32);
  b.call_multi(mk, {x, x, out, 3});
  b.output(out);
  run::ExecutorOptions o = options();
  auto reg = kernels();
  std::atomic<int> calls{0};
  REQUIRE(reg->add("add_too", run::cpu_kernel([&calls](const float* a, const float* c, float* out, std::int64_t n) {
                     ++calls;
                     for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + c[i];
                   })));
  o.kernels = reg;
  o.multi_kernel.forced_choice = 1;
  auto exe = run::Executor::prepare(p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  for (int i = 0; i < 2; ++i) {
    auto r = exe->run(std::vector<run::Tensor>{make({3}, {1, 2, 3})});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{2, 4, 6});
  }
  CHECK(calls == 2);
  // Benchmarking (no forced choice): every candidate sees the same inputs,
  // the result is right.
  o.multi_kernel.forced_choice.reset();
  o.multi_kernel.warmup = 1;
  o.multi_kernel.repetitions = 2;
  auto bench = run::Executor::prepare(p, o);
  REQUIRE(bench);
  auto r = bench->run(std::vector<run::Tensor>{make({3}, {1, 2, 3})});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(tensor_of((*r)[0])) == std::vector<float>{2, 4, 6});
}

TEST_CASE("executor: a multi-kernel's stored choice is keyed by what its candidates are, not their names") {
  // A changed candidate under the same name must be benchmarked again, not
  // handed the choice stored for the old one (a stale choice of a slow
  // kernel made calls ~500 times slower in an audit).
  const auto program = [](const char* add_source) {
    ir::Program p{"multi"};
    ir::Builder b{p, cpu};
    auto x = b.input("x", {b.ctx().integer(3)}, ir::DType::float32);
    auto k0 = b.kernel("add", ir::KernelLanguage::cpp, ir::SourceText{add_source}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
    auto k1 = b.kernel("add_too", ir::KernelLanguage::cpp, ir::SourceText{"// the other"},
                       "a: *fp32, b: *fp32, out: *fp32, n: i64");
    auto out = b.empty({b.ctx().integer(3)}, ir::DType::float32);
    b.call_multi(b.multi_kernel({k0, k1}), {x, x, out, 3});
    b.output(out);
    return p;
  };
  std::string pattern = (std::filesystem::temp_directory_path() / "wrapir_choice_identity_XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path dir = pattern;
  run::ExecutorOptions o = options();
  auto reg = kernels();
  REQUIRE(reg->add("add_too", run::cpu_kernel([](const float* a, const float* c, float* out, std::int64_t n) {
                     for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + c[i];
                   })));
  o.kernels = reg;
  o.multi_kernel.cache_enabled = true;
  o.multi_kernel.cache_directory = dir;
  o.multi_kernel.warmup = 1;
  o.multi_kernel.repetitions = 1;
  const auto entries = [&dir] {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ".choice";
    return n;
  };
  const auto run_once = [&](const ir::Program& p) {
    auto exe = run::Executor::prepare(p, o);
    REQUIRE_MESSAGE(exe, exe.error().message);
    auto r = exe->run(std::vector<run::Tensor>{make({3}, {1, 2, 3})});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{2, 4, 6});
  };
  run_once(program("// add, first version"));
  CHECK(entries() == 1);
  run_once(program("// add, first version"));  // the same kernels: the stored choice
  CHECK(entries() == 1);
  run_once(program("// add, second version"));  // same names, another kernel: its own key
  CHECK(entries() == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("executor: a provider's kernel identity names the multi-kernel candidate, else its definition does") {
  // A provider knows what it built (a compiled kernel's headers and flags,
  // a binary's bytes; run/cpu/backend_test.cpp has the compiled case): its
  // identity names the candidate in the choice cache. A registered
  // callable's identity is its name and version, so a new version is
  // benchmarked again under unchanged definitions.
  ir::Program p{"multi"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(3)}, ir::DType::float32);
  auto k0 = add_kernel(b);
  auto k1 = b.kernel("add_too", ir::KernelLanguage::cpp, ir::SourceText{"// the other"},
                     "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto out = b.empty({b.ctx().integer(3)}, ir::DType::float32);
  b.call_multi(b.multi_kernel({k0, k1}), {x, x, out, 3});
  b.output(out);

  std::string pattern = (std::filesystem::temp_directory_path() / "wrapir_provider_identity_XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path dir = pattern;
  const auto add_too = [](std::string version) {
    run::TypedCpuKernel k = run::cpu_kernel([](const float* a, const float* c, float* o, std::int64_t n) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = a[i] + c[i];
    });
    k.identity = std::move(version);
    return k;
  };
  struct Seen {
    std::vector<std::string> identities;
    run::ChoiceSource source = run::ChoiceSource::forced;
  };
  const auto run_with = [&](std::string version) {
    auto registry = kernels();
    REQUIRE(registry->add("add_too", add_too(std::move(version))));
    run::ExecutorOptions o = options();
    o.kernels = std::make_shared<run::ProviderChain>(std::vector<run::CpuKernelProviderPtr>{registry});
    o.multi_kernel.cache_enabled = true;
    o.multi_kernel.cache_directory = dir;
    o.multi_kernel.warmup = 1;
    o.multi_kernel.repetitions = 1;
    Seen seen;
    o.multi_kernel.on_choice = [&seen](const run::MultiKernelPlan& plan, const run::SelectionReport& report) {
      for (const run::Candidate& c : plan.candidates()) seen.identities.push_back(c.identity);
      seen.source = report.source;
    };
    auto exe = run::Executor::prepare(p, o);
    REQUIRE_MESSAGE(exe, exe.error().message);
    auto r = exe->run(std::vector<run::Tensor>{make({3}, {1, 2, 3})});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{2, 4, 6});
    return seen;
  };

  const Seen v1 = run_with("1");
  REQUIRE(v1.identities.size() == 2);
  // No identity registered for "add": its definition names it.
  const ir::KernelDecl& add = p.kernel(k0);
  const ir::KernelMetadata no_metadata;
  CHECK(v1.identities[0] ==
        run::definition_identity(run::KernelRequest{add.name, add.language, "// add", add.signature, &no_metadata}));
  CHECK(v1.identities[1] == "add_too@1");
  CHECK(v1.source == run::ChoiceSource::benchmark);
  CHECK(run_with("1").source == run::ChoiceSource::cache);
  const Seen v2 = run_with("2");
  CHECK(v2.identities[1] == "add_too@2");
  CHECK(v2.source == run::ChoiceSource::benchmark);
  std::filesystem::remove_all(dir);
}

TEST_CASE("executor: workspaces, device contexts, pools by hand") {
  ir::Program p{"misc"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
  b.enter_device(cpu);
  auto ws = b.workspace(b.ctx().integer(8), ir::WorkspaceZeroMode::zero_on_call);
  auto check = b.kernel("check_zero", ir::KernelLanguage::cpp, ir::SourceText{""}, "ws: *u8, x: *fp32");
  b.call(check, {ws, x});
  b.free({ws});
  b.exit_device();
  b.append(ir::EnterStreamContext{1});
  b.append(ir::GetRawStream{cpu, 1});
  b.append(ir::ExitStreamContext{});
  b.output(x);
  run::ExecutorOptions o = options();
  auto reg = kernels();
  REQUIRE(reg->add("check_zero", run::cpu_kernel([](const std::uint8_t* w, float* v) {
                     int nonzero = 0;
                     for (int i = 0; i < 8; ++i) nonzero += w[i] != 0;
                     v[0] = static_cast<float>(nonzero);
                   })));
  o.kernels = reg;
  auto exe = run::Executor::prepare(p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  auto r = exe->run(std::vector<run::Tensor>{make({2}, {5, 5})});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read(tensor_of((*r)[0]))[0] == 0);
}

TEST_CASE("executor: diagnostics name the line and say why") {
  SUBCASE("a kernel nobody provides") {
    ir::Program p{"missing"};
    ir::Builder b{p, cpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    auto k = b.kernel("nobody", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32");
    b.call(k, {x});
    b.output(x);
    auto exe = run::Executor::prepare(p, options());
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("line 0 (KernelDefinition)") != std::string::npos);
    CHECK(exe.error().message.find("'nobody'") != std::string::npos);
  }
  SUBCASE("a registered kernel whose parameters differ from the signature") {
    ir::Program p{"mismatch"};
    ir::Builder b{p, cpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    auto k = b.kernel("relu_", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32, n: i32");
    b.call(k, {x, 2});
    b.output(x);
    auto exe = run::Executor::prepare(p, options());
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("parameter 1") != std::string::npos);
  }
  SUBCASE("a kernel that fails at run time") {
    ir::Program p{"failing"};
    ir::Builder b{p, cpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    auto k = b.kernel("fails", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32");
    b.comment("first");
    b.call(k, {x});
    b.output(x);
    run::ExecutorOptions o = options();
    auto reg = kernels();
    REQUIRE(reg->add("fails", run::cpu_kernel([](float*) -> wrapir::Result<void> {
                       return wrapir::Diagnostic{"bad luck"};
                     })));
    o.kernels = reg;
    auto exe = run::Executor::prepare(p, o);
    REQUIRE(exe);
    auto r = exe->run(std::vector<run::Tensor>{make({2}, {1, 2})});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("line 2 (KernelCall)") != std::string::npos);
    CHECK(r.error().message.find("bad luck") != std::string::npos);
  }
  SUBCASE("a program on CUDA") {
    ir::Program p{"gpu"};
    ir::Builder b{p};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    b.output(x);
    auto exe = run::Executor::prepare(p, options());
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message.find("cuda:0") != std::string::npos);
  }
  SUBCASE("inputs of the wrong dtype, count or rank") {
    ir::Program p{"inputs"};
    ir::Builder b{p, cpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    b.output(x);
    auto exe = run::Executor::prepare(p, options());
    REQUIRE(exe);
    CHECK_FALSE(exe->run({}));
    auto wrong = exe->run(std::vector<run::Tensor>{run::empty_cpu({2}, ir::DType::int32).value()});
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().message.find("int32") != std::string::npos);
    auto rank = exe->run(std::vector<run::Tensor>{make({1, 2}, {1, 2})});
    REQUIRE_FALSE(rank);
    // A tensor whose layout reaches past its storage is refused.
    run::Tensor lying = make({2}, {1, 2});
    lying.sizes = {100};
    lying.strides = {1};
    CHECK_FALSE(exe->run(std::vector<run::Tensor>{lying}));
  }
}

TEST_CASE("executor: one prepared executor runs on several threads at once") {
  const ir::Program p = chain_program();
  auto exe = run::Executor::prepare(p, options());
  REQUIRE(exe);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const float v = static_cast<float>(t + i);
        auto r = exe->run(std::vector<run::Tensor>{make({2}, {v, 1})}, std::vector<std::int64_t>{2});
        if (!r || read(*(*r)[0].get_if<run::Tensor>()) != std::vector<float>{7 * v, 7}) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

// Static layouts are measured when the program is prepared (StaticLayout):
// an input whose dimensions match exactly skips the per-call evaluation, so
// these check that it is still refused or accepted exactly as before.
TEST_CASE("executor: inputs of a static layout are checked as symbolic ones are") {
  ir::Program p{"static_inputs"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(4)}, ir::DType::float32);
  auto m = b.input("m", {b.ctx().integer(1), b.ctx().integer(3)}, ir::DType::float32);
  b.output(x);
  b.output(m);
  auto exe = run::Executor::prepare(p, options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const run::Tensor matrix = make({1, 3}, {7, 8, 9});

  SUBCASE("the exact layout, at offset 0") {
    auto r = exe->run(std::vector<run::Tensor>{make({4}, {1, 2, 3, 4}), matrix});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{1, 2, 3, 4});
  }
  SUBCASE("the exact layout at an offset that stays inside the storage") {
    run::Tensor shifted = make({5}, {0, 1, 2, 3, 4});
    shifted.sizes = {4};
    shifted.offset = 1;
    auto r = exe->run(std::vector<run::Tensor>{shifted, matrix});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{1, 2, 3, 4});
  }
  SUBCASE("the exact layout at an offset that reaches past the storage") {
    run::Tensor shifted = make({4}, {1, 2, 3, 4});
    shifted.offset = 1;
    auto r = exe->run(std::vector<run::Tensor>{shifted, matrix});
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find("reaches 20 bytes past a storage of 16") != std::string::npos, r.error().message);
  }
  SUBCASE("a negative offset") {
    run::Tensor shifted = make({4}, {1, 2, 3, 4});
    shifted.offset = -1;
    CHECK_FALSE(exe->run(std::vector<run::Tensor>{shifted, matrix}));
  }
  SUBCASE("the exact layout on a storage too small for it") {
    run::Tensor small = make({2}, {1, 2});
    small.sizes = {4};
    auto r = exe->run(std::vector<run::Tensor>{small, matrix});
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find("past a storage of 8") != std::string::npos, r.error().message);
  }
  SUBCASE("a stride that differs where the size is 1 is accepted, elsewhere refused") {
    run::Tensor loose = make({1, 3}, {7, 8, 9});
    loose.strides = {99, 1};
    auto r = exe->run(std::vector<run::Tensor>{make({4}, {1, 2, 3, 4}), loose});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[1])) == std::vector<float>{7, 8, 9});
    run::Tensor spread = make({9}, {7, 0, 0, 8, 0, 0, 9, 0, 0});
    spread.sizes = {1, 3};
    spread.strides = {3, 3};  // inside its storage, but the size-3 dimension's stride is not the layout's
    auto bad = exe->run(std::vector<run::Tensor>{make({4}, {1, 2, 3, 4}), spread});
    REQUIRE_FALSE(bad);
    CHECK_MESSAGE(bad.error().message.find("has strides [3, 3]") != std::string::npos, bad.error().message);
  }
  SUBCASE("strides other than the layout's are refused") {
    run::Tensor strided = make({8}, {1, 0, 2, 0, 3, 0, 4, 0});
    strided.sizes = {4};
    strided.strides = {2};
    auto r = exe->run(std::vector<run::Tensor>{strided, matrix});
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find("has strides [2], the program expects [1]") != std::string::npos, r.error().message);
  }
  SUBCASE("calls after a refused one run as before (the recycled state keeps nothing)") {
    run::Tensor small = make({2}, {1, 2});
    small.sizes = {4};
    CHECK_FALSE(exe->run(std::vector<run::Tensor>{small, matrix}));
    auto r = exe->run(std::vector<run::Tensor>{make({4}, {5, 6, 7, 8}), matrix});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read(tensor_of((*r)[0])) == std::vector<float>{5, 6, 7, 8});
  }
}
