// Running a wrapper program directly, with no Python: build a small MLP
// layer's program, register its kernels as plain C++ functions, plan its
// memory into one arena, and run it on the CPU executor — then check the
// result against a loop written here.
//
//   build     ir::Builder: dynamic batch size s0, an extern `mm` for the
//             projection, a fused bias + ReLU kernel, a transposed view
//             returned as a second output
//   register  run::KernelRegistry (typed C++ callables, checked against
//             the program's signatures) and run::ExternRegistry (the mm)
//   plan      pass::plan_arena: every intermediate carved from one arena,
//             allocated once per call
//   run       run::Executor::prepare once, run for two batch sizes; the
//             batch size is read from the input's shape

#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/run/executor.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

namespace ir = wrapir::ir;
namespace run = wrapir::run;

namespace {

constexpr std::int64_t in_features = 4, out_features = 3;

ir::Program build_program() {
  ir::Program p{"mlp_layer"};
  ir::Builder b{p, wrapir::cpu_device()};
  auto& c = b.ctx();
  const auto k = c.integer(in_features), n = c.integer(out_features);
  // The batch size is read from x's first dimension when the program runs.
  const auto s0 = c.symbol("s0");
  auto x = b.input("x", ir::Layout::contiguous(c, {s0, k}, ir::DType::float32, wrapir::cpu_device()));
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input_shape, x, {ir::KeyStep{ir::KeyStepKind::size, 0}}, 8});
  auto w = b.input("w", {k, n}, ir::DType::float32);
  auto bias = b.input("bias", {n}, ir::DType::float32);

  auto h = b.empty({s0, n}, ir::DType::float32);
  b.extern_out("extern_kernels.mm", {x, w}, ir::BufferArg{h, std::nullopt});
  auto fused = b.kernel("cpp_fused_bias_relu_0", ir::KernelLanguage::cpp, ir::SourceText{"// registered in C++"},
                        "in_out_ptr0: *fp32, in_ptr0: *fp32, xnumel: i64, cols: i64");
  const auto numel = wrapir::expr::mul(s0, n);
  b.call(fused, {h, bias, numel, out_features});
  // hᵀ as a view of h's storage: returned, it aliases the first output.
  auto ht = b.view(h, {n, s0}, {c.integer(1), n}, c.integer(0));
  b.output(h);
  b.output(ht);
  return p;
}

std::shared_ptr<run::KernelRegistry> kernels() {
  auto r = std::make_shared<run::KernelRegistry>();
  (void)r->add("cpp_fused_bias_relu_0",
               run::cpu_kernel([](float* h, const float* bias, std::int64_t numel, std::int64_t cols) {
                 for (std::int64_t i = 0; i < numel; ++i) h[i] = std::fmax(h[i] + bias[i % cols], 0.0f);
               }));
  return r;
}

std::shared_ptr<run::ExternRegistry> externs() {
  auto r = std::make_shared<run::ExternRegistry>();
  (void)r->add("extern_kernels.mm", [](const run::ExternCall& call) -> wrapir::Result<run::Value> {
    const run::Tensor* a = call.arg(0, "self")->get_if<run::Tensor>();
    const run::Tensor* b = call.arg(1, "mat2")->get_if<run::Tensor>();
    const run::Tensor* out = call.kwarg("out")->get_if<run::Tensor>();
    if (!a || !b || !out) return wrapir::Diagnostic{"mm takes two tensors and out="};
    const std::int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
    auto at = [](const run::Tensor& t, std::int64_t i, std::int64_t j) {
      return static_cast<float*>(t.data())[i * t.strides[0] + j * t.strides[1]];
    };
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (std::int64_t q = 0; q < k; ++q) acc += at(*a, i, q) * at(*b, q, j);
        static_cast<float*>(out->data())[i * out->strides[0] + j * out->strides[1]] = acc;
      }
    return run::Value{};
  });
  return r;
}

run::Tensor filled(std::vector<std::int64_t> sizes, float start, float step) {
  run::Tensor t = run::empty_cpu(std::move(sizes), ir::DType::float32).value();
  for (std::int64_t i = 0; i < t.numel(); ++i) static_cast<float*>(t.data())[i] = start + step * static_cast<float>(i);
  return t;
}

}  // namespace

int main() {
  const ir::Program program = build_program();
  if (const auto findings = ir::verify(program); !findings.empty()) {
    for (const auto& f : findings) std::printf("finding: %s\n", ir::to_string(f).c_str());
    return 1;
  }
  auto planned = wrapir::pass::plan_arena(program);
  if (!planned) {
    std::printf("planning failed: %s\n", planned.error().message.c_str());
    return 1;
  }
  auto executor = run::Executor::prepare(planned->program, {.kernels = kernels(), .externs = externs()});
  if (!executor) {
    std::printf("prepare failed: %s\n", executor.error().message.c_str());
    return 1;
  }
  const run::Tensor w = filled({in_features, out_features}, -0.5f, 0.125f);
  const run::Tensor bias = filled({out_features}, 0.25f, -0.25f);
  for (const std::int64_t batch : {2, 5}) {
    const std::vector<run::Tensor> inputs{filled({batch, in_features}, -1.0f, 0.25f), w, bias};
    auto outputs = executor->run(inputs);
    if (!outputs) {
      std::printf("run failed: %s\n", outputs.error().message.c_str());
      return 1;
    }
    const run::Tensor& h = *(*outputs)[0].get_if<run::Tensor>();
    const run::Tensor& ht = *(*outputs)[1].get_if<run::Tensor>();
    int wrong = 0;
    for (std::int64_t i = 0; i < batch; ++i)
      for (std::int64_t j = 0; j < out_features; ++j) {
        float expected = static_cast<const float*>(bias.data())[j];
        for (std::int64_t q = 0; q < in_features; ++q)
          expected += static_cast<const float*>(inputs[0].data())[i * in_features + q] *
                      static_cast<const float*>(w.data())[q * out_features + j];
        expected = std::fmax(expected, 0.0f);
        const float got = static_cast<const float*>(h.data())[i * out_features + j];
        const float got_t = static_cast<const float*>(ht.data())[j * ht.strides[0] + i * ht.strides[1]];
        if (std::fabs(got - expected) > 1e-5f || got_t != got) ++wrong;
      }
    std::printf("batch %lld: h is %lldx%lld, its transpose shares its storage: %s, %s\n",
                static_cast<long long>(batch), static_cast<long long>(h.sizes[0]), static_cast<long long>(h.sizes[1]),
                ht.storage == h.storage ? "yes" : "no", wrong == 0 ? "matches the reference" : "WRONG");
    if (wrong != 0 || ht.storage != h.storage) return 1;
  }
  std::printf("ran %zu lines (arena-planned) on the CPU executor, no Python\n", planned->program.body.size());
  return 0;
}
