/// \file
/// Builds the programs of the GPU check of the Python emitter and writes each
/// as JSON: `make_programs DIR` writes `DIR/<name>.json` (Triton kernels as
/// Inductor generates them, launched by their `triton_heuristics` launcher
/// on a Grid1D grid) and `DIR/<name>.explicit.json` (the same kernels as
/// Inductor defines user-written ones: one fixed config, launched on an
/// explicit grid).
///
/// The kernels are real Triton, written the way Inductor writes them (program
/// ids, aranges, masks, loads and stores, `XBLOCK: tl.constexpr`), so that
/// `tests/gpu_python/run_gpu_check.py` can run the emitted modules on a GPU
/// and compare them with eager PyTorch. A program with verifier findings is
/// never written: the tool prints the findings and exits with 1.
///
/// The committed fixtures in `tests/gpu_python/programs/` are this tool's
/// output; the ctest test `gpu_python.fixtures` (`make_programs --check DIR`)
/// fails on any difference, so edit this file, not the JSON.

#include <wrapir/expr/ops.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using wrapir::ir::Arg;
using wrapir::ir::BufferArg;
using wrapir::ir::BufferId;
using wrapir::ir::Builder;
using wrapir::ir::CallOptions;
using wrapir::ir::ExplicitGrid;
using wrapir::ir::GetRawStream;
using wrapir::ir::KernelId;
using wrapir::ir::KernelMetadata;
using wrapir::ir::KeyStep;
using wrapir::ir::KeyStepKind;
using wrapir::ir::Layout;
using wrapir::ir::NamedArg;
using wrapir::ir::Program;
using wrapir::expr::Expr;

/// How a program's Triton kernels are written and launched.
enum class Form {
  /// Inductor's form: the source carries `@triton_heuristics.<kind>(...)`
  /// with `triton_meta` and `inductor_meta`; the module defines it with
  /// `async_compile.triton` and launches it with `.run(*args, stream=...)`,
  /// the launcher choosing the block sizes and the grid (Grid1D).
  launcher,
  /// Inductor's form of a user-defined kernel:
  /// `@triton_heuristics.user_autotune(configs=[one config], ...)` with a
  /// FixedGrid; calls give an ExplicitGrid, which the module passes as the
  /// launcher's extra arguments `_grid_0, _grid_1, _grid_2`. The metadata
  /// repeats the config (constants XBLOCK [, R0_BLOCK], num_warps).
  explicit_grid,
};

/// Inductor's kernel kinds, by the `triton_heuristics` decorator they use.
enum class Heuristic { pointwise, reduction, persistent_reduction };

struct Param {
  std::string name;
  /// Triton's type: `*fp32`, `*i64`, `i32`, `i64`.
  std::string type;
  /// Known to be a multiple of 16 (for pointers: 16-byte aligned), which
  /// `triton_meta['configs']` lets Triton assume. Every pointer here is the
  /// start of a fresh allocation or of a graph input: aligned.
  bool divisible_by_16 = false;
};

Param pointer(std::string name, std::string dtype = "fp32") {
  return Param{std::move(name), "*" + dtype, true};
}
Param integer(std::string name, std::string type, bool divisible_by_16 = false) {
  return Param{std::move(name), std::move(type), divisible_by_16};
}

/// One Triton kernel: its runtime parameters (constexpr block sizes are not
/// parameters), its body, what Inductor's metadata says about it and the
/// block sizes of the explicit-grid launch.
struct TritonKernel {
  std::string name;
  Heuristic heuristic = Heuristic::pointwise;
  std::vector<Param> params;
  /// The function body, each line indented by four spaces.
  std::string body;
  /// Inductor's size hints: the numels rounded up to powers of two.
  std::int64_t x_hint = 1;
  std::int64_t r_hint = 0;
  std::vector<std::string> mutated_args{};
  int num_load = 1;
  int num_store = 1;
  int num_reduction = 0;
  /// Explicit-grid launch: XBLOCK, the looped reduction's R0_BLOCK, warps.
  std::int64_t xblock = 1024;
  std::optional<std::int64_t> r0_block{};
  std::int64_t num_warps = 4;

  [[nodiscard]] bool looped_reduction() const { return heuristic == Heuristic::reduction; }
};

// H100 and H200 both report these properties (sm_90, 132 SMs); the GPU check
// runs on one of them. Inductor writes the compiling device's properties.
constexpr const char* device_properties =
    "DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, "
    "regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, "
    "warp_size=32)";

std::string python_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", '" : "'") + items[i] + "'";
  return out + "]";
}

std::string def_line(const TritonKernel& k) {
  std::string line = "def " + k.name + "(";
  for (const Param& p : k.params) line += p.name + ", ";
  line += "XBLOCK : tl.constexpr";
  if (k.looped_reduction()) line += ", R0_BLOCK : tl.constexpr";
  return line + "):\n";
}

// The `triton_meta` of either form: the signature (constexprs included), the
// device and the divisibility hints.
std::string triton_meta(const TritonKernel& k) {
  std::string signature;
  std::string divisibility;
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    signature += "'" + p.name + "': '" + p.type + "', ";
    if (p.divisible_by_16) {
      if (!divisibility.empty()) divisibility += ", ";
      divisibility += "(" + std::to_string(i) + ",): [['tt.divisibility', 16]]";
    }
  }
  signature += "'XBLOCK': 'constexpr'";
  if (k.looped_reduction()) signature += ", 'R0_BLOCK': 'constexpr'";
  return "{'signature': {" + signature + "}, 'device': " + device_properties +
         ", 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, "
         "'disable_ftz': False, 'configs': [{" +
         divisibility + "}]}";
}

// The compile and autotuning switches Inductor writes into every
// `inductor_meta`.
constexpr const char* inductor_switches =
    "'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', "
    "'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, "
    "'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, "
    "'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, "
    "'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, "
    "'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, "
    "'are_deterministic_algorithms_enabled': False";

// Form::launcher: Inductor's generated-kernel decorator; the heuristic picks
// the block sizes and Grid1D the grid.
std::string heuristic_decorator(const TritonKernel& k) {
  const bool reduction = k.heuristic != Heuristic::pointwise;
  std::string d = "@triton_heuristics.";
  d += k.heuristic == Heuristic::pointwise ? "pointwise"
       : k.heuristic == Heuristic::reduction ? "reduction"
                                              : "persistent_reduction";
  d += "(\n    size_hints={'x': " + std::to_string(k.x_hint);
  if (reduction) d += ", 'r0_': " + std::to_string(k.r_hint);
  d += "},\n";
  if (reduction) d += "    reduction_hint=ReductionHint.INNER,\n";
  d += "    filename=__file__,\n";
  d += "    triton_meta=" + triton_meta(k) + ",\n";
  d += "    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': '" + k.name +
       "', 'mutated_arg_names': " + python_list(k.mutated_args) + ", 'optimize_mem': True, 'no_x_dim': " +
       (k.heuristic == Heuristic::persistent_reduction ? "None" : "False") +
       ", 'atomic_add_found': False, 'num_load': " + std::to_string(k.num_load) +
       ", 'num_store': " + std::to_string(k.num_store) + ", 'num_reduction': " + std::to_string(k.num_reduction) +
       ", " + inductor_switches + ", 'tiling_scores': {'x': " +
       std::to_string(reduction ? 0 : k.x_hint * 4 * (k.num_load + k.num_store)) +
       (reduction ? ", 'r0_': " + std::to_string(k.x_hint * k.r_hint * 4) : std::string()) + "}}";
  d += k.heuristic == Heuristic::pointwise ? ",\n    min_elem_per_thread=0\n)\n" : "\n)\n";
  return d;
}

// Form::explicit_grid: Inductor's decorator of a user-defined Triton kernel
// launched on one grid (reference §4.2): a single config binds the block
// sizes, and FixedGrid makes the grid three extra launcher arguments
// `_grid_0, _grid_1, _grid_2` that the call passes after the kernel's own.
std::string fixed_grid_decorator(const TritonKernel& k) {
  std::string config = "{'XBLOCK': " + std::to_string(k.xblock);
  if (k.r0_block) config += ", 'R0_BLOCK': " + std::to_string(*k.r0_block);
  config += ", 'num_warps': " + std::to_string(k.num_warps) + ", 'num_stages': 1}";
  return "@triton_heuristics.user_autotune(\n"
         "    configs=[" +
         config +
         "],\n"
         "    inductor_meta={'grid_type': 'FixedGrid', 'fixed_grid': ['_grid_0', '_grid_1', '_grid_2'], "
         "'extra_launcher_args': ['_grid_0', '_grid_1', '_grid_2'], 'kernel_name': '" +
         k.name + "', 'mutated_arg_names': " + python_list(k.mutated_args) + ", 'optimize_mem': True, " +
         inductor_switches +
         "},\n"
         "    triton_meta=" +
         triton_meta(k) +
         ",\n"
         "    filename=__file__,\n"
         "    custom_kernel=True,\n"
         ")\n";
}

std::string source(const TritonKernel& k, Form form) {
  return std::string("import triton\n"
                     "import triton.language as tl\n"
                     "\n"
                     "from torch._inductor.runtime import triton_helpers, triton_heuristics\n"
                     "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n"
                     "from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, "
                     "DeviceProperties\n"
                     "triton_helpers.set_driver_to_gpu()\n"
                     "\n") +
         (form == Form::launcher ? heuristic_decorator(k) : fixed_grid_decorator(k)) + "@triton.jit\n" +
         def_line(k) + k.body;
}

std::string signature(const TritonKernel& k) {
  std::string s;
  for (const Param& p : k.params) s += (s.empty() ? "" : ", ") + p.name + ": " + p.type;
  return s;
}

KernelId define(Builder& b, Form form, const TritonKernel& k) {
  KernelMetadata meta;
  if (form == Form::launcher) {
    meta.grid_type = wrapir::ir::GridType::grid_1d;
  } else {
    meta.grid_type = wrapir::ir::GridType::fixed;
    meta.constants.push_back(NamedArg{"XBLOCK", k.xblock});
    if (k.r0_block) meta.constants.push_back(NamedArg{"R0_BLOCK", *k.r0_block});
    meta.num_warps = k.num_warps;
  }
  return b.triton_kernel(k.name, source(k, form), signature(k), std::move(meta));
}

/// Launches `k` over `xnumel` rows (pointwise: elements) of XBLOCK each.
void launch(Builder& b, Form form, KernelId id, const TritonKernel& k, std::vector<Arg> args, Expr xnumel,
            std::vector<BufferId> free_after = {}) {
  CallOptions options;
  options.free_after = std::move(free_after);
  if (form == Form::explicit_grid) {
    const Expr one = b.ctx().integer(1);
    options.grid = ExplicitGrid{wrapir::expr::ceil_div(xnumel, k.xblock), one, one};
  }
  b.call(id, std::move(args), std::move(options));
}

Expr integer(Builder& b, std::int64_t v) { return b.ctx().integer(v); }

const wrapir::ir::Device gpu = wrapir::cuda_device(0);

/// Opens the device guard and fetches stream 0, as Inductor starts every
/// graph and subgraph body that launches kernels.
void begin_gpu_scope(Builder& b) {
  b.enter_device(gpu);
  b.append(GetRawStream{gpu, 0});
}

// ---------------------------------------------------------------------------
// The programs
// ---------------------------------------------------------------------------

// out = relu(a + b) over 10000 elements (not a multiple of the block: the
// last block is masked).
void pointwise(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_poi_fused_add_relu_0",
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_ptr0"), pointer("in_ptr1"), pointer("out_ptr0"), integer("xnumel", "i32", true)},
      .body = R"(    xnumel = 10000
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = tl.load(in_ptr1 + (x0), xmask)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0.0, tl.float32)
    tmp4 = tl.maximum(tmp3, tmp2)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
)",
      .x_hint = 16384,
      .num_load = 2,
  };
  const Expr n = integer(b, 10000);
  const BufferId a = b.input("arg0_1", {n}, wrapir::f32);
  const BufferId c = b.input("arg1_1", {n}, wrapir::f32);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  const BufferId out = b.empty({n}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]");
  launch(b, form, id, k, {a, c, out, n}, n);
  b.exit_device();
  b.output(out);
}

// out = x.sum(1) for x of shape [s0, s1], the sizes passed as ints before the
// tensor (Inductor's dynamic-shape calling convention); a looped reduction
// walks each row in R0_BLOCK steps.
void row_sum(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_red_fused_sum_0",
      .heuristic = Heuristic::reduction,
      .params = {pointer("in_ptr0"), pointer("out_ptr0"), integer("ks0", "i64"), integer("xnumel", "i32"),
                 integer("r0_numel", "i32")},
      .body = R"(    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    _tmp2 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp0 = tl.load(in_ptr0 + (r0_1 + ks0*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
        tmp3 = _tmp2 + tmp1
        _tmp2 = tl.where(r0_mask & xmask, tmp3, _tmp2)
    tmp2 = tl.sum(_tmp2, 1)[:, None]
    tl.store(out_ptr0 + (x0), tmp2, xmask)
)",
      .x_hint = 64,
      .r_hint = 1024,
      .num_reduction = 1,
      .xblock = 8,
      .r0_block = 128,
  };
  const Expr s0 = b.size_symbol("s0", 64);
  const Expr s1 = b.size_symbol("s1", 1000);
  const BufferId x = b.input("arg2_1", {s0, s1}, wrapir::f32);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  const BufferId out = b.empty({s0}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [sum_1], Original ATen: [aten.sum]");
  launch(b, form, id, k, {x, out, s1, s0, s1}, s0);
  b.exit_device();
  b.output(out);
}

// out = softmax(x, -1) for x of shape [128, 1000]: a persistent reduction
// (each program holds whole rows: R0_BLOCK is fixed in the kernel).
void softmax(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_per_fused__softmax_0",
      .heuristic = Heuristic::persistent_reduction,
      .params = {pointer("in_ptr0"), pointer("out_ptr2"), integer("xnumel", "i32", true), integer("r0_numel", "i32")},
      .body = R"(    xnumel = 128
    r0_numel = 1000
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 1000*x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(r0_mask & xmask, tmp1, float("-inf"))
    tmp4 = tl.max(tmp3, 1)[:, None]
    tmp5 = tmp0 - tmp4
    tmp6 = tl_math.exp(tmp5)
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
    tmp9 = tl.where(r0_mask & xmask, tmp7, 0)
    tmp10 = tl.sum(tmp9, 1)[:, None]
    tmp11 = (tmp6 / tmp10)
    tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp11, r0_mask & xmask)
)",
      .x_hint = 128,
      .r_hint = 1024,
      .num_reduction = 2,
      .xblock = 1,
  };
  const Expr rows = integer(b, 128);
  const Expr cols = integer(b, 1000);
  const BufferId x = b.input("arg0_1", {rows, cols}, wrapir::f32);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  const BufferId out = b.empty({rows, cols}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [softmax], Original ATen: [aten._softmax]");
  launch(b, form, id, k, {x, out, rows, cols}, rows);
  b.exit_device();
  b.output(out);
}

// out = gelu(linear(x, w, bias)): extern_kernels.mm into a fresh buffer, with
// the weight [256, 128] passed as its transposed view, then a Triton epilogue
// adding the bias and applying the exact (erf) gelu in place.
void mm_epilogue(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_poi_fused_addmm_gelu_0",
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_out_ptr0"), pointer("in_ptr0"), integer("xnumel", "i32", true)},
      .body = R"(    xnumel = 16384
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = (xindex % 256)
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + (x2), xmask)
    tmp2 = tmp0 + tmp1
    tmp3 = 0.5
    tmp4 = tmp2 * tmp3
    tmp5 = 0.7071067811865476
    tmp6 = tmp2 * tmp5
    tmp7 = libdevice.erf(tmp6)
    tmp8 = 1.0
    tmp9 = tmp7 + tmp8
    tmp10 = tmp4 * tmp9
    tl.store(in_out_ptr0 + (x2), tmp10, xmask)
)",
      .x_hint = 16384,
      .mutated_args = {"in_out_ptr0"},
      .num_load = 2,
  };
  const Expr m = integer(b, 64);
  const Expr kdim = integer(b, 128);
  const Expr n = integer(b, 256);
  const BufferId x = b.input("arg0_1", {m, kdim}, wrapir::f32);
  const BufferId w = b.input("arg1_1", {n, kdim}, wrapir::f32);
  const BufferId bias = b.input("arg2_1", {n}, wrapir::f32);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  const BufferId mm = b.empty({m, n}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [linear], Original ATen: [aten.t, aten.addmm]");
  const BufferArg w_transposed{w, wrapir::ir::View{{kdim, n}, {integer(b, 1), kdim}, integer(b, 0)}};
  b.extern_out("extern_kernels.mm", {x, w_transposed}, BufferArg{mm, std::nullopt});
  b.comment("Topologically Sorted Source Nodes: [linear, gelu], Original ATen: [aten.addmm, aten.gelu]");
  launch(b, form, id, k, {mm, bias, integer(b, 16384)}, integer(b, 16384));
  b.exit_device();
  b.output(mm);
}

// values, indices = aten.topk(x, 4) through a fallback kernel returning a
// tuple (unpacked by MultiOutput lines), then out = values * 2 + indices;
// returns out and the indices.
void topk(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_poi_fused__to_copy_add_mul_0",
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_ptr0"), pointer("in_ptr1", "i64"), pointer("out_ptr0"), integer("xnumel", "i32", true)},
      .body = R"(    xnumel = 64
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp3 = tl.load(in_ptr1 + (x0), xmask)
    tmp1 = 2.0
    tmp2 = tmp0 * tmp1
    tmp4 = tmp3.to(tl.float32)
    tmp5 = tmp2 + tmp4
    tl.store(out_ptr0 + (x0), tmp5, xmask)
)",
      .x_hint = 64,
      .num_load = 2,
  };
  const Expr rows = integer(b, 16);
  const Expr four = integer(b, 4);
  const BufferId x = b.input("arg0_1", {rows, integer(b, 100)}, wrapir::f32);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  b.comment("Topologically Sorted Source Nodes: [topk], Original ATen: [aten.topk]");
  const BufferId result = b.extern_alloc_multi("aten.topk.default", {x, 4});
  auto layout = [&](wrapir::DType t) { return Layout::contiguous(b.ctx(), {rows, four}, t, gpu); };
  const std::vector<BufferId> parts = b.unpack(result, {layout(wrapir::f32), layout(wrapir::i64)});
  b.free({result});
  const BufferId out = b.empty({rows, four}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [mul, add], Original ATen: [aten.mul, aten._to_copy, aten.add]");
  launch(b, form, id, k, {parts[0], parts[1], out, integer(b, 64)}, integer(b, 64), {parts[0]});
  b.exit_device();
  b.output(out);
  b.output(parts[1]);
}

// y = x * 2 + 1 for x of shape [32, 16]; returns views of y's storage made by
// Reinterpret lines — y[:, 2:10] (offset 2) and y.t() — and y itself.
void view_outputs(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_poi_fused_add_mul_0",
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_ptr0"), pointer("out_ptr0"), integer("xnumel", "i32", true)},
      .body = R"(    xnumel = 512
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = 2.0
    tmp2 = tmp0 * tmp1
    tmp3 = 1.0
    tmp4 = tmp2 + tmp3
    tl.store(out_ptr0 + (x0), tmp4, xmask)
)",
      .x_hint = 512,
      .xblock = 128,
  };
  const Expr rows = integer(b, 32);
  const Expr cols = integer(b, 16);
  const BufferId x = b.input("arg0_1", {rows, cols}, wrapir::f32);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  const BufferId y = b.empty({rows, cols}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [mul, y], Original ATen: [aten.mul, aten.add]");
  launch(b, form, id, k, {x, y, integer(b, 512)}, integer(b, 512));
  const BufferId sliced = b.view(y, {rows, integer(b, 8)}, {cols, integer(b, 1)}, integer(b, 2));
  const BufferId transposed = b.view(y, {cols, rows}, {integer(b, 1), cols}, integer(b, 0));
  b.exit_device();
  b.output(sliced);
  b.output(transposed);
  b.output(y);
}

// A pointwise kernel over 128 elements computing tmp3 from tmp0 with `math`
// (the kernels of `conditional`).
TritonKernel unary_kernel(std::string name, std::string math) {
  return TritonKernel{
      .name = std::move(name),
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_ptr0"), pointer("out_ptr0"), integer("xnumel", "i32", true)},
      .body = "    xnumel = 128\n"
              "    xoffset = tl.program_id(0) * XBLOCK\n"
              "    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n"
              "    xmask = xindex < xnumel\n"
              "    x0 = xindex\n"
              "    tmp0 = tl.load(in_ptr0 + (x0), xmask)\n" +
              math + "    tl.store(out_ptr0 + (x0), tmp3, xmask)\n",
      .x_hint = 128,
      .xblock = 64,
  };
}

// out = (sin(x) * 2 if pred else cos(x) + 1) + 1 with pred a 0-d bool tensor:
// a Conditional whose branches are subgraphs launching their own kernels.
void conditional(Builder& b, Form form) {
  const TritonKernel on_true = unary_kernel("triton_poi_fused_mul_sin_0",
                                            "    tmp1 = tl_math.sin(tmp0)\n"
                                            "    tmp2 = 2.0\n"
                                            "    tmp3 = tmp1 * tmp2\n");
  const TritonKernel on_false = unary_kernel("triton_poi_fused_add_cos_1",
                                             "    tmp1 = tl_math.cos(tmp0)\n"
                                             "    tmp2 = 1.0\n"
                                             "    tmp3 = tmp1 + tmp2\n");
  const TritonKernel after = unary_kernel("triton_poi_fused_add_2",
                                          "    tmp1 = 1.0\n"
                                          "    tmp3 = tmp0 + tmp1\n");
  const Expr numel = integer(b, 128);
  const BufferId pred = b.input("arg0_1", std::vector<Expr>{}, wrapir::DType::bool_);
  const BufferId x = b.input("arg1_1", {integer(b, 8), integer(b, 16)}, wrapir::f32);
  auto branch = [&](const TritonKernel& k) {
    return [&k, form, numel](Builder& sb, std::span<const wrapir::ir::ProgramInput> inputs) {
      const BufferId in = boost::variant2::get<BufferId>(inputs[0]);
      const KernelId id = define(sb, form, k);
      begin_gpu_scope(sb);
      const BufferId out = sb.empty({sb.ctx().integer(8), sb.ctx().integer(16)}, wrapir::f32);
      sb.comment("Unsorted Source Nodes: [cond], Original ATen: [torch.ops.higher_order.cond]");
      launch(sb, form, id, k, {in, out, numel}, numel);
      sb.exit_device();
      sb.output(out);
    };
  };
  const KernelId after_id = define(b, form, after);
  begin_gpu_scope(b);
  const std::vector<BufferId> chosen = b.conditional(pred, {x}, branch(on_true), branch(on_false));
  const BufferId out = b.empty({integer(b, 8), integer(b, 16)}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [add], Original ATen: [aten.add]");
  launch(b, form, after_id, after, {chosen[0], out, numel}, numel, {chosen[0]});
  b.exit_device();
  b.output(out);
}

// out = x * 2 if s0 > 16 else x - 1 for x of shape [s0], the predicate a
// symbolic comparison; each branch launches a kernel over s0 elements, s0
// read from the branch's own input.
void conditional_symbolic(Builder& b, Form form) {
  auto kernel = [](std::string name, std::string math) {
    return TritonKernel{
        .name = std::move(name),
        .heuristic = Heuristic::pointwise,
        .params = {pointer("in_ptr0"), pointer("out_ptr0"), integer("xnumel", "i32")},
        .body = "    xoffset = tl.program_id(0) * XBLOCK\n"
                "    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n"
                "    xmask = xindex < xnumel\n"
                "    x0 = xindex\n"
                "    tmp0 = tl.load(in_ptr0 + (x0), xmask)\n" +
                math + "    tl.store(out_ptr0 + (x0), tmp2, xmask)\n",
        .x_hint = 128,
        .xblock = 64,
    };
  };
  const TritonKernel on_true = kernel("triton_poi_fused_mul_0", "    tmp1 = 2.0\n    tmp2 = tmp0 * tmp1\n");
  const TritonKernel on_false = kernel("triton_poi_fused_sub_1", "    tmp1 = 1.0\n    tmp2 = tmp0 - tmp1\n");
  const Expr s0 = b.ctx().symbol("s0");
  const BufferId x = b.input("arg0_1", {s0}, wrapir::f32);
  b.shape_symbol("s0", x, KeyStep{KeyStepKind::size, 0, ""}, 100);
  auto branch = [&](const TritonKernel& k) {
    return [&k, form, s0](Builder& sb, std::span<const wrapir::ir::ProgramInput> inputs) {
      const BufferId in = boost::variant2::get<BufferId>(inputs[0]);
      const KernelId id = define(sb, form, k);
      begin_gpu_scope(sb);
      const BufferId out = sb.empty({s0}, wrapir::f32);
      launch(sb, form, id, k, {in, out, s0}, s0);
      sb.exit_device();
      sb.output(out);
    };
  };
  const std::vector<BufferId> chosen =
      b.conditional(wrapir::expr::gt(s0, integer(b, 16)), {x}, branch(on_true), branch(on_false));
  b.output(chosen[0]);
}

// out = x * 2 + y for x of shape [s0, s1] and y of shape [s1], both sizes read
// from x's shape; the kernel's numel s0*s1 is a SymbolicCallArg and the
// broadcast index uses ks0 = s1.
void dynamic_shapes(Builder& b, Form form) {
  const TritonKernel k{
      .name = "triton_poi_fused_add_mul_0",
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_ptr0"), pointer("in_ptr1"), pointer("out_ptr0"), integer("ks0", "i64"),
                 integer("xnumel", "i32")},
      .body = R"(    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x2 = xindex
    x0 = (xindex % ks0)
    tmp0 = tl.load(in_ptr0 + (x2), xmask)
    tmp3 = tl.load(in_ptr1 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = 2.0
    tmp2 = tmp0 * tmp1
    tmp4 = tmp2 + tmp3
    tl.store(out_ptr0 + (x2), tmp4, xmask)
)",
      .x_hint = 4096,
      .num_load = 2,
      .xblock = 256,
  };
  const Expr s0 = b.ctx().symbol("s0");
  const Expr s1 = b.ctx().symbol("s1");
  const BufferId x = b.input("arg0_1", {s0, s1}, wrapir::f32);
  const BufferId y = b.input("arg1_1", {s1}, wrapir::f32);
  b.shape_symbol("s0", x, KeyStep{KeyStepKind::size, 0, ""}, 32);
  b.shape_symbol("s1", x, KeyStep{KeyStepKind::size, 1, ""}, 100);
  const KernelId id = define(b, form, k);
  begin_gpu_scope(b);
  const BufferId out = b.empty({s0, s1}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [mul, add], Original ATen: [aten.mul, aten.add]");
  const Expr xnumel = b.computed_symbol(k.name + "_xnumel", s0 * s1);
  launch(b, form, id, k, {x, y, out, s1, xnumel}, xnumel);
  b.exit_device();
  b.output(out);
}

// A kernel over the single element of 0-d tensors: `math` computes tmp4
// from tmp1 (and tmp3, the element of a second input, when `second_input`);
// the dtypes are Triton's names (`i64`, `i1`).
TritonKernel scalar_kernel(std::string name, bool second_input, std::string input_dtype, std::string output_dtype,
                           std::string math) {
  std::vector<Param> params{pointer("in_ptr0", input_dtype)};
  if (second_input) params.push_back(pointer("in_ptr1", input_dtype));
  params.push_back(pointer("out_ptr0", output_dtype));
  params.push_back(integer("xnumel", "i32"));
  return TritonKernel{
      .name = std::move(name),
      .heuristic = Heuristic::pointwise,
      .params = std::move(params),
      .body = std::string("    xnumel = 1\n"
                          "    xoffset = tl.program_id(0) * XBLOCK\n"
                          "    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n"
                          "    xmask = xindex < xnumel\n"
                          "    tmp0 = tl.load(in_ptr0 + (0))\n"
                          "    tmp1 = tl.broadcast_to(tmp0, [XBLOCK])\n") +
              (second_input ? "    tmp2 = tl.load(in_ptr1 + (0))\n"
                              "    tmp3 = tl.broadcast_to(tmp2, [XBLOCK])\n"
                            : "") +
              math + "    tl.store(out_ptr0 + (tl.full([XBLOCK], 0, tl.int32)), tmp4, xmask)\n",
      .x_hint = 1,
      .num_load = second_input ? 2 : 1,
      .xblock = 1,
      .num_warps = 1,
  };
}

// i, x = while_loop(lambda i, x, limit: i < limit,
//                   lambda i, x, limit: (i + 1, x * 0.5 + 1), (i0, x0), (limit,))
// with i0 and limit 0-d int64 tensors and x0 of shape [64]: the condition and
// the body are subgraphs launching kernels; the loop may run zero times.
void while_loop(Builder& b, Form form) {
  const TritonKernel less = scalar_kernel("triton_poi_fused_lt_0", true, "i64", "i1", "    tmp4 = tmp1 < tmp3\n");
  const TritonKernel increment =
      scalar_kernel("triton_poi_fused_add_1", false, "i64", "i64",
                    "    tmp3 = tl.full([1], 1, tl.int64)\n    tmp4 = tmp1 + tmp3\n");
  const TritonKernel step{
      .name = "triton_poi_fused_add_mul_2",
      .heuristic = Heuristic::pointwise,
      .params = {pointer("in_ptr0"), pointer("out_ptr0"), integer("xnumel", "i32", true)},
      .body = R"(    xnumel = 64
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp1 = 0.5
    tmp2 = tmp0 * tmp1
    tmp3 = 1.0
    tmp4 = tmp2 + tmp3
    tl.store(out_ptr0 + (x0), tmp4, xmask)
)",
      .x_hint = 64,
      .xblock = 64,
  };
  const std::vector<Expr> scalar{};
  const BufferId i0 = b.input("arg0_1", scalar, wrapir::i64);
  const BufferId x0 = b.input("arg1_1", {integer(b, 64)}, wrapir::f32);
  const BufferId limit = b.input("arg2_1", scalar, wrapir::i64);
  const Expr one = integer(b, 1);
  auto condition = [&](Builder& sb, std::span<const wrapir::ir::ProgramInput> inputs) {
    const BufferId i = boost::variant2::get<BufferId>(inputs[0]);
    const BufferId n = boost::variant2::get<BufferId>(inputs[2]);
    const KernelId id = define(sb, form, less);
    begin_gpu_scope(sb);
    const BufferId result = sb.empty(scalar, wrapir::DType::bool_);
    sb.comment("Topologically Sorted Source Nodes: [lt], Original ATen: [aten.lt]");
    launch(sb, form, id, less, {i, n, result, one}, one);
    sb.exit_device();
    sb.output(result);
  };
  auto body = [&](Builder& sb, std::span<const wrapir::ir::ProgramInput> inputs) {
    const BufferId i = boost::variant2::get<BufferId>(inputs[0]);
    const BufferId x = boost::variant2::get<BufferId>(inputs[1]);
    const KernelId increment_id = define(sb, form, increment);
    const KernelId step_id = define(sb, form, step);
    begin_gpu_scope(sb);
    const BufferId next_i = sb.empty(scalar, wrapir::i64);
    sb.comment("Topologically Sorted Source Nodes: [add], Original ATen: [aten.add]");
    launch(sb, form, increment_id, increment, {i, next_i, one}, one);
    const BufferId next_x = sb.empty({sb.ctx().integer(64)}, wrapir::f32);
    sb.comment("Topologically Sorted Source Nodes: [mul, add_1], Original ATen: [aten.mul, aten.add]");
    launch(sb, form, step_id, step, {x, next_x, sb.ctx().integer(64)}, sb.ctx().integer(64));
    sb.exit_device();
    sb.output(next_i);
    sb.output(next_x);
  };
  const std::vector<BufferId> results = b.while_loop({i0, x0}, {limit}, condition, body);
  b.output(results[0]);
  b.output(results[1]);
}

struct ProgramSpec {
  const char* name;
  void (*build)(Builder&, Form);
};

constexpr ProgramSpec programs[] = {
    {"pointwise", pointwise},
    {"row_sum", row_sum},
    {"softmax", softmax},
    {"mm_epilogue", mm_epilogue},
    {"topk", topk},
    {"view_outputs", view_outputs},
    {"conditional", conditional},
    {"conditional_symbolic", conditional_symbolic},
    {"dynamic_shapes", dynamic_shapes},
    {"while_loop", while_loop},
};

/// The fixtures: file name and JSON text of every program in both forms.
/// Returns nullopt (after printing why) if a program fails to build or verify.
std::optional<std::map<std::string, std::string>> build_all() {
  std::map<std::string, std::string> files;
  bool ok = true;
  for (const ProgramSpec& spec : programs) {
    for (Form form : {Form::launcher, Form::explicit_grid}) {
      const bool launcher = form == Form::launcher;
      const std::string name = std::string(spec.name) + (launcher ? "" : "_explicit");
      Program p{name};
      try {
        Builder b{p, gpu};
        spec.build(b, form);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: building failed: %s\n", name.c_str(), e.what());
        ok = false;
        continue;
      }
      const auto findings = wrapir::verify(p);
      for (const auto& f : findings) std::fprintf(stderr, "%s: %s\n", name.c_str(), to_string(f).c_str());
      if (!findings.empty()) {
        ok = false;
        continue;
      }
      files[std::string(spec.name) + (launcher ? ".json" : ".explicit.json")] =
          wrapir::io::to_json(p, {.pretty = true}) + "\n";
    }
  }
  if (!ok) return std::nullopt;
  return files;
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// 1-based line of the first byte where `a` and `b` differ.
std::size_t first_difference_line(const std::string& a, const std::string& b) {
  const auto end = std::mismatch(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(std::min(a.size(), b.size())),
                                 b.begin())
                       .first;
  return 1 + static_cast<std::size_t>(std::count(a.begin(), end, '\n'));
}

// --check: the committed fixtures in `dir` must be exactly what this tool
// writes: no file missing, differing or left over.
int check(const std::filesystem::path& dir, const std::map<std::string, std::string>& files) {
  int problems = 0;
  for (const auto& [name, text] : files) {
    const auto committed = read_file(dir / name);
    if (!committed) {
      std::fprintf(stderr, "%s: missing\n", (dir / name).string().c_str());
      ++problems;
    } else if (*committed != text) {
      std::fprintf(stderr, "%s: stale: differs from make_programs' output from line %zu\n",
                   (dir / name).string().c_str(), first_difference_line(*committed, text));
      ++problems;
    }
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && !files.contains(name)) {
      std::fprintf(stderr, "%s: not written by make_programs (remove it)\n", entry.path().string().c_str());
      ++problems;
    }
  }
  if (ec) {
    std::fprintf(stderr, "cannot list %s: %s\n", dir.string().c_str(), ec.message().c_str());
    ++problems;
  }
  if (problems != 0) {
    std::fprintf(stderr, "regenerate the fixtures: make_programs %s\n", dir.string().c_str());
    return 1;
  }
  std::printf("%zu fixtures in %s are up to date\n", files.size(), dir.string().c_str());
  return 0;
}

int write(const std::filesystem::path& dir, const std::map<std::string, std::string>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "cannot create %s: %s\n", dir.string().c_str(), ec.message().c_str());
    return 1;
  }
  for (const auto& [name, text] : files) {
    std::ofstream out(dir / name, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir / name).string().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  const bool checking = args.size() == 2 && args[0] == "--check";
  if (!(args.size() == 1 && !args[0].starts_with("-")) && !checking) {
    std::fprintf(stderr,
                 "usage: make_programs DIR          writes DIR/<program>.json and DIR/<program>.explicit.json\n"
                 "       make_programs --check DIR  fails unless DIR holds exactly those files, byte for byte\n");
    return 2;
  }
  const auto files = build_all();
  if (!files) return 1;
  const std::filesystem::path dir{args.back()};
  return checking ? check(dir, *files) : write(dir, *files);
}
