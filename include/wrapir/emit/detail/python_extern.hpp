#pragma once
/// \file
/// The Python rendering of extern operator calls and data-dependent
/// symbols (emit/python.hpp): extern kernels (every callee checked by
/// `operator_callee`), multi-output unpacking, scatter and index_put
/// fallbacks, dynamic scalars and unbacked symbol bindings.

#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/ir/names.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace wrapir::python::detail {

inline void FunctionEmitter::render(const ir::ExternKernelAlloc& l) {
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

inline void FunctionEmitter::render(const ir::ExternKernelOut& l) {
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

inline void FunctionEmitter::render(const ir::ExternKernelMultiOut& l) {
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

inline void FunctionEmitter::render(const ir::MultiOutput& l) {
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

inline void FunctionEmitter::render(const ir::ScatterFallback& l) {
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

inline void FunctionEmitter::render(const ir::IndexPutFallback& l) {
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

inline void FunctionEmitter::render(const ir::DynamicScalar& l) {
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

inline void FunctionEmitter::render(const ir::UnbackedSymbolDefs& l) {
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

}  // namespace wrapir::python::detail
