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
///
/// std::ofstream file("add.py", std::ios::binary);  // or straight to a file,
/// auto done = wrapir::python::to_python(program, file);  // never whole in memory
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
/// Speed and memory: one pass over the lines, appending to a buffer that
/// is passed to the sink (or the output string) whenever it holds a piece
/// (`TextSink::piece_bytes`); a line costs a few appends. The imports and
/// definitions come before `call` but depend on what its body uses: a
/// first walk over the body renders its kernel and multi-kernel
/// definitions and notes the imports its launches, streams and buffers
/// need (`FunctionEmitter::declare_module_needs`), so that the header is
/// written first and the body streams after it. The subgraph functions
/// are held until then (they are small next to the body).
///
/// Build modes (wrapir/detail/config.hpp). This header declares the options
/// and `to_python`; the emitter itself — emit/detail/python_*.hpp, read by
/// emit/impl/python.ipp — is included only in header-only mode, so that with
/// `WRAPIR_SEPARATE_COMPILATION` a translation unit that includes this
/// header compiles none of it. The pieces, each one responsibility:
///
/// - detail/python_module.hpp: module-level names and tables;
/// - detail/python_function.hpp: the emitter of one function (the class);
/// - detail/python_checks.hpp: table checks, lookups, callees, errors;
/// - detail/python_lines.hpp: memory, view and comment lines;
/// - detail/python_control.hpp: scopes, subgraph calls, streams;
/// - detail/python_kernels.hpp: kernel definitions and launches, debug printer;
/// - detail/python_extern.hpp: extern kernels and data-dependent symbols;
/// - detail/python_values.hpp: arguments, shapes, allocations as Python;
/// - detail/python_guards.hpp: the function prologue, size asserts, view bounds;
/// - detail/python_prologue.hpp: imports and the module header;
/// - detail/python_harness.hpp: `get_args()` and the benchmark harness;
/// - impl/python.ipp: `to_python`, assembling the module.

#include <wrapir/detail/config.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/text_sink.hpp>
#include <wrapir/ir/names.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace wrapir::ir {
struct Program;
}  // namespace wrapir::ir

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
[[nodiscard]] WRAPIR_DECL Result<std::string> to_python(const ir::Program& program, const PythonOptions& options = {});

/// Appends `program` as a Python module to `out`; on failure returns the
/// diagnostic and leaves `out` as it was.
[[nodiscard]] WRAPIR_DECL Result<void> to_python(const ir::Program& program, std::string& out, const PythonOptions& options = {});

/// Writes `program` as a Python module to `sink` (emit/text_sink.hpp) piece
/// by piece, never holding the whole module: the same bytes as the string
/// overloads. On failure — the program cannot be rendered, or the sink
/// refused a piece — returns the diagnostic; the sink may have taken the
/// start of the module by then.
[[nodiscard]] WRAPIR_DECL Result<void> to_python(const ir::Program& program, const TextSink& sink, const PythonOptions& options = {});

/// Writes `program` as a Python module to `out`, as the sink overload does;
/// a stream that fails (its failbit or badbit set after a write) is a
/// diagnostic, never a silently truncated module. Open files in binary mode.
[[nodiscard]] WRAPIR_DECL Result<void> to_python(const ir::Program& program, std::ostream& out, const PythonOptions& options = {});


}  // namespace wrapir::python

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/emit/impl/python.ipp>
#endif
