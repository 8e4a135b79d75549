// Files of the wrapir tool: every input is read and every output written
// here, through include/wrapir/detail/safe_file.hpp.
//
// Inputs: only regular files (symbolic links to one are followed, as the
// user named them); a directory, FIFO, device or socket is refused before
// anything is read, without blocking, and so is a file larger than the input
// cap: 1 GiB unless --max-input-bytes or $WRAPIR_MAX_INPUT_BYTES says
// otherwise (the option wins).
//
// Outputs (-o, --timeline): a fresh temporary file (O_CREAT|O_EXCL|
// O_NOFOLLOW) next to the target, renamed over it; a target that exists and
// is not a regular file (a symbolic link, a directory, a FIFO, a device) is
// refused, never followed or replaced.
#pragma once

#include "cli.hpp"

#include <wrapir/detail/safe_file.hpp>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wrapir::cli {

inline constexpr std::uint64_t default_max_input_bytes = std::uint64_t{1} << 30;
/// The environment variable that sets the input cap (bytes).
inline constexpr const char* max_input_bytes_variable = "WRAPIR_MAX_INPUT_BYTES";
/// No cap above this is accepted (it bounds the arithmetic, not real files).
inline constexpr std::uint64_t max_input_bytes_ceiling = std::uint64_t{1} << 50;

/// A byte count: decimal digits, optionally followed by K, M or G (powers
/// of 1024); `source` names where it came from in the diagnostic.
inline std::uint64_t parse_byte_count(std::string_view text, std::string_view source) {
  auto refuse = [&] {
    return Failure{std::string(source) + " takes a byte count such as 1048576, 512K, 64M or 2G, not '" +
                   one_line(text, 40) + "'"};
  };
  std::uint64_t unit = 1;
  std::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': unit = std::uint64_t{1} << 10; break;
      case 'M': unit = std::uint64_t{1} << 20; break;
      case 'G': unit = std::uint64_t{1} << 30; break;
      default: break;
    }
    if (unit != 1) digits.remove_suffix(1);
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) throw refuse();
  if (value == 0 || value > max_input_bytes_ceiling / unit) {
    throw Failure{std::string(source) + " must be between 1 and " + std::to_string(max_input_bytes_ceiling) +
                  " bytes, not '" + one_line(text, 40) + "'"};
  }
  return value * unit;
}

/// The input cap: `--max-input-bytes`, else `$WRAPIR_MAX_INPUT_BYTES`, else 1 GiB.
inline std::uint64_t max_input_bytes(const Arguments& a) {
  if (auto option = a.value("--max-input-bytes")) return parse_byte_count(*option, "--max-input-bytes");
  const char* variable = std::getenv(max_input_bytes_variable);  // NOLINT(concurrency-mt-unsafe): single-threaded tool
  if (variable != nullptr && *variable != '\0') return parse_byte_count(variable, max_input_bytes_variable);
  return default_max_input_bytes;
}

/// The regular file at `path` opened for reading, at most `max_bytes` long.
inline detail::RegularFile open_input(std::string_view path, std::uint64_t max_bytes) {
  auto file = detail::open_regular_file(
      std::string(path),
      {.max_bytes = max_bytes, .follow_symlinks = true, .limit_hint = "--max-input-bytes or $WRAPIR_MAX_INPUT_BYTES raises it"});
  if (!file) throw Failure{file.error().message};
  return std::move(file).value();
}

/// The content of an opened input (its size at the open; bytes appended
/// since are not read).
inline std::string read_whole(const detail::RegularFile& file, std::string_view path) {
  std::string content(static_cast<std::size_t>(file.size()), '\0');
  auto got = file.read_at(0, content);
  if (!got) throw Failure{"cannot read " + detail::quoted_path(std::string(path)) + ": " + got.error().message};
  content.resize(*got);
  return content;
}

/// Whether the first character of an opened input that is not blank is `{`
/// (JSON); reads only as far as that character.
inline bool starts_with_object(const detail::RegularFile& file) {
  char chunk[4096];
  for (std::uint64_t offset = 0; offset < file.size();) {
    auto got = file.read_at(offset, chunk);
    if (!got || *got == 0) return false;
    const std::string_view text(chunk, *got);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos) return text[first] == '{';
    offset += *got;
  }
  return false;
}

/// Replaces the file at `path` with `text` atomically.
inline void write_output_file(std::string_view path, std::string_view text) {
  const Result<void> written = detail::write_file_atomically(std::string(path), text);
  if (!written) throw Failure{written.error().message};
}

}  // namespace wrapir::cli
