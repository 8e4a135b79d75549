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
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/line.hpp>

#include <wrapir/ir/detail/reflection.hpp>

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
                                                TypedGrid, KernelMetadata, KeyStep, CommBufferInfo>>;

/// Field-wise equality of two lines of one kind.
template <LineKind T>
[[nodiscard]] bool operator==(const T& a, const T& b) {
  return detail::reflection<T>::members([&](auto... member) { return ((a.*member == b.*member) && ...); });
}

namespace detail {

using wrapir::detail::hash_mix;

/// Hashes of field values, consistent with their `==`. The overloads are
/// members so that they see each other whatever their order; reflected
/// records and lines hash field by field.
struct FieldHash {
  static std::size_t of(const expr::Expr& e) noexcept { return e ? e.hash() : 0; }
  template <class Tag>
  static std::size_t of(Id<Tag> id) noexcept {
    return std::hash<std::uint32_t>{}(id.index);
  }
  static std::size_t of(bool b) noexcept { return b ? 1231 : 1237; }
  static std::size_t of(int v) noexcept { return std::hash<int>{}(v); }
  static std::size_t of(std::int64_t v) noexcept { return std::hash<std::int64_t>{}(v); }
  static std::size_t of(std::uint32_t v) noexcept { return std::hash<std::uint32_t>{}(v); }
  // By bits, as Arg compares floats.
  static std::size_t of(double v) noexcept { return std::hash<std::uint64_t>{}(std::bit_cast<std::uint64_t>(v)); }
  static std::size_t of(const std::string& s) noexcept { return std::hash<std::string>{}(s); }
  static std::size_t of(const Name& s) noexcept { return std::hash<std::string>{}(s.text); }
  static std::size_t of(const OpName& s) noexcept { return std::hash<std::string>{}(s.text); }
  template <class E>
    requires std::is_enum_v<E>
  static std::size_t of(E e) noexcept {
    return static_cast<std::size_t>(e) * 31 + 7;
  }
  static std::size_t of(const Device& d) noexcept {
    return hash_mix(of(d.type), d.index ? static_cast<std::size_t>(*d.index) + 1 : 0);
  }
  static std::size_t of(ParamType t) noexcept { return hash_mix(of(t.pointer), of(t.dtype)); }
  static std::size_t of(None) noexcept { return 0x5eed; }
  static std::size_t of(const ArgList& l) noexcept { return of(l.items); }
  static std::size_t of(const Arg& a) noexcept { return of(a.value); }
  template <class... Ts>
  static std::size_t of(const boost::variant2::variant<Ts...>& v) noexcept {
    return hash_mix(v.index(), boost::variant2::visit([](const auto& x) { return of(x); }, v));
  }
  template <class T>
  static std::size_t of(const std::optional<T>& o) noexcept {
    return o ? hash_mix(1, of(*o)) : 0;
  }
  template <class T>
  static std::size_t of(const std::vector<T>& v) noexcept {
    std::size_t h = v.size();
    for (const T& x : v) h = hash_mix(h, of(x));
    return h;
  }
  template <Reflected T>
  static std::size_t of(const T& record) noexcept {
    std::size_t h = field_count<T>;
    for_each_field(record, [&](std::string_view, const auto& field) { h = hash_mix(h, of(field)); });
    return h;
  }
};

}  // namespace detail

/// A hash of a line consistent with `==`: equal lines hash equal. Depends on
/// expression identities, so it is stable within one process only.
template <LineKind T>
[[nodiscard]] std::size_t hash_value(const T& line) noexcept {
  return wrapir::detail::hash_mix(line_kind_index<T>, detail::FieldHash::of(line));
}
// A template so that only the translation units that hash whole lines pay
// for instantiating a visit over every kind.
template <class L>
  requires std::same_as<L, Line>
[[nodiscard]] std::size_t hash_value(const L& line) noexcept {
  return std::visit([](const auto& l) { return hash_value(l); }, line);
}

}  // namespace wrapir::ir

template <>
struct std::hash<wrapir::ir::Line> {
  template <class L = wrapir::ir::Line>  // deferred, like hash_value(const Line&)
  std::size_t operator()(const L& l) const noexcept {
    return wrapir::ir::hash_value(l);
  }
};
