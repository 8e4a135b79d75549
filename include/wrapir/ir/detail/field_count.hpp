#pragma once
/// \file
/// The number of fields of an aggregate, counted by how many initialisers
/// its brace initialisation accepts. Used to check that reflection lists
/// every field of a line struct.

#include <cstddef>
#include <type_traits>
#include <utility>

namespace wrapir::ir::detail {

// Converts to anything, so `T{anything...}` is well-formed exactly when T has
// at least that many fields.
struct anything {
  template <class U>
  operator U() const;  // NOLINT: implicit by design; declared only, for unevaluated use
};

template <class T, std::size_t... I>
constexpr bool brace_constructible(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), anything{})...}; };
}

/// Fields of the aggregate `T` (at most 32).
template <class T, std::size_t N = 0>
constexpr std::size_t aggregate_field_count() {
  static_assert(std::is_aggregate_v<T>, "aggregate_field_count: T is not an aggregate");
  if constexpr (N > 32) {
    return N;
  } else if constexpr (brace_constructible<T>(std::make_index_sequence<N + 1>{})) {
    return aggregate_field_count<T, N + 1>();
  } else {
    return N;
  }
}

}  // namespace wrapir::ir::detail
