#pragma once
/// \file
/// The C++ emitter: a wrapir program as one standalone C++17 translation
/// unit that runs it with no Python and no libtorch — what AOTInductor is
/// for. CPU programs (Inductor's C++ kernels) today; CUDA programs are
/// refused with a diagnostic.
///
/// ```
/// auto unit = wrapir::cpp::to_cpp(program);
/// if (!unit) { report(unit.error()); return; }
/// write_file("program.cpp", *unit);
/// // g++ -std=c++17 -shared -fPIC <Inductor's kernel flags> program.cpp -o program.so
/// ```
///
/// The unit, in order (docs/emitters.md shows one):
///
/// - the C interface of wrapir/run/c_abi.h, embedded under its own include
///   guard (a test keeps the copy equal to the header), so the unit needs
///   no wrapir header;
/// - `#include <torch/csrc/inductor/cpp_prefix.h>` when a kernel includes it
///   (Inductor's prefix header, the one torch header its kernels need),
///   once, before the kernels; compile with torch's include directory,
///   ideally as `-isystem`;
/// - the runtime prelude (emit/detail/cpp_runtime.hpp): tensors over shared
///   storages, checked layouts, the Python-semantics division helpers
///   `expr::print_cpp` calls, kernel argument conversion (checked at compile
///   time against each kernel's own parameter types, as the CPU kernel
///   cache's trampoline does) and extern calls through the C table;
/// - each C++ kernel, renamed `<prefix>_k<graph>_<name>` (its source defines
///   `kernel`, Inductor's entry name, renamed token by token in the kernel's
///   own text, never in the headers it includes)
///   with the warnings Inductor's code trips turned off around it only;
/// - one function per graph (the program and each subgraph that a
///   Conditional or WhileLoop runs): bind inputs, symbols from input shapes
///   (input dimensions written as an expression of one unknown are solved,
///   expr/solve.hpp), input asserts, then the body, one statement group per
///   line, each marked with its line number and kind;
/// - the C entry points `<prefix>_run` and `<prefix>_info` (c_abi.h), and
///   with the debug printer (`CppOptions::debug_level` 1-3, after its own
///   prelude) `<prefix>_debug_sink`, where the host takes its lines.
///
/// Lines: allocations are 64-byte aligned `aligned_alloc`; pools and the
/// planned arena are allocated once and carved (`alloc_from_pool`); reuse
/// is aliasing of the old storage; views are the base's storage plus an
/// offset with their own sizes and strides, bounds-checked; symbols are
/// `std::int64_t` locals named as in the program; asserts (size/stride,
/// alignment, scalar) are checks that fail the run with the program's
/// message; Conditional and WhileLoop are `if` and `for` around calls of the
/// subgraph functions (a loop stops with an error after
/// `CppOptions::max_loop_iterations`); externs and fallbacks are calls
/// through the host's `wrapir_extern_table`, resolved by name once per run
/// (run/c_abi_adapter.hpp serves wrapir's own ExternRegistry through it).
///
/// Errors. A program the emitter cannot render correctly gives a
/// `Diagnostic` naming the line, its kind and the graph, never partial or
/// wrong code: an id out of range, a name that is not a valid identifier or
/// clashes with another of the graph (buffers, symbols and pools share one
/// scope in generated code) or uses the prefix `wrapir` the emitter keeps
/// for itself, a kernel that is not C++ (Triton, CUDA, PTX, cubin: a later
/// step), a multi-kernel, a device other than the CPU, a kernel argument of
/// another dtype than its parameter. Generated code never calls anything a
/// program merely names: kernels are the program's own C++ sources, externs
/// go through the table's lookup by name, names are checked identifiers and
/// every string (messages, operator names) is an escaped literal. Run
/// `ir::verify` first for the semantic rules (use after free, liveness).
///
/// At run time every failure returns an error code with a message such as
/// `line 4 (KernelCall) of graph 'call': argument 2 = -1 does not fit the
/// parameter's type`; nothing the inputs do can crash the program (inputs
/// are checked against their storages, dtypes, ranks, sizes and strides).
/// Symbolic integer arithmetic is int64 as in Inductor's C++ wrapper.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/program.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::cpp {

/// How to load and launch one Triton kernel of a CUDA program: what the
/// exporter's kernels.json and Triton's metadata file say of it
/// (`cpp::cuda_kernels_from_export` in emit/cpp_cuda.hpp reads them).
struct CudaKernelLaunch {
  /// The program's name of the kernel.
  std::string name;
  /// The cubin, relative to the directory the host gives `<prefix>_init`.
  std::string cubin;
  /// The function in the cubin (Triton's metadata `name`).
  std::string symbol;
  int num_warps = 4;
  /// Dynamic shared memory per launch (Triton's `shared`).
  int shared_bytes = 0;
  /// The launcher's grid type, with the block sizes it divides by
  /// (`XBLOCK`, `R0_BLOCK`, ...): calls with a launcher grid compute their
  /// grid from these and the call's numel arguments, as run::compute_grid_dims.
  ir::GridType grid_type = ir::GridType::grid_1d;
  std::vector<std::pair<std::string, std::int64_t>> constants;
  /// Arguments Triton specialised to a constant: the call passes them, the
  /// launch does not.
  std::vector<std::pair<std::string, std::int64_t>> launch_constants;
  /// Triton's scratch memory per program (CTA), 0 for none.
  std::int64_t global_scratch_bytes = 0;
  std::int64_t profile_scratch_bytes = 0;
  /// The cubin's bytes, to embed in the unit instead of loading the file
  /// (empty: load `cubin` from the kernel directory).
  std::string image;
};

struct CppOptions {
  /// The C names of the entry points: `<prefix>_run`, `<prefix>_info`, and
  /// the prefix of the kernels' symbols. A C identifier.
  std::string entry_prefix = "wrapir_model";
  /// A WhileLoop that runs more iterations stops the run with an error.
  std::size_t max_loop_iterations = std::size_t{1} << 24;
  /// Check each tensor input's sizes and strides against the program's
  /// layout before the body runs (dtypes, ranks and storage bounds are
  /// always checked).
  bool input_asserts = true;
  /// CUDA programs: the launch configuration of every Triton kernel the
  /// program defines, by name. A Triton kernel without one is refused.
  /// An entry named as a PTX or cubin kernel gives the bytes to embed for
  /// it (`cpp::binary_kernel_images`); its launch comes from the definition.
  std::vector<CudaKernelLaunch> cuda_kernels;
  /// Inductor's intermediate-value debug printer (reference §6), as
  /// `python::PythonOptions::debug_level`, around kernel launches and
  /// extern calls: 0 off (the unit is exactly what it is without the
  /// printer); 1 write every tensor argument before and after the call to
  /// `<debug_save_directory>/<before|after>_launch_<kernel>_<buffer>.npy`;
  /// 2 print every argument (a tensor's dtype, device, sizes, strides,
  /// offset and min/max/mean; a scalar's value) and, once, the program's
  /// tensor inputs; 3 print kernel names only. Lines go to the sink the
  /// host gives `<prefix>_debug_sink`, else to stderr. CUDA tensors are
  /// copied to the host (after the run's stream) for statistics and saving.
  /// Multi-kernel calls are never wrapped. Values outside 0-3 are a
  /// diagnostic. docs/emitters.md shows the lines.
  int debug_level = 0;
  /// The kernels (or extern operators, such as `extern_kernels.mm`) the
  /// debug printer wraps, compared case-insensitively; empty wraps all.
  /// Unlike Inductor, whose filter applies to level 2 only, it applies to
  /// every level (as in the Python emitter).
  std::vector<std::string> debug_kernel_filter{};
  /// Where level 1 writes tensors (created at run time when missing).
  std::string debug_save_directory = "tmp/jit_inductor";
};

/// `program` as a C++ translation unit, or a diagnostic saying why it
/// cannot be rendered.
[[nodiscard]] inline Result<std::string> to_cpp(const ir::Program& program, const CppOptions& options = {});

/// Appends the unit to `out`; on failure returns the diagnostic and leaves
/// `out` as it was.
[[nodiscard]] inline Result<void> to_cpp(const ir::Program& program, std::string& out, const CppOptions& options = {});

}  // namespace wrapir::cpp

#include <wrapir/emit/detail/cpp_unit.hpp>
