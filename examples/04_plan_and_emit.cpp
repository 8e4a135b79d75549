// The reference pipeline end to end: build a transformer block's wrapper
// program, verify it, plan its memory three ways, and write it as a Python
// module that runs under PyTorch and Triton like Inductor's own output.
//
//   build   ir::Builder: dynamic token count s0, Triton kernels for the
//           layer norms and the pointwise epilogues, extern mm for the
//           projections, views into the fused QKV buffer
//   verify  ir::verify: nothing is planned or printed unless it is clean
//   plan    pass::plan_reuse (Inductor's greedy reuse), pass::plan_pools
//           (Inductor's pool planner), pass::plan_arena (wrapir's arena):
//           peak bytes against the max-live lower bound at the size hints
//   emit    python::to_python of the arena plan -> transformer_block.py,
//           and the arena's memory timeline -> transformer_block_arena.svg
//
// The files land in the working directory; `tools/dev.sh demo` runs this
// from build/release/examples.

#include <wrapir/emit/python.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/timeline_svg.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/pass/timeline.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

namespace ir = wrapir::ir;
namespace pass = wrapir::pass;

namespace {

constexpr char layer_norm_source[] = R"(@triton.jit
def triton_per_fused_layer_norm_0(in_ptr0, in_ptr1, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    x = tl.load(in_ptr0 + (rindex + rnumel * xindex), xmask & rmask, other=0.0)
    mean = tl.sum(x, 1)[:, None] / rnumel
    d = tl.where(xmask & rmask, x - mean, 0.0)
    var = tl.sum(d * d, 1)[:, None] / rnumel
    w = tl.load(in_ptr1 + rindex, rmask, other=0.0)
    tl.store(out_ptr0 + (rindex + rnumel * xindex), d * tl.rsqrt(var + 1e-5) * w, xmask & rmask)
)";

constexpr char attention_source[] = R"(@triton.jit
def triton_fused_attention_1(q_ptr, k_ptr, v_ptr, out_ptr0, seq, HEAD: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, HEAD)
    q = tl.load(q_ptr + row * 3 * HEAD + cols)
    acc = tl.zeros([HEAD], dtype=tl.float32)
    m = float('-inf')
    l = 0.0
    for start in range(0, seq, BLOCK):
        keys = start + tl.arange(0, BLOCK)
        mask = keys < seq
        k = tl.load(k_ptr + keys[:, None] * 3 * HEAD + cols[None, :], mask[:, None], other=0.0)
        s = tl.where(mask, tl.sum(k * q[None, :], 1) * (HEAD ** -0.5), float('-inf'))
        m_new = tl.maximum(m, tl.max(s, 0))
        p = tl.exp(s - m_new)
        v = tl.load(v_ptr + keys[:, None] * 3 * HEAD + cols[None, :], mask[:, None], other=0.0)
        acc = acc * tl.exp(m - m_new) + tl.sum(p[:, None] * v, 0)
        l = l * tl.exp(m - m_new) + tl.sum(p, 0)
        m = m_new
    tl.store(out_ptr0 + row * HEAD + cols, acc / l)
)";

constexpr char add_layer_norm_source[] = R"(@triton.jit
def triton_per_fused_add_layer_norm_2(in_out_ptr0, in_ptr0, in_ptr1, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    h = tl.load(in_out_ptr0 + (rindex + rnumel * xindex), xmask & rmask, other=0.0)
    h += tl.load(in_ptr0 + (rindex + rnumel * xindex), xmask & rmask, other=0.0)
    tl.store(in_out_ptr0 + (rindex + rnumel * xindex), h, xmask & rmask)
    mean = tl.sum(h, 1)[:, None] / rnumel
    d = tl.where(xmask & rmask, h - mean, 0.0)
    var = tl.sum(d * d, 1)[:, None] / rnumel
    w = tl.load(in_ptr1 + rindex, rmask, other=0.0)
    tl.store(out_ptr0 + (rindex + rnumel * xindex), d * tl.rsqrt(var + 1e-5) * w, xmask & rmask)
)";

constexpr char gelu_source[] = R"(@triton.jit
def triton_poi_fused_gelu_3(in_out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x = tl.load(in_out_ptr0 + xindex, xmask)
    tl.store(in_out_ptr0 + xindex, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), xmask)
)";

constexpr char add_source[] = R"(@triton.jit
def triton_poi_fused_add_4(in_out_ptr0, in_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tl.store(in_out_ptr0 + xindex, tl.load(in_out_ptr0 + xindex, xmask) + tl.load(in_ptr0 + xindex, xmask), xmask)
)";

// One pre-norm transformer block over s0 tokens of width 768 (one head of
// 768 for brevity): x + attn(ln1(x)), then + mlp(ln2(.)).
ir::Program transformer_block() {
  ir::Program p{"transformer_block"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 2048);
  const auto d = ctx.integer(768), d3 = ctx.integer(3 * 768), d4 = ctx.integer(4 * 768), one = ctx.integer(1);
  const auto f32 = wrapir::f32;

  const auto x = b.input("arg0_1", {s0, d}, f32);
  const auto ln1_w = b.input("arg1_1", {d}, f32);
  const auto w_qkv = b.input("arg2_1", {d, d3}, f32);
  const auto w_o = b.input("arg3_1", {d, d}, f32);
  const auto ln2_w = b.input("arg4_1", {d}, f32);
  const auto w_fc1 = b.input("arg5_1", {d, d4}, f32);
  const auto w_fc2 = b.input("arg6_1", {d4, d}, f32);

  const ir::KernelMetadata rows{.num_warps = 8, .grid_type = ir::GridType::grid_1d, .block = {{"XBLOCK", 1}}};
  const ir::KernelMetadata pointwise{.num_warps = 4, .grid_type = ir::GridType::grid_1d, .block = {{"XBLOCK", 1024}}};
  const auto layer_norm = b.triton_kernel("triton_per_fused_layer_norm_0", layer_norm_source,
                                          "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32, rnumel: i32",
                                          rows);
  const auto attention = b.triton_kernel("triton_fused_attention_1", attention_source,
                                         "q_ptr: *fp32, k_ptr: *fp32, v_ptr: *fp32, out_ptr0: *fp32, seq: i32", rows);
  const auto add_layer_norm =
      b.triton_kernel("triton_per_fused_add_layer_norm_2", add_layer_norm_source,
                      "in_out_ptr0: *fp32, in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32, rnumel: i32",
                      rows);
  const auto gelu = b.triton_kernel("triton_poi_fused_gelu_3", gelu_source, "in_out_ptr0: *fp32, xnumel: i32", pointwise);
  const auto add = b.triton_kernel("triton_poi_fused_add_4", add_source, "in_out_ptr0: *fp32, in_ptr0: *fp32, xnumel: i32",
                                   pointwise);
  const auto tokens_x_d = b.computed_symbol("xnumel_0", s0 * d);
  const auto tokens_x_4d = b.computed_symbol("xnumel_1", s0 * d4);

  // Attention.
  const auto normed = b.empty({s0, d}, f32);
  b.call(layer_norm, {x, ln1_w, normed, s0, d});
  const auto qkv = b.empty({s0, d3}, f32);
  b.extern_out("extern_kernels.mm", {normed, w_qkv}, ir::BufferArg{qkv});
  b.free({normed});
  const auto q = b.view(qkv, {s0, d}, {d3, one}, ctx.integer(0));
  const auto k = b.view(qkv, {s0, d}, {d3, one}, d);
  const auto v = b.view(qkv, {s0, d}, {d3, one}, ctx.integer(2 * 768));
  const auto attended = b.empty({s0, d}, f32);
  b.call(attention, {q, k, v, attended, s0});
  b.free({qkv});
  const auto hidden = b.empty({s0, d}, f32);
  b.extern_out("extern_kernels.mm", {attended, w_o}, ir::BufferArg{hidden});
  b.free({attended});

  // MLP: hidden = x + attention, normed2 = ln2(hidden).
  const auto normed2 = b.empty({s0, d}, f32);
  b.call(add_layer_norm, {hidden, x, ln2_w, normed2, s0, d});
  const auto up = b.empty({s0, d4}, f32);
  b.extern_out("extern_kernels.mm", {normed2, w_fc1}, ir::BufferArg{up});
  b.free({normed2});
  b.call(gelu, {up, tokens_x_4d});
  const auto out = b.empty({s0, d}, f32);
  b.extern_out("extern_kernels.mm", {up, w_fc2}, ir::BufferArg{out});
  b.free({up});
  b.call(add, {out, hidden, tokens_x_d}, {.free_after = {hidden}});
  b.output(out);
  return p;
}

bool write(const std::string& path, std::string_view text) {
  std::ofstream file{path, std::ios::binary};
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(file);
}

}  // namespace

int main() {
  const ir::Program program = transformer_block();
  if (const auto findings = ir::verify(program); !findings.empty()) {
    for (const auto& f : findings) std::fprintf(stderr, "%s\n", ir::to_string(f).c_str());
    return 1;
  }
  std::printf("%s: %zu lines, %zu buffers, %zu kernels (verified)\n", program.name.c_str(), program.body.size(),
              program.buffers.size(), program.kernels.size());

  auto reuse = pass::plan_reuse(program);
  auto pools = pass::plan_pools(program);
  auto arena = pass::plan_arena(program);
  for (const auto* planned : {&reuse, &pools, &arena})
    if (!*planned) {
      std::fprintf(stderr, "planning failed: %s\n", planned->error().to_string().c_str());
      return 1;
    }
  std::printf("memory at s0 = 2048 (peak / max-live lower bound):\n");
  const std::pair<const char*, const pass::PlanResult*> plans[] = {
      {"reuse (Inductor)", &reuse.value()}, {"pools (Inductor)", &pools.value()}, {"arena (wrapir)", &arena.value()}};
  for (const auto& [name, plan] : plans) {
    const pass::PlanStats& st = plan->stats;
    std::printf("  %-17s %6.1f MiB / %6.1f MiB = %.3f\n", name, static_cast<double>(st.peak_bytes) / (1 << 20),
                static_cast<double>(st.lower_bound_bytes) / (1 << 20),
                static_cast<double>(st.peak_bytes) / static_cast<double>(st.lower_bound_bytes));
    if (!ir::verify(plan->program).empty()) {
      std::fprintf(stderr, "%s: the planned program does not verify\n", name);
      return 1;
    }
  }

  auto module = wrapir::python::to_python(arena->program);
  if (!module) {
    std::fprintf(stderr, "emit failed: %s\n", module.error().to_string().c_str());
    return 1;
  }
  auto timeline = pass::planned_timeline(arena->program);
  if (!timeline) {
    std::fprintf(stderr, "timeline failed: %s\n", timeline.error().to_string().c_str());
    return 1;
  }
  const std::string svg = wrapir::io::timeline_svg(timeline->trace, timeline->placement, timeline->roles,
                                                   {.title = "transformer_block, arena plan, s0 = 2048"});
  if (!write("transformer_block.py", module.value()) || !write("transformer_block_arena.svg", svg)) {
    std::fprintf(stderr, "cannot write the output files\n");
    return 1;
  }
  std::printf("wrote transformer_block.py (%zu bytes) and transformer_block_arena.svg\n", module->size());
  return 0;
}
