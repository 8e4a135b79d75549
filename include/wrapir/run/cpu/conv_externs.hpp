#pragma once
/// \file
/// Convolution for Inductor CPU programs: `extern_kernels.convolution(x, w,
/// bias, stride=, padding=, dilation=, transposed=, output_padding=,
/// groups=)` and `aten.convolution.default` (the same arguments,
/// positional), allocating the result contiguous, or channels-last when the
/// input or weight is channels-last (as eager PyTorch does).
///
/// 1-D and 2-D convolutions (1-D as 2-D with a height of one), any stride,
/// padding, dilation and groups, by im2col and one GEMM per batch element and
/// group through CBLAS (float32, float64; bfloat16 and float16 through
/// float32 as the GEMM externs do). Transposed and 3-D convolutions are
/// refused with a diagnostic.

#include <wrapir/run/cpu/blas_externs.hpp>
#include <wrapir/run/cpu/detail/elements.hpp>
#include <wrapir/run/cpu/detail/extern_args.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace wrapir::run::cpu {

namespace detail {

/// A 4-D tensor laid out NHWC but not also NCHW-contiguous (torch's
/// preference in ambiguous cases such as one channel).
[[nodiscard]] inline bool is_channels_last(const Tensor& t) noexcept {
  if (t.dim() != 4 || t.is_contiguous()) return false;
  const std::int64_t c = t.sizes[1], h = t.sizes[2], w = t.sizes[3];
  const std::int64_t expected[4] = {h * w * c, 1, w * c, c};
  for (std::size_t i = 0; i < 4; ++i)
    if (t.sizes[i] != 1 && t.strides[i] != expected[i]) return false;
  return true;
}

}  // namespace detail

/// See the file comment.
[[nodiscard]] inline Result<Value> convolution_extern(const ExternCall& call) {
  const detail::Args args(call);
  auto tensors = args.read(detail::tensor_arg(0, "input"), detail::tensor_arg(1, "weight"),
                           detail::optional_tensor_arg(2, "bias"));
  if (!tensors) return std::move(tensors).error();
  const auto& [x, w, bias] = *tensors;
  const Tensor& input = *x;
  const Tensor& weight = *w;
  const std::size_t rank = input.dim();
  if (rank != 3 && rank != 4)
    return args.error("supports 1-D and 2-D convolutions (input of rank 3 or 4), got input " +
                      detail::shape_text(input.sizes));
  if (weight.dim() != rank)
    return args.error("weight " + detail::shape_text(weight.sizes) + " does not match input " +
                      detail::shape_text(input.sizes));
  const std::size_t spatial = rank - 2;
  auto options = args.read(detail::integers_arg(3, "stride", spatial, 1), detail::integers_arg(4, "padding", spatial, 0),
                           detail::integers_arg(5, "dilation", spatial, 1), detail::bool_arg(6, "transposed", false),
                           detail::integer_arg(8, "groups", 1));
  if (!options) return std::move(options).error();
  const auto& [stride, padding, dilation, transposed, groups] = *options;
  if (transposed) return args.error("transposed convolutions are not supported");
  if (input.dtype != weight.dtype || (bias != nullptr && bias->dtype != input.dtype))
    return args.error("input, weight and bias have different dtypes");
  if (!detail::is_float(input.dtype)) return args.error("dtype " + std::string(ir::name(input.dtype)) + " is not floating");

  // Everything as 2-D: [N, C, H, W], kernel [O, C/g, KH, KW].
  const std::int64_t n = input.sizes[0], c = input.sizes[1];
  const std::int64_t h = spatial == 2 ? input.sizes[2] : 1, wd = input.sizes[rank - 1];
  const std::int64_t o = weight.sizes[0], cg = weight.sizes[1];
  const std::int64_t kh = spatial == 2 ? weight.sizes[2] : 1, kw = weight.sizes[rank - 1];
  const std::int64_t sh = spatial == 2 ? stride[0] : 1, sw = stride.back();
  const std::int64_t ph = spatial == 2 ? padding[0] : 0, pw = padding.back();
  const std::int64_t dh = spatial == 2 ? dilation[0] : 1, dw = dilation.back();
  const std::int64_t g = groups;
  if (g < 1 || c % g != 0 || o % g != 0 || cg != c / g)
    return args.error("groups=" + std::to_string(g) + " does not fit input channels " + std::to_string(c) +
                      " and weight " + detail::shape_text(weight.sizes));
  constexpr std::int64_t limit = std::int64_t{1} << 30;  // keeps every product below in 64 bits
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0 || sh > limit || sw > limit || dh > limit ||
      dw > limit || ph > limit || pw > limit || kh > limit || kw > limit || h > limit || wd > limit)
    return args.error("stride and dilation must be positive, padding non-negative, and all below 2^30");
  if (bias != nullptr && (bias->dim() != 1 || bias->sizes[0] != o))
    return args.error("bias " + detail::shape_text(bias->sizes) + " is not [" + std::to_string(o) + "]");
  const std::int64_t oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  const std::int64_t ow = (wd + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  if (oh <= 0 || ow <= 0 || h + 2 * ph < dh * (kh - 1) + 1 || wd + 2 * pw < dw * (kw - 1) + 1)
    return args.error("the kernel is larger than the padded input");
  std::vector<std::int64_t> out_sizes = spatial == 2 ? std::vector<std::int64_t>{n, o, oh, ow}
                                                     : std::vector<std::int64_t>{n, o, ow};
  // As eager PyTorch: a channels-last input or weight gives a channels-last
  // result (Inductor's programs assert that layout for the result).
  const bool channels_last = spatial == 2 && (detail::is_channels_last(input) || detail::is_channels_last(weight));
  auto out = channels_last ? empty_strided_cpu(out_sizes, {o * oh * ow, 1, ow * o, o}, input.dtype)
                           : empty_cpu(out_sizes, input.dtype);
  if (!out) return std::move(out).error();
  if (out->numel() == 0) return Value{*out};

  // Work in float32 or float64, contiguous.
  auto compute = [&, bias = bias]<class T>() -> Result<void> {  // (clang 14 captures no structured binding)
    const std::vector<T> xs = detail::to_contiguous<T>(input);
    const std::vector<T> ws = detail::to_contiguous<T>(weight);
    std::vector<T> bs;
    if (bias != nullptr) bs = detail::to_contiguous<T>(*bias);
    std::vector<T> result(static_cast<std::size_t>(out->numel()));
    const std::int64_t patch = cg * kh * kw;  // rows of the column matrix
    const std::int64_t pixels = oh * ow;
    const std::int64_t og = o / g;
    std::vector<T> columns(static_cast<std::size_t>(patch * pixels));
    for (std::int64_t b = 0; b < n; ++b) {
      for (std::int64_t gi = 0; gi < g; ++gi) {
        // im2col: columns[(ci, ki, kj), (y, x)].
        for (std::int64_t ci = 0; ci < cg; ++ci)
          for (std::int64_t ki = 0; ki < kh; ++ki)
            for (std::int64_t kj = 0; kj < kw; ++kj) {
              const std::int64_t row = (ci * kh + ki) * kw + kj;
              const T* plane = xs.data() + ((b * c) + gi * cg + ci) * h * wd;
              for (std::int64_t y = 0; y < oh; ++y) {
                const std::int64_t iy = y * sh - ph + ki * dh;
                for (std::int64_t xx = 0; xx < ow; ++xx) {
                  const std::int64_t ix = xx * sw - pw + kj * dw;
                  columns[static_cast<std::size_t>(row * pixels + y * ow + xx)] =
                      (iy >= 0 && iy < h && ix >= 0 && ix < wd) ? plane[iy * wd + ix] : T{0};
                }
              }
            }
        T* dst = result.data() + (b * o + gi * og) * pixels;
        if (bias != nullptr) {
          for (std::int64_t oc = 0; oc < og; ++oc)
            for (std::int64_t p = 0; p < pixels; ++p) dst[oc * pixels + p] = bs[static_cast<std::size_t>(gi * og + oc)];
        }
        detail::gemm_one<T>({ws.data() + gi * og * patch, og, patch, patch, 1}, {columns.data(), patch, pixels, pixels, 1},
                            dst, pixels, T{1}, bias != nullptr ? T{1} : T{0});
      }
    }
    detail::from_contiguous<T>(*out, result);
    return {};
  };
  if (!detail::fits_blas_int(o) || !detail::fits_blas_int(cg * kh * kw) || !detail::fits_blas_int(oh * ow))
    return args.error("sizes exceed BLAS's int range");
  const Result<void> status =
      input.dtype == ir::DType::float64 ? compute.operator()<double>() : compute.operator()<float>();
  if (!status) return status.error();
  return Value{*std::move(out)};
}

}  // namespace wrapir::run::cpu
