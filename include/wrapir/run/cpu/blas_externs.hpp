#pragma once
/// \file
/// The GEMM externs of Inductor CPU programs through CBLAS (Debian's
/// OpenBLAS; link `wrapir::cpu`): `extern_kernels.mm(a, b, out=)`,
/// `extern_kernels.addmm(bias, a, b, beta=1, alpha=1, out=)`,
/// `extern_kernels.bmm(a, b, out=)`, and the allocating `aten.mm.default`,
/// `aten.addmm.default`, `aten.bmm.default`.
///
/// float32 and float64 go to `cblas_sgemm` / `cblas_dgemm` directly: an
/// operand whose layout BLAS can describe (row-major with unit column stride,
/// or its transpose — a `.t()` view becomes `CblasTrans`) is passed as it is;
/// any other (a slice with two non-unit strides, overlapping rows) is copied
/// to a contiguous matrix first. `out` is written in place when it is
/// row-major with unit column stride, else through a contiguous temporary.
/// bfloat16 and float16 are converted to float32, multiplied by
/// `cblas_sgemm` with the bias added in float32, and rounded once to the
/// output dtype (eager PyTorch also accumulates them in float32). Other
/// dtypes (integers) are refused with a diagnostic.

#include <wrapir/run/cpu/detail/elements.hpp>
#include <wrapir/run/cpu/detail/extern_args.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wrapir::run::cpu {

namespace detail {

/// How BLAS sees a `rows x cols` matrix with strides `(s0, s1)`.
struct BlasOperand {
  bool transposed = false;
  std::int64_t ld = 1;
};

[[nodiscard]] inline std::optional<BlasOperand> blas_operand(std::int64_t rows, std::int64_t cols, std::int64_t s0,
                                                             std::int64_t s1) noexcept {
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= std::max<std::int64_t>(1, cols)))
    return BlasOperand{false, rows == 1 ? std::max<std::int64_t>(1, cols) : s0};
  if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= std::max<std::int64_t>(1, rows)))
    return BlasOperand{true, cols == 1 ? std::max<std::int64_t>(1, rows) : s1};
  return std::nullopt;
}

/// BLAS takes `int` sizes.
[[nodiscard]] inline bool fits_blas_int(std::int64_t v) noexcept { return v >= 0 && v <= 0x7fffffff; }

/// One matrix of a (batched) GEMM: a base pointer and its strides.
template <class T>
struct MatrixView {
  const T* data;
  std::int64_t rows, cols, s0, s1;
};

/// `c = alpha * a @ b + beta * c` for one matrix, with `c` row-major
/// (`ldc`, unit column stride). Operands BLAS cannot describe are copied.
template <class T>
inline void gemm_one(MatrixView<T> a, MatrixView<T> b, T* c, std::int64_t ldc, T alpha, T beta) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  std::vector<T> a_copy, b_copy;
  auto operand = [](MatrixView<T>& v, std::vector<T>& copy) {
    auto op = blas_operand(v.rows, v.cols, v.s0, v.s1);
    if (op) return *op;
    copy.resize(static_cast<std::size_t>(v.rows * v.cols));
    for (std::int64_t i = 0; i < v.rows; ++i)
      for (std::int64_t j = 0; j < v.cols; ++j) copy[static_cast<std::size_t>(i * v.cols + j)] = v.data[i * v.s0 + j * v.s1];
    v.data = copy.data();
    return BlasOperand{false, std::max<std::int64_t>(1, v.cols)};
  };
  const BlasOperand oa = operand(a, a_copy);
  const BlasOperand ob = operand(b, b_copy);
  const auto ta = oa.transposed ? CblasTrans : CblasNoTrans;
  const auto tb = ob.transposed ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a.data,
                static_cast<int>(oa.ld), b.data, static_cast<int>(ob.ld), beta, c, static_cast<int>(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a.data,
                static_cast<int>(oa.ld), b.data, static_cast<int>(ob.ld), beta, c, static_cast<int>(ldc));
  }
}

/// `out[b] = alpha * a[b] @ b[b] + beta * bias` for 2-D (batch 1) or 3-D
/// operands; `bias` (may be null) broadcasts to `out`'s last two dims.
[[nodiscard]] inline Result<void> gemm(std::string_view op, const Tensor& a, const Tensor& b, const Tensor* bias,
                                       const Tensor& out, double alpha, double beta) {
  const std::size_t rank = a.dim();
  const bool batched = rank == 3;
  auto err = [&](const std::string& m) { return Diagnostic{std::string(op) + ": " + m}; };
  if (b.dim() != rank || out.dim() != rank)
    return err("operands of ranks " + std::to_string(a.dim()) + ", " + std::to_string(b.dim()) + " and out " +
               std::to_string(out.dim()) + " do not match");
  const std::int64_t batch = batched ? a.sizes[0] : 1;
  const std::size_t r = batched ? 1 : 0;
  const std::int64_t m = a.sizes[r], k = a.sizes[r + 1], n = b.sizes[r + 1];
  if (b.sizes[r] != k)
    return err("cannot multiply " + shape_text(a.sizes) + " by " + shape_text(b.sizes) + " (inner sizes differ)");
  if ((batched && (b.sizes[0] != batch || out.sizes[0] != batch)) || out.sizes[r] != m || out.sizes[r + 1] != n)
    return err("out has shape " + shape_text(out.sizes) + ", which does not fit " + shape_text(a.sizes) + " @ " +
               shape_text(b.sizes));
  if (a.dtype != b.dtype || a.dtype != out.dtype || (bias != nullptr && bias->dtype != a.dtype))
    return err("operands have different dtypes (" + std::string(ir::name(a.dtype)) + ", " +
               std::string(ir::name(b.dtype)) + ", out " + std::string(ir::name(out.dtype)) + ")");
  if (!is_float(a.dtype)) return err("dtype " + std::string(ir::name(a.dtype)) + " is not a floating type");
  if (!fits_blas_int(m) || !fits_blas_int(n) || !fits_blas_int(k)) return err("sizes exceed BLAS's int range");
  if (bias != nullptr) {
    // Broadcast the bias (rank <= 2 against [m, n], or rank 3 for bmm-like use) right-aligned.
    if (bias->dim() > rank) return err("bias of shape " + shape_text(bias->sizes) + " has too many dimensions");
    for (std::size_t i = 0; i < bias->dim(); ++i) {
      const std::int64_t have = bias->sizes[bias->dim() - 1 - i];
      const std::int64_t want = out.sizes[rank - 1 - i];
      if (have != 1 && have != want)
        return err("bias of shape " + shape_text(bias->sizes) + " does not broadcast to " + shape_text(out.sizes));
    }
  }
  if (m == 0 || n == 0 || batch == 0) return {};

  // The bias's element strides along out's (batch, row, column), 0 where it
  // broadcasts: the bias of out[bi, i, j] is one multiply-add away (this runs
  // for every element of out, so no index vectors here).
  std::int64_t bias_strides[3] = {0, 0, 0};
  if (bias != nullptr)
    for (std::size_t d = 0; d < bias->dim(); ++d)
      bias_strides[(batched ? 0 : 1) + rank - bias->dim() + d] = bias->sizes[d] == 1 ? 0 : bias->strides[d];

  auto run_typed = [&]<class T>() -> Result<void> {
    // Work in T (float or double): operands of T are used in place; 16-bit
    // floats were converted by the caller.
    const std::int64_t as0 = a.strides[r], as1 = a.strides[r + 1];
    const std::int64_t bs0 = b.strides[r], bs1 = b.strides[r + 1];
    const bool out_direct = (n == 1 || out.strides[r + 1] == 1) && (m == 1 || out.strides[r] >= n) &&
                            std::is_same_v<T, float> == (out.dtype == ir::DType::float32) &&
                            (out.dtype == ir::DType::float32 || out.dtype == ir::DType::float64);
    std::vector<T> c_temp;
    for (std::int64_t bi = 0; bi < batch; ++bi) {
      const T* ap = static_cast<const T*>(a.data()) + (batched ? bi * a.strides[0] : 0);
      const T* bp = static_cast<const T*>(b.data()) + (batched ? bi * b.strides[0] : 0);
      T* c = nullptr;
      std::int64_t ldc = n;
      if (out_direct) {
        c = static_cast<T*>(out.data()) + (batched ? bi * out.strides[0] : 0);
        ldc = m == 1 ? std::max<std::int64_t>(1, n) : out.strides[r];
      } else {
        c_temp.assign(static_cast<std::size_t>(m * n), T{});
        c = c_temp.data();
      }
      T beta_t = 0;
      if (bias != nullptr && beta != 0) {
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t at = bi * bias_strides[0] + i * bias_strides[1] + j * bias_strides[2];
            c[i * ldc + j] = static_cast<T>(beta) * static_cast<const T*>(bias->data())[at];
          }
        beta_t = 1;
      }
      if (k == 0) {
        if (beta_t == 0)
          for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = 0;
      } else {
        gemm_one<T>({ap, m, k, as0, as1}, {bp, k, n, bs0, bs1}, c, ldc, static_cast<T>(alpha), beta_t);
      }
      if (!out_direct) {
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t idx3[3] = {bi, i, j};
            store<T>(element(out, std::span<const std::int64_t>(batched ? idx3 : idx3 + 1, rank)), c[i * ldc + j]);
          }
      }
    }
    return {};
  };

  if (a.dtype == ir::DType::float32) return run_typed.operator()<float>();
  if (a.dtype == ir::DType::float64) return run_typed.operator()<double>();

  // bfloat16 / float16: float32 copies of the operands and bias, one rounding at the end.
  auto widened = [](const Tensor& t, std::vector<float>& keep) -> Result<Tensor> {
    keep = to_contiguous<float>(t);
    auto strides = contiguous_strides(t.sizes);
    if (!strides) return std::move(strides).error();
    auto storage = std::make_shared<Storage>();
    storage->data = reinterpret_cast<std::byte*>(keep.data());
    storage->nbytes = static_cast<std::int64_t>(keep.size() * sizeof(float));
    storage->device = ir::Device{ir::DeviceType::cpu, std::nullopt};
    return Tensor{std::move(storage), ir::DType::float32, t.sizes, *strides, 0};
  };
  std::vector<float> a32, b32, bias32;
  auto wa = widened(a, a32);
  auto wb = widened(b, b32);
  if (!wa || !wb) return err("cannot widen the operands to float32");
  std::optional<Tensor> wbias;
  if (bias != nullptr) {
    auto w = widened(*bias, bias32);
    if (!w) return std::move(w).error();
    wbias = *w;
  }
  auto out32 = empty_cpu(out.sizes, ir::DType::float32);
  if (!out32) return std::move(out32).error();
  if (auto g = gemm(op, *wa, *wb, wbias ? &*wbias : nullptr, *out32, alpha, beta); !g) return g;
  const std::vector<float> result = to_contiguous<float>(*out32);
  from_contiguous<float>(out, result);
  return {};
}

/// `[bias +] a @ b` for operands of `rank` dimensions (2: mm and addmm, 3:
/// bmm), into `out=` when given (ExternKernelOut, returning None), else
/// into a new contiguous tensor that is returned (the allocating aten forms).
[[nodiscard]] inline Result<Value> product(const Args& args, const Tensor* bias, const Tensor& a, const Tensor& b,
                                           double alpha, double beta, std::size_t rank) {
  if (a.dim() != rank || b.dim() != rank)
    return args.error("expects " + std::to_string(rank) + "-D operands, got " + shape_text(a.sizes) + " and " +
                      shape_text(b.sizes));
  auto given = args.out();
  if (!given) return std::move(given).error();
  Tensor out;
  if (*given != nullptr) {
    out = **given;
  } else {
    std::vector<std::int64_t> sizes(a.sizes.begin(), a.sizes.end() - 1);
    sizes.push_back(b.sizes[rank - 1]);
    auto fresh = empty_cpu(std::move(sizes), a.dtype);
    if (!fresh) return std::move(fresh).error();
    out = *std::move(fresh);
  }
  if (auto status = gemm(args.call().op, a, b, bias, out, alpha, beta); !status) return std::move(status).error();
  if (*given != nullptr) return Value{ir::None{}};
  return Value{std::move(out)};
}

/// mm and bmm: `self @ mat2` with operands of `rank` dimensions.
[[nodiscard]] inline Result<Value> plain_product(const ExternCall& call, std::size_t rank) {
  const Args args(call);
  auto read = args.read(tensor_arg(0, "self"), tensor_arg(1, "mat2"));
  if (!read) return std::move(read).error();
  const auto& [a, b] = *read;
  return product(args, nullptr, *a, *b, 1.0, 0.0, rank);
}

}  // namespace detail

/// `mm(a, b, out=)`: `a` [m, k], `b` [k, n], `out` [m, n].
[[nodiscard]] inline Result<Value> mm_extern(const ExternCall& call) { return detail::plain_product(call, 2); }

/// `addmm(bias, a, b, beta=1, alpha=1, out=)`: `beta * bias + alpha * a @ b`.
[[nodiscard]] inline Result<Value> addmm_extern(const ExternCall& call) {
  const detail::Args args(call);
  auto read = args.read(detail::tensor_arg(0, "self"), detail::tensor_arg(1, "mat1"), detail::tensor_arg(2, "mat2"),
                        detail::number_arg(3, "beta", 1.0), detail::number_arg(4, "alpha", 1.0));
  if (!read) return std::move(read).error();
  const auto& [bias, a, b, beta, alpha] = *read;
  return detail::product(args, bias, *a, *b, alpha, beta, 2);
}

/// `bmm(a, b, out=)`: `a` [batch, m, k], `b` [batch, k, n], `out` [batch, m, n].
[[nodiscard]] inline Result<Value> bmm_extern(const ExternCall& call) { return detail::plain_product(call, 3); }

}  // namespace wrapir::run::cpu
