#pragma once
/// \file
/// What a line does, read from the one table: `for_each_effect(line, v)`
/// calls `v(event)` for each thing the line does, in the order it does
/// them, from the `effects()` its struct declares in `ir/lines.hpp` (in the
/// spirit of MLIR's memory effects). Liveness, the memory planners and the
/// statistics read it instead of restating each line kind; so does the
/// verifier's model of definitions and ends.
///
/// Events (namespace `wrapir::ir::effect`)
/// ---------------------------------------
/// Buffers:
/// - `Allocated{buffer, storage}`: defines `buffer` with new storage of kind
///   `storage` (an extern result or control output that is a multi-output
///   tuple holds no storage of its own: its elements do).
/// - `Accessed{buffer, access, view}`: uses the live `buffer` (or `view`
///   of it, when not null) as `access` says. A KernelCall or MultiKernelCall `read_write`s every
///   buffer argument, and an extern operator every positional and keyword
///   argument: the IR has no per-parameter mutation metadata (KernelDecl
///   carries none, extern operators are opaque), so each buffer passed to
///   an opaque callee may be written; outs and destinations are `write`,
///   MultiOutput and UnbackedSymbolDefs sources `read_result`.
/// - `Released{buffer, how, offered}`: ends `buffer`'s name; its storage is
///   freed, unless `offered` (FreeIfNotReused with `reused`): then a later
///   Reuse takes it. `pool_dealloc` returns a region to its pool.
/// - `Reused{old_buffer, new_buffer, delete_old}`: `new_buffer` is defined
///   on `old_buffer`'s storage, whose name ends (stays bound when
///   `delete_old` is false).
/// - `Aliased{view, base}`: reads `base` and defines `view` on its storage;
///   views are never freed themselves.
/// - `Selected{element, tuple}`: reads the multi-output `tuple` and defines
///   `element`, storage its extern call created and the tuple still holds.
/// - `Carved{buffer, pool}`: defines `buffer` as a region of the live pool.
/// Defining a buffer (Allocated, Reused, Aliased, Selected, Carved)
/// evaluates its layout's expressions at that line.
///
/// Pools: `PoolCreated{pool}` creates the pool's storage (evaluating its
/// size); `PoolReturned{pool, releases_pool}` follows a region's
/// `Released{.., pool_dealloc}` and, with `releases_pool`, frees the pool.
///
/// Symbols: `SymbolsRead{expr}`: the line evaluates `expr` (grids, sizes,
/// offsets, symbolic arguments, view sizes and strides), so its symbols
/// must be defined; `SymbolDefined{symbol, origin}` defines `symbol`, which
/// must be declared with `origin`.
///
/// Kernels: `KernelDefined{kernel, form}`, `KernelLaunched{kernel, form}`
/// (the kernel must be defined as `form`), `KernelUsed{kernel}` (a
/// multi-kernel candidate, a defined plain kernel).
///
/// Scopes and subgraphs: `ScopeEntered{kind, graph}`, `ScopeExited{kind}`
/// (subgraph, device and stream scopes nest as one stack);
/// `SubgraphCalled{graph, inputs, more_inputs, outputs}`: runs `graph` with
/// its inputs bound to `inputs` then `more_inputs`, its outputs to
/// `outputs` (empty when they bind no buffer, as a loop condition's).
///
/// Order: events come in the order of the declaration, which is the order
/// the line acts: what it reads comes before what it defines from it
/// (`buf1 = op(buf1)` reads buf1 before defining it). `for_each_effect` on a
/// `Line` visits its kind; a valueless line throws `bad_variant_access`.
///
/// A visitor must take every event (an overload set, or a catch-all
/// `operator()(const auto&)` for those it ignores), like an emitter; a
/// missing overload is a compile error naming the event.
///
/// Boxed fields (`Box`, `VectorBox`, a launch grid's boxed forms) are
/// walked as the values they hold: a line declares `Reads{&ScatterFallback::src}`
/// whether or not its field is boxed.
///
/// Cost: every member pointer is a constant, so a visit compiles to the
/// field reads a hand-written `if constexpr` chain would make. Nested
/// argument lists are walked recursively (the verifier bounds their depth).

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/detail/effect_decls.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/symbol.hpp>

#include <boost/variant2/variant.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <type_traits>
#include <variant>
#include <vector>

namespace wrapir::ir {

namespace effect {

struct Allocated {
  BufferId buffer;
  Storage storage;
};
struct Accessed {
  BufferId buffer;
  Access access;
  /// The view of `buffer` the line passes (a BufferArg's), or null.
  const View* view = nullptr;
};
struct Released {
  BufferId buffer;
  Release how;
  bool offered;
};
struct Reused {
  BufferId old_buffer;
  BufferId new_buffer;
  bool delete_old;
};
struct Aliased {
  BufferId view;
  BufferId base;
};
struct Selected {
  BufferId element;
  BufferId tuple;
};
struct Carved {
  BufferId buffer;
  PoolId pool;
};
struct PoolCreated {
  PoolId pool;
};
struct PoolReturned {
  PoolId pool;
  bool releases_pool;
};
struct SymbolsRead {
  expr::Expr expr;
};
struct SymbolDefined {
  expr::Expr symbol;
  SymbolOrigin origin;
};
struct KernelDefined {
  KernelId kernel;
  KernelForm form;
};
struct KernelLaunched {
  KernelId kernel;
  KernelForm form;
};
struct KernelUsed {
  KernelId kernel;
};
struct ScopeEntered {
  ScopeKind kind;
  std::optional<GraphId> graph;
};
struct ScopeExited {
  ScopeKind kind;
};
struct SubgraphCalled {
  GraphId graph;
  std::span<const Arg> inputs;
  std::span<const Arg> more_inputs;
  std::span<const BufferId> outputs;
};

/// An overload set from lambdas: `effect::Handlers{[&](const
/// effect::Allocated&) {...}, [](const auto&) {}}`.
template <class... F>
struct Handlers : F... {
  using F::operator()...;
};
template <class... F>
Handlers(F...) -> Handlers<F...>;

}  // namespace effect

namespace detail::effects {

/// Reaches an event to the visitor, with a plain error when it has no
/// overload for it.
template <class V, class E>
constexpr void deliver(V& v, const E& e) {
  static_assert(std::is_invocable_v<V&, const E&>,
                "the effect visitor has no overload for this event (see the note naming it); add one or a "
                "catch-all operator()(const auto&)");
  v(e);
}

/// The field shapes, each walked once. Members, so that every overload sees
/// the others (the shapes nest: lists of arguments of buffers).
template <class V>
struct Walker {
  V& v;

  // ---- buffer ids (definitions and ends) ----
  template <class F>
  static void each_id(BufferId b, F&& f) {
    f(b);
  }
  template <class F>
  static void each_id(const std::optional<BufferId>& b, F&& f) {
    if (b) f(*b);
  }
  template <class F>
  static void each_id(const std::vector<BufferId>& bs, F&& f) {
    for (const BufferId b : bs) f(b);
  }

  // ---- expressions ----
  void symbols(const expr::Expr& e) const { deliver(v, effect::SymbolsRead{e}); }
  void symbols(const std::vector<expr::Expr>& es) const {
    for (const expr::Expr& e : es) symbols(e);
  }
  void symbols(const View& view) const {
    symbols(view.sizes);
    symbols(view.strides);
    symbols(view.offset);
  }
  void symbols(const LaunchGrid& grid) const {
    if (const ExplicitGrid* g = grid_if<ExplicitGrid>(grid)) {
      symbols(g->x);
      symbols(g->y);
      symbols(g->z);
    } else if (const TypedGrid* t = grid_if<TypedGrid>(grid)) {
      for (const NamedExpr& n : t->numels) symbols(n.value);
    }
  }

  // ---- accesses: buffers and the expressions around them ----
  void access(BufferId b, Access a) const { deliver(v, effect::Accessed{b, a}); }
  void access(const BufferArg& b, Access a) const {
    deliver(v, effect::Accessed{b.buffer, a, b.view ? &*b.view : nullptr});
    if (b.view) symbols(*b.view);
  }
  void access(const Arg& arg, Access a) const {
    if (const ArgList* l = arg.get_if<ArgList>()) return access_items(*l, a);
    access_leaf(arg, a);
  }
  void access_leaf(const Arg& arg, Access a) const {
    if (const BufferArg* b = arg.get_if<BufferArg>())
      access(*b, a);
    else if (const expr::Expr* e = arg.get_if<expr::Expr>())
      symbols(*e);
  }
  /// The items of nested lists in order, without recursion: a program built
  /// in C++ may nest lists as deep as it likes (the loaders stop at their
  /// `max_depth`, the verifier and the emitters refuse more than 64 levels
  /// with a diagnostic, and those must be reached, not a stack overflow).
  void access_items(const ArgList& list, Access a) const {
    std::vector<std::pair<const ArgList*, std::size_t>> open{{&list, 0}};
    while (!open.empty()) {
      auto& [l, next] = open.back();
      if (next == l->items.size()) {
        open.pop_back();
        continue;
      }
      const Arg& item = l->items[next++];
      if (const ArgList* inner = item.get_if<ArgList>()) open.emplace_back(inner, 0);  // `l`, `next` not used after
      else access_leaf(item, a);
    }
  }
  void access(const NamedArg& n, Access a) const { access(n.value, a); }
  void access(const NamedBuffer& n, Access a) const { access(n.buffer, a); }
  void access(const KernelMetadata& m, Access a) const {
    for (const NamedArg& c : m.constants) access(c, a);
  }
  template <class T>
  void access(const std::optional<T>& o, Access a) const {
    if (o) access(*o, a);
  }
  template <class T>
  void access(const Box<T>& b, Access a) const {
    access(*b, a);
  }
  template <class T>
  void access(const std::vector<T>& xs, Access a) const {
    for (const T& x : xs) access(x, a);
  }
  template <class T>
  void access(const VectorBox<T>& xs, Access a) const {
    for (const T& x : xs) access(x, a);
  }

  // ---- descriptors ----
  template <class L, class M>
  void operator()(const L& l, const Allocates<M>& d) const {
    each_id(l.*d.field, [&](BufferId b) { deliver(v, effect::Allocated{b, d.storage}); });
  }
  template <class L, class M, class Flag>
  void operator()(const L& l, const Frees<M, Flag>& d) const {
    bool offered = false;
    if constexpr (!std::is_same_v<Flag, std::nullptr_t>) offered = l.*d.offered_if;
    each_id(l.*d.field, [&](BufferId b) { deliver(v, effect::Released{b, d.how, offered}); });
  }
  template <class L, class Old, class New, class Flag>
  void operator()(const L& l, const Reuses<Old, New, Flag>& d) const {
    deliver(v, effect::Reused{l.*d.old_buffer, l.*d.new_buffer, l.*d.delete_old});
  }
  template <class L, class View_, class Base>
  void operator()(const L& l, const Views<View_, Base>& d) const {
    deliver(v, effect::Aliased{l.*d.view, l.*d.base});
  }
  template <class L, class E, class T>
  void operator()(const L& l, const Selects<E, T>& d) const {
    deliver(v, effect::Selected{l.*d.element, l.*d.tuple});
  }
  template <class L, class M>
  void operator()(const L& l, const CreatesPool<M>& d) const {
    deliver(v, effect::PoolCreated{l.*d.field});
  }
  template <class L, class B, class P>
  void operator()(const L& l, const CarvesFromPool<B, P>& d) const {
    deliver(v, effect::Carved{l.*d.buffer, l.*d.pool});
  }
  template <class L, class P, class Flag>
  void operator()(const L& l, const ReturnsToPool<P, Flag>& d) const {
    deliver(v, effect::PoolReturned{l.*d.pool, l.*d.releases});
  }
  template <class L, class M>
  void operator()(const L& l, const Reads<M>& d) const {
    access(l.*d.field, Access::read);
  }
  template <class L, class M>
  void operator()(const L& l, const Writes<M>& d) const {
    access(l.*d.field, Access::write);
  }
  template <class L, class M>
  void operator()(const L& l, const ReadsWrites<M>& d) const {
    access(l.*d.field, Access::read_write);
  }
  template <class L, class M>
  void operator()(const L& l, const ReadsResult<M>& d) const {
    access(l.*d.field, Access::read_result);
  }
  template <class L, class M>
  void operator()(const L& l, const ReadsSymbols<M>& d) const {
    symbols(l.*d.field);
  }
  template <class L, class M>
  void operator()(const L& l, const DefinesSymbols<M>& d) const {
    const auto& field = l.*d.field;
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::vector<SymbolBinding>>) {
      for (const SymbolBinding& b : field) deliver(v, effect::SymbolDefined{b.symbol, d.origin});
    } else {
      deliver(v, effect::SymbolDefined{field, d.origin});
    }
  }
  template <class L, class M>
  void operator()(const L& l, const DefinesKernel<M>& d) const {
    deliver(v, effect::KernelDefined{l.*d.field, d.form});
  }
  template <class L, class M>
  void operator()(const L& l, const Launches<M>& d) const {
    deliver(v, effect::KernelLaunched{l.*d.field, d.form});
  }
  template <class L, class M>
  void operator()(const L& l, const UsesKernels<M>& d) const {
    for (const KernelId k : l.*d.field) deliver(v, effect::KernelUsed{k});
  }
  template <class L, class G>
  void operator()(const L& l, const EntersScope<G>& d) const {
    if constexpr (std::is_same_v<G, std::nullptr_t>)
      deliver(v, effect::ScopeEntered{d.kind, std::nullopt});
    else
      deliver(v, effect::ScopeEntered{d.kind, l.*d.graph});
  }
  template <class L>
  void operator()(const L&, const ExitsScope& d) const {
    deliver(v, effect::ScopeExited{d.kind});
  }
  template <class L, class G, class In, class More, class Out>
  void operator()(const L& l, const CallsSubgraph<G, In, More, Out>& d) const {
    effect::SubgraphCalled call{l.*d.graph, l.*d.inputs, {}, {}};
    if constexpr (!std::is_same_v<More, std::nullptr_t>) call.more_inputs = l.*d.more_inputs;
    if constexpr (!std::is_same_v<Out, std::nullptr_t>) call.outputs = l.*d.outputs;
    deliver(v, call);
  }
};

}  // namespace detail::effects

/// Calls `visitor(event)` for each effect of `line`, in order (see the file
/// comment).
template <LineKind T, class V>
void for_each_effect(const T& line, V&& visitor) {
  const detail::effects::Walker<std::remove_reference_t<V>> walk{visitor};
  for_each_descriptor(T::effects(), [&](const auto& d) { walk(line, d); });
}

/// `for_each_effect` on the kind `line` holds.
template <class V>
void for_each_effect(const Line& line, V&& visitor) {
  std::visit([&](const auto& l) { for_each_effect(l, visitor); }, line);
}

/// Calls `f(BufferId)` for each buffer an effect of `line` names: accessed,
/// defined, ended, aliased, selected or carved (a Reuse names both of its
/// buffers). A buffer named twice is passed twice.
template <class F>
void for_each_buffer_named(const Line& line, F&& f) {
  for_each_effect(line, effect::Handlers{
                            [&](const effect::Allocated& e) { f(e.buffer); },
                            [&](const effect::Accessed& e) { f(e.buffer); },
                            [&](const effect::Released& e) { f(e.buffer); },
                            [&](const effect::Reused& e) {
                              f(e.old_buffer);
                              f(e.new_buffer);
                            },
                            [&](const effect::Aliased& e) {
                              f(e.view);
                              f(e.base);
                            },
                            [&](const effect::Selected& e) {
                              f(e.element);
                              f(e.tuple);
                            },
                            [&](const effect::Carved& e) { f(e.buffer); },
                            [](const auto&) {},
                        });
}

}  // namespace wrapir::ir
