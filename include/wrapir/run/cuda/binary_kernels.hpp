#pragma once
/// \file
/// PTX and cubin kernels for `run::Executor` on CUDA: a kernel provider that
/// loads the binary a `KernelDefinition` names (`ir::BinaryRef`: a file and
/// the entry function in it) and returns a function that launches it on the
/// backend's stream, as emit::cpp's units launch them.
///
/// Per kernel, when the executor is prepared: the path is resolved against
/// the directory the provider was given and must stay inside it (relative,
/// no `..`; a symbolic link at the file itself is refused), the file is read
/// with a size cap and without blocking on a FIFO (detail/safe_file.hpp),
/// its kind checked against the language (a cubin kernel's file is an ELF
/// cubin or a fatbin, a PTX kernel's is text), the module loaded with
/// `cuModuleLoadData` (PTX is JIT-compiled by the driver for the device;
/// the JIT's log is in the diagnostic), the entry looked up (the kernel's
/// name when the reference gives none), and, where the driver reports it
/// (12.4+), its parameters checked against the program's signature: the
/// same count, each of a pointer's or the dtype's size.
///
/// Per launch, as emit::cpp launches them: over the grid the call gives
/// (the executor passes it after the arguments:
/// `run::launches_over_call_grid`), with blocks of 32 x `num_warps` threads
/// (the definition's metadata must give `num_warps`) and the metadata's
/// `shared_memory_bytes` of dynamic shared memory (above 48 KB the kernel
/// is opted in when loaded). A grid with a zero dimension launches nothing
/// (as Inductor's launchers return early); a negative one or one beyond
/// CUDA's limits is a diagnostic.
///
/// The kernel's identity (run/kernel_identity.hpp: what names it in the
/// multi-kernel choice cache) is a hash of its definition and the file's
/// bytes, so a binary recompiled under the same path is benchmarked again.
///
/// Every refusal names why; the executor adds the line and the kernel.
/// Kernels of other languages are "not mine". Nothing here needs a GPU until
/// a module is loaded, so the checks above run (and are tested) without one.
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/kernel_files.hpp>
#include <wrapir/run/executor_kernels.hpp>
#include <wrapir/run/kernel_identity.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::run::cuda {

/// Loads and launches PTX and cubin kernels (see the file comment).
class BinaryKernelProvider final : public KernelProvider {
 public:
  /// A file larger than this is refused before it is read.
  static constexpr std::uint64_t max_binary_bytes = max_kernel_binary_bytes;

  /// Kernels' files are looked for in `directory`; `backend` is the device
  /// they are loaded on and launched on (null: every kernel is refused
  /// after its file is checked, which is what tests without a GPU see).
  BinaryKernelProvider(std::filesystem::path directory, std::shared_ptr<const CudaBackend> backend)
      : directory_(std::move(directory)), backend_(std::move(backend)) {}

  [[nodiscard]] Result<ProvidedKernel> provide(const KernelRequest& request) const override {
    if (!launches_over_call_grid(request.language)) return ProvidedKernel{};
    const bool cubin = request.language == ir::KernelLanguage::cubin;
    const std::string language = cubin ? "cubin" : "PTX";
    if (request.binary == nullptr)
      return Diagnostic{"a " + language + " kernel is defined by a binary (a path and an entry), not source text"};
    if (request.metadata == nullptr || !request.metadata->num_warps)
      return Diagnostic{"its definition's metadata gives no num_warps: a launch's block is 32 x num_warps threads"};
    const std::int64_t warps = *request.metadata->num_warps;
    if (warps < 1 || warps > 32) return Diagnostic{"num_warps " + std::to_string(warps) + " is outside 1..32"};
    const std::int64_t shared = request.metadata->shared_memory_bytes.value_or(0);
    if (shared < 0 || shared > (std::int64_t{1} << 31) - 1)
      return Diagnostic{"shared memory " + std::to_string(shared) + " bytes is outside 0..2^31-1"};
    auto path = kernel_file_path(directory_, request.binary->path);
    if (!path) return std::move(path).error();
    auto image = read_kernel_file(*path, max_binary_bytes);
    if (!image) return std::move(image).error();
    if (image->empty()) return Diagnostic{wrapir::detail::quoted_path(*path) + " is empty"};
    const auto bytes = std::as_bytes(std::span<const char>(image->data(), image->size()));
    const drv::detail::ImageKind kind = drv::detail::image_kind(bytes);
    if (cubin && kind == drv::detail::ImageKind::ptx)
      return Diagnostic{wrapir::detail::quoted_path(*path) +
                        " is not a cubin (an ELF file) or a fatbin, but the kernel's language is cubin"};
    if (!cubin && kind != drv::detail::ImageKind::ptx)
      return Diagnostic{wrapir::detail::quoted_path(*path) + " is a " +
                        (kind == drv::detail::ImageKind::cubin ? "cubin" : "fatbin") +
                        ", but the kernel's language is ptx"};
    // Named in the multi-kernel choice cache by the bytes loaded, not only
    // the path: a binary recompiled in place is benchmarked again.
    const std::string_view loaded(image->data(), image->size());
    std::string identity = loaded_kernel_identity(request, std::span(&loaded, 1));
    if (!backend_) return Diagnostic{"no CUDA backend to load its " + language + " on"};
    auto launcher = std::make_shared<Launcher>();
    launcher->backend = backend_;
    const std::string entry = request.binary->entry.empty() ? std::string(request.name) : request.binary->entry;
    if (auto r = launcher->load(bytes, path->string(), entry, request.signature); !r) return r.error();
    launcher->config.block = Dim3{static_cast<std::uint32_t>(32 * warps), 1, 1};
    launcher->config.shared_bytes = static_cast<std::uint32_t>(shared);
    launcher->stream = backend_->stream_source();
    if (shared > 48 * 1024)
      if (auto s = launcher->function.set_max_dynamic_shared(static_cast<int>(shared)); !s) return s.error();
    launcher->arity = request.signature.size();
    return ProvidedKernel{KernelFn{[launcher](std::span<void* const> args) { return (*launcher)(args); }},
                          std::move(identity)};
  }

  [[nodiscard]] std::string describe() const override {
    return "PTX and cubin kernels of " + wrapir::detail::quoted_path(directory_);
  }

 private:
  /// What one kernel's launches need; members in destruction order (the
  /// backend's context outlives the module, the module its function).
  struct Launcher {
    std::shared_ptr<const CudaBackend> backend;
    drv::Module module;
    drv::Function function;
    drv::LaunchConfig config;
    StreamSource stream;  // the thread's current stream of the backend, per launch
    std::size_t arity = 0;

    Result<void> load(std::span<const std::byte> image, const std::string& label, const std::string& entry,
                      std::span<const ir::KernelParam> signature) {
      if (auto s = backend->make_current(); !s) return s.error();
      auto m = drv::Module::load(image, label);
      if (!m) return std::move(m).error();
      module = *std::move(m);
      auto f = module.function(entry);
      if (!f) return std::move(f).error();
      function = *std::move(f);
      // Drivers before 12.4 cannot say; the launch then trusts the signature.
      if (auto sizes = function.parameter_sizes()) {
        if (sizes->size() != signature.size())
          return Diagnostic{"the binary's kernel " + ir::quote_for_diagnostic(entry) + " has " +
                            std::to_string(sizes->size()) + " parameters but the program's signature has " +
                            std::to_string(signature.size())};
        for (std::size_t i = 0; i < signature.size(); ++i) {
          const ir::ParamType t = signature[i].type;
          const std::size_t want = t.pointer ? sizeof(void*) : ir::itemsize(t.dtype);
          if ((*sizes)[i] != want)
            return Diagnostic{"parameter " + std::to_string(i) + " (" + ir::quote_for_diagnostic(signature[i].name) +
                              ") is " + ir::to_string(t) + ", " + std::to_string(want) + " bytes, in the program but " +
                              std::to_string((*sizes)[i]) + " bytes in the binary's kernel"};
        }
      }
      return {};
    }

    /// Reads nothing it writes: threads sharing an executor launch at once.
    Result<void> operator()(std::span<void* const> args) const {
      if (args.size() != arity + call_grid_arguments)
        return Diagnostic{"launched with " + std::to_string(args.size()) + " arguments; it takes " +
                          std::to_string(arity) + " and the call's grid (3)"};
      std::array<std::int64_t, 3> grid{};
      for (std::size_t d = 0; d < 3; ++d) std::memcpy(&grid[d], args[arity + d], sizeof grid[d]);
      constexpr std::array<std::int64_t, 3> limits{2147483647, 65535, 65535};
      for (std::size_t d = 0; d < 3; ++d)
        if (grid[d] < 0 || grid[d] > limits[d]) [[unlikely]]
          return Diagnostic{"the grid (" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
                            std::to_string(grid[2]) + ") is negative or beyond CUDA's limits (2147483647, 65535, 65535)"};
      drv::LaunchConfig c = config;
      c.stream = stream.current();
      c.grid = Dim3{static_cast<std::uint32_t>(grid[0]), static_cast<std::uint32_t>(grid[1]),
                    static_cast<std::uint32_t>(grid[2])};
      // cuLaunchKernel takes `void**` but only reads the array.
      return drv::detail::launch_packed(function, c, const_cast<void**>(args.data()));
    }
  };

  std::filesystem::path directory_;
  std::shared_ptr<const CudaBackend> backend_;
};

}  // namespace wrapir::run::cuda
