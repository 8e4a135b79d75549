#pragma once
/// \file
/// The Python function emitter's frame (emit/python.hpp): running one
/// function (tables checked, subgraphs lifted, lines rendered), its `def`
/// line and `return`, the table lookups and callee checks every line goes
/// through, and the diagnostics that name the line and the program.

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/emit/detail/python_keywords.hpp>
#include <wrapir/emit/emit.hpp>
#include <wrapir/ir/names.hpp>

#include <boost/variant2/variant.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace wrapir::python::detail {

inline void FunctionEmitter::prepare() {
  check_tables();
  for (const ir::Program& sub : program_.subgraphs) {
    std::string& text = module_.subgraph_functions;
    text += "\n\n";
    FunctionEmitter nested{module_, sub, text, sub.name, false, depth_ + 1};
    nested.run();
  }
  scan_kernel_devices();
  kernel_called_.assign(program_.kernels.size(), 0);
  if (top_level_) declare_module_needs();
}

inline void FunctionEmitter::render_body() {
  const std::array<bool, 6> declared = module_.uses();
  wrapir::emit(program_, *this);
  // The header went out before the body: a flag the body set that
  // `declare_module_needs` did not would be an import missing from it.
  if (definitions_declared_ && module_.uses() != declared)
    fail_program("internal error: the body needs an import that was not declared before it");
  for (std::size_t i = 0; i < kernel_called_.size(); ++i)
    if (kernel_called_[i]) module_.called_kernels.push_back(program_.kernels[i].name);
}

inline void FunctionEmitter::declare_module_needs() {
  const auto uses_stream = [&](std::uint32_t stream) {
    (stream == 0 ? module_.uses_raw_stream : module_.uses_side_streams) = true;
  };
  for (const ir::Line& line : program_.body) {
    std::visit(
        [&]<class T>(const T& l) {
          if constexpr (std::is_same_v<T, ir::KernelDefinition> || std::is_same_v<T, ir::MultiKernelDefinition>) {
            kind_ = T::kind;
            try {
              render(l);
            } catch (const expr::Error& e) {
              fail(e.what());
            }
          } else if constexpr (std::is_same_v<T, ir::KernelCall>) {
            // As render(KernelCall): Triton and CUDA launches fetch a
            // stream; a CUDA launch passes scalars through ctypes. A call
            // that render() refuses needs nothing.
            if (!program_.contains(l.kernel) || (!l.arg_types.empty() && l.arg_types.size() != l.args.size())) return;
            const ir::KernelDecl& k = program_.kernels[l.kernel.index];
            if (k.language != ir::KernelLanguage::triton && k.language != ir::KernelLanguage::cuda) return;
            uses_stream(l.stream);
            if (k.language != ir::KernelLanguage::cuda) return;
            for (std::size_t i = 0; i < l.args.size(); ++i) {
              const ir::ParamType type = !l.arg_types.empty() ? l.arg_types[i]
                                         : i < k.signature.size() ? k.signature[i].type
                                                                  : ir::ParamType{};
              if (is_ctypes_float(type)) module_.uses_ctypes_floats = true;
            }
          } else if constexpr (std::is_same_v<T, ir::MultiKernelCall> || std::is_same_v<T, ir::GetRawStream>) {
            uses_stream(l.stream);
          } else if constexpr (std::is_same_v<T, ir::EnterStreamContext>) {
            module_.uses_side_streams = true;
          } else if constexpr (std::is_same_v<T, ir::CommBufferAllocate>) {
            module_.uses_p2p = true;
          }
        },
        line);
    ++line_index_;
  }
  line_index_ = 0;
  kind_ = {};
  definitions_declared_ = true;
}

inline void FunctionEmitter::begin(const ir::Program&) {
  out_ += "def ";
  out_ += function_name_;
  out_ += "(args):\n";
  indent_ = 1;
  write_prologue();
}

inline void FunctionEmitter::end(const ir::Program&) {
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

inline void FunctionEmitter::fail(std::string message) const {
  std::string where;
  if (line_index_ != static_cast<std::size_t>(-1) && !kind_.empty()) {
    where = "line " + std::to_string(line_index_) + " (" + std::string(kind_) + ") of ";
  }
  where += top_level_ ? "program " : "subgraph ";
  where += ir::quote_for_diagnostic(program_.name);
  wrapir::detail::fail(Diagnostic{where + ": " + message});
}

inline void FunctionEmitter::fail_program(std::string message) const {
  wrapir::detail::fail(Diagnostic{std::string(top_level_ ? "program " : "subgraph ") +
                               ir::quote_for_diagnostic(program_.name) + ": " + message});
}

template <class Table>
inline std::string FunctionEmitter::out_of_range(std::string_view what, std::uint32_t index, const Table& table,
                                std::string_view plural) {
  return std::string(what) + " id " + std::to_string(index) + " is out of range (the program has " +
         std::to_string(table.size()) + " " + std::string(plural) + ")";
}

inline const ir::BufferDecl& FunctionEmitter::buffer(ir::BufferId id) const {
  if (!program_.contains(id)) fail(out_of_range("buffer", id.index, program_.buffers, "buffers"));
  return program_.buffers[id.index];
}

inline const ir::KernelDecl& FunctionEmitter::kernel(ir::KernelId id) const {
  if (!program_.contains(id)) fail(out_of_range("kernel", id.index, program_.kernels, "kernels"));
  return program_.kernels[id.index];
}

inline const ir::PoolDecl& FunctionEmitter::pool(ir::PoolId id) const {
  if (!program_.contains(id)) fail(out_of_range("pool", id.index, program_.pools, "pools"));
  return program_.pools[id.index];
}

inline const ir::Program& FunctionEmitter::subgraph(ir::GraphId id) const {
  if (!program_.contains(id)) fail(out_of_range("subgraph", id.index, program_.subgraphs, "subgraphs"));
  return program_.subgraphs[id.index];
}

inline bool FunctionEmitter::is_output(ir::BufferId id) const {
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
inline std::string_view FunctionEmitter::operator_callee(const ir::OpName& op) const {
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
inline std::string_view FunctionEmitter::global_callee(std::string_view name, char kind) const {
  const auto it = module_.global_kinds.find(name);
  if (it == module_.global_kinds.end() || it->second != kind)
    fail("the generated code would call " + ir::quote_for_diagnostic(name) + ", which is not a " +
         (kind == 'k' ? "kernel" : "subgraph function") + " of the module");
  return name;
}

/// A name the emitter makes up (`arg0_1_size`, `cond_fn_0_args`); it must
/// not be a name the program or the module already uses.
inline std::string FunctionEmitter::helper_name(std::string name) const {
  if (local_names_.contains(name) || module_.global_names.contains(name) || is_module_name(name))
    fail("the generated code needs the name " + ir::quote_for_diagnostic(name) +
         ", which the program already uses; rename that entry");
  return name;
}

/// Checks every local name of this program's tables once (the module's
/// names were collected before), so that lines can print names without
/// checking them again.
inline void FunctionEmitter::check_tables() {
  if (local_names_.entries() >= std::size_t{0xffffffff})
    fail_program("the buffer, symbol and pool tables have more than 4294967294 entries");
  local_names_.reserve(local_names_.entries());
  std::uint32_t entry = 0;  // buffers, then symbols, then pools: TableNameSet's numbering
  auto claim = [&](std::string_view name, std::string_view what, bool may_be_global) {
    if (auto err = ir::check_name(name, what)) fail_program(*err);
    if (is_module_name(name))
      fail_program(std::string(what) + " name " + ir::quote_for_diagnostic(name) +
                   " would shadow a name of the generated Python module");
    if (!may_be_global && module_.global_names.contains(name))
      fail_program(std::string(what) + " name " + ir::quote_for_diagnostic(name) +
                   " is also the name of a kernel or subgraph function of the module");
    if (!local_names_.insert(entry++))
      fail_program("the name " + ir::quote_for_diagnostic(name) + " is used by two table entries");
  };
  for (const ir::BufferDecl& b : program_.buffers) {
    claim(b.name, "buffer", b.role == ir::BufferRole::constant);
    if (b.multi_output) continue;
    if (!ir::is_valid(b.layout.dtype)) fail_program("buffer " + ir::quote_for_diagnostic(b.name) + " has an invalid dtype");
    if (auto valid = ir::validate(b.layout.device); !valid)
      fail_program("buffer " + ir::quote_for_diagnostic(b.name) + ": " + valid.error().message);
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
    if (auto valid = ir::validate(p.device); !valid)
      fail_program("pool " + ir::quote_for_diagnostic(p.name) + ": " + valid.error().message);
  }
  asserted_.assign(program_.buffers.size(), 1);
  pool_names_.assign(program_.pools.size(), {});
  view_room_.assign(program_.buffers.size(), expr::Expr{});
}

/// The device type of each kernel's first call: `device_str` of its
/// Triton definition.
inline void FunctionEmitter::scan_kernel_devices() {
  kernel_device_.assign(program_.kernels.size(), std::string_view{});
  for (const ir::Line& line : program_.body) {
    const auto* call = std::get_if<ir::KernelCall>(&line);
    if (call && call->kernel.index < kernel_device_.size() && kernel_device_[call->kernel.index].empty())
      kernel_device_[call->kernel.index] = ir::device_type_name(call->device.type);
  }
}

inline std::string_view FunctionEmitter::kernel_device_type(ir::KernelId id) const {
  const std::string_view d = kernel_device_[id.index];
  return d.empty() || d.front() == '<' ? std::string_view{"cuda"} : d;
}

}  // namespace wrapir::python::detail
