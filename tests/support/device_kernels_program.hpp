#pragma once
// The program of tests/cuda/device_kernels_test.cpp (GPU), shared with its
// host emulation in tests/cuda/host/device_kernels_host_test.cpp, which runs
// it on host memory tagged cuda:0 with the kernels written as loops over the
// grid and block each launch gets, so that the program, its grids and its
// inputs are checked where there is no GPU:
//
//   c = a + b            PTX `add_f32` (tests/cuda/kernels/test_kernels.cu)
//                        over an explicit grid of ceil(s0 / 128) blocks of
//                        4 warps;
//   c = 0.5 b + c        cubin `axpy_f32` over a typed grid (Grid1D,
//                        XBLOCK 256) with blocks of 8 warps;
//   d = 2.5 c            CUDA C++ `cuda_scale` (`cuda_scale_source`, shared
//                        with support/cpp_cuda_kernels_program.hpp): a host
//                        function launching its own __global__ on the stream
//                        it is given;
//   e[i] = 3 ((i + 1) mod 16384)
//                        cubin `shared_rotate` with 64 KB of dynamic shared
//                        memory (the > 48 KB opt-in), one block of 8 warps.
//
// Inputs a, x (float32 [s0]) and s0; outputs d = 2.5 (a + 1.5 x) and e.

#include "support/cpp_cuda_kernels_program.hpp"

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <string>

namespace wrapir_test {

inline constexpr int rotate_words = 16384;

/// The program, its PTX kernel from `ptx_file` and cubin kernels from
/// `cubin_file` (paths relative to the kernel directory).
inline wrapir::ir::Program device_kernels_program(const std::string& ptx_file, const std::string& cubin_file) {
  namespace ir = wrapir::ir;
  namespace ex = wrapir::expr;
  ir::Program p{"three_languages"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const ex::Expr n = b.size_symbol("s0", 1000);
  const auto a = b.input("a", {n}, wrapir::f32);
  const auto x = b.input("x", {n}, wrapir::f32);
  ir::KernelMetadata four_warps;
  four_warps.num_warps = 4;
  const auto add = b.kernel("add_ptx", ir::KernelLanguage::ptx, ir::BinaryRef{ptx_file, "add_f32"},
                            "out: *fp32, a: *fp32, b: *fp32, n: i32", four_warps);
  const auto c = b.empty({n}, wrapir::f32);
  ir::CallOptions explicit_grid;
  explicit_grid.grid = ir::ExplicitGrid{ex::ceil_div(n, ctx.integer(128)), ctx.integer(1), ctx.integer(1)};
  b.call(add, {c, a, x, n}, explicit_grid);
  ir::KernelMetadata eight_warps;
  eight_warps.num_warps = 8;
  const auto axpy = b.kernel("axpy_cubin", ir::KernelLanguage::cubin, ir::BinaryRef{cubin_file, "axpy_f32"},
                             "y: *fp32, x: *fp32, alpha: fp32, n: i64", eight_warps);
  ir::CallOptions typed_grid;
  typed_grid.grid = ir::TypedGrid{ir::GridType::grid_1d, {ir::NamedExpr{ir::Name{"xnumel"}, n}},
                                  {ir::BlockSize{ir::Name{"XBLOCK"}, 256}}};
  b.call(axpy, {c, x, 0.5, n}, typed_grid);
  const auto scale = b.kernel("cuda_scale", ir::KernelLanguage::cuda, ir::SourceText{cuda_scale_source},
                              "y: *fp32, x: *fp32, alpha: fp32, n: i32");
  const auto d = b.empty({n}, wrapir::f32);
  b.call(scale, {d, c, 2.5, n});
  ir::KernelMetadata big_shared;
  big_shared.num_warps = 8;
  big_shared.shared_memory_bytes = rotate_words * 4;
  const auto rotate = b.kernel("rotate_cubin", ir::KernelLanguage::cubin, ir::BinaryRef{cubin_file, "shared_rotate"},
                               "out: *i32, words: i32", big_shared);
  const auto e = b.empty({ctx.integer(rotate_words)}, wrapir::i32);
  ir::CallOptions one_block;
  one_block.grid = ir::ExplicitGrid{ctx.integer(1), ctx.integer(1), ctx.integer(1)};
  b.call(rotate, {e, rotate_words}, one_block);
  b.output(d);
  b.output(e);
  return p;
}

}  // namespace wrapir_test
