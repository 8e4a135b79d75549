#pragma once
/// \file
/// The emitter of one Python function (emit/python.hpp): `FunctionEmitter`
/// renders one program — the top-level one as `def call(args):`, each
/// subgraph as its own `def` — through `wrapir::emit`, one `render` per line
/// kind. Its members are defined by responsibility in the other
/// emit/detail/python_*.hpp headers; emit/impl/python.ipp includes them all.

#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/detail/sink_buffer.hpp>
#include <wrapir/emit/detail/python_module.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/pool_slice_verdicts.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::python::detail {

/// Whether a line's provenance has the nodes or operators of Inductor's
/// provenance comment (a context alone is written nowhere, as Inductor's
/// `LineContext` renders no code).
[[nodiscard]] inline bool has_provenance_comment(const ir::OptionalBox<ir::Provenance>& p) noexcept {
  return p && (!p->source_nodes.empty() || !p->aten.empty());
}

/// Appends Inductor's provenance comment line, `# Topologically Sorted
/// Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]` and a
/// newline, each entry escaped as comment text.
inline void append_provenance_comment(std::string& out, const ir::Provenance& p) {
  const auto list = [&](const std::vector<std::string>& items) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i) out += ", ";
      append_comment_text(out, items[i]);
    }
    out += ']';
  };
  out += "# Topologically Sorted Source Nodes: ";
  list(p.source_nodes);
  out += ", Original ATen: ";
  list(p.aten);
  out += '\n';
}

/// Renders one program (the top-level one or a subgraph) as one Python
/// function, and its definitions into the module's header.
class FunctionEmitter {
 public:
  /// Renders into `out`; with a `sink`, `out` is the sink's text, passed
  /// on between lines whenever it holds a piece.
  FunctionEmitter(ModuleState& module, const ir::Program& program, std::string& out, std::string_view function_name,
                  bool top_level, int depth, wrapir::detail::SinkBuffer* sink = nullptr)
      : module_(module), options_(*module.options), program_(program), out_(out), function_name_(function_name),
        top_level_(top_level), depth_(depth), sink_(sink) {}

  /// Checks the tables, lifts the subgraphs, then renders the function.
  void run() {
    prepare();
    render_body();
  }

  /// Checks the tables and lifts the subgraphs; for the top-level function
  /// also `declare_module_needs`, so that the module's header is complete
  /// before the body is rendered.
  void prepare();
  /// Renders the function (after `prepare`).
  void render_body();

  // ---- the emitter interface of wrapir::emit ----------------------------------

  void begin(const ir::Program&);

  template <ir::LineKind T>
  void operator()(const T& line) {
    static_assert(requires(FunctionEmitter& e, const T& l) { e.render(l); },
                  "the Python emitter has no render() for this line kind");
    kind_ = T::kind;
    try {
      // What the line touches comes from its effects (ir/effects.hpp), the
      // table every consumer reads, not from a walk of its fields: pending
      // inputs are asserted, then the views it passes are guarded.
      line_views_.clear();
      ir::for_each_effect(line, LineUses{*this});
      for (const auto& [buffer, view] : line_views_) guard_view(buffer, *view);
      // Inductor's provenance comment comes before the line's code (a
      // definition's goes with it into the module's header).
      if constexpr (requires { line.provenance; } && !std::is_same_v<T, ir::KernelDefinition>) {
        if (has_provenance_comment(line.provenance)) {
          comment_line();
          append_provenance_comment(out_, *line.provenance);
        }
      }
      render(line);
    } catch (const expr::Error& e) {
      fail(e.what());
    }
    ++line_index_;
    if (sink_) sink_->pass_on_if_full();
  }

  void end(const ir::Program&);

  // ---- memory -----------------------------------------------------------------

  void render(const ir::Allocate& l);
  void render(const ir::FreeIfNotReused& l);
  void render(const ir::Reuse& l);
  void render(const ir::Free& l);
  void render(const ir::Null&) {}
  void render(const ir::PoolCreate& l);
  void render(const ir::AllocFromPool& l);
  void render(const ir::DeallocFromPool& l);
  void render(const ir::CommBufferAllocate& l);
  void render(const ir::CommBufferFree& l);
  void render(const ir::WorkspaceAllocate& l);
  void render(const ir::WorkspaceFree& l);
  void render(const ir::DeviceCopy& l);

  // ---- views ------------------------------------------------------------------

  void render(const ir::Reinterpret& l);

  // ---- kernels ----------------------------------------------------------------

  void render(const ir::KernelDefinition& l);
  void render(const ir::KernelCall& l);
  void render(const ir::SymbolicCallArg& l);
  void render(const ir::MultiKernelDefinition& l);
  void render(const ir::MultiKernelCall& l);

  // ---- extern kernels ---------------------------------------------------------

  void render(const ir::ExternKernelAlloc& l);
  void render(const ir::ExternKernelOut& l);
  void render(const ir::ExternKernelMultiOut& l);
  void render(const ir::MultiOutput& l);
  void render(const ir::ScatterFallback& l);
  void render(const ir::IndexPutFallback& l);
  void render(const ir::DynamicScalar& l);
  void render(const ir::UnbackedSymbolDefs& l);
  void render(const ir::AssertSizeStride& l);
  void render(const ir::AssertAlignment& l);
  void render(const ir::AssertScalar& l);

  // ---- control ----------------------------------------------------------------

  void render(const ir::EnterSubgraph& l);
  void render(const ir::ExitSubgraph&) { close_block(Block::subgraph, "ExitSubgraph"); }
  void render(const ir::Conditional& l);
  void render(const ir::WhileLoop& l);
  void render(const ir::EnterDeviceContext& l);
  void render(const ir::ExitDeviceContext&) { close_block(Block::device, "ExitDeviceContext"); }
  void render(const ir::EnterStreamContext& l);
  void render(const ir::ExitStreamContext&) { close_block(Block::stream, "ExitStreamContext"); }
  void render(const ir::GetRawStream& l);

  // ---- misc -------------------------------------------------------------------

  void render(const ir::Comment& l);

 private:
  // ---- blocks and lines -------------------------------------------------------

  struct Block {
    enum Kind : std::uint8_t { subgraph, device, stream, auto_device } kind;
    std::string_view opened_by;
    bool indented;
    bool has_statement;
    std::optional<int> device_index;
    // Scope state restored when the block closes: what was fetched or
    // asserted inside may not have run on every path through it.
    std::size_t streams_before;
    std::vector<char> asserted_before;
    std::size_t pending_before;
  };

  /// Starts a statement line at the current indentation.
  void statement();
  /// Starts a comment line (not a statement: a block of comments alone is
  /// not a Python block).
  void comment_line() { out_.append(static_cast<std::size_t>(indent_) * 4, ' '); }

  void open_block(Block::Kind kind, std::string_view opened_by, bool indented,
                  std::optional<int> device_index = std::nullopt);

  void close_block(Block::Kind kind, std::string_view closed_by);

  void write_device_guard(const ir::Device& d);

  [[nodiscard]] std::optional<int> current_device_index() const;

  // ---- errors -----------------------------------------------------------------

  [[noreturn]] void fail(std::string message) const;
  [[noreturn]] void fail_program(std::string message) const;

  template <class Table>
  static std::string out_of_range(std::string_view what, std::uint32_t index, const Table& table,
                                  std::string_view plural);

  const ir::BufferDecl& buffer(ir::BufferId id) const;
  const ir::KernelDecl& kernel(ir::KernelId id) const;
  const ir::PoolDecl& pool(ir::PoolId id) const;
  const ir::Program& subgraph(ir::GraphId id) const;

  [[nodiscard]] bool is_output(ir::BufferId id) const;

  /// The callee of an operator call, checked: generated code never calls
  /// anything a program merely names. A real operator namespace or a path
  /// the options' registry declares (`ir::check_operator_path`), no part a
  /// Python keyword (`aten.import.default` would not even compile), and
  /// rooted at a name the module itself binds, which no table entry may
  /// shadow (`is_module_name`). Every operator call goes through here.
  [[nodiscard]] std::string_view operator_callee(const ir::OpName& op) const;

  /// The callee of a kernel launch or a subgraph call: a name of the
  /// module's kernel (`'k'`) or subgraph (`'s'`) table, which
  /// `collect_globals` checked and claimed. Every such call goes through
  /// here, so that no other text is ever called.
  [[nodiscard]] std::string_view global_callee(std::string_view name, char kind) const;

  /// A name the emitter makes up (`arg0_1_size`, `cond_fn_0_args`); it must
  /// not be a name the program or the module already uses.
  [[nodiscard]] std::string helper_name(std::string name) const;

  /// Checks every local name of this program's tables once (the module's
  /// names were collected before), so that lines can print names without
  /// checking them again.
  void check_tables();

  /// The device type of each kernel's first call: `device_str` of its
  /// Triton definition.
  void scan_kernel_devices();

  /// The part of the module's header that the body decides, found before
  /// the body is rendered: renders its kernel and multi-kernel definitions
  /// (which then render nothing in the body) and sets the `uses_` flags its
  /// launches, stream lines and communication buffers will set, by the same
  /// rules (`render_body` checks that they agree).
  void declare_module_needs();
  [[nodiscard]] std::string_view kernel_device_type(ir::KernelId id) const;

  // ---- prologue ---------------------------------------------------------------

  void write_prologue();

  void write_input_assert(const ir::BufferDecl& b);

  /// Deferred asserts: asserts `b` here when it is an input not asserted yet.
  void assert_input_before_use(ir::BufferId b);

  /// The effects visitor run before each line (one walk, instantiated once
  /// per line kind): every buffer the line names (as
  /// `ir::for_each_buffer_named` does, but on the line's own kind) is
  /// asserted first when it is a pending input (deferred asserts), and every
  /// view of a buffer it passes is collected into `line_views_` to be
  /// guarded.
  struct LineUses {
    FunctionEmitter& emitter;
    void operator()(const ir::effect::Allocated& e) const { emitter.assert_input_before_use(e.buffer); }
    void operator()(const ir::effect::Accessed& e) const {
      emitter.assert_input_before_use(e.buffer);
      if (e.view) emitter.line_views_.emplace_back(e.buffer, e.view);
    }
    void operator()(const ir::effect::Released& e) const { emitter.assert_input_before_use(e.buffer); }
    void operator()(const ir::effect::Reused& e) const {
      emitter.assert_input_before_use(e.old_buffer);
      emitter.assert_input_before_use(e.new_buffer);
    }
    void operator()(const ir::effect::Aliased& e) const {
      emitter.assert_input_before_use(e.view);
      emitter.assert_input_before_use(e.base);
    }
    void operator()(const ir::effect::Selected& e) const {
      emitter.assert_input_before_use(e.element);
      emitter.assert_input_before_use(e.tuple);
    }
    void operator()(const ir::effect::Carved& e) const { emitter.assert_input_before_use(e.buffer); }
    template <class Other>
    void operator()(const Other&) const {}
  };


  // ---- streams ----------------------------------------------------------------

  int stream_device(const ir::Device& d) const;

  static std::string stream_name(int device, std::uint32_t stream);

  void append_side_stream(std::optional<int> device, std::uint32_t stream);

  void write_stream_fetch(int device, std::uint32_t stream, std::string_view name);

  void remember_stream(int device, std::uint32_t stream);

  /// The variable holding the raw stream for a launch: fetched once per
  /// scope (`stream0 = get_raw_stream(0)`); inside a side-stream context
  /// the current stream is fetched afresh per launch, as Inductor does.
  std::string stream_for(const ir::Device& d, std::uint32_t stream);

  // ---- subgraph calls ---------------------------------------------------------

  void append_arg_list(const std::vector<ir::Arg>& first, const std::vector<ir::Arg>& second);

  void subgraph_call(const std::string& name, const std::vector<ir::Arg>& args, const std::vector<ir::Arg>& more,
                     const std::vector<ir::BufferId>& outputs);

  // ---- values -----------------------------------------------------------------

  void append_literal(std::string_view s, std::string_view what) { append_literal_to(out_, s, what); }
  void append_literal_to(std::string& out, std::string_view s, std::string_view what) const;
  void append_source_to(std::string& out, std::string_view source, std::string_view kernel_name) const;

  void append_expr(expr::Expr e, std::string_view what);

  /// `e` as a factor of a product: parenthesised unless atomic.
  void append_factor(expr::Expr e, std::string_view what);

  void append_shape(std::span<const expr::Expr> dims, std::string_view what);

  void append_reinterpret(std::string_view base, std::span<const expr::Expr> sizes,
                          std::span<const expr::Expr> strides, expr::Expr offset);

  void append_buffer_arg(const ir::BufferArg& b);

  void append_arg(const ir::Arg& a, int depth = 0);

  void append_args(const std::vector<ir::Arg>& args);

  /// `, name=value` for each keyword argument; `reserved` is a keyword the
  /// call adds itself (`out`).
  void append_kwargs(const std::vector<ir::NamedArg>& kwargs, bool after_positional, std::string_view reserved);

  void append_ctypes_arg(const ir::Arg& a, ir::ParamType type, std::string_view kernel_name);

  void reject_explicit_grid(const ir::LaunchGrid& g, std::string_view kernel_name) const;

  void append_key_path(std::string_view base, const ir::KeyPath& path);

  /// `empty_strided_cuda(sizes, strides, dtype)` when the helper allocates
  /// on the right device (the CPU, a device without index, or the device
  /// the innermost guard selects); otherwise the generic
  /// `empty_strided(sizes, strides, device='cuda:1', dtype=...)`.
  void append_allocation(const ir::Layout& l);

  /// `storage_offset + 1 + sum((size_i - 1)*stride_i)`, as text.
  void append_storage_elements(const ir::Layout& l);

  void append_empty_strided_1d(expr::Expr count, ir::DType dtype, const ir::Device& device, std::string_view what);

  template <class F>
  void append_empty_strided_call(const ir::Device& d, ir::DType dtype, F&& shape_and_strides);

  // ---- view bounds ------------------------------------------------------------

  /// The bytes from the first element of `b` to the end of its storage
  /// (ir/view_extent.hpp): what a Reinterpret left it, or its own span.
  [[nodiscard]] expr::Expr room_of(ir::BufferId b) const;

  /// Neither reinterpret_tensor nor alloc_from_pool checks bounds: a view
  /// that provably reaches past its storage is a diagnostic, and one whose
  /// bounds depend on the symbols gets a guard that raises before the view
  /// is taken, naming the view and both sizes.
  void guard_extent(const ir::ViewExtent& e, const std::string& what);

  /// Guards a buffer argument's view of `b` (none without a view).
  void guard_view(ir::BufferId b, const ir::View& v);
  void guard_view(const ir::BufferArg& a) {
    if (a.view) guard_view(a.buffer, *a.view);
  }


  // ---- debug printer ----------------------------------------------------------

  [[nodiscard]] bool debug_wraps(std::string_view kernel_name) const;

  /// Lines before or after a launch. Level 1 saves each tensor argument;
  /// level 2 prints every argument (only buffers for extern calls).
  void debug_lines(std::string_view when, std::string_view kernel_name, const std::vector<ir::Arg>& args,
                   const ir::ArgTypes* types, bool buffers_only);

  void debug_line(std::string_view when, std::string_view kernel_name, std::string_view value,
                  std::string_view label);

  void debug_extern(std::string_view when, std::string_view op, const std::vector<ir::Arg>& args,
                    const std::vector<ir::NamedArg>& kwargs, const ir::BufferArg* out);

  ModuleState& module_;
  const PythonOptions& options_;
  const ir::Program& program_;
  std::string& out_;
  std::string_view function_name_;
  bool top_level_;
  [[maybe_unused]] int depth_;
  wrapir::detail::SinkBuffer* sink_;
  /// The body's definitions were rendered by `declare_module_needs`.
  bool definitions_declared_ = false;

  int indent_ = 0;
  std::vector<Block> blocks_;
  bool auto_guard_ = false;
  std::size_t line_index_ = 0;
  std::string_view kind_{};
  TableNameSet local_names_{program_};
  std::vector<char> kernel_called_;
  std::vector<std::string_view> kernel_device_;
  /// The buffers (by index: 4 bytes, not a 16-byte view of the name) bound
  /// to each pool's storage, which the pool's `del` releases with it.
  std::vector<std::vector<std::uint32_t>> pool_names_;
  std::vector<std::pair<int, std::uint32_t>> fetched_streams_;
  std::vector<char> asserted_;
  /// The room (ir/view_extent.hpp) of each buffer a Reinterpret defined.
  std::vector<expr::Expr> view_room_;
  ir::PoolSliceVerdicts pool_slices_;
  std::size_t pending_asserts_ = 0;
  /// The views the current line passes (`LineUses`), reused line to line.
  std::vector<std::pair<ir::BufferId, const ir::View*>> line_views_;
};

}  // namespace wrapir::python::detail
