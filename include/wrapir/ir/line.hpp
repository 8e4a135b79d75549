#pragma once
/// \file
/// `wrapir::Line`: the closed variant of every line kind.
///
/// The line set is declared once, as the type list `LineKinds`; the variant,
/// the kind names, the kind indices and the emitter coverage checks are all
/// derived from it. Adding a line kind means adding its struct, with its
/// effects, to `ir/lines.hpp` and to this list: a kind without declared
/// effects does not compile here, and every exhaustive emitter fails to
/// compile until it handles the new kind.

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/lines.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <variant>

namespace wrapir::ir {

/// Every line kind, in the order of `ir/lines.hpp`.
using LineKinds = boost::mp11::mp_list<
    // memory
    Allocate, FreeIfNotReused, Reuse, Free, Null, PoolCreate, AllocFromPool, DeallocFromPool, CommBufferAllocate,
    CommBufferFree, WorkspaceAllocate, WorkspaceFree, DeviceCopy,
    // views
    Reinterpret,
    // kernels
    KernelDefinition, KernelCall, SymbolicCallArg, MultiKernelDefinition, MultiKernelCall,
    // extern
    ExternKernelAlloc, ExternKernelOut, ExternKernelMultiOut, MultiOutput, ScatterFallback, IndexPutFallback,
    DynamicScalar, UnbackedSymbolDefs, AssertSizeStride, AssertAlignment, AssertScalar,
    // control
    EnterSubgraph, ExitSubgraph, Conditional, WhileLoop, EnterDeviceContext, ExitDeviceContext, EnterStreamContext,
    ExitStreamContext, GetRawStream,
    // misc
    Comment>;

/// One line of a program: exactly one of the line kinds. Users `std::visit`
/// it; `wrapir::emit` visits every line of a program and checks coverage.
using Line = boost::mp11::mp_rename<LineKinds, std::variant>;

inline constexpr std::size_t line_kind_count = boost::mp11::mp_size<LineKinds>::value;

// sizeof(Line) is pinned (<= 104 bytes on 64-bit targets) in ir/impl/line.ipp.

/// Whether `T` is one of the line kinds.
template <class T>
inline constexpr bool is_line_kind = boost::mp11::mp_contains<LineKinds, T>::value;

template <class T>
concept LineKind = is_line_kind<T>;

/// The position of `T` in `LineKinds` (and in `Line`).
template <LineKind T>
inline constexpr std::size_t line_kind_index = boost::mp11::mp_find<LineKinds, T>::value;

namespace detail {

template <class... Ts>
constexpr std::array<std::string_view, sizeof...(Ts)> kind_names(boost::mp11::mp_list<Ts...>) {
  return {Ts::kind...};
}

/// Whether line kind `T` declares what it does (`ir/lines.hpp`, read by
/// `ir/effects.hpp`).
template <class T>
concept declares_effects = requires { T::effects(); };

/// Instantiated for every line kind; fails for one without `effects()`,
/// and the compiler's "in instantiation of" note names the kind.
template <class Kind>
struct line_kind_without_effects {
  static_assert(declares_effects<Kind>,
                "this line kind declares no effects: add `static constexpr auto effects()` beside its struct in "
                "ir/lines.hpp (return Effects{} for a line that touches nothing); see ir/effects.hpp");
  static constexpr bool value = declares_effects<Kind>;
};

// Counted, not folded with &&: every kind without effects is reported.
template <class... Ts>
constexpr bool all_declare_effects(boost::mp11::mp_list<Ts...>) {
  return ((line_kind_without_effects<Ts>::value ? 0 : 1) + ... + 0) == 0;
}

}  // namespace detail

/// The kind names, indexed like `Line`.
inline constexpr std::array<std::string_view, line_kind_count> line_kind_names = detail::kind_names(LineKinds{});

// Unique kind names and complete field lists are checked once, in
// tests/ir/line_test.cpp, not in every translation unit; a kind without
// effects must not compile anywhere.
static_assert(detail::all_declare_effects(LineKinds{}),
              "a line kind declares no effects (see the notes above for which)");

/// The kind name of the line `l` holds (`"KernelCall"`).
[[nodiscard]] WRAPIR_DECL std::string_view kind_name(const Line& l) noexcept;

/// The index of the kind called `name`, if there is one.
[[nodiscard]] constexpr std::optional<std::size_t> line_kind_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < line_kind_count; ++i)
    if (line_kind_names[i] == name) return i;
  return std::nullopt;
}

}  // namespace wrapir::ir

namespace wrapir {
using ir::Line;
}  // namespace wrapir

// Equality and hashing of lines (generic, through reflection) come with the
// variant, so `Line == Line` always works.
#include <wrapir/ir/reflect.hpp>  // IWYU pragma: export

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/ir/impl/line.ipp>
#endif
