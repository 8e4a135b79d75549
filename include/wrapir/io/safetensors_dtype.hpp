#pragma once
/// \file
/// The safetensors name of each dtype: what io/safetensors.hpp reads and
/// writes and what the executor's debug printer saves tensors as
/// (run/detail/executor_debug.hpp), without the JSON the file reader needs.

#include <optional>
#include <string_view>
#include <wrapir/ir/dtype.hpp>

namespace wrapir::io {

/// The safetensors name of a dtype (`F32`, `BF16`, `BOOL`), or nullopt for
/// one the format has no name for.
[[nodiscard]] constexpr std::optional<std::string_view> safetensors_dtype_name(ir::DType d) noexcept {
  switch (d) {
    case ir::DType::bool_: return "BOOL";
    case ir::DType::uint8: return "U8";
    case ir::DType::int8: return "I8";
    case ir::DType::int16: return "I16";
    case ir::DType::int32: return "I32";
    case ir::DType::int64: return "I64";
    case ir::DType::uint16: return "U16";
    case ir::DType::uint32: return "U32";
    case ir::DType::uint64: return "U64";
    case ir::DType::float16: return "F16";
    case ir::DType::bfloat16: return "BF16";
    case ir::DType::float32: return "F32";
    case ir::DType::float64: return "F64";
    case ir::DType::complex64: return "C64";
    case ir::DType::float8_e4m3fn: return "F8_E4M3";
    case ir::DType::float8_e5m2: return "F8_E5M2";
    case ir::DType::float8_e8m0fnu: return "F8_E8M0";
    default: return std::nullopt;
  }
}

}  // namespace wrapir::io
