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

#include <wrapir/emit/detail/python_keywords.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/symbol.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
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
[[nodiscard]] inline std::string to_string(const Finding& f) {
  std::string s;
  if (!f.graph_path.empty()) {
    s += f.graph_path;
    s += ": ";
  }
  if (f.line) {
    s += "line ";
    s += std::to_string(*f.line);
    s += " (";
    s += f.kind;
    s += ')';
  } else {
    s += f.kind;
  }
  if (!f.subject.empty()) {
    s += ": ";
    s += f.subject;
  }
  s += ": ";
  s += f.message;
  return s;
}

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

namespace detail::verifier {

inline constexpr std::size_t no_line = static_cast<std::size_t>(-1);
/// `defined_at` of what exists when the program starts.
inline constexpr std::size_t at_start = static_cast<std::size_t>(-2);
inline constexpr std::uint32_t no_id = static_cast<std::uint32_t>(-1);
/// Deeper lists of arguments and subgraphs are reported, not walked, so
/// that hostile input cannot exhaust the stack.
inline constexpr int max_arg_depth = 64;
inline constexpr int max_graph_depth = 256;

/// A name as findings show it: bare when it is a valid name, else quoted
/// and escaped so that it cannot break the finding's line.
[[nodiscard]] inline std::string shown(std::string_view name) {
  return is_valid_name(name) ? std::string(name) : quote_for_diagnostic(name);
}

[[nodiscard]] inline std::string printed(expr::Expr e) {
  if (!e) return "<null>";
  try {
    return expr::print_python(e);
  } catch (const expr::Error&) {
    return "<an expression too large to print>";
  }
}

/// "a" or "an" before a word as it is pronounced (`an int32`, `a uint8`).
[[nodiscard]] inline std::string with_article(std::string_view word) {
  const bool vowel = !word.empty() && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o');
  return (vowel ? "an " : "a ") + std::string(word);
}

template <class E>
[[nodiscard]] std::string enum_value(E e) {
  return std::to_string(static_cast<unsigned>(e));
}

/// The symbols of compound expressions, computed once per node for the
/// whole verification (free symbols depend only on the expression).
class FreeSymbolCache {
 public:
  [[nodiscard]] std::span<const expr::Expr> of(expr::Expr e) {
    auto [it, inserted] = spans_.try_emplace(e.node(), std::pair<std::size_t, std::size_t>{flat_.size(), 0});
    if (inserted) {
      // Iterative and deduplicated: a DAG with shared sub-trees is walked
      // in time linear in its distinct nodes, at any depth.
      seen_.clear();
      stack_.assign(1, e);
      while (!stack_.empty()) {
        const expr::Expr x = stack_.back();
        stack_.pop_back();
        if (!seen_.insert(x.node()).second) continue;
        if (x.is_symbol()) flat_.push_back(x);
        for (const expr::Expr o : x.operands()) stack_.push_back(o);
      }
      it->second.second = flat_.size() - it->second.first;
      // Natural name order, so that findings come in a stable order.
      std::sort(flat_.begin() + static_cast<std::ptrdiff_t>(it->second.first), flat_.end(), expr::ExprLess{});
    }
    return {flat_.data() + it->second.first, it->second.second};
  }

 private:
  std::unordered_map<const expr::Node*, std::pair<std::size_t, std::size_t>> spans_;
  std::vector<expr::Expr> flat_;
  std::vector<expr::Expr> stack_;
  std::unordered_set<const expr::Node*> seen_;
};

enum class Life : std::uint8_t {
  undefined,  // no line defined it yet
  live,
  freed,    // Free, FreeIfNotReused without reuse, CommBufferFree, WorkspaceFree, DeallocFromPool
  offered,  // FreeIfNotReused with reused = true: a Reuse may take the storage
  taken,    // a Reuse took the storage
};

struct BufferTrack {
  Life life = Life::undefined;
  bool view = false;
  bool layout_ok = false;
  bool kept_bound = false;  // taken by a Reuse with delete_old = false
  std::size_t defined_at = no_line;
  std::size_t ended_at = no_line;
  std::uint32_t taken_by = no_id;
  std::uint32_t base = no_id;  // views: the buffer whose storage they alias
  std::uint32_t pool = no_id;  // carved from this pool
  WorkspaceZeroMode zero_mode = WorkspaceZeroMode::uninitialized;
  expr::Expr room{};  // views: the bytes from their first element to the end of the storage; null if unknown
};

struct SymbolTrack {
  bool defined = false;
  std::size_t defined_at = no_line;
  std::size_t reported_site = no_line;  // one finding per symbol and site
};

enum class PoolLife : std::uint8_t { not_created, live, released };

struct PoolTrack {
  PoolLife life = PoolLife::not_created;
  std::size_t created_at = no_line;
  std::size_t released_at = no_line;
};

enum class KernelDef : std::uint8_t { none, plain, multi };

struct KernelTrack {
  KernelDef def = KernelDef::none;
  std::size_t defined_at = no_line;
};

struct OpenScope {
  ScopeKind scope;
  std::size_t line;
};

[[nodiscard]] constexpr std::string_view enter_name(ScopeKind s) noexcept {
  return s == ScopeKind::subgraph ? EnterSubgraph::kind
                                  : (s == ScopeKind::device ? EnterDeviceContext::kind : EnterStreamContext::kind);
}
[[nodiscard]] constexpr std::string_view exit_name(ScopeKind s) noexcept {
  return s == ScopeKind::subgraph ? ExitSubgraph::kind
                                  : (s == ScopeKind::device ? ExitDeviceContext::kind : ExitStreamContext::kind);
}

/// Where an expression or argument is used, for messages: `text`, then
/// ` <index>` when there is one, then ` of <buffer>` when there is one
/// (`argument 3`, `the layout of buf2`). Rendered only for findings.
struct Where {
  const char* text;
  std::size_t index = no_line;
  std::uint32_t buffer = no_id;
};

/// How a line defines a buffer, as its effect in the table says
/// (ir/effects.hpp): the role rules key off it, never off line kinds.
struct Definition {
  enum class By : std::uint8_t { storage, reuse, view, element, pool_region };
  By by;
  /// For `By::storage` (effect::Allocated): the kind of new storage.
  Storage storage = Storage::allocate;
  /// For `By::reuse` (effect::Reused): the storage is a comm buffer's.
  bool of_comm = false;

  [[nodiscard]] static constexpr Definition allocated(Storage s) noexcept { return {By::storage, s, false}; }
  [[nodiscard]] constexpr bool creates(Storage s) const noexcept { return by == By::storage && storage == s; }
  [[nodiscard]] constexpr bool reuses_comm() const noexcept { return by == By::reuse && of_comm; }
  /// An extern operator's result or an element of one: what may hold a
  /// multi-output result.
  [[nodiscard]] constexpr bool is_result() const noexcept {
    return creates(Storage::extern_result) || by == By::element;
  }
};

/// Why a buffer is not usable: what happened (`life`), at which line, to
/// which buffer (itself or a view's base), and who took the storage or
/// which pool was released.
struct Death {
  Life life;
  std::size_t line;
  std::uint32_t buffer;
  std::uint32_t other;
  bool pool_released;
};

// A template only so that its member functions are compiled in the
// translation units that call verify(), not in every one that includes
// this header (they are most of its compile time).
template <class Deferred>
class ProgramVerifier {
 public:
  ProgramVerifier(const Program& p, std::string path, const expr::Context* root_ctx, FreeSymbolCache& cache,
                  std::vector<Finding>& out, int depth, const VerifyOptions& options,
                  std::vector<RuntimeCheck>* runtime_checks)
      : p_(p), path_(std::move(path)), root_ctx_(root_ctx), ctx_(p.context.get()), cache_(cache), out_(out),
        depth_(depth), options_(options), runtime_checks_(runtime_checks) {}

  void run() {
    check_tables();
    check_body();
    check_outputs();
    check_subgraphs();
  }

 private:
  // ---- findings ------------------------------------------------------------

  void report(std::string subject, std::string message) {
    out_.push_back(Finding{path_, at_ == no_line ? std::nullopt : std::optional<std::size_t>(at_), kind_,
                           std::move(subject), std::move(message)});
  }

  [[nodiscard]] bool has(BufferId b) const noexcept { return b.index < p_.buffers.size(); }
  [[nodiscard]] bool has(KernelId k) const noexcept { return k.index < p_.kernels.size(); }
  [[nodiscard]] bool has(PoolId q) const noexcept { return q.index < p_.pools.size(); }
  [[nodiscard]] bool has(GraphId g) const noexcept { return g.index < p_.subgraphs.size(); }

  [[nodiscard]] std::string buffer_name(std::uint32_t b) const {
    return b < p_.buffers.size() ? shown(p_.buffers[b].name) : "#" + std::to_string(b);
  }
  [[nodiscard]] std::string buffer_subject(BufferId b) const { return "buffer " + buffer_name(b.index); }
  [[nodiscard]] std::string kernel_name(std::uint32_t k) const {
    return k < p_.kernels.size() ? shown(p_.kernels[k].name) : "#" + std::to_string(k);
  }
  [[nodiscard]] std::string kernel_subject(KernelId k) const { return "kernel " + kernel_name(k.index); }
  [[nodiscard]] std::string pool_name(std::uint32_t q) const {
    return q < p_.pools.size() ? shown(p_.pools[q].name) : "#" + std::to_string(q);
  }
  [[nodiscard]] std::string pool_subject(PoolId q) const { return "pool " + pool_name(q.index); }
  [[nodiscard]] std::string graph_subject(GraphId g) const {
    return "subgraph " + (has(g) ? shown(p_.subgraphs[g.index].name) : "#" + std::to_string(g.index));
  }
  [[nodiscard]] static std::string symbol_subject(expr::Expr s) { return "symbol " + shown(s.name()); }

  [[nodiscard]] std::string render(const Where& w) const {
    std::string s = w.text;
    if (w.index != no_line) s += " " + std::to_string(w.index);
    if (w.buffer != no_id) s += " of " + buffer_name(w.buffer);
    return s;
  }

  [[nodiscard]] static std::string line_text(std::size_t line) {
    return line == at_start ? std::string("the start") : "line " + std::to_string(line);
  }

  bool report_missing(BufferId b) {
    if (has(b)) return false;
    report(buffer_subject(b), "not in this program's buffer table (" + std::to_string(p_.buffers.size()) + " entries)");
    return true;
  }
  bool report_missing(KernelId k) {
    if (has(k)) return false;
    report(kernel_subject(k), "not in this program's kernel table (" + std::to_string(p_.kernels.size()) + " entries)");
    return true;
  }
  bool report_missing(PoolId q) {
    if (has(q)) return false;
    report(pool_subject(q), "not in this program's pool table (" + std::to_string(p_.pools.size()) + " entries)");
    return true;
  }
  bool report_missing(GraphId g) {
    if (has(g)) return false;
    report(graph_subject(g),
           "not in this program's subgraph table (" + std::to_string(p_.subgraphs.size()) + " entries)");
    return true;
  }

  void check_name_field(std::string_view name, std::string_view what) {
    if (auto err = check_name(name, what)) report("", *std::move(err));
  }
  /// An operator path the generated code will call: a real operator
  /// namespace or a registered path (`check_operator_path`), and printable
  /// as Python, which both the Python and the FX targets print it as.
  void check_op_name(const OpName& op) {
    if (auto err = check_operator_path(op.text, options_.operators)) {
      report("", *std::move(err));
      return;
    }
    if (const std::string_view kw = python::detail::python_keyword_part(op.text); !kw.empty())
      report("", "operator " + quote_for_diagnostic(op.text) + " has the part '" + std::string(kw) +
                     "', a Python keyword, so the Python and FX targets cannot print it");
  }
  void check_device(const Device& d, const char* what) {
    if (auto err = validate(d)) report("", std::string(what) + ": " + err->message);
  }

  // ---- expressions and symbols -----------------------------------------------

  /// Checks that `e` is an expression of this program whose symbols are
  /// declared and defined here; false when it is null or foreign.
  bool check_expr(expr::Expr e, const Where& w) {
    if (!e) {
      report("", render(w) + " is a null expression");
      return false;
    }
    if (ctx_ && &e.context() != ctx_) {
      report("", render(w) + " belongs to another expression context than the program's");
      return false;
    }
    switch (e.kind()) {
      case expr::Kind::integer: return true;
      case expr::Kind::symbol: check_symbol_defined(e, w); return true;
      default:
        for (const expr::Expr s : cache_.of(e)) check_symbol_defined(s, w);
        return true;
    }
  }

  void check_symbol_defined(expr::Expr s, const Where& w) {
    const auto it = symbol_index_.find(s.node());
    if (it == symbol_index_.end()) {
      std::size_t& reported = undeclared_reported_[s.node()];
      if (reported == site_ + 1) return;
      reported = site_ + 1;
      report(symbol_subject(s), "used in " + render(w) + " but not declared in this program's symbol table");
      return;
    }
    SymbolTrack& t = symbols_[it->second];
    if (t.defined || t.reported_site == site_) return;
    t.reported_site = site_;
    const SymbolOrigin origin = p_.symbols[it->second].origin;
    if (origin == SymbolOrigin::unbacked)
      report(symbol_subject(s),
             "used in " + render(w) + " before any DynamicScalar or UnbackedSymbolDefs line defines it");
    else if (origin == SymbolOrigin::computed)
      report(symbol_subject(s), "used in " + render(w) + " before any SymbolicCallArg line defines it");
    else
      report(symbol_subject(s), "used in " + render(w) + ", but its origin " + enum_value(origin) +
                                    " is not a SymbolOrigin, so nothing defines it");
  }

  /// The line defines `s`, which must be a declared symbol of `expected`
  /// origin, not defined yet.
  void define_symbol(expr::Expr s, SymbolOrigin expected, const Where& w) {
    if (!s) {
      report("", render(w) + " is a null expression");
      return;
    }
    if (ctx_ && &s.context() != ctx_) {
      report("", render(w) + " belongs to another expression context than the program's");
      return;
    }
    if (!s.is_symbol()) {
      report("", render(w) + " is " + printed(s) + ", not a symbol");
      return;
    }
    const auto it = symbol_index_.find(s.node());
    if (it == symbol_index_.end()) {
      report(symbol_subject(s), "defined by this line but not declared in this program's symbol table");
      return;
    }
    SymbolTrack& t = symbols_[it->second];
    const SymbolOrigin origin = p_.symbols[it->second].origin;
    if (origin != expected)
      report(symbol_subject(s), "defined by this line, but its origin is " +
                                    std::string(symbol_origin_name(origin)) + ", not " +
                                    std::string(symbol_origin_name(expected)));
    else if (t.defined)
      report(symbol_subject(s), "defined twice: it was already defined at " + line_text(t.defined_at));
    if (!t.defined) {
      t.defined = true;
      t.defined_at = at_;
    }
  }

  // ---- buffers ---------------------------------------------------------------

  [[nodiscard]] std::optional<Death> death(std::uint32_t b) const {
    std::uint32_t cur = b;
    // A chain of views is acyclic when built by this pass; the bound keeps
    // a hostile one finite all the same.
    for (std::size_t steps = 0; steps <= buffers_.size(); ++steps) {
      const BufferTrack& t = buffers_[cur];
      if (t.life != Life::live) return Death{t.life, t.ended_at, cur, t.taken_by, false};
      if (t.pool != no_id && pools_[t.pool].life == PoolLife::released)
        return Death{Life::freed, pools_[t.pool].released_at, cur, t.pool, true};
      if (!t.view || t.base == no_id) return std::nullopt;
      cur = t.base;
    }
    return std::nullopt;
  }

  /// What made `b` unusable, as a clause (`it was freed at line 3`).
  [[nodiscard]] std::string event(const Death& d, std::uint32_t b) const {
    const bool self = d.buffer == b;
    const std::string at = " at line " + std::to_string(d.line);
    if (d.pool_released)
      return (self ? "its pool " + pool_name(d.other) : "the pool " + pool_name(d.other) + " of its base " +
                                                            buffer_name(d.buffer)) +
             " was released" + at;
    switch (d.life) {
      case Life::undefined:
        return self ? "no line defined it" : "its base " + buffer_name(d.buffer) + " is not defined";
      case Life::taken:
        return (self ? "its storage" : "the storage of its base " + buffer_name(d.buffer)) + " was reused by " +
               buffer_name(d.other) + at;
      default: return (self ? std::string("it") : "its base " + buffer_name(d.buffer)) + " was freed" + at;
    }
  }

  /// A use of `b` as a tensor (or, with `allow_multi_output`, as the
  /// multi-output result MultiOutput and UnbackedSymbolDefs read).
  bool use_buffer(BufferId b, bool allow_multi_output = false) {
    if (report_missing(b)) return false;
    if (p_.buffers[b.index].multi_output && !allow_multi_output)
      report(buffer_subject(b), "used as a tensor, but it holds a multi-output result, which only MultiOutput and "
                                "UnbackedSymbolDefs read");
    if (const auto d = death(b.index)) {
      if (d->life == Life::undefined && d->buffer == b.index)
        report(buffer_subject(b), "used before any line defines it");
      else
        report(buffer_subject(b), "used after " + event(*d, b.index));
      return false;
    }
    return true;
  }

  /// Whether `v` is well formed (its extent can be checked).
  bool check_view(const View& v, const Where& w) {
    bool ok = true;
    if (v.sizes.size() != v.strides.size()) {
      report("", render(w) + " is a view with " + std::to_string(v.sizes.size()) + " sizes but " +
                     std::to_string(v.strides.size()) + " strides");
      ok = false;
    }
    for (const expr::Expr e : v.sizes) ok = check_expr(e, w) && ok;
    for (const expr::Expr e : v.strides) ok = check_expr(e, w) && ok;
    return check_expr(v.offset, w) && ok;
  }

  /// The bytes from the first element of `b` to the end of its storage, or
  /// null when unknown (a malformed layout, a view whose room is unknown).
  [[nodiscard]] expr::Expr room_of(std::uint32_t b) const {
    const BufferTrack& t = buffers_[b];
    if (t.view) return t.room;
    if (!t.layout_ok || p_.buffers[b].multi_output) return expr::Expr{};
    try {
      return room_bytes(p_.buffers[b].layout);
    } catch (const expr::Error&) {
      return expr::Expr{};
    }
  }

  /// Reports a view that provably reaches past its storage; records one
  /// whose bounds need a run-time check.
  void check_extent(const ViewExtent& e, const std::string& subject, const std::string& what) {
    if (e.fit == ViewFit::exceeds) report(subject, what + " reaches past the storage it views: " + e.problem);
    if (e.fit == ViewFit::unknown && runtime_checks_)
      runtime_checks_->push_back(RuntimeCheck{path_, at_, kind_, subject.empty() ? what : subject + ": " + what, e});
  }

  /// A view argument of `a.buffer` stays inside that buffer's storage.
  void check_arg_view_extent(const BufferArg& a, const Where& w) {
    const expr::Expr room = room_of(a.buffer.index);
    if (!room) return;
    check_extent(check_view_extent(a.view->sizes, a.view->strides, a.view->offset,
                                   p_.buffers[a.buffer.index].layout.dtype, room),
                 "", render(w) + ", a view of " + buffer_name(a.buffer.index) + ",");
  }

  bool use_buffer_arg(const BufferArg& a, const Where& w) {
    const bool ok = use_buffer(a.buffer);
    if (a.view && check_view(*a.view, w) && ok) check_arg_view_extent(a, w);
    return ok;
  }

  void use_arg(const Arg& a, const Where& w, int depth = 0) {
    if (const BufferArg* b = a.get_if<BufferArg>()) {
      use_buffer_arg(*b, w);
    } else if (const expr::Expr* e = a.get_if<expr::Expr>()) {
      check_expr(*e, w);
    } else if (const Device* d = a.get_if<Device>()) {
      if (auto err = validate(*d)) report("", render(w) + ": " + err->message);
    } else if (const DType* t = a.get_if<DType>()) {
      if (!is_valid(*t)) report("", render(w) + " is a dtype " + enum_value(*t) + " that is not a DType");
    } else if (const ArgList* l = a.get_if<ArgList>()) {
      if (depth >= max_arg_depth) {
        report("", render(w) + " nests lists more than " + std::to_string(max_arg_depth) + " deep");
        return;
      }
      for (const Arg& item : l->items) use_arg(item, w, depth + 1);
    }
  }

  void use_named_args(const std::vector<NamedArg>& kwargs) {
    for (std::size_t i = 0; i < kwargs.size(); ++i) {
      check_name_field(kwargs[i].name.text, "keyword argument");
      use_arg(kwargs[i].value, Where{"keyword argument", i});
    }
  }

  void check_layout_symbols(std::uint32_t b) {
    const Layout& l = p_.buffers[b].layout;
    const Where w{"the layout", no_line, b};
    for (const expr::Expr e : l.sizes) check_expr(e, w);
    for (const expr::Expr e : l.strides) check_expr(e, w);
    check_expr(l.storage_offset, w);
  }

  /// The line defines `b`. Returns whether it did: false when `b` is not
  /// in the table, or is an input or constant (live from the start).
  bool define_buffer(BufferId b, Definition how) {
    if (report_missing(b)) return false;
    const BufferDecl& d = p_.buffers[b.index];
    BufferTrack& t = buffers_[b.index];
    const std::string role(buffer_role_name(d.role));
    switch (d.role) {
      case BufferRole::input: report(buffer_subject(b), "is a graph input, which no line defines"); return false;
      case BufferRole::constant: report(buffer_subject(b), "is a constant, which no line defines"); return false;
      case BufferRole::workspace:
        if (!how.creates(Storage::workspace))
          report(buffer_subject(b), "is a workspace, which only WorkspaceAllocate defines");
        break;
      case BufferRole::comm:
        if (!how.creates(Storage::comm) && !how.reuses_comm())
          report(buffer_subject(b), "is a comm buffer, which only CommBufferAllocate defines");
        break;
      default: break;
    }
    if (how.creates(Storage::comm) && d.role != BufferRole::comm)
      report(buffer_subject(b), "is not a comm buffer (its role is " + role + ")");
    if (how.creates(Storage::workspace) && d.role != BufferRole::workspace)
      report(buffer_subject(b), "is not a workspace (its role is " + role + ")");
    if (how.reuses_comm() && d.role != BufferRole::comm)
      report(buffer_subject(b), "takes the storage of a comm buffer but is not one (its role is " + role + ")");
    if (d.multi_output && !how.is_result())
      report(buffer_subject(b),
             "holds a multi-output result, which only ExternKernelAlloc, ExternKernelMultiOut or MultiOutput "
             "defines");
    if (t.life != Life::undefined)
      report(buffer_subject(b), "defined twice: it was already defined at " + line_text(t.defined_at));
    if (t.layout_ok && !d.multi_output) check_layout_symbols(b.index);
    t.life = Life::live;
    t.defined_at = at_;
    t.ended_at = no_line;
    t.taken_by = no_id;
    t.kept_bound = false;
    t.view = false;
    t.base = no_id;
    t.pool = no_id;
    t.room = expr::Expr{};
    return true;
  }

  /// Whether a line can define `b` (it is in the table and is not live
  /// from the start).
  [[nodiscard]] bool definable(BufferId b) const noexcept {
    return has(b) && p_.buffers[b.index].role != BufferRole::input && p_.buffers[b.index].role != BufferRole::constant;
  }

  /// The line ends `b`'s name as `how` says (effect::Released); `offered`:
  /// its storage is offered to a later Reuse instead of freed.
  void end_buffer(BufferId b, Release how, bool offered) {
    if (report_missing(b)) return;
    const BufferDecl& d = p_.buffers[b.index];
    BufferTrack& t = buffers_[b.index];
    const std::string role(buffer_role_name(d.role));
    switch (d.role) {
      case BufferRole::input:
        if (how == Release::free_if_not_reused)
          report(buffer_subject(b), "frees graph input " + quote_for_diagnostic(d.name) +
                                        " with FreeIfNotReused; only Free frees a donated input");
        else if (!d.donated)
          report(buffer_subject(b), "frees graph input " + quote_for_diagnostic(d.name) + ", which was not donated");
        break;
      case BufferRole::constant:
        report(buffer_subject(b), "frees constant " + quote_for_diagnostic(d.name) + ", which the caller owns");
        break;
      case BufferRole::workspace:
        if (how != Release::workspace_free)
          report(buffer_subject(b), "is a workspace, which only WorkspaceFree frees");
        else if (t.life != Life::undefined && t.zero_mode == WorkspaceZeroMode::zero_per_graph)
          report(buffer_subject(b), "is a ZERO_PER_GRAPH workspace, which lives for the whole run and is never freed");
        break;
      case BufferRole::comm:
        // Comm storage is recycled only between comm buffers: a
        // FreeIfNotReused may offer it to a Reuse, never free it.
        if (how != Release::comm_free && !(how == Release::free_if_not_reused && offered))
          report(buffer_subject(b), "is a comm buffer, which only CommBufferFree frees");
        break;
      default: break;
    }
    if (how == Release::comm_free && d.role != BufferRole::comm)
      report(buffer_subject(b), "is not a comm buffer (its role is " + role + ")");
    if (how == Release::workspace_free && d.role != BufferRole::workspace)
      report(buffer_subject(b), "is not a workspace (its role is " + role + ")");
    if (t.view) {
      report(buffer_subject(b), "is a view, which owns no storage and is never freed");
      return;
    }
    if (t.pool != no_id && how != Release::pool_dealloc)
      report(buffer_subject(b), "was carved from pool " + pool_name(t.pool) + "; DeallocFromPool ends it");
    if (offered && d.multi_output) report(buffer_subject(b), "holds a multi-output result, which is never reused");
    switch (t.life) {
      case Life::undefined: report(buffer_subject(b), "freed before any line defines it"); return;
      case Life::freed:
      case Life::offered:
        report(buffer_subject(b), "freed twice: it was already freed at line " + std::to_string(t.ended_at));
        return;
      case Life::taken:
        report(buffer_subject(b), "freed after its storage was reused by " + buffer_name(t.taken_by) + " at line " +
                                      std::to_string(t.ended_at));
        return;
      case Life::live: break;
    }
    if (t.pool != no_id && pools_[t.pool].life == PoolLife::released)
      report(buffer_subject(b), "freed after its pool " + pool_name(t.pool) + " was released at line " +
                                    std::to_string(pools_[t.pool].released_at));
    t.life = offered ? Life::offered : Life::freed;
    t.ended_at = at_;
  }

  [[nodiscard]] const Layout* layout_of(BufferId b) const {
    return has(b) && buffers_[b.index].layout_ok ? &p_.buffers[b.index].layout : nullptr;
  }

  // ---- tables ----------------------------------------------------------------

  template <class Subject>
  void note_name(std::string_view name, const char* what, const Subject& subject) {
    const auto [it, inserted] = names_.try_emplace(name, what);
    if (!inserted) report(subject(), std::string("its name is already used by a ") + it->second + " of this program");
  }

  void check_tables() {
    kind_ = "program";
    if (depth_ == 0) check_name_field(p_.name, "program");
    if (!ctx_) report("", "the program has no expression context");
    else if (root_ctx_ && ctx_ != root_ctx_)
      report("", "the subgraph's expression context is not the root program's");

    buffers_.resize(p_.buffers.size());
    symbols_.resize(p_.symbols.size());
    kernels_.resize(p_.kernels.size());
    pools_.resize(p_.pools.size());
    names_.reserve(p_.buffers.size() + p_.symbols.size() + p_.kernels.size() + p_.pools.size() + p_.subgraphs.size());

    kind_ = "buffers";
    for (std::uint32_t i = 0; i < p_.buffers.size(); ++i) {
      ++site_;
      const BufferDecl& d = p_.buffers[i];
      const BufferId id{i};
      const auto subject = [&] { return buffer_subject(id); };
      if (auto err = check_name(d.name, "buffer")) report(subject(), *std::move(err));
      note_name(d.name, "buffer", subject);
      if (static_cast<std::size_t>(d.role) >= buffer_role_count)
        report(subject(), "its role " + enum_value(d.role) + " is not a BufferRole");
      if (auto err = validate(d.layout))
        report(subject(), "invalid layout: " + err->message);
      else if (ctx_ && &d.layout.storage_offset.context() != ctx_)
        report(subject(), "its layout belongs to another expression context than the program's");
      else
        buffers_[i].layout_ok = true;
      if (d.role == BufferRole::comm && !d.comm) report(subject(), "is a comm buffer without comm info");
      if (d.role != BufferRole::comm && d.comm)
        report(subject(), "has comm info but its role is " + std::string(buffer_role_name(d.role)));
      if (d.comm && d.comm->type != CommBufferType::symm_mem)
        report(subject(), "its comm buffer type " + enum_value(d.comm->type) + " is not a CommBufferType");
      if (d.donated && d.role != BufferRole::input) report(subject(), "is donated but is not a graph input");
      if (d.multi_output && d.role != BufferRole::intermediate)
        report(subject(), "holds a multi-output result, so its role must be intermediate, not " +
                            std::string(buffer_role_name(d.role)));
      if (d.role == BufferRole::workspace && buffers_[i].layout_ok && d.layout.rank() != 1)
        report(subject(), "is a workspace of rank " + std::to_string(d.layout.rank()) + "; workspaces are 1-D");
      if (d.role == BufferRole::input || d.role == BufferRole::constant) {
        buffers_[i].life = Life::live;
        buffers_[i].defined_at = at_start;
      }
    }

    kind_ = "symbols";
    symbol_index_.reserve(p_.symbols.size());
    for (std::uint32_t i = 0; i < p_.symbols.size(); ++i) {
      ++site_;
      const SymbolDecl& s = p_.symbols[i];
      const auto index_subject = [&] { return "symbol #" + std::to_string(i); };
      if (!s.symbol) {
        report(index_subject(), "is a null expression");
        continue;
      }
      if (ctx_ && &s.symbol.context() != ctx_) {
        report(index_subject(), "belongs to another expression context than the program's");
        continue;
      }
      if (!s.symbol.is_symbol()) {
        report(index_subject(), "is " + printed(s.symbol) + ", not a symbol");
        continue;
      }
      const auto subject = [&] { return symbol_subject(s.symbol); };
      if (auto err = check_name(s.symbol.name(), "symbol")) report(subject(), *std::move(err));
      note_name(s.symbol.name(), "symbol", subject);
      symbol_index_.try_emplace(s.symbol.node(), i);
      switch (s.origin) {
        case SymbolOrigin::input: symbols_[i] = SymbolTrack{true, at_start, no_line}; break;
        case SymbolOrigin::input_shape: {
          symbols_[i] = SymbolTrack{true, at_start, no_line};
          check_shape_source(s, subject());
          break;
        }
        case SymbolOrigin::unbacked:
        case SymbolOrigin::computed: break;
        default: report(subject(), "its origin " + enum_value(s.origin) + " is not a SymbolOrigin");
      }
      if (s.origin != SymbolOrigin::input_shape && (s.source || !s.path.empty()))
        report(subject(), "has a source or path, which only input_shape symbols have");
    }

    kind_ = "kernels";
    for (std::uint32_t i = 0; i < p_.kernels.size(); ++i) {
      const KernelDecl& k = p_.kernels[i];
      const auto subject = [&] { return kernel_subject(KernelId{i}); };
      if (auto err = check_name(k.name, "kernel")) report(subject(), *std::move(err));
      note_name(k.name, "kernel", subject);
      if (static_cast<std::size_t>(k.language) >= kernel_language_count)
        report(subject(), "its language " + enum_value(k.language) + " is not a KernelLanguage");
      for (const KernelParam& param : k.signature) {
        if (auto err = check_name(param.name, "kernel parameter")) report(subject(), *std::move(err));
        if (!is_valid(param.type.dtype))
          report(subject(), "parameter " + quote_for_diagnostic(param.name) + " has dtype " +
                              enum_value(param.type.dtype) + ", which is not a DType");
      }
    }

    kind_ = "pools";
    for (std::uint32_t i = 0; i < p_.pools.size(); ++i) {
      const PoolDecl& q = p_.pools[i];
      const auto subject = [&] { return pool_subject(PoolId{i}); };
      if (auto err = check_name(q.name, "pool")) report(subject(), *std::move(err));
      note_name(q.name, "pool", subject);
      if (auto err = validate(q.device)) report(subject(), err->message);
    }

    kind_ = "subgraphs";
    for (std::uint32_t i = 0; i < p_.subgraphs.size(); ++i) {
      const auto subject = [&] { return graph_subject(GraphId{i}); };
      if (auto err = check_name(p_.subgraphs[i].name, "subgraph")) report(subject(), *std::move(err));
      note_name(p_.subgraphs[i].name, "subgraph", subject);
    }

    check_inputs();

    // Inputs and constants exist when the program starts: their layouts may
    // use only the symbols defined then.
    kind_ = "buffers";
    for (std::uint32_t i = 0; i < p_.buffers.size(); ++i) {
      const BufferRole role = p_.buffers[i].role;
      if ((role == BufferRole::input || role == BufferRole::constant) && buffers_[i].layout_ok) {
        ++site_;
        check_layout_symbols(i);
      }
    }
  }

  void check_shape_source(const SymbolDecl& s, const std::string& subject) {
    if (!s.source || !has(*s.source) || p_.buffers[s.source->index].role != BufferRole::input) {
      report(subject, "has origin input_shape but its source is not a graph input buffer of this program");
      return;
    }
    const bool one_step = s.path.size() == 1;
    const KeyStep* step = one_step ? &s.path[0] : nullptr;
    if (!step || (step->kind != KeyStepKind::size && step->kind != KeyStepKind::stride &&
                  step->kind != KeyStepKind::storage_offset)) {
      report(subject, "has origin input_shape, so its path must be one size, stride or storage_offset step");
      return;
    }
    const Layout* l = layout_of(*s.source);
    if (step->kind != KeyStepKind::storage_offset && l &&
        (step->value < 0 || static_cast<std::uint64_t>(step->value) >= l->rank()))
      report(subject, "reads dimension " + std::to_string(step->value) + " of " + buffer_name(s.source->index) +
                          ", which has rank " + std::to_string(l->rank()));
  }

  void check_inputs() {
    kind_ = "inputs";
    std::vector<std::size_t> buffer_input(p_.buffers.size(), no_line);
    std::vector<std::size_t> symbol_input(p_.symbols.size(), no_line);
    for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
      ++site_;
      const ProgramInput& in = p_.inputs[i];
      if (const BufferId* b = boost::variant2::get_if<BufferId>(&in)) {
        if (report_missing(*b)) continue;
        const BufferDecl& d = p_.buffers[b->index];
        if (d.role != BufferRole::input)
          report(buffer_subject(*b), "is input " + std::to_string(i) + " but its role is " +
                                         std::string(buffer_role_name(d.role)) + ", not input");
        if (buffer_input[b->index] != no_line)
          report(buffer_subject(*b), "is input " + std::to_string(buffer_input[b->index]) + " and input " +
                                         std::to_string(i));
        else
          buffer_input[b->index] = i;
      } else {
        const expr::Expr e = boost::variant2::get<expr::Expr>(in);
        const std::string where = "input " + std::to_string(i);
        if (!e) {
          report("", where + " is a null expression");
          continue;
        }
        if (ctx_ && &e.context() != ctx_) {
          report("", where + " belongs to another expression context than the program's");
          continue;
        }
        if (!e.is_symbol()) {
          report("", where + " is " + printed(e) + ", not a symbol");
          continue;
        }
        const auto it = symbol_index_.find(e.node());
        if (it == symbol_index_.end()) {
          report(symbol_subject(e), "is " + where + " but not declared in this program's symbol table");
          continue;
        }
        const SymbolOrigin origin = p_.symbols[it->second].origin;
        if (origin != SymbolOrigin::input)
          report(symbol_subject(e), "is " + where + " but its origin is " + std::string(symbol_origin_name(origin)) +
                                        ", not input");
        if (symbol_input[it->second] != no_line)
          report(symbol_subject(e), "is input " + std::to_string(symbol_input[it->second]) + " and " + where);
        else
          symbol_input[it->second] = i;
      }
    }
    kind_ = "buffers";
    for (std::uint32_t i = 0; i < p_.buffers.size(); ++i)
      if (p_.buffers[i].role == BufferRole::input && buffer_input[i] == no_line)
        report(buffer_subject(BufferId{i}), "has role input but is not one of the program's inputs");
    kind_ = "symbols";
    for (std::uint32_t i = 0; i < p_.symbols.size(); ++i) {
      const SymbolDecl& s = p_.symbols[i];
      // Entries not in the index (null, foreign, duplicate) were reported.
      const auto it = s.symbol ? symbol_index_.find(s.symbol.node()) : symbol_index_.end();
      if (s.origin == SymbolOrigin::input && it != symbol_index_.end() && it->second == i &&
          symbol_input[i] == no_line)
        report(symbol_subject(s.symbol), "has origin input but is not one of the program's inputs");
    }
  }

  // ---- the body --------------------------------------------------------------

  void check_body() {
    const std::size_t first_line_finding = out_.size();
    for (std::size_t i = 0; i < p_.body.size(); ++i) {
      at_ = i;
      ++site_;
      const Line& line = p_.body[i];
      if (line.valueless_by_exception()) {
        kind_ = "<valueless>";
        report("", "the line holds no line kind (an exception left it valueless)");
        continue;
      }
      kind_ = kind_name(line);
      std::visit([this](const auto& l) { this->check_line(l); }, line);
    }
    // What the end of the body leaves open, reported at the line that
    // opened it.
    for (const OpenScope& s : scopes_) {
      at_ = s.line;
      kind_ = enter_name(s.scope);
      report("", "is never closed: no " + std::string(exit_name(s.scope)) + " matches it");
    }
    for (std::uint32_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i].life != Life::offered) continue;
      at_ = buffers_[i].ended_at;
      kind_ = FreeIfNotReused::kind;
      report(buffer_subject(BufferId{i}), "marked reused, but no Reuse line takes its storage");
    }
    at_ = no_line;
    auto by_line = [](const Finding& a, const Finding& b) { return *a.line < *b.line; };
    const auto first = out_.begin() + static_cast<std::ptrdiff_t>(first_line_finding);
    if (!std::is_sorted(first, out_.end(), by_line)) std::stable_sort(first, out_.end(), by_line);
  }

  /// One line: its own fields and operands first (with their positions,
  /// for the messages), then what it does to buffers, pools and scopes, read
  /// from the effects table in the order the line acts, then the checks
  /// that need what it defined.
  template <class L>
  void check_line(const L& l) {
    check_fields(l);
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

  void reuse(const effect::Reused& e) {
    const bool old_known = !report_missing(e.old_buffer);
    if (old_known && e.old_buffer == e.new_buffer) {
      report(buffer_subject(e.old_buffer), "reuses its own storage");
      return;
    }
    bool old_comm = false;
    if (old_known) {
      const BufferDecl& d = p_.buffers[e.old_buffer.index];
      BufferTrack& t = buffers_[e.old_buffer.index];
      const auto subject = [&] { return buffer_subject(e.old_buffer); };
      old_comm = d.role == BufferRole::comm;
      if (d.role == BufferRole::input && !d.donated)
        report(subject(), "its storage is reused, but it is a graph input that was not donated");
      else if (d.role == BufferRole::constant)
        report(subject(), "its storage is reused, but it is a constant, which the caller owns");
      else if (d.role == BufferRole::workspace)
        report(subject(), "its storage is reused, but it is a workspace, which is never reused");
      if (d.multi_output) report(subject(), "holds a multi-output result, which is never reused");
      if (t.view) report(subject(), "is a view, which owns no storage to reuse");
      switch (t.life) {
        case Life::undefined: report(subject(), "its storage is reused before any line defines it"); break;
        case Life::freed:
          report(subject(), "its storage is reused after it was freed at line " + std::to_string(t.ended_at));
          break;
        case Life::taken:
          report(subject(), "its storage is reused after " + buffer_name(t.taken_by) + " already took it at line " +
                              std::to_string(t.ended_at));
          break;
        case Life::live:
          if (const auto d2 = death(e.old_buffer.index))
            report(subject(), "its storage is reused after " + event(*d2, e.old_buffer.index));
          break;
        case Life::offered: break;
      }
    }
    if (!define_buffer(e.new_buffer, Definition{Definition::By::reuse, Storage::allocate, old_comm})) return;
    if (!old_known) return;
    check_reuse_key(e.old_buffer, e.new_buffer);
    BufferTrack& old_track = buffers_[e.old_buffer.index];
    if (!old_track.view && (old_track.life == Life::live || old_track.life == Life::offered)) {
      buffers_[e.new_buffer.index].pool = old_track.pool;
      old_track.life = Life::taken;
      old_track.ended_at = at_;
      old_track.taken_by = e.new_buffer.index;
      old_track.kept_bound = !e.delete_old;
    }
  }

  void check_reuse_key(BufferId old_id, BufferId new_id) {
    const BufferDecl& o = p_.buffers[old_id.index];
    const BufferDecl& n = p_.buffers[new_id.index];
    const auto subject = [&] { return buffer_subject(new_id); };
    const std::string old_name = buffer_name(old_id.index);
    if (o.layout.device != n.layout.device)
      report(subject(), "reuses " + old_name + " of device " + to_string(o.layout.device) + " on device " +
                          to_string(n.layout.device));
    if (o.layout.dtype != n.layout.dtype)
      report(subject(), "reuses " + old_name + " of dtype " + std::string(name(o.layout.dtype)) + " as dtype " +
                          std::string(name(n.layout.dtype)));
    if (o.aligned != n.aligned)
      report(subject(), "reuses " + std::string(o.aligned ? "aligned " : "unaligned ") + old_name + " as " +
                          (n.aligned ? "an aligned" : "an unaligned") + " buffer");
    if (o.stream != n.stream)
      report(subject(), "reuses " + old_name + " of stream " + std::to_string(o.stream) + " on stream " +
                          std::to_string(n.stream));
    if (o.comm != n.comm)
      report(subject(), "reuses " + old_name + ", whose comm buffer type or group differs");
    if (!buffers_[old_id.index].layout_ok || !buffers_[new_id.index].layout_ok) return;
    // The same shape needs no arithmetic (and builds nothing in the context).
    if (o.layout.sizes == n.layout.sizes && o.layout.strides == n.layout.strides &&
        o.layout.storage_offset == n.layout.storage_offset)
      return;
    // Same key size (Inductor compares the printed storage sizes), or the
    // new storage provably fits in the old one.
    try {
      const expr::Expr old_size = storage_elements(o.layout);
      const expr::Expr new_size = storage_elements(n.layout);
      if (old_size == new_size) return;
      if (&old_size.context() == &new_size.context() &&
          expr::bounds(expr::sub(old_size, new_size)).known_nonnegative())
        return;
      const std::string old_text = printed(old_size);
      const std::string new_text = printed(new_size);
      if (old_text == new_text) return;
      report(subject(), "needs " + new_text + " storage elements, but the storage of " + old_name + " has " + old_text +
                          " and may be smaller");
    } catch (const expr::Error& e) {
      report(subject(), "the storage sizes of " + old_name + " and " + buffer_name(new_id.index) +
                          " cannot be compared: " + e.what());
    }
  }

  /// Creating a pool evaluates its size.
  void create_pool(PoolId q) {
    if (report_missing(q)) return;
    PoolTrack& t = pools_[q.index];
    if (t.life != PoolLife::not_created)
      report(pool_subject(q), "created twice: it was already created at line " + std::to_string(t.created_at));
    check_expr(p_.pools[q.index].size_bytes, Where{"the size of the pool"});
    if (t.life == PoolLife::not_created) {
      t.life = PoolLife::live;
      t.created_at = at_;
    }
  }

  /// Whether `q` can hand out memory at this line.
  bool use_pool(PoolId q) {
    if (report_missing(q)) return false;
    const PoolTrack& t = pools_[q.index];
    if (t.life == PoolLife::not_created) {
      report(pool_subject(q), "used before its PoolCreate");
      return false;
    }
    if (t.life == PoolLife::released) {
      report(pool_subject(q), "used after it was released at line " + std::to_string(t.released_at));
      return false;
    }
    return true;
  }

  /// A region of a live pool (carved even from a pool that is not usable
  /// here, so that one mistake gives one finding).
  void carve(const effect::Carved& e) {
    use_pool(e.pool);
    if (!define_buffer(e.buffer, Definition{Definition::By::pool_region}) || !has(e.pool)) return;
    buffers_[e.buffer.index].pool = e.pool.index;
  }

  void return_to_pool(const effect::PoolReturned& e) {
    if (!has(e.pool)) return;  // reported with the line's fields
    PoolTrack& t = pools_[e.pool.index];
    if (e.releases_pool) {
      if (t.life == PoolLife::not_created)
        report(pool_subject(e.pool), "released before its PoolCreate");
      else if (t.life == PoolLife::released)
        report(pool_subject(e.pool), "released twice: it was already released at line " +
                                         std::to_string(t.released_at));
      else {
        t.life = PoolLife::released;
        t.released_at = at_;
      }
    }
  }

  /// A view is usable while its base is, and stays inside its base's storage.
  void alias(const effect::Aliased& e) {
    if (e.view == e.base && has(e.view)) {
      report(buffer_subject(e.view), "is a view of itself");
      return;
    }
    const bool base_ok = use_buffer(e.base);
    if (!define_buffer(e.view, Definition{Definition::By::view})) return;
    BufferTrack& t = buffers_[e.view.index];
    t.view = true;
    if (!base_ok) return;
    t.base = e.base.index;
    const Layout& v = p_.buffers[e.view.index].layout;
    const Layout& b = p_.buffers[e.base.index].layout;
    if (v.dtype != b.dtype)
      report(buffer_subject(e.view), "has dtype " + std::string(name(v.dtype)) + " but its base " +
                                         buffer_name(e.base.index) + " has dtype " + std::string(name(b.dtype)));
    if (v.device != b.device)
      report(buffer_subject(e.view), "is on " + to_string(v.device) + " but its base " + buffer_name(e.base.index) +
                                         " is on " + to_string(b.device));
    if (!buffers_[e.view.index].layout_ok || p_.buffers[e.view.index].multi_output) return;
    const expr::Expr room = room_of(e.base.index);
    if (!room) return;
    const ViewExtent extent = check_view_extent(v, room);
    check_extent(extent, buffer_subject(e.view), "the view of " + buffer_name(e.base.index));
    if (extent.fit == ViewFit::exceeds) return;
    try {
      t.room = view_room_bytes(v, room);
    } catch (const expr::Error&) {
    }
  }

  /// An element of a multi-output result.
  void select(const effect::Selected& e) {
    if (use_buffer(e.tuple, true) && !p_.buffers[e.tuple.index].multi_output)
      report(buffer_subject(e.tuple), "is not a multi-output result, which MultiOutput reads");
    define_buffer(e.element, Definition{Definition::By::element});
  }

  // ---- each kind's own fields --------------------------------------------------

  // Memory

  void check_fields(const Allocate&) {}
  void check_fields(const FreeIfNotReused&) {}
  void check_fields(const Reuse&) {}
  void check_fields(const Free&) {}
  void check_fields(const Null&) {}
  void check_fields(const PoolCreate&) {}

  void check_fields(const AllocFromPool& l) {
    if (check_expr(l.offset_bytes, Where{"the byte offset"}) && expr::bounds(l.offset_bytes).known_negative())
      report("", "the byte offset " + printed(l.offset_bytes) + " is negative");
  }

  void check_results(const AllocFromPool& l) {
    if (!definable(l.buffer) || !has(l.pool)) return;
    const Device& buffer_device = p_.buffers[l.buffer.index].layout.device;
    const Device& pool_device = p_.pools[l.pool.index].device;
    if (buffer_device != pool_device)
      report(buffer_subject(l.buffer), "is on " + to_string(buffer_device) + " but pool " +
                                           pool_name(l.pool.index) + " is on " + to_string(pool_device));
    const expr::Expr pool_bytes = p_.pools[l.pool.index].size_bytes;
    // A malformed or negative offset was reported with the fields.
    const bool offset_ok = l.offset_bytes && (!ctx_ || &l.offset_bytes.context() == ctx_);
    if (!buffers_[l.buffer.index].layout_ok || !offset_ok || expr::bounds(l.offset_bytes).known_negative() ||
        !pool_bytes || &pool_bytes.context() != ctx_)
      return;
    check_extent(check_pool_slice(p_.buffers[l.buffer.index].layout, l.offset_bytes, pool_bytes),
                 buffer_subject(l.buffer), "the slice of pool " + pool_name(l.pool.index));
  }

  void check_fields(const DeallocFromPool& l) {
    const bool pool_known = !report_missing(l.pool);
    if (has(l.buffer) && pool_known && !buffers_[l.buffer.index].view &&
        buffers_[l.buffer.index].life != Life::undefined && buffers_[l.buffer.index].pool != l.pool.index)
      report(buffer_subject(l.buffer), "was not carved from pool " + pool_name(l.pool.index));
  }

  void check_fields(const CommBufferAllocate&) {}
  void check_fields(const CommBufferFree&) {}

  void check_fields(const WorkspaceAllocate& l) {
    if (static_cast<std::size_t>(l.zero_mode) >= workspace_zero_mode_count)
      report("", "zero mode " + enum_value(l.zero_mode) + " is not a WorkspaceZeroMode");
    check_name_field(l.inner_name.text, "workspace inner");
  }
  void check_results(const WorkspaceAllocate& l) {
    if (definable(l.workspace)) buffers_[l.workspace.index].zero_mode = l.zero_mode;
  }

  void check_fields(const WorkspaceFree&) {}

  [[nodiscard]] std::span<const expr::Expr> sizes_of(const BufferArg& a) const {
    if (a.view) return a.view->sizes;
    if (const Layout* l = layout_of(a.buffer)) return l->sizes;
    return {};
  }
  [[nodiscard]] bool rank_known(const BufferArg& a) const { return a.view || layout_of(a.buffer); }

  void check_fields(const DeviceCopy& l) {
    const bool dst_ok = use_buffer_arg(l.destination, Where{"the destination"});
    const bool src_ok = use_buffer_arg(l.source, Where{"the source"});
    if (!dst_ok || !src_ok || !rank_known(l.destination) || !rank_known(l.source)) return;
    const auto dst = sizes_of(l.destination);
    const auto src = sizes_of(l.source);
    if (dst.size() != src.size()) {
      report("", "copies " + std::to_string(src.size()) + " dimensions into " + std::to_string(dst.size()));
      return;
    }
    for (std::size_t i = 0; i < dst.size(); ++i)
      if (dst[i] && src[i] && dst[i].is_integer() && src[i].is_integer() && dst[i] != src[i])
        report("", "size " + std::to_string(i) + " of the source is " + std::to_string(src[i].value()) +
                       " but the destination's is " + std::to_string(dst[i].value()));
  }

  // Views

  void check_fields(const Reinterpret&) {}

  // Kernels

  void check_metadata(const KernelMetadata& m) {
    for (std::size_t i = 0; i < m.constants.size(); ++i) {
      check_name_field(m.constants[i].name.text, "kernel constant");
      use_arg(m.constants[i].value, Where{"constant", i});
    }
    if (m.num_warps && *m.num_warps <= 0) report("", "num_warps " + std::to_string(*m.num_warps) + " is not positive");
    if (m.num_stages && *m.num_stages <= 0)
      report("", "num_stages " + std::to_string(*m.num_stages) + " is not positive");
    if (m.shared_memory_bytes && *m.shared_memory_bytes < 0)
      report("", "shared_memory_bytes " + std::to_string(*m.shared_memory_bytes) + " is negative");
    if (m.grid_type && static_cast<std::size_t>(*m.grid_type) >= grid_type_count)
      report("", "grid type " + enum_value(*m.grid_type) + " is not a GridType");
    for (const BlockSize& b : m.block) check_name_field(b.name.text, "block size");
  }

  void check_fields(const KernelDefinition& l) {
    if (!report_missing(l.kernel)) {
      const KernelTrack& t = kernels_[l.kernel.index];
      if (t.def != KernelDef::none)
        report(kernel_subject(l.kernel), "defined twice: it was already defined at line " +
                                             std::to_string(t.defined_at));
      const KernelLanguage lang = p_.kernels[l.kernel.index].language;
      const bool binary = lang == KernelLanguage::ptx || lang == KernelLanguage::cubin;
      if (binary && boost::variant2::holds_alternative<SourceText>(l.source))
        report(kernel_subject(l.kernel), "is " + with_article(kernel_language_name(lang)) +
                                             " kernel, but its definition gives source text instead of a binary");
      if (!binary && boost::variant2::holds_alternative<BinaryRef>(l.source))
        report(kernel_subject(l.kernel), "is " + with_article(kernel_language_name(lang)) +
                                             " kernel, but its definition gives a binary instead of source text");
    }
    check_metadata(l.metadata);
    if (has(l.kernel) && kernels_[l.kernel.index].def == KernelDef::none)
      kernels_[l.kernel.index] = KernelTrack{KernelDef::plain, at_};
  }

  [[nodiscard]] std::string describe_arg(const Arg& a) const {
    if (const BufferArg* b = a.get_if<BufferArg>()) {
      if (has(b->buffer)) return with_article(name(p_.buffers[b->buffer.index].layout.dtype)) + " buffer";
      return "a buffer";
    }
    if (a.holds<None>()) return "None";
    return with_article(arg_kind_name(a));
  }

  /// Whether argument `a` can be passed for a parameter of type `t`.
  [[nodiscard]] bool fits(const Arg& a, ParamType t) const {
    if (t.pointer) {
      const BufferArg* b = a.get_if<BufferArg>();
      return b && (!has(b->buffer) || p_.buffers[b->buffer.index].layout.dtype == t.dtype);
    }
    if (!is_valid(t.dtype)) return true;  // reported with the kernel table
    if (t.dtype == DType::bool_) return a.holds<bool>() || a.holds<std::int64_t>();
    if (is_integral(t.dtype)) return a.holds<std::int64_t>() || a.holds<bool>() || a.holds<expr::Expr>();
    return a.holds<double>() || a.holds<std::int64_t>();  // floating and complex scalars
  }

  void check_call_args(KernelId k, const std::vector<Arg>& args, const std::vector<ParamType>& arg_types) {
    for (std::size_t i = 0; i < args.size(); ++i) use_arg(args[i], Where{"argument", i});
    if (!has(k)) return;
    const std::vector<KernelParam>& sig = p_.kernels[k.index].signature;
    const auto subject = [&] { return kernel_subject(k); };
    if (args.size() != sig.size())
      report(subject(), "called with " + std::to_string(args.size()) + " arguments, but its signature has " +
                          std::to_string(sig.size()) + " parameters");
    if (arg_types.size() != sig.size())
      report(subject(), "called with " + std::to_string(arg_types.size()) + " argument types, but its signature has " +
                          std::to_string(sig.size()) + " parameters");
    for (std::size_t i = 0; i < std::min(arg_types.size(), sig.size()); ++i)
      if (arg_types[i] != sig[i].type)
        report(subject(), "argument type " + std::to_string(i) + " is " + to_string(arg_types[i]) + " but parameter " +
                            quote_for_diagnostic(sig[i].name) + " is " + to_string(sig[i].type));
    for (std::size_t i = 0; i < std::min(args.size(), sig.size()); ++i)
      if (!fits(args[i], sig[i].type))
        report(subject(), "argument " + std::to_string(i) + " is " + describe_arg(args[i]) + " but parameter " +
                            quote_for_diagnostic(sig[i].name) + " is " + to_string(sig[i].type));
  }

  void check_grid(const LaunchGrid& grid) {
    if (const ExplicitGrid* g = boost::variant2::get_if<ExplicitGrid>(&grid)) {
      check_expr(g->x, Where{"grid x"});
      check_expr(g->y, Where{"grid y"});
      check_expr(g->z, Where{"grid z"});
    } else if (const TypedGrid* t = boost::variant2::get_if<TypedGrid>(&grid)) {
      if (static_cast<std::size_t>(t->type) >= grid_type_count)
        report("", "grid type " + enum_value(t->type) + " is not a GridType");
      for (std::size_t i = 0; i < t->numels.size(); ++i) {
        check_name_field(t->numels[i].name.text, "grid numel");
        check_expr(t->numels[i].value, Where{"grid numel", i});
      }
      for (const BlockSize& b : t->block) check_name_field(b.name.text, "block size");
    }
  }

  /// Reports a call of `k` that is not defined as `wanted` at this line.
  void check_called(KernelId k, KernelDef wanted) {
    if (report_missing(k)) return;
    const KernelDef def = kernels_[k.index].def;
    if (def == wanted) return;
    const auto subject = [&] { return kernel_subject(k); };
    if (def == KernelDef::none)
      report(subject(), wanted == KernelDef::plain ? "called before its KernelDefinition"
                                                 : "called before its MultiKernelDefinition");
    else if (def == KernelDef::multi)
      report(subject(), "is a multi-kernel, which MultiKernelCall calls");
    else
      report(subject(), "is not a multi-kernel; KernelCall calls it");
  }

  void check_fields(const KernelCall& l) {
    check_called(l.kernel, KernelDef::plain);
    check_call_args(l.kernel, l.args, l.arg_types);
    check_grid(l.grid);
    check_device(l.device, "device");
  }

  void check_fields(const SymbolicCallArg& l) {
    check_expr(l.value, Where{"the value"});
    define_symbol(l.symbol, SymbolOrigin::computed, Where{"the symbol"});
  }

  void check_fields(const MultiKernelDefinition& l) {
    const bool known = !report_missing(l.kernel);
    const auto subject = [&] { return known ? kernel_subject(l.kernel) : std::string(); };
    if (known && kernels_[l.kernel.index].def != KernelDef::none)
      report(subject(), "defined twice: it was already defined at line " +
                          std::to_string(kernels_[l.kernel.index].defined_at));
    if (l.candidates.empty()) report(subject(), "has no candidate kernels");
    const std::vector<KernelParam>* sig = known ? &p_.kernels[l.kernel.index].signature : nullptr;
    if (l.arg_index.size() != l.candidates.size())
      report(subject(), "has " + std::to_string(l.candidates.size()) + " candidates but " +
                          std::to_string(l.arg_index.size()) + " arg_index entries");
    if (!l.shape_keys.empty() && l.shape_keys.size() != l.candidates.size())
      report(subject(), "has " + std::to_string(l.candidates.size()) + " candidates but " +
                          std::to_string(l.shape_keys.size()) + " shape_keys");
    for (std::size_t i = 0; i < l.candidates.size(); ++i) {
      const KernelId c = l.candidates[i];
      if (report_missing(c)) continue;
      if (c == l.kernel) {
        report(subject(), "lists itself as candidate " + std::to_string(i));
        continue;
      }
      const KernelDef def = kernels_[c.index].def;
      if (def == KernelDef::none)
        report(kernel_subject(c), "is candidate " + std::to_string(i) + " but is not defined before this line");
      else if (def == KernelDef::multi)
        report(kernel_subject(c), "is candidate " + std::to_string(i) + " but is itself a multi-kernel");
      if (sig && i < l.arg_index.size()) check_candidate_args(l, i, *sig);
    }
    if (known && kernels_[l.kernel.index].def == KernelDef::none)
      kernels_[l.kernel.index] = KernelTrack{KernelDef::multi, at_};
  }

  /// The arguments `arg_index[i]` selects for candidate `i` lie inside the
  /// combined list and match the candidate's parameters.
  void check_candidate_args(const MultiKernelDefinition& l, std::size_t i, const std::vector<KernelParam>& sig) {
    const auto subject = [&] { return kernel_subject(l.kernel); };
    const auto n = static_cast<std::int64_t>(sig.size());
    std::vector<std::size_t> selected;
    bool inside = true;
    for (const ArgSlice& s : l.arg_index[i]) {
      if (s.start < 0 || s.start > s.stop || s.stop > n) {
        report(subject(), "arg_index[" + std::to_string(i) + "] slice [" + std::to_string(s.start) + ", " +
                            std::to_string(s.stop) + ") is not inside its " + std::to_string(n) + " arguments");
        inside = false;
        continue;
      }
      for (std::int64_t a = s.start; a < s.stop; ++a) selected.push_back(static_cast<std::size_t>(a));
    }
    if (!inside) return;
    const KernelId c = l.candidates[i];
    const std::vector<KernelParam>& cs = p_.kernels[c.index].signature;
    if (selected.size() != cs.size()) {
      report(subject(), "arg_index[" + std::to_string(i) + "] selects " + std::to_string(selected.size()) +
                          " arguments but candidate " + kernel_name(c.index) + " takes " + std::to_string(cs.size()));
      return;
    }
    for (std::size_t j = 0; j < cs.size(); ++j)
      if (sig[selected[j]].type != cs[j].type)
        report(subject(), "arg_index[" + std::to_string(i) + "] passes parameter " +
                            quote_for_diagnostic(sig[selected[j]].name) + " (" + to_string(sig[selected[j]].type) +
                            ") to parameter " + quote_for_diagnostic(cs[j].name) + " (" + to_string(cs[j].type) +
                            ") of candidate " + kernel_name(c.index));
  }

  void check_fields(const MultiKernelCall& l) {
    check_called(l.kernel, KernelDef::multi);
    check_call_args(l.kernel, l.args, l.arg_types);
    check_device(l.device, "device");
  }

  // Extern kernels

  void use_args(const std::vector<Arg>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) use_arg(args[i], Where{"argument", i});
  }

  void check_fields(const ExternKernelAlloc& l) {
    check_op_name(l.kernel);
    use_args(l.args);
    use_named_args(l.kwargs);
  }

  void check_fields(const ExternKernelOut& l) {
    check_op_name(l.kernel);
    use_args(l.args);
    use_named_args(l.kwargs);
    use_buffer_arg(l.out, Where{"the out argument"});
  }

  void check_fields(const ExternKernelMultiOut& l) {
    check_op_name(l.kernel);
    use_args(l.args);
    use_named_args(l.kwargs);
    for (std::size_t i = 0; i < l.outs.size(); ++i) {
      check_name_field(l.outs[i].name.text, "out argument");
      use_buffer_arg(l.outs[i].buffer, Where{"out argument", i});
    }
  }

  /// Why `path` is not a valid key path, if it is not; with
  /// `index_and_key_only`, only index and key steps are allowed.
  [[nodiscard]] static std::optional<std::string> path_problem(const KeyPath& path, bool index_and_key_only) {
    for (std::size_t i = 0; i < path.size(); ++i) {
      const KeyStep& s = path[i];
      const std::string step = "step " + std::to_string(i);
      if (static_cast<std::size_t>(s.kind) >= key_step_kind_count)
        return step + " has kind " + enum_value(s.kind) + ", which is not a KeyStepKind";
      if (index_and_key_only && s.kind != KeyStepKind::index && s.kind != KeyStepKind::key)
        return step + " is " + with_article(key_step_kind_name(s.kind)) + " step; only index and key steps select "
               "an element";
      if ((s.kind == KeyStepKind::index || s.kind == KeyStepKind::size || s.kind == KeyStepKind::stride) &&
          s.value < 0)
        return step + " (" + std::string(key_step_kind_name(s.kind)) + ") has the negative value " +
               std::to_string(s.value);
      if (s.kind == KeyStepKind::divide_by && s.value <= 0)
        return step + " divides by " + std::to_string(s.value) + "; the divisor must be positive";
    }
    return std::nullopt;
  }

  void check_fields(const MultiOutput&) {}
  void check_results(const MultiOutput& l) {
    if (auto problem = path_problem(l.path, true)) report("", "path " + *problem);
  }

  void check_fields(const ScatterFallback& l) {
    check_op_name(l.kernel);
    use_buffer(l.self);
    use_buffer_arg(l.index, Where{"the index"});
    use_arg(l.src, Where{"the source"});
    use_named_args(l.kwargs);
  }

  void check_fields(const IndexPutFallback& l) {
    check_op_name(l.kernel);
    use_buffer(l.self);
    for (std::size_t i = 0; i < l.indices.size(); ++i)
      if (l.indices[i]) use_buffer_arg(*l.indices[i], Where{"index", i});
    use_buffer_arg(l.values, Where{"the values"});
  }

  void check_fields(const DynamicScalar& l) {
    if (use_buffer(l.source)) {
      if (const Layout* layout = layout_of(l.source)) {
        for (const expr::Expr s : layout->sizes)
          if (s.is_integer() && s.value() != 1) {
            report(buffer_subject(l.source), "is read as a scalar but has " + std::to_string(s.value()) +
                                                 " elements in one dimension; it must hold one element");
            break;
          }
      }
    }
    const bool plain = l.path.empty();
    const bool to_int = l.path.size() == 1 && l.path[0].kind == KeyStepKind::convert_to_int;
    const bool divide = l.path.size() == 1 && l.path[0].kind == KeyStepKind::divide_by && l.path[0].value > 0;
    if (!plain && !to_int && !divide)
      report("", "the path must be empty, one convert_to_int step or one divide_by step with a positive divisor");
    define_symbol(l.symbol, SymbolOrigin::unbacked, Where{"the symbol"});
  }

  void check_fields(const UnbackedSymbolDefs& l) {
    use_buffer(l.source, true);
    for (std::size_t i = 0; i < l.bindings.size(); ++i) {
      if (auto problem = path_problem(l.bindings[i].path, false))
        report("", "the path of binding " + std::to_string(i) + ": " + *problem);
      define_symbol(l.bindings[i].symbol, SymbolOrigin::unbacked, Where{"binding", i});
    }
  }

  void check_fields(const AssertSizeStride& l) {
    use_buffer(l.buffer);
    if (l.sizes.size() != l.strides.size())
      report("", "asserts " + std::to_string(l.sizes.size()) + " sizes but " + std::to_string(l.strides.size()) +
                     " strides");
    else if (const Layout* layout = layout_of(l.buffer); layout && layout->rank() != l.sizes.size())
      report(buffer_subject(l.buffer), "has rank " + std::to_string(layout->rank()) + " but the line asserts " +
                                           std::to_string(l.sizes.size()) + " sizes");
    for (std::size_t i = 0; i < l.sizes.size(); ++i) check_expr(l.sizes[i], Where{"size", i});
    for (std::size_t i = 0; i < l.strides.size(); ++i) check_expr(l.strides[i], Where{"stride", i});
  }

  // Control

  void open_scope(ScopeKind s) { scopes_.push_back(OpenScope{s, at_}); }

  void close_scope(ScopeKind s) {
    if (scopes_.empty()) {
      report("", "closes no open scope: there is no " + std::string(enter_name(s)) + " before it");
      return;
    }
    const OpenScope top = scopes_.back();
    scopes_.pop_back();
    if (top.scope != s)
      report("", "closes the " + std::string(enter_name(top.scope)) + " of line " + std::to_string(top.line) +
                     "; only " + std::string(exit_name(top.scope)) + " closes it");
  }

  void check_fields(const EnterSubgraph&) {}
  void check_fields(const ExitSubgraph&) {}

  /// The arguments a subgraph call passes: buffers or symbolic integers.
  void use_operands(const std::vector<Arg>& operands, const char* what) {
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const Arg& a = operands[i];
      if (a.holds<BufferArg>() || a.holds<expr::Expr>())
        use_arg(a, Where{what, i});
      else
        report("", std::string(what) + " " + std::to_string(i) + " is " + describe_arg(a) +
                       "; subgraphs take buffers and symbolic integers");
    }
  }

  [[nodiscard]] std::size_t rank_of(const BufferArg& a) const {
    return a.view ? a.view->sizes.size() : p_.buffers[a.buffer.index].layout.rank();
  }

  /// Subgraph `g` takes inputs like `operands` (`what` names them in
  /// messages: "operand", "carried value").
  void match_inputs(const Program& g, const std::string& subject, const std::vector<const Arg*>& operands,
                    std::string_view caller) {
    if (g.inputs.size() != operands.size()) {
      report(subject, "takes " + std::to_string(g.inputs.size()) + " inputs but the " + std::string(caller) +
                          " passes " + std::to_string(operands.size()));
      return;
    }
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const Arg& a = *operands[i];
      const std::string input = "input " + std::to_string(i);
      if (const BufferId* in = boost::variant2::get_if<BufferId>(&g.inputs[i])) {
        const BufferArg* b = a.get_if<BufferArg>();
        if (!b) {
          report(subject, input + " is a buffer but the " + std::string(caller) + " passes " + describe_arg(a));
          continue;
        }
        if (!has(b->buffer) || in->index >= g.buffers.size()) continue;
        const Layout& want = g.buffers[in->index].layout;
        const Layout& got = p_.buffers[b->buffer.index].layout;
        if (want.dtype != got.dtype)
          report(subject, input + " has dtype " + std::string(name(want.dtype)) + " but the " + std::string(caller) +
                              " passes " + std::string(name(got.dtype)));
        if (want.device != got.device)
          report(subject, input + " is on " + to_string(want.device) + " but the " + std::string(caller) +
                              " passes a buffer on " + to_string(got.device));
        if (want.rank() != rank_of(*b))
          report(subject, input + " has rank " + std::to_string(want.rank()) + " but the " + std::string(caller) +
                              " passes a buffer of rank " + std::to_string(rank_of(*b)));
      } else if (!a.holds<expr::Expr>()) {
        report(subject, input + " is a symbolic integer but the " + std::string(caller) + " passes " +
                            describe_arg(a));
      }
    }
  }

  /// The dtype of output `i` of subgraph `g`, or why it has none.
  [[nodiscard]] static std::optional<DType> output_dtype(const Program& g, std::size_t i) {
    const BufferArg* b = boost::variant2::get_if<BufferArg>(&g.outputs[i]);
    if (!b || b->buffer.index >= g.buffers.size()) return std::nullopt;
    return g.buffers[b->buffer.index].layout.dtype;
  }

  [[nodiscard]] static const char* output_kind(const ProgramOutput& o) {
    if (boost::variant2::holds_alternative<None>(o)) return "None";
    if (boost::variant2::holds_alternative<expr::Expr>(o)) return "a symbolic integer";
    return "a buffer";
  }

  void check_fields(const Conditional& l) {
    if (const BufferArg* b = l.predicate.get_if<BufferArg>()) {
      if (use_buffer_arg(*b, Where{"the predicate"})) {
        const Layout& layout = p_.buffers[b->buffer.index].layout;
        if (layout.dtype != DType::bool_)
          report(buffer_subject(b->buffer), "is the predicate but has dtype " + std::string(name(layout.dtype)) +
                                                "; a predicate buffer is bool");
        for (const expr::Expr s : sizes_of(*b))
          if (s && !s.is_integer(1)) {
            report(buffer_subject(b->buffer),
                   "is the predicate but has a size " + printed(s) + "; a predicate buffer holds one element");
            break;
          }
      }
    } else if (const expr::Expr* e = l.predicate.get_if<expr::Expr>()) {
      check_expr(*e, Where{"the predicate"});
    } else {
      report("", "the predicate is " + describe_arg(l.predicate) +
                     "; it must be a bool buffer of one element or a symbolic integer");
    }
    use_operands(l.operands, "operand");
    std::vector<const Arg*> operands;
    operands.reserve(l.operands.size());
    for (const Arg& a : l.operands) operands.push_back(&a);
    for (const GraphId g : {l.true_graph, l.false_graph}) {
      if (report_missing(g)) continue;
      const Program& sub = p_.subgraphs[g.index];
      const auto subject = [&] { return graph_subject(g); };
      match_inputs(sub, subject(), operands, "Conditional");
      if (sub.outputs.size() != l.outputs.size()) {
        report(subject(), "returns " + std::to_string(sub.outputs.size()) + " outputs but the Conditional has " +
                            std::to_string(l.outputs.size()));
        continue;
      }
      for (std::size_t i = 0; i < sub.outputs.size(); ++i) {
        if (!boost::variant2::holds_alternative<BufferArg>(sub.outputs[i])) {
          report(subject(), "output " + std::to_string(i) + " is " + output_kind(sub.outputs[i]) +
                              "; a Conditional's outputs are buffers");
          continue;
        }
        const auto dtype = output_dtype(sub, i);
        if (dtype && has(l.outputs[i]) && *dtype != p_.buffers[l.outputs[i].index].layout.dtype)
          report(subject(), "output " + std::to_string(i) + " has dtype " + std::string(name(*dtype)) +
                              " but the Conditional's output " + buffer_name(l.outputs[i].index) + " has dtype " +
                              std::string(name(p_.buffers[l.outputs[i].index].layout.dtype)));
      }
    }
  }

  void check_fields(const WhileLoop& l) {
    use_operands(l.carried, "carried value");
    use_operands(l.additional, "additional value");
    std::vector<const Arg*> operands;
    operands.reserve(l.carried.size() + l.additional.size());
    for (const Arg& a : l.carried) operands.push_back(&a);
    for (const Arg& a : l.additional) operands.push_back(&a);
    if (!report_missing(l.cond_graph)) {
      const Program& cond = p_.subgraphs[l.cond_graph.index];
      const auto subject = [&] { return graph_subject(l.cond_graph); };
      match_inputs(cond, subject(), operands, "WhileLoop");
      if (cond.outputs.size() != 1)
        report(subject(), "returns " + std::to_string(cond.outputs.size()) +
                            " outputs; a loop condition returns one bool buffer");
      else if (!boost::variant2::holds_alternative<BufferArg>(cond.outputs[0]))
        report(subject(), "returns " + std::string(output_kind(cond.outputs[0])) +
                            "; a loop condition returns one bool buffer");
      else if (const auto dtype = output_dtype(cond, 0); dtype && *dtype != DType::bool_)
        report(subject(),
               "returns " + with_article(name(*dtype)) + " buffer; a loop condition returns one bool buffer");
    }
    if (!report_missing(l.body_graph)) {
      const Program& body = p_.subgraphs[l.body_graph.index];
      const auto subject = [&] { return graph_subject(l.body_graph); };
      match_inputs(body, subject(), operands, "WhileLoop");
      if (body.outputs.size() != l.carried.size()) {
        report(subject(), "returns " + std::to_string(body.outputs.size()) + " outputs but the WhileLoop carries " +
                            std::to_string(l.carried.size()) + " values");
      } else {
        for (std::size_t i = 0; i < body.outputs.size(); ++i) {
          const BufferArg* carried = l.carried[i].get_if<BufferArg>();
          const bool out_is_buffer = boost::variant2::holds_alternative<BufferArg>(body.outputs[i]);
          const std::string output = "output " + std::to_string(i);
          if (carried && !out_is_buffer) {
            report(subject(), output + " is " + output_kind(body.outputs[i]) + " but carried value " +
                                std::to_string(i) + " is a buffer");
          } else if (!carried && l.carried[i].holds<expr::Expr>() &&
                     !boost::variant2::holds_alternative<expr::Expr>(body.outputs[i])) {
            report(subject(), output + " is " + output_kind(body.outputs[i]) + " but carried value " +
                                std::to_string(i) + " is a symbolic integer");
          } else if (carried && has(carried->buffer)) {
            const auto dtype = output_dtype(body, i);
            const DType want = p_.buffers[carried->buffer.index].layout.dtype;
            if (dtype && *dtype != want)
              report(subject(), output + " has dtype " + std::string(name(*dtype)) + " but carried value " +
                                  std::to_string(i) + " has dtype " + std::string(name(want)));
          }
        }
      }
    }
    if (l.outputs.size() != l.carried.size()) {
      report("", "has " + std::to_string(l.outputs.size()) + " outputs but carries " +
                     std::to_string(l.carried.size()) + " values");
    } else {
      for (std::size_t i = 0; i < l.outputs.size(); ++i) {
        const BufferArg* carried = l.carried[i].get_if<BufferArg>();
        if (!carried || !has(carried->buffer) || !has(l.outputs[i])) continue;
        const DType want = p_.buffers[carried->buffer.index].layout.dtype;
        const DType got = p_.buffers[l.outputs[i].index].layout.dtype;
        if (want != got)
          report(buffer_subject(l.outputs[i]), "is output " + std::to_string(i) + " with dtype " +
                                                   std::string(name(got)) + " but carried value " +
                                                   std::to_string(i) + " has dtype " + std::string(name(want)));
      }
    }
  }

  void check_fields(const EnterDeviceContext& l) { check_device(l.device, "device"); }
  void check_fields(const ExitDeviceContext&) {}

  void check_fields(const EnterStreamContext& l) {
    if (l.stream == 0) report("", "enters stream 0, the default stream; side streams are numbered from 1");
  }
  void check_fields(const ExitStreamContext&) {}

  void check_fields(const GetRawStream& l) { check_device(l.device, "device"); }

  // Misc

  void check_fields(const Comment& l) {
    if (!is_single_line_text(l.text))
      report("", "the text " + quote_for_diagnostic(l.text) +
                     " has a line break or control character; a comment is one line");
  }

  // ---- outputs and subgraphs -------------------------------------------------

  /// Why `b` cannot be returned. A buffer whose storage a Reuse with
  /// `delete_old = false` took stays bound to that storage (an output that
  /// a later buffer updates in place): it can be returned while the storage
  /// is alive under its last owner.
  [[nodiscard]] std::optional<Death> death_at_end(std::uint32_t b) const {
    const auto d = death(b);
    std::uint32_t cur = b;
    for (std::size_t steps = 0; d && steps <= buffers_.size(); ++steps) {
      const BufferTrack& t = buffers_[cur];
      if (t.life != Life::taken || !t.kept_bound || t.taken_by == no_id) return d;
      cur = t.taken_by;
      if (!death(cur)) return std::nullopt;
    }
    return d;
  }

  void check_outputs() {
    kind_ = "outputs";
    at_ = no_line;
    for (std::size_t i = 0; i < p_.outputs.size(); ++i) {
      ++site_;
      const ProgramOutput& o = p_.outputs[i];
      const std::string output = "output " + std::to_string(i);
      if (const BufferArg* b = boost::variant2::get_if<BufferArg>(&o)) {
        if (report_missing(b->buffer)) continue;
        if (p_.buffers[b->buffer.index].multi_output)
          report(buffer_subject(b->buffer),
                 "is " + output + " but holds a multi-output result, which is never returned");
        if (const auto d = death_at_end(b->buffer.index)) {
          if (d->life == Life::undefined && d->buffer == b->buffer.index)
            report(buffer_subject(b->buffer), output + " is never defined");
          else
            report(buffer_subject(b->buffer),
                   output + " is not live at the end of the program: " + event(*d, b->buffer.index));
        }
        if (b->view && check_view(*b->view, Where{"output", i})) check_arg_view_extent(*b, Where{"output", i});
      } else if (const expr::Expr* e = boost::variant2::get_if<expr::Expr>(&o)) {
        check_expr(*e, Where{"output", i});
      }
    }
  }

  void check_subgraphs() {
    for (const Program& g : p_.subgraphs) {
      std::string path = path_.empty() ? shown(g.name) : path_ + "/" + shown(g.name);
      if (depth_ + 1 >= max_graph_depth) {
        kind_ = "subgraphs";
        report("subgraph " + shown(g.name),
               "is nested more than " + std::to_string(max_graph_depth) + " levels deep and was not verified");
        continue;
      }
      ProgramVerifier<Deferred> sub(g, std::move(path), root_ctx_, cache_, out_, depth_ + 1, options_,
                                    runtime_checks_);
      sub.run();
    }
  }

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
};

}  // namespace detail::verifier

/// Every finding about `program` and its subgraphs; empty when it is well
/// formed. See the file comment for what is checked and the order.
/// (A template over `Program` only, to keep the verifier's code out of
/// translation units that include this header without calling it.)
template <class P>
  requires std::same_as<P, Program>
[[nodiscard]] std::vector<Finding> verify(const P& program, const VerifyOptions& options) {
  std::vector<Finding> findings;
  detail::verifier::FreeSymbolCache cache;
  detail::verifier::ProgramVerifier<P> root(program, std::string(), program.context.get(), cache, findings, 0,
                                            options, nullptr);
  root.run();
  return findings;
}

/// The views of `program` and its subgraphs whose bounds `verify` could not
/// decide: each needs a run-time check before the view is taken (the
/// Python emitter writes one). Views that provably exceed their storage are
/// findings of `verify`, not entries here. Meaningful for a program that
/// verifies clean.
template <class P>
  requires std::same_as<P, Program>
[[nodiscard]] std::vector<RuntimeCheck> runtime_checks(const P& program, const VerifyOptions& options = {}) {
  std::vector<Finding> findings;
  std::vector<RuntimeCheck> checks;
  detail::verifier::FreeSymbolCache cache;
  detail::verifier::ProgramVerifier<P> root(program, std::string(), program.context.get(), cache, findings, 0,
                                            options, &checks);
  root.run();
  return checks;
}

template <class P>
  requires std::same_as<P, Program>
[[nodiscard]] std::vector<Finding> verify(const P& program) {
  return verify(program, VerifyOptions{});
}

}  // namespace wrapir::ir

namespace wrapir {
using ir::Finding;
using ir::verify;
using ir::VerifyOptions;
}  // namespace wrapir
