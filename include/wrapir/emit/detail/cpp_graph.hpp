#pragma once
/// \file
/// The C++ emitter's writer of one graph function (emit/cpp.hpp): one
/// handler per line kind, each appending the statements that do what the
/// CPU executor's handler (run/detail/executor_lines.hpp) does at run time.

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/detail/cpp_values.hpp>
#include <wrapir/emit/emit.hpp>
#include <wrapir/expr/solve.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/grid.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace wrapir::cpp::detail {

using namespace std::string_view_literals;

/// What the graph writers share: graph numbers, kernel symbol names and
/// the externs the unit resolves.
struct UnitTables {
  std::string prefix;
  std::size_t max_loop_iterations = 0;
  bool input_asserts = true;
  std::unordered_map<const ir::Program*, std::size_t> graph_ids;
  std::vector<const ir::Program*> graphs;  // by id; 0 is the program
  std::map<std::string, std::size_t, std::less<>> externs;  // op name -> index
  std::vector<std::string> extern_names;                     // by index
  /// CUDA programs: the launch configurations by kernel name, and the slot
  /// in the unit's kernel table of each (graph, kernel) defined.
  std::map<std::string, const CudaKernelLaunch*, std::less<>> cuda_launches;
  std::map<std::pair<std::size_t, std::uint32_t>, std::size_t> cuda_slots;
  std::vector<const CudaKernelLaunch*> cuda_table;  // by slot
  /// The launch configurations of PTX and cubin kernels, made from their
  /// definitions (stable addresses: cuda_table points into it).
  std::deque<CudaKernelLaunch> binary_launches;
  /// CUDA C++ kernels defined, by (graph, kernel): their host functions are
  /// in the companion .cu.
  std::set<std::pair<std::size_t, std::uint32_t>> cuda_sources;
  /// The unit's head notes how to compile it once.
  bool notes_host_kernels = false;
  bool notes_cuda_cpp = false;
  /// The debug printer (CppOptions::debug_level): its level, the kernel
  /// names it wraps (lowercased; empty: all) and level 1's directory.
  int debug_level = 0;
  std::vector<std::string> debug_filter;
  std::string debug_save_directory;

  std::size_t extern_index(const std::string& op) {
    const auto it = externs.find(op);
    if (it != externs.end()) return it->second;
    externs.emplace(op, extern_names.size());
    extern_names.push_back(op);
    return extern_names.size() - 1;
  }
  [[nodiscard]] std::string kernel_symbol(std::size_t graph, const std::string& name) const {
    return prefix + "_k" + std::to_string(graph) + "_" + name;
  }
};

inline bool is_reserved(std::string_view name) { return name.rfind("wrapir", 0) == 0; }

/// Kernels launched through the unit's table of driver-loaded modules
/// (rt::CudaKernel): Triton's cubins and PTX or cubin binaries.
inline bool in_cuda_table(ir::KernelLanguage l) {
  return l == ir::KernelLanguage::triton || l == ir::KernelLanguage::ptx || l == ir::KernelLanguage::cubin;
}

/// The C++ type of a scalar kernel parameter (Triton, PTX, cubin, CUDA C++).
inline const char* launch_scalar_type(ir::DType t) {
  switch (t) {
    case ir::DType::bool_: return "bool";
    case ir::DType::uint8: return "std::uint8_t";
    case ir::DType::int8: return "std::int8_t";
    case ir::DType::int16: return "std::int16_t";
    case ir::DType::int32: return "std::int32_t";
    case ir::DType::int64: return "std::int64_t";
    case ir::DType::uint16: return "std::uint16_t";
    case ir::DType::uint32: return "std::uint32_t";
    case ir::DType::uint64: return "std::uint64_t";
    case ir::DType::float32: return "float";
    case ir::DType::float64: return "double";
    default: return nullptr;
  }
}

/// Writes `std::vector<rt::Value> wrapir_graph_<id>(...)` for one graph.
class GraphWriter {
 public:
  GraphWriter(UnitTables& tables, const ir::Program& p, std::size_t id, std::string& out)
      : t_(tables), p_(p), id_(id), out_(out) {}

  void write() {
    check_names();
    out_ += "// graph " + std::to_string(id_) + ": ";
    append_comment(out_, p_.name);
    out_ += "\nstd::vector<rt::Value> wrapir_graph_" + std::to_string(id_) +
            "(rt::Context& wrapir_ctx, const std::vector<rt::Value>& wrapir_inputs) {\n";
    out_ += "  (void)wrapir_ctx;\n  const char* wrapir_where = "sv;
    append_string_literal(out_, "the inputs of graph '" + p_.name + "'");
    out_ += ";\n  try {\n"sv;
    declare_locals();
    bind_inputs();
    if (t_.debug_level == 2 && id_ == 0) debug_inputs();
    for (line_ = 0; line_ < p_.body.size(); ++line_) {
      const ir::Line& line = p_.body[line_];
      try {
        std::visit(
            [&](const auto& l) {
              // Names are checked identifiers and kinds plain words: the
              // label needs no escaping.
              indent();
              out_ += "wrapir_where = \"line "sv;
              append_count(out_, line_);
              out_ += " ("sv;
              out_ += l.kind;
              // A kernel's failures (its arguments' ranges) name it.
              if constexpr (std::is_same_v<std::decay_t<decltype(l)>, ir::KernelCall>)
                if (p_.contains(l.kernel)) {
                  out_ += " '"sv;
                  out_ += p_.kernels[l.kernel.index].name;
                  out_ += '\'';
                }
              out_ += ") of graph '"sv;
              out_ += p_.name;
              out_ += "'\";\n"sv;
              if constexpr (debug_wrapped<std::decay_t<decltype(l)>>) {
                if (t_.debug_level != 0) {
                  debug_call(l, "before_launch");
                  (*this)(l);
                  debug_call(l, "after_launch");
                  return;
                }
              }
              (*this)(l);
            },
            line);
      } catch (wrapir::detail::Failure& f) {
        fail(where(line) + ": " + f.diagnostic.message);
      } catch (const std::out_of_range&) {
        fail(where(line) + ": an id is out of range of the program's tables");
      } catch (const expr::Error& e) {
        fail(where(line) + ": " + e.what());
      }
    }
    if (depth_ != 0) fail("graph '" + p_.name + "': the body ends inside " + std::to_string(depth_) + " open scope(s)");
    write_outputs();
    out_ +=
        "  } catch (rt::Error& wrapir_error) {\n"
        "    wrapir_error.message = std::string(wrapir_where) + \": \" + wrapir_error.message;\n"
        "    throw;\n  }\n}\n\n";
  }

  // ---- memory --------------------------------------------------------------
  void operator()(const ir::Allocate& l) { allocate(l.buffer); }
  void operator()(const ir::FreeIfNotReused& l) {
    if (l.reused) {
      line("/* storage kept for the Reuse that takes it */");
      return;
    }
    release(l.buffer);
  }
  void operator()(const ir::Reuse& l) {
    const ir::BufferDecl& d = decl(l.new_buffer);
    std::string s = name(l.new_buffer) + " = rt::view_of(rt::live(" + name(l.old_buffer) + ", " +
                    string_literal(name(l.old_buffer)) + ").storage, ";
    append_layout(s, d);
    s += ");"sv;
    line(s);
    if (l.delete_old) release(l.old_buffer);
  }
  void operator()(const ir::Free& l) { release(l.buffer); }
  void operator()(const ir::Null&) { line("/* cancelled */"); }
  void operator()(const ir::PoolCreate& l) {
    const ir::PoolDecl& pool = p_.pool(l.pool);
    check_device(pool.device, "pool '" + pool.name + "'");
    // One device allocation per call for a CUDA pool (the planned arena).
    std::string s = pool.name + (pool.device.type == ir::DeviceType::cuda ? " = rt::cuda_allocate(" : " = rt::allocate(");
    append_expr(s, pool.size_bytes);
    s += ");"sv;
    line(s);
  }
  void operator()(const ir::AllocFromPool& l) {
    const ir::PoolDecl& pool = p_.pool(l.pool);
    const ir::BufferDecl& d = decl(l.buffer);
    std::string s = name(l.buffer) + " = rt::alloc_from_pool(" + pool.name + ", " + string_literal(pool.name) + ", ";
    append_expr(s, l.offset_bytes);
    s += ", "sv;
    append_layout(s, d);
    s += ");"sv;
    line(s);
  }
  void operator()(const ir::DeallocFromPool& l) {
    release(l.buffer);
    if (l.releases_pool) line(p_.pool(l.pool).name + ".reset();");
  }
  void operator()(const ir::CommBufferAllocate& l) { allocate(l.buffer); }
  void operator()(const ir::CommBufferFree& l) { release(l.buffer); }
  void operator()(const ir::WorkspaceAllocate& l) {
    allocate(l.workspace);
    if (l.zero_mode != ir::WorkspaceZeroMode::uninitialized) line("rt::zero_storage(" + name(l.workspace) + ");");
  }
  void operator()(const ir::WorkspaceFree& l) { release(l.workspace); }
  void operator()(const ir::DeviceCopy& l) {
    line("rt::copy_elements(" + tensor_of(l.destination) + ", " + tensor_of(l.source) + ");");
  }

  // ---- views ---------------------------------------------------------------
  void operator()(const ir::Reinterpret& l) {
    const ir::BufferDecl& d = decl(l.view);
    indent();
    out_ += d.name;
    out_ += " = rt::reinterpret("sv;
    out_ += name(l.base);
    out_ += ", "sv;
    append_layout(out_, d);
    out_ += ");\n"sv;
  }

  // ---- kernels -------------------------------------------------------------
  void operator()(const ir::KernelDefinition& l) {
    const ir::KernelLanguage language = kernel(l.kernel).language;
    if (in_cuda_table(language)) {
      line("/* kernel " + kernel(l.kernel).name + ": " +
           (language == ir::KernelLanguage::triton ? std::string("Triton")
                                                   : language == ir::KernelLanguage::ptx ? "PTX" : "cubin") +
           ", loaded on its first launch (wrapir_cuda_kernels[" + std::to_string(cuda_slot(l.kernel)) + "]) */");
      return;
    }
    if (language == ir::KernelLanguage::cuda) {
      line("/* kernel " + kernel(l.kernel).name + ": CUDA C++, " + t_.kernel_symbol(id_, kernel(l.kernel).name) +
           " in the unit's companion .cu */");
      return;
    }
    line("/* kernel " + kernel(l.kernel).name + ": defined above as " + t_.kernel_symbol(id_, kernel(l.kernel).name) +
         " */");
  }
  void operator()(const ir::KernelCall& l) {
    const ir::KernelDecl& k = kernel(l.kernel);
    if (in_cuda_table(k.language)) {
      if (k.language != ir::KernelLanguage::triton && ir::grid_if<ir::ExplicitGrid>(l.grid) == nullptr)
        fail("kernel '" + k.name + "' is " + (k.language == ir::KernelLanguage::ptx ? "a PTX" : "a cubin") +
             " kernel, launched over an explicit grid; the call gives the grid of a Triton launcher");
      triton_call(l, k);
      return;
    }
    if (k.language == ir::KernelLanguage::cuda) {
      cuda_cpp_call(l, k);
      return;
    }
    if (k.language != ir::KernelLanguage::cpp)
      fail("kernel '" + k.name + "' is written in " + std::string(ir::kernel_language_name(k.language)) +
           "; emit::cpp renders C++ and Triton kernels");
    if (defined_.count(l.kernel.index) == 0) fail("kernel '" + k.name + "' is called before its KernelDefinition");
    if (l.args.size() != k.signature.size())
      fail("kernel '" + k.name + "' takes " + std::to_string(k.signature.size()) + " arguments, the call passes " +
           std::to_string(l.args.size()));
    if (l.device.type != ir::DeviceType::cpu) fail("the call runs on " + ir::to_string(l.device) + ", not the CPU");
    indent();
    out_ += "rt::call_kernel(&"sv;
    out_ += t_.prefix;
    out_ += "_k"sv;
    append_count(out_, id_);
    out_ += '_';
    out_ += k.name;
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      out_ += ",\n"sv;
      out_.append(static_cast<std::size_t>(depth_ + 2) * 2 + 4, ' ');
      append_kernel_arg(out_, i, l.args[i], k.signature[i].type, k.name);
    }
    out_ += ");\n"sv;
  }
  void operator()(const ir::SymbolicCallArg& l) { line(bind_symbol(l.symbol, expr_text(l.value)) + ";"); }
  // A multi-kernel calls its first candidate: every candidate computes the
  // same values, and the emitted unit has no run-time autotuning (autotune
  // before emitting to choose another).
  void operator()(const ir::MultiKernelDefinition& l) {
    if (l.candidates.empty()) fail("the multi-kernel '" + kernel(l.kernel).name + "' has no candidates");
    const ir::KernelDecl& first = kernel(l.candidates[0]);
    const bool defined = in_cuda_table(first.language)
                             ? t_.cuda_slots.count({id_, l.candidates[0].index}) != 0
                             : defined_.count(l.candidates[0].index) != 0;
    if (!defined) fail("the multi-kernel's candidate '" + first.name + "' is not defined before it");
    multi_[l.kernel.index] = MultiChoice{l.candidates[0], l.arg_index.empty() ? std::vector<ir::ArgSlice>{} : l.arg_index[0]};
    line("/* multi-kernel " + kernel(l.kernel).name + ": calls its first candidate, " + first.name + " */");
  }
  void operator()(const ir::MultiKernelCall& l) {
    const auto it = multi_.find(l.kernel.index);
    if (it == multi_.end()) fail("multi-kernel '" + kernel(l.kernel).name + "' is called before its MultiKernelDefinition");
    ir::KernelCall call;
    call.kernel = it->second.candidate;
    call.device = l.device;
    call.stream = l.stream;
    if (it->second.slices.empty()) {
      call.args = l.args;
    } else {
      for (const ir::ArgSlice& slice : it->second.slices) {
        if (slice.start < 0 || slice.stop < slice.start || static_cast<std::size_t>(slice.stop) > l.args.size())
          fail("the argument slice [" + std::to_string(slice.start) + ", " + std::to_string(slice.stop) +
               ") of multi-kernel '" + kernel(l.kernel).name + "' is outside its " + std::to_string(l.args.size()) +
               " arguments");
        call.args.insert(call.args.end(), l.args.begin() + slice.start, l.args.begin() + slice.stop);
      }
    }
    (*this)(call);
  }

  // ---- extern kernels ------------------------------------------------------
  void operator()(const ir::ExternKernelAlloc& l) {
    const std::string call = extern_call(l.kernel.text, l.args, l.kwargs, {});
    if (!l.result) {
      line("(void)" + call + ";");
      return;
    }
    define_result(*l.result, call);
  }
  void operator()(const ir::ExternKernelOut& l) {
    indent();
    out_ += "(void)"sv;
    append_extern_call(out_, l.kernel.text, l.args, l.kwargs, {{"out"sv, &l.out}});
    out_ += ";\n"sv;
  }
  void operator()(const ir::ExternKernelMultiOut& l) {
    std::vector<std::pair<std::string_view, const ir::BufferArg*>> outs;
    for (const ir::NamedBuffer& o : l.outs) {
      check_name(o.name.text, "keyword");
      outs.emplace_back(o.name.text, &o.buffer);
    }
    const std::string call = extern_call(l.kernel.text, l.args, l.kwargs, outs);
    if (!l.result) {
      line("(void)" + call + ";");
      return;
    }
    define_result(*l.result, call);
  }
  void operator()(const ir::MultiOutput& l) {
    define_result(l.result, "rt::follow_path(" + value_of_buffer(l.source) + ", " + path_text(l.path) + ", " +
                                string_literal("the result of " + name(l.source)) + ")");
  }
  void operator()(const ir::ScatterFallback& l) {
    std::vector<ir::Arg> args{ir::Arg{ir::BufferArg{l.self, std::nullopt}}, ir::Arg{l.dim}, ir::Arg{l.index}, *l.src};
    line("(void)" + extern_call(l.kernel.text, args, l.kwargs, {}) + ";");
  }
  void operator()(const ir::IndexPutFallback& l) {
    std::string indices = "rt::Value::of_list({";
    for (std::size_t i = 0; i < l.indices.size(); ++i) {
      if (i) indices += ", ";
      indices += l.indices[i] ? "rt::Value::of(" + tensor_of(*l.indices[i]) + ")" : std::string("rt::Value{}");
    }
    indices += "})";
    const std::size_t index = t_.extern_index(l.kernel.text);
    line("(void)rt::call_extern(wrapir_ctx, " + std::to_string(index) + ", " + string_literal(l.kernel.text) +
         ", {rt::Value::of(" + tensor_of(ir::BufferArg{l.self, std::nullopt}) + "), " + indices + ", rt::Value::of(" +
         tensor_of(l.values) + "), rt::Value::of_bool(" + (l.accumulate ? "true" : "false") + ")}, {});");
  }
  void operator()(const ir::DynamicScalar& l) {
    const std::string what = "the scalar in " + name(l.source);
    line(bind_symbol(l.symbol, "rt::integer_of(rt::follow_path(rt::Value::of(" + live(l.source) + "), " +
                                   path_text(l.path) + ", " + string_literal(what) + "), " + string_literal(what) + ")") +
         ";");
  }
  void operator()(const ir::UnbackedSymbolDefs& l) {
    for (const ir::SymbolBinding& b : l.bindings) {
      if (!b.symbol || !b.symbol.is_symbol()) fail("a binding's symbol is not a symbol");
      const std::string what = "symbol '" + std::string(b.symbol.name()) + "' from " + name(l.source);
      line(bind_symbol(b.symbol, "rt::integer_of(rt::follow_path(" + value_of_buffer(l.source) + ", " +
                                     path_text(b.path) + ", " + string_literal(what) + "), " + string_literal(what) +
                                     ")") +
           ";");
    }
  }
  void operator()(const ir::AssertSizeStride& l) {
    std::string s = "rt::check_layout(" + name(l.buffer) + ", ";
    append_expr_list(s, l.sizes);
    s += ", "sv;
    append_expr_list(s, l.strides);
    s += ", " + string_literal(name(l.buffer) + (l.op_name ? " (the result of " + *l.op_name + ")" : std::string{})) +
         ");";
    line(s);
  }
  void operator()(const ir::AssertAlignment& l) {
    std::string s = "rt::check_alignment(" + name(l.buffer) + ", ";
    append_int(s, l.alignment);
    s += ", " + string_literal(name(l.buffer)) + ", " + string_literal(l.op_name.value_or("")) + ");";
    line(s);
  }
  void operator()(const ir::AssertScalar& l) {
    line("if (" + expr_text(l.condition) + " == 0) rt::fail(" + string_literal("runtime assert failed: " + l.message) +
         ");");
  }

  // ---- control -------------------------------------------------------------
  void operator()(const ir::EnterSubgraph& l) {
    line("{  // subgraph " + std::to_string(l.graph.index));
    ++depth_;
  }
  void operator()(const ir::ExitSubgraph&) { close_scope(); }
  void operator()(const ir::Conditional& l) {
    const std::string t = graph_function(p_.subgraph(l.true_graph));
    const std::string f = graph_function(p_.subgraph(l.false_graph));
    line("{");
    ++depth_;
    line("const bool wrapir_taken = rt::truth_of(" + value_of(l.predicate) + ", \"the predicate\");");
    line("const std::vector<rt::Value> wrapir_results = wrapir_taken ? " + t + "(wrapir_ctx, " + values_of(l.operands) +
         ") : " + f + "(wrapir_ctx, " + values_of(l.operands) + ");");
    bind_outputs(l.outputs, "wrapir_results", "the branch");
    close_scope();
  }
  void operator()(const ir::WhileLoop& l) {
    const std::string cond = graph_function(p_.subgraph(l.cond_graph));
    const std::string body = graph_function(p_.subgraph(l.body_graph));
    line("{");
    ++depth_;
    line("std::vector<rt::Value> wrapir_carried = " + values_of(l.carried) + ";");
    line("const std::vector<rt::Value> wrapir_additional = " + values_of(l.additional) + ";");
    line("for (std::size_t wrapir_iteration = 0;; ++wrapir_iteration) {");
    ++depth_;
    line("std::vector<rt::Value> wrapir_in = wrapir_carried;");
    line("wrapir_in.insert(wrapir_in.end(), wrapir_additional.begin(), wrapir_additional.end());");
    line("const std::vector<rt::Value> wrapir_test = " + cond + "(wrapir_ctx, wrapir_in);");
    line("if (wrapir_test.size() != 1) rt::fail(\"the loop condition returned \" + std::to_string(wrapir_test.size()) + "
         "\" values, not one\");");
    line("if (!rt::truth_of(wrapir_test[0], \"the loop condition\")) break;");
    line("if (wrapir_iteration >= " + std::to_string(t_.max_loop_iterations) +
         "u) rt::fail(\"the loop ran " + std::to_string(t_.max_loop_iterations) +
         " iterations, the emitted limit (CppOptions::max_loop_iterations)\");");
    line("std::vector<rt::Value> wrapir_next = " + body + "(wrapir_ctx, wrapir_in);");
    line("if (wrapir_next.size() != wrapir_carried.size()) rt::fail(\"the loop body returned \" + "
         "std::to_string(wrapir_next.size()) + \" values for \" + std::to_string(wrapir_carried.size()) + \" carried "
         "ones\");");
    line("wrapir_carried = std::move(wrapir_next);");
    close_scope();
    bind_outputs(l.outputs, "wrapir_carried", "the loop");
    close_scope();
  }
  void operator()(const ir::EnterDeviceContext& l) {
    check_device(l.device, "the device context");
    line("{  // device " + ir::to_string(l.device) + (l.device.type == ir::DeviceType::cuda ? " (the run's stream's)" : ""));
    ++depth_;
  }
  void operator()(const ir::ExitDeviceContext&) { close_scope(); }
  void operator()(const ir::EnterStreamContext& l) {
    line("{  // stream " + std::to_string(l.stream) + " (programs run on one stream: the CPU's, or the run's)");
    ++depth_;
  }
  void operator()(const ir::ExitStreamContext&) { close_scope(); }
  void operator()(const ir::GetRawStream&) { line("/* GetRawStream: programs run on one stream */"); }

  // ---- misc ----------------------------------------------------------------
  void operator()(const ir::Comment& l) {
    std::string s;
    append_comment(s, l.text);
    line(s);
  }

  /// Kernels defined in this graph (so callable), by table index.
  void mark_defined(std::uint32_t kernel_index) { defined_.insert(kernel_index); }

 private:
  [[nodiscard]] std::string where(const ir::Line& l) const {
    return "line " + std::to_string(line_) + " (" + std::string(ir::kind_name(l)) + ") of graph '" + p_.name + "'";
  }

  void check_device(const ir::Device& d, const std::string& what) const {
    if (d.type != ir::DeviceType::cpu && d.type != ir::DeviceType::cuda)
      fail(what + " is on " + ir::to_string(d) + "; emit::cpp renders CPU and CUDA programs only");
  }

  [[nodiscard]] std::size_t cuda_slot(ir::KernelId k) const {
    const auto it = t_.cuda_slots.find({id_, k.index});
    if (it == t_.cuda_slots.end()) fail("kernel '" + kernel(k).name + "' is called before its KernelDefinition");
    return it->second;
  }

  /// The C++ type of a Triton scalar parameter.
  [[nodiscard]] static const char* scalar_type(ir::DType t) { return launch_scalar_type(t); }

  /// The grid of a Triton call as three expressions: the launcher's grid
  /// type and block sizes over the call's numel arguments (as the
  /// executor's run::compute_grid_dims), a typed grid, or an explicit one.
  [[nodiscard]] run::GridExprs triton_grid(const ir::KernelCall& l, const ir::KernelDecl& k,
                                           const CudaKernelLaunch& launch) const {
    if (const auto* e = ir::grid_if<ir::ExplicitGrid>(l.grid)) {
      Result<run::GridExprs> g = run::grid_exprs(*e);
      if (!g) fail("kernel '" + k.name + "': " + g.error().message);
      return *g;
    }
    Result<run::GridExprs> g = Diagnostic{""};
    if (const auto* typed = ir::grid_if<ir::TypedGrid>(l.grid)) {
      g = run::grid_exprs(p_.ctx(), *typed);
    } else {
      std::vector<ir::NamedExpr> numels;
      for (std::size_t i = 0; i < k.signature.size(); ++i) {
        const ir::KernelParam& param = k.signature[i];
        if (param.name.find("numel") == std::string::npos) continue;
        if (param.type.pointer || (param.type.dtype != ir::DType::int32 && param.type.dtype != ir::DType::int64))
          fail("kernel '" + k.name + "': the numel parameter '" + param.name + "' is " + ir::to_string(param.type) +
               ", not i32 or i64");
        expr::Expr value;
        if (const expr::Expr* e = l.args[i].get_if<expr::Expr>()) value = *e;
        else if (const std::int64_t* n = l.args[i].get_if<std::int64_t>()) value = p_.ctx().integer(*n);
        else fail("kernel '" + k.name + "': the numel argument '" + param.name + "' is not an integer");
        numels.push_back(ir::NamedExpr{ir::Name{param.name}, value});
      }
      std::vector<ir::BlockSize> block;
      for (const auto& [n, v] : launch.constants) block.push_back(ir::BlockSize{ir::Name{n}, v});
      g = run::grid_exprs(p_.ctx(), launch.grid_type, numels, block);
    }
    if (!g) fail("kernel '" + k.name + "': " + g.error().message);
    return *g;
  }

  /// The text `x, y, z` of a launcher grid for slot `slot` over the call's
  /// numel arguments, built once per distinct (kernel, numels): a long
  /// program launches a few kernels over a few sizes many times.
  const std::string& grid_text(const ir::KernelCall& l, const ir::KernelDecl& k, std::size_t slot) {
    GridKey key{slot, {}};
    const bool launcher = boost::variant2::holds_alternative<ir::LauncherGrid>(l.grid);
    if (launcher) {
      for (std::size_t i = 0; i < k.signature.size() && i < l.args.size(); ++i)
        if (k.signature[i].name.find("numel") != std::string::npos) {
          if (const expr::Expr* e = l.args[i].get_if<expr::Expr>()) key.numels.push_back(*e);
          else if (const std::int64_t* n = l.args[i].get_if<std::int64_t>()) key.numels.push_back(p_.ctx().integer(*n));
          else key.numels.push_back(expr::Expr{});  // refused by triton_grid below
        }
      const auto it = grids_.find(key);
      if (it != grids_.end()) return it->second;
    }
    const run::GridExprs grid = triton_grid(l, k, *t_.cuda_table[slot]);
    std::string text;
    append_expr(text, grid.x);
    text += ", "sv;
    append_expr(text, grid.y);
    text += ", "sv;
    append_expr(text, grid.z);
    if (!launcher) {
      scratch_grid_ = std::move(text);
      return scratch_grid_;
    }
    return grids_.emplace(std::move(key), std::move(text)).first->second;
  }

  /// A Triton launch: the arguments as locals of their parameter types
  /// (launch constants left out), the grid, and rt::launch_triton, which
  /// returns early on an empty grid and appends the scratch pointers.
  void triton_call(const ir::KernelCall& l, const ir::KernelDecl& k) {
    const std::size_t slot = cuda_slot(l.kernel);
    const CudaKernelLaunch& launch = *t_.cuda_table[slot];
    if (l.args.size() != k.signature.size())
      fail("kernel '" + k.name + "' takes " + std::to_string(k.signature.size()) + " arguments, the call passes " +
           std::to_string(l.args.size()));
    if (l.device.type != ir::DeviceType::cuda)
      fail("the " + std::string(ir::kernel_language_name(k.language)) + " call runs on " + ir::to_string(l.device) +
           ", not CUDA");
    auto dropped = [&](std::size_t i) {
      if (launch.launch_constants.empty()) return false;
      for (const auto& [n, v] : launch.launch_constants)
        if (k.signature[i].name == n) return true;
      return false;
    };
    for (const auto& [n, v] : launch.launch_constants) {
      std::size_t i = 0;
      while (i < k.signature.size() && k.signature[i].name != n) ++i;
      if (i == k.signature.size())
        fail("kernel '" + k.name + "': the launch constant '" + n + "' is no parameter of its signature");
    }
    const std::string& grid = grid_text(l, k, slot);
    line("{");
    ++depth_;
    const std::size_t passed = launch_arg_locals(l, k, dropped);
    if (passed > 254) fail("kernel '" + k.name + "': " + std::to_string(passed) + " launch arguments, more than 254");
    indent();
    out_ += "void* wrapir_args[] = {"sv;
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      if (!launch.launch_constants.empty() && dropped(i)) continue;
      out_ += "&wrapir_a"sv;
      append_count(out_, i);
      out_ += ", "sv;
    }
    out_ += "nullptr, nullptr};\n"sv;
    indent();
    out_ += "rt::launch_triton(wrapir_cuda_kernels["sv;
    append_count(out_, slot);
    out_ += "], wrapir_cuda_set, "sv;
    out_ += grid;
    out_ += ", wrapir_args, "sv;
    append_count(out_, passed);
    out_ += ");\n"sv;
    close_scope();
  }

  /// A CUDA C++ kernel (Inductor's CUDA templates): a host function in the
  /// companion .cu that launches its device code itself on the stream it
  /// is given last, and returns 0 on success.
  void cuda_cpp_call(const ir::KernelCall& l, const ir::KernelDecl& k) {
    if (l.args.size() != k.signature.size())
      fail("kernel '" + k.name + "' takes " + std::to_string(k.signature.size()) + " arguments, the call passes " +
           std::to_string(l.args.size()));
    if (l.device.type != ir::DeviceType::cuda) fail("the CUDA C++ call runs on " + ir::to_string(l.device) + ", not CUDA");
    if (!boost::variant2::holds_alternative<ir::LauncherGrid>(l.grid))
      fail("kernel '" + k.name + "' is a CUDA C++ kernel, which launches its device code itself; the call gives a grid");
    if (t_.cuda_sources.count({id_, l.kernel.index}) == 0)
      fail("kernel '" + k.name + "' is called before its KernelDefinition");
    line("{");
    ++depth_;
    launch_arg_locals(l, k, [](std::size_t) { return false; });
    indent();
    out_ += "rt::check_cuda_cpp_kernel("sv;
    out_ += t_.kernel_symbol(id_, k.name);
    out_ += '(';
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      out_ += "wrapir_a"sv;
      append_count(out_, i);
      out_ += ", "sv;
    }
    out_ += "rt::cuda_stream()), \""sv;
    out_ += k.name;  // a checked identifier
    out_ += "\");\n"sv;
    close_scope();
  }

  /// One local per launch argument (`wrapir_a<i>`, of the parameter's
  /// type: device pointers as void*), the dropped ones left out; returns
  /// how many there are.
  template <class Dropped>
  std::size_t launch_arg_locals(const ir::KernelCall& l, const ir::KernelDecl& k, const Dropped& dropped) {
    std::size_t passed = 0;
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      if (dropped(i)) continue;
      ++passed;
      const ir::ParamType type = k.signature[i].type;
      auto what = [&] { return "kernel '" + k.name + "' argument " + std::to_string(i); };
      indent();
      if (const ir::BufferArg* b = l.args[i].get_if<ir::BufferArg>()) {
        if (!type.pointer) fail(what() + " is a buffer but the parameter is a scalar " + ir::to_string(type));
        const ir::BufferDecl& d = decl(b->buffer);
        if (d.layout.dtype != type.dtype)
          fail(what() + " is '" + d.name + "' of " + std::string(ir::name(d.layout.dtype)) + " but the parameter is " +
               ir::to_string(type));
        out_ += "void* wrapir_a"sv;
        append_count(out_, i);
        out_ += " = rt::device_pointer("sv;
        if (b->view) append_tensor_of(out_, *b);
        else out_ += d.name;
        out_ += ", \""sv;
        out_ += d.name;  // a checked identifier: no escaping needed
        out_ += "\");\n"sv;
        continue;
      }
      if (type.pointer) {
        if (!l.args[i].holds<ir::None>())
          fail(what() + " is a " + std::string(ir::arg_kind_name(l.args[i])) + " but the parameter is a pointer " +
               ir::to_string(type));
        out_ += "void* wrapir_a"sv;
        append_count(out_, i);
        out_ += " = nullptr;\n"sv;
        continue;
      }
      const char* c_type = scalar_type(type.dtype);
      if (c_type == nullptr) fail(what() + ": a scalar parameter of type " + ir::to_string(type) + " is not supported");
      const bool floating = type.dtype == ir::DType::float32 || type.dtype == ir::DType::float64;
      out_ += c_type;
      out_ += " wrapir_a"sv;
      append_count(out_, i);
      out_ += " = rt::to_param<"sv;
      out_ += c_type;
      out_ += ">("sv;
      if (const expr::Expr* e = l.args[i].get_if<expr::Expr>()) {
        out_ += "rt::IntArg{"sv;
        append_expr(out_, *e);
        out_ += '}';
      } else if (const std::int64_t* n = l.args[i].get_if<std::int64_t>()) {
        out_ += "rt::IntArg{"sv;
        append_int(out_, *n);
        out_ += '}';
      } else if (const bool* x = l.args[i].get_if<bool>()) {
        out_ += *x ? "rt::IntArg{1}"sv : "rt::IntArg{0}"sv;
      } else if (const double* v = l.args[i].get_if<double>()) {
        if (!floating) fail(what() + " is a float but the parameter is " + ir::to_string(type));
        out_ += "rt::RealArg{"sv;
        append_double(out_, *v);
        out_ += '}';
      } else {
        fail(what() + " is a " + std::string(ir::arg_kind_name(l.args[i])) + ", which a CUDA kernel cannot take");
      }
      out_ += ", "sv;
      append_count(out_, i);
      out_ += ");\n"sv;
    }
    return passed;
  }

  void indent() { out_.append(static_cast<std::size_t>(depth_ + 2) * 2, ' '); }
  void line(const std::string& s) {
    indent();
    out_ += s;
    out_ += '\n';
  }
  void close_scope() {
    if (depth_ == 0) fail("closes no open scope");
    --depth_;
    line("}");
  }

  [[nodiscard]] const ir::BufferDecl& decl(ir::BufferId b) const {
    if (!p_.contains(b)) fail("buffer #" + std::to_string(b.index) + " is out of range");
    return p_.buffers[b.index];
  }
  [[nodiscard]] const std::string& name(ir::BufferId b) const { return decl(b).name; }
  [[nodiscard]] const ir::KernelDecl& kernel(ir::KernelId k) const {
    if (!p_.contains(k)) fail("kernel #" + std::to_string(k.index) + " is out of range");
    return p_.kernels[k.index];
  }
  [[nodiscard]] std::string live(ir::BufferId b) const {
    return "rt::live(" + name(b) + ", " + string_literal(name(b)) + ")";
  }

  void check_name(const std::string& n, const char* what) const {
    if (!ir::is_valid_name(n)) fail(std::string(what) + " " + ir::quote_for_diagnostic(n) + " is not a valid identifier");
  }

  /// Buffers, symbols and pools are locals of one function: their names
  /// must be identifiers, distinct, and not the emitter's own (`wrapir*`).
  void check_names() {
    if (!ir::is_valid_name(p_.name)) fail("the graph name " + ir::quote_for_diagnostic(p_.name) + " is not a valid identifier");
    // Each name becomes an 8-byte key (its hash's top half, its number + 1);
    // the keys are partitioned by their top bits and each part checked
    // with an open-addressing table small enough to stay in cache. A hash
    // set of strings spent 45 % of the time allocating, a sorted vector of
    // views 5 % sorting, one table of a million names 8 % missing the cache.
    const std::size_t count = p_.buffers.size() + p_.symbols.size() + p_.pools.size();
    if (count >= std::numeric_limits<std::uint32_t>::max()) fail("graph '" + p_.name + "' has too many names");
    std::vector<std::uint64_t> keys;
    keys.reserve(count);
    auto add = [&](std::string_view n, const char* what) {
      if (!ir::is_valid_name(n)) fail(std::string(what) + " " + ir::quote_for_diagnostic(n) + " is not a valid identifier");
      if (is_reserved(n))
        fail("graph '" + p_.name + "': " + what + " '" + std::string(n) +
             "' starts with 'wrapir', which emit::cpp keeps for its own names");
      keys.push_back((std::hash<std::string_view>{}(n) & 0xffffffff00000000u) | (keys.size() + 1));
    };
    for (const ir::BufferDecl& b : p_.buffers) {
      add(b.name, "buffer");
      if (b.layout.device.type != ir::DeviceType::cpu && b.layout.device.type != ir::DeviceType::cuda)
        fail("graph '" + p_.name + "': buffer '" + b.name + "' is on " + ir::to_string(b.layout.device) +
             "; emit::cpp renders CPU and CUDA programs only");
      if (b.role == ir::BufferRole::constant)
        fail("graph '" + p_.name + "': buffer '" + b.name + "' is a constant, which emit::cpp does not support yet");
    }
    for (const ir::SymbolDecl& s : p_.symbols) {
      if (!s.symbol || !s.symbol.is_symbol()) fail("graph '" + p_.name + "': a symbol table entry is not a symbol");
      add(s.symbol.name(), "symbol");
    }
    for (const ir::PoolDecl& pool : p_.pools) add(pool.name, "pool");
    for (const ir::KernelDecl& k : p_.kernels) check_name(k.name, "kernel");
    check_distinct(keys);
  }

  /// Fails naming a name that two keys of check_names share.
  void check_distinct(const std::vector<std::uint64_t>& keys) const {
    auto name_at = [&](std::uint64_t key) -> std::string_view {
      std::size_t i = static_cast<std::size_t>(key & 0xffffffffu) - 1;
      if (i < p_.buffers.size()) return p_.buffers[i].name;
      i -= p_.buffers.size();
      if (i < p_.symbols.size()) return p_.symbols[i].symbol.name();
      return p_.pools[i - p_.symbols.size()].name;
    };
    int bits = 0;
    while ((keys.size() >> bits) > 1024 && bits < 16) ++bits;
    auto part = [bits](std::uint64_t key) { return bits == 0 ? std::size_t{0} : static_cast<std::size_t>(key >> (64 - bits)); };
    std::vector<std::size_t> starts((std::size_t{1} << bits) + 1, 0);
    for (const std::uint64_t k : keys) ++starts[part(k) + 1];
    for (std::size_t i = 1; i < starts.size(); ++i) starts[i] += starts[i - 1];
    std::vector<std::uint64_t> parted(keys.size());
    {
      std::vector<std::size_t> at(starts.begin(), starts.end() - 1);
      for (const std::uint64_t k : keys) parted[at[part(k)]++] = k;
    }
    std::vector<std::uint64_t> table;
    for (std::size_t p = 0; p + 1 < starts.size(); ++p) {
      std::size_t slots = 4;
      while (slots < 2 * (starts[p + 1] - starts[p])) slots *= 2;
      table.assign(slots, 0);  // 0: a free slot (numbers count from 1)
      for (std::size_t i = starts[p]; i < starts[p + 1]; ++i) {
        const std::uint64_t k = parted[i];
        for (std::size_t at = static_cast<std::size_t>(k >> 32) & (slots - 1);; at = (at + 1) & (slots - 1)) {
          if (table[at] == 0) {
            table[at] = k;
            break;
          }
          if ((table[at] >> 32) == (k >> 32) && name_at(table[at]) == name_at(k))
            fail("graph '" + p_.name + "': the name '" + std::string(name_at(k)) +
                 "' is used twice (buffers, symbols and pools share one C++ scope)");
        }
      }
    }
  }

  void declare_locals() {
    // In place: one temporary string per buffer was a tenth of the time.
    for (const ir::BufferDecl& b : p_.buffers) {
      out_ += b.multi_output ? "    rt::Value "sv : "    rt::Tensor "sv;
      out_ += b.name;
      out_ += ";\n"sv;
    }
    for (const ir::PoolDecl& pool : p_.pools) {
      out_ += "    std::shared_ptr<rt::Storage> "sv;
      out_ += pool.name;
      out_ += ";\n"sv;
    }
    for (const ir::SymbolDecl& s : p_.symbols) {
      const std::string_view n = s.symbol.name();
      out_ += "    std::int64_t "sv;
      out_ += n;
      out_ += " = 0;\n    (void)"sv;
      out_ += n;
      out_ += ";\n"sv;
    }
  }

  static int assumption_code(expr::Expr s) {
    switch (s.assumption()) {
      case expr::Assumption::positive: return 0;
      case expr::Assumption::nonnegative: return 1;
      case expr::Assumption::integer: return 2;
    }
    return 2;
  }
  /// `s = rt::bind_symbol("s", value, assumption[, code])`: checked
  /// against the symbol's assumption; `code` is the error code of a breach.
  [[nodiscard]] std::string bind_symbol(expr::Expr s, const std::string& value, const char* code = nullptr) const {
    if (!s || !s.is_symbol()) fail("a symbol definition defines something that is not a symbol");
    const std::string n(s.name());
    if (p_.find_symbol(s) == nullptr) fail("symbol '" + n + "' is not declared in the graph's symbol table");
    return n + " = rt::bind_symbol(" + string_literal(n) + ", " + value + ", " + std::to_string(assumption_code(s)) +
           (code != nullptr ? std::string(", ") + code : std::string()) + ")";
  }
  [[nodiscard]] static std::string expr_text(expr::Expr e) {
    std::string s;
    append_expr(s, e);
    return s;
  }

  /// `{sizes}, {strides}, offset, DTYPE`: the arguments of a layout.
  void append_layout(std::string& s, const ir::BufferDecl& d) const {
    if (d.layout.sizes.size() != d.layout.strides.size())
      fail("buffer '" + d.name + "' has " + std::to_string(d.layout.sizes.size()) + " sizes but " +
           std::to_string(d.layout.strides.size()) + " strides");
    append_expr_list(s, d.layout.sizes);
    s += ", "sv;
    append_expr_list(s, d.layout.strides);
    s += ", "sv;
    append_expr(s, d.layout.storage_offset);
    s += ", "sv;
    append_dtype(s, d.layout.dtype);
  }

  void allocate(ir::BufferId b) {
    const ir::BufferDecl& d = decl(b);
    if (d.multi_output) fail("buffer '" + d.name + "' holds a multi-output result and cannot be allocated");
    indent();
    out_ += d.name;
    out_ += d.layout.device.type == ir::DeviceType::cuda ? " = rt::cuda_empty_strided("sv : " = rt::empty_strided("sv;
    append_layout(out_, d);
    out_ += ");\n"sv;
  }
  void release(ir::BufferId b) {
    const ir::BufferDecl& d = decl(b);
    indent();
    out_ += d.name;
    out_ += d.multi_output ? " = rt::Value{};\n" : " = rt::Tensor{};\n";
  }

  /// The tensor a buffer argument denotes: the buffer, or a bounds-checked
  /// view of its storage (the offset counts the buffer's dtype from the
  /// storage's start).
  [[nodiscard]] std::string tensor_of(const ir::BufferArg& a) const {
    std::string s;
    append_tensor_of(s, a);
    return s;
  }
  void append_live(std::string& s, const std::string& n) const {
    s += "rt::live("sv;
    s += n;
    s += ", \""sv;
    s += n;  // a checked identifier: no escaping needed
    s += "\")"sv;
  }
  void append_tensor_of(std::string& s, const ir::BufferArg& a) const {
    const ir::BufferDecl& d = decl(a.buffer);
    if (d.multi_output) fail("buffer '" + d.name + "' holds a multi-output result, not a tensor");
    if (!a.view) {
      append_live(s, d.name);
      return;
    }
    const ir::View& v = *a.view;
    if (v.sizes.size() != v.strides.size()) fail("a view of '" + d.name + "' has sizes and strides of different lengths");
    s += "rt::view_of("sv;
    append_live(s, d.name);
    s += ".storage, "sv;
    append_expr_list(s, v.sizes);
    s += ", "sv;
    append_expr_list(s, v.strides);
    s += ", "sv;
    append_expr(s, v.offset);
    s += ", "sv;
    append_dtype(s, d.layout.dtype);
    s += ")"sv;
  }
  [[nodiscard]] std::string value_of_buffer(ir::BufferId b) const {
    const ir::BufferDecl& d = decl(b);
    return d.multi_output ? name(b) : "rt::Value::of(" + live(b) + ")";
  }

  void append_kernel_arg(std::string& s, std::size_t i, const ir::Arg& a, ir::ParamType type, const std::string& k) const {
    // Built only for a diagnostic: a string per argument is an allocation
    // per argument of every launch.
    auto what = [&] { return "kernel '" + k + "' argument " + std::to_string(i); };
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) {
      if (!type.pointer) fail(what() + " is a buffer but the parameter is a scalar " + ir::to_string(type));
      const ir::BufferDecl& d = decl(b->buffer);
      if (d.layout.dtype != type.dtype)
        fail(what() + " is '" + d.name + "' of " + std::string(ir::name(d.layout.dtype)) + " but the parameter is " +
             ir::to_string(type));
      s += "rt::ptr<"sv;
      append_count(s, static_cast<std::size_t>(ir::itemsize(type.dtype)));
      s += ">("sv;
      if (b->view) append_tensor_of(s, *b);
      else s += d.name;  // rt::ptr checks that it is live
      s += ", \""sv;
      s += d.name;
      s += "\")"sv;
      return;
    }
    if (type.pointer) {
      if (a.holds<ir::None>()) {
        s += "rt::PtrArg<" + std::to_string(ir::itemsize(type.dtype)) + ">{nullptr}";
        return;
      }
      fail(what() + " is a " + std::string(ir::arg_kind_name(a)) + " but the parameter is a pointer " + ir::to_string(type));
    }
    const bool floating = type.dtype == ir::DType::float32 || type.dtype == ir::DType::float64;
    if (const expr::Expr* e = a.get_if<expr::Expr>()) {
      s += "rt::IntArg{"sv;
      append_expr(s, *e);
      s += "}"sv;
    } else if (const std::int64_t* n = a.get_if<std::int64_t>()) {
      s += "rt::IntArg{"sv;
      append_int(s, *n);
      s += "}"sv;
    } else if (const bool* x = a.get_if<bool>()) {
      s += *x ? "rt::IntArg{1}" : "rt::IntArg{0}";
    } else if (const double* d = a.get_if<double>()) {
      if (!floating) fail(what() + " is a float but the parameter is " + ir::to_string(type));
      s += "rt::RealArg{"sv;
      append_double(s, *d);
      s += "}"sv;
    } else {
      fail(what() + " is a " + std::string(ir::arg_kind_name(a)) + ", which a CPU kernel cannot take");
    }
  }

  /// An argument as an `rt::Value` expression.
  [[nodiscard]] std::string value_of(const ir::Arg& a) const {
    std::string s;
    append_value_of(s, a);
    return s;
  }
  void append_value_of(std::string& s, const ir::Arg& a) const {
    if (a.holds<ir::None>()) {
      s += "rt::Value{}"sv;
      return;
    }
    if (const ir::BufferArg* b = a.get_if<ir::BufferArg>()) {
      if (!b->view && decl(b->buffer).multi_output) {
        s += name(b->buffer);
        return;
      }
      s += "rt::Value::of("sv;
      append_tensor_of(s, *b);
      s += ')';
      return;
    }
    if (const expr::Expr* e = a.get_if<expr::Expr>()) {
      s += "rt::Value::of_int("sv;
      append_expr(s, *e);
    } else if (const std::int64_t* n = a.get_if<std::int64_t>()) {
      s += "rt::Value::of_int("sv;
      append_int(s, *n);
    } else if (const double* d = a.get_if<double>()) {
      s += "rt::Value::of_real("sv;
      append_double(s, *d);
    } else if (const bool* x = a.get_if<bool>()) {
      s += *x ? "rt::Value::of_bool(true"sv : "rt::Value::of_bool(false"sv;
    } else if (const std::string* str = a.get_if<std::string>()) {
      s += "rt::Value::of_string("sv;
      append_string_literal(s, *str);
    } else if (const ir::Device* dev = a.get_if<ir::Device>()) {
      if (dev->type != ir::DeviceType::cpu && dev->type != ir::DeviceType::cuda)
        fail("device " + ir::to_string(*dev) + " has no number in the C ABI");
      s += dev->type == ir::DeviceType::cpu ? "rt::Value::of_device(WRAPIR_DEVICE_CPU, "sv
                                            : "rt::Value::of_device(WRAPIR_DEVICE_CUDA, "sv;
      s += std::to_string(dev->index.value_or(-1));
    } else if (const ir::DType* dt = a.get_if<ir::DType>()) {
      s += "rt::Value::of_dtype("sv;
      append_dtype(s, *dt);
    } else {
      s += "rt::Value::of_list("sv;
      append_values_of(s, a.get_if<ir::ArgList>()->items);
    }
    s += ')';
  }
  [[nodiscard]] std::string values_of(const std::vector<ir::Arg>& args) const {
    std::string s;
    append_values_of(s, args);
    return s;
  }
  void append_values_of(std::string& s, const std::vector<ir::Arg>& args) const {
    s += "std::vector<rt::Value>{"sv;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) s += ", "sv;
      append_value_of(s, args[i]);
    }
    s += '}';
  }

  /// `rt::call_extern(...)`, written in place: an extern line was a dozen
  /// temporary strings.
  void append_extern_call(std::string& s, const std::string& op, const std::vector<ir::Arg>& args,
                          const std::vector<ir::NamedArg>& kwargs,
                          const std::vector<std::pair<std::string_view, const ir::BufferArg*>>& out_tensors) {
    if (op.empty()) fail("the extern has no name");
    const std::size_t index = t_.extern_index(op);
    s += "rt::call_extern(wrapir_ctx, "sv;
    append_count(s, index);
    s += ", "sv;
    append_string_literal(s, op);
    s += ", "sv;
    append_values_of(s, args);
    s += ", {"sv;
    bool first = true;
    for (const ir::NamedArg& k : kwargs) {
      check_name(k.name.text, "keyword");
      s += first ? "{"sv : ", {"sv;
      append_string_literal(s, k.name.text);
      s += ", "sv;
      append_value_of(s, k.value);
      s += '}';
      first = false;
    }
    for (const auto& [n, tensor] : out_tensors) {
      s += first ? "{"sv : ", {"sv;
      append_string_literal(s, n);
      s += ", rt::Value::of("sv;
      append_tensor_of(s, *tensor);
      s += ")}"sv;
      first = false;
    }
    s += "})"sv;
  }
  [[nodiscard]] std::string extern_call(const std::string& op, const std::vector<ir::Arg>& args,
                                        const std::vector<ir::NamedArg>& kwargs,
                                        const std::vector<std::pair<std::string_view, const ir::BufferArg*>>& out_tensors) {
    std::string s;
    append_extern_call(s, op, args, kwargs, out_tensors);
    return s;
  }

  /// `buf = result` for a tensor buffer (dtype and sizes checked) or a
  /// multi-output one (any value).
  void define_result(ir::BufferId b, const std::string& value) {
    const ir::BufferDecl& d = decl(b);
    if (d.multi_output) {
      line(d.name + " = " + value + ";");
      return;
    }
    std::string s = d.name + " = rt::tensor_result(" + value + ", ";
    append_dtype(s, d.layout.dtype);
    s += ", "sv;
    append_expr_list(s, d.layout.sizes);
    s += ", " + string_literal(d.name) + ");";
    line(s);
  }
  void bind_outputs(const std::vector<ir::BufferId>& outputs, const char* results, const char* who) {
    line(std::string("if (") + results + ".size() != " + std::to_string(outputs.size()) + "u) rt::fail(std::string(\"" +
         who + " returned \") + std::to_string(" + results + ".size()) + \" values for " +
         std::to_string(outputs.size()) + " outputs\");");
    for (std::size_t i = 0; i < outputs.size(); ++i)
      define_result(outputs[i], std::string(results) + "[" + std::to_string(i) + "]");
  }

  [[nodiscard]] std::string path_text(const ir::KeyPath& path) const {
    std::string s = "{";
    for (std::size_t i = 0; i < path.size(); ++i) {
      const ir::KeyStep& step = path[i];
      if (step.kind == ir::KeyStepKind::key) fail("key path step " + std::to_string(i) + " is a dict key, which emit::cpp does not support");
      s += (i ? ", " : "") + std::string("rt::Step{") + std::to_string(static_cast<int>(step.kind)) + ", ";
      append_int(s, step.value);
      s += "}"sv;
    }
    return s + "}";
  }

  [[nodiscard]] std::string graph_function(const ir::Program& g) const {
    const auto it = t_.graph_ids.find(&g);
    if (it == t_.graph_ids.end()) fail("a subgraph was not numbered");
    return "wrapir_graph_" + std::to_string(it->second);
  }

  void bind_inputs() {
    const bool top = id_ == 0;
    const char* code = top ? "WRAPIR_ERROR_INVALID_ARGUMENT" : "WRAPIR_ERROR_RUNTIME";
    out_ += "    if (wrapir_inputs.size() != " + std::to_string(p_.inputs.size()) +
            "u) rt::fail(\"the graph takes " + std::to_string(p_.inputs.size()) +
            " inputs, got \" + std::to_string(wrapir_inputs.size()), " + code + ");\n";
    std::unordered_map<std::uint32_t, std::size_t> position;
    for (std::size_t i = 0; i < p_.inputs.size(); ++i) {
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&p_.inputs[i])) {
        const ir::BufferDecl& d = decl(*b);
        if (d.multi_output) fail("input '" + d.name + "' is a multi-output buffer");
        position[b->index] = i;
        out_ += "    " + d.name + " = rt::input_tensor(wrapir_inputs, " + std::to_string(i) + ", ";
        append_dtype(out_, d.layout.dtype);
        out_ += ", " + std::to_string(d.layout.sizes.size()) +
                (d.layout.device.type == ir::DeviceType::cuda ? ", WRAPIR_DEVICE_CUDA, " : ", WRAPIR_DEVICE_CPU, ") +
                string_literal(d.name) + ", " + code + ");\n";
      } else {
        const expr::Expr s = boost::variant2::get<expr::Expr>(p_.inputs[i]);
        if (!s || !s.is_symbol()) fail("input " + std::to_string(i) + " is not a symbol");
        out_ += "    " + bind_symbol(s, "rt::input_integer(wrapir_inputs, " + std::to_string(i) + ", " +
                                         string_literal(std::string(s.name())) + ", " + code + ")", code) +
                ";\n";
      }
    }
    // Symbols read from input shapes: directly, or solved where the input's
    // dimension is an expression of one unknown (as the executor does).
    std::vector<expr::Expr> knowns;
    for (const ir::SymbolDecl& s : p_.symbols)
      if (s.origin == ir::SymbolOrigin::input || s.origin == ir::SymbolOrigin::input_shape) knowns.push_back(s.symbol);
    std::vector<std::string> solvers;
    for (const ir::SymbolDecl& s : p_.symbols) {
      if (s.origin != ir::SymbolOrigin::input_shape) continue;
      const std::string n(s.symbol.name());
      if (!s.source) fail("symbol '" + n + "' is read from an input shape but names no input");
      const auto pos = position.find(s.source->index);
      if (pos == position.end()) fail("symbol '" + n + "' is read from a buffer that is not an input");
      const ir::BufferDecl& src = decl(*s.source);
      if (s.path.size() == 1 && (s.path[0].kind == ir::KeyStepKind::size || s.path[0].kind == ir::KeyStepKind::stride)) {
        const bool size = s.path[0].kind == ir::KeyStepKind::size;
        const auto& dims = size ? src.layout.sizes : src.layout.strides;
        const std::int64_t d = s.path[0].value;
        if (d < 0 || static_cast<std::size_t>(d) >= dims.size())
          fail("symbol '" + n + "' is read from dimension " + std::to_string(d) + " of '" + src.name + "', which has " +
               std::to_string(dims.size()));
        const expr::Expr dimension = dims[static_cast<std::size_t>(d)];
        const std::string read = src.name + (size ? ".sizes[" : ".strides[") + std::to_string(d) + "]";
        if (dimension && dimension != s.symbol && expr::depends_on(dimension, s.symbol)) {
          const expr::Expr observed = p_.ctx().symbol("wrapir_observed_dimension", expr::Assumption::integer);
          std::vector<expr::Expr> others;
          for (expr::Expr k : knowns)
            if (k != s.symbol) others.push_back(k);
          Result<expr::Solution> sol = expr::solve(dimension, observed, s.symbol, others);
          if (!sol) fail("symbol '" + n + "': " + sol.error().message);
          std::string text = "    {\n      const std::int64_t wrapir_observed_dimension = " + read + ";\n";
          text += "      if (" + expr_text(sol->condition) + " == 0) rt::fail(\"symbol '" + n + "': input " +
                  std::to_string(pos->second) + " has \" + std::to_string(wrapir_observed_dimension) + " +
                  string_literal(" where the program expects " + expr::print_python(dimension) +
                                 ", which no integer value solves") +
                  ", " + code + ");\n";
          text += "      " + bind_symbol(s.symbol, expr_text(sol->value), code) + ";\n    }\n";
          solvers.push_back(std::move(text));
          continue;
        }
        out_ += "    " + bind_symbol(s.symbol, read, code) + ";\n";
        continue;
      }
      out_ += "    " + bind_symbol(s.symbol, "rt::integer_of(rt::follow_path(rt::Value::of(" + src.name + "), " +
                                        path_text(s.path) + ", \"symbol '" + n + "'\"), \"symbol '" + n + "'\")",
                                  code) +
              ";\n";
    }
    for (const std::string& s : solvers) out_ += s;
    if (t_.input_asserts)
      for (std::size_t i = 0; i < p_.inputs.size(); ++i)
        if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&p_.inputs[i])) {
          const ir::BufferDecl& d = decl(*b);
          out_ += "    rt::check_layout(" + d.name + ", ";
          append_expr_list(out_, d.layout.sizes);
          out_ += ", "sv;
          append_expr_list(out_, d.layout.strides);
          out_ += ", " + string_literal("input " + std::to_string(i) + " (" + d.name + ")") + ", " + code + ");\n";
        }
  }

  // ---- the debug printer (CppOptions::debug_level, reference §6) ----------
  /// The lines it wraps: kernel launches and extern calls. A multi-kernel
  /// call is not one of them (as in Inductor): its candidate's launch is
  /// rendered directly, not through the line visitor.
  template <class L>
  static constexpr bool debug_wrapped = std::is_same_v<L, ir::KernelCall> || std::is_same_v<L, ir::ExternKernelAlloc> ||
                                        std::is_same_v<L, ir::ExternKernelOut> ||
                                        std::is_same_v<L, ir::ExternKernelMultiOut>;

  [[nodiscard]] bool debug_wraps(std::string_view kernel_name) const {
    if (t_.debug_filter.empty()) return true;
    std::string lower(kernel_name);
    for (char& c : lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return std::find(t_.debug_filter.begin(), t_.debug_filter.end(), lower) != t_.debug_filter.end();
  }

  void debug_call(const ir::KernelCall& l, std::string_view when) {
    const ir::KernelDecl& k = kernel(l.kernel);
    if (!debug_wraps(k.name)) return;
    if (t_.debug_level == 3) {
      debug_name(when, k.name);
      return;
    }
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      if (const auto* b = l.args[i].get_if<ir::BufferArg>()) {
        debug_tensor(when, k.name, *b);
      } else if (t_.debug_level == 2) {
        debug_scalar(when, k.name, i < k.signature.size() ? k.signature[i].name : "argument " + std::to_string(i),
                     l.args[i]);
      }
    }
  }
  /// Extern calls: their tensor arguments only (Inductor's "extern" kind).
  void debug_extern(std::string_view when, const std::string& op, const std::vector<ir::Arg>& args,
                    const std::vector<ir::NamedArg>& kwargs, const std::vector<const ir::BufferArg*>& outs) {
    if (!debug_wraps(op)) return;
    if (t_.debug_level == 3) {
      debug_name(when, op);
      return;
    }
    for (const ir::Arg& a : args)
      if (const auto* b = a.get_if<ir::BufferArg>()) debug_tensor(when, op, *b);
    for (const ir::NamedArg& k : kwargs)
      if (const auto* b = k.value.get_if<ir::BufferArg>()) debug_tensor(when, op, *b);
    for (const ir::BufferArg* b : outs) debug_tensor(when, op, *b);
  }
  void debug_call(const ir::ExternKernelAlloc& l, std::string_view when) {
    debug_extern(when, l.kernel.text, l.args, l.kwargs, {});
  }
  void debug_call(const ir::ExternKernelOut& l, std::string_view when) {
    debug_extern(when, l.kernel.text, l.args, l.kwargs, {&l.out});
  }
  void debug_call(const ir::ExternKernelMultiOut& l, std::string_view when) {
    std::vector<const ir::BufferArg*> outs;
    for (const ir::NamedBuffer& o : l.outs) outs.push_back(&o.buffer);
    debug_extern(when, l.kernel.text, l.args, l.kwargs, outs);
  }

  /// Level 3: `[ before_launch: <kernel> ]`, as Inductor's C++ printer.
  void debug_name(std::string_view when, std::string_view kernel_name) {
    indent();
    out_ += "wrapir_debug::print_line(wrapir_debug_sink, "sv;
    append_string_literal(out_, "[ " + std::string(when) + ": " + std::string(kernel_name) + " ]");
    out_ += ");\n"sv;
  }
  /// Level 1 saves the tensor, level 2 prints it.
  void debug_tensor(std::string_view when, std::string_view kernel_name, const ir::BufferArg& b) {
    // A multi-output buffer holds a list of results, not a tensor: an
    // extern may take it, the printer leaves it out.
    if (decl(b.buffer).multi_output) return;
    const std::string& label = name(b.buffer);
    indent();
    if (t_.debug_level == 1) {
      std::string path = t_.debug_save_directory;
      path += '/';
      path += when;
      path += '_';
      // An operator's name may hold any byte: the file name keeps it safe.
      for (const char c : kernel_name)
        path += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                        c == '-'
                    ? c
                    : '_';
      path += '_';
      path += label;
      path += ".npy"sv;
      out_ += "wrapir_debug::save_tensor("sv;
      append_string_literal(out_, path);
    } else {
      out_ += "wrapir_debug::print_tensor(wrapir_debug_sink, "sv;
      append_string_literal(out_, std::string(when) + " - " + std::string(kernel_name) + " - " + label);
    }
    out_ += ", "sv;
    append_tensor_of(out_, b);
    out_ += ");\n"sv;
  }
  /// Level 2 prints a scalar argument under its parameter's name.
  void debug_scalar(std::string_view when, std::string_view kernel_name, const std::string& label, const ir::Arg& a) {
    const std::string message = std::string(when) + " - " + std::string(kernel_name) + " - " + label;
    if (const double* d = a.get_if<double>()) {
      indent();
      out_ += "wrapir_debug::print_real(wrapir_debug_sink, "sv;
      append_string_literal(out_, message);
      out_ += ", "sv;
      append_double(out_, *d);
      out_ += ");\n"sv;
      return;
    }
    const expr::Expr* e = a.get_if<expr::Expr>();
    const std::int64_t* n = a.get_if<std::int64_t>();
    const bool* x = a.get_if<bool>();
    if (e == nullptr && n == nullptr && x == nullptr) return;  // None, strings, lists: nothing to print
    indent();
    out_ += "wrapir_debug::print_integer(wrapir_debug_sink, "sv;
    append_string_literal(out_, message);
    out_ += ", "sv;
    if (e != nullptr) append_expr(out_, *e);
    else if (n != nullptr) append_int(out_, *n);
    else out_ += *x ? "1"sv : "0"sv;
    out_ += ");\n"sv;
  }
  /// Level 2 prints the program's tensor inputs once, as Inductor's C++
  /// wrapper does in its prefix (`aoti_model_inputs - arg0_1`).
  void debug_inputs() {
    for (const ir::ProgramInput& in : p_.inputs)
      if (const ir::BufferId* b = boost::variant2::get_if<ir::BufferId>(&in)) {
        out_ += "    wrapir_debug::print_tensor(wrapir_debug_sink, "sv;
        append_string_literal(out_, "aoti_model_inputs - " + name(*b));
        out_ += ", "sv;
        out_ += name(*b);
        out_ += ");\n"sv;
      }
  }

  void write_outputs() {
    out_ += "    wrapir_where = "sv;
    append_string_literal(out_, "the outputs of graph '" + p_.name + "'");
    out_ += ";\n    return std::vector<rt::Value>{"sv;
    for (std::size_t i = 0; i < p_.outputs.size(); ++i) {
      if (i) out_ += ", "sv;
      const ir::ProgramOutput& o = p_.outputs[i];
      if (const ir::BufferArg* b = boost::variant2::get_if<ir::BufferArg>(&o)) {
        out_ += value_of(ir::Arg{*b});
      } else if (const expr::Expr* e = boost::variant2::get_if<expr::Expr>(&o)) {
        out_ += "rt::Value::of_int("sv;
        append_expr(out_, *e);
        out_ += ")"sv;
      } else {
        out_ += "rt::Value{}"sv;
      }
    }
    out_ += "};\n"sv;
  }

  UnitTables& t_;
  const ir::Program& p_;
  std::size_t id_;
  std::string& out_;
  std::size_t line_ = 0;
  int depth_ = 0;
  std::set<std::uint32_t> defined_;
  struct MultiChoice {
    ir::KernelId candidate;
    std::vector<ir::ArgSlice> slices;
  };
  std::map<std::uint32_t, MultiChoice> multi_;  // multi-kernel index -> its first candidate
  struct GridKey {
    std::size_t slot;
    std::vector<expr::Expr> numels;
    bool operator<(const GridKey& o) const {
      if (slot != o.slot) return slot < o.slot;
      return std::lexicographical_compare(numels.begin(), numels.end(), o.numels.begin(), o.numels.end(),
                                          [](expr::Expr a, expr::Expr b) { return std::less<const void*>{}(a.node(), b.node()); });
    }
  };
  std::map<GridKey, std::string> grids_;  // launcher grids' text, by kernel and numels
  std::string scratch_grid_;
};

}  // namespace wrapir::cpp::detail
