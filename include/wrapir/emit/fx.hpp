#pragma once
/// \file
/// The FX emitter: a wrapir program as the PyTorch FX graph Inductor's FX
/// backend (`WrapperFxCodegen`) would make of it (reference §2.3, §9).
///
/// ```
/// auto text = wrapir::fx::to_fx(program);          // what str(gm.graph) prints
/// auto module = wrapir::fx::to_fx_python(program);  // builds that GraphModule
/// ```
///
/// Two renderings of one conversion:
///
/// - `to_fx`: the graph text exactly as torch prints `gm.graph`
///   (placeholders, `call_function[target=...]`, `num_users`, `args = (...)`,
///   `kwargs = {...}`, `return ...`); the graphs of submodules (the branches
///   of `cond`, the bodies of `while_loop`) first, each under `# <path>`.
/// - `to_fx_python`: a Python module whose `build()` makes that graph with
///   `torch.fx.Graph` (`placeholder`, `call_function`, `get_attr`,
///   `output`) and returns a runnable `torch.fx.GraphModule`, its Triton
///   kernels registered in torch's kernel side table as Inductor registers
///   them; `graph_text(gm)` prints a GraphModule as `to_fx` does, so the two
///   can be compared with real torch.fx (the bridge's `fx` check does).
///
/// Lines follow Inductor's FX converter: Allocate → `torch.empty_strided`
/// named after the buffer; frees drop the name (FX frees after the last
/// use); views → `torch.as_strided` (`<buffer>_view` for views passed to a
/// call); Triton launches → `torch.ops.higher_order.triton_kernel_wrapper_mutation`
/// with `kernel_idx`, `constant_args_idx`, the grid Inductor's launcher
/// computes and the kwargs in signature order plus the block
/// configuration; extern kernels → their ATen overloads (`extern_kernels.mm`
/// with `out=` is `torch.ops.aten.mm.out`); multi-output results →
/// `operator.getitem`; symbols → placeholders, `aten.sym_size.int` reads,
/// and FX arithmetic (emit/detail/fx_symbols.hpp); Conditional →
/// `torch.ops.higher_order.cond` on `get_attr` submodules. Where Inductor's
/// converter stops, this one goes on (pool lines, size asserts, C++
/// kernels, while loops, workspaces, device copies); docs/emitters.md lists
/// each choice and every known difference from Inductor's text.
///
/// Errors: anything the emitter cannot render is a diagnostic naming the
/// line, its kind and the program, never an omission. Operators go through
/// the same allow-list as the Python emitter (`ir::check_operator_path`,
/// extended by `FxOptions::operators`).
///
/// Pieces: detail/fx_graph.hpp (nodes, torch.fx's naming, printing),
/// detail/fx_symbols.hpp (expressions and grids as FX arithmetic),
/// detail/fx_convert.hpp (the lines), detail/fx_python.hpp (the renderings).

#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/fx_convert.hpp>
#include <wrapir/emit/detail/fx_python.hpp>
#include <wrapir/ir/program.hpp>

#include <string>
#include <utility>

namespace wrapir::fx {

/// Appends the FX graph text of `program` to `out`; on failure returns the
/// diagnostic and leaves `out` as it was.
[[nodiscard]] inline Result<void> to_fx(const ir::Program& program, std::string& out, const FxOptions& options = {}) {
  auto converted = detail::convert(program, options, false);
  if (!converted) return std::move(converted).error();
  std::string text;
  Result<void> made = wrapir::detail::catch_failure([&] { text = detail::take_text(converted.value()->root); });
  if (!made) return made;
  if (out.empty()) out = std::move(text);  // the text as made: no copy
  else out += text;
  return {};
}

[[nodiscard]] inline Result<std::string> to_fx(const ir::Program& program, const FxOptions& options = {}) {
  std::string out;
  if (Result<void> done = to_fx(program, out, options); !done) return std::move(done).error();
  return out;
}

/// Appends the Python module that builds the FX graph of `program`.
[[nodiscard]] inline Result<void> to_fx_python(const ir::Program& program, std::string& out,
                                               const FxOptions& options = {}) {
  auto converted = detail::convert(program, options, true);
  if (!converted) return std::move(converted).error();
  std::string text;
  Result<void> printed = wrapir::detail::catch_failure([&] { text = detail::take_python(*converted.value(), program.name); });
  if (!printed) return printed;
  if (out.empty()) out = std::move(text);  // the module as built: no copy
  else out += text;
  return {};
}

[[nodiscard]] inline Result<std::string> to_fx_python(const ir::Program& program, const FxOptions& options = {}) {
  std::string out;
  if (Result<void> done = to_fx_python(program, out, options); !done) return std::move(done).error();
  return out;
}

}  // namespace wrapir::fx
