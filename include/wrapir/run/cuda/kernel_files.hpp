#pragma once
/// \file
/// The files of a kernel directory — the exporter's kernels.json, Triton's
/// cubins and metadata, the PTX and cubin files a program's definitions
/// name — read as files from anywhere must be: a path a program or
/// kernels.json gives stays inside the directory (relative, no `..`), a
/// symbolic link at the file itself is refused, and the file is read with a
/// size cap and without blocking on a FIFO (detail/safe_file.hpp), so that
/// a hostile export cannot read files elsewhere, hang the run or grow it
/// without bound.
#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/names.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace wrapir::run::cuda {

/// A kernel binary (cubin, fatbin, PTX) larger than this is refused before
/// it is read.
inline constexpr std::uint64_t max_kernel_binary_bytes = std::uint64_t{256} << 20;

/// `path` (a `BinaryRef`'s, or a kernels.json entry's) resolved against
/// `directory`, or why it is refused: empty, absolute, or climbing out
/// with `..` (`detail::path_under`, which emit/cpp_cuda.hpp uses too).
[[nodiscard]] inline Result<std::filesystem::path> kernel_file_path(const std::filesystem::path& directory,
                                                                    std::string_view path) {
  return wrapir::detail::path_under(directory, path, "the kernel file's path", "the kernel directory");
}

/// The bytes of the kernel file at `path` (resolved by `kernel_file_path`,
/// or a file the provider itself names there): a symbolic link at it, a
/// FIFO, a device or a file over `max_bytes` is refused unread.
[[nodiscard]] inline Result<std::string> read_kernel_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  return wrapir::detail::read_regular_file(path, {.max_bytes = max_bytes, .follow_symlinks = false, .limit_hint = {}});
}

}  // namespace wrapir::run::cuda
