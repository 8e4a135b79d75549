#pragma once
/// \file
/// `wrapir::verify`: checks that a program means what its lines say.
///
/// The builder, the JSON loader and the text parser check what they can see
/// one call or one field at a time; the verifier checks what needs the whole
/// program: that every buffer, kernel, pool and symbol is defined before it
/// is used and used only while alive, that calls match signatures, that
/// scopes are balanced, that subgraphs take and return what their callers
/// pass and expect, and that every name is one the emitters may print.
///
/// `verify(program)` returns every finding, never stopping at the first: the
/// root's table findings, its line findings in line order, its output
/// findings, then each subgraph's findings in the same way (recursively, in
/// table order). An empty result means the program is well formed. A
/// malformed program (ids out of range, null expressions, expressions of
/// another context, enumerators outside their enumeration, a valueless line)
/// gives findings, never undefined behaviour; `verify` throws only
/// `std::bad_alloc`.
///
/// It runs one forward pass over each program's body with per-id state
/// vectors, so its cost is linear in the number of lines (free symbols of
/// compound expressions are computed once per expression and cached).
/// What a line makes it build is bounded too: a view's room derives from
/// its base's, so views of views more than 256 levels deep are a finding
/// and their bounds are not checked (a hostile chain at distinct symbolic
/// offsets would otherwise cost time quadratic in its depth).
///
/// The verifier is compiled like the other heavy parts (see
/// <wrapir/detail/config.hpp>): this header declares the API; the
/// definitions are in ir/impl/verify*.ipp, included at the end of this
/// header unless `WRAPIR_SEPARATE_COMPILATION` is defined:
/// - ir/detail/verify_state.hpp: the per-id state and the free-symbol cache;
/// - ir/detail/verifier.hpp: the one-program verifier, its members declared
///   by responsibility, and how a line is walked (its fields, then its
///   effects from the table, then what needs its definitions);
/// - impl/verify.ipp: `verify`, `runtime_checks`, the body walk;
/// - impl/verify_tables.ipp: names and the buffer, symbol, kernel, pool,
///   subgraph and input tables;
/// - impl/verify_liveness.ipp: symbols, buffer and pool lives, roles, reuse;
/// - impl/verify_views.ipp: view extents, pool slices, copies;
/// - impl/verify_calls.ipp: arguments, kernels and their calls, extern
///   operators, fallbacks, dynamic scalars;
/// - impl/verify_control.ipp: scopes, Conditional and WhileLoop against
///   their subgraphs, outputs, nested subgraphs.
/// Checking a Reuse's storage sizes builds a few expressions in the
/// program's context, so `verify` must not run while another thread builds
/// in that context.
///
/// Liveness model
/// --------------
/// - Graph inputs and constants are live from the start. Symbols of origin
///   `input` and `input_shape` are defined from the start; `unbacked` ones
///   from their DynamicScalar or UnbackedSymbolDefs line on, `computed` ones
///   from their SymbolicCallArg line on. A symbol is defined once.
/// - What each line defines and ends is read from the effects table
///   (ir/effects.hpp), never restated here: a buffer is defined by the
///   events Allocated (with its Storage kind), Reused, Aliased, Selected and
///   Carved, and ended by Released (with its Release kind) and Reused; pools
///   by PoolCreated and PoolReturned; scopes by ScopeEntered and
///   ScopeExited. The role rules below key off those events' kinds.
/// - A buffer becomes live at the line that defines it: Allocate, Reuse
///   (`new_buffer`), AllocFromPool, Reinterpret (`view`), ExternKernelAlloc
///   and ExternKernelMultiOut (`result`), MultiOutput (`result`),
///   CommBufferAllocate, WorkspaceAllocate, and the `outputs` of Conditional
///   and WhileLoop. A buffer is defined once. Which lines may define it
///   depends on its role: inputs and constants by none, workspaces only by
///   WorkspaceAllocate, comm buffers only by CommBufferAllocate (or a Reuse
///   of another comm buffer), multi-output results only by an extern call or
///   MultiOutput; intermediates and outputs by the others. Likewise inputs
///   end only with Free (and only when donated), constants never,
///   workspaces with WorkspaceFree (never those zeroed per graph), comm
///   buffers with CommBufferFree (or a FreeIfNotReused that offers them to
///   a Reuse by another comm buffer of the same group), buffers carved from
///   a pool with DeallocFromPool, the others with FreeIfNotReused or Free.
/// - A buffer dies at FreeIfNotReused (reused or not), Free,
///   CommBufferFree, WorkspaceFree, DeallocFromPool and Reuse (`old_buffer`).
///   Reuse takes an old buffer that is live (in-place reuse) or that a
///   FreeIfNotReused with `reused = true` freed and no other Reuse took yet;
///   a FreeIfNotReused with `reused = true` whose storage no Reuse takes is
///   a finding.
/// - A view (Reinterpret) is usable while its base is; views are never
///   freed or reused themselves. A buffer carved from a pool is usable until
///   it is deallocated or its pool is released (DeallocFromPool with
///   `releases_pool`); a pool is created once, by PoolCreate, before its
///   first AllocFromPool.
/// - EnterSubgraph/ExitSubgraph, EnterDeviceContext/ExitDeviceContext and
///   EnterStreamContext/ExitStreamContext nest as one stack; they do not
///   change liveness.
/// - At the end every buffer output must be live and every symbolic output
///   defined. An output whose storage a Reuse with `delete_old = false`
///   took stays bound to it (a later buffer updates it in place): it counts
///   as live while that storage is.
///
/// Besides liveness it checks: names (valid, unique across the tables of
/// one program; Name and OpName fields; single-line comments), layouts
/// (`ir::validate`, the program's context), ids in range, roles against
/// the lines that create and end buffers, reuse keys (device, dtype,
/// alignment, stream, comm group, and a new storage no larger than the old:
/// the same printed size or a provably non-negative difference), kernel
/// calls against signatures (argument count, argument types, each argument
/// against its parameter), multi-kernel candidates and slices, symbols
/// (declared, defined before use, by a line that matches their origin),
/// key paths, balanced scopes, and Conditional and WhileLoop operands and
/// results against their subgraphs' inputs and outputs. Operator paths must
/// name real operators (`check_operator_path`, extended by
/// `VerifyOptions::operators`) with no part a Python keyword (the Python and
/// FX targets print them as Python). Views must stay inside the storage
/// they view (ir/view_extent.hpp: Reinterpret lines, argument and output
/// views, pool slices): provably outside is a finding; bounds that depend
/// on the symbols are not, and `runtime_checks(program)` lists them for a
/// run-time check (the Python emitter writes one).
///
/// Each finding names the subgraph (`graph_path`, empty for the root), the
/// line (its index in that program's body, counted from 0) or the table it
/// is about, what it concerns (`buffer buf0`, `kernel triton_0`, `symbol
/// u0`, `pool pool0`, `subgraph true_graph_0`, or nothing) and one plain
/// sentence; `to_string` joins them into one line:
///
/// ```
/// line 4 (Free): buffer arg0_1: frees graph input 'arg0_1', which was not donated
/// true_graph_0: line 2 (KernelCall): kernel triton_0: argument 1 is a float32 buffer but parameter 'in_ptr0' is *i32
/// outputs: buffer buf3: output 0 is not live at the end of the program: it was freed at line 7
/// ```

#include <wrapir/detail/config.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::ir {


/// One thing wrong with a program.
struct Finding {
  /// The subgraph the finding is in: empty for the root program, else the
  /// names of the nested subgraphs joined by `/` (`cond_fn_0/true_graph_1`).
  std::string graph_path;
  /// The index of the line in that program's body; nullopt for findings
  /// about the program's tables, inputs or outputs.
  std::optional<std::size_t> line;
  /// The line's kind name (`KernelCall`), or for other findings what they
  /// are about: `program`, `buffers`, `symbols`, `kernels`, `pools`,
  /// `subgraphs`, `inputs`, `outputs`.
  std::string_view kind;
  /// What the finding concerns, as `<what> <name>` (`buffer buf0`, `kernel
  /// triton_0`, `symbol u0`, `pool pool0`, `subgraph true_graph_0`; an id
  /// out of range as `buffer #7`; an invalid name quoted), or empty.
  std::string subject;
  /// One plain sentence without a final period.
  std::string message;

  friend bool operator==(const Finding&, const Finding&) = default;
};

/// `[graph_path: ]line N (Kind)[: subject]: message`, or
/// `[graph_path: ]kind[: subject]: message` for table findings.
[[nodiscard]] WRAPIR_DECL std::string to_string(const Finding& f);

/// A view whose bounds depend on the symbols' values: the conditions of
/// `extent.open_conditions` must be checked at run time before the view is
/// taken (see ir/view_extent.hpp). Where it is, as a Finding says it.
struct RuntimeCheck {
  std::string graph_path;
  std::size_t line = 0;
  std::string_view kind;
  /// `view buf2 of buf0`, `argument 1: view of buf0`, `buffer buf3 of pool pool0`.
  std::string subject;
  ViewExtent extent;
};

/// What `verify` accepts beyond the built-in rules.
struct VerifyOptions {
  /// Operator paths programs may call besides the built-in forms of
  /// `check_operator_path` (pass the same registry to the emitters).
  OperatorRegistry operators{};
};

/// Every finding about `program` and its subgraphs; empty when it is well
/// formed. See the file comment for what is checked and the order.
[[nodiscard]] WRAPIR_DECL std::vector<Finding> verify(const Program& program, const VerifyOptions& options = {});

/// The views of `program` and its subgraphs whose bounds `verify` could not
/// decide: each needs a run-time check before the view is taken (the
/// Python emitter writes one). Views that provably exceed their storage are
/// findings of `verify`, not entries here. Meaningful for a program that
/// verifies clean.
[[nodiscard]] WRAPIR_DECL std::vector<RuntimeCheck> runtime_checks(const Program& program,
                                                                   const VerifyOptions& options = {});

}  // namespace wrapir::ir

namespace wrapir {
using ir::Finding;
using ir::verify;
using ir::VerifyOptions;
}  // namespace wrapir

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/ir/impl/verify.ipp>
#endif
