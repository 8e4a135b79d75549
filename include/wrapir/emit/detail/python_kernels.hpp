#pragma once
/// \file
/// The Python rendering of kernels (emit/python.hpp): Triton, C++ and
/// CUDA definitions through `async_compile`, their launches, multi-kernel
/// definitions and calls, and the intermediate-value debug printer around
/// launches.

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/ir/names.hpp>

#include <boost/variant2/variant.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::python::detail {

inline void FunctionEmitter::render(const ir::KernelDefinition& l) {
  if (definitions_declared_) return;  // rendered into the header before the body
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
  if (has_provenance_comment(l.provenance)) append_provenance_comment(h, *l.provenance);
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
        append_literal_to(h, ir::cpp_param_type(k.signature[i], *l.metadata), "a parameter type");
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

inline void FunctionEmitter::render(const ir::KernelCall& l) {
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
      if (const auto* g = ir::grid_if<ir::ExplicitGrid>(l.grid)) {
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

inline void FunctionEmitter::render(const ir::SymbolicCallArg& l) {
  if (!l.symbol || !l.symbol.is_symbol()) fail("the defined value is not a symbol");
  statement();
  out_ += l.symbol.name();
  out_ += " = ";
  append_expr(l.value, "the symbol's value");
  out_ += '\n';
}

inline void FunctionEmitter::render(const ir::MultiKernelDefinition& l) {
  if (definitions_declared_) return;  // rendered into the header before the body
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

inline void FunctionEmitter::render(const ir::MultiKernelCall& l) {
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

inline bool FunctionEmitter::debug_wraps(std::string_view kernel_name) const {
  if (options_.debug_level != 1 && options_.debug_level != 2) return false;
  if (module_.debug_filter.empty()) return true;
  const std::string name = lowercase(kernel_name);
  return std::find(module_.debug_filter.begin(), module_.debug_filter.end(), name) != module_.debug_filter.end();
}

/// Lines before or after a launch. Level 1 saves each tensor argument;
/// level 2 prints every argument (only buffers for extern calls).
inline void FunctionEmitter::debug_lines(std::string_view when, std::string_view kernel_name, const std::vector<ir::Arg>& args,
                 const ir::ArgTypes* types, bool buffers_only) {
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

inline void FunctionEmitter::debug_line(std::string_view when, std::string_view kernel_name, std::string_view value,
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

inline void FunctionEmitter::debug_extern(std::string_view when, std::string_view op, const std::vector<ir::Arg>& args,
                  const std::vector<ir::NamedArg>& kwargs, const ir::BufferArg* out) {
  std::vector<ir::Arg> all = args;
  for (const ir::NamedArg& k : kwargs) all.push_back(k.value);
  if (out) all.emplace_back(*out);
  debug_lines(when, op, all, nullptr, true);
}

}  // namespace wrapir::python::detail
