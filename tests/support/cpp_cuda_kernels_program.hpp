#pragma once
// A CUDA program with every kind of kernel the C++ emitter's CUDA units
// launch besides Triton's, shared by the CPU goldens
// (tests/emit/cpp_cuda_kernels_test.cpp) and the GPU run
// (tests/cuda/cpp_emit_kernels_run_test.cpp):
//
//   c = a + b          a PTX (or cubin) binary, `add_f32` of
//                      tests/cuda/kernels/test_kernels.cu, over an explicit
//                      grid of ceil(n / 128) blocks of 4 warps;
//   d = 2.5 * c        a CUDA C++ kernel: a host function that launches its
//                      own __global__ on the stream it is given;
//   h2 = 3 * h         a C++ kernel on the host, on host tensors (the host
//                      work Inductor puts in CUDA programs).
//
// Outputs: d (device), h2 (host).

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <cstdint>
#include <string>

namespace wrapir_test {

inline constexpr const char* cuda_scale_source = R"CU(#include <cuda_runtime.h>

namespace {
__global__ void scale_f32(float* y, const float* x, float alpha, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = alpha * x[i];
}
}  // namespace

extern "C" int cuda_scale(float* y, const float* x, float alpha, int n, cudaStream_t stream) {
  if (n <= 0) return 0;
  scale_f32<<<(n + 255) / 256, 256, 0, stream>>>(y, x, alpha, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)CU";

inline constexpr const char* host_triple_source = R"CPP(#include <cstdint>
extern "C" void kernel(const int64_t* in_ptr0, int64_t* out_ptr0) {
  for (int64_t i = 0; i < 8; ++i) out_ptr0[i] = 3 * in_ptr0[i];
}
)CPP";

/// The program with the add kernel in `language` (ptx or cubin) read from
/// `binary_path`, over `n` elements (a number, or a symbol when `n` is 0).
inline wrapir::ir::Program cuda_kernels_program(wrapir::ir::KernelLanguage language, const std::string& binary_path,
                                                std::int64_t n = 1000) {
  namespace ir = wrapir::ir;
  namespace ex = wrapir::expr;
  ir::Program p{"call"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const ex::Expr size = n > 0 ? ctx.integer(n) : b.size_symbol("s0", 1000);
  const auto a = b.input("arg0_1", {size}, wrapir::f32);
  const auto x = b.input("arg1_1", {size}, wrapir::f32);
  const auto h = b.input("arg2_1", {ctx.integer(8)}, wrapir::i64, wrapir::cpu_device());
  b.enter_device(wrapir::cuda_device(0));
  ir::KernelMetadata launch;
  launch.num_warps = 4;
  const auto add = b.kernel("add_kernel", language, ir::BinaryRef{binary_path, "add_f32"},
                            "out: *fp32, a: *fp32, b: *fp32, n: i32", launch);
  const auto c = b.empty({size}, wrapir::f32);
  ir::CallOptions grid;
  grid.grid = ir::ExplicitGrid{ex::ceil_div(size, ctx.integer(128)), ctx.integer(1), ctx.integer(1)};
  b.call(add, {c, a, x, size}, grid);
  const auto scale = b.kernel("cuda_scale", ir::KernelLanguage::cuda, ir::SourceText{cuda_scale_source},
                              "y: *fp32, x: *fp32, alpha: fp32, n: i32");
  const auto d = b.empty({size}, wrapir::f32);
  b.call(scale, {d, c, 2.5, size});
  b.exit_device();
  ir::KernelMetadata host;
  host.const_params = {ir::Name{"in_ptr0"}};
  const auto triple = b.kernel("cpp_fused_mul_0", ir::KernelLanguage::cpp, ir::SourceText{host_triple_source},
                               "in_ptr0: *i64, out_ptr0: *i64", host);
  const auto h2 = b.empty({ctx.integer(8)}, wrapir::i64, wrapir::cpu_device());
  ir::CallOptions on_host;
  on_host.device = wrapir::cpu_device();
  b.call(triple, {h, h2}, on_host);
  b.output(d);
  b.output(h2);
  return p;
}

}  // namespace wrapir_test
