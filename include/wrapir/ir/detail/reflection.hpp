#pragma once
/// \file
/// `WRAPIR_REFLECT(Type, field...)`: the one field list of a line struct or
/// record, read by `ir/reflect.hpp` (iteration, equality, hashing) and the
/// codecs built on it.
///
/// It replaces `BOOST_HANA_ADAPT_STRUCT`, whose adapter builds a
/// `hana::tuple` of `hana::pair`s of `hana::string`s eagerly, at namespace
/// scope: 1.6 s of every translation unit that included the line kinds
/// (g++ 12, 51 structs). Here a struct's reflection is an array of names
/// and one function template that hands the member pointers to a visitor;
/// nothing is instantiated until a translation unit walks that struct.
/// (`ir/detail/reflect_hana.hpp` makes reflected structs Boost.Hana
/// `Struct`s for code written against Hana.)
///
/// At namespace scope, outside any namespace, followed by `;`, after the
/// struct is complete; at most 16 fields:
///
///     WRAPIR_REFLECT(wrapir::ir::Reuse, old_buffer, new_buffer, delete_old);
///
/// A test (tests/ir/line_test.cpp) checks that every reflected struct lists
/// all its fields.

#include <array>
#include <cstddef>
#include <string_view>

namespace wrapir::ir::detail {

/// Specialised by `WRAPIR_REFLECT` for each reflected struct.
template <class T>
struct reflection {
  static constexpr bool reflected = false;
};

}  // namespace wrapir::ir::detail

// Argument counting and mapping, written out (up to 16) rather than
// generic: cheaper to preprocess than Boost.Preprocessor's sequences.
#define WRAPIR_DETAIL_NARGS(...) \
  WRAPIR_DETAIL_NARGS_I(__VA_ARGS__ __VA_OPT__(, ) 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define WRAPIR_DETAIL_NARGS_I(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define WRAPIR_DETAIL_CAT(a, b) WRAPIR_DETAIL_CAT_I(a, b)
#define WRAPIR_DETAIL_CAT_I(a, b) a##b

#define WRAPIR_DETAIL_MAP(f, t, ...) \
  WRAPIR_DETAIL_CAT(WRAPIR_DETAIL_MAP_, WRAPIR_DETAIL_NARGS(__VA_ARGS__))(f, t __VA_OPT__(, ) __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_0(f, t)
#define WRAPIR_DETAIL_MAP_1(f, t, a) f(t, a)
#define WRAPIR_DETAIL_MAP_2(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_1(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_3(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_2(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_4(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_3(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_5(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_4(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_6(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_5(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_7(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_6(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_8(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_7(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_9(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_8(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_10(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_9(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_11(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_10(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_12(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_11(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_13(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_12(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_14(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_13(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_15(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_14(f, t, __VA_ARGS__)
#define WRAPIR_DETAIL_MAP_16(f, t, a, ...) f(t, a), WRAPIR_DETAIL_MAP_15(f, t, __VA_ARGS__)

#define WRAPIR_DETAIL_FIELD_NAME(t, field) std::string_view(#field)
#define WRAPIR_DETAIL_FIELD_POINTER(t, field) &t::field

/// Reflects `Type`'s fields, in declaration order (see the file comment).
#define WRAPIR_REFLECT(Type, ...)                                                                                 \
  template <>                                                                                                     \
  struct wrapir::ir::detail::reflection<Type> {                                                                   \
    static constexpr bool reflected = true;                                                                       \
    static constexpr std::size_t count = WRAPIR_DETAIL_NARGS(__VA_ARGS__);                                        \
    static constexpr std::array<std::string_view, count> names{                                                   \
        {WRAPIR_DETAIL_MAP(WRAPIR_DETAIL_FIELD_NAME, Type __VA_OPT__(, ) __VA_ARGS__)}};                         \
    /* visitor(&Type::field...) */                                                                                \
    template <class Visitor>                                                                                      \
    static constexpr decltype(auto) members(Visitor&& visitor) {                                                  \
      return static_cast<Visitor&&>(visitor)(WRAPIR_DETAIL_MAP(WRAPIR_DETAIL_FIELD_POINTER, Type __VA_OPT__(, ) \
                                                                   __VA_ARGS__));                                 \
    }                                                                                                             \
  }
