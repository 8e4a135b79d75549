#pragma once
/// \file
/// The built-in emit targets, for an `EmitterRegistry` (emit/registry.hpp):
///
/// | target | what | options |
/// |---|---|---|
/// | `python` | the Python module (emit/python.hpp) | `device_guard`, `benchmark_harness` (true/false), `size_asserts` (none, eager, deferred), `debug_level` (0-3), `debug_kernels` (NAME,NAME...) |
/// | `text` | the text form (emit/text.hpp) | none |
/// | `dot` | the dataflow as Graphviz (emit/dot.hpp) | `legend`, `subgraphs` (true/false), `direction` (TB, LR) |
/// | `cpp` | a standalone C++ unit with a C entry point, CPU programs (emit/cpp.hpp) | `entry_prefix` (a C identifier), `input_asserts` (true/false), `max_loop_iterations`, `debug_level` (0-3), `debug_kernels` (NAME,NAME...), `debug_save_directory` |
/// | `fx` | the FX graph text, as torch prints `gm.graph` (emit/fx.hpp) | `asserts` (true/false) |
/// | `fx-python` | a Python module building that FX GraphModule (emit/fx.hpp) | `asserts` (true/false) |
///
/// Each is a function returning its `EmitTarget`, so that a consumer can
/// register one under a name of its own; `register_builtin_targets` adds
/// them all. A new emitter joins with one line in that function (and its
/// `*_target()` beside its emitter).

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/dot.hpp>
#include <wrapir/emit/fx.hpp>
#include <wrapir/emit/python.hpp>
#include <wrapir/emit/registry.hpp>
#include <wrapir/emit/text.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir {

/// The `python` target's options as `PythonOptions`.
[[nodiscard]] inline Result<python::PythonOptions> python_options(const EmitOptions& o) {
  python::PythonOptions options;
  Result<bool> guard = o.flag("device_guard", true);
  if (!guard) return std::move(guard).error();
  options.device_guard = guard.value();
  Result<bool> harness = o.flag("benchmark_harness", true);
  if (!harness) return std::move(harness).error();
  options.benchmark_harness = harness.value();
  Result<std::string_view> asserts = o.choice("size_asserts", "eager", {"none", "eager", "deferred"});
  if (!asserts) return std::move(asserts).error();
  options.size_asserts = asserts.value() == "none"    ? python::SizeAsserts::none
                         : asserts.value() == "eager" ? python::SizeAsserts::eager
                                                      : python::SizeAsserts::deferred;
  Result<std::int64_t> level = o.integer("debug_level", 0, 0, 3);
  if (!level) return std::move(level).error();
  options.debug_level = static_cast<int>(level.value());
  if (const auto names = o.get("debug_kernels")) {
    std::string_view rest = *names;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      if (name.empty())
        return Diagnostic{"option 'debug_kernels' has an empty name in " + ir::quote_for_diagnostic(*names)};
      options.debug_kernel_filter.emplace_back(name);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  return options;
}

/// `python`: the Python module; it streams to a sink.
[[nodiscard]] inline EmitTarget python_target() {
  return EmitTarget{
      "python",
      "the program as a Python module in the shape of Inductor's wrapper",
      {{"device_guard", "wrap a body on one CUDA device in its device guard (true)"},
       {"benchmark_harness", "append get_args() and the benchmark harness (true)"},
       {"size_asserts", "input size asserts: none, eager or deferred (eager)"},
       {"debug_level", "the intermediate-value debug printer, 0 to 3 (0)"},
       {"debug_kernels", "the kernels the debug printer wraps, NAME,NAME... (all)"}},
      [](const ir::Program& p, const EmitOptions& o, std::string& out) -> Result<void> {
        Result<python::PythonOptions> options = python_options(o);
        if (!options) return std::move(options).error();
        return python::to_python(p, out, options.value());
      },
      [](const ir::Program& p, const EmitOptions& o, const TextSink& sink) -> Result<void> {
        Result<python::PythonOptions> options = python_options(o);
        if (!options) return std::move(options).error();
        return python::to_python(p, sink, options.value());
      }};
}

/// `text`: the text form, as `wrapir dump` prints it.
[[nodiscard]] inline EmitTarget text_target() {
  return EmitTarget{"text", "the program in the text form (docs/text-form.md)", {},
                    [](const ir::Program& p, const EmitOptions&, std::string& out) -> Result<void> {
                      text::to_text(p, out);
                      return {};
                    }};
}

/// `dot`: the dataflow as a Graphviz digraph.
[[nodiscard]] inline EmitTarget dot_target() {
  return EmitTarget{"dot",
                    "the dataflow as a Graphviz digraph (dot -Tsvg)",
                    {{"legend", "a legend of the edge styles and colours (true)"},
                     {"subgraphs", "draw subgraphs as nested clusters (true)"},
                     {"direction", "TB (top to bottom) or LR (left to right) (TB)"}},
                    [](const ir::Program& p, const EmitOptions& o, std::string& out) -> Result<void> {
                      dot::DotOptions options;
                      Result<bool> legend = o.flag("legend", true);
                      if (!legend) return std::move(legend).error();
                      options.legend = legend.value();
                      Result<bool> subgraphs = o.flag("subgraphs", true);
                      if (!subgraphs) return std::move(subgraphs).error();
                      options.subgraphs = subgraphs.value();
                      Result<std::string_view> direction = o.choice("direction", "TB", {"TB", "LR"});
                      if (!direction) return std::move(direction).error();
                      options.direction =
                          direction.value() == "LR" ? dot::Direction::left_to_right : dot::Direction::top_to_bottom;
                      return dot::to_dot(p, out, options);
                    }};
}

/// The names of the option `debug_kernels` (NAME,NAME...), appended to
/// `names`; an empty name is a diagnostic.
inline Result<void> debug_kernel_names(const EmitOptions& o, std::vector<std::string>& names) {
  const auto text = o.get("debug_kernels");
  if (!text) return {};
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (name.empty()) return Diagnostic{"option 'debug_kernels' has an empty name in " + ir::quote_for_diagnostic(*text)};
    names.emplace_back(name);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return {};
}

/// `cpp`: a standalone C++ translation unit (CPU programs).
[[nodiscard]] inline EmitTarget cpp_target() {
  return EmitTarget{
      "cpp",
      "the program as one C++ translation unit with a C entry point, no Python and no libtorch (CPU programs)",
      {{"entry_prefix", "the C names of the entry points, <prefix>_run and <prefix>_info (wrapir_model)"},
       {"input_asserts", "check each input's sizes and strides against the program's layout (true)"},
       {"max_loop_iterations", "a WhileLoop running longer stops the run with an error (16777216)"},
       {"debug_level", "the intermediate-value debug printer, 0 to 3 (0)"},
       {"debug_kernels", "the kernels the debug printer wraps, NAME,NAME... (all)"},
       {"debug_save_directory", "where debug level 1 writes tensors as .npy files (tmp/jit_inductor)"}},
      [](const ir::Program& p, const EmitOptions& o, std::string& out) -> Result<void> {
        cpp::CppOptions options;
        if (const auto prefix = o.get("entry_prefix")) options.entry_prefix = std::string(*prefix);
        Result<bool> asserts = o.flag("input_asserts", true);
        if (!asserts) return std::move(asserts).error();
        options.input_asserts = asserts.value();
        Result<std::int64_t> limit = o.integer("max_loop_iterations", std::int64_t{1} << 24, 1, std::int64_t{1} << 62);
        if (!limit) return std::move(limit).error();
        options.max_loop_iterations = static_cast<std::size_t>(limit.value());
        Result<std::int64_t> level = o.integer("debug_level", 0, 0, 3);
        if (!level) return std::move(level).error();
        options.debug_level = static_cast<int>(level.value());
        if (Result<void> names = debug_kernel_names(o, options.debug_kernel_filter); !names) return names;
        if (const auto directory = o.get("debug_save_directory")) options.debug_save_directory = std::string(*directory);
        return cpp::to_cpp(p, out, options);
      }};
}

/// The FX targets' options.
inline Result<fx::FxOptions> fx_options(const EmitOptions& o) {
  fx::FxOptions options;
  Result<bool> asserts = o.flag("asserts", true);
  if (!asserts) return std::move(asserts).error();
  options.asserts = asserts.value();
  return options;
}

/// `fx`: the FX graph text.
[[nodiscard]] inline EmitTarget fx_target() {
  return EmitTarget{"fx",
                    "the program as the FX graph Inductor's FX backend makes, printed as torch prints gm.graph",
                    {{"asserts", "size and scalar asserts as aten._assert_tensor_metadata/_assert_scalar (true)"}},
                    [](const ir::Program& p, const EmitOptions& o, std::string& out) -> Result<void> {
                      Result<fx::FxOptions> options = fx_options(o);
                      if (!options) return std::move(options).error();
                      return fx::to_fx(p, out, options.value());
                    }};
}

/// `fx-python`: a Python module whose build() returns the FX GraphModule.
[[nodiscard]] inline EmitTarget fx_python_target() {
  return EmitTarget{"fx-python",
                    "a Python module whose build() makes the FX GraphModule with the torch.fx API",
                    {{"asserts", "size and scalar asserts as aten._assert_tensor_metadata/_assert_scalar (true)"}},
                    [](const ir::Program& p, const EmitOptions& o, std::string& out) -> Result<void> {
                      Result<fx::FxOptions> options = fx_options(o);
                      if (!options) return std::move(options).error();
                      return fx::to_fx_python(p, out, options.value());
                    }};
}

/// Registers every built-in target; fails (registering none after it) on
/// the first whose name is taken.
inline Result<void> register_builtin_targets(EmitterRegistry& registry) {
  for (EmitTarget (*make)() : {&python_target, &text_target, &dot_target, &cpp_target, &fx_target, &fx_python_target})
    if (Result<void> done = registry.add(make()); !done) return done;
  return {};
}

}  // namespace wrapir
