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
/// generic fallback. A handler that takes a line by non-const reference
/// (`operator()(KernelCall&)`) could never fire, since lines are visited as
/// const; next to a catch-all it would silently lose every line to it, so
/// it is a compile error too (`mutable_handler_for_line_kind<...>`).
///
/// An emitter may also have `begin(const Program&)` and `end(const
/// Program&)`, called before the first and after the last line.
///
/// Subgraphs: `emit(program, emitter)` visits the program's own body only.
/// `emit(program, emitter, Subgraphs::visit)` also enters the subgraphs
/// that lines run — a Conditional's true then false graph, a WhileLoop's
/// condition then body graph — right after the line that runs them, in
/// program order and recursively, calling `begin_subgraph(const Program&)`
/// and `end_subgraph(const Program&)` around each where the emitter has
/// them. (EnterSubgraph scopes need no entering: their lines are inlined in
/// the body.) Each subgraph is visited once, after the first line that runs
/// it; one that no line runs, never. (Visiting it again at every line that
/// runs it would cost 2^d visits for d levels of subgraphs each run twice —
/// a hang on a program of a few kilobytes.)

#include <wrapir/ir/line.hpp>
#include <wrapir/ir/program.hpp>

#include <boost/mp11/list.hpp>

#include <array>
#include <concepts>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <variant>

namespace wrapir {

/// Whether `emit` enters the subgraphs that Conditional and WhileLoop lines run.
enum class Subgraphs : bool { skip, visit };

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

/// Instantiated only for a line kind whose handler takes it by non-const
/// reference, which `emit` never calls.
template <class LineKind>
struct mutable_handler_for_line_kind {
  static_assert(always_false<LineKind>,
                "the emitter's handler for this line kind takes Kind&, which never fires: emit passes lines as "
                "const Kind& (a catch-all takes them instead); declare it operator()(const Kind&)");
};

struct probe_result {};

// Handlers are told apart by what they beat in overload resolution. A probe
// derived from the emitter adds a constrained template for exactly `Kind`:
// taking `T&`, it wins for a mutable `Kind` lvalue against every catch-all
// (`const auto&`, `auto&`, `auto&&`) and every const handler, and loses to
// (or is ambiguous with) a handler taking `Kind&` or `Kind` by value...
template <class Emitter, class Kind>
struct LvalueProbe : Emitter {
  using Emitter::operator();
  template <class T>
    requires std::same_as<std::remove_cv_t<T>, Kind>
  probe_result operator()(T&);
  template <class T>
    requires std::same_as<std::remove_cv_t<T>, Kind>
  probe_result operator()(T&) const;
};
// ... and taking `T&&`, it wins for a `Kind` rvalue against all of those
// but the by-value handler, which const lines reach as well.
template <class Emitter, class Kind>
struct RvalueProbe : Emitter {
  using Emitter::operator();
  template <class T>
    requires std::same_as<T, Kind>
  probe_result operator()(T&&);
  template <class T>
    requires std::same_as<T, Kind>
  probe_result operator()(T&&) const;
};

template <class Probe, class Arg>
constexpr bool probe_loses() {
  if constexpr (std::is_invocable_v<Probe, Arg>) return !std::is_same_v<std::invoke_result_t<Probe, Arg>, probe_result>;
  else return true;  // ambiguous: the emitter has a handler for exactly this
}

// Probed twice, through a mutable and through a const emitter, so that the
// probe's own qualification never decides: const handlers (lambdas) are
// seen in the second.
template <class Emitter, class Kind, template <class> class Qualified>
constexpr bool has_mutable_handler_as() {
  return probe_loses<Qualified<LvalueProbe<Emitter, Kind>>, Kind&>() &&
         !probe_loses<Qualified<RvalueProbe<Emitter, Kind>>, Kind&&>();
}
template <class T>
using mutable_ref = T&;
template <class T>
using const_ref = const T&;

/// Whether the emitter has a handler that takes `Kind&` (and so would never
/// fire). Handlers written as templates for `Kind&` alone are not seen.
template <class Emitter, class Kind>
constexpr bool has_mutable_handler() {
  if constexpr (!std::is_class_v<Emitter> || std::is_final_v<Emitter> || std::is_const_v<Emitter>) {
    return false;  // cannot be derived from: not checked
  } else {
    return has_mutable_handler_as<Emitter, Kind, mutable_ref>() || has_mutable_handler_as<Emitter, Kind, const_ref>();
  }
}

template <class Emitter, class LineKind>
constexpr bool check_handler() {
  if constexpr (has_mutable_handler<Emitter, LineKind>()) {
    (void)sizeof(mutable_handler_for_line_kind<LineKind>);
    return false;
  } else if constexpr (std::is_invocable_v<Emitter&, const LineKind&>) {
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

/// The subgraphs a line runs, in the order they are entered.
inline std::array<ir::GraphId, 2> called_subgraphs(const ir::Conditional& l) { return {l.true_graph, l.false_graph}; }
inline std::array<ir::GraphId, 2> called_subgraphs(const ir::WhileLoop& l) { return {l.cond_graph, l.body_graph}; }

template <class Emitter>
void visit_body(const ir::Program& program, Emitter& emitter, Subgraphs subgraphs,
                std::unordered_set<const ir::Program*>& entered) {
  for (const ir::Line& line : program.body) {
    std::visit(
        [&](const auto& l) {
          emitter(l);
          if constexpr (requires { called_subgraphs(l); }) {
            if (subgraphs == Subgraphs::visit)
              for (const ir::GraphId id : called_subgraphs(l)) {
                // Checked access: an id outside the table (an unverified
                // program) throws std::out_of_range.
                const ir::Program& graph = program.subgraph(id);
                if (!entered.insert(&graph).second) continue;
                if constexpr (requires { emitter.begin_subgraph(graph); }) emitter.begin_subgraph(graph);
                visit_body(graph, emitter, subgraphs, entered);
                if constexpr (requires { emitter.end_subgraph(graph); }) emitter.end_subgraph(graph);
              }
          }
        },
        line);
  }
}

}  // namespace emit_detail

/// Whether `Emitter` can take every line kind.
template <class Emitter>
concept ExhaustiveEmitter = emit_detail::handles_all<Emitter>(ir::LineKinds{});

/// Calls `emitter(line)` for each line of `program.body`, in order (and
/// `emitter.begin(program)` / `emitter.end(program)` where present); with
/// `Subgraphs::visit`, also for the lines of the subgraphs that lines run
/// (see the file comment). Every line kind must have a handler taking it as
/// const, or this fails to compile naming the kinds that have none.
template <class Emitter>
void emit(const ir::Program& program, Emitter&& emitter, Subgraphs subgraphs = Subgraphs::skip) {
  using E = std::remove_reference_t<Emitter>;
  static_assert(emit_detail::check_all<E>(ir::LineKinds{}),
                "wrapir::emit: the emitter does not handle every line kind (see the notes above for which)");
  if constexpr (requires { emitter.begin(program); }) emitter.begin(program);
  std::unordered_set<const ir::Program*> entered;
  emit_detail::visit_body(program, emitter, subgraphs, entered);
  if constexpr (requires { emitter.end(program); }) emitter.end(program);
}

}  // namespace wrapir
