#pragma once
/// \file
/// What the reader and the writer agree on: how reflected records, their
/// defaulted fields and variants of records look in JSON.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_writer.hpp>
#include <wrapir/ir/detail/reflect_hana.hpp>

#include <boost/variant2/variant.hpp>

namespace wrapir::io::detail::json {

template <class T>
inline constexpr bool is_optional_v = false;
template <class T>
inline constexpr bool is_optional_v<std::optional<T>> = true;
template <class T>
inline constexpr bool is_optional_v<ir::OptionalBox<T>> = true;

using ir::enum_choices;
using ir::enum_from_name;
using ir::EnumNames;

// ---- records ---------------------------------------------------------------
//
// A reflected record (ir::Reflected: View, BufferArg, KeyStep, KernelMetadata,
// ExplicitGrid, ...) is an object with one member per field, named as the
// field, in declaration order, written and read by `Encoder::put` and
// `Decoder::get` through the reflection: no record has a codec of its own.
// Every field is written and required, except `std::optional` ones, which
// are left out when empty and may be absent or null (as in lines), and the
// fields a record lists below.

/// The field names of the reflected `T`, at compile time.
template <class T>
inline constexpr auto reflected_names = [] {
  std::array<std::string_view, ir::field_count<T>> names{};
  std::size_t i = 0;
  boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
    names[i++] = boost::hana::to<const char*>(boost::hana::first(accessor));
  });
  return names;
}();

/// The fields of `T` that keep their default value when absent; unless
/// `written`, they are also left out when equal to it.
template <class T>
struct JsonDefaults {
  static constexpr std::array<std::string_view, 0> fields{};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::KeyStep> {
  static constexpr std::array<std::string_view, 2> fields{"value", "key"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::KernelMetadata> {
  static constexpr std::array<std::string_view, 3> fields{"constants", "block", "const_params"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::TritonMeta> {
  static constexpr std::array<std::string_view, 2> fields{"constexprs", "attributes"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::InductorMeta> {
  static constexpr std::array<std::string_view, 2> fields{"mutated_arg_names", "autotune_hints"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::Provenance> {
  static constexpr std::array<std::string_view, 2> fields{"source_nodes", "aten"};
  static constexpr bool written = false;
};
template <>
struct JsonDefaults<ir::CommBufferInfo> {
  static constexpr std::array<std::string_view, 1> fields{"type"};
  static constexpr bool written = true;
};

/// A record as value-initialised: what its defaulted fields are compared with.
template <class T>
inline const T json_default_record{};

template <class T>
constexpr bool json_defaulted(std::string_view field) noexcept {
  for (std::string_view f : JsonDefaults<T>::fields)
    if (f == field) return true;
  return false;
}

template <class T>
constexpr bool json_defaults_are_fields() {
  for (std::string_view f : JsonDefaults<T>::fields) {
    bool found = false;
    for (std::string_view name : reflected_names<T>) found = found || name == f;
    if (!found) return false;
  }
  return true;
}

/// Variants of records (a launch grid, a kernel source) are one object: a
/// `"kind"` member that names the alternative, then its record's fields. A
/// boxed alternative (a launch grid's explicit and typed forms) is written
/// and read as the record it holds.
template <class T>
inline constexpr std::string_view json_kind{};
template <>
inline constexpr std::string_view json_kind<ir::LauncherGrid> = "launcher";
template <>
inline constexpr std::string_view json_kind<ir::ExplicitGrid> = "explicit";
template <>
inline constexpr std::string_view json_kind<ir::TypedGrid> = "typed";
template <>
inline constexpr std::string_view json_kind<ir::SourceText> = "text";
template <>
inline constexpr std::string_view json_kind<ir::BinaryRef> = "binary";

/// What a diagnostic calls the `"kind"` of a variant of records.
template <class V>
inline constexpr std::string_view json_variant_what{};
template <>
inline constexpr std::string_view json_variant_what<ir::LaunchGrid> = "grid kind";
template <>
inline constexpr std::string_view json_variant_what<ir::KernelSource> = "kernel source kind";

template <class V>
struct is_record_variant : std::false_type {};
template <class... Ts>
struct is_record_variant<boost::variant2::variant<Ts...>>
    : std::bool_constant<((ir::Reflected<ir::unboxed_t<Ts>> && !json_kind<ir::unboxed_t<Ts>>.empty()) && ...)> {};

/// "a or b", "one of a, b, c": the kinds of a variant of records.
template <class... Ts>
std::string json_kind_choices(boost::mp11::mp_list<Ts...>) {
  constexpr std::array<std::string_view, sizeof...(Ts)> kinds{json_kind<ir::unboxed_t<Ts>>...};
  std::string out = kinds.size() == 2 ? "" : "one of ";
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i) out += kinds.size() == 2 ? " or " : ", ";
    out += kinds[i];
  }
  return out;
}

}  // namespace wrapir::io::detail::json
