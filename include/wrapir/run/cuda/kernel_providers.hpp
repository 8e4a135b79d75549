#pragma once
/// \file
/// Every kernel language a CUDA program's executor runs, in one provider:
/// a `run::ProviderChain` asking, by language, the Triton cubins of an
/// export (run/cuda/triton_kernels.hpp), the PTX and cubin files
/// (run/cuda/binary_kernels.hpp) and the CUDA C++ compiler
/// (run/cuda/cuda_cpp_kernels.hpp). Each says "not mine" to the others'
/// languages, so a program may mix them; a kernel none of them runs (a C++
/// kernel, unless the caller adds the CPU backend's providers) is refused
/// by the executor naming its line, the kernel, its language and the
/// providers asked.
///
/// ```
/// auto kernels = wrapir::run::cuda::cuda_kernel_providers("export_dir", backend);
/// if (!kernels) { report(kernels.error()); return; }
/// options.kernels = *kernels;
/// ```
#include <wrapir/diagnostic.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/binary_kernels.hpp>
#include <wrapir/run/cuda/cuda_cpp_kernels.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#include <wrapir/run/executor_kernels.hpp>

#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

namespace wrapir::run::cuda {

/// The chain for kernels in `directory` (see the file comment): Triton's
/// from its kernels.json when it has one (a malformed one is a diagnostic;
/// without one, Triton kernels are refused by name when prepared), PTX and
/// cubin files under it, CUDA C++ compiled with `cuda_cpp`.
[[nodiscard]] inline Result<std::shared_ptr<ProviderChain>> cuda_kernel_providers(
    const std::filesystem::path& directory, std::shared_ptr<const CudaBackend> backend, CudaCppOptions cuda_cpp = {}) {
  auto chain = std::make_shared<ProviderChain>();
  std::error_code ec;
  if (std::filesystem::exists(directory / "kernels.json", ec)) {
    auto triton = TritonKernelProvider::load(directory, backend);
    if (!triton) return std::move(triton).error();
    chain->add(*std::move(triton));
  }
  chain->add(std::make_shared<BinaryKernelProvider>(directory, backend));
  chain->add(std::make_shared<CudaCppKernelProvider>(std::move(backend), std::move(cuda_cpp)));
  return chain;
}

}  // namespace wrapir::run::cuda
