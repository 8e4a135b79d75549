#pragma once
/// \file
/// `wrapir::emit(program, emitter)`: visits every line of a program's body
/// with an emitter, after checking at compile time that the emitter handles
/// every line kind.
///
/// An emitter is any callable overload set: one `operator()(const Kind&)`
/// per line kind it handles. Forgetting one is a compile error that names
/// the missing kind:
///
/// ```
/// error: static assertion failed: the emitter has no handler for this line
///        kind; add operator()(const Kind&) or an explicit catch-all
/// note:  in instantiation of 'wrapir::emit_detail::no_handler_for_line_kind<wrapir::ir::Free>'
/// ```
///
/// A catch-all `void operator()(const auto&)` is the explicit opt-in to a
/// generic fallback. An emitter may also have `begin(const Program&)` and
/// `end(const Program&)`, called before the first and after the last line.
/// Subgraphs are not entered automatically: an emitter that renders them
/// calls `emit` on `program.subgraph(id)` from its Conditional / WhileLoop
/// handler.

#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>

#include <boost/mp11/list.hpp>

#include <type_traits>
#include <utility>
#include <variant>

namespace wrapir {

namespace emit_detail {

template <class T>
inline constexpr bool always_false = false;

/// Instantiated only for a line kind the emitter cannot take; the template
/// argument in the compiler's "in instantiation of" note names the kind.
template <class LineKind>
struct no_handler_for_line_kind {
  static_assert(always_false<LineKind>,
                "the emitter has no handler for this line kind; add operator()(const Kind&) or an explicit "
                "catch-all operator()(const auto&)");
};

template <class Emitter, class LineKind>
constexpr bool check_handler() {
  if constexpr (std::is_invocable_v<Emitter&, const LineKind&>) {
    return true;
  } else {
    (void)sizeof(no_handler_for_line_kind<LineKind>);
    return false;
  }
}

template <class Emitter, class... Kinds>
constexpr bool handles_all(boost::mp11::mp_list<Kinds...>) {
  return (std::is_invocable_v<Emitter&, const Kinds&> && ...);
}

template <class Emitter, class... Kinds>
constexpr bool check_all(boost::mp11::mp_list<Kinds...>) {
  // Counted, not folded with &&: every missing kind is reported, not only the first.
  return ((check_handler<Emitter, Kinds>() ? 0 : 1) + ...) == 0;
}

}  // namespace emit_detail

/// Whether `Emitter` can take every line kind.
template <class Emitter>
concept ExhaustiveEmitter = emit_detail::handles_all<Emitter>(ir::LineKinds{});

/// Calls `emitter(line)` for each line of `program.body`, in order (and
/// `emitter.begin(program)` / `emitter.end(program)` where present).
/// Every line kind must have a handler, or this fails to compile naming the
/// kinds that have none.
template <class Emitter>
void emit(const ir::Program& program, Emitter&& emitter) {
  using E = std::remove_reference_t<Emitter>;
  static_assert(emit_detail::check_all<E>(ir::LineKinds{}),
                "wrapir::emit: the emitter does not handle every line kind (see the notes above for which)");
  if constexpr (requires { emitter.begin(program); }) emitter.begin(program);
  for (const ir::Line& line : program.body)
    std::visit([&](const auto& l) { emitter(l); }, line);
  if constexpr (requires { emitter.end(program); }) emitter.end(program);
}

}  // namespace wrapir
