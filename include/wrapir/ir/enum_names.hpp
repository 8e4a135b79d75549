#pragma once
/// \file
/// The names of the IR's enumerations, in one table for every codec.
///
/// `EnumNames<E>` gives, for each enumeration a program holds, what it is
/// called in a diagnostic (`what`), how many enumerators it has (`count`,
/// numbered from 0) and each one's name as JSON, the text form and the
/// verifier spell it. An enumeration without a specialisation is not a
/// `NamedEnum`, so a codec that meets one fails to compile where it is used.

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/symbol.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace wrapir::ir {

template <class E>
struct EnumNames;

template <>
struct EnumNames<WorkspaceZeroMode> {
  static constexpr std::string_view what = "workspace zero mode";
  static constexpr std::size_t count = workspace_zero_mode_count;
  static constexpr std::string_view name(WorkspaceZeroMode v) noexcept { return workspace_zero_mode_name(v); }
};
template <>
struct EnumNames<GridType> {
  static constexpr std::string_view what = "grid type";
  static constexpr std::size_t count = grid_type_count;
  static constexpr std::string_view name(GridType v) noexcept { return grid_type_name(v); }
};
template <>
struct EnumNames<KeyStepKind> {
  static constexpr std::string_view what = "key step";
  static constexpr std::size_t count = key_step_kind_count;
  static constexpr std::string_view name(KeyStepKind v) noexcept { return key_step_kind_name(v); }
};
template <>
struct EnumNames<KernelLanguage> {
  static constexpr std::string_view what = "kernel language";
  static constexpr std::size_t count = kernel_language_count;
  static constexpr std::string_view name(KernelLanguage v) noexcept { return kernel_language_name(v); }
};
template <>
struct EnumNames<BufferRole> {
  static constexpr std::string_view what = "buffer role";
  static constexpr std::size_t count = buffer_role_count;
  static constexpr std::string_view name(BufferRole v) noexcept { return buffer_role_name(v); }
};
template <>
struct EnumNames<SymbolOrigin> {
  static constexpr std::string_view what = "symbol origin";
  static constexpr std::size_t count = symbol_origin_count;
  static constexpr std::string_view name(SymbolOrigin v) noexcept { return symbol_origin_name(v); }
};
template <>
struct EnumNames<CommBufferType> {
  static constexpr std::string_view what = "comm buffer type";
  static constexpr std::size_t count = 1;
  static constexpr std::string_view name(CommBufferType v) noexcept { return comm_buffer_type_name(v); }
};
template <>
struct EnumNames<DType> {
  static constexpr std::string_view what = "dtype";
  static constexpr std::size_t count = dtype_count;
  static constexpr std::string_view name(DType v) noexcept {
    return is_valid(v) ? ir::name(v) : std::string_view{"<invalid dtype>"};
  }
};
template <>
struct EnumNames<expr::Assumption> {
  static constexpr std::string_view what = "assumption";
  static constexpr std::size_t count = 3;
  static constexpr std::string_view name(expr::Assumption v) noexcept { return expr::assumption_name(v); }
};

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) { EnumNames<E>::name(e); };

/// The enumerator of `E` called `text`, exactly as spelled.
template <NamedEnum E>
[[nodiscard]] constexpr std::optional<E> enum_from_name(std::string_view text) noexcept {
  for (std::size_t i = 0; i < EnumNames<E>::count; ++i)
    if (EnumNames<E>::name(static_cast<E>(i)) == text) return static_cast<E>(i);
  return std::nullopt;
}

/// "a, b, c": the names of `E`, for "expected one of" diagnostics.
template <NamedEnum E>
[[nodiscard]] std::string enum_choices() {
  std::string out;
  for (std::size_t i = 0; i < EnumNames<E>::count; ++i) {
    if (i) out += ", ";
    out += EnumNames<E>::name(static_cast<E>(i));
  }
  return out;
}

}  // namespace wrapir::ir
