// Graph mode of the executor (include/wrapir/run/detail/executor_graph*.hpp)
// without a GPU: a backend whose "device" memory is host memory tagged
// cuda:0 and which, while capturing, records the work enqueued on it
// (kernels, fills, copies) instead of running it; a launch of its graph
// runs the recorded work. It refuses what a CUDA capture refuses:
// allocating, synchronising or copying to the host while capturing. So
// these tests check the cache (keying, LRU cap, eviction), the memory plan
// (no allocation while capturing, none on replay), address updates, output
// aliasing and the prepare-time refusals, all in CI.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/run/executor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
using wrapir::expr::Expr;

constexpr ir::Device gpu = wrapir::cuda_device(0);

/// Host memory tagged cuda:0 that records work while capturing.
class CapturingBackend final : public run::DeviceBackend {
 public:
  mutable bool capturing = false;
  mutable std::vector<std::function<void()>> recorded;
  mutable int allocations = 0, captures = 0, launches = 0, updates = 0;
  bool capturable = true;

  struct FakeGraph final : run::DeviceGraph {
    CapturingBackend* owner = nullptr;
    std::vector<std::function<void()>> work;
    bool executable = false;
    wrapir::Result<void> launch() override {
      if (!executable) return wrapir::Diagnostic{"not executable"};
      ++owner->launches;
      for (auto& w : work) w();
      return {};
    }
    wrapir::Result<void> update(run::DeviceGraph& recaptured) override {
      auto& other = dynamic_cast<FakeGraph&>(recaptured);
      if (other.work.size() != work.size()) return wrapir::Diagnostic{"topology changed"};
      work = std::move(other.work);
      ++owner->updates;
      return {};
    }
  };

  [[nodiscard]] ir::DeviceType device_type() const noexcept override { return ir::DeviceType::cuda; }
  [[nodiscard]] std::string describe() const override { return "capturing host memory"; }
  [[nodiscard]] wrapir::Result<std::shared_ptr<run::Storage>> allocate(const ir::Device& device,
                                                                       std::int64_t bytes) const override {
    if (capturing) return wrapir::Diagnostic{"cuMemAlloc while capturing: operation not permitted"};
    ++allocations;
    auto s = std::make_shared<run::Storage>();
    void* p = bytes == 0 ? nullptr : std::calloc(static_cast<std::size_t>(bytes), 1);
    s->data = static_cast<std::byte*>(p);
    s->nbytes = bytes;
    s->device = device;
    s->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    return s;
  }
  [[nodiscard]] wrapir::Result<void> zero(std::byte* data, std::int64_t bytes) const override {
    auto work = [=] { std::memset(data, 0, static_cast<std::size_t>(bytes)); };
    if (capturing) recorded.push_back(work);
    else work();
    return {};
  }
  [[nodiscard]] wrapir::Result<void> copy(std::byte* dst, const ir::Device& dd, const std::byte* src,
                                          const ir::Device&, std::int64_t bytes) const override {
    if (capturing && dd.type == ir::DeviceType::cpu) return wrapir::Diagnostic{"a copy to the host while capturing"};
    auto work = [=] { std::memmove(dst, src, static_cast<std::size_t>(bytes)); };
    if (capturing) recorded.push_back(work);
    else work();
    return {};
  }
  [[nodiscard]] wrapir::Result<void> synchronize() const override {
    if (capturing) return wrapir::Diagnostic{"synchronising while capturing invalidates the capture"};
    return {};
  }
  [[nodiscard]] wrapir::Result<void> can_capture() const override {
    if (!capturable) return wrapir::Diagnostic{"this fake cannot capture"};
    return {};
  }
  [[nodiscard]] wrapir::Result<void> begin_capture() const override {
    if (capturing) return wrapir::Diagnostic{"captures do not nest"};
    capturing = true;
    recorded.clear();
    return {};
  }
  [[nodiscard]] wrapir::Result<std::unique_ptr<run::DeviceGraph>> end_capture(bool executable) const override {
    if (!capturing) return wrapir::Diagnostic{"no capture"};
    capturing = false;
    ++captures;
    auto g = std::make_unique<FakeGraph>();
    g->owner = const_cast<CapturingBackend*>(this);
    g->work = std::move(recorded);
    recorded.clear();
    g->executable = executable;
    return std::unique_ptr<run::DeviceGraph>(std::move(g));
  }
};

/// Kernels that run at once, or are recorded with copies of their argument
/// values while the backend captures (what cuLaunchKernel does).
class DeferringProvider final : public run::KernelProvider {
 public:
  DeferringProvider(std::shared_ptr<run::KernelRegistry> inner, std::shared_ptr<CapturingBackend> backend)
      : inner_(std::move(inner)), backend_(std::move(backend)) {}
  [[nodiscard]] wrapir::Result<run::ProvidedKernel> provide(const run::KernelRequest& request) const override {
    auto provided = inner_->provide(request);
    if (!provided || !*provided) return provided;
    run::KernelFn deferring = [fn = provided->fn, b = backend_](std::span<void* const> args) -> wrapir::Result<void> {
      if (!b->capturing) return fn(args);
      std::vector<std::uint64_t> values(args.size());
      for (std::size_t i = 0; i < args.size(); ++i) std::memcpy(&values[i], args[i], sizeof(std::uint64_t));
      b->recorded.push_back([fn, values]() mutable {
        std::vector<void*> params;
        for (auto& v : values) params.push_back(&v);
        (void)fn(params);
      });
      return {};
    };
    return run::ProvidedKernel{std::move(deferring), provided->identity};
  }
  [[nodiscard]] std::string describe() const override { return "deferring registry"; }

 private:
  std::shared_ptr<run::KernelRegistry> inner_;
  std::shared_ptr<CapturingBackend> backend_;
};

struct Setup {
  std::shared_ptr<CapturingBackend> backend = std::make_shared<CapturingBackend>();
  int kernel_runs = 0;
  run::ExecutorOptions options(std::size_t max_graphs = 8) {
    auto r = std::make_shared<run::KernelRegistry>();
    REQUIRE(r->add("add", run::cpu_kernel([this](const float* a, const float* b, float* out, std::int64_t n) {
                     ++kernel_runs;
                     for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
                   })));
    REQUIRE(r->add("relu_", run::cpu_kernel([this](float* x, std::int64_t n) {
                     ++kernel_runs;
                     for (std::int64_t i = 0; i < n; ++i) x[i] = x[i] < 0 ? 0 : x[i];
                   })));
    run::ExecutorOptions o;
    o.device = backend;
    o.kernels = std::make_shared<DeferringProvider>(r, backend);
    o.graph = {.enabled = true, .max_graphs = max_graphs};
    return o;
  }
  run::Tensor input(std::vector<float> values) {
    const auto n = static_cast<std::int64_t>(values.size());
    run::Tensor t{backend->allocate(gpu, n * 4).value(), ir::DType::float32, {n}, {1}, 0};
    std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
    return t;
  }
};

std::vector<float> read(const run::Value& v) {
  const run::Tensor& t = *v.get_if<run::Tensor>();
  const auto* p = static_cast<const float*>(t.data());
  return std::vector<float>(p, p + t.numel());
}

/// out = (x + x) + x, through an intermediate that is freed; size s0 (a
/// scalar input).
ir::Program triple() {
  ir::Program p{"triple"};
  ir::Builder b{p, gpu};
  Expr n = b.size_symbol("s0", 4);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto add = b.kernel("add", ir::KernelLanguage::triton, ir::SourceText{"#"}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto t = b.empty({n}, ir::DType::float32);
  b.call(add, {x, x, t, n});
  auto out = b.empty({n}, ir::DType::float32);
  b.call(add, {t, x, out, n});
  b.free({t});
  b.output(out);
  return p;
}

}  // namespace

TEST_CASE("graph mode: the first call runs and captures, later calls replay with no allocation") {
  Setup s;
  auto exe = run::Executor::prepare(triple(), s.options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{s.input({1, -2, 3, 4})};
  const std::vector<std::int64_t> n{4};
  auto r1 = exe->run(in, n);
  REQUIRE_MESSAGE(r1, r1.error().message);
  CHECK(read((*r1)[0]) == std::vector<float>{3, -6, 9, 12});
  CHECK(s.kernel_runs == 2);  // the uncaptured run; the capture ran nothing
  CHECK(exe->graph_stats().captured == 1);
  CHECK(exe->graph_stats().cached == 1);
  CHECK(s.backend->captures == 1);
  const int allocations = s.backend->allocations;
  auto r2 = exe->run(in, n);
  REQUIRE_MESSAGE(r2, r2.error().message);
  CHECK(read((*r2)[0]) == std::vector<float>{3, -6, 9, 12});
  CHECK(s.kernel_runs == 4);
  CHECK(s.backend->launches == 1);
  CHECK(exe->graph_stats().replayed == 1);
  CHECK(s.backend->allocations == allocations);  // a replay allocates nothing
  // New values at the same address replay; the graph's output is its memory,
  // rewritten by each replay (as reduce-overhead's outputs are).
  const float v[4] = {1, 1, 1, 1};
  std::memcpy(in[0].data(), v, sizeof v);
  auto r3 = exe->run(in, n);
  REQUIRE_MESSAGE(r3, r3.error().message);
  CHECK(read((*r3)[0]) == std::vector<float>{3, 3, 3, 3});
  CHECK(read((*r2)[0]) == std::vector<float>{3, 3, 3, 3});
  CHECK(exe->graph_stats().replayed == 2);
}

TEST_CASE("graph mode: a call with other input addresses updates the graph in place and is right") {
  Setup s;
  auto exe = run::Executor::prepare(triple(), s.options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<std::int64_t> n{3};
  REQUIRE(exe->run(std::vector<run::Tensor>{s.input({1, 2, 3})}, n));
  const std::vector<run::Tensor> other{s.input({10, 20, 30})};
  auto r = exe->run(other, n);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read((*r)[0]) == std::vector<float>{30, 60, 90});
  CHECK(exe->graph_stats().updated == 1);
  CHECK(s.backend->updates == 1);
  CHECK(exe->graph_stats().captured == 1);
  // The updated graph now replays on the new address.
  auto again = exe->run(other, n);
  REQUIRE_MESSAGE(again, again.error().message);
  CHECK(read((*again)[0]) == std::vector<float>{30, 60, 90});
  CHECK(exe->graph_stats().replayed == 1);
}

TEST_CASE("graph mode: one graph per symbol tuple, least recently used evicted at the cap") {
  Setup s;
  auto exe = run::Executor::prepare(triple(), s.options(2));
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> a{s.input({1})}, b{s.input({1, 2})}, c{s.input({1, 2, 3})};
  const std::vector<std::int64_t> na{1}, nb{2}, nc{3};
  REQUIRE(exe->run(a, na));
  REQUIRE(exe->run(b, nb));
  CHECK(exe->graph_stats().captured == 2);
  REQUIRE(exe->run(a, na));  // a is now the most recent
  CHECK(exe->graph_stats().replayed == 1);
  auto rc = exe->run(c, nc);  // evicts b
  REQUIRE_MESSAGE(rc, rc.error().message);
  CHECK(read((*rc)[0]) == std::vector<float>{3, 6, 9});
  CHECK(exe->graph_stats().evicted == 1);
  CHECK(exe->graph_stats().cached == 2);
  REQUIRE(exe->run(a, na));
  CHECK(exe->graph_stats().replayed == 2);  // a survived
  auto rb = exe->run(b, nb);
  REQUIRE_MESSAGE(rb, rb.error().message);
  CHECK(read((*rb)[0]) == std::vector<float>{3, 6});
  CHECK(exe->graph_stats().captured == 4);  // b captured again
  CHECK(exe->graph_stats().evicted == 2);
  // A size that contradicts the scalar is refused as without graph mode.
  auto bad = exe->run(b, na);
  REQUIRE_FALSE(bad);
  CHECK_MESSAGE(bad.error().message.find("has sizes [2], the program expects [1]") != std::string::npos,
                bad.error().message);
}

TEST_CASE("graph mode: max_graphs 0 runs every call uncaptured") {
  Setup s;
  auto exe = run::Executor::prepare(triple(), s.options(0));
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{s.input({1, 2})};
  const std::vector<std::int64_t> n{2};
  for (int i = 0; i < 3; ++i) {
    auto r = exe->run(in, n);
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read((*r)[0]) == std::vector<float>{3, 6});
  }
  CHECK(exe->graph_stats().captured == 0);
  CHECK(s.backend->captures == 0);
}

TEST_CASE("graph mode: an output aliasing an input is the caller's input on replay, and is not run twice") {
  Setup s;
  ir::Program p{"relu_inplace"};
  ir::Builder b{p, gpu};
  auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
  auto relu = b.kernel("relu_", ir::KernelLanguage::triton, ir::SourceText{"#"}, "x: *fp32, n: i64");
  b.call(relu, {x, 2});
  b.output(x);
  auto exe = run::Executor::prepare(p, s.options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> first{s.input({-1, 2})};
  auto r1 = exe->run(first, {});
  REQUIRE_MESSAGE(r1, r1.error().message);
  CHECK(s.kernel_runs == 1);  // the in-place kernel ran once on the first call
  CHECK(read((*r1)[0]) == std::vector<float>{0, 2});
  const std::vector<run::Tensor> second{s.input({-5, 7})};
  auto r2 = exe->run(second, {});
  REQUIRE_MESSAGE(r2, r2.error().message);
  CHECK(r2->at(0).get_if<run::Tensor>()->storage == second[0].storage);
  CHECK(read((*r2)[0]) == std::vector<float>{0, 7});
  auto r3 = exe->run(second, {});
  REQUIRE_MESSAGE(r3, r3.error().message);
  CHECK(r3->at(0).get_if<run::Tensor>()->storage == second[0].storage);
  CHECK(exe->graph_stats().replayed == 1);
}

TEST_CASE("graph mode: what cannot be captured is refused when prepared, naming the line") {
  Setup s;
  auto refused = [&](const ir::Program& p, run::ExecutorOptions o) {
    auto exe = run::Executor::prepare(p, std::move(o));
    REQUIRE_FALSE(exe);
    return exe.error().message;
  };
  SUBCASE("a host read of a device value") {
    ir::Program p{"item"};
    ir::Builder b{p, gpu};
    auto x = b.input("x", {b.ctx().integer(1)}, ir::DType::int64);
    Expr u0 = b.unbacked_symbol("u0");
    b.dynamic_scalar(u0, x);
    b.output(u0);
    const std::string m = refused(p, s.options());
    CHECK_MESSAGE(m.find("(DynamicScalar): graph mode (ExecutorOptions::graph, --graph) cannot capture it") !=
                      std::string::npos,
                  m);
    CHECK_MESSAGE(m.find("line 0") != std::string::npos, m);
  }
  SUBCASE("a conditional on a tensor predicate") {
    ir::Program p{"cond"};
    ir::Builder b{p, gpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    auto flag = b.input("flag", {b.ctx().integer(1)}, ir::DType::bool_);
    auto outs = b.conditional(
        flag, {x},
        [](ir::Builder& sb, std::span<const ir::ProgramInput> in) { sb.output(boost::variant2::get<ir::BufferId>(in[0])); },
        [](ir::Builder& sb, std::span<const ir::ProgramInput> in) { sb.output(boost::variant2::get<ir::BufferId>(in[0])); });
    b.output(outs[0]);
    const std::string m = refused(p, s.options());
    CHECK_MESSAGE(m.find("(Conditional): graph mode") != std::string::npos, m);
    CHECK_MESSAGE(m.find("predicate is a tensor read on the host") != std::string::npos, m);
  }
  SUBCASE("a copy to the host") {
    ir::Program p{"to_host"};
    ir::Builder b{p, gpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    auto h = b.empty({b.ctx().integer(2)}, ir::DType::float32, wrapir::cpu_device());
    b.append(ir::DeviceCopy{ir::BufferArg{h, std::nullopt}, ir::BufferArg{x, std::nullopt}, false});
    b.output(h);
    const std::string m = refused(p, s.options());
    CHECK_MESSAGE(m.find("(DeviceCopy): graph mode") != std::string::npos, m);
  }
  SUBCASE("an extern that allocates its result") {
    ir::Program p{"alloc"};
    ir::Builder b{p, gpu};
    auto x = b.input("x", {b.ctx().integer(2)}, ir::DType::float32);
    auto y = b.extern_alloc("aten.clone.default", {x},
                            ir::Layout::contiguous(b.ctx(), {b.ctx().integer(2)}, ir::DType::float32, gpu));
    b.output(y);
    auto externs = std::make_shared<run::ExternRegistry>();
    REQUIRE(externs->add("aten.clone.default", [](const run::ExternCall&) -> wrapir::Result<run::Value> {
      return wrapir::Diagnostic{"unused"};
    }));
    run::ExecutorOptions o = s.options();
    o.externs = externs;
    const std::string m = refused(p, std::move(o));
    CHECK_MESSAGE(m.find("(ExternKernelAlloc): graph mode") != std::string::npos, m);
    CHECK_MESSAGE(m.find("outside the graph's planned memory") != std::string::npos, m);
  }
  SUBCASE("a backend that cannot capture, or none") {
    s.backend->capturable = false;
    std::string m = refused(triple(), s.options());
    CHECK_MESSAGE(m.find("graph mode: this fake cannot capture") != std::string::npos, m);
    run::ExecutorOptions o = s.options();
    o.device = nullptr;
    m = refused(triple(), std::move(o));
    CHECK_MESSAGE(m.find("no backend") != std::string::npos, m);
  }
}

TEST_CASE("graph mode: a key from a solved dimension replays too, and scalar outputs come back") {
  Setup s;
  ir::Program p{"solved"};
  ir::Builder b{p, gpu};
  // x has 2*s0 elements; s0 is solved from x's size, so the key needs a bound frame.
  Expr s0 = b.ctx().symbol("s0");
  const Expr two_s0 = wrapir::expr::mul(b.ctx().integer(2), s0);
  auto x = b.input("x", ir::Layout::contiguous(b.ctx(), {two_s0}, ir::DType::float32, gpu));
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input_shape, x, {ir::KeyStep{ir::KeyStepKind::size, 0}}, 2});
  auto add = b.kernel("add", ir::KernelLanguage::triton, ir::SourceText{"#"}, "a: *fp32, b: *fp32, out: *fp32, n: i64");
  auto out = b.empty({two_s0}, ir::DType::float32);
  b.call(add, {x, x, out, two_s0});
  b.output(out);
  b.output(s0);
  auto exe = run::Executor::prepare(p, s.options());
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{s.input({1, 2, 3, 4})};
  for (int call = 0; call < 3; ++call) {
    auto r = exe->run(in);
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read((*r)[0]) == std::vector<float>{2, 4, 6, 8});
    REQUIRE((*r)[1].get_if<std::int64_t>() != nullptr);
    CHECK(*(*r)[1].get_if<std::int64_t>() == 2);
  }
  CHECK(exe->graph_stats().captured == 1);
  CHECK(exe->graph_stats().replayed == 2);
  CHECK(exe->graph_stats().updated == 0);
}
