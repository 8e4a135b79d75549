#pragma once
/// \file
/// `run::Executor`: runs a wrapir program on the CPU or, with a device
/// backend (`run/executor_backend.hpp`, the CUDA one in `run/cuda/`), on a
/// GPU, straight from the IR, with no Python and no generated code
/// (docs/runtime.md).
///
/// Prepare once, run many:
///
/// ```
/// auto kernels = std::make_shared<wrapir::run::KernelRegistry>();
/// kernels->add("add_kernel", wrapir::run::cpu_kernel([](const float* a, const float* b, float* out,
///                                                        std::int64_t n) { ... }));
/// auto exe = wrapir::run::Executor::prepare(program, {.kernels = kernels}).value();
/// auto outputs = exe.run(std::span(inputs)).value();   // Value: a Tensor or an integer
/// ```
///
/// `prepare` verifies the program (unless told not to), checks that every
/// buffer lives on the CPU or on the device of `ExecutorOptions::device`, resolves every kernel definition to a
/// `CpuKernelFn` through the kernel provider (`run/executor_kernels.hpp`),
/// every extern and fallback the program calls in the extern registry,
/// builds the multi-kernel dispatchers, compiles every size, stride, offset
/// and argument expression (`expr/compile.hpp`) and works out how each
/// symbol is bound from the inputs: scalar inputs, `input_shape` key paths
/// (`s0 = arg0_1.size(0)`) and, for an input dimension written as an
/// expression of one otherwise unbound symbol (`2*s0 + 1`), its solution
/// (`expr/solve.hpp`). What fails names the line (`line 4 (KernelCall):
/// kernel 'k' ...`), inside a subgraph prefixed by the subgraph's name.
///
/// `run(inputs, scalars)` binds the inputs (tensor inputs in program order,
/// scalar inputs likewise), checks their dtypes, sizes and strides against
/// the program's input layouts, then executes the body line by line — a
/// handler per line kind (`run/detail/executor_lines.hpp`) — and returns the
/// outputs. Views alias their bases (they share the `Storage`), inputs
/// written by kernels are written in place, and a program's pools (or its
/// planned arena) are allocated once per call and sliced.
///
/// Thread safety: a prepared `Executor` is immutable except for its
/// multi-kernel dispatchers, which are themselves thread-safe
/// (run/multi_kernel.hpp), and its pool of recycled per-call states
/// (locked; a call takes one for itself and gives it back without any
/// buffer's storage in it: only device memory its Free lines released, at
/// most 16 MiB, waits there for the state's next call); all per-call state
/// (buffers, symbols, pools, argument scratch) belongs to one call at a
/// time. So one executor may `run` on many threads at once, provided the
/// kernels and externs it was given may be called concurrently and the
/// calls do not share input tensors they mutate. In graph mode
/// (`ExecutorOptions::graph`, CUDA) calls of one executor are serialised:
/// the cache of captured graphs is locked for the whole call. Copies of an
/// `Executor` share the prepared state. `prepare` interns expressions in
/// the program's expression context (solving input dimensions), so it must
/// not run concurrently with other users of that context.
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/compile.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/executor_kernels.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/multi_kernel.hpp>
#include <wrapir/run/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace wrapir::run {

/// The providers the executor uses when `ExecutorOptions::kernels` is null.
/// The hook where the compiled C++ kernel provider (run/cpu/) plugs in;
/// today it is empty, so a program whose kernels nobody registered fails to
/// prepare with a diagnostic naming the kernel.
[[nodiscard]] inline std::shared_ptr<const ProviderChain> default_cpu_providers() {
  return std::make_shared<const ProviderChain>();
}

/// The externs the executor uses when `ExecutorOptions::externs` is null:
/// the hook for the reference externs (run/cpu/); empty today.
[[nodiscard]] inline std::shared_ptr<const ExternRegistry> default_cpu_externs() {
  return std::make_shared<const ExternRegistry>();
}

/// CUDA Graph mode (docs/runtime.md, "CUDA Graph mode"): the first call
/// for a tuple of input-bound symbol values runs the program and then
/// captures it on the device backend into a graph; later calls with the
/// same tuple replay the graph with one driver call.
struct GraphModeOptions {
  bool enabled = false;
  /// Graphs kept at most, least recently used evicted first. Each holds
  /// its own device memory for the program's intermediates and outputs,
  /// so a program called with ever new sizes must not keep them all.
  std::size_t max_graphs = 8;
};

/// What graph mode did so far (`Executor::graph_stats`).
struct GraphModeStats {
  std::uint64_t captured = 0;  ///< first calls of a tuple: run, then captured
  std::uint64_t replayed = 0;  ///< calls that launched a cached graph as it was
  std::uint64_t updated = 0;   ///< calls whose input addresses moved: recaptured, graph updated in place, launched
  std::uint64_t evicted = 0;   ///< graphs dropped for the cap
  std::size_t cached = 0;      ///< graphs held now
};

/// The intermediate-value debug printer (`ExecutorOptions::debug`,
/// docs/runtime.md "Debug printing"; Inductor's
/// `debug_intermediate_value_printer`, reference §6, with the Python
/// emitter's `debug_level` and `debug_kernel_filter`). Around each kernel
/// and extern call (not multi-kernel calls) whose name passes the filter:
/// 1 saves every tensor argument before and after into `save_directory`
/// (`before_launch_<kernel>_<buffer>.safetensors`); 2 prints every argument
/// (`inductor: before_launch - <kernel> - <argument>` and the tensor's
/// elements when at most 64, element count, size, dtype, mean, min, max,
/// std; extern calls: tensors only); 3 prints kernel names only
/// (`[ before_launch: <kernel> ]`). Level 0 costs one test of a pointer
/// per kernel or extern line.
struct DebugPrintOptions {
  /// 0 off, 1 save, 2 print values, 3 kernel names; other values are
  /// refused by `prepare`.
  int level = 0;
  /// Kernels (or extern operators, `extern_kernels.mm`) to wrap, compared
  /// case-insensitively; empty wraps all.
  std::vector<std::string> kernel_filter{};
  /// Where level 1 saves (created on first use).
  std::string save_directory = "tmp/jit_inductor";
  /// Where levels 2 and 3 print; null: standard output. Must outlive the
  /// executor's calls; calls on several threads interleave their lines.
  std::ostream* out = nullptr;
};

struct ExecutorOptions {
  /// The device the program's non-CPU buffers, pools and launches are on;
  /// null: CPU programs only. Its kernels and externs come from `kernels`
  /// and `externs` (the CUDA backend gives all three: run/cuda/backend.hpp).
  DeviceBackendPtr device{};
  /// Where kernels come from; null: `default_cpu_providers()`.
  CpuKernelProviderPtr kernels{};
  /// Extern and fallback kernels; null: `default_cpu_externs()`.
  std::shared_ptr<const ExternRegistry> externs{};
  /// The program's constants (buffers of role `constant`) by name.
  std::map<std::string, Tensor, std::less<>> constants{};
  /// How multi-kernels choose (benchmarking on the first call, the on-disk
  /// choice cache, a forced choice). Its `registry`, when set, must outlive
  /// the executor.
  MultiKernelOptions multi_kernel{};
  /// Run the verifier first and refuse a program with findings.
  bool verify = true;
  /// Check every input's dtype, sizes and strides against its layout.
  bool check_inputs = true;
  /// A WhileLoop that runs more iterations than this is stopped with a
  /// diagnostic (a runaway loop must not hang the caller).
  std::size_t max_loop_iterations = std::size_t{1} << 24;
  /// CUDA Graph mode; off by default. `prepare` refuses a program graph
  /// mode cannot capture, naming the line (host reads of device values,
  /// data-dependent control flow, host copies, CPU kernels, externs that
  /// allocate their results).
  GraphModeOptions graph{};
  /// The intermediate-value debug printer; off by default.
  DebugPrintOptions debug{};
};

namespace executor_detail {
struct Prepared;
struct Dispatchers;
class GraphCalls;
}  // namespace executor_detail

class Executor {
 public:
  /// Prepares `program` (copied; the executor does not refer to the
  /// argument afterwards).
  [[nodiscard]] static Result<Executor> prepare(const ir::Program& program, ExecutorOptions options = {});

  /// Runs the program: `inputs` are its tensor inputs and `scalars` its
  /// symbolic-integer inputs, each in program order. The outputs come in
  /// program order: a `Tensor` for a buffer output (a view aliases its
  /// base), an `int64_t` for a symbolic one, `None` for None.
  [[nodiscard]] Result<std::vector<Value>> run(std::span<const Tensor> inputs,
                                               std::span<const std::int64_t> scalars = {}) const;

  /// The program it runs.
  [[nodiscard]] const ir::Program& program() const noexcept;
  /// The number of tensor and scalar inputs `run` expects.
  [[nodiscard]] std::size_t tensor_input_count() const noexcept;
  [[nodiscard]] std::size_t scalar_input_count() const noexcept;
  /// Graph mode's counters (all zero when it is off).
  [[nodiscard]] GraphModeStats graph_stats() const;

 private:
  std::shared_ptr<const executor_detail::Prepared> prepared_;
  std::shared_ptr<executor_detail::Dispatchers> dispatchers_;
  std::shared_ptr<executor_detail::GraphCalls> graphs_;  // null unless graph mode is on
};

}  // namespace wrapir::run

#include <wrapir/run/detail/executor_prepare.hpp>
#include <wrapir/run/detail/executor_debug.hpp>
#include <wrapir/run/detail/executor_lines.hpp>
#include <wrapir/run/detail/executor_graph_call.hpp>
