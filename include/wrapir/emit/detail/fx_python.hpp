#pragma once
/// \file
/// The FX emitter's renderings (emit/fx.hpp): the graphs as `str(graph)`
/// prints them, and a Python module that builds the same graphs with the
/// torch.fx API, in the same order of calls, so that torch names every node
/// as the text does.

#include <wrapir/emit/detail/fx_convert.hpp>
#include <wrapir/emit/detail/python_literals.hpp>

#include <charconv>
#include <string>
#include <string_view>

namespace wrapir::fx::detail {

/// The size of what print_text writes for `m` under a path of
/// `path_size` bytes.
inline std::size_t text_size(const Module& m, std::size_t path_size) {
  std::size_t size = 0;
  for (const auto& c : m.children)
    size += text_size(*c, path_size == 0 ? c->name.size() : path_size + 1 + c->name.size());
  if (path_size != 0) size += 2 + path_size + 1;
  return size + m.graph.printed_size() + (path_size == 0 ? 1 : 2);
}

/// Submodules first (depth first, each under `# <path>`), then the graph.
inline void print_text(const Module& m, const std::string& path, std::string& out) {
  if (path.empty()) out.reserve(out.size() + text_size(m, 0));
  for (const auto& c : m.children) {
    const std::string child = path.empty() ? c->name : path + "." + c->name;
    print_text(*c, child, out);
  }
  if (!path.empty()) {
    out += "# ";
    out += path;
    out += '\n';
  }
  m.graph.print(out);
  out += path.empty() ? "\n" : "\n\n";
}

/// The text of a conversion, made in place of the root graph's arena,
/// which it consumes (see Graph::take_text): the submodules' graphs, then
/// the root's.
inline std::string take_text(Module& root) {
  std::string children;
  std::size_t size = 0;
  for (const auto& c : root.children) size += text_size(*c, c->name.size());
  children.reserve(size);
  for (const auto& c : root.children) print_text(*c, c->name, children);
  return root.graph.take_text(children, "\n");
}

inline void append_python_literal(std::string& out, std::string_view s) {
  if (!python::detail::append_string_literal(out, s)) wrapir::detail::fail("a name is not valid UTF-8");
}

inline void append_source(std::string& out, std::string_view source, std::string_view kernel) {
  if (!python::detail::append_source_literal(out, source))
    wrapir::detail::fail("the source of kernel '" + std::string(kernel) + "' is not valid UTF-8");
}

/// What `_build_N` ends with after its nodes, around the output's value.
inline constexpr std::string_view builder_output_open = "    g.output(";
inline constexpr std::string_view builder_output_close = ")\n    return torch.fx.GraphModule(root, g)\n";

/// `def _build_N(_triton_kernels, _cpp_kernels):` for `m`, after its
/// children's, up to its nodes; returns N.
inline std::size_t print_builder_head(const Module& m, std::string& out, std::size_t& counter);

/// `def _build_N(_triton_kernels, _cpp_kernels):` for `m`, after its children's.
inline std::size_t print_builder(const Module& m, std::string& out, std::size_t& counter) {
  const std::size_t id = print_builder_head(m, out, counter);
  const Graph& g = m.graph;
  SizeSink size;
  g.print_lines<PythonLines>(size);
  out.reserve(out.size() + size.size + g.output.size + builder_output_open.size() + builder_output_close.size());
  g.print_lines<PythonLines>(out);
  out += builder_output_open;
  out += g.text(g.output);
  out += builder_output_close;
  return id;
}

inline std::size_t print_builder_head(const Module& m, std::string& out, std::size_t& counter) {
  std::vector<std::size_t> children;
  for (const auto& c : m.children) children.push_back(print_builder(*c, out, counter));
  const std::size_t id = counter++;
  out += "\n\ndef _build_";
  out += std::to_string(id);
  out += "(_triton_kernels, _cpp_kernels):\n";
  if (!m.name.empty()) {
    out += "    # ";
    out += m.name;
    out += '\n';
  }
  for (std::size_t i = 0; i < m.children.size(); ++i) {
    out += "    sub";
    out += std::to_string(i);
    out += " = _build_";
    out += std::to_string(children[i]);
    out += "(_triton_kernels, _cpp_kernels)\n";
  }
  out += "    root = torch.nn.Module()\n";
  for (std::size_t i = 0; i < m.children.size(); ++i) {
    out += "    root.add_module(";
    append_python_literal(out, m.children[i]->name);
    out += ", sub";
    out += std::to_string(i);
    out += ")\n";
  }
  out += "    g = torch.fx.Graph()\n";
  return id;
}

inline constexpr std::string_view python_prologue = R"(import operator

import torch
import torch.fx
from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table


def _load_triton(name, source, device, repeat):
    # The @triton.jit function the kernel side table holds, taken as
    # Inductor's FX backend takes it: the kernel's module loaded in this
    # process, its CachingAutotuner unwrapped. (AsyncCompile is no way to
    # get it: a kernel compiled in a worker comes back with the function's
    # code dropped for pickling, and the launch through the side table
    # needs that code.) Triton compiles the function on its first launch.
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    # One side-table entry per kernel of the program, as the graph numbers
    # them: the code cache gives one module per source and the table one
    # index per function, so a source the program holds again (a kernel in
    # both branches of a cond) is loaded as a module of its own. (A copy of
    # the function shares Triton's per-device caches with the original,
    # which then misses what its first launch sets up.)
    if repeat:
        source = f"{source}\n# wrapir: entry {repeat + 1} of this kernel in the side table\n"
    kernel = getattr(PyCodeCache.load(source), name)
    if isinstance(kernel, CachingAutotuner):
        kernel = kernel.fn
    inner = kernel
    while inner is not None and not hasattr(inner, "__code__"):
        inner = getattr(inner, "fn", None)
    if inner is None:
        raise RuntimeError(f"Triton kernel {name!r} ({device}): no function code to launch")
    return kernel


class _CppKernel:
    """A C++ kernel, compiled by Inductor's cpp_pybinding on its first call."""

    def __init__(self, name, argtypes, source):
        self.name, self.argtypes, self.source, self.fn = name, argtypes, source, None

    def __call__(self, *args):
        if self.fn is None:
            from torch._inductor.async_compile import AsyncCompile

            fn = AsyncCompile().cpp_pybinding(self.argtypes, self.source)
            self.fn = fn.result() if hasattr(fn, "result") else fn
        self.fn(*args)


def cpp_kernel_mutation(kernel_idx, kwargs):
    """Launches C++ kernel `kernel_idx` of this module with the arguments in
    signature order (FX's kernel side table holds Triton kernels only)."""
    _CPP_KERNELS[kernel_idx](*kwargs.values())


cpp_kernel_mutation.__module__ = "wrapir.fx"
)";

inline constexpr std::string_view python_epilogue = R"(

def build():
    """The program as a torch.fx.GraphModule. Its Triton kernels are added to
    torch's kernel side table (kernel_idx); each launch adds its constant
    arguments (constant_args_idx)."""
    triton_kernels, repeats = [], {}
    for name, source, device in _TRITON_SOURCES:
        repeats[source] = repeats.get(source, -1) + 1
        triton_kernels.append(kernel_side_table.add_kernel(_load_triton(name, source, device, repeats[source])))
    return _build_root(triton_kernels, list(range(len(_CPP_KERNELS))))


def graph_text(gm, path=""):
    """The graphs of `gm` as wrapir's `fx` target prints them: submodules
    first, each under `# <path>`, then the graph."""
    text = ""
    for name, child in gm.named_children():
        if isinstance(child, torch.fx.GraphModule):
            text += graph_text(child, f"{path}.{name}" if path else name)
    if path:
        return text + f"# {path}\n{gm.graph}\n\n"
    return text + f"{gm.graph}\n"
)";

/// The builder module of a conversion, made in place of the root graph's
/// arena, which it consumes (see Graph::take_lines): everything before the
/// root's nodes is written first, on its own, then put in front.
inline std::string take_python(Conversion& c, std::string_view program_name) {
  std::string out;
  out += "# The FX graph of wrapir program ";
  append_python_literal(out, program_name);
  out += ", built with the torch.fx API (wrapir fx-python).\n";
  out += python_prologue;
  out += "\n\n_TRITON_SOURCES = [";
  for (const KernelEntry& k : c.triton) {
    out += "\n    (";
    append_python_literal(out, k.name);
    out += ", ";
    append_source(out, k.source, k.name);
    out += ", ";
    append_python_literal(out, k.device_type);
    out += "),";
  }
  out += c.triton.empty() ? "]\n" : "\n]\n";
  out += "_CPP_KERNELS = [";
  for (const KernelEntry& k : c.cpp) {
    out += "\n    _CppKernel(";
    append_python_literal(out, k.name);
    out += ", [";
    for (std::size_t i = 0; i < k.cpp_param_types.size(); ++i) {
      if (i) out += ", ";
      append_python_literal(out, k.cpp_param_types[i]);
    }
    out += "], ";
    append_source(out, k.source, k.name);
    out += "),";
  }
  out += c.cpp.empty() ? "]\n" : "\n]\n";
  std::size_t counter = 0;
  const std::size_t root = print_builder_head(c.root, out, counter);
  std::string suffix = "\n\n_build_root = _build_";
  suffix += std::to_string(root);
  suffix += '\n';
  suffix += python_epilogue;
  return c.root.graph.take_lines<PythonLines>(out, builder_output_open, builder_output_close, suffix);
}

}  // namespace wrapir::fx::detail
