#pragma once
/// \file
/// What names a kernel in the multi-kernel choice cache: the string the
/// executor puts in `Candidate::identity` (run/multi_kernel.hpp), part of a
/// stored choice's key. It must change whenever the kernel that runs could
/// time differently — another source, a changed included header, another
/// compiler or flags, a recompiled binary under the same path — so that
/// such a kernel is benchmarked again instead of replaying a choice that
/// was measured with another build of it (issue 14 §2: "the same identity
/// names kernels in the multi-kernel choice cache").
///
/// Who knows it best is the provider that built or loaded the kernel, so
/// its `ProvidedKernel::identity` is used when it gives one:
///
/// | kernel | identity |
/// |---|---|
/// | C++ compiled by the CPU backend (run/cpu/backend.hpp) | the kernel cache's `KernelIdentity::hex()`: a SHA-256 of the compiler, every flag, the translation unit and every file it includes |
/// | CUDA C++ (run/cuda/cuda_cpp_kernels.hpp) | the same cache's identity, with nvcc and the architecture |
/// | PTX and cubin files (run/cuda/binary_kernels.hpp) | `loaded_kernel_identity` of the file's bytes |
/// | Triton cubins (run/cuda/triton_kernels.hpp) | `loaded_kernel_identity` of the cubin's and its metadata's bytes and the launch configuration |
/// | a `KernelRegistry` callable | its name and `TypedCpuKernel::identity` when registered with one |
///
/// Otherwise the executor names the kernel by `definition_identity`: what
/// the program's definition says (language, source, binary file and entry,
/// signature, launch metadata). That is all it can see; a kernel whose
/// definition stays the same while what runs changes (a header, a
/// callable's code) keeps its stored choice.
#include <wrapir/ir/kernel.hpp>
#include <wrapir/run/detail/stable_hash.hpp>
#include <wrapir/run/detail/text.hpp>
#include <wrapir/run/executor_kernels.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wrapir::run {

namespace detail {

/// Feeds what `request` defines into `h`: language, source, binary file
/// and entry, signature, and the metadata that configures a launch.
inline void hash_definition(StableHasher& h, const KernelRequest& request) {
  const auto optional = [&h](const std::optional<std::int64_t>& v) {
    h.add_u64(v ? 1 : 0).add_i64(v.value_or(0));
  };
  h.add_u64(static_cast<std::uint64_t>(request.language)).add_string(request.source);
  if (request.binary != nullptr) h.add_string(request.binary->path).add_string(request.binary->entry);
  for (const ir::KernelParam& param : request.signature)
    h.add_string(param.name).add_u64(param.type.pointer ? 1 : 0).add_u64(static_cast<std::uint64_t>(param.type.dtype));
  if (request.metadata != nullptr) {
    optional(request.metadata->num_warps);
    optional(request.metadata->num_stages);
    optional(request.metadata->shared_memory_bytes);
  }
}

}  // namespace detail

/// The identity of the kernel `request` defines, as the executor names a
/// kernel whose provider gives none: `<name>#<16 hex digits>` of a stable
/// hash (run/detail/stable_hash.hpp) of its definition (see the file
/// comment).
[[nodiscard]] inline std::string definition_identity(const KernelRequest& request) {
  detail::StableHasher h;
  detail::hash_definition(h, request);
  return std::string(request.name) + "#" + detail::hex16(h.digest());
}

/// The identity of a kernel loaded from files: `<name>#<16 hex digits>` of
/// its definition (as `definition_identity`) and the *contents* of the
/// files it was loaded from, in order (a PTX or cubin file; Triton's cubin,
/// its metadata and its launch configuration). A file recompiled under the
/// same path gets a new identity. The hash reads each byte once (FNV-1a,
/// about 1.5 ms per MB, 25 µs for a typical 16 KB Triton cubin;
/// docs/performance.md, "Kernel identities").
[[nodiscard]] inline std::string loaded_kernel_identity(const KernelRequest& request,
                                                        std::span<const std::string_view> contents) {
  detail::StableHasher h;
  h.add_string("wrapir-loaded-kernel/1");
  detail::hash_definition(h, request);
  h.add_u64(contents.size());
  for (const std::string_view c : contents) h.add_string(c);
  return std::string(request.name) + "#" + detail::hex16(h.digest());
}

}  // namespace wrapir::run
