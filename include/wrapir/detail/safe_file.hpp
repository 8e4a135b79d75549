#pragma once
/// \file
/// Reading and writing files that someone else may have planted: the
/// `wrapir` tool's inputs and outputs and the multi-kernel choice cache
/// (run/choice_cache.hpp) share these few functions.
///
/// - `read_regular_file` opens without blocking (a FIFO with no writer does
///   not hang it) and, when asked, without following a symbolic link; it then
///   checks the *opened* descriptor with `fstat` (no gap between a check and
///   the open), refuses anything but a regular file, and refuses a file
///   larger than a cap before reading it (so `/dev/zero` or a 2 GB sparse
///   file cost nothing). A path that is not a regular file by `stat` is
///   refused before it is opened at all, so no device is ever opened.
/// - `write_file_atomically` (or `write_file_atomically_streamed`, for
///   content passed in pieces) writes a fresh temporary file created with
///   `O_EXCL | O_NOFOLLOW` in the target's directory and renames it over the
///   target: readers see the old or the new content, a symbolic link planted
///   where the temporary goes is never followed, and the temporary is removed
///   on every failure. `rename` replaces a directory entry, it never writes
///   through a link at the target.
/// - `check_private_directory` makes (mode 0700) or accepts a directory only
///   when it is a real directory owned by this user that neither group nor
///   others can write: for a cache kept in a shared place such as /tmp.
/// - `path_under` joins a relative path (from a program or a kernel list)
///   to a directory, refusing an empty or absolute one and one that climbs
///   out with `..`: what the emitters and the run-time providers both need
///   before they read a file a program names.
/// - `escaped_path` shows a path on one line: control characters, bytes
///   that are not UTF-8 and Unicode bidirectional controls become `\xHH`.
///
/// All return `Result`s whose diagnostics name the path (escaped) and why.
/// POSIX (Linux, macOS) gets the guarantees above; elsewhere a portable
/// fallback with the same interface checks the file type with
/// std::filesystem before opening (not atomic with the open) and creates
/// temporaries exclusively with `fopen(..., "wbx")`.

#include <wrapir/detail/escape.hpp>
#include <wrapir/detail/utf8.hpp>
#include <wrapir/diagnostic.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#if defined(__unix__) || defined(__APPLE__)
#define WRAPIR_SAFE_FILE_POSIX 1
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#else
#include <fstream>
#endif

namespace wrapir::detail {

// `printable(text, escape_backslash)`, the diagnostic escaper, is in
// wrapir/detail/escape.hpp.

/// A path (or any name) fit for a diagnostic line: `printable` with
/// backslashes escaped.
[[nodiscard]] inline std::string escaped_path(std::string_view path) { return printable(path, true); }

/// `path` escaped (`escaped_path`) and in single quotes, for diagnostics.
[[nodiscard]] inline std::string quoted_path(const std::filesystem::path& path) {
  return "'" + escaped_path(path.string()) + "'";
}

/// The text of `errno` value `error` ("No such file or directory").
[[nodiscard]] inline std::string errno_text(int error) { return std::generic_category().message(error); }

/// `relative` (`what`, e.g. "the kernel file's path") joined to
/// `directory` (`where`, e.g. "the kernel directory"), or why it would not
/// name something under it: empty,
/// absolute, or climbing out with `..`. Lexical only: a symbolic link
/// below `directory` is the reader's to refuse (`follow_symlinks`).
[[nodiscard]] inline Result<std::filesystem::path> path_under(const std::filesystem::path& directory,
                                                               std::string_view relative, std::string_view what,
                                                               std::string_view where = "the directory") {
  if (relative.empty()) return Diagnostic{std::string(what) + " is empty"};
  const std::filesystem::path path(relative);
  const std::string shown = "'" + escaped_path(relative) + "'";
  if (path.is_absolute() || path.has_root_name() || path.has_root_directory())
    return Diagnostic{std::string(what) + " " + shown + " is absolute; it must be relative to " + std::string(where) + " " +
                      quoted_path(directory)};
  for (const std::filesystem::path& part : path)
    if (part == "..")
      return Diagnostic{std::string(what) + " " + shown + " leaves " + std::string(where) + " " + quoted_path(directory) +
                        " ('..')"};
  return directory / path;
}

struct ReadOptions {
  /// A larger file is refused before it is read.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  /// Whether a symbolic link at the path itself is followed (links in the
  /// directories above it always are).
  bool follow_symlinks = true;
  /// Appended to the diagnostic of a file over the limit: how to raise it.
  std::string_view limit_hint{};
};

struct WriteOptions {
  /// The temporary file's name is this prefix and 16 hexadecimal digits;
  /// empty: `.<target name>.tmp.` (hidden, next to the target).
  std::string temporary_prefix{};
  /// What may stand at the target and be replaced. A regular file always
  /// may (its rwx permission bits are kept). With false, anything else (a
  /// symbolic link, a FIFO, a device) is refused; with true it is replaced
  /// by the new file — the link is replaced, never followed. A directory is
  /// always refused.
  bool replace_special_files = false;
};

namespace safe_file_detail {

/// Distinct between processes, threads and calls, and hard to guess across
/// runs (the clock and the address of a stack variable, which ASLR moves);
/// exclusive creation makes a collision harmless either way.
[[nodiscard]] inline std::uint64_t unique_number() {
  static std::atomic<std::uint64_t> counter{0};
  auto mix = [](std::uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const int local = 0;
  std::uint64_t h = mix(counter.fetch_add(1, std::memory_order_relaxed));
  h = mix(h ^ static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  h = mix(h ^ static_cast<std::uint64_t>(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  h = mix(h ^ static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&local)));
#ifdef WRAPIR_SAFE_FILE_POSIX
  h = mix(h ^ static_cast<std::uint64_t>(::getpid()));
#endif
  return h;
}

[[nodiscard]] inline std::string hex16(std::uint64_t value) {
  static constexpr std::string_view digits = "0123456789abcdef";
  std::string out(16, '0');
  for (std::size_t i = 0; i < 16; ++i) out[15 - i] = digits[(value >> (4 * i)) & 0xf];
  return out;
}

/// `at_least`: the size is what was read before stopping (a file that grew,
/// or one that reports no size, such as those in /proc).
[[nodiscard]] inline std::string too_large(std::uint64_t size, const ReadOptions& options, bool at_least = false) {
  std::string why = (at_least ? "it is at least " : "it is ") + std::to_string(size) + " bytes, more than the limit of " +
                    std::to_string(options.max_bytes) + " bytes";
  if (!options.limit_hint.empty()) why += " (" + std::string(options.limit_hint) + ")";
  return why;
}

#ifdef WRAPIR_SAFE_FILE_POSIX

/// "a directory", "a FIFO", ... for the type bits of `mode`.
[[nodiscard]] inline std::string_view file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[nodiscard]] inline std::string not_regular(mode_t mode) {
  return "it is " + std::string(file_type_name(mode)) + ", not a regular file";
}

/// Closes a descriptor on every path out of a scope.
class Descriptor {
 public:
  explicit Descriptor(int fd) noexcept : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { close(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  /// Closes now; false when close reported an error (a failed write-back).
  bool close() noexcept {
    if (fd_ < 0) return true;
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;  // never retried: the descriptor is gone on Linux even after EINTR
  }

 private:
  int fd_;
};

/// Unlinks a path when the scope ends, unless told to keep it.
struct RemoveUnlessKept {
  explicit RemoveUnlessKept(const std::filesystem::path& to_remove) noexcept : path(to_remove) {}
  const std::filesystem::path& path;
  bool keep = false;
  RemoveUnlessKept(const RemoveUnlessKept&) = delete;
  RemoveUnlessKept& operator=(const RemoveUnlessKept&) = delete;
  ~RemoveUnlessKept() {
    if (!keep) ::unlink(path.c_str());
  }
};

[[nodiscard]] inline int open_retrying(const char* path, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = ::open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

#else

[[nodiscard]] inline std::string not_regular(std::filesystem::file_type type) {
  using std::filesystem::file_type;
  switch (type) {
    case file_type::directory: return "it is a directory, not a regular file";
    case file_type::symlink: return "it is a symbolic link, not a regular file";
    case file_type::fifo: return "it is a FIFO, not a regular file";
    case file_type::character: return "it is a character device, not a regular file";
    case file_type::block: return "it is a block device, not a regular file";
    case file_type::socket: return "it is a socket, not a regular file";
    default: return "it is not a regular file";
  }
}

#endif

}  // namespace safe_file_detail

/// A regular file opened for reading, with its size at the open: what
/// `open_regular_file` gives for reading at offsets without holding the
/// whole content (the `wrapir` tool's chunked JSON loading).
class RegularFile {
 public:
  /// The size `fstat` reported when the file was opened.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

  /// Copies the bytes from `offset` on into `buffer`; returns how many,
  /// fewer than asked only at the end of the file. A failure says why
  /// ("reading at byte N failed: ..."); the caller names the file.
  [[nodiscard]] Result<std::size_t> read_at(std::uint64_t offset, std::span<char> buffer) const {
    std::size_t filled = 0;
#ifdef WRAPIR_SAFE_FILE_POSIX
    if (!descriptor_) return Diagnostic{"the file is not open"};  // a default-constructed RegularFile
    while (filled < buffer.size()) {
      const ssize_t got = ::pread(descriptor_->get(), buffer.data() + filled, buffer.size() - filled,
                                  static_cast<off_t>(offset + filled));
      if (got < 0) {
        if (errno == EINTR) continue;
        return Diagnostic{"reading at byte " + std::to_string(offset + filled) + " failed: " + errno_text(errno)};
      }
      if (got == 0) break;
      filled += static_cast<std::size_t>(got);
    }
#else
    if (!stream_) return Diagnostic{"the file is not open"};
    stream_->clear();
    stream_->seekg(static_cast<std::streamoff>(offset));
    stream_->read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (stream_->bad()) return Diagnostic{"reading at byte " + std::to_string(offset) + " failed"};
    filled = static_cast<std::size_t>(stream_->gcount());
#endif
    return filled;
  }

 private:
  friend struct RegularFileAccess;
  std::uint64_t size_ = 0;
#ifdef WRAPIR_SAFE_FILE_POSIX
  std::shared_ptr<safe_file_detail::Descriptor> descriptor_{};
#else
  std::shared_ptr<std::ifstream> stream_{};
#endif
};

/// What `open_regular_file_outcome` found: the open file, or why there is
/// none (`missing` when nothing is at the path).
struct OpenOutcome {
  std::optional<RegularFile> file{};
  bool missing = false;
  /// Why there is no file: "it is a FIFO, not a regular file", ...
  std::string why{};
};

struct RegularFileAccess {
#ifdef WRAPIR_SAFE_FILE_POSIX
  using Handle = std::shared_ptr<safe_file_detail::Descriptor>;
#else
  using Handle = std::shared_ptr<std::ifstream>;
#endif
  static RegularFile make(std::uint64_t size, Handle handle) {
    RegularFile file;
    file.size_ = size;
#ifdef WRAPIR_SAFE_FILE_POSIX
    file.descriptor_ = std::move(handle);
#else
    file.stream_ = std::move(handle);
#endif
    return file;
  }
};

/// The regular file at `path` opened for reading, or why not: it does not
/// exist, it is a directory / FIFO / device / socket, it is a symbolic link
/// (when not followed) or a loop of them, it is larger than
/// `options.max_bytes`, or an I/O error. Never blocks on a FIFO, never opens
/// a device.
[[nodiscard]] inline OpenOutcome open_regular_file_outcome(const std::filesystem::path& path,
                                                           const ReadOptions& options = {}) {
  namespace sd = safe_file_detail;
  auto fail = [](std::string why) { return OpenOutcome{std::nullopt, false, std::move(why)}; };
#ifdef WRAPIR_SAFE_FILE_POSIX
  auto fail_errno = [&](int error) {
    if (error == ENOENT) return OpenOutcome{std::nullopt, true, errno_text(error)};
    if (error == ELOOP) {
      return fail(options.follow_symlinks ? "too many levels of symbolic links (a loop?)"
                                          : "it is a symbolic link, which is not followed");
    }
    return fail(errno_text(error));
  };
  // A first look without opening, so that no device is ever opened (opening
  // some has side effects); the check that counts is fstat's below.
  struct stat before {};
  if ((options.follow_symlinks ? ::stat(path.c_str(), &before) : ::lstat(path.c_str(), &before)) != 0) {
    return fail_errno(errno);
  }
  if (!options.follow_symlinks && S_ISLNK(before.st_mode)) return fail_errno(ELOOP);
  if (!S_ISREG(before.st_mode)) return fail(sd::not_regular(before.st_mode));

  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (options.follow_symlinks ? 0 : O_NOFOLLOW);
  const int fd = sd::open_retrying(path.c_str(), flags);
  if (fd < 0) return fail_errno(errno);
  auto descriptor = std::make_shared<sd::Descriptor>(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(errno_text(errno));
  if (!S_ISREG(st.st_mode)) return fail(sd::not_regular(st.st_mode));
  // O_NONBLOCK only guarded the open; reads of a regular file should block.
  if (const int status = ::fcntl(fd, F_GETFL); status >= 0) ::fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > options.max_bytes) return fail(sd::too_large(size, options));
  return OpenOutcome{RegularFileAccess::make(size, std::move(descriptor)), false, {}};
#else
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = options.follow_symlinks ? fs::status(path, ec) : fs::symlink_status(path, ec);
  if (status.type() == fs::file_type::not_found) return OpenOutcome{std::nullopt, true, "it does not exist"};
  if (ec) return fail(ec.message());
  if (fs::is_symlink(status)) return fail("it is a symbolic link, which is not followed");
  if (!fs::is_regular_file(status)) return fail(sd::not_regular(status.type()));
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return fail(ec.message());
  if (size > options.max_bytes) return fail(sd::too_large(size, options));
  auto stream = std::make_shared<std::ifstream>(path, std::ios::binary);
  if (!*stream) return fail("it cannot be opened");
  return OpenOutcome{RegularFileAccess::make(size, std::move(stream)), false, {}};
#endif
}

/// The regular file at `path` opened for reading (see
/// `open_regular_file_outcome`), or the diagnostic "cannot read '<path>': <why>".
[[nodiscard]] inline Result<RegularFile> open_regular_file(const std::filesystem::path& path,
                                                           const ReadOptions& options = {}) {
  OpenOutcome outcome = open_regular_file_outcome(path, options);
  if (!outcome.file) return Diagnostic{"cannot read " + quoted_path(path) + ": " + outcome.why};
  return std::move(*outcome.file);
}

/// What `read_regular_file_outcome` found: the content, or why there is
/// none (`missing` when nothing is at the path).
struct ReadOutcome {
  std::optional<std::string> content{};
  bool missing = false;
  /// Why there is no content: "it is a FIFO, not a regular file", ...
  std::string why{};
};

/// The whole content of the regular file at `path`, or why not (the
/// refusals of `open_regular_file_outcome`, or a file that grew past
/// `options.max_bytes` while it was read).
[[nodiscard]] inline ReadOutcome read_regular_file_outcome(const std::filesystem::path& path,
                                                           const ReadOptions& options = {}) {
  OpenOutcome opened = open_regular_file_outcome(path, options);
  if (!opened.file) return ReadOutcome{std::nullopt, opened.missing, std::move(opened.why)};
  const RegularFile& file = *opened.file;
  // One byte more than the size: a file that grew is noticed, and one that
  // reports no size (some in /proc) is read in chunks up to the limit.
  const std::uint64_t past_limit = options.max_bytes + (options.max_bytes < UINT64_MAX ? 1 : 0);
  std::string content;
  content.resize(static_cast<std::size_t>(file.size()) + 1);
  std::size_t filled = 0;
  while (true) {
    if (filled == content.size()) {
      if (filled >= past_limit) {
        return ReadOutcome{std::nullopt, false, safe_file_detail::too_large(filled, options, true)};
      }
      content.resize(static_cast<std::size_t>(std::min<std::uint64_t>(past_limit, filled + (std::size_t{1} << 16))));
    }
    Result<std::size_t> got = file.read_at(filled, std::span<char>(content.data() + filled, content.size() - filled));
    if (!got) return ReadOutcome{std::nullopt, false, got.error().message};
    if (*got == 0) break;
    filled += *got;
  }
  content.resize(filled);
  return ReadOutcome{std::move(content), false, {}};
}

/// The whole content of the regular file at `path` (see
/// `read_regular_file_outcome`), or the diagnostic "cannot read '<path>': <why>".
[[nodiscard]] inline Result<std::string> read_regular_file(const std::filesystem::path& path,
                                                           const ReadOptions& options = {}) {
  ReadOutcome outcome = read_regular_file_outcome(path, options);
  if (!outcome.content) return Diagnostic{"cannot read " + quoted_path(path) + ": " + outcome.why};
  return std::move(*outcome.content);
}



/// Appends bytes to the file being written; a diagnostic names the path
/// and why the write failed.
using FileWriter = std::function<Result<void>(std::string_view)>;

/// Replaces the file at `target` atomically (see the file comment) with
/// what `fill` passes to the writer it is given, in as many calls as it
/// likes — a large output need never be whole in memory. A diagnostic of
/// the writer or of `fill` itself (which should return the writer's) is
/// returned as it is: then nothing changed and no temporary file is left.
[[nodiscard]] inline Result<void> write_file_atomically_streamed(const std::filesystem::path& target,
                                                                 const std::function<Result<void>(const FileWriter&)>& fill,
                                                                 const WriteOptions& options = {}) {
  namespace fs = std::filesystem;
  namespace sd = safe_file_detail;
  auto fail = [&](const std::string& why) { return Diagnostic{"cannot write " + quoted_path(target) + ": " + why}; };
  const fs::path name = target.filename();
  if (name.empty() || name == "." || name == "..") return fail("it names a directory, not a file");
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix =
      options.temporary_prefix.empty() ? "." + name.string().substr(0, 100) + ".tmp." : options.temporary_prefix;
#ifdef WRAPIR_SAFE_FILE_POSIX
  mode_t keep_mode = 0;
  bool keep = false;
  struct stat existing {};
  if (::lstat(target.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode)) return fail("it is a directory");
    if (S_ISREG(existing.st_mode)) {
      keep = true;
      keep_mode = existing.st_mode & 0777;  // not set-id bits: new content must not inherit them
    } else if (!options.replace_special_files) {
      return fail(sd::not_regular(existing.st_mode) + "; refusing to replace it");
    }
  } else if (errno != ENOENT) {
    return fail(errno_text(errno));
  }

  for (int attempt = 0; attempt < 32; ++attempt) {
    const fs::path temporary = directory / (prefix + sd::hex16(sd::unique_number()));
    // O_EXCL: never an existing file, and with O_CREAT it does not follow a
    // link either; O_NOFOLLOW says so explicitly.
    sd::Descriptor file{sd::open_retrying(temporary.c_str(),
                                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666)};
    if (file.get() < 0) {
      const int error = errno;
      if (error == EEXIST) continue;
      return Diagnostic{"cannot create a temporary file in " + quoted_path(directory) + " to write " +
                        quoted_path(target) + ": " + errno_text(error)};
    }
    // From here every way out but a successful rename removes the temporary
    // (an exception from building a message included).
    sd::RemoveUnlessKept temporary_guard{temporary};
    auto write_failed = [&](int error) { return fail("writing " + quoted_path(temporary) + " failed: " + errno_text(error)); };
    const FileWriter write = [&](std::string_view content) -> Result<void> {
      for (std::size_t written = 0; written < content.size();) {
        const ssize_t n = ::write(file.get(), content.data() + written, content.size() - written);
        const int error = n < 0 ? errno : EIO;  // 0 bytes written: no errno, call it an I/O error
        if (n < 0 && error == EINTR) continue;
        if (n <= 0) return write_failed(error);
        written += static_cast<std::size_t>(n);
      }
      return {};
    };
    if (Result<void> filled = fill(write); !filled) return filled;
    if (keep && ::fchmod(file.get(), keep_mode) != 0) {
      const int error = errno;
      return fail("cannot keep its permissions: " + errno_text(error));
    }
    if (!file.close()) return write_failed(errno);
    if (::rename(temporary.c_str(), target.c_str()) != 0) {
      const int error = errno;
      return fail("cannot rename " + quoted_path(temporary) + " to it: " + errno_text(error));
    }
    temporary_guard.keep = true;
    return {};
  }
  return fail("cannot find an unused temporary file name in " + quoted_path(directory));
#else
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(target, ec);
  if (fs::is_directory(status)) return fail("it is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status) && !options.replace_special_files) {
    return fail(sd::not_regular(status.type()) + "; refusing to replace it");
  }
  for (int attempt = 0; attempt < 32; ++attempt) {
    const fs::path temporary = directory / (prefix + sd::hex16(sd::unique_number()));
    std::FILE* file = std::fopen(temporary.string().c_str(), "wbx");
    if (file == nullptr) {
      if (fs::exists(fs::symlink_status(temporary, ec))) continue;
      return Diagnostic{"cannot create a temporary file in " + quoted_path(directory) + " to write " +
                        quoted_path(target)};
    }
    const FileWriter write = [&](std::string_view content) -> Result<void> {
      if (std::fwrite(content.data(), 1, content.size(), file) != content.size())
        return fail("writing " + quoted_path(temporary) + " failed");
      return {};
    };
    Result<void> filled = Diagnostic{"not filled"};
    try {
      filled = fill(write);
    } catch (...) {
      std::fclose(file);
      fs::remove(temporary, ec);
      throw;
    }
    const bool closed = std::fclose(file) == 0;
    if (!filled || !closed) {
      fs::remove(temporary, ec);
      if (!filled) return filled;
      return fail("writing " + quoted_path(temporary) + " failed");
    }
    fs::rename(temporary, target, ec);
    if (ec) {
      const std::string why = ec.message();
      fs::remove(temporary, ec);
      return fail("cannot rename " + quoted_path(temporary) + " to it: " + why);
    }
    return {};
  }
  return fail("cannot find an unused temporary file name in " + quoted_path(directory));
#endif
}

/// Replaces the file at `target` with `content` atomically (see the file
/// comment), or returns a diagnostic naming the path and why; then nothing
/// changed and no temporary file is left.
[[nodiscard]] inline Result<void> write_file_atomically(const std::filesystem::path& target, std::string_view content,
                                                        const WriteOptions& options = {}) {
  return write_file_atomically_streamed(
      target, [content](const FileWriter& write) { return write(content); }, options);
}

/// Makes `directory` (mode 0700, its parent must exist) when it is missing
/// and `create` is set, then accepts it only when it is a directory (not a
/// link to one) owned by this user and not writable by group or others.
/// A missing directory with `create` unset is a diagnostic too; callers that
/// treat it as "nothing cached" test for it first.
[[nodiscard]] inline Result<void> check_private_directory(const std::filesystem::path& directory, bool create) {
  auto refuse = [&](const std::string& why) {
    return Diagnostic{"not using directory " + quoted_path(directory) + ": " + why};
  };
#ifdef WRAPIR_SAFE_FILE_POSIX
  namespace sd = safe_file_detail;
  if (create && ::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) return refuse(errno_text(errno));
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) return refuse(errno_text(errno));
  if (!S_ISDIR(st.st_mode)) return refuse("it is " + std::string(sd::file_type_name(st.st_mode)) + ", not a directory");
  if (st.st_uid != ::geteuid()) {
    return refuse("it belongs to user id " + std::to_string(st.st_uid) + ", not to this user (" +
                  std::to_string(::geteuid()) + ")");
  }
  if ((st.st_mode & 022) != 0) {
    static constexpr std::string_view digits = "01234567";
    std::string mode = "0";
    for (int shift = 6; shift >= 0; shift -= 3) mode += digits[(st.st_mode >> shift) & 7];
    return refuse("group or others may write to it (mode " + mode + ")");
  }
  return {};
#else
  std::error_code ec;
  if (create) std::filesystem::create_directory(directory, ec);
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(directory, ec))) {
    return refuse("it is not a directory");
  }
  return {};
#endif
}

}  // namespace wrapir::detail
