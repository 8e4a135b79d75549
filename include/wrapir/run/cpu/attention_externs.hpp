#pragma once
/// \file
/// Scaled dot-product attention as Inductor CPU programs call it:
/// `aten._scaled_dot_product_flash_attention_for_cpu(query, key, value,
/// dropout_p=0, is_causal=False, *, attn_mask=None, scale=None)` →
/// (output, logsumexp), with eager PyTorch 2.11's semantics:
///
/// * `query` [B, Hq, L, E], `key` [B, Hk, S, E], `value` [B, Hv, S, E]: 4-D,
///   one floating dtype, the same batch, head size and key length; `Hq` a
///   multiple of `Hk` and `Hv` (grouped-query attention: query head `h` reads
///   key head `h / (Hq / Hk)`).
/// * `scores = scale * query @ keyᵀ` (`scale` defaults to `1/sqrt(E)`), plus
///   `attn_mask` (2-D or 4-D, broadcast to [B, Hq, L, S]; the query's dtype or
///   float32 — torch refuses bool masks here), with keys after the query's
///   position removed when `is_causal` (aligned at the top left: key `j` is
///   seen by query `i` when `j <= i`); `output = softmax(scores) @ value`;
///   `logsumexp` [B, Hq, L] is `log(sum(exp(scores)))` per query.
/// * A query that sees no key (every score -inf, or no keys at all) gets a
///   zero output row and a logsumexp of 0, as torch's CPU kernel writes.
/// * `dropout_p` must be 0 (torch refuses other values on the CPU too).
/// * Layouts, as eager: `output` is dense with its dimensions in the order of
///   the query's strides (the query's own strides when it is dense; a
///   `transpose(1, 2)` of a [B, L, H, E] tensor gives a transposed result);
///   `logsumexp` is [B, L, Hq] in memory, seen as [B, Hq, L] (strides
///   `(L*Hq, 1, Hq)`), float32 for 16-bit queries, else the query's dtype.
///
/// Both matrix products go through CBLAS (`gemm_one`, blas_externs.hpp), a
/// block of query rows at a time so the scores never take more than
/// `attention_row_block × S` elements. float64 is computed in float64,
/// everything else in float32 (16-bit inputs widened once, the output rounded
/// once per element).

#include <wrapir/run/cpu/blas_externs.hpp>
#include <wrapir/run/cpu/detail/elements.hpp>
#include <wrapir/run/cpu/detail/extern_args.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace wrapir::run::cpu {

/// Query rows whose scores are held at once.
inline constexpr std::int64_t attention_row_block = 64;

namespace detail {

/// Strides of a dense tensor of `sizes` whose dimensions are nested as
/// `like`'s strides nest them: `like`'s own strides when it is dense and
/// non-overlapping; else smaller strides inner, equal strides with the
/// smaller size inner, and a zero (broadcast) stride keeping its row-major
/// place. This is the layout eager PyTorch gives attention's output.
[[nodiscard]] inline std::vector<std::int64_t> dense_strides_like(std::span<const std::int64_t> sizes,
                                                                  std::span<const std::int64_t> like) {
  const std::size_t n = sizes.size();
  std::vector<std::size_t> inner_first(n);  // dimensions, innermost first
  for (std::size_t i = 0; i < n; ++i) inner_first[i] = n - 1 - i;
  auto goes_inner = [&](std::size_t a, std::size_t b) {
    if (like[a] == 0 || like[b] == 0) return false;
    return like[a] < like[b] || (like[a] == like[b] && sizes[a] < sizes[b]);
  };
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = i; j > 0 && goes_inner(inner_first[j], inner_first[j - 1]); --j)
      std::swap(inner_first[j], inner_first[j - 1]);
  // Dense and non-overlapping in that order: keep the strides as they are
  // (a size-1 dimension's stride is free, and eager keeps it).
  bool dense = true;
  std::int64_t expected = 1;
  for (const std::size_t d : inner_first) {
    if (sizes[d] == 1) continue;
    if (like[d] != expected) dense = false;
    expected *= sizes[d];
  }
  if (dense) return {like.begin(), like.end()};
  std::vector<std::int64_t> strides(n, 1);
  std::int64_t running = 1;
  for (const std::size_t d : inner_first) {
    strides[d] = running;
    running *= std::max<std::int64_t>(1, sizes[d]);
  }
  return strides;
}

/// A 4-D operand as `T` elements: the tensor's own memory when it already
/// holds `T`, else a contiguous widened copy.
template <class T>
struct Operand4 {
  std::vector<T> copy;
  const T* data = nullptr;
  std::int64_t strides[4] = {};

  explicit Operand4(const Tensor& t) {
    if (t.dtype == (std::is_same_v<T, double> ? ir::DType::float64 : ir::DType::float32)) {
      data = static_cast<const T*>(t.data());
      std::copy(t.strides.begin(), t.strides.end(), strides);
      return;
    }
    copy = to_contiguous<T>(t);
    data = copy.data();
    strides[3] = 1;
    for (std::size_t d = 3; d > 0; --d) strides[d - 1] = strides[d] * t.sizes[d];
  }
  [[nodiscard]] const T* at(std::int64_t b, std::int64_t h) const { return data + b * strides[0] + h * strides[1]; }
};

struct AttentionShape {
  std::int64_t batch, q_heads, k_heads, v_heads, q_len, kv_len, head;
};

/// Computes into contiguous `out` [B, Hq, L, E] and `lse` [B, Hq, L].
template <class T>
inline void attention(const AttentionShape& s, const Tensor& query, const Tensor& key, const Tensor& value,
                      const Tensor* mask, bool causal, T scale, std::vector<T>& out, std::vector<T>& lse) {
  const Operand4<T> q(query), k(key), v(value);
  // The mask, contiguous, addressed with zero strides where it broadcasts.
  std::vector<T> mask_values;
  std::int64_t ms[4] = {0, 0, 0, 0};
  if (mask != nullptr) {
    mask_values = to_contiguous<T>(*mask);
    const std::size_t r = mask->dim();
    std::int64_t running = 1;
    for (std::size_t i = r; i-- > 0;) {
      ms[4 - r + i] = mask->sizes[i] == 1 ? 0 : running;
      running *= mask->sizes[i];
    }
  }
  constexpr T minus_inf = -std::numeric_limits<T>::infinity();
  const std::int64_t L = s.q_len, S = s.kv_len, E = s.head;
  std::vector<T> scores(static_cast<std::size_t>(std::min(L, attention_row_block) * S));
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t h = 0; h < s.q_heads; ++h) {
      const T* qp = q.at(b, h);
      const T* kp = k.at(b, h / (s.q_heads / s.k_heads));
      const T* vp = v.at(b, h / (s.q_heads / s.v_heads));
      T* out_bh = out.data() + (b * s.q_heads + h) * L * E;
      T* lse_bh = lse.data() + (b * s.q_heads + h) * L;
      for (std::int64_t i0 = 0; i0 < L; i0 += attention_row_block) {
        const std::int64_t rows = std::min(attention_row_block, L - i0);
        // (BLAS refuses empty products' leading dimensions: they are done here.
        // A head size of 0 makes every score scale * 0: NaN for the default
        // scale 1/sqrt(0), as in torch.)
        if (E == 0 || S == 0) {
          std::fill(scores.begin(), scores.end(), scale * T{0});
        } else {
          // scores = scale * q[i0 : i0+rows] @ kᵀ  (rows × S)
          gemm_one<T>({qp + i0 * q.strides[2], rows, E, q.strides[2], q.strides[3]},
                      {kp, E, S, k.strides[3], k.strides[2]}, scores.data(), S, scale, T{0});
        }
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t i = i0 + r;
          T* row = scores.data() + r * S;
          if (mask != nullptr) {
            const T* mrow = mask_values.data() + b * ms[0] + h * ms[1] + i * ms[2];
            for (std::int64_t j = 0; j < S; ++j) row[j] += mrow[j * ms[3]];
          }
          if (causal)
            for (std::int64_t j = std::max<std::int64_t>(0, i + 1); j < S; ++j) row[j] = minus_inf;
          T max = minus_inf;
          bool nan = false;
          for (std::int64_t j = 0; j < S; ++j) {
            nan = nan || std::isnan(row[j]);
            max = std::max(max, row[j]);
          }
          if (nan) {  // NaN anywhere in the row makes the whole row NaN, as in eager
            std::fill(row, row + S, std::numeric_limits<T>::quiet_NaN());
            lse_bh[i] = std::numeric_limits<T>::quiet_NaN();
            continue;
          }
          if (max == minus_inf) {  // sees no key: zeros, logsumexp 0
            std::fill(row, row + S, T{0});
            lse_bh[i] = T{0};
            continue;
          }
          T sum = 0;
          for (std::int64_t j = 0; j < S; ++j) sum += row[j] = std::exp(row[j] - max);
          for (std::int64_t j = 0; j < S; ++j) row[j] /= sum;
          lse_bh[i] = max + std::log(sum);
        }
        // out[i0 : i0+rows] = p @ v  (rows × E)
        if (S == 0 || E == 0) {
          std::fill(out_bh + i0 * E, out_bh + (i0 + rows) * E, T{0});
        } else {
          gemm_one<T>({scores.data(), rows, S, S, 1}, {vp, S, E, v.strides[2], v.strides[3]}, out_bh + i0 * E, E, T{1},
                      T{0});
        }
      }
    }
  }
}

}  // namespace detail

namespace detail {

/// The attention operands, checked: what both attention externs share.
struct AttentionOperands {
  const Tensor* query;
  const Tensor* key;
  const Tensor* value;
  const Tensor* mask;
  bool causal;
  double scale;
  AttentionShape shape;
};

[[nodiscard]] inline Result<AttentionOperands> check_attention(const Args& args, const Tensor& query, const Tensor& key,
                                                               const Tensor& value, double dropout, const Tensor* mask,
                                                               bool causal, std::optional<double> scale_given,
                                                               std::string_view mask_name) {
  if (dropout != 0.0)
    return args.error("dropout_p=" + std::to_string(dropout) + " is not supported (only 0: the reference has no RNG, "
                      "and torch refuses dropout on the CPU as well)");
  if (query.dim() != 4 || key.dim() != 4 || value.dim() != 4)
    return args.error("expects 4-D query, key and value [batch, heads, length, head size], got " +
                      shape_text(query.sizes) + ", " + shape_text(key.sizes) + " and " + shape_text(value.sizes));
  if (!is_float(query.dtype)) return args.error("dtype " + std::string(ir::name(query.dtype)) + " is not a floating type");
  if (key.dtype != query.dtype || value.dtype != query.dtype)
    return args.error("query, key and value have different dtypes (" + std::string(ir::name(query.dtype)) + ", " +
                      std::string(ir::name(key.dtype)) + ", " + std::string(ir::name(value.dtype)) + ")");
  const AttentionShape s{query.sizes[0], query.sizes[1], key.sizes[1], value.sizes[1],
                         query.sizes[2], key.sizes[2],   query.sizes[3]};
  if (key.sizes[0] != s.batch || value.sizes[0] != s.batch)
    return args.error("query, key and value have different batch sizes (" + shape_text(query.sizes) + ", " +
                      shape_text(key.sizes) + ", " + shape_text(value.sizes) + ")");
  if (key.sizes[3] != s.head || value.sizes[3] != s.head)
    return args.error("query, key and value have different head sizes (" + shape_text(query.sizes) + ", " +
                      shape_text(key.sizes) + ", " + shape_text(value.sizes) + ")");
  if (value.sizes[2] != s.kv_len)
    return args.error("key " + shape_text(key.sizes) + " and value " + shape_text(value.sizes) +
                      " have different lengths");
  if (s.k_heads == 0 || s.v_heads == 0 || s.q_heads % s.k_heads != 0 || s.q_heads % s.v_heads != 0)
    return args.error("query's " + std::to_string(s.q_heads) + " heads are not a multiple of key's " +
                      std::to_string(s.k_heads) + " and value's " + std::to_string(s.v_heads));
  if (!fits_blas_int(s.q_len) || !fits_blas_int(s.kv_len) || !fits_blas_int(s.head))
    return args.error("sizes exceed BLAS's int range");
  if (mask != nullptr) {
    const std::string name(mask_name);
    if (mask->dtype != query.dtype && mask->dtype != ir::DType::float32)
      return args.error(name + " of dtype " + std::string(ir::name(mask->dtype)) + " is neither float32 nor the query's " +
                        std::string(ir::name(query.dtype)) + " (an additive mask; torch refuses bool masks here too)");
    if (mask->dim() != 2 && mask->dim() != 4)
      return args.error(name + " " + shape_text(mask->sizes) + " is neither 2-D nor 4-D");
    const std::int64_t target[4] = {s.batch, s.q_heads, s.q_len, s.kv_len};
    for (std::size_t i = 0; i < mask->dim(); ++i) {
      const std::int64_t have = mask->sizes[i], want = target[4 - mask->dim() + i];
      if (have != 1 && have != want)
        return args.error(name + " " + shape_text(mask->sizes) + " does not broadcast to " + shape_text(target));
    }
  }
  const double scale = scale_given ? *scale_given : 1.0 / std::sqrt(static_cast<double>(s.head));
  return AttentionOperands{&query, &key, &value, mask, causal, scale, s};
}

/// Computes attention into `output` and `lse` (any layouts of the right
/// sizes; `lse` [B, Hq, L] or null), in float64 for float64 queries, else
/// in float32.
inline void compute_attention(const AttentionOperands& a, const Tensor& output, const Tensor* lse) {
  if (output.numel() == 0 && (lse == nullptr || lse->numel() == 0)) return;
  auto compute = [&]<class T>() {
    std::vector<T> out(static_cast<std::size_t>(a.shape.batch * a.shape.q_heads * a.shape.q_len * a.shape.head));
    std::vector<T> sums(static_cast<std::size_t>(a.shape.batch * a.shape.q_heads * a.shape.q_len));
    attention<T>(a.shape, *a.query, *a.key, *a.value, a.mask, a.causal, static_cast<T>(a.scale), out, sums);
    from_contiguous<T>(output, out);
    if (lse != nullptr) from_contiguous<T>(*lse, sums);
  };
  if (a.query->dtype == ir::DType::float64) {
    compute.operator()<double>();
  } else {
    compute.operator()<float>();
  }
}

}  // namespace detail

/// `aten._scaled_dot_product_flash_attention_for_cpu`: see the file comment.
[[nodiscard]] inline Result<Value> flash_attention_for_cpu_extern(const ExternCall& call) {
  const detail::Args args(call);
  auto read = args.read(detail::tensor_arg(0, "query"), detail::tensor_arg(1, "key"), detail::tensor_arg(2, "value"),
                        detail::number_arg(3, "dropout_p", 0.0), detail::bool_arg(4, "is_causal", false),
                        detail::optional_tensor_arg(5, "attn_mask"), detail::optional_number_arg(6, "scale"));
  if (!read) return std::move(read).error();
  const auto& [query, key, value, dropout, causal, mask, scale] = *read;
  auto checked = detail::check_attention(args, *query, *key, *value, dropout, mask, causal, scale, "attn_mask");
  if (!checked) return std::move(checked).error();
  const detail::AttentionShape& s = checked->shape;

  const ir::DType lse_dtype = query->dtype == ir::DType::float64 ? ir::DType::float64 : ir::DType::float32;
  auto output = empty_strided_cpu(query->sizes, detail::dense_strides_like(query->sizes, query->strides), query->dtype);
  if (!output) return std::move(output).error();
  auto lse = empty_strided_cpu({s.batch, s.q_heads, s.q_len}, {s.q_len * s.q_heads, 1, s.q_heads}, lse_dtype);
  if (!lse) return std::move(lse).error();
  detail::compute_attention(*checked, *output, &*lse);
  return Value{ValueList{{Value{*std::move(output)}, Value{*std::move(lse)}}}};
}

/// `aten._scaled_dot_product_efficient_attention(query, key, value,
/// attn_bias, compute_log_sumexp, dropout_p=0, is_causal=False, *,
/// scale=None)` → (output, log_sumexp, philox_seed, philox_offset): what
/// Inductor CUDA programs call for float32 attention (the memory-efficient
/// kernel), computed as above, with the layouts PyTorch 2.11 gives it:
/// `output` [B, H, L, E] dense as [B, L, H, E] (strides `(L*H*E, E, H*E,
/// 1)`, whatever the query's layout); `log_sumexp` float32 [B, H,
/// ceil(L / 32) * 32] when `compute_log_sumexp`, else [B, H, 0], its
/// padding +inf; `philox_seed` and `philox_offset` 0-dimensional int64
/// zeros (no dropout, no RNG state). `attn_bias` is an additive mask as
/// `attn_mask` above. Query and value must have the same head size.
[[nodiscard]] inline Result<Value> efficient_attention_extern(const ExternCall& call) {
  const detail::Args args(call);
  auto read = args.read(detail::tensor_arg(0, "query"), detail::tensor_arg(1, "key"), detail::tensor_arg(2, "value"),
                        detail::optional_tensor_arg(3, "attn_bias"), detail::bool_arg(4, "compute_log_sumexp", false),
                        detail::number_arg(5, "dropout_p", 0.0), detail::bool_arg(6, "is_causal", false),
                        detail::optional_number_arg(7, "scale"));
  if (!read) return std::move(read).error();
  const auto& [query, key, value, bias, with_lse, dropout, causal, scale] = *read;
  auto checked = detail::check_attention(args, *query, *key, *value, dropout, bias, causal, scale, "attn_bias");
  if (!checked) return std::move(checked).error();
  const detail::AttentionShape& s = checked->shape;

  const std::int64_t B = s.batch, H = s.q_heads, L = s.q_len, E = s.head;
  auto output = empty_strided_cpu({B, H, L, E}, {L * H * E, E, H * E, 1}, query->dtype);
  if (!output) return std::move(output).error();
  const std::int64_t padded = with_lse ? (L + 31) / 32 * 32 : 0;
  auto lse = empty_cpu({B, H, padded}, ir::DType::float32);
  if (!lse) return std::move(lse).error();
  if (with_lse) {
    auto* p = static_cast<float*>(lse->data());
    std::fill(p, p + lse->numel(), std::numeric_limits<float>::infinity());
    const Tensor rows{lse->storage, ir::DType::float32, {B, H, L}, {H * padded, padded, 1}, 0};
    detail::compute_attention(*checked, *output, &rows);  // float64 sums rounded to float32 as written
  } else {
    detail::compute_attention(*checked, *output, nullptr);
  }
  auto seed = empty_cpu({}, ir::DType::int64);
  if (!seed) return std::move(seed).error();
  auto offset = empty_cpu({}, ir::DType::int64);
  if (!offset) return std::move(offset).error();
  *static_cast<std::int64_t*>(seed->data()) = 0;
  *static_cast<std::int64_t*>(offset->data()) = 0;
  return Value{ValueList{{Value{*std::move(output)}, Value{*std::move(lse)}, Value{*std::move(seed)},
                          Value{*std::move(offset)}}}};
}

}  // namespace wrapir::run::cpu
