#pragma once
/// \file
/// Launching Triton's compiled kernels (cubins) without Triton.
///
/// Triton compiles a kernel to a cubin plus metadata. Launching it the way
/// Triton's own launcher does takes four facts from the metadata:
///
/// * `num_warps` → the block: 32 × num_warps threads in x;
/// * `shared` → the dynamic shared memory of every launch; above 48 KB the
///   function must opt in first, which `TritonKernel::load` does;
/// * the hidden trailing parameters: recent Triton appends a global-scratch
///   pointer and a profile-scratch pointer to every kernel's parameters.
///   They are null unless the metadata asks for scratch bytes, in which case
///   the launch provides `grid volume × num_ctas × bytes` of device memory;
/// * `num_ctas` → thread-block clusters; only 1 (what Inductor compiles for)
///   is supported here, anything else is refused at load.
///
/// How many hidden parameters a cubin has depends on the Triton version.
/// Drivers from 12.4 report a kernel's parameter count, and `launch`
/// checks that the arguments given plus the hidden ones match it exactly;
/// on older drivers `TritonMetadata::hidden_parameters` (default 2, Triton
/// 3.3 and newer) is trusted.
///
/// The grid comes from the caller: a `Dim3`, or run/grid.hpp's grid types
/// evaluated for this call. Metadata can be filled by hand or read from
/// Triton's JSON (cuda/triton_json.hpp).

#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wrapir::cuda {

/// What launching needs of Triton's `CompiledKernel.metadata`.
struct TritonMetadata {
  /// The kernel's symbol in the cubin (Triton's `name`).
  std::string name{};
  int num_warps = 4;
  int num_ctas = 1;
  /// Dynamic shared memory per launch, in bytes (Triton's `shared`).
  int shared_bytes = 0;
  /// Scratch memory per program (CTA), and its alignment.
  std::int64_t global_scratch_bytes = 0;
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_bytes = 0;
  std::int64_t profile_scratch_align = 1;
  /// Trailing pointer parameters Triton added; used only when the driver
  /// cannot report the kernel's parameter count.
  int hidden_parameters = 2;
};

/// Checks metadata before it is used; says which field is wrong and why.
[[nodiscard]] inline Status validate(const TritonMetadata& m) {
  const std::string where = "Triton kernel '" + m.name + "': ";
  if (m.name.empty()) return Diagnostic{"Triton metadata: the kernel name is empty"};
  if (m.num_warps < 1 || m.num_warps > 32)
    return Diagnostic{where + "num_warps " + std::to_string(m.num_warps) + " is not in 1..32"};
  if (m.num_ctas != 1)
    return Diagnostic{where + "num_ctas " + std::to_string(m.num_ctas) +
                      " needs thread-block clusters, which wrapir does not launch (Inductor compiles num_ctas=1)"};
  if (m.shared_bytes < 0) return Diagnostic{where + "negative shared memory " + std::to_string(m.shared_bytes)};
  auto check_scratch = [&](const char* what, std::int64_t bytes, std::int64_t align) -> Status {
    if (bytes < 0) return Diagnostic{where + what + " size " + std::to_string(bytes) + " is negative"};
    // cuMemAlloc returns 256-byte aligned memory, and wrapir hands the
    // scratch block out whole, so any power of two up to 256 holds.
    if (align < 1 || align > 256 || (align & (align - 1)) != 0)
      return Diagnostic{where + what + " alignment " + std::to_string(align) + " is not a power of two up to 256"};
    return {};
  };
  if (auto s = check_scratch("global scratch", m.global_scratch_bytes, m.global_scratch_align); !s) return s;
  if (auto s = check_scratch("profile scratch", m.profile_scratch_bytes, m.profile_scratch_align); !s) return s;
  if (m.hidden_parameters < 0 || m.hidden_parameters > 2)
    return Diagnostic{where + "hidden_parameters " + std::to_string(m.hidden_parameters) + " is not 0, 1 or 2"};
  return {};
}

/// A Triton kernel ready to launch: its function, opted in to its shared
/// memory, with its block size. Move-only (it owns its scratch memory).
///
/// Scratch memory, when the metadata asks for it, is one buffer grown to
/// the largest grid seen; it is reused by every launch, so launches of one
/// `TritonKernel` that need scratch must be ordered (one stream). Use one
/// `TritonKernel` per stream otherwise.
class TritonKernel {
 public:
  /// Looks the kernel up in `module` (which must outlive it) and prepares it.
  [[nodiscard]] static Result<TritonKernel> load(const Module& module, TritonMetadata metadata) {
    if (auto s = validate(metadata); !s) return s.error();
    auto f = module.function(metadata.name);
    if (!f) return f.error();
    TritonKernel k;
    k.function_ = std::move(f).value();
    k.metadata_ = std::move(metadata);
    const int dynamic = k.metadata_.shared_bytes;
    if (dynamic > k.function_.attributes().max_dynamic_shared_bytes)
      if (auto s = k.function_.set_max_dynamic_shared(dynamic); !s) return s.error();
    if (loaded_driver().cuFuncGetParamInfo) {
      auto sizes = k.function_.parameter_sizes();
      if (!sizes) return sizes.error();
      k.parameter_count_ = sizes->size();
    }
    return k;
  }

  [[nodiscard]] const Function& function() const noexcept { return function_; }
  [[nodiscard]] const TritonMetadata& metadata() const noexcept { return metadata_; }
  [[nodiscard]] Dim3 block() const noexcept { return Dim3{static_cast<std::uint32_t>(metadata_.num_warps) * 32u, 1, 1}; }

  /// Launches over `grid` on `stream` with the kernel's own (non-constexpr)
  /// arguments, in signature order; the hidden scratch pointers are added.
  template <class... Args>
  [[nodiscard]] Status launch(Dim3 grid, CUstream stream, const Args&... args) {
    (detail::check_untyped_argument<Args>(), ...);
    if (grid.empty()) return {};
    std::array<CUdeviceptr, 2> scratch{0, 0};
    if (auto s = check_arguments(sizeof...(Args)); !s) return s;
    if (auto s = prepare_scratch(grid, scratch); !s) return s;
    // Always both scratch slots: the driver reads as many entries as the
    // kernel has parameters, so unused trailing ones are never looked at.
    std::array<void*, sizeof...(Args) + 2> params{const_cast<void*>(static_cast<const void*>(&args))...,
                                                  &scratch[0], &scratch[1]};
    const LaunchConfig config{grid, block(), static_cast<std::uint32_t>(metadata_.shared_bytes), stream};
    return detail::launch_packed(function_, config, params.data());
  }

  /// The most arguments `launch_packed` takes (its parameter array lives on
  /// the stack).
  static constexpr std::size_t max_packed_arguments = 254;

  /// `launch` with arguments already packed as `cuLaunchKernel` takes them:
  /// one pointer per argument, pointing at its value (what an executor that
  /// learns the signature at run time has). The scratch pointers are added.
  [[nodiscard]] Status launch_packed(Dim3 grid, CUstream stream, std::span<void* const> args) {
    if (grid.empty()) return {};
    if (args.size() > max_packed_arguments)
      return Diagnostic{"Triton kernel '" + metadata_.name + "': " + std::to_string(args.size()) +
                        " arguments, more than " + std::to_string(max_packed_arguments)};
    if (!arguments_fit(args.size())) [[unlikely]]
      if (auto s = check_arguments(args.size()); !s) return s;
    std::array<CUdeviceptr, 2> scratch{0, 0};
    // Most kernels ask for no scratch: nothing to size per launch.
    if (metadata_.global_scratch_bytes != 0 || metadata_.profile_scratch_bytes != 0)
      if (auto s = prepare_scratch(grid, scratch); !s) return s;
    std::array<void*, max_packed_arguments + 2> params;
    std::copy(args.begin(), args.end(), params.begin());
    params[args.size()] = &scratch[0];
    params[args.size() + 1] = &scratch[1];
    const LaunchConfig config{grid, block(), static_cast<std::uint32_t>(metadata_.shared_bytes), stream};
    return detail::launch_packed(function_, config, params.data());
  }

  /// The kernel's parameter count as the driver reports it (12.4+), or
  /// nothing.
  [[nodiscard]] std::optional<std::size_t> parameter_count() const noexcept { return parameter_count_; }

 private:
  TritonKernel() = default;

  /// `check_arguments` without its diagnostics: whether `given` arguments
  /// fit (every launch asks; only a launch that does not fit builds the
  /// message).
  [[nodiscard]] bool arguments_fit(std::size_t given) const noexcept {
    std::size_t hidden = static_cast<std::size_t>(metadata_.hidden_parameters);
    if (parameter_count_) {
      if (*parameter_count_ < given || *parameter_count_ - given > 2) return false;
      hidden = *parameter_count_ - given;
    }
    return !(hidden < 1 && metadata_.global_scratch_bytes > 0) && !(hidden < 2 && metadata_.profile_scratch_bytes > 0);
  }

  /// `given` arguments plus the hidden scratch pointers must be the
  /// kernel's parameters (where the driver reports them).
  [[nodiscard]] Status check_arguments(std::size_t given) const {
    std::size_t hidden = static_cast<std::size_t>(metadata_.hidden_parameters);
    if (parameter_count_) {
      if (*parameter_count_ < given || *parameter_count_ - given > 2)
        return Diagnostic{"Triton kernel '" + metadata_.name + "' has " + std::to_string(*parameter_count_) +
                          " parameters; " + std::to_string(given) +
                          " arguments were given, which leaves no room for its 0 to 2 scratch pointers"};
      hidden = *parameter_count_ - given;
    }
    if (hidden < 1 && metadata_.global_scratch_bytes > 0)
      return Diagnostic{"Triton kernel '" + metadata_.name +
                        "': the metadata asks for global scratch but the kernel has no parameter for it"};
    if (hidden < 2 && metadata_.profile_scratch_bytes > 0)
      return Diagnostic{"Triton kernel '" + metadata_.name +
                        "': the metadata asks for profile scratch but the kernel has no parameter for it"};
    return {};
  }

  /// Scratch bytes for `grid`: volume × num_ctas × per-program bytes,
  /// checked for overflow.
  [[nodiscard]] Result<std::size_t> scratch_bytes(Dim3 grid, std::int64_t per_program, const char* what) const {
    if (per_program == 0) return std::size_t{0};
    const std::uint64_t programs = grid.volume() * static_cast<std::uint64_t>(metadata_.num_ctas);
    if (programs > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(per_program))
      return Diagnostic{"Triton kernel '" + metadata_.name + "': " + what + " for " + std::to_string(programs) +
                        " programs overflows"};
    return static_cast<std::size_t>(programs * static_cast<std::uint64_t>(per_program));
  }

  [[nodiscard]] Status prepare_scratch(Dim3 grid, std::array<CUdeviceptr, 2>& out) {
    auto global = scratch_bytes(grid, metadata_.global_scratch_bytes, "global scratch");
    if (!global) return global.error();
    auto profile = scratch_bytes(grid, metadata_.profile_scratch_bytes, "profile scratch");
    if (!profile) return profile.error();
    if (*global == 0 && *profile == 0) return {};
    // Both blocks in one buffer; the profile block starts 256-aligned.
    const std::size_t profile_at = (*global + 255) / 256 * 256;
    const std::size_t total = profile_at + *profile;
    if (total > scratch_.size_bytes()) {
      // Free first (cuMemFree waits for launches still using it): only
      // the larger block is needed from now on.
      scratch_ = DeviceBuffer{};
      auto grown = DeviceBuffer::allocate(total);
      if (!grown) return grown.error();
      scratch_ = std::move(grown).value();
    }
    if (*global) out[0] = scratch_.address();
    if (*profile) out[1] = scratch_.address() + profile_at;
    return {};
  }

  Function function_{};
  TritonMetadata metadata_{};
  std::optional<std::size_t> parameter_count_{};
  DeviceBuffer scratch_{};
};

}  // namespace wrapir::cuda
