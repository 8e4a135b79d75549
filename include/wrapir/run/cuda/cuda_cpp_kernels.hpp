#pragma once
/// \file
/// CUDA C++ kernels for `run::Executor` on CUDA: a kernel provider that
/// compiles each `KernelLanguage::cuda` definition with nvcc into a shared
/// object, caches it on disk by a kernel identity, loads it and calls it.
///
/// **What a CUDA C++ kernel is.** As emit::cpp and Inductor have it
/// (docs/emitters.md, "PTX, cubin and CUDA C++ kernels"): a *host* function
/// `extern "C" int NAME(args..., cudaStream_t stream)` that launches its
/// device code itself with the runtime API (Inductor's CUDA/CUTLASS
/// templates, `async_compile.cuda(src, 'so')`) and returns 0 on success.
/// Its calls give no grid. So the source is compiled with nvcc into a shared
/// object (nvcc's static CUDA runtime inside: nothing to find at run time),
/// not into a cubin: a cubin holds device code only, and these kernels are
/// host code that launches device code. For the same reason NVRTC would not
/// do (it compiles device code only), besides needing its library.
///
/// **Calling.** The C++ kernel cache's machinery (run/cpu/kernel_cache.hpp)
/// with nvcc as the compiler and this calling convention's trampoline:
/// `wrapir_entry(args)` calls `NAME` with the signature's arguments read
/// from `args[i]`, then the stream, and stores the status; the parameter
/// types are deduced from NAME's declaration and checked against the
/// signature at compile time (count, pointer versus scalar, element size,
/// a `cudaStream_t` last, an `int` result), so a mismatch is a compile error
/// that names the parameter. Each call passes the backend's stream; a
/// non-zero status is a diagnostic with its value. The runtime inside the
/// shared object works in the device's primary context, the backend's.
///
/// **Identity and cache** are the C++ kernel cache's: a SHA-256 of nvcc's
/// resolved path and `--version`, every flag (the target architecture
/// among them), the entry, the whole translation unit and every header nvcc
/// read (`-MD`), which also names the kernel in the multi-kernel choice
/// cache (`ProvidedKernel::identity`); objects written atomically in a
/// private directory (`$WRAPIR_CUDA_KERNEL_CACHE`, else
/// `$XDG_CACHE_HOME/wrapir/cuda-kernels`, else
/// `~/.cache/wrapir/cuda-kernels`). A compile failure is a diagnostic
/// with nvcc's message (the executor adds the line and the kernel).
///
/// **nvcc** is `$WRAPIR_NVCC` when set (it must then be an executable file:
/// a wrong setting is reported, not silently replaced), else `nvcc` in
/// `PATH`, else /usr/local/cuda/bin/nvcc. Without one, a CUDA C++ kernel is
/// refused when the executor is prepared, saying where it was looked for;
/// programs without such kernels never look. The architecture is the
/// backend's device's (`-arch=sm_90` on an H100) unless the options name
/// one, which is how the tests compile without a GPU.
#include <wrapir/cuda/context.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/cpu/kernel_cache.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/executor_kernels.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

namespace wrapir::run::cuda {

/// nvcc (see the file comment), or why there is none.
[[nodiscard]] inline Result<std::filesystem::path> find_nvcc() {
  namespace fs = std::filesystem;
  auto executable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (const char* env = std::getenv("WRAPIR_NVCC"); env != nullptr && *env != '\0') {
    if (executable(env)) return fs::path(env);
    return Diagnostic{"WRAPIR_NVCC names " + wrapir::detail::quoted_path(env) + ", which is not an executable file"};
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const std::size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    if (!dir.empty() && executable(fs::path(dir) / "nvcc")) return fs::path(dir) / "nvcc";
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  if (executable("/usr/local/cuda/bin/nvcc")) return fs::path("/usr/local/cuda/bin/nvcc");
  return Diagnostic{"nvcc is not found (WRAPIR_NVCC is unset, there is no nvcc in PATH nor /usr/local/cuda/bin/nvcc); "
                    "CUDA C++ kernels are compiled with it"};
}

/// The default cache directory (see the file comment).
[[nodiscard]] inline std::filesystem::path default_cuda_kernel_cache_directory() {
  return cpu::user_cache_directory("WRAPIR_CUDA_KERNEL_CACHE", "cuda-kernels");
}

namespace cuda_cpp_detail {

/// The trampoline of a CUDA C++ host function (see the file comment):
/// `args[n]` holds the stream, `args[n + 1]` points at the status.
[[nodiscard]] inline Result<std::string> host_function_trampoline(std::string_view entry,
                                                                  std::span<const ir::KernelParam> signature) {
  namespace cd = cpu::detail;
  if (!cd::is_identifier(entry))
    return Diagnostic{"the kernel's name " + ir::quote_for_diagnostic(entry) + " is not a C name"};
  auto parts = cd::trampoline_arguments(signature, signature.size() + 1, " and the stream");
  if (!parts) return std::move(parts).error();
  const std::string n = std::to_string(signature.size());
  const std::string e(entry);
  return "\n// ---- wrapir trampoline: wrapir_entry(args) calls the host function with args[i] read as its signature "
         "says, the stream args[" + n + "], and stores its status at args[" + n + " + 1]\n" +
         cd::trampoline_head(entry) + parts->checks +
         "static_assert(std::is_same_v<wrapir_trampoline::P<" + n +
         ">, cudaStream_t>, \"wrapir: a CUDA C++ kernel's last parameter is its stream, a cudaStream_t\");\n"
         "static_assert(std::is_convertible_v<decltype(wrapir_trampoline::result_of(&" + e +
         ")), int>, \"wrapir: a CUDA C++ kernel returns its status, an int (0: success)\");\n"
         "extern \"C\" void wrapir_entry(void* const* args) {\n  *static_cast<int*>(args[" + n + " + 1]) = static_cast<int>(" +
         e + "(" + parts->arguments + (signature.empty() ? "" : ", ") +
         "static_cast<cudaStream_t>(*static_cast<void* const*>(args[" + n + "]))));\n}\n";
}

}  // namespace cuda_cpp_detail

/// How CUDA C++ kernels are compiled.
struct CudaCppOptions {
  /// Where compiled kernels are kept.
  std::filesystem::path cache_directory = default_cuda_kernel_cache_directory();
  /// nvcc; empty: `find_nvcc()` when a kernel is first compiled.
  std::filesystem::path nvcc{};
  /// The target, `sm_90`; empty: the backend's device's.
  std::string arch{};
  /// Flags after wrapir's (`-x cu -std=c++17 -O3 -arch=...`): include
  /// directories, macros.
  std::vector<std::string> flags{};
  /// A compile running longer is stopped and the kernel refused.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

/// Compiles, caches, loads and calls CUDA C++ kernels (see the file
/// comment). Kernels of other languages are "not mine".
class CudaCppKernelProvider final : public KernelProvider {
 public:
  /// `backend` gives the stream of every call and, unless the options name
  /// one, the architecture; null: calls go to the default stream (tests
  /// that compile without a GPU).
  explicit CudaCppKernelProvider(std::shared_ptr<const CudaBackend> backend, CudaCppOptions options = {})
      : backend_(std::move(backend)), options_(std::move(options)) {}

  /// The compile options of kernel `name` (its entry), or why there are
  /// none (no nvcc, no architecture).
  [[nodiscard]] Result<cpu::CompileOptions> compile_options(std::string_view name) const {
    cpu::CompileOptions o;
    if (!options_.nvcc.empty()) {
      o.compiler = options_.nvcc;
    } else {
      auto nvcc = find_nvcc();
      if (!nvcc) return std::move(nvcc).error();
      o.compiler = *nvcc;
    }
    std::string arch = options_.arch;
    if (arch.empty()) {
      if (!backend_) return Diagnostic{"no architecture to compile for: no CUDA backend and no CudaCppOptions::arch"};
      auto info = drv::device_info(backend_->ordinal());
      if (!info) return std::move(info).error();
      arch = "sm_" + std::to_string(info->compute_major) + std::to_string(info->compute_minor);
    }
    o.flags = {"-x", "cu", "-std=c++17", "-O3", "-arch=" + arch, "-cudart", "static"};
    o.flags.insert(o.flags.end(), options_.flags.begin(), options_.flags.end());
    o.pic_flags = {"-Xcompiler", "-fPIC"};
    o.entry = std::string(name);
    o.trampoline = &cuda_cpp_detail::host_function_trampoline;
    o.trampoline_extra_arguments = 2;
    o.kind = "CUDA C++ kernel";
    o.timeout = options_.timeout;
    return o;
  }

  /// Kernel `name` compiled (or found in the cache) and loaded: its
  /// identity, and the trampoline's function, which takes the signature's
  /// arguments, the stream and the status (`provide` wraps it).
  [[nodiscard]] Result<cpu::CompiledKernel> compile(std::string_view name, std::string_view source,
                                                    std::span<const ir::KernelParam> signature) const {
    auto options = compile_options(name);
    if (!options) return std::move(options).error();
    // One cache object per kernel: the entry is the kernel's name. They
    // share the directory, which several processes may share too.
    cpu::KernelCache cache(options_.cache_directory, *std::move(options));
    return cache.load(name, source, signature);
  }

  /// The kernel's function and, as its identity (the multi-kernel choice
  /// cache's name for it), the kernel cache's.
  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    if (request.language != ir::KernelLanguage::cuda) return ProvidedKernel{};
    if (request.binary != nullptr) return Diagnostic{"a CUDA C++ kernel is defined by source text, not a binary"};
    auto kernel = compile(request.name, request.source, request.signature);
    if (!kernel) return std::move(kernel).error();
    const StreamSource stream = backend_ ? backend_->stream_source() : StreamSource{};
    return ProvidedKernel{KernelFn{[entry = std::move(kernel->fn), arity = request.signature.size(),
                     stream](std::span<void* const> args) -> Result<void> {
      if (args.size() != arity)
        return Diagnostic{"called with " + std::to_string(args.size()) + " arguments, expected " +
                          std::to_string(arity)};
      // The signature's arguments, the stream and the status: on the stack
      // for the kernels of real programs (a few dozen parameters at most).
      constexpr std::size_t few = 64;
      std::array<void*, few> small;
      std::vector<void*> large;
      std::span<void*> packed(small.data(), arity + 2);
      if (arity + 2 > few) {
        large.resize(arity + 2);
        packed = std::span<void*>(large);
      }
      std::copy(args.begin(), args.end(), packed.begin());
      void* stream_value = stream.current();  // the thread's current stream, per call
      int status = -1;
      packed[arity] = &stream_value;
      packed[arity + 1] = &status;
      if (Result<void> r = entry(packed); !r) return r;
      if (status != 0) return Diagnostic{"the CUDA C++ kernel returned " + std::to_string(status) + " (0 is success)"};
      return {};
    }}, kernel->identity.hex()};
  }

  [[nodiscard]] std::string describe() const override {
    return "CUDA C++ kernels compiled by nvcc into " + wrapir::detail::quoted_path(options_.cache_directory);
  }

 private:
  std::shared_ptr<const CudaBackend> backend_;
  CudaCppOptions options_;
};

}  // namespace wrapir::run::cuda
