#pragma once
/// \file
/// The Python emitter's module-level state (emit/python.hpp): the names the
/// generated module binds itself, the set of names a program's tables claim,
/// and what the module as a whole needs (its kernel, subgraph and constant
/// definitions and which imports they use), filled while the functions are
/// rendered and assembled at the end (emit/impl/python.ipp).

#include <wrapir/emit/python.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace wrapir::python::detail {


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

/// Whether a CUDA launch passes a scalar of this type through one of the
/// ctypes the module imports only when used (`c_float`, `c_double`,
/// `c_bool`; `c_int` and `c_long` are always imported).
[[nodiscard]] inline bool is_ctypes_float(ir::ParamType t) noexcept {
  return !t.pointer && (t.dtype == ir::DType::float32 || t.dtype == ir::DType::float64 || t.dtype == ir::DType::bool_);
}

[[nodiscard]] inline std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// The names of one program's buffer, symbol and pool tables as a set:
/// open addressing over 32-bit entry numbers (the buffers, then the
/// symbols, then the pools), the text staying in the program, so that a
/// program of a million names costs 8 to 16 bytes a name (half the slots
/// free at most) rather than 32 to 64 for string views, and checking them
/// allocates once instead of once per name.
class TableNameSet {
 public:
  explicit TableNameSet(const ir::Program& program) : program_(&program) {}

  /// How many entries the tables have; entry numbers are below it.
  [[nodiscard]] std::size_t entries() const noexcept {
    return program_->buffers.size() + program_->symbols.size() + program_->pools.size();
  }
  /// The name of entry `e` (`e < entries()`).
  [[nodiscard]] std::string_view name(std::uint32_t e) const {
    const ir::Program& p = *program_;
    if (e < p.buffers.size()) return p.buffers[e].name;
    e -= static_cast<std::uint32_t>(p.buffers.size());
    if (e < p.symbols.size()) return p.symbols[e].symbol.name();
    return p.pools[e - p.symbols.size()].name;
  }

  void reserve(std::size_t n) {
    std::size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    if (capacity > slots_.size()) rehash(capacity);
  }
  /// Adds entry `e`; false when its name was there already.
  bool insert(std::uint32_t e) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
    const std::size_t i = slot(name(e));
    if (slots_[i] != 0) return false;
    slots_[i] = e + 1;
    ++size_;
    return true;
  }
  [[nodiscard]] bool contains(std::string_view name) const {
    return !slots_.empty() && slots_[slot(name)] != 0;
  }

 private:
  /// The slot holding `text`, or the empty slot where it would go.
  [[nodiscard]] std::size_t slot(std::string_view text) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = std::hash<std::string_view>{}(text) & mask;
    while (slots_[i] != 0 && name(slots_[i] - 1) != text) i = (i + 1) & mask;
    return i;
  }
  void rehash(std::size_t capacity) {
    std::vector<std::uint32_t> old = std::move(slots_);
    slots_.assign(capacity, 0);
    size_ = 0;
    for (std::uint32_t e : old)
      if (e != 0) insert(e - 1);
  }

  const ir::Program* program_;
  std::vector<std::uint32_t> slots_;  // entry number + 1; 0 is free
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

  /// The flags that choose imports and header lines, for comparing.
  [[nodiscard]] std::array<bool, 6> uses() const noexcept {
    return {uses_triton, uses_raw_stream, uses_multi_kernel, uses_p2p, uses_side_streams, uses_ctypes_floats};
  }
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

}  // namespace wrapir::python::detail
