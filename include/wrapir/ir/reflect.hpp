#pragma once
/// \file
/// Generic machinery over the line structs, written once through their
/// Boost.Hana reflection: field iteration, equality and hashing.
///
/// `for_each_field(line, f)` calls `f(name, field)` for each field in
/// declaration order; the JSON codec and the text form are built on it, so
/// a new line kind needs no code of its own there as long as its field
/// types are known to them. Equality is field-wise (expressions compare by
/// identity, which is structural equality within one context); hashing is
/// consistent with it.

#include <wrapir/ir/line.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace wrapir::ir {

/// Calls `f(std::string_view field_name, field)` for every field of the line
/// `line`, in declaration order; `field` is a reference with `line`'s
/// constness.
template <class T, class F>
  requires LineKind<std::remove_const_t<T>>
constexpr void for_each_field(T& line, F&& f) {
  boost::hana::for_each(boost::hana::accessors<std::remove_const_t<T>>(), [&](auto accessor) {
    constexpr auto name = boost::hana::first(accessor);
    f(std::string_view{boost::hana::to<const char*>(name)}, boost::hana::second(accessor)(line));
  });
}

/// The field names of line kind `T`, in declaration order.
template <LineKind T>
[[nodiscard]] std::vector<std::string_view> field_names() {
  std::vector<std::string_view> names;
  boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
    names.emplace_back(boost::hana::to<const char*>(boost::hana::first(accessor)));
  });
  return names;
}

/// Field-wise equality of two lines of one kind.
template <LineKind T>
[[nodiscard]] bool operator==(const T& a, const T& b) {
  bool equal = true;
  boost::hana::for_each(boost::hana::accessors<T>(), [&](auto accessor) {
    if (equal) equal = boost::hana::second(accessor)(a) == boost::hana::second(accessor)(b);
  });
  return equal;
}

namespace detail {

constexpr std::size_t hash_combine(std::size_t seed, std::size_t v) noexcept {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

// One overload per field type; containers recurse.
inline std::size_t field_hash(const expr::Expr& e) noexcept { return e ? e.hash() : 0; }
template <class Tag>
std::size_t field_hash(Id<Tag> id) noexcept {
  return std::hash<std::uint32_t>{}(id.index);
}
inline std::size_t field_hash(bool b) noexcept { return b ? 1231 : 1237; }
inline std::size_t field_hash(std::int64_t v) noexcept { return std::hash<std::int64_t>{}(v); }
inline std::size_t field_hash(std::uint32_t v) noexcept { return std::hash<std::uint32_t>{}(v); }
inline std::size_t field_hash(double v) noexcept { return std::hash<std::uint64_t>{}(std::bit_cast<std::uint64_t>(v)); }
inline std::size_t field_hash(const std::string& s) noexcept { return std::hash<std::string>{}(s); }
inline std::size_t field_hash(const Name& s) noexcept { return std::hash<std::string>{}(s.text); }
inline std::size_t field_hash(const OpName& s) noexcept { return std::hash<std::string>{}(s.text); }
inline std::size_t field_hash(DType d) noexcept { return static_cast<std::size_t>(d) + 101; }
inline std::size_t field_hash(const Device& d) noexcept {
  return hash_combine(static_cast<std::size_t>(d.type), d.index ? static_cast<std::size_t>(*d.index) + 1 : 0);
}
template <class E>
  requires std::is_enum_v<E>
std::size_t field_hash(E e) noexcept {
  return static_cast<std::size_t>(e) * 31 + 7;
}
template <class T>
std::size_t field_hash(const std::optional<T>& o) noexcept;
template <class T>
std::size_t field_hash(const std::vector<T>& v) noexcept;
std::size_t field_hash(const Arg& a) noexcept;

inline std::size_t field_hash(const View& v) noexcept {
  return hash_combine(hash_combine(field_hash(v.sizes), field_hash(v.strides)), field_hash(v.offset));
}
inline std::size_t field_hash(const BufferArg& b) noexcept {
  return hash_combine(field_hash(b.buffer), field_hash(b.view));
}
inline std::size_t field_hash(None) noexcept { return 0x5eed; }
inline std::size_t field_hash(const ArgList& l) noexcept { return field_hash(l.items); }
inline std::size_t field_hash(const NamedArg& a) noexcept { return hash_combine(field_hash(a.name), field_hash(a.value)); }
inline std::size_t field_hash(const NamedBuffer& a) noexcept {
  return hash_combine(field_hash(a.name), field_hash(a.buffer));
}
inline std::size_t field_hash(ParamType t) noexcept { return hash_combine(field_hash(t.pointer), field_hash(t.dtype)); }
inline std::size_t field_hash(const NamedExpr& n) noexcept { return hash_combine(field_hash(n.name), field_hash(n.value)); }
inline std::size_t field_hash(const BlockSize& b) noexcept { return hash_combine(field_hash(b.name), field_hash(b.value)); }
inline std::size_t field_hash(LauncherGrid) noexcept { return 0x9a1d; }
inline std::size_t field_hash(const ExplicitGrid& g) noexcept {
  return hash_combine(hash_combine(field_hash(g.x), field_hash(g.y)), field_hash(g.z));
}
inline std::size_t field_hash(const TypedGrid& g) noexcept {
  return hash_combine(hash_combine(field_hash(g.type), field_hash(g.numels)), field_hash(g.block));
}
inline std::size_t field_hash(const SourceText& s) noexcept { return field_hash(s.text); }
inline std::size_t field_hash(const BinaryRef& b) noexcept { return hash_combine(field_hash(b.path), field_hash(b.entry)); }
inline std::size_t field_hash(const KernelMetadata& m) noexcept {
  std::size_t h = field_hash(m.constants);
  h = hash_combine(h, field_hash(m.num_warps));
  h = hash_combine(h, field_hash(m.num_stages));
  h = hash_combine(h, field_hash(m.shared_memory_bytes));
  h = hash_combine(h, field_hash(m.grid_type));
  return hash_combine(h, field_hash(m.block));
}
inline std::size_t field_hash(ArgSlice s) noexcept { return hash_combine(field_hash(s.start), field_hash(s.stop)); }
inline std::size_t field_hash(const KeyStep& s) noexcept {
  return hash_combine(hash_combine(field_hash(s.kind), field_hash(s.value)), field_hash(s.key));
}
inline std::size_t field_hash(const SymbolBinding& b) noexcept {
  return hash_combine(field_hash(b.symbol), field_hash(b.path));
}
template <class... Ts>
std::size_t field_hash(const boost::variant2::variant<Ts...>& v) noexcept {
  return hash_combine(v.index(), boost::variant2::visit([](const auto& x) { return field_hash(x); }, v));
}
inline std::size_t field_hash(const Arg& a) noexcept { return field_hash(a.value); }
template <class T>
std::size_t field_hash(const std::optional<T>& o) noexcept {
  return o ? hash_combine(1, field_hash(*o)) : 0;
}
template <class T>
std::size_t field_hash(const std::vector<T>& v) noexcept {
  std::size_t h = v.size();
  for (const T& x : v) h = hash_combine(h, field_hash(x));
  return h;
}

}  // namespace detail

/// A hash of a line consistent with `==`: equal lines hash equal. Depends on
/// expression identities, so it is stable within one process only.
template <LineKind T>
[[nodiscard]] std::size_t hash_value(const T& line) noexcept {
  std::size_t h = line_kind_index<T> * 0x100000001b3ULL;
  for_each_field(line, [&](std::string_view, const auto& field) { h = detail::hash_combine(h, detail::field_hash(field)); });
  return h;
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
