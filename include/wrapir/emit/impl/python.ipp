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
#include <wrapir/emit/detail/sink_buffer.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/emit/text_sink.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <ios>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace wrapir::python {

namespace detail {

/// Writes the module for `program` to `sink`. The header (imports,
/// definitions, subgraph functions) is complete once the top-level
/// function is prepared (`FunctionEmitter::prepare`), so it goes first and
/// the body, by far the largest part, streams after it a piece at a time.
inline void write_module(const ir::Program& program, const PythonOptions& options, wrapir::detail::SinkBuffer& sink) {
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
  std::string& out = sink.text();
  FunctionEmitter main{m, program, out, "call", true, 0, &sink};
  main.prepare();
  write_imports(out, m, options);
  write_header(out, m, options);
  out += m.subgraph_functions;
  out += "\n\nasync_compile.wait(globals())\ndel async_compile\n\n\n";
  sink.pass_on_if_full();
  main.render_body();
  for (std::string_view name : m.called_kernels)
    if (!m.defined_kernels.contains(name))
      wrapir::detail::fail(Diagnostic{"kernel " + ir::quote_for_diagnostic(name) +
                                      " is called but no KernelDefinition or MultiKernelDefinition defines it"});
  if (options.benchmark_harness) write_harness(out, program, m);
  sink.pass_on();
}

}  // namespace detail

WRAPIR_DECL Result<void> to_python(const ir::Program& program, const TextSink& sink, const PythonOptions& options) {
  return wrapir::detail::catch_failure([&] {
    try {
      wrapir::detail::SinkBuffer buffer{sink, "the Python module"};
      detail::write_module(program, options, buffer);
    } catch (const expr::Error& e) {
      wrapir::detail::fail(std::string("program ") + ir::quote_for_diagnostic(program.name) + ": " + e.what());
    }
  });
}

WRAPIR_DECL Result<void> to_python(const ir::Program& program, std::ostream& out, const PythonOptions& options) {
  return to_python(program,
                   TextSink{[&out](std::string_view piece) -> Result<void> {
                     out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
                     if (!out) return Diagnostic{"the output stream failed (its failbit or badbit is set)"};
                     return {};
                   }},
                   options);
}

WRAPIR_DECL Result<void> to_python(const ir::Program& program, std::string& out, const PythonOptions& options) {
  const std::size_t size = out.size();
  // Generous: a line renders to about 60 bytes, and capacity never written
  // costs address space, not memory; growing the string would copy it.
  out.reserve(size + 96 * ir::total_lines(program) + 65536);
  Result<void> done = to_python(program,
                                TextSink{[&out](std::string_view piece) -> Result<void> {
                                  out += piece;
                                  return {};
                                }},
                                options);
  if (!done) out.resize(size);
  return done;
}

WRAPIR_DECL Result<std::string> to_python(const ir::Program& program, const PythonOptions& options) {
  std::string out;
  if (Result<void> done = to_python(program, out, options); !done) return std::move(done).error();
  return out;
}

}  // namespace wrapir::python
