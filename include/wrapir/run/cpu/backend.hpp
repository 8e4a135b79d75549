#pragma once
/// \file
/// The CPU backend plugged into the executor: Inductor's C++ kernels
/// compiled through a `KernelCache`, and the reference externs.
///
/// ```
/// auto options = wrapir::run::cpu::backend_options().value();  // compiled kernels + reference externs
/// auto exe = wrapir::run::Executor::prepare(program, std::move(options)).value();
/// ```
///
/// Separate from run/executor.hpp so that only programs that run compiled
/// kernels link what the backend needs (target `wrapir::cpu`: OpenBLAS,
/// libdl); the executor alone needs neither.
#include <wrapir/diagnostic.hpp>
#include <wrapir/run/cpu/externs.hpp>
#include <wrapir/run/cpu/kernel_cache.hpp>
#include <wrapir/run/executor.hpp>
#include <wrapir/run/executor_kernels.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::run::cpu {

/// The executor's provider for C++ `KernelDefinition`s: compiles each
/// through `cache` (compiled once, cached on disk by kernel identity) and
/// gives that identity (`KernelIdentity::hex()`) as the kernel's, so the
/// multi-kernel choice cache keys a choice by the compiler, flags and
/// headers the kernel was built with. Kernels in other languages are not
/// its own (the next provider is asked).
class CompiledCppProvider final : public CpuKernelProvider {
 public:
  explicit CompiledCppProvider(std::shared_ptr<KernelCache> cache) : cache_(std::move(cache)) {}

  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    if (request.language != ir::KernelLanguage::cpp || request.source.empty()) return ProvidedKernel{};
    auto kernel = cache_->load(request.name, request.source, request.signature);
    if (!kernel) return std::move(kernel).error();
    return ProvidedKernel{std::move(kernel->fn), kernel->identity.hex()};
  }
  [[nodiscard]] std::string describe() const override {
    return "C++ compiler (kernel cache " + cache_->directory().string() + ")";
  }
  [[nodiscard]] const std::shared_ptr<KernelCache>& cache() const noexcept { return cache_; }

 private:
  std::shared_ptr<KernelCache> cache_;
};

/// Stands in for the compiler when torch's headers are missing: a program
/// without C++ kernels still runs; one with them gets `why`.
class UnavailableCppProvider final : public CpuKernelProvider {
 public:
  explicit UnavailableCppProvider(std::string why) : why_(std::move(why)) {}
  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    if (request.language != ir::KernelLanguage::cpp || request.source.empty()) return ProvidedKernel{};
    return Diagnostic{"C++ kernel " + ir::quote_for_diagnostic(request.name) + ": " + why_};
  }
  [[nodiscard]] std::string describe() const override { return "C++ compiler (unavailable)"; }

 private:
  std::string why_;
};

/// Where kernels are cached and how they are compiled; defaults: the
/// per-user cache directory and Inductor's flags with torch's headers.
struct BackendConfig {
  std::filesystem::path cache_directory = default_cache_directory();
  /// Null: Inductor's flags with the torch include directory
  /// `find_torch_include()` finds (a diagnostic when none is found).
  std::shared_ptr<const CompileOptions> compile{};
  /// Providers asked before the compiler (kernels registered by name).
  std::vector<CpuKernelProviderPtr> first{};
};

/// Executor options with the CPU backend: `config.first`, then compiled C++
/// kernels; the reference externs (`register_reference_externs`). Without
/// torch's headers (and no `config.compile`), C++ kernels are refused when
/// a program has one, saying how to provide them.
[[nodiscard]] inline Result<ExecutorOptions> backend_options(BackendConfig config = {}) {
  auto chain = std::make_shared<ProviderChain>();
  for (CpuKernelProviderPtr& p : config.first) chain->add(std::move(p));
  const auto include = config.compile ? std::nullopt : find_torch_include();
  if (config.compile || include) {
    CompileOptions compile = config.compile ? *config.compile : inductor_compile_options(*include);
    chain->add(std::make_shared<CompiledCppProvider>(
        std::make_shared<KernelCache>(std::move(config.cache_directory), std::move(compile))));
  } else {
    chain->add(std::make_shared<UnavailableCppProvider>(
        "compiling Inductor's kernels needs torch's headers (<torch/csrc/inductor/cpp_prefix.h>): set "
        "WRAPIR_TORCH_INCLUDE to .../site-packages/torch/include, or create the venv with tools/dev.sh bridge-test"));
  }
  auto externs = std::make_shared<ExternRegistry>();
  if (auto r = register_reference_externs(*externs); !r) return std::move(r).error();
  ExecutorOptions options;
  options.kernels = std::move(chain);
  options.externs = std::move(externs);
  return options;
}

}  // namespace wrapir::run::cpu
