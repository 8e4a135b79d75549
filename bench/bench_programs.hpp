// The 100k-line programs the IR and emitter benchmarks share, so that
// their lines/s figures are about the same programs.
#pragma once

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace wrapir::bench {

namespace ir = wrapir::ir;

inline constexpr std::size_t target_lines = 100'000;

// Two programs of `lines` lines with dynamic shapes and 64 kernel
// definitions. `mixed` is like an Inductor wrapper for a long graph: blocks
// of "allocate [s0, s1], launch on two inputs (or an extern mm), sometimes
// a view and a second launch, free the buffer that died". The plain one is
// only Allocate / KernelCall / FreeIfNotReused triples on 1-D buffers, the
// smallest lines there are, so the two bracket what lines/s means.
inline ir::Program make_program(std::size_t lines, bool mixed = true) {
  ir::Program p{"bench"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 4096);
  const auto s1 = b.size_symbol("s1", 1024);
  const auto numel = b.computed_symbol("xnumel", s0 * s1);
  const auto c4 = ctx.integer(4);
  ir::BufferId prev = b.input("arg0_1", {s0, s1}, wrapir::f32);
  const ir::BufferId weight = b.input("arg1_1", {s1, s1}, wrapir::f32);
  std::vector<ir::KernelId> kernels;
  for (int k = 0; k < 64; ++k)
    kernels.push_back(b.triton_kernel(
        "triton_poi_fused_" + std::to_string(k),
        "@triton.jit\ndef kernel(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n    pass\n",
        "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32",
        ir::KernelMetadata{.num_warps = 4, .grid_type = ir::GridType::grid_1d, .block = {{"XBLOCK", 1024}}}));
  std::size_t i = 0;
  while (p.body.size() + 4 < lines) {
    if (!mixed) {
      const ir::BufferId out = b.empty({numel}, wrapir::f32);
      b.call(kernels[i % kernels.size()], {prev, weight, out, numel});
      if (i > 0) b.free({prev});
      prev = out;
      ++i;
      continue;
    }
    const ir::BufferId out = b.empty({s0, s1}, wrapir::f32);
    if (i % 16 == 15) {
      b.extern_out("extern_kernels.mm", {prev, weight}, ir::BufferArg{out});
    } else {
      b.call(kernels[i % kernels.size()], {prev, weight, out, numel});
    }
    if (i % 8 == 7) {
      const ir::BufferId v = b.view(out, {s0, s1 - c4}, {s1, ctx.integer(1)}, c4);
      b.call(kernels[(i + 1) % kernels.size()], {v, weight, out, numel});
    }
    if (i > 0) b.free({prev});
    prev = out;
    ++i;
  }
  b.output(prev);
  return p;
}

}  // namespace wrapir::bench
