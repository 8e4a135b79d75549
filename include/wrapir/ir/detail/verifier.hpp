#pragma once
/// \file
/// The one-program verifier (an internal of ir/verify.hpp, included only by
/// its ir/impl/verify*.ipp): its members are declared here and defined in
/// those files by responsibility. `check_line` is how a line is walked: the
/// kind's own fields (`check_fields`, with positions for the messages), then
/// what it does to buffers, pools and scopes as the effects table says
/// (ir/effects.hpp), then what needs its definitions (`check_results`).

#include <wrapir/detail/config.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/detail/verify_state.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/pool_slice_verdicts.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/symbol.hpp>
#include <wrapir/ir/verify.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace wrapir::ir::detail::verifier {

class ProgramVerifier { public:
  ProgramVerifier(const Program& p, std::string path, const expr::Context* root_ctx, FreeSymbolCache& cache,
                  std::vector<Finding>& out, int depth, const VerifyOptions& options,
                  std::vector<RuntimeCheck>* runtime_checks)
      : p_(p), path_(std::move(path)), root_ctx_(root_ctx), ctx_(p.context.get()), cache_(cache), out_(out),
        depth_(depth), options_(options), runtime_checks_(runtime_checks) {}

  void run();

 private:
  // ---- findings ------------------------------------------------------------

  void report(std::string subject, std::string message);

  [[nodiscard]] bool has(BufferId b) const noexcept { return b.index < p_.buffers.size(); }
  [[nodiscard]] bool has(KernelId k) const noexcept { return k.index < p_.kernels.size(); }
  [[nodiscard]] bool has(PoolId q) const noexcept { return q.index < p_.pools.size(); }
  [[nodiscard]] bool has(GraphId g) const noexcept { return g.index < p_.subgraphs.size(); }

  [[nodiscard]] std::string buffer_name(std::uint32_t b) const;
  [[nodiscard]] std::string buffer_subject(BufferId b) const { return "buffer " + buffer_name(b.index); }
  [[nodiscard]] std::string kernel_name(std::uint32_t k) const;
  [[nodiscard]] std::string kernel_subject(KernelId k) const { return "kernel " + kernel_name(k.index); }
  [[nodiscard]] std::string pool_name(std::uint32_t q) const;
  [[nodiscard]] std::string pool_subject(PoolId q) const { return "pool " + pool_name(q.index); }
  [[nodiscard]] std::string graph_subject(GraphId g) const;
  [[nodiscard]] static std::string symbol_subject(expr::Expr s) { return "symbol " + shown(s.name()); }

  [[nodiscard]] std::string render(const Where& w) const;

  [[nodiscard]] static std::string line_text(std::size_t line);

  bool report_missing(BufferId b);
  bool report_missing(KernelId k);
  bool report_missing(PoolId q);
  bool report_missing(GraphId g);

  void check_name_field(std::string_view name, std::string_view what);
  /// An operator path the generated code will call: a real operator
  /// namespace or a registered path (`check_operator_path`), and printable
  /// as Python, which both the Python and the FX targets print it as.
  void check_op_name(const OpName& op);
  void check_device(const Device& d, const char* what);

  // ---- expressions and symbols -----------------------------------------------

  /// Checks that `e` is an expression of this program whose symbols are
  /// declared and defined here; false when it is null or foreign.
  bool check_expr(expr::Expr e, const Where& w);

  void check_symbol_defined(expr::Expr s, const Where& w);

  /// The line defines `s`, which must be a declared symbol of `expected`
  /// origin, not defined yet.
  void define_symbol(expr::Expr s, SymbolOrigin expected, const Where& w);

  // ---- buffers ---------------------------------------------------------------

  [[nodiscard]] std::optional<Death> death(std::uint32_t b) const;

  /// What made `b` unusable, as a clause (`it was freed at line 3`).
  [[nodiscard]] std::string event(const Death& d, std::uint32_t b) const;

  /// A use of `b` as a tensor (or, with `allow_multi_output`, as the
  /// multi-output result MultiOutput and UnbackedSymbolDefs read).
  bool use_buffer(BufferId b, bool allow_multi_output = false);

  /// Whether `v` is well formed (its extent can be checked).
  bool check_view(const View& v, const Where& w);

  /// The bytes from the first element of `b` to the end of its storage, or
  /// null when unknown (a malformed layout, a view whose room is unknown).
  [[nodiscard]] expr::Expr room_of(std::uint32_t b) const;

  /// Reports a view that provably reaches past its storage; records one
  /// whose bounds need a run-time check.
  void check_extent(const ViewExtent& e, const std::string& subject, const std::string& what);

  /// A view argument of `a.buffer` stays inside that buffer's storage.
  void check_arg_view_extent(const BufferArg& a, const Where& w);

  bool use_buffer_arg(const BufferArg& a, const Where& w);

  void use_arg(const Arg& a, const Where& w, int depth = 0);

  void use_named_args(const std::vector<NamedArg>& kwargs);

  void check_layout_symbols(std::uint32_t b);

  /// The line defines `b`. Returns whether it did: false when `b` is not
  /// in the table, or is an input or constant (live from the start).
  bool define_buffer(BufferId b, Definition how);

  /// Whether a line can define `b` (it is in the table and is not live
  /// from the start).
  [[nodiscard]] bool definable(BufferId b) const noexcept;

  /// The line ends `b`'s name as `how` says (effect::Released); `offered`:
  /// its storage is offered to a later Reuse instead of freed.
  void end_buffer(BufferId b, Release how, bool offered);

  [[nodiscard]] const Layout* layout_of(BufferId b) const;

  // ---- tables ----------------------------------------------------------------

  template <class Subject>
  void note_name(std::string_view name, const char* what, const Subject& subject) {
    const auto [it, inserted] = names_.try_emplace(name, what);
    if (!inserted) report(subject(), std::string("its name is already used by a ") + it->second + " of this program");
  }

  void check_tables();

  void check_shape_source(const SymbolDecl& s, const std::string& subject);

  void check_inputs();

  // ---- the body --------------------------------------------------------------

  void check_body();

  /// One line: its own fields and operands first (with their positions,
  /// for the messages), then what it does to buffers, pools and scopes, read
  /// from the effects table in the order the line acts, then the checks
  /// that need what it defined.
  template <class L>
  void check_line(const L& l) {
    check_fields(l);
    if constexpr (requires { l.provenance; }) check_provenance(l.provenance);
    for_each_effect(l, effect::Handlers{
                           [&](const effect::Allocated& e) { define_buffer(e.buffer, Definition::allocated(e.storage)); },
                           [&](const effect::Released& e) { end_buffer(e.buffer, e.how, e.offered); },
                           [&](const effect::Reused& e) { reuse(e); },
                           [&](const effect::Aliased& e) { alias(e); },
                           [&](const effect::Selected& e) { select(e); },
                           [&](const effect::Carved& e) { carve(e); },
                           [&](const effect::PoolCreated& e) { create_pool(e.pool); },
                           [&](const effect::PoolReturned& e) { return_to_pool(e); },
                           [&](const effect::ScopeEntered& e) {
                             if (e.graph) report_missing(*e.graph);
                             open_scope(e.kind);
                           },
                           [&](const effect::ScopeExited& e) { close_scope(e.kind); },
                           // Accesses, symbols, kernels and subgraph calls are
                           // checked with the line's fields, where their
                           // positions are known for the messages.
                           [](const auto&) {},
                       });
    check_results(l);
  }

  /// Checks of a line that need what its effects defined; most kinds have
  /// none.
  template <class L>
  void check_results(const L&) {}

  // ---- what lines do to storage (effects) -------------------------------------

  void reuse(const effect::Reused& e);

  void check_reuse_key(BufferId old_id, BufferId new_id);

  /// Creating a pool evaluates its size.
  void create_pool(PoolId q);

  /// Whether `q` can hand out memory at this line.
  bool use_pool(PoolId q);

  /// A region of a live pool (carved even from a pool that is not usable
  /// here, so that one mistake gives one finding).
  void carve(const effect::Carved& e);

  void return_to_pool(const effect::PoolReturned& e);

  /// A view is usable while its base is, and stays inside its base's storage.
  void alias(const effect::Aliased& e);

  /// An element of a multi-output result.
  void select(const effect::Selected& e);

  // ---- each kind's own fields --------------------------------------------------

  // Memory

  void check_fields(const Allocate&) {}
  void check_fields(const FreeIfNotReused&) {}
  void check_fields(const Reuse&) {}
  void check_fields(const Free&) {}
  void check_fields(const Null&) {}
  void check_fields(const PoolCreate&) {}

  /// A pool created as a tensor: a valid dtype, one stride per size, and a
  /// storage that does not provably differ from the pool's size in bytes.
  void check_pool_tensor(const PoolDecl& q, const std::string& subject);

  void check_fields(const AllocFromPool& l);

  void check_results(const AllocFromPool& l);

  void check_fields(const DeallocFromPool& l);

  void check_fields(const CommBufferAllocate&) {}
  void check_fields(const CommBufferFree&) {}

  void check_fields(const WorkspaceAllocate& l);
  void check_results(const WorkspaceAllocate& l);

  void check_fields(const WorkspaceFree&) {}

  [[nodiscard]] std::span<const expr::Expr> sizes_of(const BufferArg& a) const;
  [[nodiscard]] bool rank_known(const BufferArg& a) const { return a.view || layout_of(a.buffer); }

  void check_fields(const DeviceCopy& l);

  // Views

  void check_fields(const Reinterpret&) {}

  // Kernels

  void check_metadata(const KernelMetadata& m);

  /// The metadata's parameter names, kernel name and Triton or C++ parts
  /// against the kernel table's entry for `k` (a kernel of the table).
  void check_metadata_of(const KernelMetadata& m, KernelId k);

  /// A line's provenance: every entry one line of text, not empty.
  void check_provenance(const OptionalBox<Provenance>& p);

  void check_fields(const KernelDefinition& l);

  [[nodiscard]] std::string describe_arg(const Arg& a) const;

  /// Whether argument `a` can be passed for a parameter of type `t`.
  [[nodiscard]] bool fits(const Arg& a, ParamType t) const;

  void check_call_args(KernelId k, const std::vector<Arg>& args, std::span<const ParamType> arg_types);

  void check_grid(const LaunchGrid& grid);

  /// Reports a call of `k` that is not defined as `wanted` at this line.
  void check_called(KernelId k, KernelDef wanted);

  void check_fields(const KernelCall& l);

  void check_fields(const SymbolicCallArg& l);

  void check_fields(const MultiKernelDefinition& l);

  /// The arguments `arg_index[i]` selects for candidate `i` lie inside the
  /// combined list and match the candidate's parameters.
  void check_candidate_args(const MultiKernelDefinition& l, std::size_t i, const std::vector<KernelParam>& sig);

  void check_fields(const MultiKernelCall& l);

  // Extern kernels

  void use_args(const std::vector<Arg>& args);

  void check_fields(const ExternKernelAlloc& l);

  void check_fields(const ExternKernelOut& l);

  void check_fields(const ExternKernelMultiOut& l);

  /// Why `path` is not a valid key path, if it is not; with
  /// `index_and_key_only`, only index and key steps are allowed.
  [[nodiscard]] static std::optional<std::string> path_problem(const KeyPath& path, bool index_and_key_only);

  void check_fields(const MultiOutput&) {}
  void check_results(const MultiOutput& l);

  void check_fields(const ScatterFallback& l);

  void check_fields(const IndexPutFallback& l);

  void check_fields(const DynamicScalar& l);

  void check_fields(const UnbackedSymbolDefs& l);

  void check_fields(const AssertSizeStride& l);

  void check_fields(const AssertAlignment& l);

  void check_fields(const AssertScalar& l);

  /// An assert's optional op name: one line of text (it is printed inside
  /// a string literal and the error message).
  void check_assert_op_name(const std::optional<std::string>& op_name);

  // Control

  void open_scope(ScopeKind s) { scopes_.push_back(OpenScope{s, at_}); }

  void close_scope(ScopeKind s);

  void check_fields(const EnterSubgraph&) {}
  void check_fields(const ExitSubgraph&) {}

  /// The arguments a subgraph call passes: buffers or symbolic integers.
  void use_operands(const std::vector<Arg>& operands, const char* what);

  [[nodiscard]] std::size_t rank_of(const BufferArg& a) const;

  /// Subgraph `g` takes inputs like `operands` (`what` names them in
  /// messages: "operand", "carried value").
  void match_inputs(const Program& g, const std::string& subject, const std::vector<const Arg*>& operands,
                    std::string_view caller);

  /// The dtype of output `i` of subgraph `g`, or why it has none.
  [[nodiscard]] static std::optional<DType> output_dtype(const Program& g, std::size_t i);

  [[nodiscard]] static const char* output_kind(const ProgramOutput& o);

  void check_fields(const Conditional& l);

  void check_fields(const WhileLoop& l);

  void check_fields(const EnterDeviceContext& l) { check_device(l.device, "device"); }
  void check_fields(const ExitDeviceContext&) {}

  void check_fields(const EnterStreamContext& l);
  void check_fields(const ExitStreamContext&) {}

  void check_fields(const GetRawStream& l) { check_device(l.device, "device"); }

  // Misc

  void check_fields(const Comment& l);

  // ---- outputs and subgraphs -------------------------------------------------

  /// Why `b` cannot be returned. A buffer whose storage a Reuse with
  /// `delete_old = false` took stays bound to that storage (an output that
  /// a later buffer updates in place): it can be returned while the storage
  /// is alive under its last owner.
  [[nodiscard]] std::optional<Death> death_at_end(std::uint32_t b) const;

  void check_outputs();

  void check_subgraphs();

  const Program& p_;
  std::string path_;
  const expr::Context* root_ctx_;
  const expr::Context* ctx_;
  FreeSymbolCache& cache_;
  std::vector<Finding>& out_;
  int depth_;
  const VerifyOptions& options_;
  std::vector<RuntimeCheck>* runtime_checks_;

  std::size_t at_ = no_line;
  std::string_view kind_ = "program";
  /// Counts the places expressions are checked at (lines, table entries,
  /// outputs), so that a symbol is reported once per place.
  std::size_t site_ = 0;

  std::vector<BufferTrack> buffers_;
  std::vector<SymbolTrack> symbols_;
  std::vector<KernelTrack> kernels_;
  std::vector<PoolTrack> pools_;
  std::vector<OpenScope> scopes_;
  std::unordered_map<const expr::Node*, std::uint32_t> symbol_index_;
  std::unordered_map<const expr::Node*, std::size_t> undeclared_reported_;
  std::unordered_map<std::string_view, const char*> names_;
  PoolSliceVerdicts pool_slices_;
};

}  // namespace wrapir::ir::detail::verifier
