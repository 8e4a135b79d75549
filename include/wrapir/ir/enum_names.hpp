#pragma once
/// \file
/// The names of the IR's enumerations, for every codec.
///
/// Each enumeration has one table of names, beside its definition
/// (`kernel_language_names` in ir/kernel.hpp, `dtype_table` in ir/dtype.hpp,
/// ...), which its `*_name` function and its `*_count` read. `EnumNames<E>`
/// adds what the enumeration is called in a diagnostic (`what`) and takes
/// `count` (enumerators numbered from 0) and `name(e)` from there;
/// `enum_from_name` and `enum_choices` below derive from those. JSON, the text form and the
/// verifier spell enumerators through it. An enumeration without a
/// specialisation is not a `NamedEnum`, so a codec that meets one fails to
/// compile where it is used.

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/symbol.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace wrapir::ir {

namespace detail {

/// What `EnumNames<E>` derives from an enumeration's table: its `count`
/// names and its name function `name_of` (which reads the table, and says
/// what a value outside the enumeration prints as).
template <class E, std::size_t n, auto name_of>
struct EnumTable {
  static constexpr std::size_t count = n;
  static constexpr std::string_view name(E e) noexcept { return name_of(e); }
};

[[nodiscard]] constexpr std::string_view dtype_name_or_invalid(DType d) noexcept {
  return is_valid(d) ? ir::name(d) : std::string_view{"<invalid dtype>"};
}

}  // namespace detail

template <class E>
struct EnumNames;

template <>
struct EnumNames<WorkspaceZeroMode>
    : detail::EnumTable<WorkspaceZeroMode, workspace_zero_mode_count, workspace_zero_mode_name> {
  static constexpr std::string_view what = "workspace zero mode";
};
template <>
struct EnumNames<GridType> : detail::EnumTable<GridType, grid_type_count, grid_type_name> {
  static constexpr std::string_view what = "grid type";
};
template <>
struct EnumNames<AutotuneHint> : detail::EnumTable<AutotuneHint, autotune_hint_count, autotune_hint_name> {
  static constexpr std::string_view what = "autotune hint";
};
template <>
struct EnumNames<KeyStepKind> : detail::EnumTable<KeyStepKind, key_step_kind_count, key_step_kind_name> {
  static constexpr std::string_view what = "key step";
};
template <>
struct EnumNames<KernelLanguage> : detail::EnumTable<KernelLanguage, kernel_language_count, kernel_language_name> {
  static constexpr std::string_view what = "kernel language";
};
template <>
struct EnumNames<BufferRole> : detail::EnumTable<BufferRole, buffer_role_count, buffer_role_name> {
  static constexpr std::string_view what = "buffer role";
};
template <>
struct EnumNames<SymbolOrigin> : detail::EnumTable<SymbolOrigin, symbol_origin_count, symbol_origin_name> {
  static constexpr std::string_view what = "symbol origin";
};
template <>
struct EnumNames<CommBufferType>
    : detail::EnumTable<CommBufferType, comm_buffer_type_count, comm_buffer_type_name> {
  static constexpr std::string_view what = "comm buffer type";
};
template <>
struct EnumNames<DeviceType> : detail::EnumTable<DeviceType, device_type_count, device_type_name> {
  static constexpr std::string_view what = "device type";
};
template <>
struct EnumNames<DType> : detail::EnumTable<DType, dtype_count, detail::dtype_name_or_invalid> {
  static constexpr std::string_view what = "dtype";
};
template <>
struct EnumNames<expr::Assumption>
    : detail::EnumTable<expr::Assumption, static_cast<std::size_t>(expr::Assumption::integer) + 1,
                        expr::assumption_name> {
  static constexpr std::string_view what = "assumption";
};

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  EnumNames<E>::what;
  EnumNames<E>::count;
  EnumNames<E>::name(e);
};

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
