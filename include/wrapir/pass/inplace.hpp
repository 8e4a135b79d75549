#pragma once
/// \file
/// `plan_inplace`: in-place reuse (reference §0.5, §3.1): a kernel's output
/// takes over the storage of an input that dies at that call, so the kernel
/// writes its result where it read its operand.
///
/// The IR does not know what a kernel does: an elementwise kernel may write
/// over its input, a reduction or a transpose may not. `KernelDecl` carries
/// no aliasing metadata, so the caller says which pairs may alias through
/// `InplaceOptions::may_alias(kernel, input argument, output argument)`,
/// as Inductor's scheduler decides from the kernel's body; without it the
/// pass changes nothing.
///
/// A KernelCall at line `c` with arguments `in` (index i) and `out` (index
/// o), both whole buffers (no view), qualifies when:
/// - `may_alias(kernel, i, o)` holds;
/// - `out` is created by an Allocate at line `a < c`, and no line between
///   `a` and `c` names `in`'s or `out`'s storage;
/// - `in` dies at the call: the only line after `c` that names its storage
///   (through any view or earlier Reuse) is its own free (FreeIfNotReused,
///   or Free for a donated graph input), and its storage is not a program
///   output;
/// - `in` may be reused (Inductor's `can_reuse`): an intermediate or
///   output buffer, or a donated graph input; not a constant, workspace,
///   comm buffer or multi-output tuple;
/// - the storage fits (`can_match_buffer_size`): same device, dtype,
///   stream and alignment, and the storage sizes in elements print the same
///   or `0.95 * in <= out <= in` is provable from the symbols' ranges
///   (`expr::bounds`; hints are not proofs).
///
/// Then the Allocate becomes `Reuse{in, out}`, the call passes `out`
/// wherever it passed `in`, and `in`'s free becomes Null. Each buffer takes
/// part in at most one in-place reuse per run (the first qualifying pair in
/// line and argument order); MultiKernelCall lines are left alone. Each
/// subgraph program is processed as its own scope. A verified program stays
/// verified.

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>

#include <boost/variant2/variant.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::pass {

struct InplaceOptions {
  /// Whether `kernel` may write the output it receives as argument
  /// `output_arg` over the input it receives as argument `input_arg`
  /// (indices into the call's arguments, which follow its signature).
  /// Empty: no in-place reuse.
  std::function<bool(const ir::KernelDecl& kernel, std::size_t input_arg, std::size_t output_arg)> may_alias{};
  /// Hints for the statistics.
  TraceOptions trace{};
};

/// Whether storage of `out_size` elements may take over storage of
/// `in_size` elements (Inductor's `can_match_buffer_size`, sizes only):
/// they print the same, or `0.95 * in <= out <= in` is provable.
[[nodiscard]] inline bool can_match_storage_size(expr::Expr in_size, expr::Expr out_size) {
  if (!in_size || !out_size || &in_size.context() != &out_size.context()) return false;
  if (in_size == out_size) return true;
  try {
    if (expr::print_python(in_size) == expr::print_python(out_size)) return true;
    expr::Context& ctx = in_size.context();
    const bool fits = expr::bounds(expr::sub(in_size, out_size)).known_nonnegative();
    // out >= 0.95 * in, in integers: 20 * out - 19 * in >= 0.
    const expr::Expr slack = expr::sub(expr::mul(ctx.integer(20), out_size), expr::mul(ctx.integer(19), in_size));
    const bool close = expr::bounds(slack).known_nonnegative();
    return fits && close;
  } catch (const expr::Error&) {
    return false;  // too large to print or to build: no proof
  }
}

namespace detail {

/// In-place reuse within one program; returns how many were made.
class InplacePlanner {
 public:
  InplacePlanner(ir::Program& p, const InplaceOptions& options, HintEvaluator& hints)
      : p_(p), options_(options), hints_(hints) {}

  Result<std::size_t> run() {
    if (!options_.may_alias) return std::size_t{0};
    if (Result<Liveness> live = liveness_of(p_); !live) return live.error();  // ids checked from here on
    index_storage();
    std::size_t made = 0;
    for (std::size_t c = 0; c < p_.body.size(); ++c) {
      auto* call = std::get_if<ir::KernelCall>(&p_.body[c]);
      if (!call || !p_.contains(call->kernel)) continue;
      if (try_call(c, *call)) ++made;
    }
    return made;
  }

 private:
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

  /// Storage roots (a view or a Reuse's new buffer shares its base's
  /// root), the lines that name each root, and each buffer's free and
  /// creating Allocate.
  void index_storage() {
    const std::size_t n = p_.buffers.size();
    root_.resize(n);
    for (std::size_t b = 0; b < n; ++b) root_[b] = b;
    refs_.assign(n, {});
    free_line_.assign(n, none);
    allocate_line_.assign(n, none);
    output_root_.assign(n, false);
    namespace fx = ir::effect;
    for (std::size_t i = 0; i < p_.body.size(); ++i) {
      const ir::Line& line = p_.body[i];
      // Aliases join their base's root before the line's references count.
      ir::for_each_effect(line, fx::Handlers{
          [&](const fx::Aliased& e) { root_[e.view.index] = root_[e.base.index]; },
          [&](const fx::Reused& e) { root_[e.new_buffer.index] = root_[e.old_buffer.index]; },
          [&](const fx::Allocated& e) {
            if (e.storage == ir::Storage::allocate) allocate_line_[e.buffer.index] = i;
          },
          // The frees that may end an input's storage: FreeIfNotReused (not
          // offered) and Free (a donated graph input).
          [&](const fx::Released& e) {
            if ((e.how == ir::Release::free_if_not_reused && !e.offered) || e.how == ir::Release::free)
              free_line_[e.buffer.index] = i;
          },
          [](const auto&) {},
      });
      ir::for_each_buffer_named(line, [&](ir::BufferId b) {
        std::vector<std::size_t>& r = refs_[root_[b.index]];
        if (r.empty() || r.back() != i) r.push_back(i);
      });
    }
    for (const ir::ProgramOutput& o : p_.outputs)
      if (const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o); b && p_.contains(b->buffer))
        output_root_[root_[b->buffer.index]] = true;
  }

  /// Whether the lines naming `root` strictly between `first` and `last`
  /// are none, `allowed` excepted.
  [[nodiscard]] bool untouched_between(std::size_t root, std::size_t first, std::size_t last,
                                       std::size_t allowed = none) const {
    for (const std::size_t line : refs_[root])
      if (line > first && line < last && line != allowed) return false;
    return true;
  }

  [[nodiscard]] static bool may_give(const ir::BufferDecl& d) {
    if (d.multi_output) return false;
    return d.role == ir::BufferRole::intermediate || d.role == ir::BufferRole::output ||
           (d.role == ir::BufferRole::input && d.donated);
  }

  [[nodiscard]] bool fits(ir::BufferId in, ir::BufferId out) {
    const ir::BufferDecl& i = p_.buffer(in);
    const ir::BufferDecl& o = p_.buffer(out);
    if (i.layout.device != o.layout.device || i.layout.dtype != o.layout.dtype || i.stream != o.stream ||
        i.aligned != o.aligned || i.comm != o.comm)
      return false;
    const Result<expr::Expr>& in_size = hints_.buffer_storage_size(p_, in);
    const Result<expr::Expr>& out_size = hints_.buffer_storage_size(p_, out);
    return in_size && out_size && can_match_storage_size(in_size.value(), out_size.value());
  }

  bool try_call(std::size_t c, ir::KernelCall& call) {
    const ir::KernelDecl& kernel = p_.kernel(call.kernel);
    // Lists would hide buffers from the argument rewrite below.
    for (const ir::Arg& arg : call.args)
      if (arg.holds<ir::ArgList>()) return false;
    for (std::size_t o = 0; o < call.args.size(); ++o) {
      const ir::BufferArg* out_arg = call.args[o].get_if<ir::BufferArg>();
      if (!out_arg || out_arg->view) continue;
      const ir::BufferId out = out_arg->buffer;
      const std::size_t a = allocate_line_[out.index];
      if (a == none || a >= c || used_[out.index] || !untouched_between(root_[out.index], a, c)) continue;
      const ir::BufferDecl& out_decl = p_.buffer(out);
      if (out_decl.multi_output ||
          (out_decl.role != ir::BufferRole::intermediate && out_decl.role != ir::BufferRole::output))
        continue;
      for (std::size_t i = 0; i < call.args.size(); ++i) {
        const ir::BufferArg* in_arg = call.args[i].get_if<ir::BufferArg>();
        if (i == o || !in_arg || in_arg->view || in_arg->buffer == out) continue;
        const ir::BufferId in = in_arg->buffer;
        const std::size_t root = root_[in.index];
        const std::size_t f = free_line_[in.index];
        if (used_[in.index] || f == none || f <= c || output_root_[root] || !may_give(p_.buffer(in))) continue;
        // The call and the free are the last lines naming the storage,
        // and nothing names it between the allocation and the call.
        if (refs_[root].back() != f || !untouched_between(root, c, f) || !untouched_between(root, a, c)) continue;
        // The call names the storage only as `in` (a view of it would die
        // with the Reuse).
        bool only_in = true;
        for (const ir::Arg& arg : call.args)
          if (const ir::BufferArg* b = arg.get_if<ir::BufferArg>();
              b && b->buffer != in && root_[b->buffer.index] == root)
            only_in = false;
        if (!only_in || !fits(in, out) || !options_.may_alias(kernel, i, o)) continue;
        p_.body[a] = ir::Reuse{in, out, true};
        p_.body[f] = ir::Null{};
        for (ir::Arg& arg : call.args)
          if (ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&arg.value); b && b->buffer == in)
            b->buffer = out;
        if (used_.size() < p_.buffers.size()) used_.resize(p_.buffers.size(), false);
        used_[in.index] = used_[out.index] = true;
        return true;
      }
    }
    return false;
  }

  ir::Program& p_;
  const InplaceOptions& options_;
  HintEvaluator& hints_;
  std::vector<std::size_t> root_;
  std::vector<std::vector<std::size_t>> refs_;
  std::vector<std::size_t> free_line_;
  std::vector<std::size_t> allocate_line_;
  std::vector<bool> output_root_;
  std::vector<bool> used_ = std::vector<bool>(p_.buffers.size(), false);
};

inline Result<std::size_t> plan_inplace_scope(ir::Program& p, const InplaceOptions& options, HintEvaluator& hints,
                                              const std::string& where) {
  Result<std::size_t> made = InplacePlanner{p, options, hints}.run();
  if (!made) return Diagnostic{where + made.error().message};
  InplaceOptions sub = options;
  sub.trace.hints = hints.bindings();
  std::size_t total = made.value();
  for (ir::Program& g : p.subgraphs) {
    HintEvaluator sub_hints{g, sub.trace};
    Result<std::size_t> m = plan_inplace_scope(g, sub, sub_hints, where + g.name + ": ");
    if (!m) return m;
    total += m.value();
  }
  return total;
}

}  // namespace detail

/// In-place reuse over `p` and its subgraphs (see the file comment);
/// `stats.reuses` counts the Reuse lines of the result. A diagnostic when
/// `p`'s storage cannot be traced.
[[nodiscard]] inline Result<PlanResult> plan_inplace(const ir::Program& p, const InplaceOptions& options) {
  ir::Program planned = p;
  HintEvaluator hints{planned, options.trace};
  Result<std::size_t> made = detail::plan_inplace_scope(planned, options, hints, "");
  if (!made) return made.error();
  Result<PlanStats> stats = measure_plan(p, planned, options.trace);
  if (!stats) return stats.error();
  return PlanResult{std::move(planned), stats.value()};
}

}  // namespace wrapir::pass
