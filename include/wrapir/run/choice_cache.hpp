#pragma once
/// \file
/// Where multi-kernel choices are kept: on disk across processes
/// (`ChoiceCache`, reference §5.3's "picked_kernel" cache file) and in memory
/// for code generation (`ChoiceRegistry`, Inductor's `record_choice` /
/// `lookup_choice`, so that a C++ emitter can call the winning kernel
/// directly).
///
/// A cache entry is one self-validating line of text, in a file named by the
/// entry's key (`multi_kernel_choice_key` in run/multi_kernel.hpp: a hash of
/// the candidates' identities, size hints and argument slices, so a
/// candidate built differently — another compiler, flag or header — is
/// another key):
///
/// ```
/// <directory>/f0d7f0c6720e6fbe.v1.choice:
/// wrapir-multi-kernel-choice v1 key=f0d7f0c6720e6fbe candidates=2 choice=1 checksum=ddc5f1e203d53d62
/// ```
///
/// The record echoes its key and candidate count and ends with an FNV-1a
/// checksum of everything before the checksum field, followed by exactly one
/// newline. A reader therefore detects a truncated file (no newline or a
/// short checksum), a corrupted one (checksum mismatch), one written for
/// other kernels (key or count mismatch) and an out-of-range choice, and
/// ignores such an entry with a warning: the caller benchmarks again and
/// overwrites it. A bad entry never throws and never selects a candidate
/// that does not exist.
///
/// Readers open an entry without following a symbolic link and without
/// blocking (`O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC`), check the opened file
/// with `fstat` and ignore, with a warning, anything but a regular file of
/// at most `max_choice_record_size + 1` bytes: a link, FIFO, device or
/// directory planted in the cache directory is never followed, never blocks
/// and is never read (wrapir/detail/safe_file.hpp). Paths in warnings are
/// escaped (control characters and bytes that are not UTF-8 become `\xHH`).
///
/// Writers never expose a partial file: the record goes to a fresh temporary
/// file in the same directory (created with `O_CREAT | O_EXCL | O_NOFOLLOW`,
/// so concurrent writers never share one and a planted link is never
/// followed), which is then renamed over the entry; POSIX `rename` replaces
/// the target atomically (a link at the entry's name is replaced, not
/// followed), so a reader sees either the old complete record or the new
/// complete record. There is no `fsync`: after a power cut
/// an entry may be empty or stale, which validation catches (an empty file
/// fails to parse); a stale-but-valid choice is still a valid candidate.
/// Temporary files of a writer that crashed between create and rename are
/// left behind (`<key>.tmp.*`); they are never read and may be deleted at any
/// time.
///
/// The format version is part of the file name as well as the record, so
/// builds that write different versions share a directory without warning
/// about each other's entries.
///
/// Thread safety: `ChoiceCache` has no mutable state; any number of threads
/// and processes may load and store concurrently (warnings go to the sink
/// from the calling thread — a custom sink must be thread-safe if the cache
/// is shared). `ChoiceRegistry` locks internally.

#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/run/detail/stable_hash.hpp>
#include <wrapir/run/detail/text.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace wrapir::run {

/// Receives one warning (a single line, no trailing newline). Must be
/// thread-safe when the object that owns it is used from several threads.
using WarningSink = std::function<void(std::string_view)>;

/// Writes `wrapir: warning: <message>` and a newline to stderr in one write,
/// so that warnings of concurrent threads do not interleave within a line.
inline void warn_to_stderr(std::string_view message) {
  std::string line = "wrapir: warning: ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

/// The key of one cache entry: a stable 64-bit hash of everything the choice
/// depends on (see `multi_kernel_choice_key` in run/multi_kernel.hpp).
struct ChoiceKey {
  std::uint64_t value = 0;
  [[nodiscard]] std::string hex() const { return detail::hex16(value); }
  friend constexpr bool operator==(ChoiceKey, ChoiceKey) = default;
};

/// The content of one cache entry.
struct ChoiceRecord {
  ChoiceKey key{};
  std::uint64_t candidate_count = 0;
  std::uint64_t choice = 0;
  friend constexpr bool operator==(const ChoiceRecord&, const ChoiceRecord&) = default;
};

inline constexpr std::string_view choice_record_magic = "wrapir-multi-kernel-choice";
inline constexpr std::string_view choice_record_version = "v1";
/// No valid record is longer (the numbers have at most 20 digits); a reader
/// reads one byte more to tell "too long" from "exactly this long".
inline constexpr std::size_t max_choice_record_size = 160;

namespace detail {

inline constexpr std::string_view checksum_field = "checksum=";

[[nodiscard]] inline std::string choice_record_body(const ChoiceRecord& r) {
  std::string body;
  body += choice_record_magic;
  body += ' ';
  body += choice_record_version;
  body += " key=" + r.key.hex();
  body += " candidates=" + std::to_string(r.candidate_count);
  body += " choice=" + std::to_string(r.choice);
  body += ' ';
  return body;
}

/// Splits `line` at single spaces; empty fields (two spaces) stay empty and
/// so fail the field checks.
[[nodiscard]] inline std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t space = line.find(' ', start);
    fields.push_back(line.substr(start, space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return fields;
}

/// The value after `name=` in `field`, or nullopt when `field` is another field.
[[nodiscard]] inline std::optional<std::string_view> field_value(std::string_view field, std::string_view name) {
  if (field.size() <= name.size() || field.substr(0, name.size()) != name || field[name.size()] != '=') {
    return std::nullopt;
  }
  return field.substr(name.size() + 1);
}

}  // namespace detail

/// The text of the entry for `record`: one line ending in a newline. Writes
/// what it is given; `parse_choice_record` is the validator.
[[nodiscard]] inline std::string format_choice_record(const ChoiceRecord& record) {
  std::string text = detail::choice_record_body(record);
  text += detail::checksum_field;
  text += detail::hex16(detail::fnv1a_64(text));
  text += '\n';
  return text;
}

/// Parses and validates the text of one entry: exact layout, format version,
/// checksum, and a choice below the record's own candidate count. Does not
/// compare against an expected key (`ChoiceCache::load` does).
[[nodiscard]] inline Result<ChoiceRecord> parse_choice_record(std::string_view text) {
  auto fail = [](std::string why) { return Diagnostic{std::move(why)}; };
  if (text.empty()) return fail("the entry is empty");
  const std::size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return fail("the entry is truncated (no end of line)");
  if (newline + 1 != text.size()) return fail("the entry has data after its end of line");
  const std::string_view line = text.substr(0, newline);
  const std::vector<std::string_view> fields = detail::split_fields(line);
  if (fields.front() != choice_record_magic) {
    return fail("the entry is not a wrapir multi-kernel choice record");
  }
  if (fields.size() < 2 || fields[1] != choice_record_version) {
    return fail("the entry has format version " + detail::quoted(fields.size() < 2 ? "" : fields[1]) +
                ", expected " + std::string(choice_record_version));
  }
  if (fields.size() != 6) {
    return fail("the entry has " + std::to_string(fields.size()) + " fields, expected 6");
  }
  const auto key = detail::field_value(fields[2], "key");
  const auto key_value = key ? detail::parse_hex16(*key) : std::nullopt;
  if (!key_value) return fail("the entry's field " + detail::quoted(fields[2]) + " is not key=<16 hex digits>");
  const auto count = detail::field_value(fields[3], "candidates");
  const auto count_value = count ? detail::parse_canonical_decimal(*count) : std::nullopt;
  if (!count_value) return fail("the entry's field " + detail::quoted(fields[3]) + " is not candidates=<count>");
  const auto choice = detail::field_value(fields[4], "choice");
  const auto choice_value = choice ? detail::parse_canonical_decimal(*choice) : std::nullopt;
  if (!choice_value) return fail("the entry's field " + detail::quoted(fields[4]) + " is not choice=<index>");
  const auto checksum = detail::field_value(fields[5], "checksum");
  const auto checksum_value = checksum ? detail::parse_hex16(*checksum) : std::nullopt;
  if (!checksum_value) {
    return fail("the entry's field " + detail::quoted(fields[5]) + " is not checksum=<16 hex digits>");
  }
  const std::string_view checked = line.substr(0, line.size() - fields[5].size());
  const std::uint64_t actual = detail::fnv1a_64(detail::checksum_field, detail::fnv1a_64(checked));
  if (actual != *checksum_value) {
    return fail("the entry's checksum " + detail::hex16(*checksum_value) + " does not match its content (" +
                detail::hex16(actual) + ")");
  }
  if (*choice_value >= *count_value) {
    return fail("the entry's choice " + std::to_string(*choice_value) + " is out of range for " +
                std::to_string(*count_value) + " candidates");
  }
  return ChoiceRecord{ChoiceKey{*key_value}, *count_value, *choice_value};
}

/// The environment variable that overrides the cache directory.
inline constexpr const char* cache_directory_variable = "WRAPIR_MULTI_KERNEL_CACHE_DIR";
/// The environment variable that disables the cache when set to `1`
/// (Inductor's `TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE`).
inline constexpr const char* disable_cache_variable = "WRAPIR_DISABLE_MULTI_KERNEL_CACHE";

/// The last-resort cache directory, in the system temporary directory and
/// so in a place other users can write: `<temp>/wrapir-multi-kernel-<uid>`
/// (POSIX; the effective user id keeps users apart). `ChoiceCache` creates
/// it with mode 0700 and uses it only while it is a directory (not a link)
/// owned by this user that group and others cannot write; otherwise it warns
/// and caches nothing. Elsewhere `<temp>/wrapir-multi-kernel`.
[[nodiscard]] inline std::filesystem::path shared_choice_cache_directory() {
  std::string name = "wrapir-multi-kernel";
#if defined(__unix__) || defined(__APPLE__)
  name += "-" + std::to_string(::geteuid());
#endif
  std::error_code ec;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  return ec ? std::filesystem::path(name) : temp / name;
}

namespace detail {
/// `directory` with its parent resolved (links, `.`, `..`, repeated
/// separators) but its last component kept as spelled: a link planted in
/// place of the directory must still compare equal to the directory's
/// name, so that it gets the checks meant for that name.
[[nodiscard]] inline std::filesystem::path resolved_parent_form(const std::filesystem::path& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path normal = fs::absolute(directory, ec);
  if (ec) normal = directory;
  normal = normal.lexically_normal();
  if (!normal.has_filename() && normal.has_parent_path() && normal != normal.root_path()) {
    normal = normal.parent_path();  // "/tmp/x/" names /tmp/x
  }
  const fs::path parent = fs::weakly_canonical(normal.parent_path(), ec);
  return ec ? normal : parent / normal.filename();
}
}  // namespace detail

/// True when `directory` is `shared_choice_cache_directory()`, however it
/// is spelled (`/tmp/./wrapir-multi-kernel-0`, `/tmp//…`, through a link to
/// the temporary directory): a lexical comparison would let such a spelling
/// skip the privacy check.
[[nodiscard]] inline bool is_shared_choice_cache_directory(const std::filesystem::path& directory) {
  return detail::resolved_parent_form(directory) == detail::resolved_parent_form(shared_choice_cache_directory());
}

/// The directory used when the options name none, first match wins:
/// `$WRAPIR_MULTI_KERNEL_CACHE_DIR`; `$XDG_CACHE_HOME/wrapir/multi_kernel`
/// (when absolute, as the XDG spec requires); `%LOCALAPPDATA%\wrapir\multi_kernel`
/// on Windows; `$HOME/.cache/wrapir/multi_kernel`;
/// `shared_choice_cache_directory()`. An entry planted in any of them can
/// only select another of the program's own candidates (it is validated), so
/// the risk is speed, not correctness.
[[nodiscard]] inline std::filesystem::path default_choice_cache_directory() {
  namespace fs = std::filesystem;
  auto variable = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
  if (auto dir = variable(cache_directory_variable)) return fs::path(*dir);
  if (auto xdg = variable("XDG_CACHE_HOME"); xdg && fs::path(*xdg).is_absolute()) {
    return fs::path(*xdg) / "wrapir" / "multi_kernel";
  }
#ifdef _WIN32
  if (auto local = variable("LOCALAPPDATA")) return fs::path(*local) / "wrapir" / "multi_kernel";
#endif
  if (auto home = variable("HOME")) return fs::path(*home) / ".cache" / "wrapir" / "multi_kernel";
  return shared_choice_cache_directory();
}

/// True when `$WRAPIR_DISABLE_MULTI_KERNEL_CACHE` is `1`.
[[nodiscard]] inline bool cache_disabled_by_environment() {
  const char* value = std::getenv(disable_cache_variable);  // NOLINT(concurrency-mt-unsafe)
  return value != nullptr && std::string_view(value) == "1";
}

/// The on-disk cache of multi-kernel choices in one directory (see the file
/// comment for the format and the guarantees). When the directory is
/// `shared_choice_cache_directory()`, it is also checked to be private to
/// this user before every load and store.
class ChoiceCache {
 public:
  /// `warn` receives every warning; an empty sink means stderr.
  explicit ChoiceCache(std::filesystem::path directory, WarningSink warn = {})
      : directory_(std::move(directory)),
        warn_(std::move(warn)),
        shared_(is_shared_choice_cache_directory(directory_)) {}

  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }

  /// The file that holds the entry for `key`.
  [[nodiscard]] std::filesystem::path path_for(ChoiceKey key) const {
    return directory_ / (key.hex() + "." + std::string(choice_record_version) + ".choice");
  }

  /// The cached choice for `key` among `candidate_count` candidates, or
  /// nullopt when there is none or the entry is unusable (then with a
  /// warning, except for a plain miss). Never throws for a bad entry, never
  /// blocks on one.
  [[nodiscard]] std::optional<std::size_t> load(ChoiceKey key, std::size_t candidate_count) const {
    if (shared_) {
      std::error_code ec;
      if (!std::filesystem::exists(std::filesystem::symlink_status(directory_, ec))) return std::nullopt;
      if (const Result<void> usable = ::wrapir::detail::check_private_directory(directory_, false); !usable) {
        warn("multi-kernel cache: " + usable.error().message + "; benchmarking again");
        return std::nullopt;
      }
    }
    const std::filesystem::path path = path_for(key);
    const ::wrapir::detail::ReadOutcome read = ::wrapir::detail::read_regular_file_outcome(
        path, {.max_bytes = max_choice_record_size, .follow_symlinks = false, .limit_hint = "no valid record is that long"});
    if (read.missing) return std::nullopt;
    auto ignore = [&](const std::string& why) -> std::optional<std::size_t> {
      warn("ignoring multi-kernel cache entry " + ::wrapir::detail::quoted_path(path) + ": " + why +
           "; benchmarking again");
      return std::nullopt;
    };
    if (!read.content) return ignore(read.why);
    const Result<ChoiceRecord> record = parse_choice_record(*read.content);
    if (!record) return ignore(record.error().message);
    if (record->key != key) {
      return ignore("the entry is for key " + record->key.hex() + ", not " + key.hex());
    }
    if (record->candidate_count != candidate_count) {
      return ignore("the entry is for " + std::to_string(record->candidate_count) + " candidates, not " +
                    std::to_string(candidate_count));
    }
    return static_cast<std::size_t>(record->choice);
  }

  /// Stores `choice` for `key` atomically (temporary file + rename). Returns
  /// false, after a warning, when the entry could not be written; the caller
  /// goes on with its in-memory choice. Never throws for I/O failures.
  bool store(ChoiceKey key, std::size_t candidate_count, std::size_t choice) const {
    if (shared_) {
      if (const Result<void> usable = ::wrapir::detail::check_private_directory(directory_, true); !usable) {
        warn("multi-kernel cache: " + usable.error().message + "; not caching the choice");
        return false;
      }
    } else {
      std::error_code ec;
      std::filesystem::create_directories(directory_, ec);
      if (ec) {
        warn("cannot create multi-kernel cache directory " + ::wrapir::detail::quoted_path(directory_) + ": " +
             ec.message());
        return false;
      }
    }
    const std::string text = format_choice_record(ChoiceRecord{key, candidate_count, choice});
    // Whatever stands at the entry's name in our directory (a stale link, a
    // FIFO) is replaced, not followed: the entry is ours to rewrite.
    const Result<void> written = ::wrapir::detail::write_file_atomically(
        path_for(key), text, {.temporary_prefix = key.hex() + ".tmp.", .replace_special_files = true});
    if (!written) {
      warn("multi-kernel cache: " + written.error().message);
      return false;
    }
    return true;
  }

 private:
  void warn(const std::string& message) const {
    if (warn_) {
      warn_(message);
    } else {
      warn_to_stderr(message);
    }
  }

  std::filesystem::path directory_;
  WarningSink warn_;
  bool shared_;
};

/// Which candidate each multi-kernel chose, by name: filled when a program
/// runs (the dispatchers of run/multi_kernel.hpp record into it when their
/// options point at one), read by a C++ emitter that calls the winners
/// directly (reference §5.2, cpp-wrapper's second pass). Thread-safe.
class ChoiceRegistry {
 public:
  /// Records that `multi_kernel` chose `candidate`. Recording the same pair
  /// again is harmless. A different candidate for a name already recorded
  /// is refused with a diagnostic and the first choice stands: generated
  /// code may already call it.
  [[nodiscard]] Result<void> record(std::string_view multi_kernel, std::string_view candidate) {
    const std::scoped_lock lock(mutex_);
    const auto [it, inserted] = choices_.try_emplace(std::string(multi_kernel), std::string(candidate));
    if (inserted || it->second == candidate) return {};
    return Diagnostic{"multi-kernel " + detail::quoted(multi_kernel) + " already chose " + detail::quoted(it->second) +
                      "; not recording " + detail::quoted(candidate)};
  }

  /// The candidate `multi_kernel` chose, or a diagnostic when none was recorded.
  [[nodiscard]] Result<std::string> lookup(std::string_view multi_kernel) const {
    const std::scoped_lock lock(mutex_);
    if (const auto it = choices_.find(multi_kernel); it != choices_.end()) return it->second;
    return Diagnostic{"no choice recorded for multi-kernel " + detail::quoted(multi_kernel) +
                      " (run the program once with this registry in its multi-kernel options before generating "
                      "direct calls)"};
  }

  /// Every (multi-kernel, candidate) pair, sorted by multi-kernel name.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> entries() const {
    const std::scoped_lock lock(mutex_);
    return {choices_.begin(), choices_.end()};
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> choices_;
};

}  // namespace wrapir::run
