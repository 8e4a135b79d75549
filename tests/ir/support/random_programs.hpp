#pragma once
// Seeded random programs that use every line kind, for property tests of
// the effect table (tests/ir/effects_test.cpp) and for comparing passes
// before and after a change (tests/ir/support/effects_equivalence.cpp).
// `random_program` builds a verified program; `mutate` breaks one at a
// random place (drops, duplicates, swaps or moves a line), which gives
// uses before definitions, uses after frees, double frees and the like.
//
// Only the Builder API and plain line structs are used, so that the same
// file builds against older versions of the headers.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace wrapir_test {

struct RandomProgramOptions {
  std::size_t steps = 60;
  /// Give the size symbols hints (else some sizes are unknown to stats).
  bool hints = true;
};

inline wrapir::Program random_program(std::uint32_t seed, RandomProgramOptions options = {}) {
  using namespace wrapir;
  using namespace wrapir::ir;
  Program p{"random"};
  Builder b{p};
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  expr::Context& ctx = p.ctx();
  const expr::Expr s0 = b.size_symbol("s0", options.hints ? std::optional<std::int64_t>(16) : std::nullopt);
  const expr::Expr s1 = b.size_symbol("s1", options.hints ? std::optional<std::int64_t>(24) : std::nullopt);
  const BufferId in = b.input("arg0_1", {s0}, DType::float32);
  BufferId donated = b.input("arg1_1", Layout::contiguous(ctx, {s0}, DType::float32, cuda_device(0)), true);
  const BufferId cst = b.constant("cst0", Layout::contiguous(ctx, {ctx.integer(4)}, DType::float32, cuda_device(0)));
  const KernelId touch32 = b.triton_kernel("touch_f32", "src", "ptr: *fp32");
  const KernelId touch16 = b.triton_kernel("touch_f16", "src", "ptr: *fp16");
  const KernelId touch64 = b.triton_kernel("touch_i64", "src", "ptr: *i64");
  const KernelId binary = b.triton_kernel("binary_f32", "src", "in_ptr: *fp32, out_ptr: *fp32");
  const KernelId sized = b.triton_kernel("sized_f32", "src", "ptr: *fp32, n: i64");
  const KernelId ws = b.triton_kernel("ws_kernel", "src", "ptr: *fp32, ws_ptr: *u8");
  const KernelId cand_a = b.triton_kernel("cand_a", "src", "ptr: *fp32");
  const KernelId cand_b = b.triton_kernel("cand_b", "src", "ptr: *fp32");
  const KernelId multi = b.multi_kernel({cand_a, cand_b});
  const expr::Expr u0 = b.unbacked_symbol("u0", 5);
  const expr::Expr u1 = b.unbacked_symbol("u1", 7);
  bool u0_defined = false, u1_defined = false;
  p.subgraphs.emplace_back("inner", p.context);  // for inlined EnterSubgraph scopes
  const std::vector<expr::Expr> sizes{s0, s1, ctx.integer(16), ctx.integer(32), expr::mul(s0, s1)};

  struct Live {
    BufferId id;
    std::vector<BufferId> views;
  };
  std::vector<Live> live;
  bool donated_live = true;
  int computed = 0;
  auto f32 = [&](BufferId x) { return p.buffer(x).layout.dtype == DType::float32; };
  auto use = [&](BufferId x) {
    const DType t = p.buffer(x).layout.dtype;
    b.call(t == DType::float32 ? touch32 : t == DType::float16 ? touch16 : touch64, {x});
  };
  auto live_f32 = [&]() -> std::optional<BufferId> {
    for (std::size_t tries = 0; tries < 4 && !live.empty(); ++tries) {
      const Live& l = live[pick(live.size())];
      if (f32(l.id) && p.buffer(l.id).role != BufferRole::comm) return l.id;
    }
    return std::nullopt;
  };
  int scopes = 0;  // open inlined subgraph scopes
  for (std::size_t step = 0; step < options.steps; ++step) {
    const std::size_t what = pick(100);
    if (what < 25 || live.empty()) {
      const DType dtype = pick(3) == 0 ? DType::float16 : DType::float32;
      const Device dev = cuda_device(pick(4) == 0 ? 1 : 0);
      BufferId x;
      const std::size_t how = pick(12);
      if (how == 0) {
        x = b.comm_buffer({sizes[pick(4)]}, DType::float32, pick(2) == 0 ? "0" : "1", dev);
      } else if (how == 1) {
        x = b.extern_alloc("aten.empty", {in}, Layout::contiguous(ctx, {sizes[pick(sizes.size())]}, dtype, dev),
                           {NamedArg{"alpha", Arg{std::int64_t{1}}}});
      } else {
        x = b.empty({sizes[pick(sizes.size())]}, dtype, dev);
        if (pick(6) == 0) p.buffer(x).stream = 1;
      }
      use(x);
      live.push_back({x, {}});
    } else if (what < 40) {
      Live& l = live[pick(live.size())];
      use(l.views.empty() || pick(2) == 0 ? l.id : l.views[pick(l.views.size())]);
    } else if (what < 55) {
      const std::size_t i = pick(live.size());
      b.free({live[i].id});
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what < 60) {
      Live& l = live[pick(live.size())];
      if (p.buffer(l.id).role == BufferRole::comm) continue;
      l.views.push_back(b.view(l.id, {ctx.integer(2)}, {ctx.integer(1)}, ctx.integer(1)));
    } else if (what < 63) {
      if (auto x = live_f32()) b.call(ws, {*x}, {.workspaces = {WorkspaceRequest{sizes[pick(sizes.size())]}}});
    } else if (what < 67) {
      // out = binary(x): a candidate for in-place reuse.
      const auto x = live_f32();
      if (!x) continue;
      const BufferId out = b.empty(p.buffer(*x).layout.sizes, DType::float32, p.buffer(*x).layout.device);
      b.call(binary, {*x, out});
      live.push_back({out, {}});
    } else if (what < 69) {
      if (auto x = live_f32()) b.call_multi(multi, {*x});
    } else if (what < 71) {
      if (auto x = live_f32()) b.extern_out("aten.abs.out", {in}, BufferArg{*x, std::nullopt});
    } else if (what < 74) {
      // A multi-output operator and its elements.
      const BufferId tuple = b.extern_alloc_multi("aten.topk", {in, std::int64_t{2}});
      const std::vector<BufferId> elems =
          b.unpack(tuple, {Layout::contiguous(ctx, {ctx.integer(2)}, DType::float32, cuda_device(0)),
                           Layout::contiguous(ctx, {ctx.integer(2)}, DType::int64, cuda_device(0))});
      if (!u1_defined && pick(2) == 0) {
        b.append(UnbackedSymbolDefs{tuple, {SymbolBinding{u1, {KeyStep{KeyStepKind::index, 0},
                                                                 KeyStep{KeyStepKind::size, 0}}}}});
        u1_defined = true;
      }
      if (pick(2) == 0) b.free({tuple});
      for (const BufferId e : elems) live.push_back({e, {}});
    } else if (what < 76) {
      // A one-element scalar read back as an unbacked symbol.
      const BufferId scalar = b.empty({ctx.integer(1)}, DType::int64);
      b.extern_out("aten.sum.out", {in}, BufferArg{scalar, std::nullopt});
      if (!u0_defined) {
        b.dynamic_scalar(u0, scalar);
        u0_defined = true;
      }
      b.free({scalar});
      if (u0_defined && pick(2) == 0) {
        const BufferId y = b.empty({expr::add(u0, ctx.integer(1))}, DType::float32);
        use(y);
        live.push_back({y, {}});
      }
    } else if (what < 78) {
      const auto x = live_f32();
      const auto y = live_f32();
      if (x && y && *x != *y && p.buffer(*x).layout.sizes == p.buffer(*y).layout.sizes)
        b.append(DeviceCopy{BufferArg{*x, std::nullopt}, BufferArg{*y, std::nullopt}, pick(2) == 0});
    } else if (what < 80) {
      const auto x = live_f32();
      if (!x) continue;
      const BufferId idx = b.empty({ctx.integer(2)}, DType::int64);
      if (pick(2) == 0)
        b.append(ScatterFallback{OpName{"aten.scatter_"}, *x, 0, BufferArg{idx, std::nullopt}, Arg{1.5}, {}});
      else
        b.append(IndexPutFallback{OpName{"aten.index_put_"}, *x, {BufferArg{idx, std::nullopt}, std::nullopt},
                                  BufferArg{cst, std::nullopt}, pick(2) == 0});
      b.free({idx});
    } else if (what < 82) {
      if (auto x = live_f32()) b.assert_size_stride(*x);
    } else if (what < 84) {
      const expr::Expr n = b.computed_symbol("numel_" + std::to_string(computed++), expr::mul(s0, ctx.integer(2)));
      if (auto x = live_f32()) b.call(sized, {*x, n}, {.grid = ExplicitGrid{n, ctx.integer(1), ctx.integer(1)}});
    } else if (what < 86) {
      // A Conditional on a bool scalar with two branches.
      // (A fresh operand: subgraph inputs take only plain symbols as sizes.)
      const std::optional<BufferId> x = b.empty({pick(2) == 0 ? s0 : ctx.integer(8)}, DType::float32);
      use(*x);
      live.push_back({*x, {}});
      const BufferId pred = b.empty({ctx.integer(1)}, DType::bool_);
      b.extern_out("aten.gt.out", {*x}, BufferArg{pred, std::nullopt});
      const auto branch = [&](Builder& sb, std::span<const ProgramInput>) {
        const BufferId o = sb.empty({sb.program().ctx().integer(8)}, DType::float32);
        sb.output(o);
      };
      const std::vector<BufferId> outs = b.conditional(BufferArg{pred, std::nullopt}, {*x}, branch, branch);
      b.free({pred});
      for (const BufferId o : outs) live.push_back({o, {}});
    } else if (what < 88) {
      const BufferId c = b.empty({ctx.integer(8)}, DType::float32);
      use(c);
      const auto cond = [&](Builder& sb, std::span<const ProgramInput>) {
        sb.output(sb.empty({sb.program().ctx().integer(1)}, DType::bool_));
      };
      const auto body = [&](Builder& sb, std::span<const ProgramInput>) {
        sb.output(sb.empty({sb.program().ctx().integer(8)}, DType::float32));
      };
      const std::vector<BufferId> outs = b.while_loop({c}, {}, cond, body);
      b.free({c});
      for (const BufferId o : outs) live.push_back({o, {}});
    } else if (what < 90) {
      b.enter_device(cuda_device(pick(2)));
      if (auto x = live_f32()) use(*x);
      b.exit_device();
    } else if (what < 91) {
      b.append(EnterStreamContext{1});
      b.append(GetRawStream{cuda_device(0), 1});
      b.append(ExitStreamContext{});
    } else if (what < 92) {
      b.comment("step " + std::to_string(step));
    } else if (what < 93) {
      b.append(Null{});
    } else if (what < 95 && donated_live) {
      use(donated);
      if (pick(2) == 0) {
        b.free({donated});
        donated_live = false;
      }
    } else if (what < 98 && scopes < 2) {
      b.append(EnterSubgraph{GraphId{0}});
      ++scopes;
    } else if (scopes > 0) {
      b.append(ExitSubgraph{});
      --scopes;
    }
  }
  while (scopes-- > 0) b.append(ExitSubgraph{});
  for (const Live& l : live)
    if (pick(3) == 0 && p.buffer(l.id).role != BufferRole::comm) b.output(l.id);
  if (u0_defined && pick(2) == 0) b.output(ProgramOutput{u0});
  return p;
}

/// `p` with one random change to its body: a line dropped, duplicated,
/// swapped with another or moved elsewhere. Usually not verified any more.
inline wrapir::Program mutate(wrapir::Program p, std::uint32_t seed) {
  std::mt19937 rng(seed * 2654435761u + 1);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  auto& body = p.body;
  if (body.size() < 2) return p;
  const std::size_t i = pick(body.size());
  const std::size_t j = pick(body.size());
  switch (pick(4)) {
    case 0: body.erase(body.begin() + static_cast<std::ptrdiff_t>(i)); break;
    case 1: body.insert(body.begin() + static_cast<std::ptrdiff_t>(j), body[i]); break;
    case 2: std::swap(body[i], body[j]); break;
    default: {
      wrapir::Line moved = body[i];
      body.erase(body.begin() + static_cast<std::ptrdiff_t>(i));
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(std::min(j, body.size())), std::move(moved));
    }
  }
  return p;
}

}  // namespace wrapir_test
