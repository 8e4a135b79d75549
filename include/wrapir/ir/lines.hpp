#pragma once
/// \file
/// The line kinds of the Wrapper IR: one plain struct per kind, grouped as
/// memory, views, kernels, extern, control and misc.
///
/// Each struct documents what the line means when a program runs it. Lines
/// refer to buffers, kernels, pools and subgraphs by typed ids into the
/// tables of the program that holds them (`ir/program.hpp`), and to
/// symbolic values by expressions of the program's context. `kind` is the
/// name the text form, JSON and diagnostics use.
///
/// The structs are reflected (`WRAPIR_REFLECT`, at the end of this file) so that equality, hashing, field iteration, the
/// text form and JSON are written once for all of them (`ir/reflect.hpp`).
/// `ir/line.hpp` lists them, in this order, as the closed variant `Line`.
///
/// Each struct also declares, once, what it does (`static constexpr auto
/// effects()`): which buffers it allocates, reads, writes, frees or aliases,
/// which pools it creates, carves or releases, which symbols and kernels it
/// defines or uses, which scopes it opens or closes and which subgraphs it
/// runs. The descriptors (`ir/detail/effect_decls.hpp`) hold member
/// pointers to the fields they are about and come in the order the line
/// does them (reads before the definitions they feed). Liveness, the memory
/// planners, the statistics and the verifier read them through
/// `ir/effects.hpp` rather than restating each kind; a kind without a
/// declaration does not compile (`ir/line.hpp`).
///
/// Inductor's raw-text lines (reference §1.5) are typed here: stream fetch
/// (GetRawStream), workspace zeroing (WorkspaceAllocate's zero mode), subgraph
/// call plumbing and `if`/`while` (Conditional, WhileLoop), device copies
/// (DeviceCopy), size/stride asserts (AssertSizeStride).

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/box.hpp>
#include <wrapir/ir/detail/effect_decls.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/symbol.hpp>

#include <wrapir/ir/detail/reflection.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::ir {

/// How a workspace's memory is initialised (reference §7).
/// - `uninitialized`: the kernel needs no particular contents;
/// - `zero_on_call`: zeroed before each call (the kernel may leave it dirty);
/// - `zero_per_graph`: zeroed once per program run; the kernel restores zeros,
///   so the workspace lives for the whole run and is never freed per call.
enum class WorkspaceZeroMode : std::uint8_t { uninitialized, zero_on_call, zero_per_graph };

inline constexpr std::size_t workspace_zero_mode_count = 3;

/// Inductor's enumerator names: `UNINITIALIZED`, `ZERO_ON_CALL`, `ZERO_PER_GRAPH`.
[[nodiscard]] constexpr std::string_view workspace_zero_mode_name(WorkspaceZeroMode m) noexcept {
  constexpr std::array<std::string_view, workspace_zero_mode_count> names{"UNINITIALIZED", "ZERO_ON_CALL",
                                                                          "ZERO_PER_GRAPH"};
  const auto i = static_cast<std::size_t>(m);
  return i < names.size() ? names[i] : std::string_view{"<invalid zero mode>"};
}

/// The zero mode of one workspace shared by two requests (Inductor's
/// `WorkspaceZeroMode.combine`): equal modes stay; `uninitialized` yields to
/// the other; `zero_on_call` and `zero_per_graph` do not combine (no mode
/// satisfies both: absent).
[[nodiscard]] constexpr std::optional<WorkspaceZeroMode> combine(WorkspaceZeroMode a, WorkspaceZeroMode b) noexcept {
  if (a == b) return a;
  if (a == WorkspaceZeroMode::uninitialized) return b;
  if (b == WorkspaceZeroMode::uninitialized) return a;
  return std::nullopt;
}

[[nodiscard]] constexpr std::optional<WorkspaceZeroMode> workspace_zero_mode_from_name(std::string_view s) noexcept {
  for (std::size_t i = 0; i < workspace_zero_mode_count; ++i)
    if (workspace_zero_mode_name(static_cast<WorkspaceZeroMode>(i)) == s) return static_cast<WorkspaceZeroMode>(i);
  return std::nullopt;
}

/// Where a line comes from in the model, as Inductor records it: the FX
/// nodes it computes and their ATen operators (the `# Topologically Sorted
/// Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]` comment
/// Inductor writes before a kernel's definition and its call), and the
/// `LineContext` in force where Inductor wrote the line (the node its source
/// map attributes the line to). Data for readers and tools; it changes
/// nothing a program does. Each entry is one line of text, not empty (the
/// verifier checks). Emitters that write comments write Inductor's.
struct Provenance {
  std::vector<std::string> source_nodes{};
  std::vector<std::string> aten{};
  std::optional<std::string> context{};
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

/// Creates storage for `buffer` with its declared layout (`empty_strided`).
/// The buffer is live from here until it is freed or reused.
struct Allocate {
  static constexpr std::string_view kind = "Allocate";
  BufferId buffer{};
  static constexpr auto effects() { return Effects{Allocates{&Allocate::buffer, Storage::allocate}}; }
};

/// `buffer` is dead: free it, unless a reuse planner gave its storage to a
/// later allocation, in which case it sets `reused` and the line frees
/// nothing (the storage lives on under the new buffer's name).
struct FreeIfNotReused {
  static constexpr std::string_view kind = "FreeIfNotReused";
  BufferId buffer{};
  bool reused = false;
  // `reused`: the storage is not freed but offered to the Reuse that takes it.
  static constexpr auto effects() {
    return Effects{Frees{&FreeIfNotReused::buffer, Release::free_if_not_reused, &FreeIfNotReused::reused}};
  }
};

/// `new_buffer` takes over the storage of the dead `old_buffer` instead of
/// being allocated (reinterpreted when the layouts differ). Afterwards
/// `old_buffer` is dead; `delete_old` says whether its name is released
/// (false when the old buffer is a program output and must stay bound).
/// The old storage must be large enough for the new layout.
struct Reuse {
  static constexpr std::string_view kind = "Reuse";
  BufferId old_buffer{};
  BufferId new_buffer{};
  bool delete_old = true;
  static constexpr auto effects() {
    return Effects{Reuses{&Reuse::old_buffer, &Reuse::new_buffer, &Reuse::delete_old}};
  }
};

/// Releases a buffer that is never offered for reuse: a donated graph
/// input (or another buffer the program owns but must not recycle).
struct Free {
  static constexpr std::string_view kind = "Free";
  BufferId buffer{};
  static constexpr auto effects() { return Effects{Frees{&Free::buffer, Release::free}}; }
};

/// A cancelled memory line (planning removed it); does nothing.
struct Null {
  static constexpr std::string_view kind = "Null";
  static constexpr auto effects() { return Effects{}; }
};

/// Allocates the storage of `pool` (its declared byte size, on its device).
struct PoolCreate {
  static constexpr std::string_view kind = "PoolCreate";
  PoolId pool{};
  static constexpr auto effects() { return Effects{CreatesPool{&PoolCreate::pool}}; }
};

/// Makes `buffer` a view of `pool`'s storage starting `offset_bytes` bytes in
/// (a multiple of 64 when planned by wrapir). Two buffers carved from one
/// pool must not overlap while both are live.
struct AllocFromPool {
  static constexpr std::string_view kind = "AllocFromPool";
  BufferId buffer{};
  PoolId pool{};
  expr::Expr offset_bytes{};
  // The offset is evaluated before the region is defined.
  static constexpr auto effects() {
    return Effects{ReadsSymbols{&AllocFromPool::offset_bytes},
                      CarvesFromPool{&AllocFromPool::buffer, &AllocFromPool::pool}};
  }
};

/// `buffer` (carved from `pool`) is dead. When `releases_pool` is set this is
/// the pool's last use: the pool's storage is freed too, and no buffer
/// carved from it may be used afterwards.
struct DeallocFromPool {
  static constexpr std::string_view kind = "DeallocFromPool";
  BufferId buffer{};
  PoolId pool{};
  bool releases_pool = false;
  static constexpr auto effects() {
    return Effects{Frees{&DeallocFromPool::buffer, Release::pool_dealloc},
                      ReturnsToPool{&DeallocFromPool::pool, &DeallocFromPool::releases_pool}};
  }
};

/// Allocates a communication buffer (role `comm`) in its group's symmetric
/// memory (`empty_strided_p2p`).
struct CommBufferAllocate {
  static constexpr std::string_view kind = "CommBufferAllocate";
  BufferId buffer{};
  static constexpr auto effects() {
    return Effects{Allocates{&CommBufferAllocate::buffer, Storage::comm}};
  }
};

/// Frees a communication buffer.
struct CommBufferFree {
  static constexpr std::string_view kind = "CommBufferFree";
  BufferId buffer{};
  static constexpr auto effects() { return Effects{Frees{&CommBufferFree::buffer, Release::comm_free}}; }
};

/// Allocates a kernel's scratch `workspace` (role `workspace`; its outer
/// name is the buffer's name and its count of elements the buffer's single
/// size), initialised as `zero_mode` says. `inner_name` is the kernel
/// parameter it is passed as (`ws_ptr`); multi-kernels merge workspaces that
/// share it.
struct WorkspaceAllocate {
  static constexpr std::string_view kind = "WorkspaceAllocate";
  BufferId workspace{};
  WorkspaceZeroMode zero_mode = WorkspaceZeroMode::uninitialized;
  Name inner_name = "ws_ptr";
  static constexpr auto effects() {
    return Effects{Allocates{&WorkspaceAllocate::workspace, Storage::workspace}};
  }
};

/// Frees a workspace after the call that used it (not used for
/// `zero_per_graph` workspaces, which live for the whole run).
struct WorkspaceFree {
  static constexpr std::string_view kind = "WorkspaceFree";
  BufferId workspace{};
  static constexpr auto effects() {
    return Effects{Frees{&WorkspaceFree::workspace, Release::workspace_free}};
  }
};

/// Copies the elements of `source` into `destination` (`dst.copy_(src)`),
/// possibly across devices; both must have the same sizes. With
/// `non_blocking` the copy may be asynchronous with respect to the host.
struct DeviceCopy {
  static constexpr std::string_view kind = "DeviceCopy";
  BufferArg destination{};
  BufferArg source{};
  bool non_blocking = false;
  static constexpr auto effects() {
    return Effects{Writes{&DeviceCopy::destination}, Reads{&DeviceCopy::source}};
  }
};

// ---------------------------------------------------------------------------
// Views
// ---------------------------------------------------------------------------

/// Defines `view` as an alias of `base`'s storage with the view's declared
/// layout (`reinterpret_tensor`); the layout's storage offset counts in
/// elements of the base's storage. `view` owns no storage: it lives while
/// `base` does and is never freed itself.
struct Reinterpret {
  static constexpr std::string_view kind = "Reinterpret";
  BufferId view{};
  BufferId base{};
  static constexpr auto effects() { return Effects{Views{&Reinterpret::view, &Reinterpret::base}}; }
};

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

/// Defines `kernel` (an entry of the kernel table) from its source or binary
/// and the metadata its launcher needs. A kernel is defined once, before
/// its first call; emitters hoist definitions into the module's header.
struct KernelDefinition {
  static constexpr std::string_view kind = "KernelDefinition";
  KernelId kernel{};
  KernelSource source{};
  Box<KernelMetadata> metadata{};  // boxed: rare and large, it set the size of every line
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  // The metadata's constants are arguments bound here: read here.
  static constexpr auto effects() {
    return Effects{DefinesKernel{&KernelDefinition::kernel, KernelForm::plain},
                      Reads{&KernelDefinition::metadata}};
  }
};

/// Launches `kernel` with `args` (one per signature parameter, with
/// `arg_types` as the call site typed them) on `device` and stream
/// `stream` (0 = the device's current stream). The grid comes from `grid`.
struct KernelCall {
  static constexpr std::string_view kind = "KernelCall";
  KernelId kernel{};
  std::vector<Arg> args{};
  ArgTypes arg_types{};
  LaunchGrid grid{};
  Device device{};
  std::uint32_t stream = 0;
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  // The IR does not say which parameters a kernel writes (KernelDecl has no
  // mutation metadata), so every buffer argument may be read and written.
  static constexpr auto effects() {
    return Effects{Launches{&KernelCall::kernel, KernelForm::plain}, ReadsWrites{&KernelCall::args},
                      ReadsSymbols{&KernelCall::grid}};
  }
};

/// Defines the symbol `symbol` (origin `computed`) as `value`, e.g. a named
/// numel `triton_poi_fused_add_0_xnumel = s0*s1` or a precomputed size.
struct SymbolicCallArg {
  static constexpr std::string_view kind = "SymbolicCallArg";
  expr::Expr symbol{};
  expr::Expr value{};
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  // The value is evaluated before the symbol is defined: `x = x + 1` reads
  // `x` before its definition.
  static constexpr auto effects() {
    return Effects{ReadsSymbols{&SymbolicCallArg::value},
                      DefinesSymbols{&SymbolicCallArg::symbol, SymbolOrigin::computed}};
  }
};

/// Defines `kernel` as a choice among `candidates` (reference §5): on its
/// first call each candidate is benchmarked and the fastest kept, or, when
/// `shape_keys` is given (one per candidate, nullopt = no hint), the one
/// whose shapes are closest to the call's. Candidate i receives the
/// arguments `arg_index[i]` selects from the combined argument list.
struct MultiKernelDefinition {
  static constexpr std::string_view kind = "MultiKernelDefinition";
  KernelId kernel{};
  std::vector<KernelId> candidates{};
  std::vector<std::vector<ArgSlice>> arg_index{};
  std::vector<std::optional<ShapeKey>> shape_keys{};
  static constexpr auto effects() {
    return Effects{DefinesKernel{&MultiKernelDefinition::kernel, KernelForm::multi},
                      UsesKernels{&MultiKernelDefinition::candidates}};
  }
};

/// Calls a multi-kernel with the combined argument list; each candidate
/// launches with its own launcher grid.
struct MultiKernelCall {
  static constexpr std::string_view kind = "MultiKernelCall";
  KernelId kernel{};
  std::vector<Arg> args{};
  ArgTypes arg_types{};
  Device device{};
  std::uint32_t stream = 0;
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  // As KernelCall: any candidate may write any buffer argument.
  static constexpr auto effects() {
    return Effects{Launches{&MultiKernelCall::kernel, KernelForm::multi}, ReadsWrites{&MultiKernelCall::args}};
  }
};

// ---------------------------------------------------------------------------
// Extern (library and fallback) kernels
// ---------------------------------------------------------------------------

/// Calls operator `kernel` (`aten.foo.default`), which allocates and returns
/// its result: `result = kernel(args..., kwargs...)`. `result` is defined
/// here (no Allocate); no result when the operator returns nothing.
struct ExternKernelAlloc {
  static constexpr std::string_view kind = "ExternKernelAlloc";
  std::optional<BufferId> result{};
  OpName kernel{};
  std::vector<Arg> args{};
  VectorBox<NamedArg> kwargs{};  // boxed: most calls have none
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  // An operator is opaque: its arguments may be read and written (a
  // fallback may mutate an input). The result is defined after them.
  static constexpr auto effects() {
    return Effects{ReadsWrites{&ExternKernelAlloc::args}, ReadsWrites{&ExternKernelAlloc::kwargs},
                      Allocates{&ExternKernelAlloc::result, Storage::extern_result}};
  }
};

/// Calls operator `kernel` writing into the live buffer `out`:
/// `kernel(args..., kwargs..., out=out)`.
struct ExternKernelOut {
  static constexpr std::string_view kind = "ExternKernelOut";
  OpName kernel{};
  std::vector<Arg> args{};
  VectorBox<NamedArg> kwargs{};  // boxed: most calls have none
  BufferArg out{};
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  static constexpr auto effects() {
    return Effects{ReadsWrites{&ExternKernelOut::args}, ReadsWrites{&ExternKernelOut::kwargs},
                      Writes{&ExternKernelOut::out}};
  }
};

/// A named output of a multi-output extern call (`out0=buf1`).
struct NamedBuffer {
  Name name{};
  BufferArg buffer{};
  friend bool operator==(const NamedBuffer&, const NamedBuffer&) = default;
};

/// Calls operator `kernel` writing into several live buffers:
/// `result = kernel(args..., kwargs..., out0=buf1, out1=buf2)`; `result`,
/// when present, is defined here and holds what the operator returns.
struct ExternKernelMultiOut {
  static constexpr std::string_view kind = "ExternKernelMultiOut";
  std::optional<BufferId> result{};
  OpName kernel{};
  std::vector<Arg> args{};
  VectorBox<NamedArg> kwargs{};  // boxed: most calls have none
  VectorBox<NamedBuffer> outs{};  // boxed: as kwargs (and a multi-out call is rare)
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  static constexpr auto effects() {
    return Effects{ReadsWrites{&ExternKernelMultiOut::args}, ReadsWrites{&ExternKernelMultiOut::kwargs},
                      Writes{&ExternKernelMultiOut::outs},
                      Allocates{&ExternKernelMultiOut::result, Storage::extern_result}};
  }
};

/// Defines `result` as the element of the multi-output `source` that `path`
/// selects (`buf2 = buf1[0]`, `buf3 = buf1['values'][1]`): only `index` and
/// `key` steps. An empty path aliases `source`.
struct MultiOutput {
  static constexpr std::string_view kind = "MultiOutput";
  BufferId result{};
  BufferId source{};
  KeyPath path{};
  static constexpr auto effects() { return Effects{Selects{&MultiOutput::result, &MultiOutput::source}}; }
};

/// `aten.scatter_(self, dim, index, src, **kwargs)`: scatters `src` (a buffer
/// or a scalar) into the live buffer `self` in place.
struct ScatterFallback {
  static constexpr std::string_view kind = "ScatterFallback";
  OpName kernel = "aten.scatter_";
  BufferId self{};
  std::int64_t dim = 0;
  BufferArg index{};
  Box<Arg> src{};  // boxed: 40 bytes, it made every line 136 (a scatter is rare)
  VectorBox<NamedArg> kwargs{};  // boxed: most calls have none
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  static constexpr auto effects() {
    return Effects{ReadsWrites{&ScatterFallback::self}, Reads{&ScatterFallback::index},
                      Reads{&ScatterFallback::src}, Reads{&ScatterFallback::kwargs}};
  }
};

/// `aten.index_put_(self, indices, values, accumulate)`: writes `values` into
/// the live buffer `self` at `indices` (nullopt = a `None` hole, a full
/// slice of that dimension).
struct IndexPutFallback {
  static constexpr std::string_view kind = "IndexPutFallback";
  OpName kernel = "aten.index_put_";
  BufferId self{};
  std::vector<std::optional<BufferArg>> indices{};
  BufferArg values{};
  bool accumulate = false;
  OptionalBox<Provenance> provenance{};  // boxed: data, most lines have none
  static constexpr auto effects() {
    return Effects{ReadsWrites{&IndexPutFallback::self}, Reads{&IndexPutFallback::indices},
                      Reads{&IndexPutFallback::values}};
  }
};

/// Defines the unbacked symbol `symbol` from the one-element buffer `source`
/// (`u0 = buf3.item()`); `path` is empty, a single `convert_to_int`
/// (`1 if x else 0`) or a single `divide_by` d (exact division, checked).
struct DynamicScalar {
  static constexpr std::string_view kind = "DynamicScalar";
  expr::Expr symbol{};
  BufferId source{};
  KeyPath path{};
  static constexpr auto effects() {
    return Effects{Reads{&DynamicScalar::source}, DefinesSymbols{&DynamicScalar::symbol, SymbolOrigin::unbacked}};
  }
};

/// One unbacked symbol and where to read it in a result.
struct SymbolBinding {
  expr::Expr symbol{};
  KeyPath path{};
  friend bool operator==(const SymbolBinding&, const SymbolBinding&) = default;
};

/// Defines unbacked symbols from the (possibly nested) result `source`:
/// `u1 = buf2[0].size(1)` for each binding.
struct UnbackedSymbolDefs {
  static constexpr std::string_view kind = "UnbackedSymbolDefs";
  BufferId source{};
  std::vector<SymbolBinding> bindings{};
  static constexpr auto effects() {
    return Effects{ReadsResult{&UnbackedSymbolDefs::source},
                      DefinesSymbols{&UnbackedSymbolDefs::bindings, SymbolOrigin::unbacked}};
  }
};

/// Checks at run time that `buffer` has exactly these sizes and strides
/// (`assert_size_stride(buf, sizes, strides[, op_name])`); a mismatch stops
/// the program. `op_name`, when present, names the operator whose result is
/// checked (Inductor's `get_op_name()`, e.g. `aten.mm.default`); the error
/// message quotes it. One line of text (no control characters but tab).
/// Runtime: evaluate sizes and strides (the symbols must be bound), compare
/// with the buffer's actual sizes and strides dimension by dimension (rank
/// included); on a mismatch stop with an error naming the dimension, the
/// expected and actual values and the op name. Reads no element.
struct AssertSizeStride {
  static constexpr std::string_view kind = "AssertSizeStride";
  BufferId buffer{};
  std::vector<expr::Expr> sizes{};
  std::vector<expr::Expr> strides{};
  std::optional<std::string> op_name{};
  static constexpr auto effects() {
    return Effects{Reads{&AssertSizeStride::buffer}, ReadsSymbols{&AssertSizeStride::sizes},
                      ReadsSymbols{&AssertSizeStride::strides}};
  }
};

/// Checks at run time that the data of `buffer` starts at an address that is
/// a multiple of `alignment` bytes (a power of two, at least 1):
/// `assert_alignment(buf, 16, 'aten.foo.default')`. Inductor writes it after
/// a fallback kernel whose result a later kernel assumes aligned. `op_name`
/// as in AssertSizeStride.
/// Runtime: compute the buffer's data address (its storage's base plus its
/// storage offset times its item size); if it is not a multiple of
/// `alignment` stop with an error naming the buffer, the alignment and the
/// op name. Reads no element; defines nothing.
struct AssertAlignment {
  static constexpr std::string_view kind = "AssertAlignment";
  BufferId buffer{};
  std::int64_t alignment = 16;
  std::optional<std::string> op_name{};
  static constexpr auto effects() { return Effects{Reads{&AssertAlignment::buffer}}; }
};

/// Checks at run time that the symbolic condition `condition` holds (is
/// non-zero), as Inductor's scalar runtime asserts do (`torch._check(u0 >=
/// 1)`, `ir.AssertScalar`): `if not (u0 >= 1): raise RuntimeError('u0 >= 1')`.
/// `condition` is usually a comparison (Eq, Ne, Lt, Le, Gt, Ge, which
/// evaluate to 1 or 0); any integer expression counts as true when non-zero.
/// `message` is the error's text (Inductor: the condition as the user's
/// program wrote it), one line of text.
/// Runtime: evaluate `condition` with the symbols bound so far (checked
/// arithmetic); zero stops the program with `message`, an evaluation error
/// (overflow, division by zero) stops it with that error. Defines nothing.
/// Note: the condition is built through the expression constructors, which
/// decide what the symbols' declared assumptions imply: an exporter must
/// not declare an assumption that only this assert establishes, or the
/// condition folds to 1 and checks nothing.
struct AssertScalar {
  static constexpr std::string_view kind = "AssertScalar";
  expr::Expr condition{};
  std::string message{};
  static constexpr auto effects() { return Effects{ReadsSymbols{&AssertScalar::condition}}; }
};

// ---------------------------------------------------------------------------
// Control
// ---------------------------------------------------------------------------

/// Opens a nested scope holding the inlined code of subgraph `graph`, as
/// Inductor's text back ends write branches and loop bodies; closed by the
/// matching ExitSubgraph. Memory planning never reuses across the scope's
/// boundary, and emitters indent it.
struct EnterSubgraph {
  static constexpr std::string_view kind = "EnterSubgraph";
  GraphId graph{};
  static constexpr auto effects() {
    return Effects{EntersScope{ScopeKind::subgraph, &EnterSubgraph::graph}};
  }
};

/// Closes the innermost EnterSubgraph scope.
struct ExitSubgraph {
  static constexpr std::string_view kind = "ExitSubgraph";
  static constexpr auto effects() { return Effects{ExitsScope{ScopeKind::subgraph}}; }
};

/// Runs subgraph `true_graph` if `predicate` (a one-element bool buffer or a
/// symbolic integer, non-zero = true) holds, else `false_graph`, passing
/// `operands` as the subgraph's inputs; the subgraph's outputs define
/// `outputs`. Both subgraphs take inputs like the operands and give outputs
/// like `outputs`.
struct Conditional {
  static constexpr std::string_view kind = "Conditional";
  Arg predicate{};
  GraphId true_graph{};
  GraphId false_graph{};
  std::vector<Arg> operands{};
  std::vector<BufferId> outputs{};
  // Operands are read (and passed to whichever branch runs); the outputs are
  // defined after the call.
  static constexpr auto effects() {
    return Effects{Reads{&Conditional::predicate}, Reads{&Conditional::operands},
                      CallsSubgraph{&Conditional::true_graph, &Conditional::operands, nullptr, &Conditional::outputs},
                      CallsSubgraph{&Conditional::false_graph, &Conditional::operands, nullptr, &Conditional::outputs},
                      Allocates{&Conditional::outputs, Storage::control_result}};
  }
};

/// `while cond_graph(carried, additional): carried = body_graph(carried,
/// additional)`; the final carried values define `outputs`. `cond_graph`
/// returns one bool buffer; `body_graph` returns one value per carried
/// value.
struct WhileLoop {
  static constexpr std::string_view kind = "WhileLoop";
  GraphId cond_graph{};
  GraphId body_graph{};
  std::vector<Arg> carried{};
  std::vector<Arg> additional{};
  std::vector<BufferId> outputs{};
  // The condition's one output is the loop's test, bound to no buffer; the
  // body's outputs are the next carried values, the last ones `outputs`.
  static constexpr auto effects() {
    return Effects{Reads{&WhileLoop::carried}, Reads{&WhileLoop::additional},
                      CallsSubgraph{&WhileLoop::cond_graph, &WhileLoop::carried, &WhileLoop::additional},
                      CallsSubgraph{&WhileLoop::body_graph, &WhileLoop::carried, &WhileLoop::additional,
                                    &WhileLoop::outputs},
                      Allocates{&WhileLoop::outputs, Storage::control_result}};
  }
};

/// Makes `device` the current device until the matching ExitDeviceContext
/// (`with torch.cuda._DeviceGuard(0):`).
struct EnterDeviceContext {
  static constexpr std::string_view kind = "EnterDeviceContext";
  Device device{};
  static constexpr auto effects() { return Effects{EntersScope{ScopeKind::device}}; }
};

struct ExitDeviceContext {
  static constexpr std::string_view kind = "ExitDeviceContext";
  static constexpr auto effects() { return Effects{ExitsScope{ScopeKind::device}}; }
};

/// Makes side stream `stream` (> 0; 0 is the device's default stream) the
/// current stream until the matching ExitStreamContext.
struct EnterStreamContext {
  static constexpr std::string_view kind = "EnterStreamContext";
  std::uint32_t stream = 0;
  static constexpr auto effects() { return Effects{EntersScope{ScopeKind::stream}}; }
};

struct ExitStreamContext {
  static constexpr std::string_view kind = "ExitStreamContext";
  static constexpr auto effects() { return Effects{ExitsScope{ScopeKind::stream}}; }
};

/// Fetches the raw handle of stream `stream` of `device` for the kernel
/// calls that follow (`stream0 = get_raw_stream(0)`).
struct GetRawStream {
  static constexpr std::string_view kind = "GetRawStream";
  Device device{};
  std::uint32_t stream = 0;
  static constexpr auto effects() { return Effects{}; }
};

// ---------------------------------------------------------------------------
// Misc
// ---------------------------------------------------------------------------

/// A comment for readers of the generated code. One line of text: no control
/// characters other than tab (the verifier checks, emitters escape).
struct Comment {
  static constexpr std::string_view kind = "Comment";
  std::string text{};
  static constexpr auto effects() { return Effects{}; }
};

}  // namespace wrapir::ir

// Reflection: the fields of every line kind, in declaration order. A field
// left out here is invisible to equality, hashing, JSON and the text form, so
// a test checks each struct's reflected size against its `sizeof` layout.
WRAPIR_REFLECT(wrapir::ir::Allocate, buffer);
WRAPIR_REFLECT(wrapir::ir::FreeIfNotReused, buffer, reused);
WRAPIR_REFLECT(wrapir::ir::Reuse, old_buffer, new_buffer, delete_old);
WRAPIR_REFLECT(wrapir::ir::Free, buffer);
WRAPIR_REFLECT(wrapir::ir::Null);
WRAPIR_REFLECT(wrapir::ir::PoolCreate, pool);
WRAPIR_REFLECT(wrapir::ir::AllocFromPool, buffer, pool, offset_bytes);
WRAPIR_REFLECT(wrapir::ir::DeallocFromPool, buffer, pool, releases_pool);
WRAPIR_REFLECT(wrapir::ir::CommBufferAllocate, buffer);
WRAPIR_REFLECT(wrapir::ir::CommBufferFree, buffer);
WRAPIR_REFLECT(wrapir::ir::WorkspaceAllocate, workspace, zero_mode, inner_name);
WRAPIR_REFLECT(wrapir::ir::WorkspaceFree, workspace);
WRAPIR_REFLECT(wrapir::ir::DeviceCopy, destination, source, non_blocking);
WRAPIR_REFLECT(wrapir::ir::Reinterpret, view, base);
WRAPIR_REFLECT(wrapir::ir::KernelDefinition, kernel, source, metadata, provenance);
WRAPIR_REFLECT(wrapir::ir::KernelCall, kernel, args, arg_types, grid, device, stream, provenance);
WRAPIR_REFLECT(wrapir::ir::SymbolicCallArg, symbol, value, provenance);
WRAPIR_REFLECT(wrapir::ir::MultiKernelDefinition, kernel, candidates, arg_index, shape_keys);
WRAPIR_REFLECT(wrapir::ir::MultiKernelCall, kernel, args, arg_types, device, stream, provenance);
WRAPIR_REFLECT(wrapir::ir::ExternKernelAlloc, result, kernel, args, kwargs, provenance);
WRAPIR_REFLECT(wrapir::ir::ExternKernelOut, kernel, args, kwargs, out, provenance);
WRAPIR_REFLECT(wrapir::ir::ExternKernelMultiOut, result, kernel, args, kwargs, outs, provenance);
WRAPIR_REFLECT(wrapir::ir::MultiOutput, result, source, path);
WRAPIR_REFLECT(wrapir::ir::ScatterFallback, kernel, self, dim, index, src, kwargs, provenance);
WRAPIR_REFLECT(wrapir::ir::IndexPutFallback, kernel, self, indices, values, accumulate, provenance);
WRAPIR_REFLECT(wrapir::ir::DynamicScalar, symbol, source, path);
WRAPIR_REFLECT(wrapir::ir::UnbackedSymbolDefs, source, bindings);
WRAPIR_REFLECT(wrapir::ir::AssertSizeStride, buffer, sizes, strides, op_name);
WRAPIR_REFLECT(wrapir::ir::AssertAlignment, buffer, alignment, op_name);
WRAPIR_REFLECT(wrapir::ir::AssertScalar, condition, message);
WRAPIR_REFLECT(wrapir::ir::EnterSubgraph, graph);
WRAPIR_REFLECT(wrapir::ir::ExitSubgraph);
WRAPIR_REFLECT(wrapir::ir::Conditional, predicate, true_graph, false_graph, operands, outputs);
WRAPIR_REFLECT(wrapir::ir::WhileLoop, cond_graph, body_graph, carried, additional, outputs);
WRAPIR_REFLECT(wrapir::ir::EnterDeviceContext, device);
WRAPIR_REFLECT(wrapir::ir::ExitDeviceContext);
WRAPIR_REFLECT(wrapir::ir::EnterStreamContext, stream);
WRAPIR_REFLECT(wrapir::ir::ExitStreamContext);
WRAPIR_REFLECT(wrapir::ir::GetRawStream, device, stream);
WRAPIR_REFLECT(wrapir::ir::Comment, text);

// Small value records that lines hold: reflected too, so that codecs can
// write and read them generically (every field, in declaration order).
WRAPIR_REFLECT(wrapir::ir::NamedArg, name, value);
WRAPIR_REFLECT(wrapir::ir::NamedBuffer, name, buffer);
WRAPIR_REFLECT(wrapir::ir::NamedExpr, name, value);
WRAPIR_REFLECT(wrapir::ir::BlockSize, name, value);
WRAPIR_REFLECT(wrapir::ir::ArgSlice, start, stop);
WRAPIR_REFLECT(wrapir::ir::SymbolBinding, symbol, path);
WRAPIR_REFLECT(wrapir::ir::Provenance, source_nodes, aten, context);

namespace wrapir::ir {

/// The reflected value records, in the order above.
using RecordKinds = boost::mp11::mp_list<NamedArg, NamedBuffer, NamedExpr, BlockSize, ArgSlice, SymbolBinding>;

template <class T>
inline constexpr bool is_record = boost::mp11::mp_contains<RecordKinds, T>::value;

}  // namespace wrapir::ir
