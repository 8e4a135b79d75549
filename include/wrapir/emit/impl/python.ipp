#pragma once
// The definitions of emit/python.hpp: included by that header in header-only
// mode, and by <wrapir/src.hpp> in separately compiled mode (see
// wrapir/detail/config.hpp). Assembles a module from the pieces of
// emit/detail/python_*.hpp.

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/python_checks.hpp>
#include <wrapir/emit/detail/python_control.hpp>
#include <wrapir/emit/detail/python_extern.hpp>
#include <wrapir/emit/detail/python_function.hpp>
#include <wrapir/emit/detail/python_guards.hpp>
#include <wrapir/emit/detail/python_harness.hpp>
#include <wrapir/emit/detail/python_kernels.hpp>
#include <wrapir/emit/detail/python_lines.hpp>
#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/detail/python_module.hpp>
#include <wrapir/emit/detail/python_prologue.hpp>
#include <wrapir/emit/detail/python_values.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace wrapir::python {

namespace detail {

/// Appends the module for `program` to `out`. The function `call` is
/// rendered straight into `out` and the imports and definitions, which
/// depend on what it used, are inserted before it afterwards: the body, by
/// far the largest part, is never copied into a second string.
inline void write_module(const ir::Program& program, const PythonOptions& options, std::string& out) {
  if (options.debug_level < 0 || options.debug_level > 3)
    wrapir::detail::fail(Diagnostic{"debug_level " + std::to_string(options.debug_level) +
                                    " is not a debug printer level (0-3)"});
  if (options.debug_level == 1 && (!is_valid_utf8(options.debug_save_directory) ||
                                   options.debug_save_directory.find('\0') != std::string::npos))
    wrapir::detail::fail(Diagnostic{"debug_save_directory is not valid UTF-8 text"});
  if (auto err = ir::check_name(program.name, "program")) wrapir::detail::fail(Diagnostic{*err});
  ModuleState m;
  m.options = &options;
  for (const std::string& k : options.debug_kernel_filter) m.debug_filter.push_back(lowercase(k));
  collect_globals(m, program, 0);
  const std::size_t start = out.size();
  // Generous: a line renders to about 60 bytes, and capacity never written
  // costs address space, not memory; growing it would copy the body.
  out.reserve(start + 96 * ir::total_lines(program) + 65536);
  FunctionEmitter main{m, program, out, "call", true, 0};
  main.run();
  for (std::string_view name : m.called_kernels)
    if (!m.defined_kernels.contains(name))
      wrapir::detail::fail(Diagnostic{"kernel " + ir::quote_for_diagnostic(name) +
                                      " is called but no KernelDefinition or MultiKernelDefinition defines it"});
  std::string head;
  head.reserve(m.kernel_definitions.size() + m.multi_kernel_definitions.size() + m.subgraph_functions.size() +
               m.constant_placeholders.size() + 4096);
  write_imports(head, m, options);
  write_header(head, m, options);
  head += m.subgraph_functions;
  head += "\n\nasync_compile.wait(globals())\ndel async_compile\n\n\n";
  if (out.capacity() < out.size() + head.size()) out.reserve(out.size() + head.size());
  out.insert(start, head);
  if (options.benchmark_harness) write_harness(out, program, m);
}

}  // namespace detail

WRAPIR_DECL Result<void> to_python(const ir::Program& program, std::string& out, const PythonOptions& options) {
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

WRAPIR_DECL Result<std::string> to_python(const ir::Program& program, const PythonOptions& options) {
  std::string out;
  if (Result<void> done = to_python(program, out, options); !done) return std::move(done).error();
  return out;
}

}  // namespace wrapir::python
