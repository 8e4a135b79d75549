#pragma once
/// \file
/// The FX emitter's conversion (emit/fx.hpp): a wrapir program as FX
/// graphs, line by line, as Inductor's `FxConverter` converts its Wrapper IR
/// (reference §2.3 and §1's "FX" entries), plus what Inductor's converter
/// rejects and wrapir renders (docs/emitters.md, "FX"). Operator callees are
/// checked exactly as the Python emitter checks them.

#include <wrapir/detail/huge_pages.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/fx_graph.hpp>
#include <wrapir/emit/detail/fx_symbols.hpp>
#include <wrapir/emit/detail/python_keywords.hpp>
#include <wrapir/expr/query.hpp>
#include <wrapir/expr/simplify.hpp>
#include <wrapir/expr/solve.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/variant2/variant.hpp>

#include <charconv>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace wrapir::fx {

/// How the FX graphs are made.
struct FxOptions {
  /// Render AssertSizeStride lines as `aten._assert_tensor_metadata` and
  /// AssertScalar lines as `aten._assert_scalar` (Inductor's FX converter
  /// drops size asserts).
  bool asserts = true;
  /// Operator paths programs may call besides `ir::check_operator_path`'s
  /// built-in forms (as python::PythonOptions::operators).
  ir::OperatorRegistry operators{};
};

}  // namespace wrapir::fx

namespace wrapir::fx::detail {

/// A kernel the graphs call, in the order its side-table index was taken.
struct KernelEntry {
  std::string name;
  ir::KernelLanguage language = ir::KernelLanguage::triton;
  std::string source;
  std::string device_type;
  std::vector<std::string> cpp_param_types;
};

/// One graph and the graphs its get_attr nodes name.
struct Module {
  std::string name;  // empty for the top-level graph
  Graph graph;
  std::vector<std::unique_ptr<Module>> children;
};

/// Everything one conversion makes.
struct Conversion {
  Module root;
  std::vector<KernelEntry> triton;
  std::vector<KernelEntry> cpp;
  std::uint32_t constant_args = 0;
  /// Render the arguments as Python (fx-python) rather than as the text.
  bool python = false;
};


/// How a graph returns its outputs: a program and a conditional's branch as
/// Inductor's FX backend does (one output bare, a branch's as a list); a while
/// loop's condition its boolean itself and its body a tuple, as torch's
/// while_loop requires when it runs them.
enum class OutputForm : std::uint8_t { inductor, bare, tuple };

class GraphConverter {
 public:
  GraphConverter(Conversion& conversion, const ir::Program& program, Module& module, bool is_subgraph,
                 const FxOptions& options, OutputForm output_form = OutputForm::inductor)
      : output_form_(output_form),
        conv_(conversion),
        p_(program),
        m_(module),
        g_(module.graph),
        is_subgraph_(is_subgraph),
        options_(options),
        syms_(module.graph, [this](std::string m) { fail(std::move(m)); }),
        node_of_(program.buffers.size(), -1),
        name_checked_(program.buffers.size(), false) {
    g_.python = conversion.python;
    // About one node per line; the arena becomes the output (heads, tails
    // and all: Graph::take_lines), of under 200 bytes a line, so it is
    // reserved for that (what is reserved and not written is never touched).
    g_.nodes.reserve(program.body.size() + program.inputs.size() + 8);
    g_.arena.reserve(program.body.size() * 256 + 4096);
    // Both are fresh memory, written once: on 2 MiB pages where the system
    // allows (detail/huge_pages.hpp says why and what it costs).
    wrapir::detail::advise_huge_pages(g_.nodes.data(), g_.nodes.capacity() * sizeof(Node));
    wrapir::detail::advise_huge_pages(g_.arena.data(), g_.arena.capacity());
    g_.names.reserve(program.body.size() + program.inputs.size() + 8);
  }

  void run() {
    convert_subgraphs();
    where_ = "the inputs";
    line_kind_ = {};
    std::unordered_set<std::uint32_t> seen;
    for (const ir::ProgramInput& in : p_.inputs) {
      if (const auto* b = boost::variant2::get_if<ir::BufferId>(&in)) {
        const ir::BufferDecl& d = buffer(*b);
        if (!seen.insert(b->index).second) continue;  // a duplicate input: one placeholder
        node_of_[b->index] = g_.placeholder(checked_name(d.name, "an input"));
      } else {
        const expr::Expr s = boost::variant2::get<expr::Expr>(in);
        if (!s || !s.is_symbol()) fail("a symbolic input is not a symbol");
        syms_.define(s, Value{true, 0, g_.placeholder(checked_name(s.name(), "a symbolic input"))});
      }
    }
    for (const auto& child : m_.children) g_.get_attr(child->name);
    input_shapes();
    for (line_index_ = 0; line_index_ < p_.body.size(); ++line_index_) {
      const ir::Line& line = p_.body[line_index_];
      std::visit(
          [&](const auto& l) {
            line_kind_ = l.kind;
            convert(l);
          },
          line);
    }
    line_kind_ = {};
    where_ = "the outputs";
    outputs();
  }

 private:
  [[noreturn]] void fail(std::string message) const {
    // The place is spelled out only here: converting a line costs no string.
    const std::string where = line_kind_.empty()
                                  ? where_
                                  : "line " + std::to_string(line_index_) + " (" + std::string(line_kind_) + ")";
    wrapir::detail::fail(where + " of program '" + p_.name + "': " + std::move(message));
  }

  const ir::BufferDecl& buffer(ir::BufferId id) const {
    if (!p_.contains(id))
      fail("buffer id " + std::to_string(id.index) + " is out of range (the program has " +
           std::to_string(p_.buffers.size()) + " buffers)");
    return p_.buffers[id.index];
  }
  /// `name` (a program's string, which outlives the graph) once checked.
  std::string_view checked_name(std::string_view name, std::string_view what) const {
    if (auto err = ir::check_name(name, what)) fail(*err);
    return name;
  }
  /// Buffer `id`'s name, checked the first time it names a node only: a
  /// buffer that is allocated, freed and reused names a node each time, and
  /// checking its name each time was 3% of the emission.
  std::string_view buffer_name(ir::BufferId id) {
    const ir::BufferDecl& d = buffer(id);
    if (!name_checked_[id.index]) {
      (void)checked_name(d.name, "a buffer");
      name_checked_[id.index] = true;
    }
    return d.name;
  }

  std::uint32_t node(ir::BufferId id) {
    const ir::BufferDecl& d = buffer(id);
    if (node_of_[id.index] < 0)
      fail("buffer '" + d.name + "' has no value here (never defined, or freed before this use)");
    return static_cast<std::uint32_t>(node_of_[id.index]);
  }

  // ---- subgraphs -----------------------------------------------------------

  void convert_subgraphs() {
    std::unordered_map<std::uint32_t, OutputForm> done;
    auto add = [&](ir::GraphId id, OutputForm form) {
      if (!p_.contains(id)) fail("subgraph id " + std::to_string(id.index) + " is out of range");
      if (const auto [it, fresh] = done.emplace(id.index, form); !fresh) {
        if (it->second != form)
          fail("subgraph '" + p_.subgraph(id).name +
               "' runs in two roles (a branch, a loop's condition or body) that return their outputs differently");
        return;
      }
      const ir::Program& sub = p_.subgraph(id);
      auto child = std::make_unique<Module>();
      if (auto err = ir::check_name(sub.name, "a subgraph")) fail(*err);
      child->name = sub.name;
      GraphConverter(conv_, sub, *child, true, options_, form).run();
      m_.children.push_back(std::move(child));
    };
    for (line_index_ = 0; line_index_ < p_.body.size(); ++line_index_) {
      line_kind_ = "a line running subgraphs";
      if (const auto* c = std::get_if<ir::Conditional>(&p_.body[line_index_])) {
        add(c->true_graph, OutputForm::inductor);
        add(c->false_graph, OutputForm::inductor);
      } else if (const auto* w = std::get_if<ir::WhileLoop>(&p_.body[line_index_])) {
        add(w->cond_graph, OutputForm::bare);
        add(w->body_graph, OutputForm::tuple);
      }
    }
  }

  std::uint32_t subgraph_attr(ir::GraphId id) {
    const std::string& name = p_.subgraph(id).name;
    for (std::uint32_t i = 0; i < g_.nodes.size(); ++i)
      if (g_.nodes[i].op == Op::get_attr && g_.nodes[i].label == name) return i;
    fail("no submodule for subgraph '" + name + "'");
  }

  // ---- inputs --------------------------------------------------------------

  /// Symbols read from the tensor inputs' sizes and strides
  /// (`aten.sym_size.int`), an expression with one unknown solved for it.
  void input_shapes() {
    std::unordered_set<std::uint32_t> seen;
    for (const ir::ProgramInput& in : p_.inputs) {
      const auto* b = boost::variant2::get_if<ir::BufferId>(&in);
      if (!b || !seen.insert(b->index).second) continue;
      const ir::Layout& l = buffer(*b).layout;
      for (std::size_t d = 0; d < l.sizes.size(); ++d) shape_symbol(l.sizes[d], *b, "sym_size.int", d);
      for (std::size_t d = 0; d < l.strides.size(); ++d) shape_symbol(l.strides[d], *b, "sym_stride.int", d);
    }
  }

  Value read_dim(ir::BufferId b, std::string_view op, std::size_t dim) {
    ArgWriter w(g_);
    w.both("(");
    w.node(node(b));
    w.both(", ");
    w.integer(static_cast<std::int64_t>(dim));
    w.both(")");
    return Value{true, 0, g_.call_function(builtin(op == "sym_size.int" ? Builtin::sym_size : Builtin::sym_stride), w)};
  }

  void shape_symbol(expr::Expr e, ir::BufferId b, std::string_view op, std::size_t dim) {
    if (!e) fail("an input's layout holds a null expression");
    if (e.is_integer()) return;
    if (e.is_symbol()) {
      if (!syms_.defined(e)) syms_.define(e, read_dim(b, op, dim));
      return;
    }
    std::vector<expr::Expr> unknown;
    for (expr::Expr s : expr::free_symbols(e))
      if (!syms_.defined(s)) unknown.push_back(s);
    if (unknown.empty()) {
      (void)syms_.value(e);
      return;
    }
    if (unknown.size() > 1)
      fail("underdetermined input expression " + expr::print_python(e) + " of input '" + buffer(b).name +
           "': more than one symbol is unknown");
    const Value size = read_dim(b, op, dim);
    // A fresh symbol stands for the size read; the unknown is solved in terms of it.
    const std::string fresh_name = "wrapir_fx_" + std::string(g_.nodes[size.node].name);
    const expr::Expr fresh = p_.ctx().symbol(fresh_name, expr::Assumption::nonnegative);
    syms_.define(fresh, size);
    Result<expr::Solution> solved = expr::solve(e, fresh, unknown[0]);
    if (!solved) fail("cannot solve input expression " + expr::print_python(e) + ": " + solved.error().message);
    syms_.define(unknown[0], syms_.value(solved.value().value));
  }

  // ---- values --------------------------------------------------------------

  /// A buffer argument as a node: a view becomes `torch.as_strided` named
  /// `<buffer>_view` (unique), as Inductor materialises a ReinterpretView.
  std::uint32_t buffer_arg(const ir::BufferArg& a) {
    const std::uint32_t base = node(a.buffer);
    if (!a.view) return base;
    const std::string_view candidate = g_.names.keep(buffer(a.buffer).name + "_view");
    const std::string_view name = g_.names.create_name(candidate);
    const std::uint32_t n = as_strided(base, a.view->sizes, a.view->strides, a.view->offset);
    g_.rename(n, name);
    g_.set_reserved(n, candidate);
    return n;
  }

  void write_shape(ArgWriter& w, const std::vector<expr::Expr>& dims) {
    w.both("[");
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i) w.both(", ");
      write_value(w, syms_.value(dims[i]));
    }
    w.both("]");
  }

  std::uint32_t as_strided(std::uint32_t base, std::span<const expr::Expr> sizes,
                           std::span<const expr::Expr> strides, expr::Expr offset) {
    // Shapes first: the nodes that compute them come before the view.
    std::vector<Value>& s = scratch_sizes_;
    std::vector<Value>& t = scratch_strides_;
    s.clear();
    t.clear();
    for (expr::Expr e : sizes) s.push_back(syms_.value(e));
    for (expr::Expr e : strides) t.push_back(syms_.value(e));
    const Value o = offset ? syms_.value(offset) : Value{};
    ArgWriter w(g_);
    w.both("(");
    w.node(base);
    w.both(", [");
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i) w.both(", ");
      write_value(w, s[i]);
    }
    w.both("], [");
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i) w.both(", ");
      write_value(w, t[i]);
    }
    w.both("], ");
    write_value(w, o);
    w.both(")");
    return g_.call_function(builtin(Builtin::as_strided), w);
  }

  /// Prepares the nodes an argument needs (views, arithmetic) before the call.
  void prepare(const ir::Arg& a) {
    if (const auto* b = a.get_if<ir::BufferArg>()) prepared_.push_back(buffer_arg(*b));
    else if (const auto* e = a.get_if<expr::Expr>()) prepared_values_.push_back(syms_.value(*e));
    else if (const auto* l = a.get_if<ir::ArgList>())
      for (const ir::Arg& item : l->items) prepare(item);
  }
  void prepare_all(const std::vector<ir::Arg>& args, const std::vector<ir::NamedArg>& kwargs) {
    prepared_.clear();
    prepared_values_.clear();
    next_prepared_ = next_prepared_value_ = 0;
    for (const ir::Arg& a : args) prepare(a);
    for (const ir::NamedArg& a : kwargs) prepare(a.value);
  }

  void write_arg(ArgWriter& w, const ir::Arg& a) {
    using ir::Arg;
    a.visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, ir::None>) w.none();
          else if constexpr (std::is_same_v<T, ir::BufferArg>) w.node(prepared_.at(next_prepared_++));
          else if constexpr (std::is_same_v<T, expr::Expr>) write_value(w, prepared_values_.at(next_prepared_value_++));
          else if constexpr (std::is_same_v<T, std::int64_t>) w.integer(v);
          else if constexpr (std::is_same_v<T, double>) w.floating(v);
          else if constexpr (std::is_same_v<T, bool>) w.boolean(v);
          else if constexpr (std::is_same_v<T, std::string>) {
            if (!w.string(v)) fail("a string argument is not valid UTF-8");
          } else if constexpr (std::is_same_v<T, ir::Device>) {
            std::string text(ir::device_type_name(v.type));
            if (v.index) text += ":" + std::to_string(*v.index);
            w.raw(text, "torch.device('" + text + "')");
          } else if constexpr (std::is_same_v<T, ir::DType>) {
            w.both(ir::torch_name(v));
          } else {
            // A list: torch.fx prints Python lists as [a, b].
            w.both("[");
            for (std::size_t i = 0; i < v.items.size(); ++i) {
              if (i) w.both(", ");
              write_arg(w, v.items[i]);
            }
            w.both("]");
          }
        });
  }

  /// The callee of an extern call: the operator overload torch.fx calls.
  const Target& op_target(const ir::OpName& op, std::string_view extern_overload) {
    if (auto err = ir::check_operator_path(op.text, options_.operators)) fail(*err);
    if (const std::string_view kw = python::detail::python_keyword_part(op.text); !kw.empty())
      fail("operator " + ir::quote_for_diagnostic(op.text) + " has the part '" + std::string(kw) + "', a Python keyword");
    std::string path = op.text;
    const std::string_view root = std::string_view(path).substr(0, path.find('.'));
    if (root == "extern_kernels") {
      // Inductor's extern kernels are the ATen operators of the same name:
      // `extern_kernels.mm(..., out=buf)` is `aten.mm.out`.
      path = "torch.ops.aten." + path.substr(path.find('.') + 1) + "." + std::string(extern_overload);
    } else if (root == "aten") {
      path = "torch.ops." + path;
    } else if (root == "inductor_ops") {
      path = "torch.ops.inductor" + path.substr(root.size());
    } else if (root == "_quantized") {
      path = "torch.ops._quantized" + path.substr(root.size());
    }
    std::string name;
    if (path.rfind("torch.ops.", 0) == 0) {
      // An OpOverload's __name__ is `op.overload`, a packet's `op`.
      const std::size_t ns_end = path.find('.', 10);
      name = ns_end == std::string::npos ? path : path.substr(ns_end + 1);
    } else {
      name = path.substr(path.rfind('.') + 1);
    }
    return g_.intern(Target{path, path, name});
  }

  // ---- lines ---------------------------------------------------------------

  void convert(const ir::Allocate& l) {
    const ir::BufferDecl& d = buffer(l.buffer);
    if (d.layout.storage_offset && !d.layout.storage_offset.is_integer(0))
      fail("buffer '" + d.name + "' is allocated with a storage offset; empty_strided has none");
    allocate(l.buffer, d.layout.sizes, d.layout.strides, d.layout.dtype, d.layout.device, false);
  }

  void allocate(ir::BufferId id, std::span<const expr::Expr> sizes, std::span<const expr::Expr> strides,
                ir::DType dtype, ir::Device device, bool zeros) {
    std::vector<Value>& s = scratch_sizes_;
    std::vector<Value>& t = scratch_strides_;
    s.clear();
    t.clear();
    for (expr::Expr e : sizes) s.push_back(syms_.value(e));
    for (expr::Expr e : strides) t.push_back(syms_.value(e));
    ArgWriter w(g_);
    w.both("([");
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i) w.both(", ");
      write_value(w, s[i]);
    }
    w.both("]");
    if (!zeros) {
      w.both(", [");
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (i) w.both(", ");
        write_value(w, t[i]);
      }
      w.both("]");
    } else if (s.size() == 1) {
      w.both(",");
    }
    w.both(")");
    ArgWriter k(g_);
    k.both("{");
    k.key("dtype");
    k.both(ir::torch_name(dtype));
    k.both(", ");
    k.key("device");
    k.plain_string(ir::device_type_name(device.type));
    k.both("}");
    const std::uint32_t n =
        g_.call_function_renamed(builtin(zeros ? Builtin::zeros : Builtin::empty_strided), w, k, buffer_name(id));
    node_of_[id.index] = n;
  }

  void release(ir::BufferId id) {
    (void)node(id);
    node_of_[id.index] = -1;
  }

  void convert(const ir::FreeIfNotReused& l) {
    if (!l.reused) release(l.buffer);
  }
  void convert(const ir::Free& l) {
    // Placeholders are not freed (Inductor keeps them bound).
    if (g_.nodes[node(l.buffer)].op != Op::placeholder) release(l.buffer);
  }
  void convert(const ir::Null&) {}

  void convert(const ir::Reuse& l) {
    const ir::BufferDecl& o = buffer(l.old_buffer);
    const ir::BufferDecl& n = buffer(l.new_buffer);
    if (o.layout.dtype != n.layout.dtype)
      fail("buffer '" + n.name + "' reuses '" + o.name + "' of another dtype; as_strided keeps the dtype");
    const std::uint32_t old_node = node(l.old_buffer);
    std::uint32_t result = old_node;
    if (o.layout.sizes != n.layout.sizes || o.layout.strides != n.layout.strides ||
        o.layout.storage_offset != n.layout.storage_offset)
      result = as_strided(old_node, n.layout.sizes, n.layout.strides, n.layout.storage_offset);
    node_of_[l.new_buffer.index] = result;
    if (o.role != ir::BufferRole::output && l.delete_old && result != old_node) node_of_[l.old_buffer.index] = -1;
  }

  void convert(const ir::PoolCreate& l) {
    if (!p_.contains(l.pool)) fail("pool id " + std::to_string(l.pool.index) + " is out of range");
    const ir::PoolDecl& pool = p_.pool(l.pool);
    // A pool is bytes; its buffers are `inductor._alloc_from_pool` views.
    std::vector<Value> size{syms_.value(pool.size_bytes)};
    ArgWriter w(g_);
    w.both("([");
    write_value(w, size[0]);
    w.both("], [1])");
    ArgWriter k(g_);
    k.both("{");
    k.key("dtype");
    k.both("torch.uint8");
    k.both(", ");
    k.key("device");
    k.plain_string(ir::device_type_name(pool.device.type));
    k.both("}");
    const std::uint32_t n = g_.call_function(builtin(Builtin::empty_strided), w, k);
    g_.rename(n, checked_name(pool.name, "a pool"));
    if (pool_node_.size() < p_.pools.size()) pool_node_.resize(p_.pools.size(), -1);
    pool_node_[l.pool.index] = n;
  }

  void convert(const ir::AllocFromPool& l) {
    if (!p_.contains(l.pool) || l.pool.index >= pool_node_.size() || pool_node_[l.pool.index] < 0)
      fail("pool id " + std::to_string(l.pool.index) + " is not created here");
    const ir::BufferDecl& d = buffer(l.buffer);
    const Value offset = syms_.value(l.offset_bytes);
    std::vector<Value>& s = scratch_sizes_;
    std::vector<Value>& t = scratch_strides_;
    s.clear();
    t.clear();
    for (expr::Expr e : d.layout.sizes) s.push_back(syms_.value(e));
    for (expr::Expr e : d.layout.strides) t.push_back(syms_.value(e));
    ArgWriter w(g_);
    w.both("(");
    w.node(static_cast<std::uint32_t>(pool_node_[l.pool.index]));
    w.both(", ");
    write_value(w, offset);
    w.both(", ");
    w.both(ir::torch_name(d.layout.dtype));
    w.both(", [");
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i) w.both(", ");
      write_value(w, s[i]);
    }
    w.both("], [");
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i) w.both(", ");
      write_value(w, t[i]);
    }
    w.both("])");
    const std::uint32_t n = g_.call_function(builtin(Builtin::alloc_from_pool), w);
    g_.rename(n, buffer_name(l.buffer));
    node_of_[l.buffer.index] = n;
  }

  void convert(const ir::DeallocFromPool& l) { release(l.buffer); }

  void convert(const ir::CommBufferAllocate&) {
    fail("communication buffers have no FX form (Inductor's FX converter rejects them too)");
  }
  void convert(const ir::CommBufferFree& l) { release(l.buffer); }

  void convert(const ir::WorkspaceAllocate& l) {
    const ir::BufferDecl& d = buffer(l.workspace);
    if (d.layout.sizes.size() != 1) fail("workspace '" + d.name + "' is not one-dimensional");
    allocate(l.workspace, d.layout.sizes, d.layout.strides, d.layout.dtype, d.layout.device,
             l.zero_mode != ir::WorkspaceZeroMode::uninitialized);
  }
  void convert(const ir::WorkspaceFree& l) { release(l.workspace); }

  void convert(const ir::DeviceCopy& l) {
    const std::uint32_t dst = buffer_arg(l.destination);
    const std::uint32_t src = buffer_arg(l.source);
    ArgWriter w(g_);
    w.both("(");
    w.node(dst);
    w.both(", ");
    w.node(src);
    w.both(", ");
    w.boolean(l.non_blocking);
    w.both(")");
    g_.call_function(builtin(Builtin::copy), w);
  }

  void convert(const ir::Reinterpret& l) {
    const ir::BufferDecl& v = buffer(l.view);
    const std::uint32_t n = as_strided(node(l.base), v.layout.sizes, v.layout.strides, v.layout.storage_offset);
    g_.rename(n, buffer_name(l.view));
    node_of_[l.view.index] = n;
  }

  void convert(const ir::KernelDefinition& l) {
    if (!p_.contains(l.kernel)) fail("kernel id " + std::to_string(l.kernel.index) + " is out of range");
    const ir::KernelDecl& k = p_.kernel(l.kernel);
    const auto* text = boost::variant2::get_if<ir::SourceText>(&l.source);
    if (k.language != ir::KernelLanguage::triton && k.language != ir::KernelLanguage::cpp)
      fail("kernel '" + k.name + "' is " + std::string(ir::kernel_language_name(k.language)) +
           "; FX graphs launch Triton kernels (the kernel side table) and C++ kernels (wrapir.fx.cpp_kernel_mutation)");
    if (!text) fail("kernel '" + k.name + "' has no source text");
    if (auto err = ir::check_name(k.name, "a kernel")) fail(*err);
    KernelEntry e{k.name, k.language, text->text, "cuda", {}};
    if (k.language == ir::KernelLanguage::cpp)
      for (const ir::KernelParam& param : k.signature) e.cpp_param_types.push_back(ir::cpp_param_type(param, *l.metadata));
    auto& table = k.language == ir::KernelLanguage::triton ? conv_.triton : conv_.cpp;
    if (kernel_index_.size() < p_.kernels.size()) kernel_index_.resize(p_.kernels.size(), -1);
    if (kernel_index_[l.kernel.index] >= 0) return;
    kernel_index_[l.kernel.index] = static_cast<std::int64_t>(table.size());
    metadata_.resize(p_.kernels.size(), nullptr);
    metadata_[l.kernel.index] = &*l.metadata;
    table.push_back(std::move(e));
  }

  std::int64_t block_value(const std::vector<ir::BlockSize>& block, std::string_view name) const {
    for (const ir::BlockSize& b : block)
      if (b.name.text == name) return b.value;
    return 1;
  }

  void convert(const ir::KernelCall& l) {
    if (!p_.contains(l.kernel)) fail("kernel id " + std::to_string(l.kernel.index) + " is out of range");
    const ir::KernelDecl& k = p_.kernel(l.kernel);
    if (l.kernel.index >= kernel_index_.size() || kernel_index_[l.kernel.index] < 0)
      fail("kernel '" + k.name + "' is called before its definition");
    if (l.args.size() != k.signature.size())
      fail("the call of '" + k.name + "' has " + std::to_string(l.args.size()) + " arguments for " +
           std::to_string(k.signature.size()) + " parameters");
    const ir::KernelMetadata& meta = *metadata_[l.kernel.index];
    // The grid's nodes come before the arguments' (Inductor converts the grid first).
    ArgWriter grid(g_);
    const std::vector<ir::BlockSize>* block = &meta.block;
    if (k.language == ir::KernelLanguage::triton) grid_of(l, k, meta, block, grid);
    prepare_all(l.args, {});
    ArgWriter kw(g_);
    kw.both("{");
    kw.key("kernel_idx");
    const std::int64_t index = kernel_index_[l.kernel.index];
    {
      // `N` printed, `_triton_kernels[N]` (the live table's index) in Python.
      char digits[24];
      const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, index);
      (void)ec;
      const std::string_view n(digits, static_cast<std::size_t>(end - digits));
      if (kw.python()) {
        kw.both(k.language == ir::KernelLanguage::triton ? "_triton_kernels[" : "_cpp_kernels[");
        kw.both(n);
        kw.both("]");
      } else {
        kw.both(n);
      }
    }
    if (k.language == ir::KernelLanguage::triton) {
      kw.both(", ");
      kw.key("constant_args_idx");
      ArgWriter index_text(g_);
      index_text.integer(conv_.constant_args++);
      kw.raw(index_text.view(), "kernel_side_table.add_constant_args({})");
      kw.both(", ");
      kw.key("grid");
      kw.append(grid);
      kw.both(", ");
      kw.key("tma_descriptor_metadata");
      kw.both("{}");
    }
    kw.both(", ");
    kw.key("kwargs");
    kw.both("{");
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      if (i) kw.both(", ");
      kw.key(k.signature[i].name);
      write_arg(kw, l.args[i]);
    }
    if (k.language == ir::KernelLanguage::triton) {
      bool first = l.args.empty();
      for (const ir::NamedArg& c : meta.constants) {
        bool in_signature = false;
        for (const ir::KernelParam& param : k.signature) in_signature |= param.name == c.name.text;
        if (in_signature) continue;
        if (!first) kw.both(", ");
        first = false;
        kw.key(c.name.text);
        prepare_all({c.value}, {});
        write_arg(kw, c.value);
      }
      for (const ir::BlockSize& b : *block) {
        if (!first) kw.both(", ");
        first = false;
        kw.key(b.name.text);
        kw.integer(b.value);
      }
    }
    kw.both("}}");
    ArgWriter args(g_);
    args.both("()");
    g_.call_function(builtin(k.language == ir::KernelLanguage::triton ? Builtin::triton : Builtin::cpp), args, kw);
  }

  /// The launch grid, `[(x, y, z)]`, as Inductor's launcher computes it
  /// from the grid type and the block configuration.
  void grid_of(const ir::KernelCall& l, const ir::KernelDecl& k, const ir::KernelMetadata& meta,
               const std::vector<ir::BlockSize>*& block, ArgWriter& out) {
    std::array<Value, 3> xyz{Value{false, 1, 0}, Value{false, 1, 0}, Value{false, 1, 0}};
    if (const auto* e = ir::grid_if<ir::ExplicitGrid>(l.grid)) {
      xyz = {syms_.value(e->x), syms_.value(e->y), syms_.value(e->z)};
    } else {
      std::optional<ir::GridType> type = meta.grid_type;
      std::vector<ir::NamedExpr> typed_numels;
      if (const auto* t = ir::grid_if<ir::TypedGrid>(l.grid)) {
        type = t->type;
        block = &t->block;
        typed_numels = t->numels;
      }
      if (!type) fail("kernel '" + k.name + "' has no grid type; the FX graph needs its grid");
      auto numel = [&](std::string_view name) -> expr::Expr {
        for (const ir::NamedExpr& n : typed_numels)
          if (n.name.text == name) return n.value;
        for (std::size_t i = 0; i < k.signature.size(); ++i)
          if (k.signature[i].name == name) {
            if (const auto* e = l.args[i].get_if<expr::Expr>()) return expand_computed(*e);
            if (const auto* v = l.args[i].get_if<std::int64_t>()) return p_.ctx().integer(*v);
            fail("the numel '" + std::string(name) + "' of '" + k.name + "' is not an integer");
          }
        fail("kernel '" + k.name + "' has no numel argument '" + std::string(name) + "' for its " +
             std::string(ir::grid_type_name(*type)));
      };
      auto cd = [&](std::string_view n, std::string_view b) { return syms_.ceil_div(numel(n), block_value(*block, b)); };
      switch (*type) {
        case ir::GridType::grid_1d: xyz[0] = cd("xnumel", "XBLOCK"); break;
        case ir::GridType::grid_2d:
          xyz[0] = cd("xnumel", "XBLOCK");
          xyz[1] = cd("ynumel", "YBLOCK");
          break;
        case ir::GridType::grid_3d:
          xyz[0] = cd("xnumel", "XBLOCK");
          xyz[1] = cd("ynumel", "YBLOCK");
          xyz[2] = cd("znumel", "ZBLOCK");
          break;
        case ir::GridType::batch_matmul_grid_3d:
          xyz[0] = cd("znumel", "ZBLOCK");
          xyz[1] = cd("ynumel", "YBLOCK");
          xyz[2] = cd("xnumel", "XBLOCK");
          break;
        case ir::GridType::cooperative_reduction:
          xyz[0] = Value{false, block_value(*block, "RSPLIT"), 0};
          xyz[1] = cd("xnumel", "XBLOCK");
          break;
        case ir::GridType::split_scan:
          xyz[0] = cd("r0_numel", "R0_BLOCK");
          xyz[1] = syms_.value(numel("xnumel"));
          break;
        case ir::GridType::mix_order_reduction: xyz[0] = cd("xnumel", "RSPLIT_SIZE"); break;
        default:
          fail("kernel '" + k.name + "' has grid type " + std::string(ir::grid_type_name(*type)) +
               ", which the FX emitter does not compute yet");
      }
    }
    out.both("[(");
    for (int i = 0; i < 3; ++i) {
      if (i) out.both(", ");
      write_value(out, xyz[i]);
    }
    out.both(")]");
  }

  /// `e` with computed symbols replaced by their values: Inductor's launch
  /// arguments are the numel expressions, not their names.
  expr::Expr expand_computed(expr::Expr e) {
    if (computed_.empty() || e.is_integer()) return e;
    if (const auto it = expanded_.find(e.node()); it != expanded_.end()) return it->second;
    const expr::Expr result = expand_uncached(e);
    expanded_.emplace(e.node(), result);
    return result;
  }
  expr::Expr expand_uncached(expr::Expr e) {
    for (int depth = 0; depth < 64; ++depth) {
      std::vector<std::pair<expr::Expr, expr::Expr>> repl;
      for (expr::Expr s : expr::free_symbols(e))
        if (const auto it = computed_.find(s.node()); it != computed_.end()) repl.emplace_back(s, it->second);
      if (repl.empty()) return e;
      e = expr::substitute(e, repl);
    }
    return e;
  }

  void convert(const ir::SymbolicCallArg& l) {
    if (!l.symbol || !l.symbol.is_symbol()) fail("the defined value is not a symbol");
    syms_.define(l.symbol, syms_.value(l.value));
    computed_[l.symbol.node()] = l.value;
    expanded_.clear();  // a redefinition changes what names expand to
  }

  void convert(const ir::MultiKernelDefinition&) {
    fail("multi-kernels have no FX form: choose a candidate first (Inductor's FX converter autotunes Triton "
         "configurations only)");
  }
  void convert(const ir::MultiKernelCall&) { fail("multi-kernels have no FX form"); }

  void extern_call(const ir::OpName& op, std::string_view overload, const std::vector<ir::Arg>& args,
                   const std::vector<ir::NamedArg>& kwargs, const ir::BufferArg* out,
                   const std::vector<ir::NamedBuffer>* outs, std::optional<ir::BufferId> result) {
    const Target& t = op_target(op, overload);
    prepare_all(args, kwargs);
    std::vector<std::uint32_t> out_nodes;
    if (out) out_nodes.push_back(buffer_arg(*out));
    if (outs)
      for (const ir::NamedBuffer& o : *outs) out_nodes.push_back(buffer_arg(o.buffer));
    ArgWriter a(g_);
    a.both("(");
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) a.both(", ");
      write_arg(a, args[i]);
    }
    if (args.size() == 1) a.both(",");
    a.both(")");
    ArgWriter k(g_);
    k.both("{");
    bool first = true;
    for (const ir::NamedArg& n : kwargs) {
      if (auto err = ir::check_name(n.name.text, "a keyword argument")) fail(*err);
      if (!first) k.both(", ");
      first = false;
      k.key(n.name.text);
      write_arg(k, n.value);
    }
    std::size_t next_out = 0;
    if (out) {
      if (!first) k.both(", ");
      first = false;
      k.key("out");
      k.node(out_nodes[next_out++]);
    }
    if (outs)
      for (const ir::NamedBuffer& o : *outs) {
        if (auto err = ir::check_name(o.name.text, "an output keyword")) fail(*err);
        if (!first) k.both(", ");
        first = false;
        k.key(o.name.text);
        k.node(out_nodes[next_out++]);
      }
    k.both("}");
    const std::uint32_t n = g_.call_function(t, a, k);
    if (result) {
      g_.rename(n, buffer_name(*result));
      node_of_[result->index] = n;
    }
  }

  void convert(const ir::ExternKernelAlloc& l) {
    extern_call(l.kernel, "default", l.args, l.kwargs, nullptr, nullptr, l.result);
  }
  void convert(const ir::ExternKernelOut& l) { extern_call(l.kernel, "out", l.args, l.kwargs, &l.out, nullptr, {}); }
  void convert(const ir::ExternKernelMultiOut& l) {
    extern_call(l.kernel, "out", l.args, l.kwargs, nullptr, &l.outs.vector(), l.result);
  }

  void convert(const ir::MultiOutput& l) {
    std::uint32_t n = node(l.source);
    if (l.path.empty()) {
      node_of_[l.result.index] = n;
      return;
    }
    for (const ir::KeyStep& step : l.path) {
      ArgWriter w(g_);
      w.both("(");
      w.node(n);
      w.both(", ");
      if (step.kind == ir::KeyStepKind::index) w.integer(step.value);
      else if (step.kind == ir::KeyStepKind::key) {
        if (!w.string(step.key)) fail("a dict key is not valid UTF-8");
      } else {
        fail("a multi-output path may hold only index and key steps");
      }
      w.both(")");
      n = g_.call_function(builtin(Builtin::getitem), w);
    }
    g_.rename(n, buffer_name(l.result));
    node_of_[l.result.index] = n;
  }

  /// `aten.scatter_` with Inductor's overload for the source and reduction.
  void convert(const ir::ScatterFallback& l) {
    std::string op = l.kernel.text;
    if (op == "aten.scatter_") {
      bool reduce = false;
      for (const ir::NamedArg& a : l.kwargs) reduce |= a.name.text == "reduce";
      const bool tensor = l.src->holds<ir::BufferArg>();
      op += tensor ? (reduce ? ".reduce" : ".src") : (reduce ? ".value_reduce" : ".value");
    } else if (op == "aten.scatter_reduce_") {
      op += ".two";
    }
    std::vector<ir::Arg> args{ir::Arg{l.self}, ir::Arg{l.dim}, ir::Arg{l.index}, *l.src};
    extern_call(op, "default", args, l.kwargs, nullptr, nullptr, {});
  }

  void convert(const ir::IndexPutFallback& l) {
    std::string op = l.kernel.text;
    if (op == "aten.index_put_" || op == "aten.index_put") op += ".default";
    const Target& t = op_target(op, "default");
    const std::uint32_t self = node(l.self);
    std::vector<std::int64_t> idx;
    for (const auto& i : l.indices) idx.push_back(i ? static_cast<std::int64_t>(buffer_arg(*i)) : -1);
    const std::uint32_t values = buffer_arg(l.values);
    ArgWriter w(g_);
    w.both("(");
    w.node(self);
    w.both(", (");
    for (std::size_t i = 0; i < idx.size(); ++i) {
      if (i) w.both(", ");
      if (idx[i] < 0) w.none();
      else w.node(static_cast<std::uint32_t>(idx[i]));
    }
    if (idx.size() == 1) w.both(",");
    w.both("), ");
    w.node(values);
    w.both(", ");
    w.boolean(l.accumulate);
    w.both(")");
    g_.call_function(t, w);
  }

  void convert(const ir::DynamicScalar& l) {
    if (!l.symbol || !l.symbol.is_symbol()) fail("the defined value is not a symbol");
    std::uint32_t x = node(l.source);
    auto unary = [&](const Target& t, std::uint32_t in, std::string_view extra) {
      ArgWriter w(g_);
      w.both("(");
      w.node(in);
      w.both(extra.empty() ? "," : ", ");
      w.both(extra);
      w.both(")");
      return g_.call_function(t, w);
    };
    if (l.path.size() == 1 && l.path[0].kind == ir::KeyStepKind::convert_to_int) {
      x = unary(builtin(Builtin::where), x, "1, 0");
    } else if (!l.path.empty() && !(l.path.size() == 1 && l.path[0].kind == ir::KeyStepKind::divide_by &&
                                    l.path[0].value > 0)) {
      fail("a dynamic scalar's path is empty, one convert_to_int or one divide_by with a positive divisor");
    }
    std::uint32_t n = unary(builtin(Builtin::item), x, "");
    if (l.path.size() == 1 && l.path[0].kind == ir::KeyStepKind::divide_by)
      n = syms_.binary(builtin(Builtin::floordiv), Value{true, 0, n}, Value{false, l.path[0].value, 0}).node;
    syms_.define(l.symbol, Value{true, 0, n});
  }

  void convert(const ir::UnbackedSymbolDefs& l) {
    const std::uint32_t root = node(l.source);
    for (const ir::SymbolBinding& b : l.bindings) {
      if (!b.symbol || !b.symbol.is_symbol()) fail("a bound value is not a symbol");
      if (syms_.defined(b.symbol)) continue;
      std::uint32_t n = root;
      for (std::size_t i = 0; i < b.path.size(); ++i) {
        const ir::KeyStep& s = b.path[i];
        ArgWriter w(g_);
        w.both("(");
        w.node(n);
        Builtin target = Builtin::sym_size;
        switch (s.kind) {
          case ir::KeyStepKind::index:
            w.both(", ");
            w.integer(s.value);
            n = g_.call_function(builtin(Builtin::getitem), (w.both(")"), w));
            continue;
          case ir::KeyStepKind::size: target = Builtin::sym_size; break;
          case ir::KeyStepKind::stride: target = Builtin::sym_stride; break;
          case ir::KeyStepKind::storage_offset: target = Builtin::sym_storage_offset; break;
          case ir::KeyStepKind::divide_by:
            w.both(", ");
            w.integer(s.value);
            n = g_.call_function(builtin(Builtin::floordiv), (w.both(")"), w));
            continue;
          default: fail("an unbacked symbol's path holds a " + std::string(ir::key_step_kind_name(s.kind)) + " step");
        }
        if (s.kind != ir::KeyStepKind::storage_offset) {
          w.both(", ");
          w.integer(s.value);
        } else {
          w.both(",");
        }
        w.both(")");
        n = g_.call_function(builtin(target), w);
      }
      syms_.define(b.symbol, Value{true, 0, n});
    }
  }

  void convert(const ir::AssertSizeStride& l) {
    if (!options_.asserts) return;
    const ir::BufferDecl& d = buffer(l.buffer);
    const std::uint32_t x = node(l.buffer);
    std::vector<Value>& s = scratch_sizes_;
    std::vector<Value>& t = scratch_strides_;
    s.clear();
    t.clear();
    for (expr::Expr e : l.sizes) s.push_back(syms_.value(e));
    for (expr::Expr e : l.strides) t.push_back(syms_.value(e));
    ArgWriter w(g_);
    w.both("(");
    w.node(x);
    w.both(",)");
    ArgWriter k(g_);
    k.both("{");
    k.key("size");
    k.both("[");
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i) k.both(", ");
      write_value(k, s[i]);
    }
    k.both("], ");
    k.key("stride");
    k.both("[");
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (i) k.both(", ");
      write_value(k, t[i]);
    }
    k.both("], ");
    k.key("dtype");
    k.both(ir::torch_name(d.layout.dtype));
    k.both("}");
    g_.call_function(builtin(Builtin::assert_tensor_metadata), w, k);
  }
  void convert(const ir::AssertAlignment&) {}  // no FX operator checks alignment (docs/emitters.md)
  void convert(const ir::AssertScalar& l) {
    if (!options_.asserts) return;
    const Value c = syms_.value(l.condition);
    ArgWriter w(g_);
    w.both("(");
    write_value(w, c);
    w.both(", ");
    if (!w.string(l.message)) fail("the assert's message is not valid UTF-8");
    w.both(")");
    g_.call_function(builtin(Builtin::assert_scalar), w);
  }

  void convert(const ir::EnterSubgraph&) {}
  void convert(const ir::ExitSubgraph&) {}

  void control_call(const Target& t, const std::vector<std::uint32_t>& graphs, const std::vector<ir::Arg>* pred,
                    const std::vector<std::vector<ir::Arg>>& groups, const std::vector<ir::BufferId>& outputs) {
    std::vector<ir::Arg> all;
    if (pred) all.insert(all.end(), pred->begin(), pred->end());
    for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
    prepare_all(all, {});
    ArgWriter w(g_);
    w.both("(");
    std::size_t next = 0;
    if (pred) {
      write_arg(w, all[next++]);
      w.both(", ");
    }
    for (std::size_t i = 0; i < graphs.size(); ++i) {
      w.node(graphs[i]);
      w.both(", ");
    }
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      if (gi) w.both(", ");
      w.both("(");
      for (std::size_t i = 0; i < groups[gi].size(); ++i) {
        if (i) w.both(", ");
        write_arg(w, all[next++]);
      }
      if (groups[gi].size() == 1) w.both(",");
      w.both(")");
    }
    w.both(")");
    const std::uint32_t call = g_.call_function(t, w);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      ArgWriter gw(g_);
      gw.both("(");
      gw.node(call);
      gw.both(", ");
      gw.integer(static_cast<std::int64_t>(i));
      gw.both(")");
      const std::uint32_t n = g_.call_function(builtin(Builtin::getitem), gw);
      g_.rename(n, buffer_name(outputs[i]));
      node_of_[outputs[i].index] = n;
    }
  }

  void convert(const ir::Conditional& l) {
    const std::vector<ir::Arg> pred{l.predicate};
    control_call(builtin(Builtin::cond),
                 {subgraph_attr(l.true_graph), subgraph_attr(l.false_graph)}, &pred, {l.operands}, l.outputs);
  }
  void convert(const ir::WhileLoop& l) {
    control_call(builtin(Builtin::while_loop),
                 {subgraph_attr(l.cond_graph), subgraph_attr(l.body_graph)}, nullptr, {l.carried, l.additional},
                 l.outputs);
  }

  void convert(const ir::EnterDeviceContext&) {}
  void convert(const ir::ExitDeviceContext&) {}
  void convert(const ir::EnterStreamContext& l) {
    if (l.stream != 0) fail("side streams have no FX form (Inductor's FX converter rejects them too)");
  }
  void convert(const ir::ExitStreamContext&) {}
  void convert(const ir::GetRawStream&) {}
  void convert(const ir::Comment&) {}

  void outputs() {
    std::vector<std::int64_t> nodes;
    std::vector<Value> scalars;
    for (const ir::ProgramOutput& o : p_.outputs) {
      if (boost::variant2::holds_alternative<ir::None>(o)) {
        nodes.push_back(-1);
      } else if (const auto* b = boost::variant2::get_if<ir::BufferArg>(&o)) {
        nodes.push_back(buffer_arg(*b));
      } else {
        const Value v = syms_.value(boost::variant2::get<expr::Expr>(o));
        nodes.push_back(v.is_node ? static_cast<std::int64_t>(v.node) : -2 - static_cast<std::int64_t>(scalars.size()));
        scalars.push_back(v);
      }
    }
    ArgWriter w(g_, true);  // `return buf0`: names without `%`
    auto one = [&](std::int64_t n) {
      if (n == -1) w.none();
      else if (n <= -2) w.integer(scalars[static_cast<std::size_t>(-2 - n)].literal);
      else w.node(static_cast<std::uint32_t>(n));
    };
    if (output_form_ == OutputForm::tuple) {
      w.both("(");
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (i) w.both(", ");
        one(nodes[i]);
      }
      w.both(nodes.size() == 1 ? ",)" : ")");
    } else if (nodes.size() == 1 && (!is_subgraph_ || output_form_ == OutputForm::bare)) {
      one(nodes[0]);
    } else {
      w.both("[");
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (i) w.both(", ");
        one(nodes[i]);
      }
      w.both("]");
    }
    g_.set_output(w);
  }

  OutputForm output_form_;
  Conversion& conv_;
  const ir::Program& p_;
  Module& m_;
  Graph& g_;
  bool is_subgraph_;
  const FxOptions& options_;
  SymbolNodes syms_;
  std::vector<std::int64_t> node_of_;
  std::vector<bool> name_checked_;  // see buffer_name
  std::vector<std::int64_t> pool_node_;
  std::vector<std::int64_t> kernel_index_;
  std::vector<const ir::KernelMetadata*> metadata_;
  boost::unordered_flat_map<const expr::Node*, expr::Expr> computed_;
  boost::unordered_flat_map<const expr::Node*, expr::Expr> expanded_;
  std::vector<Value> scratch_sizes_, scratch_strides_;  // reused: no allocation per line
  std::vector<std::uint32_t> prepared_;
  std::vector<Value> prepared_values_;
  std::size_t next_prepared_ = 0, next_prepared_value_ = 0;
  std::size_t line_index_ = 0;
  std::string where_ = "the program";
  std::string_view line_kind_{};
};

/// Converts `program` (and the subgraphs it runs) into FX graphs.
[[nodiscard]] inline Result<std::unique_ptr<Conversion>> convert(const ir::Program& program, const FxOptions& options,
                                                                  bool python) {
  return wrapir::detail::catch_failure([&]() -> std::unique_ptr<Conversion> {
    auto c = std::make_unique<Conversion>();
    c->python = python;
    try {
      GraphConverter(*c, program, c->root, false, options).run();
    } catch (const expr::Error& e) {
      wrapir::detail::fail(std::string("program '") + program.name + "': " + e.what());
    } catch (const std::out_of_range& e) {
      wrapir::detail::fail(std::string("program '") + program.name + "': an id is out of range (" + e.what() + ")");
    }
    return c;
  });
}

}  // namespace wrapir::fx::detail
