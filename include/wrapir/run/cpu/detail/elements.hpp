#pragma once
/// \file
/// What the reference externs share: 16-bit float conversions, dispatch on a
/// tensor's dtype to a C++ element type, and strided element addressing
/// (their arguments are read by detail/extern_args.hpp).
///
/// bfloat16 and float16 are converted to float32 for arithmetic and rounded
/// back to nearest-even once per result element, as eager PyTorch does on
/// the CPU for its reductions and GEMMs (it accumulates in float32).

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/run/tensor.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wrapir::run::cpu::detail {

/// IEEE 754 binary16, stored as bits.
struct Half {
  std::uint16_t bits = 0;
};
/// bfloat16: the top half of a float32, stored as bits.
struct BFloat16 {
  std::uint16_t bits = 0;
};

[[nodiscard]] inline float to_float(BFloat16 v) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(v.bits) << 16);
}
[[nodiscard]] inline BFloat16 to_bfloat16(float f) noexcept {
  const auto u = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return BFloat16{static_cast<std::uint16_t>((u >> 16) | 0x40)};  // stays a quiet NaN
  const std::uint32_t rounding = 0x7fff + ((u >> 16) & 1);  // to nearest, ties to even
  return BFloat16{static_cast<std::uint16_t>((u + rounding) >> 16)};
}

[[nodiscard]] inline float to_float(Half h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000) << 16;
  const std::uint32_t exponent = (h.bits >> 10) & 0x1f;
  const std::uint32_t mantissa = h.bits & 0x3ff;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}
[[nodiscard]] inline Half to_half(float f) noexcept {
  const auto u = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
  if (std::isnan(f)) return Half{static_cast<std::uint16_t>(sign | 0x7e00)};
  const float a = std::fabs(f);
  if (a >= 65520.0F) return Half{static_cast<std::uint16_t>(sign | 0x7c00)};  // rounds to infinity
  if (a < 6.103515625e-05F) {  // subnormal in half: a multiple of 2^-24, rounded to nearest even
    const float scaled = a * 16777216.0F;  // exact: a power-of-two scale
    const auto m = static_cast<std::uint16_t>(std::nearbyint(scaled));
    return Half{static_cast<std::uint16_t>(sign | m)};
  }
  const std::uint32_t au = std::bit_cast<std::uint32_t>(a);
  const std::uint32_t rounding = 0xfff + ((au >> 13) & 1);
  const std::uint32_t r = au + rounding;
  const std::uint32_t exponent = ((r >> 23) & 0xff) - 112;
  return Half{static_cast<std::uint16_t>(sign | (exponent << 10) | ((r >> 13) & 0x3ff))};
}

/// The type arithmetic on elements of `T` is done in.
template <class T>
using Acc = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                               std::conditional_t<std::is_floating_point_v<T>, T, std::int64_t>>;

template <class T>
[[nodiscard]] inline Acc<T> load(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return to_float(v);
  } else {
    return static_cast<Acc<T>>(v);
  }
}

template <class T>
inline void store(std::byte* p, Acc<T> value) noexcept {
  T v;
  if constexpr (std::is_same_v<T, Half>) {
    v = to_half(value);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    v = to_bfloat16(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    v = value != 0;
  } else {
    v = static_cast<T>(value);
  }
  std::memcpy(p, &v, sizeof(T));
}

/// Calls `f.template operator()<T>()` with the element type of `d`, or
/// returns a diagnostic for dtypes the reference externs do not handle.
template <class F>
[[nodiscard]] inline Result<void> dispatch(ir::DType d, std::string_view what, F&& f) {
  switch (d) {
    case ir::DType::bool_: return f.template operator()<bool>();
    case ir::DType::uint8: return f.template operator()<std::uint8_t>();
    case ir::DType::int8: return f.template operator()<std::int8_t>();
    case ir::DType::int16: return f.template operator()<std::int16_t>();
    case ir::DType::int32: return f.template operator()<std::int32_t>();
    case ir::DType::int64: return f.template operator()<std::int64_t>();
    case ir::DType::float16: return f.template operator()<Half>();
    case ir::DType::bfloat16: return f.template operator()<BFloat16>();
    case ir::DType::float32: return f.template operator()<float>();
    case ir::DType::float64: return f.template operator()<double>();
    default: return Diagnostic{std::string(what) + ": dtype " + std::string(ir::name(d)) + " is not supported"};
  }
}

/// The address of the element at `index` (element units, checked layouts).
[[nodiscard]] inline std::byte* element(const Tensor& t, std::span<const std::int64_t> index) noexcept {
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < index.size(); ++i) offset += index[i] * t.strides[i];
  return static_cast<std::byte*>(t.data()) + offset * ir::itemsize(t.dtype);
}

/// Calls `f(index)` for every index of `sizes`, in row-major order.
template <class F>
inline void for_each_index(std::span<const std::int64_t> sizes, F&& f) {
  for (const std::int64_t s : sizes)
    if (s == 0) return;
  std::vector<std::int64_t> index(sizes.size(), 0);
  while (true) {
    f(std::span<const std::int64_t>(index));
    std::size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (sizes.empty()) return;
  }
}

/// "[2, 3]" for diagnostics.
[[nodiscard]] inline std::string shape_text(std::span<const std::int64_t> sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

/// `dim` wrapped into [0, rank) as torch wraps negative dimensions, or nullopt.
[[nodiscard]] inline std::optional<std::size_t> wrap_dim(std::int64_t dim, std::size_t rank) noexcept {
  const auto r = static_cast<std::int64_t>(rank == 0 ? 1 : rank);
  if (dim < -r || dim >= r) return std::nullopt;
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

[[nodiscard]] inline bool is_float(ir::DType d) noexcept {
  return d == ir::DType::float16 || d == ir::DType::bfloat16 || d == ir::DType::float32 || d == ir::DType::float64;
}

/// A contiguous float32 (or float64 for `double_precision`) copy of `t`.
template <class Out>
[[nodiscard]] inline std::vector<Out> to_contiguous(const Tensor& t) {
  std::vector<Out> out;
  out.reserve(static_cast<std::size_t>(t.numel()));
  (void)dispatch(t.dtype, "copy", [&]<class T>() -> Result<void> {
    for_each_index(t.sizes, [&](std::span<const std::int64_t> idx) {
      out.push_back(static_cast<Out>(load<T>(element(t, idx))));
    });
    return {};
  });
  return out;
}

/// Writes the contiguous `values` into `t`'s layout, rounding to its dtype.
template <class In>
inline void from_contiguous(const Tensor& t, const std::vector<In>& values) {
  std::size_t i = 0;
  (void)dispatch(t.dtype, "copy", [&]<class T>() -> Result<void> {
    for_each_index(t.sizes, [&](std::span<const std::int64_t> idx) {
      store<T>(element(t, idx), static_cast<Acc<T>>(values[i++]));
    });
    return {};
  });
}

}  // namespace wrapir::run::cpu::detail
