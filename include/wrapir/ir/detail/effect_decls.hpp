#pragma once
/// \file
/// The vocabulary in which each line kind of `ir/lines.hpp` declares what it
/// does to storage, symbols, kernels and scopes: small descriptor templates
/// holding member pointers to the line's fields, listed by the line's
/// `static constexpr auto effects()`. `ir/effects.hpp` walks them
/// (`for_each_effect`) and says what each one means to a consumer; this
/// header is only the vocabulary, so that `ir/lines.hpp` stays cheap.
///
/// A descriptor names a field, never a value: `Allocates{&Allocate::buffer,
/// Storage::allocate}`. The field may have any of the shapes that lines use
/// (a BufferId, an optional or vector of them, a BufferArg, an Arg, a
/// NamedArg, a NamedBuffer, vectors and optionals of those, an expression,
/// a vector of expressions, a launch grid, kernel metadata, symbol bindings,
/// kernel, pool and graph ids); the walker knows each shape once.

#include <wrapir/ir/symbol.hpp>

#include <cstddef>
#include <cstdint>

namespace wrapir::ir {

/// What kind of storage a definition creates (see `ir/effects.hpp`).
/// Regions of a pool, views, reused storage and elements of multi-output
/// results have descriptors of their own (CarvesFromPool, Views, Reuses,
/// Selects), since they are not new storage.
enum class Storage : std::uint8_t {
  allocate,        // Allocate
  workspace,       // WorkspaceAllocate
  comm,            // CommBufferAllocate
  extern_result,   // what an extern operator returns (a tensor, or a multi-output tuple holding none)
  control_result,  // the outputs of Conditional and WhileLoop
};

/// How a line ends a buffer's name (the verifier checks roles against it).
enum class Release : std::uint8_t { free_if_not_reused, free, comm_free, workspace_free, pool_dealloc };

/// What a scope line opens or closes. The three kinds nest as one stack.
enum class ScopeKind : std::uint8_t { subgraph, device, stream };

/// A kernel of the table as a plain kernel or as a multi-kernel.
enum class KernelForm : std::uint8_t { plain, multi };

/// How a line touches a buffer it does not define or end.
enum class Access : std::uint8_t {
  read,
  write,
  read_write,
  /// Reads a value that may be a multi-output result (a tuple), which only
  /// MultiOutput and UnbackedSymbolDefs may read.
  read_result,
};

// ---- the list ----------------------------------------------------------------

/// A line kind's descriptors, in the order the line does them: what its
/// `effects()` returns, e.g. `Effects{Reads{&DeviceCopy::source}}`, or
/// `Effects{}` for a line that touches nothing. A minimal heterogeneous
/// list rather than a `std::tuple`: every translation unit that includes
/// the line kinds deduces all 38 declarations (the check that each kind has
/// one), and `std::tuple`'s constructor overloads made that 0.15 s of each.
template <class... D>
struct Effects;

template <>
struct Effects<> {};

template <class First, class... Rest>
struct Effects<First, Rest...> {
  constexpr Effects(First head, Rest... tail) : first(head), rest(tail...) {}  // NOLINT: implicit for brace lists
  First first;
  Effects<Rest...> rest;
};

template <class... D>
Effects(D...) -> Effects<D...>;

/// Calls `f(descriptor)` for each descriptor of `list`, in order.
template <class F>
constexpr void for_each_descriptor(const Effects<>&, F&&) {}
template <class First, class... Rest, class F>
constexpr void for_each_descriptor(const Effects<First, Rest...>& list, F&& f) {
  f(list.first);
  for_each_descriptor(list.rest, f);
}

// ---- descriptors -------------------------------------------------------------
// Each holds member pointers (`M` is `Field Line::*`) and, for some, a
// constant. Deduction guides let lines write `Reads{&KernelCall::args}`.

/// Defines the buffer(s) in `field` with new storage of kind `storage`.
template <class M>
struct Allocates {
  M field;
  Storage storage;
};
template <class M>
Allocates(M, Storage) -> Allocates<M>;

/// Ends the name of the buffer in `field`, as `how` says. `offered_if`, when
/// not null, is a bool member: when it is true the storage is not freed but
/// offered to a later Reuse (FreeIfNotReused with `reused`).
template <class M, class Flag = std::nullptr_t>
struct Frees {
  M field;
  Release how;
  Flag offered_if = nullptr;
};
template <class M>
Frees(M, Release) -> Frees<M>;
template <class M, class Flag>
Frees(M, Release, Flag) -> Frees<M, Flag>;

/// The buffer in `new_buffer` takes over the storage of the one in
/// `old_buffer`, whose name ends. `delete_old` is a bool member: when false
/// the old name stays bound to the storage (a program output that the new
/// buffer updates in place).
template <class Old, class New, class Flag>
struct Reuses {
  Old old_buffer;
  New new_buffer;
  Flag delete_old;
};
template <class Old, class New, class Flag>
Reuses(Old, New, Flag) -> Reuses<Old, New, Flag>;

/// Defines the buffer in `view` as an alias of the storage of the buffer in
/// `base`, which it reads.
template <class V, class B>
struct Views {
  V view;
  B base;
};
template <class V, class B>
Views(V, B) -> Views<V, B>;

/// Defines the buffer in `element` as an element of the multi-output result
/// in `tuple` (storage the tuple's extern call created), reading the tuple.
template <class E, class T>
struct Selects {
  E element;
  T tuple;
};
template <class E, class T>
Selects(E, T) -> Selects<E, T>;

/// Creates the storage of the pool in `field`.
template <class M>
struct CreatesPool {
  M field;
};
template <class M>
CreatesPool(M) -> CreatesPool<M>;

/// Defines the buffer in `buffer` as a region of the pool in `pool`.
template <class B, class P>
struct CarvesFromPool {
  B buffer;
  P pool;
};
template <class B, class P>
CarvesFromPool(B, P) -> CarvesFromPool<B, P>;

/// A region of the pool in `pool` is given back; when the bool member
/// `releases` is true the pool's storage is freed too.
template <class P, class Flag>
struct ReturnsToPool {
  P pool;
  Flag releases;
};
template <class P, class Flag>
ReturnsToPool(P, Flag) -> ReturnsToPool<P, Flag>;

/// Reads the buffers in `field` (and the expressions it holds: views,
/// symbolic arguments).
template <class M>
struct Reads {
  M field;
};
template <class M>
Reads(M) -> Reads<M>;

/// Writes the buffers in `field` (and reads the expressions it holds).
template <class M>
struct Writes {
  M field;
};
template <class M>
Writes(M) -> Writes<M>;

/// May read and write the buffers in `field` (and reads its expressions).
template <class M>
struct ReadsWrites {
  M field;
};
template <class M>
ReadsWrites(M) -> ReadsWrites<M>;

/// Reads the buffer in `field` as a value that may be a multi-output
/// result.
template <class M>
struct ReadsResult {
  M field;
};
template <class M>
ReadsResult(M) -> ReadsResult<M>;

/// Evaluates the expressions in `field` (no buffer).
template <class M>
struct ReadsSymbols {
  M field;
};
template <class M>
ReadsSymbols(M) -> ReadsSymbols<M>;

/// Defines the symbol(s) in `field` (an expression or symbol bindings),
/// which must be of origin `origin`.
template <class M>
struct DefinesSymbols {
  M field;
  SymbolOrigin origin;
};
template <class M>
DefinesSymbols(M, SymbolOrigin) -> DefinesSymbols<M>;

/// Defines the kernel in `field` as `form`.
template <class M>
struct DefinesKernel {
  M field;
  KernelForm form;
};
template <class M>
DefinesKernel(M, KernelForm) -> DefinesKernel<M>;

/// Launches the kernel in `field`, which must be defined as `form`.
template <class M>
struct Launches {
  M field;
  KernelForm form;
};
template <class M>
Launches(M, KernelForm) -> Launches<M>;

/// Refers to the kernel(s) in `field` (multi-kernel candidates), which must
/// be defined plain kernels.
template <class M>
struct UsesKernels {
  M field;
};
template <class M>
UsesKernels(M) -> UsesKernels<M>;

/// Opens a scope of kind `kind`; `graph`, when not null, is the member
/// naming the inlined subgraph (EnterSubgraph).
template <class G = std::nullptr_t>
struct EntersScope {
  ScopeKind kind;
  G graph = nullptr;
};
EntersScope(ScopeKind) -> EntersScope<>;
template <class G>
EntersScope(ScopeKind, G) -> EntersScope<G>;

/// Closes the innermost scope, which must be of kind `kind`.
struct ExitsScope {
  ScopeKind kind;
};

/// Runs the subgraph in `graph`, binding its inputs to the arguments in
/// `inputs` followed by those in `more_inputs`, and, when `outputs` is not
/// null, its outputs to the buffers there. Null members are absent.
template <class G, class In, class More = std::nullptr_t, class Out = std::nullptr_t>
struct CallsSubgraph {
  G graph;
  In inputs;
  More more_inputs = nullptr;
  Out outputs = nullptr;
};
template <class G, class In>
CallsSubgraph(G, In) -> CallsSubgraph<G, In>;
template <class G, class In, class More>
CallsSubgraph(G, In, More) -> CallsSubgraph<G, In, More>;
template <class G, class In, class More, class Out>
CallsSubgraph(G, In, More, Out) -> CallsSubgraph<G, In, More, Out>;

}  // namespace wrapir::ir
