#pragma once
/// \file
/// The Python emitter: a wrapir program as a Python module in the shape of
/// PyTorch Inductor's generated wrapper (reference §8), runnable with torch
/// and Triton.
///
/// ```
/// auto module = wrapir::python::to_python(program);
/// if (!module) { report(module.error()); return; }
/// write_file("add.py", *module);
/// ```
///
/// The module, in order: imports; the header (aliases such as
/// `empty_strided_cuda`, kernel definitions through
/// `async_compile.triton('name', '''source''', device_str='cuda')`,
/// multi-kernel definitions); one `def <subgraph>(args):` per subgraph (the
/// branches and loop bodies of Conditional and WhileLoop lines, lifted as
/// Inductor lifts them); `async_compile.wait(globals())`; `def call(args):`
/// (unpack the inputs, `args.clear()`, bind the symbols read from input
/// shapes, assert input sizes, the body, `return (buf0, )`); the benchmark
/// harness. docs/emitters.md shows a whole module and each line kind's
/// rendering.
///
/// Errors. A program the emitter cannot render correctly — an id out of
/// range, an invalid or clashing name, a null expression, a kernel source
/// that is not UTF-8, unbalanced scopes, a construct Python cannot express
/// (a PTX/cubin kernel), an operator that is not a real operator path
/// (`ir::check_operator_path`, extended by `PythonOptions::operators`), a
/// view that provably reaches past its storage — gives a `Diagnostic`
/// naming the line, its kind and the program (`line 4 (KernelCall) of
/// program 'add': kernel id 9 is out of range (the program has 2
/// kernels)`), never partial or wrong code. Only
/// what generated code depends on is checked; run `ir::verify` for the
/// semantic rules (use after free, liveness, signatures). A view whose
/// bounds depend on the symbols gets a guard that raises a RuntimeError
/// before the view is taken (ir/view_extent.hpp). Generated code never
/// calls anything a program merely names: operators, kernels and subgraph
/// functions each go through one check before they are printed as a callee.
///
/// Speed: one pass over the lines, appending to std::strings (one per module
/// section), no streams; a line costs a few appends.

#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/python_keywords.hpp>
#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/emit.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/arg.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/hints.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/reflect.hpp>
#include <wrapir/ir/symbol.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace wrapir::python {

/// Where the emitter puts the size/stride asserts of the program's tensor
/// inputs (`assert_size_stride(arg0_1, (8, ), (1, ))`). AssertSizeStride
/// lines of the body are rendered whatever this says.
enum class SizeAsserts : std::uint8_t {
  /// No input asserts.
  none,
  /// All at the top of the function, right after `args.clear()` and the
  /// symbol bindings (Inductor's classic layout).
  eager,
  /// Each just before the first line that reads that input (newest
  /// Inductor), keeping the asserts off the path to the first launch. An
  /// input no line reads is not asserted.
  deferred,
};

/// How the module is written. The defaults give Inductor's module.
struct PythonOptions {
  /// When a function's body has no device context lines and uses exactly
  /// one indexed CUDA device, wrap the body in
  /// `with torch.cuda._DeviceGuard(i):` / `torch.cuda.set_device(i)` as
  /// Inductor does. Device context lines of the body are rendered either
  /// way.
  bool device_guard = true;
  /// Append `get_args()` (random inputs at the symbols' hints, 42 without a
  /// hint), `benchmark_compiled_module()` and the `__main__` block.
  bool benchmark_harness = true;
  SizeAsserts size_asserts = SizeAsserts::eager;
  /// Inductor's intermediate-value debug printer (reference §6) around
  /// kernel and extern calls: 0 off; 1 `torch.save` every tensor argument
  /// before and after the call into `debug_save_directory`; 2 print every
  /// argument with `_print_debugging_tensor_value_info`; 3 kernel names
  /// only, which Inductor prints from C++ wrappers only, so the Python
  /// module gets nothing but the import. Multi-kernel calls are never
  /// wrapped. Values outside 0-3 are a diagnostic.
  int debug_level = 0;
  /// The kernels (or extern operators, such as `extern_kernels.mm`) the
  /// debug printer wraps, compared case-insensitively; empty wraps all.
  /// Unlike Inductor, whose filter applies to printing only, it applies to
  /// level 1 too.
  std::vector<std::string> debug_kernel_filter{};
  /// Where level 1 saves tensors (created when the module is imported).
  std::string debug_save_directory = "tmp/jit_inductor";
  /// Operator paths programs may call besides the built-in forms of
  /// `ir::check_operator_path` (pass the verifier the same registry). A
  /// declared path must still start with a name the module binds (`torch`,
  /// `aten`, `extern_kernels`, `inductor_ops`, `_quantized`) and have no
  /// part that is a Python keyword.
  ir::OperatorRegistry operators{};
};

/// `program` as a Python module, or a diagnostic saying why it cannot be
/// rendered.
[[nodiscard]] Result<std::string> to_python(const ir::Program& program, const PythonOptions& options = {});

/// Appends `program` as a Python module to `out`; on failure returns the
/// diagnostic and leaves `out` as it was.
[[nodiscard]] Result<void> to_python(const ir::Program& program, std::string& out, const PythonOptions& options = {});

// ---------------------------------------------------------------------------
// Implementation

namespace detail {

/// Names the module itself defines or imports, or that its functions use:
/// a table entry with one of these names would shadow them.
[[nodiscard]] inline bool is_module_name(std::string_view name) {
  static const std::unordered_set<std::string_view> names{
      "args", "call", "get_args", "benchmark_compiled_module", "aten", "inductor_ops", "_quantized",
      "assert_size_stride", "assert_alignment", "empty_strided_cpu", "empty_strided_cpu_pinned",
      "empty_strided_cuda", "empty_strided_xpu", "empty_strided_mtia", "empty_strided_p2p", "reinterpret_tensor",
      "alloc_from_pool", "async_compile", "AsyncCompile", "extern_kernels", "run_intermediate_hooks",
      "maybe_profile", "device", "empty_strided", "c_void_p", "c_long", "c_int", "c_float", "c_double", "c_bool",
      "torch", "math", "random", "os", "tempfile", "inf", "nan", "nanj", "align", "triton", "tl", "start_graph",
      "end_graph", "get_raw_stream", "MultiKernelCall", "_print_debugging_tensor_value_info", "collections",
      "side_streams", "arg_index", "rand_strided", "print_performance", "compiled_module_main", "fn",
      "raw_stream", "list", "slice", "globals", "len", "print", "range", "int", "float", "bool", "str", "tuple",
      "dict", "set", "object", "type", "isinstance", "abs", "round", "sum", "any", "all", "Exception",
      "AssertionError", "RuntimeError", "f"};
  return names.contains(name);
}

/// The first component of an operator path must be one of the module's
/// operator namespaces, so that an operator name cannot reach into a local
/// variable (`buf0.add_`).
[[nodiscard]] inline bool is_operator_namespace(std::string_view first) noexcept {
  return first == "aten" || first == "torch" || first == "extern_kernels" || first == "inductor_ops" ||
         first == "_quantized";
}

[[nodiscard]] inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// A set of names viewing strings that outlive it: open addressing in one
/// vector, so that checking the tens of thousands of names of a large
/// program allocates once instead of once per name.
class NameSet {
 public:
  void reserve(std::size_t n) {
    std::size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    if (capacity > slots_.size()) rehash(capacity);
  }
  /// False when `name` was there already.
  bool insert(std::string_view name) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
    std::size_t i = slot(name);
    if (slots_[i].data()) return false;
    slots_[i] = name.empty() ? std::string_view("", 0) : name;
    ++size_;
    return true;
  }
  [[nodiscard]] bool contains(std::string_view name) const {
    return !slots_.empty() && slots_[slot(name)].data() != nullptr;
  }

 private:
  [[nodiscard]] std::size_t slot(std::string_view name) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = std::hash<std::string_view>{}(name) & mask;
    while (slots_[i].data() && slots_[i] != name) i = (i + 1) & mask;
    return i;
  }
  void rehash(std::size_t capacity) {
    std::vector<std::string_view> old = std::move(slots_);
    slots_.assign(capacity, std::string_view{});
    size_ = 0;
    for (std::string_view n : old)
      if (n.data()) insert(n);
  }
  std::vector<std::string_view> slots_;
  std::size_t size_ = 0;
};

inline void append_shape_tuple(std::string& out, std::size_t count, const auto& append_item) {
  out += '(';
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += ", ";
    append_item(i);
  }
  if (count == 1) out += ", ";
  out += ')';
}

/// What the module as a whole needs, filled while the functions are
/// rendered and assembled at the end.
struct ModuleState {
  const PythonOptions* options = nullptr;
  // Names are views into the program, which outlives the emission.
  std::unordered_set<std::string_view> global_names;  // kernels, subgraph functions, constants
  std::string kernel_definitions;
  std::string multi_kernel_definitions;
  std::string subgraph_functions;
  std::string constant_placeholders;
  struct DefinedKernel {
    ir::KernelLanguage language;
    const std::string* source;  // null for a multi-kernel
  };
  std::unordered_map<std::string_view, DefinedKernel> defined_kernels;
  std::vector<std::string_view> called_kernels;  // checked against the definitions at the end
  std::unordered_map<std::string_view, char> global_kinds;  // 'k' kernel, 's' subgraph, 'c' constant
  std::vector<const ir::BufferDecl*> constants;
  std::vector<std::string> debug_filter;  // lowercased
  bool uses_triton = false;
  bool uses_raw_stream = false;
  bool uses_multi_kernel = false;
  bool uses_p2p = false;
  bool uses_side_streams = false;
  bool uses_ctypes_floats = false;
};

/// Collects the module-level names of `p` and its subgraphs: kernels
/// (shared by name between programs), subgraph functions (unique) and
/// constants (module globals bound by the loader).
inline void collect_globals(ModuleState& m, const ir::Program& p, int depth) {
  auto where = [&] { return std::string(depth == 0 ? "program " : "subgraph ") + ir::quote_for_diagnostic(p.name) + ": "; };
  if (depth > 256) wrapir::detail::fail(Diagnostic{where() + "subgraphs are nested more than 256 deep"});
  auto claim = [&](std::string_view name, std::string_view what, char kind) {
    if (auto err = ir::check_name(name, what)) wrapir::detail::fail(Diagnostic{where() + *err});
    if (is_module_name(name))
      wrapir::detail::fail(Diagnostic{where() + std::string(what) + " name " + ir::quote_for_diagnostic(name) +
                                   " would shadow a name of the generated Python module"});
    auto [it, inserted] = m.global_kinds.emplace(name, kind);
    if (!inserted && (it->second != kind || kind == 's'))
      wrapir::detail::fail(Diagnostic{where() + "the module-level name " + ir::quote_for_diagnostic(name) +
                                   " is used twice (kernels, subgraph functions and constants share the module)"});
    m.global_names.insert(name);
  };
  for (const ir::KernelDecl& k : p.kernels) claim(k.name, "kernel", 'k');
  for (const ir::BufferDecl& b : p.buffers) {
    if (b.role != ir::BufferRole::constant) continue;
    const bool first = !m.global_kinds.contains(b.name);
    claim(b.name, "constant", 'c');
    if (!first) continue;
    m.constants.push_back(&b);
    m.constant_placeholders += b.name;
    m.constant_placeholders += " = None  # constant, bound by the loader or get_args()\n";
  }
  for (const ir::Program& g : p.subgraphs) {
    claim(g.name, "subgraph", 's');
    collect_globals(m, g, depth + 1);
  }
}

/// Renders one program (the top-level one or a subgraph) as one Python
/// function, and its definitions into the module's header.
class FunctionEmitter {
 public:
  FunctionEmitter(ModuleState& module, const ir::Program& program, std::string& out, std::string_view function_name,
                  bool top_level, int depth)
      : module_(module), options_(*module.options), program_(program), out_(out), function_name_(function_name),
        top_level_(top_level), depth_(depth) {}

  /// Checks the tables, lifts the subgraphs, then renders the function.
  void run() {
    check_tables();
    for (const ir::Program& sub : program_.subgraphs) {
      std::string& text = module_.subgraph_functions;
      text += "\n\n";
      FunctionEmitter nested{module_, sub, text, sub.name, false, depth_ + 1};
      nested.run();
    }
    scan_kernel_devices();
    kernel_called_.assign(program_.kernels.size(), 0);
    wrapir::emit(program_, *this);
    for (std::size_t i = 0; i < kernel_called_.size(); ++i)
      if (kernel_called_[i]) module_.called_kernels.push_back(program_.kernels[i].name);
  }

  // ---- the emitter interface of wrapir::emit ----------------------------------

  void begin(const ir::Program&) {
    out_ += "def ";
    out_ += function_name_;
    out_ += "(args):\n";
    indent_ = 1;
    write_prologue();
  }

  template <ir::LineKind T>
  void operator()(const T& line) {
    static_assert(requires(FunctionEmitter& e, const T& l) { e.render(l); },
                  "the Python emitter has no render() for this line kind");
    kind_ = T::kind;
    try {
      if (options_.size_asserts == SizeAsserts::deferred && pending_asserts_ > 0) assert_inputs_read_by(line);
      guard_argument_views(line);
      render(line);
    } catch (const expr::Error& e) {
      fail(e.what());
    }
    ++line_index_;
  }

  void end(const ir::Program&) {
    kind_ = {};
    line_index_ = static_cast<std::size_t>(-1);
    if (blocks_.size() > (auto_guard_ ? 1u : 0u))
      fail_program(std::string("a ") + std::string(blocks_.back().opened_by) +
                   " line is never closed before the end of the program");
    if (auto_guard_) close_block(Block::auto_device, "");
    for (const ir::ProgramOutput& o : program_.outputs)
      if (const auto* b = boost::variant2::get_if<ir::BufferArg>(&o)) guard_view(*b);
    statement();
    out_ += "return (";
    for (const ir::ProgramOutput& o : program_.outputs) {
      boost::variant2::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, ir::None>) out_ += "None";
            else if constexpr (std::is_same_v<V, ir::BufferArg>) append_buffer_arg(v);
            else append_expr(v, "an output");
          },
          o);
      out_ += ", ";
    }
    out_ += ")\n";
  }

  // ---- memory -----------------------------------------------------------------

  void render(const ir::Allocate& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    statement();
    out_ += b.name;
    out_ += " = ";
    append_allocation(b.layout);
    out_ += '\n';
  }

  void render(const ir::FreeIfNotReused& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    if (l.reused) return;
    statement();
    out_ += "del ";
    out_ += b.name;
    out_ += '\n';
  }

  void render(const ir::Reuse& l) {
    const ir::BufferDecl& old_buffer = buffer(l.old_buffer);
    const ir::BufferDecl& new_buffer = buffer(l.new_buffer);
    const ir::Layout& o = old_buffer.layout;
    const ir::Layout& n = new_buffer.layout;
    if (o.dtype != n.dtype || o.device != n.device)
      fail("buffer " + ir::quote_for_diagnostic(new_buffer.name) + " reuses " +
           ir::quote_for_diagnostic(old_buffer.name) +
           " of another dtype or device; Python reuses storage only between buffers of one dtype and device");
    statement();
    out_ += new_buffer.name;
    out_ += " = ";
    if (o.sizes == n.sizes && o.strides == n.strides && o.storage_offset == n.storage_offset) {
      out_ += old_buffer.name;
    } else {
      append_reinterpret(old_buffer.name, n.sizes, n.strides, n.storage_offset);
    }
    // An output keeps its name bound (Inductor checks graph outputs too).
    if (l.delete_old && old_buffer.role != ir::BufferRole::output && !is_output(l.old_buffer)) {
      out_ += "; del ";
      out_ += old_buffer.name;
    } else {
      out_ += ';';
    }
    out_ += "  # reuse\n";
  }

  void render(const ir::Free& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    statement();
    out_ += "del ";
    out_ += b.name;
    out_ += '\n';
  }

  void render(const ir::Null&) {}

  void render(const ir::PoolCreate& l) {
    const ir::PoolDecl& p = pool(l.pool);
    statement();
    out_ += p.name;
    out_ += " = ";
    append_empty_strided_1d(p.size_bytes, ir::DType::uint8, p.device, "the pool's size");
    out_ += '\n';
    pool_names_[l.pool.index].clear();
  }

  void render(const ir::AllocFromPool& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    const ir::PoolDecl& p = pool(l.pool);
    const ir::Layout& layout = b.layout;
    if (!l.offset_bytes || !p.size_bytes) fail("the pool offset or the pool's size is a null expression");
    guard_extent(ir::check_pool_slice(layout, l.offset_bytes, p.size_bytes),
                 "buffer " + std::string(b.name) + " carved from pool " + p.name);
    statement();
    out_ += b.name;
    out_ += " = alloc_from_pool(";
    out_ += p.name;
    out_ += ", ";
    append_expr(l.offset_bytes, "the pool offset");
    if (!layout.storage_offset || !layout.storage_offset.is_integer(0)) {
      // alloc_from_pool views the pool from the byte offset on; a storage
      // offset in elements moves the start further.
      out_ += " + ";
      append_factor(layout.storage_offset, "the storage offset");
      out_ += '*';
      append_integer(out_, ir::itemsize(layout.dtype));
    }
    out_ += ", ";
    out_ += ir::torch_name(layout.dtype);
    out_ += ", ";
    append_shape(layout.sizes, "a size");
    out_ += ", ";
    append_shape(layout.strides, "a stride");
    out_ += ")\n";
    pool_names_[l.pool.index].push_back(b.name);
  }

  void render(const ir::DeallocFromPool& l) {
    buffer(l.buffer);
    const ir::PoolDecl& p = pool(l.pool);
    if (!l.releases_pool) return;
    statement();
    out_ += "del ";
    out_ += p.name;
    for (std::string_view name : pool_names_[l.pool.index]) {
      out_ += ", ";
      out_ += name;
    }
    out_ += '\n';
    pool_names_[l.pool.index].clear();
  }

  void render(const ir::CommBufferAllocate& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    if (!b.comm) fail("buffer " + ir::quote_for_diagnostic(b.name) + " has no communication group");
    module_.uses_p2p = true;
    statement();
    out_ += b.name;
    out_ += " = empty_strided_p2p(";
    append_shape(b.layout.sizes, "a size");
    out_ += ", ";
    append_shape(b.layout.strides, "a stride");
    out_ += ", ";
    out_ += ir::torch_name(b.layout.dtype);
    out_ += ", torch.device(";
    append_literal(ir::to_string(b.layout.device), "a device");
    out_ += "), group_name=";
    append_literal(b.comm->group, "a communication group name");
    out_ += ", alloc_id=";
    // Deterministic (unlike Inductor's random id) so that every rank and
    // every run of the emitter agree on it.
    std::uint64_t h = 14695981039346656037ULL;
    for (std::string_view part : {std::string_view(program_.name), std::string_view("."), std::string_view(b.name)})
      for (char c : part) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    append_integer(out_, h);
    out_ += ")\n";
  }

  void render(const ir::CommBufferFree& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    statement();
    out_ += "del ";
    out_ += b.name;
    out_ += " # symm_mem buffer free\n";
  }

  void render(const ir::WorkspaceAllocate& l) {
    const ir::BufferDecl& w = buffer(l.workspace);
    if (auto err = ir::check_name(l.inner_name.text, "workspace inner")) fail(*err);
    if (w.layout.sizes.size() != 1)
      fail("workspace " + ir::quote_for_diagnostic(w.name) + " has " + std::to_string(w.layout.sizes.size()) +
           " dimensions; a workspace is 1-D");
    statement();
    out_ += w.name;
    out_ += " = ";
    append_empty_strided_1d(w.layout.sizes[0], w.layout.dtype, w.layout.device, "the workspace's size");
    out_ += '\n';
    if (l.zero_mode != ir::WorkspaceZeroMode::uninitialized) {
      statement();
      out_ += w.name;
      out_ += ".zero_()\n";
    }
  }

  void render(const ir::WorkspaceFree& l) {
    const ir::BufferDecl& w = buffer(l.workspace);
    statement();
    out_ += "del ";
    out_ += w.name;
    out_ += '\n';
  }

  void render(const ir::DeviceCopy& l) {
    statement();
    append_buffer_arg(l.destination);
    out_ += ".copy_(";
    append_buffer_arg(l.source);
    out_ += l.non_blocking ? ", True)\n" : ", False)\n";
  }

  // ---- views ------------------------------------------------------------------

  void render(const ir::Reinterpret& l) {
    const ir::BufferDecl& v = buffer(l.view);
    const ir::BufferDecl& base = buffer(l.base);
    if (v.multi_output || base.multi_output)
      fail("a Reinterpret views a multi-output result, which has no layout");
    // reinterpret_tensor keeps the base's dtype: a view declared with another
    // one would be bounds-checked in the wrong element size.
    if (v.layout.dtype != base.layout.dtype)
      fail("view " + ir::quote_for_diagnostic(v.name) + " has dtype " + std::string(ir::name(v.layout.dtype)) +
           " but its base " + ir::quote_for_diagnostic(base.name) + " has dtype " +
           std::string(ir::name(base.layout.dtype)) + "; reinterpret_tensor cannot change a dtype");
    const expr::Expr room = room_of(l.base);
    const ir::ViewExtent extent = ir::check_view_extent(v.layout, room);
    guard_extent(extent, "view " + std::string(v.name) + " of " + base.name);
    view_room_[l.view.index] = ir::view_room_bytes(v.layout, room);
    statement();
    out_ += v.name;
    out_ += " = ";
    append_reinterpret(base.name, v.layout.sizes, v.layout.strides, v.layout.storage_offset);
    out_ += "  # alias\n";
  }

  // ---- kernels ----------------------------------------------------------------

  void render(const ir::KernelDefinition& l) {
    const ir::KernelDecl& k = kernel(l.kernel);
    const auto* text = boost::variant2::get_if<ir::SourceText>(&l.source);
    if (!text)
      fail("kernel " + ir::quote_for_diagnostic(k.name) + " is a " + std::string(ir::kernel_language_name(k.language)) +
           " binary; Python modules define Triton, CUDA C++ and C++ kernels from source");
    if (auto it = module_.defined_kernels.find(k.name); it != module_.defined_kernels.end()) {
      if (it->second.language == k.language && it->second.source && *it->second.source == text->text)
        return;  // a subgraph's copy
      fail("kernel " + ir::quote_for_diagnostic(k.name) + " is defined twice with different sources");
    }
    std::string& h = module_.kernel_definitions;
    h += "\n\n";
    h += k.name;
    switch (k.language) {
      case ir::KernelLanguage::triton:
        module_.uses_triton = true;
        h += " = async_compile.triton(";
        append_literal_to(h, k.name, "a kernel name");
        h += ", ";
        append_source_to(h, text->text, k.name);
        h += ", device_str=";
        append_literal_to(h, kernel_device_type(l.kernel), "a device type");
        h += ")\n";
        break;
      case ir::KernelLanguage::cpp:
        h += " = async_compile.cpp_pybinding([";
        for (std::size_t i = 0; i < k.signature.size(); ++i) {
          if (i) h += ", ";
          std::string type(ir::cpp_type(k.signature[i].type.dtype));
          if (k.signature[i].type.pointer) type += '*';
          append_literal_to(h, type, "a parameter type");
        }
        h += "], ";
        append_source_to(h, text->text, k.name);
        h += ")\n";
        break;
      case ir::KernelLanguage::cuda:
        h += " = async_compile.cuda(";
        append_source_to(h, text->text, k.name);
        h += ", 'so')\n";
        break;
      default:
        fail("kernel " + ir::quote_for_diagnostic(k.name) + " has source text but language " +
             std::string(ir::kernel_language_name(k.language)) + ", which is loaded from a binary");
    }
    module_.defined_kernels.emplace(k.name, ModuleState::DefinedKernel{k.language, &text->text});
  }

  void render(const ir::KernelCall& l) {
    const ir::KernelDecl& k = kernel(l.kernel);
    if (!l.arg_types.empty() && l.arg_types.size() != l.args.size())
      fail("the call of " + ir::quote_for_diagnostic(k.name) + " has " + std::to_string(l.args.size()) +
           " arguments but " + std::to_string(l.arg_types.size()) + " argument types");
    kernel_called_[l.kernel.index] = 1;
    const bool debug = debug_wraps(k.name);
    if (debug) debug_lines("before_launch", k.name, l.args, &l.arg_types, false);
    switch (k.language) {
      case ir::KernelLanguage::triton: {
        const std::string stream = stream_for(l.device, l.stream);
        statement();
        out_ += global_callee(k.name, 'k');
        out_ += ".run(";
        append_args(l.args);
        bool first = l.args.empty();
        if (const auto* g = boost::variant2::get_if<ir::ExplicitGrid>(&l.grid)) {
          // Inductor's FixedGrid: the grid travels as the launcher's extra
          // arguments `_grid_0, _grid_1, _grid_2`.
          for (expr::Expr e : {g->x, g->y, g->z}) {
            if (!first) out_ += ", ";
            first = false;
            append_expr(e, "a grid dimension");
          }
        }
        if (!first) out_ += ", ";
        out_ += "stream=";
        out_ += stream;
        out_ += ")\n";
        break;
      }
      case ir::KernelLanguage::cpp:
        reject_explicit_grid(l.grid, k.name);
        statement();
        out_ += global_callee(k.name, 'k');
        out_ += '(';
        append_args(l.args);
        out_ += ")\n";
        break;
      case ir::KernelLanguage::cuda: {
        reject_explicit_grid(l.grid, k.name);
        const std::string stream = stream_for(l.device, l.stream);
        statement();
        out_ += global_callee(k.name, 'k');
        out_ += '.';
        out_ += k.name;
        out_ += '(';
        for (std::size_t i = 0; i < l.args.size(); ++i) {
          const ir::ParamType type = !l.arg_types.empty() ? l.arg_types[i]
                                     : i < k.signature.size() ? k.signature[i].type
                                                              : ir::ParamType{};
          append_ctypes_arg(l.args[i], type, k.name);
          out_ += ", ";
        }
        out_ += "c_void_p(";
        out_ += stream;
        out_ += "))\n";
        break;
      }
      default:
        fail("kernel " + ir::quote_for_diagnostic(k.name) + " is a " +
             std::string(ir::kernel_language_name(k.language)) + " binary, which Python modules cannot launch");
    }
    if (debug) debug_lines("after_launch", k.name, l.args, &l.arg_types, false);
  }

  void render(const ir::SymbolicCallArg& l) {
    if (!l.symbol || !l.symbol.is_symbol()) fail("the defined value is not a symbol");
    statement();
    out_ += l.symbol.name();
    out_ += " = ";
    append_expr(l.value, "the symbol's value");
    out_ += '\n';
  }

  void render(const ir::MultiKernelDefinition& l) {
    const ir::KernelDecl& k = kernel(l.kernel);
    if (l.candidates.size() < 2) fail("multi-kernel " + ir::quote_for_diagnostic(k.name) + " has fewer than two candidates");
    if (l.arg_index.size() != l.candidates.size())
      fail("multi-kernel " + ir::quote_for_diagnostic(k.name) + " has " + std::to_string(l.candidates.size()) +
           " candidates but " + std::to_string(l.arg_index.size()) + " argument index entries");
    if (!l.shape_keys.empty() && l.shape_keys.size() != l.candidates.size())
      fail("multi-kernel " + ir::quote_for_diagnostic(k.name) + " has " + std::to_string(l.candidates.size()) +
           " candidates but " + std::to_string(l.shape_keys.size()) + " shape keys");
    if (module_.defined_kernels.contains(k.name))
      fail("kernel " + ir::quote_for_diagnostic(k.name) + " is defined twice");
    module_.uses_multi_kernel = true;
    std::string& h = module_.multi_kernel_definitions;
    h += "\n\narg_index = {\n";
    for (std::size_t i = 0; i < l.arg_index.size(); ++i) {
      h += "    ";
      append_integer(h, i);
      h += ": [";
      for (std::size_t j = 0; j < l.arg_index[i].size(); ++j) {
        if (j) h += ", ";
        h += "slice(";
        append_integer(h, l.arg_index[i][j].start);
        h += ", ";
        append_integer(h, l.arg_index[i][j].stop);
        h += ", None)";
      }
      h += "],\n";
    }
    h += "}\n";
    h += k.name;
    if (l.shape_keys.empty()) {
      h += " = async_compile.multi_kernel(";
      append_literal_to(h, k.name, "a kernel name");
      h += ", [\n";
      for (ir::KernelId c : l.candidates) {
        h += "    ";
        h += kernel(c).name;
        h += ",\n";
      }
      h += "], arg_index=arg_index)\n";
    } else {
      h += " = async_compile.size_hint_multi_kernel(";
      append_literal_to(h, k.name, "a kernel name");
      h += ", {";
      std::vector<std::string> keys;
      // Python's repr of a tuple: `(a, b)`, `(a,)`, `()`.
      auto append_tuple = [](std::string& text, std::size_t n, const auto& item) {
        text += '(';
        for (std::size_t j = 0; j < n; ++j) {
          if (j) text += ", ";
          item(j);
        }
        text += n == 1 ? ",)" : ")";
      };
      for (std::size_t i = 0; i < l.candidates.size(); ++i) {
        std::string key;
        if (!l.shape_keys[i]) {
          key = "None";
        } else {
          const ir::ShapeKey& shapes = *l.shape_keys[i];
          append_tuple(key, shapes.size(), [&](std::size_t j) {
            append_tuple(key, shapes[j].size(), [&](std::size_t d) { append_integer(key, shapes[j][d]); });
          });
        }
        if (std::find(keys.begin(), keys.end(), key) != keys.end())
          fail("multi-kernel " + ir::quote_for_diagnostic(k.name) + " has two candidates with the shape key " + key);
        if (i) h += ", ";
        h += key;
        h += ": ";
        h += kernel(l.candidates[i]).name;
        keys.push_back(std::move(key));
      }
      h += "}, arg_index=arg_index)\n";
    }
    for (ir::KernelId c : l.candidates) {
      (void)kernel(c);
      kernel_called_[c.index] = 1;
    }
    module_.defined_kernels.emplace(k.name, ModuleState::DefinedKernel{k.language, nullptr});
  }

  void render(const ir::MultiKernelCall& l) {
    const ir::KernelDecl& k = kernel(l.kernel);
    kernel_called_[l.kernel.index] = 1;
    const std::string stream = stream_for(l.device, l.stream);
    statement();
    out_ += global_callee(k.name, 'k');
    out_ += ".run(";
    append_args(l.args);
    if (!l.args.empty()) out_ += ", ";
    out_ += "stream=";
    out_ += stream;
    out_ += ")\n";
  }

  // ---- extern kernels ---------------------------------------------------------

  void render(const ir::ExternKernelAlloc& l) {
    const std::string_view op = operator_callee(l.kernel);
    const bool debug = debug_wraps(l.kernel.text);
    if (debug) debug_extern("before_launch", l.kernel.text, l.args, l.kwargs, nullptr);
    statement();
    if (l.result) {
      out_ += buffer(*l.result).name;
      out_ += " = ";
    }
    out_ += op;
    out_ += '(';
    append_args(l.args);
    append_kwargs(l.kwargs, !l.args.empty(), {});
    out_ += ")\n";
    if (debug) debug_extern("after_launch", l.kernel.text, l.args, l.kwargs, nullptr);
  }

  void render(const ir::ExternKernelOut& l) {
    const std::string_view op = operator_callee(l.kernel);
    const bool debug = debug_wraps(l.kernel.text);
    if (debug) debug_extern("before_launch", l.kernel.text, l.args, l.kwargs, &l.out);
    statement();
    out_ += op;
    out_ += '(';
    append_args(l.args);
    append_kwargs(l.kwargs, !l.args.empty(), "out");
    if (!l.args.empty() || !l.kwargs.empty()) out_ += ", ";
    out_ += "out=";
    append_buffer_arg(l.out);
    out_ += ")\n";
    if (debug) debug_extern("after_launch", l.kernel.text, l.args, l.kwargs, &l.out);
  }

  void render(const ir::ExternKernelMultiOut& l) {
    const std::string_view op = operator_callee(l.kernel);
    std::vector<ir::NamedArg> outs;
    for (const ir::NamedBuffer& o : l.outs) outs.push_back(ir::NamedArg{o.name, ir::Arg{o.buffer}});
    const bool debug = debug_wraps(l.kernel.text);
    if (debug) debug_extern("before_launch", l.kernel.text, l.args, outs, nullptr);
    statement();
    if (l.result) {
      out_ += buffer(*l.result).name;
      out_ += " = ";
    }
    out_ += op;
    out_ += '(';
    append_args(l.args);
    std::vector<ir::NamedArg> all = l.kwargs;
    all.insert(all.end(), outs.begin(), outs.end());
    append_kwargs(all, !l.args.empty(), {});
    out_ += ")\n";
    if (debug) debug_extern("after_launch", l.kernel.text, l.args, outs, nullptr);
  }

  void render(const ir::MultiOutput& l) {
    const ir::BufferDecl& r = buffer(l.result);
    const ir::BufferDecl& s = buffer(l.source);
    statement();
    out_ += r.name;
    out_ += " = ";
    out_ += s.name;
    for (const ir::KeyStep& step : l.path) {
      if (step.kind == ir::KeyStepKind::index) {
        out_ += '[';
        append_integer(out_, step.value);
        out_ += ']';
      } else if (step.kind == ir::KeyStepKind::key) {
        out_ += '[';
        append_literal(step.key, "a dict key");
        out_ += ']';
      } else {
        fail("a multi-output path may hold only index and key steps, not " +
             std::string(ir::key_step_kind_name(step.kind)));
      }
    }
    out_ += '\n';
  }

  void render(const ir::ScatterFallback& l) {
    const std::string_view op = operator_callee(l.kernel);
    statement();
    // Inductor joins the positional arguments without spaces.
    out_ += op;
    out_ += '(';
    out_ += buffer(l.self).name;
    out_ += ',';
    append_integer(out_, l.dim);
    out_ += ',';
    append_buffer_arg(l.index);
    out_ += ',';
    append_arg(l.src);
    append_kwargs(l.kwargs, true, {});
    out_ += ")\n";
  }

  void render(const ir::IndexPutFallback& l) {
    const std::string_view op = operator_callee(l.kernel);
    statement();
    out_ += op;
    out_ += '(';
    out_ += buffer(l.self).name;
    out_ += ", [";
    for (std::size_t i = 0; i < l.indices.size(); ++i) {
      if (i) out_ += ", ";
      if (l.indices[i]) append_buffer_arg(*l.indices[i]);
      else out_ += "None";
    }
    out_ += "], ";
    append_buffer_arg(l.values);
    out_ += l.accumulate ? ", True)\n" : ", False)\n";
  }

  void render(const ir::DynamicScalar& l) {
    if (!l.symbol || !l.symbol.is_symbol()) fail("the defined value is not a symbol");
    const std::string_view sym = l.symbol.name();
    const ir::BufferDecl& s = buffer(l.source);
    if (l.path.empty()) {
      statement();
      out_ += sym;
      out_ += " = ";
      out_ += s.name;
      out_ += ".item()\n";
    } else if (l.path.size() == 1 && l.path[0].kind == ir::KeyStepKind::convert_to_int) {
      statement();
      out_ += sym;
      out_ += " = 1 if ";
      out_ += s.name;
      out_ += ".item() else 0\n";
    } else if (l.path.size() == 1 && l.path[0].kind == ir::KeyStepKind::divide_by && l.path[0].value > 0) {
      const std::string undivided = helper_name(std::string(sym) + "_undivided");
      statement();
      out_ += undivided;
      out_ += " = ";
      out_ += s.name;
      out_ += ".item()\n";
      statement();
      out_ += "assert ";
      out_ += undivided;
      out_ += " % ";
      append_integer(out_, l.path[0].value);
      out_ += " == 0, f'{";
      out_ += undivided;
      out_ += "} not divisible by ";
      append_integer(out_, l.path[0].value);
      out_ += "'\n";
      statement();
      out_ += sym;
      out_ += " = ";
      out_ += undivided;
      out_ += " // ";
      append_integer(out_, l.path[0].value);
      out_ += '\n';
    } else {
      fail("a dynamic scalar's path is empty, one convert_to_int or one divide_by with a positive divisor");
    }
  }

  void render(const ir::UnbackedSymbolDefs& l) {
    const ir::BufferDecl& s = buffer(l.source);
    for (const ir::SymbolBinding& b : l.bindings) {
      if (!b.symbol || !b.symbol.is_symbol()) fail("a bound value is not a symbol");
      statement();
      out_ += b.symbol.name();
      out_ += " = ";
      append_key_path(s.name, b.path);
      out_ += '\n';
    }
  }

  void render(const ir::AssertSizeStride& l) {
    const ir::BufferDecl& b = buffer(l.buffer);
    if (l.sizes.size() != l.strides.size())
      fail("the assert of " + ir::quote_for_diagnostic(b.name) + " has " + std::to_string(l.sizes.size()) +
           " sizes but " + std::to_string(l.strides.size()) + " strides");
    statement();
    out_ += "assert_size_stride(";
    out_ += b.name;
    out_ += ", ";
    append_shape(l.sizes, "a size");
    out_ += ", ";
    append_shape(l.strides, "a stride");
    out_ += ")\n";
    if (l.buffer.index < asserted_.size() && !asserted_[l.buffer.index]) {
      asserted_[l.buffer.index] = 1;
      --pending_asserts_;
    }
  }

  // ---- control ----------------------------------------------------------------

  void render(const ir::EnterSubgraph& l) {
    const ir::Program& g = subgraph(l.graph);
    // The inlined code runs unconditionally; `if True:` gives Python the
    // block that Inductor's raw `if`/`while` line would open.
    statement();
    out_ += "if True:  # subgraph: ";
    out_ += g.name;
    out_ += '\n';
    open_block(Block::subgraph, "EnterSubgraph", true);
  }

  void render(const ir::ExitSubgraph&) { close_block(Block::subgraph, "ExitSubgraph"); }

  void render(const ir::Conditional& l) {
    const ir::Program& t = subgraph(l.true_graph);
    const ir::Program& f = subgraph(l.false_graph);
    for (ir::BufferId o : l.outputs) buffer(o);
    statement();
    out_ += "if ";
    if (const auto* b = l.predicate.get_if<ir::BufferArg>()) {
      append_buffer_arg(*b);
      out_ += ".item()";
    } else if (const auto* e = l.predicate.get_if<expr::Expr>()) {
      append_expr(*e, "the predicate");
    } else if (const bool* v = l.predicate.get_if<bool>()) {
      out_ += *v ? "True" : "False";
    } else if (const std::int64_t* i = l.predicate.get_if<std::int64_t>()) {
      append_integer(out_, *i);
    } else {
      fail(std::string("the predicate is a ") + ir::arg_kind_name(l.predicate) +
           "; expected a buffer, a symbolic integer, a bool or an int");
    }
    out_ += ":\n";
    ++indent_;
    subgraph_call(t.name, l.operands, {}, l.outputs);
    --indent_;
    statement();
    out_ += "else:\n";
    ++indent_;
    subgraph_call(f.name, l.operands, {}, l.outputs);
    --indent_;
  }

  void render(const ir::WhileLoop& l) {
    const ir::Program& c = subgraph(l.cond_graph);
    const ir::Program& b = subgraph(l.body_graph);
    if (l.carried.size() != l.outputs.size())
      fail("the while loop carries " + std::to_string(l.carried.size()) + " values but has " +
           std::to_string(l.outputs.size()) + " outputs");
    const std::string result = helper_name(c.name + "_result");
    // The outputs hold the carried values from the start: the loop passes
    // them to both subgraphs and rebinds them to each iteration's results.
    for (std::size_t i = 0; i < l.outputs.size(); ++i) {
      statement();
      out_ += buffer(l.outputs[i]).name;
      out_ += " = ";
      append_arg(l.carried[i]);
      out_ += '\n';
    }
    std::vector<ir::Arg> loop_args;
    for (ir::BufferId o : l.outputs) loop_args.emplace_back(o);
    auto evaluate_condition = [&] {
      const std::string args = helper_name(c.name + "_args");
      statement();
      out_ += args;
      out_ += " = [";
      append_arg_list(loop_args, l.additional);
      out_ += "]\n";
      statement();
      out_ += '(';
      out_ += result;
      out_ += ",) = ";
      out_ += global_callee(c.name, 's');
      out_ += '(';
      out_ += args;
      out_ += ")\n";
    };
    evaluate_condition();
    statement();
    out_ += "while ";
    out_ += result;
    out_ += ".item():\n";
    ++indent_;
    subgraph_call(b.name, loop_args, l.additional, l.outputs);
    evaluate_condition();
    --indent_;
  }

  void render(const ir::EnterDeviceContext& l) {
    if (auto err = ir::validate(l.device)) fail(err->message);
    const bool guarded = l.device.index && (l.device.type == ir::DeviceType::cuda || l.device.type == ir::DeviceType::xpu);
    if (guarded) write_device_guard(l.device);
    open_block(Block::device, "EnterDeviceContext", guarded, guarded ? l.device.index : std::nullopt);
    blocks_.back().has_statement = guarded;  // torch.cuda.set_device(i)
  }

  void render(const ir::ExitDeviceContext&) { close_block(Block::device, "ExitDeviceContext"); }

  void render(const ir::EnterStreamContext& l) {
    if (l.stream == 0) fail("stream 0 is the device's default stream; a stream context names a side stream (> 0)");
    module_.uses_side_streams = true;
    statement();
    out_ += "with torch.cuda.stream(";
    append_side_stream(current_device_index(), l.stream);
    out_ += "):\n";
    open_block(Block::stream, "EnterStreamContext", true);
  }

  void render(const ir::ExitStreamContext&) { close_block(Block::stream, "ExitStreamContext"); }

  void render(const ir::GetRawStream& l) {
    const int device = stream_device(l.device);
    write_stream_fetch(device, l.stream, stream_name(device, l.stream));
    remember_stream(device, l.stream);
  }

  // ---- misc -------------------------------------------------------------------

  void render(const ir::Comment& l) {
    comment_line();
    out_ += "# ";
    append_comment_text(out_, l.text);
    out_ += '\n';
  }

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
  void statement() {
    out_.append(static_cast<std::size_t>(indent_) * 4, ' ');
    // Up to the innermost block that owns an indentation level: a context
    // that renders no `with` line has no Python block of its own.
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
      it->has_statement = true;
      if (it->indented) break;
    }
  }
  /// Starts a comment line (not a statement: a block of comments alone is
  /// not a Python block).
  void comment_line() { out_.append(static_cast<std::size_t>(indent_) * 4, ' '); }

  void open_block(Block::Kind kind, std::string_view opened_by, bool indented,
                  std::optional<int> device_index = std::nullopt) {
    const bool scoped = kind == Block::subgraph;
    blocks_.push_back(Block{kind, opened_by, indented, false, device_index, fetched_streams_.size(),
                            scoped ? asserted_ : std::vector<char>{}, pending_asserts_});
    if (indented) ++indent_;
  }

  void close_block(Block::Kind kind, std::string_view closed_by) {
    if (blocks_.empty() || blocks_.back().kind != kind) {
      if (kind == Block::auto_device) return;
      fail(std::string(closed_by) + " does not close the innermost open scope" +
           (blocks_.empty() ? std::string(" (none is open)")
                            : " (" + std::string(blocks_.back().opened_by) + " is)"));
    }
    Block& b = blocks_.back();
    if (b.indented && !b.has_statement) {
      out_.append(static_cast<std::size_t>(indent_) * 4, ' ');
      out_ += "pass\n";
    }
    if (b.indented) --indent_;
    if (b.kind == Block::subgraph) {
      fetched_streams_.resize(b.streams_before);
      asserted_ = std::move(b.asserted_before);
      pending_asserts_ = b.pending_before;
    }
    blocks_.pop_back();
  }

  void write_device_guard(const ir::Device& d) {
    const std::string_view api = d.type == ir::DeviceType::xpu ? "xpu" : "cuda";
    statement();
    out_ += "with torch.";
    out_ += api;
    out_ += "._DeviceGuard(";
    append_integer(out_, *d.index);
    out_ += "):\n";
    out_.append(static_cast<std::size_t>(indent_ + 1) * 4, ' ');
    out_ += "torch.";
    out_ += api;
    out_ += ".set_device(";
    append_integer(out_, *d.index);
    out_ += ")\n";
  }

  [[nodiscard]] std::optional<int> current_device_index() const {
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)
      if (it->device_index) return it->device_index;
    return std::nullopt;
  }

  // ---- errors -----------------------------------------------------------------

  [[noreturn]] void fail(std::string message) const {
    std::string where;
    if (line_index_ != static_cast<std::size_t>(-1) && !kind_.empty()) {
      where = "line " + std::to_string(line_index_) + " (" + std::string(kind_) + ") of ";
    }
    where += top_level_ ? "program " : "subgraph ";
    where += ir::quote_for_diagnostic(program_.name);
    wrapir::detail::fail(Diagnostic{where + ": " + message});
  }
  [[noreturn]] void fail_program(std::string message) const {
    wrapir::detail::fail(Diagnostic{std::string(top_level_ ? "program " : "subgraph ") +
                                 ir::quote_for_diagnostic(program_.name) + ": " + message});
  }

  template <class Table>
  static std::string out_of_range(std::string_view what, std::uint32_t index, const Table& table,
                                  std::string_view plural) {
    return std::string(what) + " id " + std::to_string(index) + " is out of range (the program has " +
           std::to_string(table.size()) + " " + std::string(plural) + ")";
  }

  const ir::BufferDecl& buffer(ir::BufferId id) const {
    if (!program_.contains(id)) fail(out_of_range("buffer", id.index, program_.buffers, "buffers"));
    return program_.buffers[id.index];
  }
  const ir::KernelDecl& kernel(ir::KernelId id) const {
    if (!program_.contains(id)) fail(out_of_range("kernel", id.index, program_.kernels, "kernels"));
    return program_.kernels[id.index];
  }
  const ir::PoolDecl& pool(ir::PoolId id) const {
    if (!program_.contains(id)) fail(out_of_range("pool", id.index, program_.pools, "pools"));
    return program_.pools[id.index];
  }
  const ir::Program& subgraph(ir::GraphId id) const {
    if (!program_.contains(id)) fail(out_of_range("subgraph", id.index, program_.subgraphs, "subgraphs"));
    return program_.subgraphs[id.index];
  }

  [[nodiscard]] bool is_output(ir::BufferId id) const {
    for (const ir::ProgramOutput& o : program_.outputs)
      if (const auto* b = boost::variant2::get_if<ir::BufferArg>(&o); b && b->buffer == id) return true;
    return false;
  }

  /// The callee of an operator call, checked: generated code never calls
  /// anything a program merely names. A real operator namespace or a path
  /// the options' registry declares (`ir::check_operator_path`), no part a
  /// Python keyword (`aten.import.default` would not even compile), and
  /// rooted at a name the module itself binds, which no table entry may
  /// shadow (`is_module_name`). Every operator call goes through here.
  [[nodiscard]] std::string_view operator_callee(const ir::OpName& op) const {
    if (auto err = ir::check_operator_path(op.text, options_.operators)) fail(*err);
    if (const std::string_view kw = python_keyword_part(op.text); !kw.empty())
      fail("operator " + ir::quote_for_diagnostic(op.text) + " has the part '" + std::string(kw) +
           "', a Python keyword");
    const std::string_view root = std::string_view(op.text).substr(0, op.text.find('.'));
    if (!is_operator_namespace(root))
      fail("operator " + ir::quote_for_diagnostic(op.text) + " starts with " + ir::quote_for_diagnostic(root) +
           ", which the generated module does not bind (it binds aten, torch, extern_kernels, inductor_ops and "
           "_quantized)");
    return op.text;
  }

  /// The callee of a kernel launch or a subgraph call: a name of the
  /// module's kernel (`'k'`) or subgraph (`'s'`) table, which
  /// `collect_globals` checked and claimed. Every such call goes through
  /// here, so that no other text is ever called.
  [[nodiscard]] std::string_view global_callee(std::string_view name, char kind) const {
    const auto it = module_.global_kinds.find(name);
    if (it == module_.global_kinds.end() || it->second != kind)
      fail("the generated code would call " + ir::quote_for_diagnostic(name) + ", which is not a " +
           (kind == 'k' ? "kernel" : "subgraph function") + " of the module");
    return name;
  }

  /// A name the emitter makes up (`arg0_1_size`, `cond_fn_0_args`); it must
  /// not be a name the program or the module already uses.
  [[nodiscard]] std::string helper_name(std::string name) const {
    if (local_names_.contains(name) || module_.global_names.contains(name) || is_module_name(name))
      fail("the generated code needs the name " + ir::quote_for_diagnostic(name) +
           ", which the program already uses; rename that entry");
    return name;
  }

  /// Checks every local name of this program's tables once (the module's
  /// names were collected before), so that lines can print names without
  /// checking them again.
  void check_tables() {
    local_names_.reserve(program_.buffers.size() + program_.symbols.size() + program_.pools.size());
    auto claim = [&](std::string_view name, std::string_view what, bool may_be_global) {
      if (auto err = ir::check_name(name, what)) fail_program(*err);
      if (is_module_name(name))
        fail_program(std::string(what) + " name " + ir::quote_for_diagnostic(name) +
                     " would shadow a name of the generated Python module");
      if (!may_be_global && module_.global_names.contains(name))
        fail_program(std::string(what) + " name " + ir::quote_for_diagnostic(name) +
                     " is also the name of a kernel or subgraph function of the module");
      if (!local_names_.insert(name))
        fail_program("the name " + ir::quote_for_diagnostic(name) + " is used by two table entries");
    };
    for (const ir::BufferDecl& b : program_.buffers) {
      claim(b.name, "buffer", b.role == ir::BufferRole::constant);
      if (b.multi_output) continue;
      if (!ir::is_valid(b.layout.dtype)) fail_program("buffer " + ir::quote_for_diagnostic(b.name) + " has an invalid dtype");
      if (auto err = ir::validate(b.layout.device))
        fail_program("buffer " + ir::quote_for_diagnostic(b.name) + ": " + err->message);
      if (b.layout.sizes.size() != b.layout.strides.size())
        fail_program("buffer " + ir::quote_for_diagnostic(b.name) + " has " + std::to_string(b.layout.sizes.size()) +
                     " sizes but " + std::to_string(b.layout.strides.size()) + " strides");
    }
    for (const ir::SymbolDecl& s : program_.symbols) {
      if (!s.symbol || !s.symbol.is_symbol()) fail_program("a symbol table entry is not a symbol");
      claim(s.symbol.name(), "symbol", false);
    }
    for (const ir::PoolDecl& p : program_.pools) {
      claim(p.name, "pool", false);
      if (auto err = ir::validate(p.device)) fail_program("pool " + ir::quote_for_diagnostic(p.name) + ": " + err->message);
    }
    asserted_.assign(program_.buffers.size(), 1);
    pool_names_.assign(program_.pools.size(), {});
    view_room_.assign(program_.buffers.size(), expr::Expr{});
  }

  /// The device type of each kernel's first call: `device_str` of its
  /// Triton definition.
  void scan_kernel_devices() {
    kernel_device_.assign(program_.kernels.size(), std::string_view{});
    for (const ir::Line& line : program_.body) {
      const auto* call = std::get_if<ir::KernelCall>(&line);
      if (call && call->kernel.index < kernel_device_.size() && kernel_device_[call->kernel.index].empty())
        kernel_device_[call->kernel.index] = ir::device_type_name(call->device.type);
    }
  }
  [[nodiscard]] std::string_view kernel_device_type(ir::KernelId id) const {
    const std::string_view d = kernel_device_[id.index];
    return d.empty() || d.front() == '<' ? std::string_view{"cuda"} : d;
  }

  // ---- prologue ---------------------------------------------------------------

  void write_prologue() {
    // Inputs.
    std::vector<std::string_view> input_names;
    for (const ir::ProgramInput& in : program_.inputs) {
      if (const auto* b = boost::variant2::get_if<ir::BufferId>(&in)) {
        input_names.push_back(buffer(*b).name);
      } else {
        const expr::Expr s = boost::variant2::get<expr::Expr>(in);
        if (!s || !s.is_symbol()) fail_program("an input is a symbolic integer that is not a symbol");
        input_names.push_back(s.name());
      }
    }
    if (!input_names.empty()) {
      statement();
      for (std::size_t i = 0; i < input_names.size(); ++i) {
        if (i) out_ += ", ";
        out_ += input_names[i];
      }
      out_ += input_names.size() == 1 ? ", = args\n" : " = args\n";
      statement();
      out_ += "args.clear()\n";
    }
    // Symbols read from input shapes.
    std::vector<std::string> sized, strided;
    for (const ir::SymbolDecl& s : program_.symbols) {
      if (s.origin != ir::SymbolOrigin::input_shape) continue;
      if (!s.source) fail_program("symbol " + ir::quote_for_diagnostic(s.symbol.name()) + " has no source input");
      const std::string_view src = buffer(*s.source).name;
      if (s.path.size() == 1 && (s.path[0].kind == ir::KeyStepKind::size || s.path[0].kind == ir::KeyStepKind::stride)) {
        const bool size = s.path[0].kind == ir::KeyStepKind::size;
        std::vector<std::string>& done = size ? sized : strided;
        std::string tuple = std::string(src) + (size ? "_size" : "_stride");
        if (std::find(done.begin(), done.end(), tuple) == done.end()) {
          tuple = helper_name(std::move(tuple));
          statement();
          out_ += tuple;
          out_ += " = ";
          out_ += src;
          out_ += size ? ".size()\n" : ".stride()\n";
          done.push_back(tuple);
        }
        statement();
        out_ += s.symbol.name();
        out_ += " = ";
        out_ += tuple;
        out_ += '[';
        append_integer(out_, s.path[0].value);
        out_ += "]\n";
      } else {
        statement();
        out_ += s.symbol.name();
        out_ += " = ";
        append_key_path(src, s.path);
        out_ += '\n';
      }
    }
    // Input asserts.
    for (const ir::ProgramInput& in : program_.inputs) {
      const auto* id = boost::variant2::get_if<ir::BufferId>(&in);
      if (!id || options_.size_asserts == SizeAsserts::none) continue;
      const ir::BufferDecl& b = buffer(*id);
      if (b.multi_output) continue;
      // Comparing the strides of an empty tensor is meaningless (Inductor
      // skips those too).
      bool empty = false;
      for (expr::Expr s : b.layout.sizes) empty = empty || s.is_integer(0);
      if (empty) continue;
      if (options_.size_asserts == SizeAsserts::eager) {
        write_input_assert(b);
      } else if (asserted_[id->index]) {
        asserted_[id->index] = 0;
        ++pending_asserts_;
      }
    }
    // One device for the whole body: guard it as Inductor does.
    if (options_.device_guard) {
      std::optional<int> device;
      bool several = false, has_context_lines = false;
      auto note = [&](const ir::Device& d) {
        if (d.type != ir::DeviceType::cuda || !d.index) return;
        if (device && *device != *d.index) several = true;
        device = d.index;
      };
      for (const ir::BufferDecl& b : program_.buffers)
        if (!b.multi_output) note(b.layout.device);
      for (const ir::Line& line : program_.body) {
        if (const auto* c = std::get_if<ir::KernelCall>(&line)) note(c->device);
        has_context_lines = has_context_lines || std::holds_alternative<ir::EnterDeviceContext>(line);
      }
      if (device && !several && !has_context_lines) {
        write_device_guard(ir::Device{ir::DeviceType::cuda, device});
        open_block(Block::auto_device, "the device guard", true, device);
        blocks_.back().has_statement = true;
        auto_guard_ = true;
      }
    }
  }

  void write_input_assert(const ir::BufferDecl& b) {
    statement();
    out_ += "assert_size_stride(";
    out_ += b.name;
    out_ += ", ";
    append_shape(b.layout.sizes, "a size");
    out_ += ", ";
    append_shape(b.layout.strides, "a stride");
    out_ += ")\n";
  }

  // Deferred asserts: every buffer a line mentions, found through the
  // line's reflected fields.
  template <class F>
  static void for_each_buffer(const ir::Arg& a, F& f) {
    if (const auto* b = a.get_if<ir::BufferArg>()) f(b->buffer);
    else if (const auto* l = a.get_if<ir::ArgList>())
      for (const ir::Arg& item : l->items) for_each_buffer(item, f);
  }
  template <class T, class F>
  static void for_each_buffer(const T& v, F& f) {
    if constexpr (std::is_same_v<T, ir::BufferId>) f(v);
    else if constexpr (std::is_same_v<T, ir::BufferArg>) f(v.buffer);
    else if constexpr (std::is_same_v<T, ir::NamedArg>) for_each_buffer(v.value, f);
    else if constexpr (std::is_same_v<T, ir::NamedBuffer>) f(v.buffer.buffer);
    else if constexpr (requires { v.has_value(); *v; }) {
      if (v) for_each_buffer(*v, f);
    } else if constexpr (requires { v.begin(); v.end(); typename T::value_type; } && !std::is_same_v<T, std::string>) {
      for (const auto& item : v) for_each_buffer(item, f);
    }
  }

  template <class T>
  void assert_inputs_read_by(const T& line) {
    auto visit = [&](ir::BufferId id) {
      if (id.index >= asserted_.size() || asserted_[id.index]) return;
      asserted_[id.index] = 1;
      --pending_asserts_;
      write_input_assert(program_.buffers[id.index]);
    };
    ir::for_each_field(line, [&](std::string_view, const auto& field) {
      using F = std::decay_t<decltype(field)>;
      if constexpr (std::is_same_v<F, ir::Arg>) for_each_buffer(field, visit);
      else for_each_buffer<F>(field, visit);
    });
  }

  // ---- streams ----------------------------------------------------------------

  int stream_device(const ir::Device& d) const {
    if (d.type != ir::DeviceType::cuda || !d.index)
      fail("streams need a CUDA device with an index, not " + ir::quote_for_diagnostic(ir::to_string(d)));
    return *d.index;
  }

  static std::string stream_name(int device, std::uint32_t stream) {
    std::string name = "stream";
    append_integer(name, device);
    if (stream != 0) {
      name += '_';
      append_integer(name, stream);
    }
    return name;
  }

  void append_side_stream(std::optional<int> device, std::uint32_t stream) {
    out_ += "side_streams[(";
    if (device) append_integer(out_, *device);
    else out_ += "torch.cuda.current_device()";
    out_ += ", ";
    append_integer(out_, stream);
    out_ += ")]";
  }

  void write_stream_fetch(int device, std::uint32_t stream, std::string_view name) {
    if (name != "raw_stream") (void)helper_name(std::string(name));  // raw_stream is reserved
    statement();
    out_ += name;
    if (stream == 0) {
      module_.uses_raw_stream = true;
      out_ += " = get_raw_stream(";
      append_integer(out_, device);
      out_ += ")\n";
    } else {
      module_.uses_side_streams = true;
      out_ += " = ";
      append_side_stream(device, stream);
      out_ += ".cuda_stream\n";
    }
  }

  void remember_stream(int device, std::uint32_t stream) {
    for (const auto& [d, s] : fetched_streams_)
      if (d == device && s == stream) return;
    fetched_streams_.emplace_back(device, stream);
  }

  /// The variable holding the raw stream for a launch: fetched once per
  /// scope (`stream0 = get_raw_stream(0)`); inside a side-stream context
  /// the current stream is fetched afresh per launch, as Inductor does.
  std::string stream_for(const ir::Device& d, std::uint32_t stream) {
    const int device = stream_device(d);
    bool in_stream_context = false;
    for (const Block& b : blocks_) in_stream_context = in_stream_context || b.kind == Block::stream;
    if (stream == 0 && in_stream_context) {
      write_stream_fetch(device, 0, "raw_stream");
      return "raw_stream";
    }
    std::string name = stream_name(device, stream);
    for (const auto& [fd, fs] : fetched_streams_)
      if (fd == device && fs == stream) return name;
    write_stream_fetch(device, stream, name);
    remember_stream(device, stream);
    return name;
  }

  // ---- subgraph calls ---------------------------------------------------------

  void append_arg_list(const std::vector<ir::Arg>& first, const std::vector<ir::Arg>& second) {
    bool any = false;
    for (const std::vector<ir::Arg>* list : {&first, &second})
      for (const ir::Arg& a : *list) {
        if (any) out_ += ", ";
        append_arg(a);
        any = true;
      }
  }

  void subgraph_call(const std::string& name, const std::vector<ir::Arg>& args, const std::vector<ir::Arg>& more,
                     const std::vector<ir::BufferId>& outputs) {
    const std::string list = helper_name(name + "_args");
    statement();
    out_ += list;
    out_ += " = [";
    append_arg_list(args, more);
    out_ += "]\n";
    statement();
    if (!outputs.empty()) {
      out_ += '(';
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (i) out_ += ", ";
        out_ += buffer(outputs[i]).name;
      }
      out_ += outputs.size() == 1 ? ",) = " : ") = ";
    }
    out_ += global_callee(name, 's');
    out_ += '(';
    out_ += list;
    out_ += ")\n";
  }

  // ---- values -----------------------------------------------------------------

  void append_literal(std::string_view s, std::string_view what) { append_literal_to(out_, s, what); }
  void append_literal_to(std::string& out, std::string_view s, std::string_view what) const {
    if (!append_string_literal(out, s))
      fail(std::string(what) + " " + ir::quote_for_diagnostic(s) + " is not valid UTF-8");
  }
  void append_source_to(std::string& out, std::string_view source, std::string_view kernel_name) const {
    if (!append_source_literal(out, source))
      fail("the source of kernel " + ir::quote_for_diagnostic(kernel_name) +
           " is not valid UTF-8, so no Python string holds it");
  }

  void append_expr(expr::Expr e, std::string_view what) {
    if (!e) fail(std::string(what) + " is a null expression");
    if (e.is_symbol()) out_ += e.name();
    else if (e.is_integer()) append_integer(out_, e.value());
    else expr::print_python(e, out_);
  }

  /// `e` as a factor of a product: parenthesised unless atomic.
  void append_factor(expr::Expr e, std::string_view what) {
    if (e && (e.is_symbol() || (e.is_integer() && e.value() >= 0))) {
      append_expr(e, what);
      return;
    }
    out_ += '(';
    append_expr(e, what);
    out_ += ')';
  }

  void append_shape(const std::vector<expr::Expr>& dims, std::string_view what) {
    append_shape_tuple(out_, dims.size(), [&](std::size_t i) { append_expr(dims[i], what); });
  }

  void append_reinterpret(std::string_view base, const std::vector<expr::Expr>& sizes,
                          const std::vector<expr::Expr>& strides, expr::Expr offset) {
    if (sizes.size() != strides.size())
      fail("a view of " + ir::quote_for_diagnostic(base) + " has " + std::to_string(sizes.size()) + " sizes but " +
           std::to_string(strides.size()) + " strides");
    out_ += "reinterpret_tensor(";
    out_ += base;
    out_ += ", ";
    append_shape(sizes, "a view size");
    out_ += ", ";
    append_shape(strides, "a view stride");
    out_ += ", ";
    append_expr(offset, "a view offset");
    out_ += ')';
  }

  void append_buffer_arg(const ir::BufferArg& b) {
    const ir::BufferDecl& d = buffer(b.buffer);
    if (!b.view) {
      out_ += d.name;
      return;
    }
    append_reinterpret(d.name, b.view->sizes, b.view->strides, b.view->offset);
  }

  void append_arg(const ir::Arg& a, int depth = 0) {
    if (depth > 64) fail("an argument nests lists more than 64 deep");
    boost::variant2::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, ir::None>) out_ += "None";
          else if constexpr (std::is_same_v<V, ir::BufferArg>) append_buffer_arg(v);
          else if constexpr (std::is_same_v<V, expr::Expr>) append_expr(v, "an argument");
          else if constexpr (std::is_same_v<V, std::int64_t>) append_integer(out_, v);
          else if constexpr (std::is_same_v<V, double>) append_float(out_, v);
          else if constexpr (std::is_same_v<V, bool>) out_ += v ? "True" : "False";
          else if constexpr (std::is_same_v<V, std::string>) append_literal(v, "a string argument");
          else if constexpr (std::is_same_v<V, ir::Device>) {
            if (auto err = ir::validate(v)) fail(err->message);
            out_ += ir::python_repr(v);
          } else if constexpr (std::is_same_v<V, ir::DType>) {
            if (!ir::is_valid(v)) fail("an argument is not a valid dtype");
            out_ += ir::torch_name(v);
          } else {
            out_ += '[';
            for (std::size_t i = 0; i < v.items.size(); ++i) {
              if (i) out_ += ", ";
              append_arg(v.items[i], depth + 1);
            }
            out_ += ']';
          }
        },
        a.value);
  }

  void append_args(const std::vector<ir::Arg>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) out_ += ", ";
      append_arg(args[i]);
    }
  }

  /// `, name=value` for each keyword argument; `reserved` is a keyword the
  /// call adds itself (`out`).
  void append_kwargs(const std::vector<ir::NamedArg>& kwargs, bool after_positional, std::string_view reserved) {
    for (std::size_t i = 0; i < kwargs.size(); ++i) {
      const std::string& name = kwargs[i].name.text;
      if (auto err = ir::check_name(name, "keyword argument")) fail(*err);
      if (name == reserved) fail("the keyword argument " + ir::quote_for_diagnostic(name) + " is set by the call itself");
      for (std::size_t j = 0; j < i; ++j)
        if (kwargs[j].name.text == name) fail("the keyword argument " + ir::quote_for_diagnostic(name) + " is given twice");
      if (after_positional || i) out_ += ", ";
      out_ += name;
      out_ += '=';
      append_arg(kwargs[i].value);
    }
  }

  void append_ctypes_arg(const ir::Arg& a, ir::ParamType type, std::string_view kernel_name) {
    if (type.pointer) {
      if (a.holds<ir::None>()) {
        out_ += "None";
        return;
      }
      out_ += "c_void_p(";
      append_arg(a);
      out_ += ".data_ptr())";
      return;
    }
    std::string_view ctype;
    switch (type.dtype) {
      case ir::DType::int32: ctype = "c_int"; break;
      case ir::DType::int64: ctype = "c_long"; break;
      case ir::DType::float32: ctype = "c_float"; break;
      case ir::DType::float64: ctype = "c_double"; break;
      case ir::DType::bool_: ctype = "c_bool"; break;
      default:
        fail("kernel " + ir::quote_for_diagnostic(kernel_name) + " takes a scalar of type " + ir::to_string(type) +
             ", which a CUDA launch from Python cannot pass");
    }
    if (ctype != "c_int" && ctype != "c_long") module_.uses_ctypes_floats = true;
    out_ += ctype;
    out_ += '(';
    append_arg(a);
    out_ += ')';
  }

  void reject_explicit_grid(const ir::LaunchGrid& g, std::string_view kernel_name) const {
    if (boost::variant2::holds_alternative<ir::ExplicitGrid>(g))
      fail("kernel " + ir::quote_for_diagnostic(kernel_name) +
           " is not a Triton kernel; the Python emitter passes explicit grids to Triton launchers only");
  }

  void append_key_path(std::string_view base, const ir::KeyPath& path) {
    std::string text(base);
    for (const ir::KeyStep& step : path) {
      switch (step.kind) {
        case ir::KeyStepKind::index:
          text += '[';
          append_integer(text, step.value);
          text += ']';
          break;
        case ir::KeyStepKind::key:
          text += '[';
          append_literal_to(text, step.key, "a dict key");
          text += ']';
          break;
        case ir::KeyStepKind::size:
        case ir::KeyStepKind::stride:
          text += step.kind == ir::KeyStepKind::size ? ".size(" : ".stride(";
          append_integer(text, step.value);
          text += ')';
          break;
        case ir::KeyStepKind::storage_offset: text += ".storage_offset()"; break;
        case ir::KeyStepKind::convert_to_int: text = "(1 if " + text + " else 0)"; break;
        case ir::KeyStepKind::divide_by:
          if (step.value <= 0) fail("a divide_by step needs a positive divisor");
          text += ".__floordiv__(";
          append_integer(text, step.value);
          text += ')';
          break;
        default: fail("a key path has an invalid step kind");
      }
    }
    out_ += text;
  }

  /// `empty_strided_cuda(sizes, strides, dtype)` when the helper allocates
  /// on the right device (the CPU, a device without index, or the device
  /// the innermost guard selects); otherwise the generic
  /// `empty_strided(sizes, strides, device='cuda:1', dtype=...)`.
  void append_allocation(const ir::Layout& l) {
    if (l.storage_offset && !l.storage_offset.is_integer(0)) {
      // empty_strided has no storage offset: allocate the storage flat and
      // view it.
      out_ += "reinterpret_tensor(";
      append_empty_strided_call(l.device, l.dtype, [&] {
        out_ += "(";
        append_storage_elements(l);
        out_ += ", ), (1, )";
      });
      out_ += ", ";
      append_shape(l.sizes, "a size");
      out_ += ", ";
      append_shape(l.strides, "a stride");
      out_ += ", ";
      append_expr(l.storage_offset, "the storage offset");
      out_ += ')';
      return;
    }
    append_empty_strided_call(l.device, l.dtype, [&] {
      append_shape(l.sizes, "a size");
      out_ += ", ";
      append_shape(l.strides, "a stride");
    });
  }

  /// `storage_offset + 1 + sum((size_i - 1)*stride_i)`, as text.
  void append_storage_elements(const ir::Layout& l) {
    append_expr(l.storage_offset, "the storage offset");
    out_ += " + 1";
    for (std::size_t i = 0; i < l.sizes.size(); ++i) {
      out_ += " + (";
      append_expr(l.sizes[i], "a size");
      out_ += " - 1)*";
      append_factor(l.strides[i], "a stride");
    }
  }

  void append_empty_strided_1d(expr::Expr count, ir::DType dtype, const ir::Device& device, std::string_view what) {
    append_empty_strided_call(device, dtype, [&] {
      out_ += '(';
      append_expr(count, what);
      out_ += ", ), (1, )";
    });
  }

  template <class F>
  void append_empty_strided_call(const ir::Device& d, ir::DType dtype, F&& shape_and_strides) {
    if (!ir::is_valid(dtype)) fail("a layout has an invalid dtype");
    const bool specialised = d.type == ir::DeviceType::cpu ||
                             ((d.type == ir::DeviceType::cuda || d.type == ir::DeviceType::xpu) &&
                              (!d.index || current_device_index() == d.index));
    if (specialised) {
      out_ += "empty_strided_";
      out_ += ir::device_type_name(d.type);
      out_ += '(';
      shape_and_strides();
      out_ += ", ";
      out_ += ir::torch_name(dtype);
      out_ += ')';
      return;
    }
    out_ += "empty_strided(";
    shape_and_strides();
    out_ += ", device=";
    append_literal(ir::to_string(d), "a device");
    out_ += ", dtype=";
    out_ += ir::torch_name(dtype);
    out_ += ')';
  }

  // ---- view bounds ------------------------------------------------------------

  /// The bytes from the first element of `b` to the end of its storage
  /// (ir/view_extent.hpp): what a Reinterpret left it, or its own span.
  [[nodiscard]] expr::Expr room_of(ir::BufferId b) const {
    const ir::BufferDecl& d = buffer(b);
    if (view_room_[b.index]) return view_room_[b.index];
    if (d.multi_output) fail("buffer " + ir::quote_for_diagnostic(d.name) + " holds a multi-output result, which has no layout to view");
    return ir::room_bytes(d.layout);
  }

  /// Neither reinterpret_tensor nor alloc_from_pool checks bounds: a view
  /// that provably reaches past its storage is a diagnostic, and one whose
  /// bounds depend on the symbols gets a guard that raises before the view
  /// is taken, naming the view and both sizes.
  void guard_extent(const ir::ViewExtent& e, const std::string& what) {
    if (e.fit == ir::ViewFit::exceeds) fail(what + " reaches past the storage it views: " + e.problem);
    if (e.fit != ir::ViewFit::unknown) return;
    statement();
    out_ += "if not (";
    for (std::size_t i = 0; i < e.open_conditions.size(); ++i) {
      if (i) out_ += " and ";
      append_factor(e.open_conditions[i].lhs, "a bound");
      out_ += " <= ";
      append_factor(e.open_conditions[i].rhs, "a bound");
    }
    out_ += "): raise RuntimeError(";
    append_literal(what + " reaches past the storage it views: it needs %d bytes, the storage has %d", "a message");
    out_ += " % (";
    append_expr(e.needed_bytes, "a bound");
    out_ += ", ";
    append_expr(e.available_bytes, "a bound");
    out_ += "))\n";
  }

  void guard_view(const ir::BufferArg& a) {
    if (!a.view) return;
    const ir::BufferDecl& d = buffer(a.buffer);
    const ir::View& v = *a.view;
    if (v.sizes.size() != v.strides.size())
      fail("a view of " + ir::quote_for_diagnostic(d.name) + " has " + std::to_string(v.sizes.size()) + " sizes but " +
           std::to_string(v.strides.size()) + " strides");
    for (const expr::Expr e : v.sizes) if (!e) fail("a view size is a null expression");
    for (const expr::Expr e : v.strides) if (!e) fail("a view stride is a null expression");
    if (!v.offset) fail("a view offset is a null expression");
    guard_extent(ir::check_view_extent(v.sizes, v.strides, v.offset, d.layout.dtype, room_of(a.buffer)),
                 "a view of " + d.name);
  }

  // Every buffer-argument view a line passes, found through its reflected
  // fields, is guarded before the line.
  template <class F>
  static void for_each_buffer_arg(const ir::Arg& a, F& f, int depth = 0) {
    if (const auto* b = a.get_if<ir::BufferArg>()) f(*b);
    else if (const auto* l = a.get_if<ir::ArgList>(); l && depth <= 64)  // deeper lists fail in append_arg
      for (const ir::Arg& item : l->items) for_each_buffer_arg(item, f, depth + 1);
  }
  template <class T, class F>
  static void for_each_buffer_arg(const T& v, F& f) {
    if constexpr (std::is_same_v<T, ir::BufferArg>) f(v);
    else if constexpr (std::is_same_v<T, ir::NamedArg>) for_each_buffer_arg(v.value, f);
    else if constexpr (std::is_same_v<T, ir::NamedBuffer>) f(v.buffer);
    else if constexpr (requires { v.has_value(); *v; }) {
      if (v) for_each_buffer_arg(*v, f);
    } else if constexpr (requires { v.begin(); v.end(); typename T::value_type; } && !std::is_same_v<T, std::string>) {
      for (const auto& item : v) for_each_buffer_arg(item, f);
    }
  }

  template <class T>
  void guard_argument_views(const T& line) {
    auto guard = [&](const ir::BufferArg& a) { guard_view(a); };
    ir::for_each_field(line, [&](std::string_view, const auto& field) {
      using F = std::decay_t<decltype(field)>;
      if constexpr (std::is_same_v<F, ir::Arg>) for_each_buffer_arg(field, guard);
      else for_each_buffer_arg<F>(field, guard);
    });
  }

  // ---- debug printer ----------------------------------------------------------

  [[nodiscard]] bool debug_wraps(std::string_view kernel_name) const {
    if (options_.debug_level != 1 && options_.debug_level != 2) return false;
    if (module_.debug_filter.empty()) return true;
    const std::string name = lowercase(kernel_name);
    return std::find(module_.debug_filter.begin(), module_.debug_filter.end(), name) != module_.debug_filter.end();
  }

  /// Lines before or after a launch. Level 1 saves each tensor argument;
  /// level 2 prints every argument (only buffers for extern calls).
  void debug_lines(std::string_view when, std::string_view kernel_name, const std::vector<ir::Arg>& args,
                   const std::vector<ir::ParamType>* types, bool buffers_only) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const ir::Arg& a = args[i];
      const auto* b = a.get_if<ir::BufferArg>();
      if ((buffers_only || options_.debug_level == 1) && !b) continue;
      if (options_.debug_level == 1 && types && i < types->size() && !(*types)[i].pointer) continue;
      std::string value;
      value.swap(out_);
      append_arg(a);
      value.swap(out_);
      debug_line(when, kernel_name, value, b ? std::string_view(buffer(b->buffer).name) : std::string_view(value));
    }
  }

  void debug_line(std::string_view when, std::string_view kernel_name, std::string_view value,
                  std::string_view label) {
    statement();
    if (options_.debug_level == 1) {
      std::string path = options_.debug_save_directory;
      path += '/';
      path += when;
      path += '_';
      path += kernel_name;
      path += '_';
      path += label;
      path += ".pt";
      out_ += "torch.save(";
      out_ += value;
      out_ += ", ";
      append_literal(path, "the debug save path");
      out_ += ")\n";
    } else {
      std::string message = "inductor: ";
      message += when;
      message += " - ";
      message += kernel_name;
      message += " - ";
      message += value;
      out_ += "_print_debugging_tensor_value_info(";
      append_literal(message, "a debug message");
      out_ += ", ";
      out_ += value;
      out_ += ")\n";
    }
  }

  void debug_extern(std::string_view when, std::string_view op, const std::vector<ir::Arg>& args,
                    const std::vector<ir::NamedArg>& kwargs, const ir::BufferArg* out) {
    std::vector<ir::Arg> all = args;
    for (const ir::NamedArg& k : kwargs) all.push_back(k.value);
    if (out) all.emplace_back(*out);
    debug_lines(when, op, all, nullptr, true);
  }

  ModuleState& module_;
  const PythonOptions& options_;
  const ir::Program& program_;
  std::string& out_;
  std::string_view function_name_;
  bool top_level_;
  [[maybe_unused]] int depth_;

  int indent_ = 0;
  std::vector<Block> blocks_;
  bool auto_guard_ = false;
  std::size_t line_index_ = 0;
  std::string_view kind_{};
  NameSet local_names_;
  std::vector<char> kernel_called_;
  std::vector<std::string_view> kernel_device_;
  std::vector<std::vector<std::string_view>> pool_names_;
  std::vector<std::pair<int, std::uint32_t>> fetched_streams_;
  std::vector<char> asserted_;
  /// The room (ir/view_extent.hpp) of each buffer a Reinterpret defined.
  std::vector<expr::Expr> view_room_;
  std::size_t pending_asserts_ = 0;
};

inline void write_imports(std::string& out, const ModuleState& m, const PythonOptions& options) {
  out +=
      "from ctypes import c_void_p, c_long, c_int\n"
      "import torch\n"
      "import math\n"
      "import random\n"
      "import os\n"
      "import tempfile\n"
      "from math import inf, nan\n"
      "from cmath import nanj\n"
      "from torch._inductor.hooks import run_intermediate_hooks\n"
      "from torch._inductor.utils import maybe_profile\n"
      "from torch._inductor.codegen.memory_planning import _align as align\n"
      "from torch import device, empty_strided\n"
      "from torch._inductor.async_compile import AsyncCompile\n"
      "from torch._inductor.select_algorithm import extern_kernels\n";
  if (m.uses_ctypes_floats) out += "from ctypes import c_float, c_double, c_bool\n";
  if (m.uses_side_streams) out += "import collections\n";
  if (options.debug_level > 0)
    out += "from torch._inductor.codegen.debug_utils import _print_debugging_tensor_value_info\n";
  if (m.uses_multi_kernel) out += "from torch._inductor.codegen.multi_kernel import MultiKernelCall\n";
  if (m.uses_triton)
    out +=
        "import triton\n"
        "import triton.language as tl\n"
        "from torch._inductor.runtime.triton_heuristics import start_graph, end_graph\n";
  if (m.uses_raw_stream) out += "from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n";
}

inline void write_header(std::string& out, const ModuleState& m, const PythonOptions& options) {
  out +=
      "\n"
      "aten = torch.ops.aten\n"
      "inductor_ops = torch.ops.inductor\n"
      "_quantized = torch.ops._quantized\n"
      "assert_size_stride = torch._C._dynamo.guards.assert_size_stride\n"
      "assert_alignment = torch._C._dynamo.guards.assert_alignment\n"
      "empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu\n"
      "empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned\n"
      "empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda\n"
      "empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu\n"
      "empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia\n"
      "reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor\n"
      "alloc_from_pool = torch.ops.inductor._alloc_from_pool\n"
      "async_compile = AsyncCompile()\n";
  if (m.uses_p2p) out += "empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p\n";
  // Created lazily on the device current at first use (inside the call).
  if (m.uses_side_streams) out += "side_streams = collections.defaultdict(torch.cuda.Stream)\n";
  out += m.constant_placeholders;
  if (options.debug_level == 1) {
    out += "os.makedirs(";
    (void)append_string_literal(out, options.debug_save_directory);  // checked before rendering
    out += ", exist_ok=True)\n";
  }
  out += m.kernel_definitions;
  out += m.multi_kernel_definitions;
}

/// `get_args()`, `benchmark_compiled_module()` and the `__main__` block.
inline void write_harness(std::string& out, const ir::Program& p, const ModuleState& m) {
  const expr::Bindings hints = ir::hint_bindings(p, 42);
  auto value = [&](expr::Expr e, std::string_view what, std::string_view name) {
    auto v = expr::eval(e, hints);
    if (!v)
      wrapir::detail::fail(Diagnostic{"program " + ir::quote_for_diagnostic(p.name) + ": get_args(): " +
                                   std::string(what) + " of " + ir::quote_for_diagnostic(name) +
                                   " has no value at the symbols' hints: " + v.error().message});
    append_integer(out, *v);
  };
  auto random_tensor = [&](const ir::BufferDecl& b) {
    out += "rand_strided(";
    append_shape_tuple(out, b.layout.sizes.size(), [&](std::size_t i) { value(b.layout.sizes[i], "a size", b.name); });
    out += ", ";
    append_shape_tuple(out, b.layout.strides.size(),
                       [&](std::size_t i) { value(b.layout.strides[i], "a stride", b.name); });
    out += ", device=";
    (void)append_string_literal(out, ir::to_string(b.layout.device));  // ASCII
    out += ", dtype=";
    out += ir::torch_name(b.layout.dtype);
    out += ")\n";
  };
  out += "\n\ndef get_args():\n    from torch._dynamo.testing import rand_strided\n";
  for (const ir::BufferDecl* constant : m.constants) {
    const ir::BufferDecl& b = *constant;
    out += "    global ";
    out += b.name;
    out += "\n    ";
    out += b.name;
    out += " = ";
    random_tensor(b);
  }
  std::string names;
  for (const ir::ProgramInput& in : p.inputs) {
    if (!names.empty()) names += ", ";
    out += "    ";
    if (const auto* id = boost::variant2::get_if<ir::BufferId>(&in)) {
      const ir::BufferDecl& b = p.buffers[id->index];
      names += b.name;
      out += b.name;
      out += " = ";
      random_tensor(b);
    } else {
      const expr::Expr s = boost::variant2::get<expr::Expr>(in);
      names += s.name();
      out += s.name();
      out += " = ";
      value(s, "the value", s.name());
      out += '\n';
    }
  }
  out += "    return [";
  out += names;
  out +=
      "]\n"
      "\n\n"
      "def benchmark_compiled_module(args, times=10, repeat=10):\n"
      "    from torch._inductor.utils import print_performance\n"
      "    fn = lambda: call(list(args))\n"
      "    return print_performance(fn, times=times, repeat=repeat)\n"
      "\n\n"
      "if __name__ == \"__main__\":\n"
      "    from torch._inductor.wrapper_benchmark import compiled_module_main\n"
      "    args = get_args()\n"
      "    compiled_module_main(";
  (void)append_string_literal(out, p.name);  // a checked name
  out += ", lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))\n";
}

inline void write_module(const ir::Program& program, const PythonOptions& options, std::string& out) {
  if (options.debug_level < 0 || options.debug_level > 3)
    wrapir::detail::fail(Diagnostic{"debug_level " + std::to_string(options.debug_level) +
                                 " is not a debug printer level (0-3)"});
  if (options.debug_level == 1 && (!is_valid_utf8(options.debug_save_directory) ||
                                   options.debug_save_directory.find('\0') != std::string::npos))
    wrapir::detail::fail(Diagnostic{"debug_save_directory is not valid UTF-8 text"});
  if (auto err = ir::check_name(program.name, "program"))
    wrapir::detail::fail(Diagnostic{*err});
  ModuleState m;
  m.options = &options;
  for (const std::string& k : options.debug_kernel_filter) m.debug_filter.push_back(lowercase(k));
  collect_globals(m, program, 0);
  std::string call;
  call.reserve(64 * ir::total_lines(program) + 1024);
  FunctionEmitter main{m, program, call, "call", true, 0};
  main.run();
  for (std::string_view name : m.called_kernels)
    if (!m.defined_kernels.contains(name))
      wrapir::detail::fail(Diagnostic{"kernel " + ir::quote_for_diagnostic(name) +
                                   " is called but no KernelDefinition or MultiKernelDefinition defines it"});
  out.reserve(out.size() + call.size() + m.kernel_definitions.size() + m.subgraph_functions.size() + 4096);
  write_imports(out, m, options);
  write_header(out, m, options);
  out += m.subgraph_functions;
  out += "\n\nasync_compile.wait(globals())\ndel async_compile\n\n\n";
  out += call;
  if (options.benchmark_harness) write_harness(out, program, m);
}

}  // namespace detail

inline Result<void> to_python(const ir::Program& program, std::string& out, const PythonOptions& options) {
  const std::size_t size = out.size();
  Result<void> done = wrapir::detail::catch_failure([&] {
    try {
      detail::write_module(program, options, out);
    } catch (const expr::Error& e) {
      wrapir::detail::fail(std::string("program ") + ir::quote_for_diagnostic(program.name) + ": " + e.what());
    }
  });
  if (!done) out.resize(size);
  return done;
}

inline Result<std::string> to_python(const ir::Program& program, const PythonOptions& options) {
  std::string out;
  if (Result<void> done = to_python(program, out, options); !done) return std::move(done).error();
  return out;
}

}  // namespace wrapir::python
