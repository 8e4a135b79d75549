#pragma once
/// \file
/// Structs reflected with `WRAPIR_REFLECT` as Boost.Hana `Struct`s, for code
/// written against `hana::accessors` (the JSON codec): each accessor is a
/// pair of a `hana::string` field name and a function from the struct to
/// the field. Only translation units that include this pay for Hana.

#include <wrapir/ir/detail/reflection.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/core/when.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

#include <cstddef>
#include <utility>

namespace wrapir::ir::detail {

/// The `I`th of its arguments.
template <std::size_t I>
struct nth_argument {
  template <class First, class... Rest>
  constexpr auto operator()(First first, Rest... rest) const {
    if constexpr (I == 0) {
      return first;
    } else {
      return nth_argument<I - 1>{}(rest...);
    }
  }
};

/// The member pointer of `T`'s `I`th reflected field.
template <class T, std::size_t I>
inline constexpr auto member_pointer = reflection<T>::members(nth_argument<I>{});

template <auto Member>
struct member_accessor {
  template <class S>
  constexpr decltype(auto) operator()(S&& s) const {
    return (static_cast<S&&>(s).*Member);
  }
};

template <class T, std::size_t I, std::size_t... C>
constexpr auto hana_field_name(std::index_sequence<C...>) {
  return boost::hana::string_c<reflection<T>::names[I][C]...>;
}

template <class T, std::size_t... I>
constexpr auto hana_accessors(std::index_sequence<I...>) {
  return boost::hana::make_tuple(
      boost::hana::make_pair(hana_field_name<T, I>(std::make_index_sequence<reflection<T>::names[I].size()>{}),
                             member_accessor<member_pointer<T, I>>{})...);
}

}  // namespace wrapir::ir::detail

namespace boost::hana {

template <class T>
struct accessors_impl<T, when<wrapir::ir::detail::reflection<T>::reflected>> {
  static constexpr auto apply() {
    return wrapir::ir::detail::hana_accessors<T>(std::make_index_sequence<wrapir::ir::detail::reflection<T>::count>{});
  }
};

}  // namespace boost::hana
