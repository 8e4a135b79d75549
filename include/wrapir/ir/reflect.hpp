#pragma once
/// \file
/// Generic machinery over the line structs and the records they hold,
/// written once through their reflection (`WRAPIR_REFLECT`,
/// `ir/detail/reflection.hpp`): field iteration, equality and hashing.
///
/// Line kinds are reflected at the end of ir/lines.hpp; records (View,
/// KernelMetadata, ExplicitGrid, KeyStep, ...) beside their definitions.
/// `for_each_field(value, f)` calls `f(name, field)` for each field in
/// declaration order; the JSON codec and the text form are built on it, so
/// a new line kind or record needs no code of its own there as long as its
/// field types are known to them. Equality is field-wise (expressions compare by
/// identity, which is structural equality within one context); hashing is
/// consistent with it.

#include <wrapir/detail/hash.hpp>
#include <wrapir/ir/box.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/small_vector.hpp>

#include <wrapir/ir/detail/reflection.hpp>

#include <boost/variant2/variant.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace wrapir::ir {

/// Whether `T` is reflected: a line kind or a record listed with
/// `WRAPIR_REFLECT` beside its definition.
template <class T>
concept Reflected = detail::reflection<T>::reflected;

/// Calls `f(std::string_view field_name, field)` for every field of the
/// reflected `value` (a line or a record), in declaration order; `field` is
/// a reference with `value`'s constness.
template <class T, class F>
  requires Reflected<std::remove_const_t<T>>
constexpr void for_each_field(T& value, F&& f) {
  using R = detail::reflection<std::remove_const_t<T>>;
  R::members([&](auto... member) {
    [[maybe_unused]] std::size_t i = 0;
    (f(R::names[i++], value.*member), ...);
  });
}

/// The number of fields of the reflected `T`.
template <Reflected T>
inline constexpr std::size_t field_count = detail::reflection<T>::count;

/// The field names of the reflected `T`, in declaration order.
template <Reflected T>
[[nodiscard]] std::vector<std::string_view> field_names() {
  const auto& names = detail::reflection<T>::names;
  return std::vector<std::string_view>(names.begin(), names.end());
}

/// The records that lines hold, reflected beside their definitions: with
/// the line kinds, everything the codecs walk field by field. (Devices and
/// parameter types print as one token everywhere, and table entries have
/// forms of their own; adapters cost compile time in every translation
/// unit, so those are not reflected.)
using ReflectedRecords =
    boost::mp11::mp_append<RecordKinds,
                           boost::mp11::mp_list<View, BufferArg, SourceText, BinaryRef, LauncherGrid, ExplicitGrid,
                                                TypedGrid, KernelMetadata, TritonMeta, InductorMeta,
                                                ParamAttribute, Provenance, KeyStep, CommBufferInfo>>;

/// Field-wise equality of two lines of one kind.
template <LineKind T>
[[nodiscard]] bool operator==(const T& a, const T& b) {
  return detail::reflection<T>::members([&](auto... member) { return ((a.*member == b.*member) && ...); });
}

namespace detail {

using wrapir::detail::hash_mix;

template <class T>
inline constexpr bool is_id = false;
template <class Tag>
inline constexpr bool is_id<Id<Tag>> = true;
template <class T>
inline constexpr bool is_variant2 = false;
template <class... Ts>
inline constexpr bool is_variant2<boost::variant2::variant<Ts...>> = true;
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;
template <class T>
inline constexpr bool is_vector = false;
template <class T>
inline constexpr bool is_vector<std::vector<T>> = true;
template <class T>
inline constexpr bool is_small_vector = false;
template <class T, std::size_t N>
inline constexpr bool is_small_vector<SmallVector<T, N>> = true;

/// The hash of a field value, consistent with its `==`; reflected records
/// and lines hash field by field. One function template rather than an
/// overload set of plain functions: a translation unit instantiates the
/// hashes of the types it hashes, and nothing when it hashes nothing.
template <class T>
[[nodiscard]] std::size_t field_hash(const T& v) noexcept {
  if constexpr (std::is_same_v<T, expr::Expr>) {
    return v ? v.hash() : 0;
  } else if constexpr (is_id<T>) {
    return std::hash<std::uint32_t>{}(v.index);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1231 : 1237;
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<std::size_t>(v) * 31 + 7;
  } else if constexpr (std::is_integral_v<T>) {
    return std::hash<T>{}(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return std::hash<std::uint64_t>{}(std::bit_cast<std::uint64_t>(v));  // by bits, as Arg compares floats
  } else if constexpr (std::is_same_v<T, std::string>) {
    return std::hash<std::string>{}(v);
  } else if constexpr (std::is_same_v<T, Name> || std::is_same_v<T, OpName>) {
    return std::hash<std::string>{}(v.text);
  } else if constexpr (std::is_same_v<T, Device>) {
    return hash_mix(field_hash(v.type), v.index ? static_cast<std::size_t>(*v.index) + 1 : 0);
  } else if constexpr (std::is_same_v<T, ParamType>) {
    return hash_mix(field_hash(v.pointer), field_hash(v.dtype));
  } else if constexpr (std::is_same_v<T, None>) {
    return 0x5eed;
  } else if constexpr (std::is_same_v<T, ArgList>) {
    return field_hash(v.items);
  } else if constexpr (std::is_same_v<T, Arg>) {
    return field_hash(v.value);
  } else if constexpr (is_variant2<T>) {
    return hash_mix(v.index(), boost::variant2::visit([](const auto& x) { return field_hash(x); }, v));
  } else if constexpr (is_optional<T> || is_optional_box_v<T>) {
    return v ? hash_mix(1, field_hash(*v)) : 0;
  } else if constexpr (is_box_v<T>) {
    return field_hash(*v);
  } else if constexpr (is_vector<T> || is_vector_box_v<T> || is_small_vector<T>) {
    std::size_t h = v.size();
    for (const auto& x : v) h = hash_mix(h, field_hash(x));
    return h;
  } else {
    static_assert(Reflected<T>, "field_hash: a field type with no hash (add it here)");
    std::size_t h = field_count<T>;
    for_each_field(v, [&](std::string_view, const auto& field) { h = hash_mix(h, field_hash(field)); });
    return h;
  }
}

}  // namespace detail

/// A hash of a line consistent with `==`: equal lines hash equal. Depends on
/// expression identities, so it is stable within one process only. Whole
/// lines (`Line`) hash with ir/line_hash.hpp.
template <LineKind T>
[[nodiscard]] std::size_t hash_value(const T& line) noexcept {
  return wrapir::detail::hash_mix(line_kind_index<T>, detail::field_hash(line));
}

}  // namespace wrapir::ir
