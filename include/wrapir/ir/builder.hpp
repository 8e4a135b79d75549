#pragma once
/// \file
/// `wrapir::Builder`: builds a program with one call per common step.
///
/// The builder appends lines to a program's body and entries to its tables,
/// generating fresh names (`buf0`, `buf1`, ..., `workspace_0`, ...) that do
/// not collide with names already in the program. It checks what it is
/// given as it goes: an invalid name, an id from another program, a call
/// whose argument count differs from the kernel's signature all throw
/// `BuildError` at the call that made the mistake. What needs the whole
/// program (use after free, unbalanced scopes, ...) is the verifier's job.
///
/// ```
/// wrapir::Program p{"add"};
/// wrapir::Builder b{p};
/// auto n   = b.size_symbol("s0", 1024);
/// auto x   = b.input("arg0_1", {n}, wrapir::f32);
/// auto k   = b.triton_kernel("triton_poi_add_0", source, "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
/// auto out = b.empty({n}, wrapir::f32);
/// b.call(k, {x, out, n}, {.free_after = {x}});
/// b.output(out);
/// ```

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace wrapir::ir {

/// A mistake in a builder call: the message names the call and what was
/// wrong with its arguments.
class BuildError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Options of `Builder::call`.
/// A kernel's request for a scratch workspace (reference §7): `count`
/// elements of `dtype`, passed as the kernel parameter `inner_name`.
struct WorkspaceRequest {
  expr::Expr count;
  WorkspaceZeroMode zero_mode = WorkspaceZeroMode::uninitialized;
  Name inner_name = "ws_ptr";
  DType dtype = DType::uint8;
  /// The call's device when absent.
  std::optional<Device> device{};
};

struct CallOptions {
  /// The launch grid; the default lets the kernel's launcher compute it.
  LaunchGrid grid = LauncherGrid{};
  /// The device to launch on; the builder's default device when absent.
  std::optional<Device> device{};
  std::uint32_t stream = 0;
  /// Buffers that die with this call: freed right after it (see
  /// `Builder::free`).
  std::vector<BufferId> free_after{};
  /// Workspaces the kernel needs: allocated before the call, passed after
  /// `args` in this order, and freed after it in reverse order (except
  /// `zero_per_graph` ones, which live for the whole run). A multi-kernel
  /// call takes the requests of all its candidates and merges those that
  /// share an inner name into one, of the largest count.
  std::vector<WorkspaceRequest> workspaces{};
};

// The member functions are defined in impl/builder.ipp: included below in
// header-only mode, compiled once into wrapir::compiled in separately
// compiled mode.
class Builder {
 public:
  /// Appends to `program`, which must outlive the builder. New buffers go to
  /// `default_device` unless a call says otherwise.
  explicit Builder(Program& program, Device default_device = Device{DeviceType::cuda, 0});

  [[nodiscard]] Program& program() noexcept { return *program_; }
  [[nodiscard]] expr::Context& ctx() noexcept { return program_->ctx(); }
  [[nodiscard]] Device default_device() const noexcept { return device_; }
  void set_default_device(Device d) noexcept { device_ = d; }

  /// A name `prefix<N>` (smallest N from the prefix's counter on) that no
  /// table entry of this program uses yet.
  [[nodiscard]] std::string fresh_name(std::string_view prefix);

  // ---- symbols -------------------------------------------------------------

  /// A symbolic size passed to the program as an input (`s0`), positive.
  expr::Expr size_symbol(std::string_view name, std::optional<std::int64_t> hint = std::nullopt);

  /// A symbol read from a graph input when the program starts
  /// (`s1 = arg0_1.size(1)`).
  expr::Expr shape_symbol(std::string_view name, BufferId input, KeyStep step,
                          std::optional<std::int64_t> hint = std::nullopt);

  /// Declares a data-dependent symbol; `dynamic_scalar` or
  /// `unbacked_symbols` defines it.
  expr::Expr unbacked_symbol(std::string_view name, std::optional<std::int64_t> hint = std::nullopt);

  /// Declares `name` and defines it as `value` here (SymbolicCallArg).
  expr::Expr computed_symbol(std::string_view name, expr::Expr value);

  // ---- buffers -------------------------------------------------------------

  /// A graph input with a contiguous layout; appended to the inputs.
  BufferId input(std::string_view name, LayoutDims sizes, DType dtype,
                 std::optional<Device> device = std::nullopt);
  BufferId input(std::string_view name, Layout layout, bool donated = false);

  /// A constant owned by the caller (never allocated or freed).
  BufferId constant(std::string_view name, Layout layout);

  /// Adds a table entry without a line (for lines the caller writes).
  BufferId declare(std::string_view name, Layout layout, BufferRole role);

  /// Allocates a fresh contiguous buffer (`bufN = empty_strided(...)`).
  BufferId empty(LayoutDims sizes, DType dtype, std::optional<Device> device = std::nullopt);

  /// Allocates a fresh buffer with the given layout.
  BufferId allocate(Layout layout, BufferRole role = BufferRole::intermediate);

  /// A workspace of `count` elements of `dtype` (bytes by default) for the
  /// next kernel call.
  ///
  /// A `zero_per_graph` workspace is zeroed once and lives for the whole
  /// run, so a later `zero_per_graph` request with the same inner name,
  /// dtype and device returns the same buffer, grown to the larger of the
  /// two counts, and appends nothing (Inductor grows the first allocation
  /// the same way).
  BufferId workspace(expr::Expr count, WorkspaceZeroMode mode, Name inner_name = "ws_ptr",
                     DType dtype = DType::uint8, std::optional<Device> device = std::nullopt);

  /// A symmetric-memory communication buffer of `group`.
  BufferId comm_buffer(LayoutDims sizes, DType dtype, std::string group,
                       std::optional<Device> device = std::nullopt);

  /// Ends the life of each buffer with the line its role needs: Free for a
  /// (donated) input, CommBufferFree, WorkspaceFree, and FreeIfNotReused for
  /// everything else.
  void free(std::initializer_list<BufferId> buffers);
  void free(std::span<const BufferId> buffers);

  /// A fresh buffer that views `base`'s storage (Reinterpret); `offset`
  /// counts elements from the start of `base`'s storage.
  BufferId view(BufferId base, LayoutDims sizes, LayoutDims strides, expr::Expr offset);

  // ---- kernels -------------------------------------------------------------

  /// Declares and defines a Triton kernel; `signature` as `parse_signature`
  /// reads it.
  KernelId triton_kernel(std::string_view name, std::string source, std::string_view signature,
                         KernelMetadata metadata = {});

  /// Declares and defines a kernel of any language.
  KernelId kernel(std::string_view name, KernelLanguage language, KernelSource source, std::string_view signature,
                  KernelMetadata metadata = {});

  /// Adds a kernel to the table without a definition line.
  KernelId declare_kernel(std::string_view name, KernelLanguage language, std::vector<KernelParam> signature);

  /// Launches `kernel` with one argument per signature parameter, typed by
  /// the signature; then frees `options.free_after`.
  void call(KernelId kernel, std::vector<Arg> args, CallOptions options = {});

  /// Defines a multi-kernel choosing among `candidates` (at least two, all
  /// with the same signature); by default each candidate gets the whole
  /// argument list. Named `multi_kernel_N`.
  KernelId multi_kernel(std::vector<KernelId> candidates, std::vector<std::vector<ArgSlice>> arg_index = {},
                        std::vector<std::optional<ShapeKey>> shape_keys = {});

  /// Calls a multi-kernel.
  void call_multi(KernelId multi, std::vector<Arg> args, CallOptions options = {});

  // ---- extern kernels ------------------------------------------------------

  /// `bufN = op(args..., kwargs...)`: an operator that allocates its
  /// result, whose layout is `result`.
  BufferId extern_alloc(OpName op, std::vector<Arg> args, Layout result, std::vector<NamedArg> kwargs = {});

  /// `bufN = op(...)` for an operator that returns several tensors: the
  /// result is a multi-output buffer to unpack with `unpack`.
  BufferId extern_alloc_multi(OpName op, std::vector<Arg> args, std::vector<NamedArg> kwargs = {});

  /// `op(args..., kwargs..., out=out)`.
  void extern_out(OpName op, std::vector<Arg> args, BufferArg out, std::vector<NamedArg> kwargs = {});

  /// One MultiOutput line per layout: `bufK = source[i]`.
  std::vector<BufferId> unpack(BufferId source, std::vector<Layout> layouts);

  /// Defines the unbacked symbol `symbol` from the one-element `source`.
  void dynamic_scalar(expr::Expr symbol, BufferId source, KeyPath path = {});

  void assert_size_stride(BufferId buffer);

  // ---- control -------------------------------------------------------------

  /// Builds one branch or loop body: receives a builder for the subgraph
  /// and the subgraph's inputs (one per operand, in order).
  using SubgraphFn = std::function<void(Builder&, std::span<const ProgramInput>)>;

  /// A Conditional with its two subgraphs (`true_graph_N`, `false_graph_N`),
  /// each built by a callback that must set the subgraph's outputs. Returns
  /// the conditional's outputs, whose layouts are the true branch's.
  std::vector<BufferId> conditional(Arg predicate, std::vector<Arg> operands, const SubgraphFn& true_branch,
                                    const SubgraphFn& false_branch);

  /// A WhileLoop with its condition and body subgraphs (`cond_fn_N`,
  /// `body_fn_N`), both taking the carried then the additional values.
  std::vector<BufferId> while_loop(std::vector<Arg> carried, std::vector<Arg> additional, const SubgraphFn& condition,
                                   const SubgraphFn& body);

  void enter_device(Device d);
  void exit_device();
  void comment(std::string text);

  void output(ProgramOutput out);
  /// A symbolic scalar output. Constructed in place: moving a freshly built
  /// `ProgramOutput` holding an `Expr` trips g++ 12's -Wmaybe-uninitialized
  /// at -O3 (a false positive on variant2's BufferArg alternative).
  void output(expr::Expr scalar);
  void output(BufferId b);

  /// Appends any line as given.
  void append(Line line);

 private:
  /// Allocates the workspaces of one call, in request order. With `merge`
  /// (a multi-kernel's candidates share one set of workspaces), requests
  /// with the same inner name become one workspace of the largest count
  /// and the combined zero mode (Inductor's `merge_workspaces_inplace`).
  std::vector<BufferId> allocate_workspaces(std::vector<WorkspaceRequest> requests, Device call_device, bool merge,
                                            std::string_view kernel);
  void free_workspaces(const std::vector<BufferId>& workspaces);

  expr::Expr declare_symbol(std::string_view name, expr::Assumption assumption, bool unbacked, SymbolOrigin origin,
                            std::optional<std::int64_t> hint);

  GraphId subgraph(std::string name, const std::vector<Arg>& operands, const SubgraphFn& build);

  // A subgraph declares the symbols its inputs' layouts use: each one is
  // read from the first input whose size or stride it is (`input_shape`),
  // unless it is itself an operand. A symbol that appears only inside a
  // larger expression has nothing to be read from and must be passed.
  static void declare_shape_symbols(Program& sub, Builder& sb);

  std::vector<BufferId> outputs_like(const Program& sub, const char* who);

  // The layout a buffer argument presents: the buffer's own, or its view's
  // sizes, strides and offset with the buffer's dtype and device.
  static Layout layout_of(const Program& p, const BufferArg& arg);

  // Layout::contiguous throws expr::Error for null sizes or sizes of another
  // context; the builder's callers get a BuildError like for every mistake.
  Layout contiguous_layout(LayoutDims sizes, DType dtype, Device device);

  void check_buffer(BufferId id, const char* who) const;
  void check_kernel(KernelId id, const char* who) const;
  void check_expr(expr::Expr e, const char* who) const;
  static void check_op(const OpName& op, const char* who);

  Program* program_;
  Device device_;
  std::unordered_set<std::string> names_;
  /// The zero_per_graph workspaces so far, with their inner names.
  std::vector<std::pair<BufferId, std::string>> zero_per_graph_;
  std::unordered_map<std::string, std::size_t> counters_;
  std::size_t conditional_count_ = 0;
  std::size_t while_count_ = 0;
};

}  // namespace wrapir::ir

namespace wrapir {
using ir::Builder;
using ir::CallOptions;
}  // namespace wrapir

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/ir/impl/builder.ipp>
#endif
