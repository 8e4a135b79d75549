// Tests of include/wrapir/run/autotune.hpp: a multi-kernel whose candidates
// are CPU callables of very different cost is tuned once; the fast one is
// chosen whatever its position, the tuned program verifies, computes what
// the original computes, and every emitter renders it without the loser;
// buffers a candidate updates in place are restored between measurements;
// the record reads back; refusals name what is wrong.

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/dot.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/emit/text.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/run/autotune.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
using wrapir::expr::Expr;

constexpr ir::Device cpu = wrapir::cpu_device();

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// `text` without the occurrences of `record` (which names every candidate).
std::string without(std::string text, const std::string& record) {
  for (std::size_t at = text.find(record); at != std::string::npos; at = text.find(record))
    text.erase(at, record.size());
  return text;
}

run::Tensor make(std::vector<float> values) {
  run::Tensor t = run::empty_cpu({static_cast<std::int64_t>(values.size())}, ir::DType::float32).value();
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> read(const run::Value& v) {
  const run::Tensor* t = v.get_if<run::Tensor>();
  REQUIRE(t != nullptr);
  const auto* p = static_cast<const float*>(t->data());
  return std::vector<float>(p, p + t->numel());
}

/// `out = 2 * a`, written fast, and slowly: the same sum recomputed `reps`
/// times (volatile, so that the compiler keeps every pass).
void twice_fast(const float* a, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = 2 * a[i];
}
void twice_slow(const float* a, float* out, std::int64_t n, std::int64_t reps) {
  for (std::int64_t r = 0; r < reps; ++r)
    for (std::int64_t i = 0; i < n; ++i) {
      volatile float v = a[i] + a[i];
      out[i] = v;
    }
}

std::shared_ptr<run::KernelRegistry> registry() {
  auto r = std::make_shared<run::KernelRegistry>();
  REQUIRE(r->add("twice_fast", run::cpu_kernel(twice_fast)));
  REQUIRE(r->add("twice_slow", run::cpu_kernel(twice_slow)));
  return r;
}

run::AutotuneOptions options(std::shared_ptr<run::KernelRegistry> kernels = registry()) {
  run::AutotuneOptions o;
  o.executor.kernels = std::move(kernels);
  o.executor.multi_kernel.warmup = 1;
  o.executor.multi_kernel.repetitions = 5;
  return o;
}

/// x: f32[s0] (hint 2048) -> out = 2 * x through a multi-kernel of a slow
/// and a fast candidate, in the order asked; the slow one takes a fourth
/// argument (its repetitions) that the fast one's slices leave out.
ir::Program doubling(bool slow_first) {
  ir::Program p{"doubling"};
  ir::Builder b{p, cpu};
  const Expr n = b.size_symbol("s0", 2048);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto slow = b.kernel("twice_slow", ir::KernelLanguage::cpp, ir::SourceText{"// slow"},
                       "a: *fp32, out: *fp32, n: i64, reps: i64");
  auto fast = b.kernel("twice_fast", ir::KernelLanguage::cpp, ir::SourceText{"// fast"}, "a: *fp32, out: *fp32, n: i64");
  const std::vector<ir::ArgSlice> all{{0, 4}}, three{{0, 3}};
  auto mk = slow_first ? b.multi_kernel({slow, fast}, {all, three}) : b.multi_kernel({fast, slow}, {three, all});
  if (!slow_first) {
    // The multi-kernel's signature is its first candidate's: widen it to
    // the combined list of four.
    p.kernel(mk).signature = p.kernel(slow).signature;
  }
  auto out = b.empty({n}, ir::DType::float32);
  b.call_multi(mk, {x, out, n, 200});
  b.output(out);
  return p;
}

std::size_t count_kind(const ir::Program& p, std::string_view kind) {
  std::size_t n = 0;
  for (const ir::Line& l : p.body)
    n += std::visit([&]<class K>(const K&) { return K::kind == kind ? 1u : 0u; }, l);
  return n;
}

std::string first_finding(const ir::Program& p) {
  const auto findings = ir::verify(p);
  return findings.empty() ? std::string{} : ir::to_string(findings.front());
}

}  // namespace

TEST_CASE("autotune: picks the fast candidate wherever it stands, and the program says so") {
  for (const bool slow_first : {true, false}) {
    CAPTURE(slow_first);
    const ir::Program original = doubling(slow_first);
    REQUIRE_MESSAGE(first_finding(original).empty(), first_finding(original));
    auto tuned = run::autotune(original, options());
    REQUIRE_MESSAGE(tuned, tuned.error().message);

    REQUIRE(tuned->choices.size() == 1);
    const run::AutotuneChoice& c = tuned->choices[0];
    CHECK(c.record.multi_kernel == "multi_kernel_0");
    CHECK(c.record.chosen == "twice_fast");
    CHECK(c.calls_rewritten == 1);
    REQUIRE(c.record.candidates.size() == 2);
    const std::size_t fast = slow_first ? 1 : 0;
    REQUIRE(c.record.candidates[fast].median_ms);
    REQUIRE(c.record.candidates[1 - fast].median_ms);
    CHECK(*c.record.median_ms == *c.record.candidates[fast].median_ms);
    CHECK(*c.record.candidates[1 - fast].median_ms > 5 * *c.record.candidates[fast].median_ms);
    CHECK(c.record.device == "cpu");
    CHECK(c.record.warmup == 1);
    CHECK(c.record.repetitions == 5);
    CHECK(c.record.at == std::vector<std::pair<std::string, std::int64_t>>{{"s0", 2048}});
    CHECK(tuned->kept.empty());
    CHECK(tuned->wall_ms > 0);

    // No multi-kernel and no loser is left; the record precedes the call.
    const ir::Program& p = tuned->program;
    CHECK_MESSAGE(first_finding(p).empty(), first_finding(p));
    CHECK(count_kind(p, "MultiKernelDefinition") == 0);
    CHECK(count_kind(p, "MultiKernelCall") == 0);
    CHECK(count_kind(p, "KernelDefinition") == 1);
    REQUIRE(p.kernels.size() == 1);
    CHECK(p.kernels[0].name == "twice_fast");
    const ir::Comment* comment = nullptr;
    const ir::KernelCall* call = nullptr;
    for (std::size_t i = 0; i + 1 < p.body.size(); ++i)
      if (const auto* k = std::get_if<ir::KernelCall>(&p.body[i + 1])) {
        comment = std::get_if<ir::Comment>(&p.body[i]);
        call = k;
      }
    REQUIRE(call != nullptr);
    REQUIRE(comment != nullptr);
    CHECK(call->args.size() == 3);  // the fast candidate's slice of the four
    CHECK(call->arg_types.size() == 3);
    const auto record = run::parse_autotune_comment(comment->text);
    REQUIRE(record);
    CHECK(*record == c.record);

    // Every emitter renders the chosen kernel only.
    for (const auto& rendered :
         {std::pair{"python", wrapir::python::to_python(p).value()}, std::pair{"text", wrapir::text::to_text(p)},
          std::pair{"json", wrapir::io::to_json(p)}, std::pair{"dot", wrapir::dot::to_dot(p).value()}}) {
      const std::string target = rendered.first;
      const std::string& text = rendered.second;
      CAPTURE(target);
      if (target != "dot") CHECK(contains(text, comment->text));  // DOT draws no comments
      const std::string code = without(text, comment->text);
      CHECK(contains(code, "twice_fast"));
      CHECK_FALSE(contains(code, "twice_slow"));
      CHECK_FALSE(contains(code, "multi_kernel_0"));
    }
    const std::string py = wrapir::python::to_python(p).value();
    CHECK(contains(py, "# autotune: multi_kernel=multi_kernel_0 chose=twice_fast"));
    CHECK_FALSE(contains(py, "async_compile.multi_kernel"));

    // Both compute 2 * x, at the hint and at another size.
    run::ExecutorOptions exec;
    exec.kernels = registry();
    exec.multi_kernel.cache_enabled = false;
    exec.multi_kernel.forced_choice = 0;  // the original without benchmarking again
    auto before = run::Executor::prepare(original, exec);
    auto after = run::Executor::prepare(p, exec);
    REQUIRE_MESSAGE(before, before.error().message);
    REQUIRE_MESSAGE(after, after.error().message);
    for (const std::vector<float>& x : {std::vector<float>{1, -2, 3.5f}, std::vector<float>(2048, 0.25f)}) {
      const std::vector<run::Tensor> in{make(x)};
      const std::vector<std::int64_t> scalars{static_cast<std::int64_t>(x.size())};
      auto a = before->run(in, scalars);
      auto b = after->run(in, scalars);
      REQUIRE_MESSAGE(a, a.error().message);
      REQUIRE_MESSAGE(b, b.error().message);
      CHECK(read((*a)[0]) == read((*b)[0]));
      CHECK(read((*b)[0])[0] == 2 * x[0]);
    }
  }
}

TEST_CASE("autotune: the C++ emitter renders only the chosen kernel") {
  auto tuned = run::autotune(doubling(true), options());
  REQUIRE_MESSAGE(tuned, tuned.error().message);
  auto cpp = wrapir::cpp::to_cpp(tuned->program);
  REQUIRE_MESSAGE(cpp, cpp.error().message);
  const std::string record = run::autotune_comment(tuned->choices.at(0).record);
  CHECK(contains(*cpp, "/* " + record + " */"));
  const std::string code = without(*cpp, record);
  CHECK(contains(code, "twice_fast"));
  CHECK_FALSE(contains(code, "twice_slow"));
  CHECK_FALSE(contains(code, "multi_kernel_0"));
}

TEST_CASE("autotune: buffers a candidate updates in place are restored before every measured run") {
  // x -> out = copy of x; then a multi-kernel bumps out in place (out += 1).
  // Each candidate records what it finds in out[0]: every run, warm-up and
  // timed, must see the copy, never an earlier run's increment.
  ir::Program p{"bump"};
  ir::Builder b{p, cpu};
  auto x = b.input("x", {b.ctx().integer(64)}, ir::DType::float32);
  auto copy = b.kernel("copy", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, out: *fp32");
  auto inc_a = b.kernel("bump_a", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32");
  auto inc_b = b.kernel("bump_b", ir::KernelLanguage::cpp, ir::SourceText{""}, "x: *fp32");
  auto out = b.empty({b.ctx().integer(64)}, ir::DType::float32);
  b.call(copy, {x, out});
  auto mk = b.multi_kernel({inc_a, inc_b});
  b.call_multi(mk, {out});
  b.output(out);

  auto seen = std::make_shared<std::vector<float>>();
  auto kernels = std::make_shared<run::KernelRegistry>();
  REQUIRE(kernels->add("copy", run::cpu_kernel([](const float* a, float* o) { std::memcpy(o, a, 64 * sizeof(float)); })));
  for (const char* name : {"bump_a", "bump_b"})
    REQUIRE(kernels->add(name, run::cpu_kernel([seen](float* v) {
                           seen->push_back(v[0]);
                           for (int i = 0; i < 64; ++i) v[i] += 1;
                         })));
  run::AutotuneOptions o = options(kernels);
  o.executor.multi_kernel.warmup = 2;
  o.executor.multi_kernel.repetitions = 5;
  std::vector<float> values(64, 0);
  values[0] = 7;
  const run::Tensor given = make(values);
  o.inputs = std::vector<run::Tensor>{given};
  auto tuned = run::autotune(p, o);
  REQUIRE_MESSAGE(tuned, tuned.error().message);
  // 2 candidates x (2 + 5) runs, then the real launch: all saw 7.
  REQUIRE(seen->size() == 2 * (2 + 5) + 1);
  for (const float v : *seen) CHECK(v == 7);
  CHECK(static_cast<const float*>(given.data())[0] == 7);  // the caller's input is untouched
  // The tuned program keeps no copy: the same lines as before, less the
  // multi-kernel, plus the record.
  CHECK(count_kind(tuned->program, "Allocate") == count_kind(p, "Allocate"));
  CHECK(tuned->program.buffers.size() == p.buffers.size());
  CHECK_MESSAGE(first_finding(tuned->program).empty(), first_finding(tuned->program));
  // And it bumps once.
  run::ExecutorOptions exec;
  exec.kernels = kernels;
  auto exe = run::Executor::prepare(tuned->program, exec);
  REQUIRE_MESSAGE(exe, exe.error().message);
  seen->clear();
  auto r = exe->run(std::vector<run::Tensor>{make(values)});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read((*r)[0])[0] == 8);
  CHECK(seen->size() == 1);
}

TEST_CASE("autotune: measures at given symbol values and records them") {
  run::AutotuneOptions o = options();
  o.symbols["s0"] = 512;
  auto tuned = run::autotune(doubling(true), o);
  REQUIRE_MESSAGE(tuned, tuned.error().message);
  REQUIRE(tuned->choices.size() == 1);
  CHECK(tuned->choices[0].record.at == std::vector<std::pair<std::string, std::int64_t>>{{"s0", 512}});
  CHECK(tuned->choices[0].record.chosen == "twice_fast");

  o.symbols = {{"s9", 3}};
  auto unknown = run::autotune(doubling(true), o);
  REQUIRE_FALSE(unknown);
  CHECK_MESSAGE(contains(unknown.error().message, "symbol 's9' is not a symbol of the program"), unknown.error().message);
  o.symbols = {{"s0", -4}};
  auto negative = run::autotune(doubling(true), o);
  REQUIRE_FALSE(negative);
  CHECK_MESSAGE(contains(negative.error().message, "breaks its assumption"), negative.error().message);
}

TEST_CASE("autotune: the record reads back, and other text does not") {
  run::AutotuneRecord r;
  r.multi_kernel = "multi_kernel_3";
  r.chosen = "triton_per_fused_1";
  r.median_ms = 0.0123;
  r.candidates = {{"triton_red_fused_0", 0.1 + 0.2}, {"triton_per_fused_1", 0.0123}, {"broken", std::nullopt}};
  r.device = "CUDA device 0 (NVIDIA H100 80GB HBM3)";
  r.warmup = 3;
  r.repetitions = 25;
  r.at = {{"s0", 64}, {"s1", 128}};
  const std::string text = run::autotune_comment(r);
  CHECK(text.find(' ', text.find("device=")) == text.find(" warmup="));  // the device is one token
  auto back = run::parse_autotune_comment(text);
  REQUIRE(back);
  CHECK(back->candidates == r.candidates);  // times read back exactly
  CHECK(back->device == "CUDA_device_0__NVIDIA_H100_80GB_HBM3_");
  back->device = r.device;
  CHECK(*back == r);
  r.at.clear();
  r.median_ms.reset();
  r.device = "cpu";
  CHECK(run::parse_autotune_comment(run::autotune_comment(r)) == r);
  for (const std::string& bad : std::vector<std::string>{"", "autotune:", "a comment", "autotune: multi_kernel=m chose=k", text + " extra=1",
        text.substr(0, text.size() - 3) + "s0:x", "autotune: chose=k multi_kernel=m ms=1 candidates= device=cpu warmup=0 repetitions=0 at="})
    CHECK_FALSE(run::parse_autotune_comment(bad));
}

TEST_CASE("autotune: refusals name what is wrong") {
  SUBCASE("nothing to tune") {
    ir::Program p{"plain"};
    ir::Builder b{p, cpu};
    auto x = b.input("x", {b.ctx().integer(4)}, ir::DType::float32);
    auto k = b.kernel("twice_fast", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, out: *fp32, n: i64");
    auto out = b.empty({b.ctx().integer(4)}, ir::DType::float32);
    b.call(k, {x, out, 4});
    b.output(out);
    auto r = run::autotune(p, options());
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "autotune: nothing to tune: the program has no multi-kernel"),
                  r.error().message);
  }
  SUBCASE("a multi-kernel without candidates") {
    ir::Program p = doubling(true);
    for (ir::Line& l : p.body)
      if (auto* d = std::get_if<ir::MultiKernelDefinition>(&l)) {
        d->candidates.clear();
        d->arg_index.clear();
      }
    auto r = run::autotune(p, options());
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "multi-kernel 'multi_kernel_0' has no candidates"), r.error().message);
  }
  SUBCASE("a program that does not verify") {
    ir::Program p = doubling(true);
    // Frees the graph input x, which was not donated, before its use.
    p.body.insert(p.body.begin(), ir::Free{p.find_buffer("x").value()});
    auto r = run::autotune(p, options());
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "autotune: the program does not verify"), r.error().message);
  }
  SUBCASE("a candidate that fails") {
    auto kernels = std::make_shared<run::KernelRegistry>();
    REQUIRE(kernels->add("twice_fast", run::cpu_kernel(twice_fast)));
    REQUIRE(kernels->add("twice_slow", run::cpu_kernel([](const float*, float*, std::int64_t, std::int64_t) -> wrapir::Result<void> {
                           return wrapir::Diagnostic{"out of shared memory"};
                         })));
    auto r = run::autotune(doubling(true), options(kernels));
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "multi-kernel 'multi_kernel_0': candidate 0 'twice_slow'"),
                  r.error().message);
    CHECK_MESSAGE(contains(r.error().message, "out of shared memory"), r.error().message);
    // Allowed: the other candidate wins, and the record shows the failure.
    run::AutotuneOptions o = options(kernels);
    o.allow_failed_candidates = true;
    auto allowed = run::autotune(doubling(true), o);
    REQUIRE_MESSAGE(allowed, allowed.error().message);
    REQUIRE(allowed->choices.size() == 1);
    CHECK(allowed->choices[0].record.chosen == "twice_fast");
    CHECK_FALSE(allowed->choices[0].record.candidates[0].median_ms);
    REQUIRE(allowed->choices[0].failures.size() == 1);
    CHECK(contains(allowed->choices[0].failures[0], "out of shared memory"));
    CHECK_FALSE(allowed->warnings.empty());  // the dispatcher's, not on stderr
  }
  SUBCASE("every candidate fails") {
    auto kernels = std::make_shared<run::KernelRegistry>();
    auto broken = [](std::string why) {
      return run::CpuKernelFn([why](std::span<void* const>) -> wrapir::Result<void> { return wrapir::Diagnostic{why}; });
    };
    REQUIRE(kernels->add("twice_fast", broken("fast broke")));
    REQUIRE(kernels->add("twice_slow", broken("slow broke")));
    auto r = run::autotune(doubling(true), options(kernels));
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "the measuring run failed"), r.error().message);
    CHECK_MESSAGE(contains(r.error().message, "every candidate failed"), r.error().message);
  }
  SUBCASE("a kernel nobody provides") {
    auto r = run::autotune(doubling(true), options(std::make_shared<run::KernelRegistry>()));
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "preparing the measuring run"), r.error().message);
    CHECK_MESSAGE(contains(r.error().message, "twice_slow"), r.error().message);
  }
  SUBCASE("inputs that do not match") {
    run::AutotuneOptions o = options();
    o.inputs = std::vector<run::Tensor>{};
    auto r = run::autotune(doubling(true), o);
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "autotune: inputs: 0 tensor inputs given, the program has 1"),
                  r.error().message);
    o.inputs = std::vector<run::Tensor>{make({1, 2})};
    o.symbols["s0"] = 2;
    o.scalars = std::vector<std::int64_t>{3};  // contradicts the input's size
    auto bad = run::autotune(doubling(true), o);
    REQUIRE_FALSE(bad);
    CHECK_MESSAGE(contains(bad.error().message, "the measuring run failed"), bad.error().message);
  }
  SUBCASE("synthesised inputs too large") {
    run::AutotuneOptions o = options();
    o.max_synthesised_bytes = 100;
    auto r = run::autotune(doubling(true), o);
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(contains(r.error().message, "input 'x' needs 8192 bytes, more than the 100 bytes left"),
                  r.error().message);
  }
}

TEST_CASE("autotune: size-hint multi-kernels are kept: they choose by shape at run time") {
  ir::Program p{"keyed"};
  ir::Builder b{p, cpu};
  const Expr n = b.size_symbol("s0", 16);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto k0 = b.kernel("twice_fast", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, out: *fp32, n: i64");
  auto k1 = b.kernel("twice_fast2", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, out: *fp32, n: i64");
  auto mk = b.multi_kernel({k0, k1}, {}, {ir::ShapeKey{std::vector<std::int64_t>{16}}, ir::ShapeKey{std::vector<std::int64_t>{1024}}});
  auto out = b.empty({n}, ir::DType::float32);
  b.call_multi(mk, {x, out, n});
  b.output(out);
  auto kernels = registry();
  REQUIRE(kernels->add("twice_fast2", run::cpu_kernel(twice_fast)));
  auto tuned = run::autotune(p, options(kernels));
  REQUIRE_MESSAGE(tuned, tuned.error().message);
  CHECK(tuned->choices.empty());
  REQUIRE(tuned->kept.size() == 1);
  CHECK(tuned->kept[0].multi_kernel == "multi_kernel_0");
  CHECK(contains(tuned->kept[0].reason, "size-hint multi-kernel"));
  CHECK(tuned->program == p);
}

TEST_CASE("autotune: multi-kernels in subgraphs are tuned where the run reaches them, kept where it does not") {
  ir::Program p{"branchy"};
  ir::Builder b{p, cpu};
  const Expr n = b.size_symbol("s0", 256);
  auto x = b.input("x", {n}, ir::DType::float32);
  auto flag = b.input("flag", {b.ctx().integer(1)}, ir::DType::bool_);
  auto outs = b.conditional(
      flag, {x, n},
      [](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const ir::BufferId a = boost::variant2::get<ir::BufferId>(in[0]);
        const Expr m = boost::variant2::get<Expr>(in[1]);
        auto k = sb.kernel("twice_fast", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, out: *fp32, n: i64");
        auto o = sb.empty({m}, ir::DType::float32);
        sb.call(k, {a, o, m});
        sb.output(o);
      },
      [](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const ir::BufferId a = boost::variant2::get<ir::BufferId>(in[0]);
        const Expr m = boost::variant2::get<Expr>(in[1]);
        auto slow = sb.kernel("twice_slow", ir::KernelLanguage::cpp, ir::SourceText{""},
                              "a: *fp32, out: *fp32, n: i64, reps: i64");
        auto fast = sb.kernel("twice_fast", ir::KernelLanguage::cpp, ir::SourceText{""}, "a: *fp32, out: *fp32, n: i64");
        auto mk = sb.multi_kernel({slow, fast}, {{{0, 4}}, {{0, 3}}});
        auto o = sb.empty({m}, ir::DType::float32);
        sb.call_multi(mk, {a, o, m, 100});
        sb.output(o);
      });
  b.output(outs[0]);
  REQUIRE_MESSAGE(first_finding(p).empty(), first_finding(p));
  REQUIRE(p.subgraphs.size() == 2);
  const std::string false_graph = p.subgraphs[1].name;

  // Synthesised inputs: the flag is false, so the false branch runs.
  auto tuned = run::autotune(p, options());
  REQUIRE_MESSAGE(tuned, tuned.error().message);
  REQUIRE(tuned->choices.size() == 1);
  CHECK(tuned->choices[0].graph == false_graph);
  CHECK(tuned->choices[0].record.chosen == "twice_fast");
  CHECK(tuned->choices[0].calls_rewritten == 1);
  const ir::Program& branch = tuned->program.subgraphs[1];
  CHECK(count_kind(branch, "MultiKernelCall") == 0);
  REQUIRE(branch.kernels.size() == 1);
  CHECK(branch.kernels[0].name == "twice_fast");
  CHECK_MESSAGE(first_finding(tuned->program).empty(), first_finding(tuned->program));
  run::ExecutorOptions exec;
  exec.kernels = registry();
  auto exe = run::Executor::prepare(tuned->program, exec);
  REQUIRE_MESSAGE(exe, exe.error().message);
  run::Tensor no = run::empty_cpu({1}, ir::DType::bool_).value();
  *static_cast<std::uint8_t*>(no.data()) = 0;
  auto r = exe->run(std::vector<run::Tensor>{make({1, 2, 3}), no}, std::vector<std::int64_t>{3});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read((*r)[0]) == std::vector<float>{2, 4, 6});

  // Given inputs with the flag set: the branch with the multi-kernel is not
  // taken, so it is kept (the tuned program still dispatches there).
  run::Tensor yes = run::empty_cpu({1}, ir::DType::bool_).value();
  *static_cast<std::uint8_t*>(yes.data()) = 1;
  run::AutotuneOptions o = options();
  o.inputs = std::vector<run::Tensor>{make(std::vector<float>(256, 1.0f)), yes};
  auto untaken = run::autotune(p, o);
  REQUIRE_MESSAGE(untaken, untaken.error().message);
  CHECK(untaken->choices.empty());
  REQUIRE(untaken->kept.size() == 1);
  CHECK(untaken->kept[0].graph == false_graph);
  CHECK(contains(untaken->kept[0].reason, "never called"));
  CHECK(untaken->program == p);
}
