// The executor on GPU 0 for the commands that run programs (`run`,
// `autotune`, `run-cpp`): one setup, so that every command gets the same
// kernels and externs.
//
// * Kernels: in --kernels DIR, else in the program's folder, the export's
//   Triton cubins (kernels.json, when there is one), PTX and cubin files
//   (relative paths of the definitions' BinaryRefs) and CUDA C++ kernels
//   compiled by nvcc (run/cuda/kernel_providers.hpp), then, where the tool
//   has the CPU backend, its compiled C++ kernels (a CUDA program may hold
//   host work: a C++ kernel building an index on the CPU).
// * Externs: cuBLAS's GEMMs, and, where the tool has the CPU backend, the
//   reference externs CUDA has no implementation of (convolution, topk,
//   index_put_, attention) on host copies of their tensors
//   (run/host_staged_externs.hpp); the first call of each says so on
//   stderr, once.
#pragma once

#include "cli.hpp"

#ifdef WRAPIR_TOOL_CUDA_BACKEND
#include <wrapir/ir/names.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/cuda/kernel_providers.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/host_staged_externs.hpp>
#ifdef WRAPIR_TOOL_CPU_BACKEND
#include <wrapir/run/cpu/backend.hpp>
#endif

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#endif

namespace wrapir::cli {

#ifdef WRAPIR_TOOL_CUDA_BACKEND
/// Adds to `device_externs` the externs of `reference` it lacks, staged
/// through the host, with a notice on stderr at each one's first call.
inline void add_host_reference_externs(run::ExternRegistry& device_externs, const run::ExternRegistry& reference,
                                       std::shared_ptr<const run::DeviceBackend> backend, const char* command) {
  run::add_host_staged_externs(device_externs, reference, std::move(backend), {[command](std::string_view op) {
    std::fprintf(stderr, "wrapir %s: note: extern %s has no CUDA implementation; it runs on the host, through copies\n",
                 command, ir::quote_for_diagnostic(op).c_str());
  }});
}

/// The CUDA backend on GPU 0 and executor options on it (see the file
/// comment); a `Failure` naming `command` when there is no device or the
/// kernels cannot be loaded.
struct CudaExecutor {
  std::shared_ptr<run::cuda::CudaBackend> backend;
  run::ExecutorOptions options;
};

inline CudaExecutor cuda_executor(const Arguments& a, const char* command) {
  auto backend = run::cuda::CudaBackend::create(0);
  if (!backend) throw Failure{std::string(command) + ": --device cuda: " + one_line(backend.error().message, 400)};
  const std::filesystem::path kernels_dir = a.value("--kernels")
                                                ? std::filesystem::path(std::string(*a.value("--kernels")))
                                                : std::filesystem::path(std::string(a.file())).parent_path();
  auto kernels = run::cuda::cuda_kernel_providers(kernels_dir.empty() ? "." : kernels_dir, *backend);
  if (!kernels) throw Failure{std::string(command) + ": " + one_line(kernels.error().message, 400)};
  CudaExecutor out{*backend, {}};
  out.options.device = *backend;
  out.options.kernels = *kernels;
  auto externs = run::cuda::cublas_externs(*backend);
#ifdef WRAPIR_TOOL_CPU_BACKEND
  if (auto host = run::cpu::backend_options()) {
    out.options.kernels = std::make_shared<run::ProviderChain>(
        std::vector<run::CpuKernelProviderPtr>{*kernels, std::move(host->kernels)});
    add_host_reference_externs(*externs, *host->externs, *backend, command);
  }
#endif
  out.options.externs = std::move(externs);
  return out;
}
#endif

}  // namespace wrapir::cli
