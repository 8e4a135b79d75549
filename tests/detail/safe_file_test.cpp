// Tests of include/wrapir/detail/safe_file.hpp: escaping paths for one-line
// diagnostics, reading only regular files (never blocking on a FIFO, never
// reading past the cap, never following a link when told not to), atomic
// writes that never follow a planted link and leave no temporary behind, and
// the private-directory check of the choice cache's shared fallback.

#include <wrapir/detail/safe_file.hpp>

#include <doctest/doctest.h>

#include "support/fifo_watchdog.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace wrapir::detail;

/// A fresh directory under the system temporary directory, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device random;
    for (int attempt = 0;; ++attempt) {
      path = fs::temp_directory_path() / ("wrapir-safe-file-test-" + std::to_string(random()) + std::to_string(random()));
      if (fs::create_directory(path)) break;
      REQUIRE(attempt < 100);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
};

void put(const fs::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  REQUIRE(out.good());
}

std::string get(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

using wrapir_test::returns_promptly;

}  // namespace

TEST_CASE("safe file: escaped paths stay on one line and keep legible UTF-8") {
  CHECK(escaped_path("plain/path.json") == "plain/path.json");
  CHECK(escaped_path("a\nb\rc\td\x1b[31m") == "a\\x0ab\\x0dc\\x09d\\x1b[31m");
  CHECK(escaped_path("del\x7f") == "del\\x7f");
  CHECK(escaped_path("back\\slash") == "back\\\\slash");
  CHECK(printable("back\\slash", false) == "back\\slash");
  CHECK(escaped_path("caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac") == "caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac");  // kept
  CHECK(escaped_path("bad\xff\xfe") == "bad\\xff\\xfe");
  CHECK(escaped_path("\xc3") == "\\xc3");                     // truncated sequence
  CHECK(escaped_path("\xc0\xaf") == "\\xc0\\xaf");            // overlong '/'
  CHECK(escaped_path("\xed\xa0\x80") == "\\xed\\xa0\\x80");   // a surrogate
  CHECK(escaped_path("x\xc2\x85y") == "x\\xc2\\x85y");        // NEL (C1)
  CHECK(escaped_path("x\xe2\x80\xaey") == "x\\xe2\\x80\\xaey");  // RIGHT-TO-LEFT OVERRIDE
  CHECK(escaped_path("x\xe2\x81\xa6y") == "x\\xe2\\x81\\xa6y");  // LEFT-TO-RIGHT ISOLATE
  CHECK(escaped_path("x\xe2\x80\xa8y") == "x\\xe2\\x80\\xa8y");  // LINE SEPARATOR
  CHECK(escaped_path("x\xe2\x80\x94y") == "x\xe2\x80\x94y");     // an em dash is kept
  CHECK(quoted_path("a\nb") == "'a\\x0ab'");
  // Whatever the bytes, the result is printable ASCII or well-formed UTF-8 without controls.
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::string shown = escaped_path(every_byte);
  CHECK(is_valid_utf8(shown));
  for (const char c : shown) CHECK((static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
}

TEST_CASE("safe file: a relative path stays under its directory, or is refused with why") {
  const std::filesystem::path dir = "/srv/export";
  auto ok = wrapir::detail::path_under(dir, "kernels/k.cubin", "the cubin", "the export directory");
  REQUIRE(ok.has_value());
  CHECK(*ok == dir / "kernels/k.cubin");
  CHECK(wrapir::detail::path_under(dir, "a/./b..c/..d", "x").has_value());  // dots in names are names
  auto refused = [&](std::string_view path) {
    auto r = wrapir::detail::path_under(dir, path, "the cubin", "the export directory");
    REQUIRE_FALSE(r.has_value());
    return r.error().message;
  };
  CHECK(refused("") == "the cubin is empty");
  CHECK(refused("/etc/passwd") == "the cubin '/etc/passwd' is absolute; it must be relative to the export directory '/srv/export'");
  CHECK(refused("../x") == "the cubin '../x' leaves the export directory '/srv/export' ('..')");
  CHECK(refused("a/../../x").find("leaves") != std::string::npos);
  CHECK(refused("a/..").find("leaves") != std::string::npos);  // even back to the directory itself
  CHECK(refused("k\n.cubin/../..").find("'k\\x0a.cubin/../..'") != std::string::npos);  // escaped on one line
}

TEST_CASE("safe file: reading a regular file, an empty one, and a missing one") {
  TempDir dir;
  put(dir.path / "f", "hello\n");
  CHECK(read_regular_file(dir.path / "f") == std::string("hello\n"));
  put(dir.path / "empty", "");
  CHECK(read_regular_file(dir.path / "empty") == std::string());

  const ReadOutcome missing = read_regular_file_outcome(dir.path / "missing");
  CHECK(missing.missing);
  CHECK_FALSE(missing.content);
  const auto error = read_regular_file(dir.path / "missing");
  REQUIRE_FALSE(error.ok());
  CHECK(error.error().message == "cannot read " + quoted_path(dir.path / "missing") + ": No such file or directory");
}

TEST_CASE("safe file: directories, FIFOs and devices are refused without reading or blocking") {
  TempDir dir;
  auto why = [](const fs::path& p) {
    const ReadOutcome r = read_regular_file_outcome(p);
    CHECK_FALSE(r.content);
    CHECK_FALSE(r.missing);
    return r.why;
  };
  CHECK(why(dir.path) == "it is a directory, not a regular file");
  CHECK(why("/dev/zero") == "it is a character device, not a regular file");
  CHECK(why("/dev/null") == "it is a character device, not a regular file");

  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string fifo_why;
  CHECK(returns_promptly(fifo, [&] { fifo_why = read_regular_file_outcome(fifo).why; }));
  CHECK(fifo_why == "it is a FIFO, not a regular file");
  // Not following links is no way around it: a link to the FIFO is refused as a link.
  fs::create_symlink(fifo, dir.path / "to_fifo");
  std::string link_why;
  CHECK(returns_promptly(fifo, [&] {
    link_why = read_regular_file_outcome(dir.path / "to_fifo", {.follow_symlinks = false}).why;
  }));
  CHECK(link_why == "it is a symbolic link, which is not followed");
  CHECK(returns_promptly(fifo, [&] { link_why = read_regular_file_outcome(dir.path / "to_fifo").why; }));
  CHECK(link_why == "it is a FIFO, not a regular file");
}

TEST_CASE("safe file: links are followed or not as asked, and a loop is an error") {
  TempDir dir;
  put(dir.path / "target", "content");
  fs::create_symlink(dir.path / "target", dir.path / "link");
  CHECK(read_regular_file(dir.path / "link") == std::string("content"));
  const ReadOutcome refused = read_regular_file_outcome(dir.path / "link", {.follow_symlinks = false});
  CHECK_FALSE(refused.content);
  CHECK(refused.why == "it is a symbolic link, which is not followed");

  fs::create_symlink(dir.path / "loop_b", dir.path / "loop_a");
  fs::create_symlink(dir.path / "loop_a", dir.path / "loop_b");
  CHECK(read_regular_file_outcome(dir.path / "loop_a").why == "too many levels of symbolic links (a loop?)");
  CHECK_FALSE(read_regular_file_outcome(dir.path / "loop_a").missing);
}

TEST_CASE("safe file: the size cap is checked before reading") {
  TempDir dir;
  put(dir.path / "ten", "0123456789");
  CHECK(read_regular_file(dir.path / "ten", {.max_bytes = 10}) == std::string("0123456789"));
  const ReadOutcome over = read_regular_file_outcome(dir.path / "ten", {.max_bytes = 9, .limit_hint = "raise it"});
  CHECK_FALSE(over.content);
  CHECK(over.why == "it is 10 bytes, more than the limit of 9 bytes (raise it)");

  // A 2 GiB sparse file costs nothing to refuse.
  const fs::path sparse = dir.path / "sparse";
  put(sparse, "");
  REQUIRE(::truncate(sparse.c_str(), std::int64_t{2} << 30) == 0);
  const auto start = std::chrono::steady_clock::now();
  const ReadOutcome big = read_regular_file_outcome(sparse);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(big.why == "it is 2147483648 bytes, more than the limit of 1073741824 bytes");

  // Files that report no size are read up to the cap and no further.
  const ReadOutcome proc = read_regular_file_outcome("/proc/self/status", {.max_bytes = 16});
  if (fs::exists("/proc/self/status")) {
    CHECK_FALSE(proc.content);
    CHECK(contains(proc.why, "more than the limit of 16 bytes"));
  }
}

TEST_CASE("safe file: an opened regular file reads at offsets, with the refusals of reading it whole") {
  TempDir dir;
  put(dir.path / "f", "0123456789");
  auto file = open_regular_file(dir.path / "f");
  REQUIRE(file.ok());
  CHECK(file->size() == 10);
  char buffer[4];
  CHECK(file->read_at(3, buffer) == std::size_t{4});
  CHECK(std::string_view(buffer, 4) == "3456");
  CHECK(file->read_at(8, buffer) == std::size_t{2});  // short only at the end
  CHECK(std::string_view(buffer, 2) == "89");
  CHECK(file->read_at(10, buffer) == std::size_t{0});
  CHECK(RegularFile{}.read_at(0, buffer).error().message == "the file is not open");
  // Copies share the descriptor, which stays open while one of them lives.
  std::optional<RegularFile> copy{*file};
  file = open_regular_file(dir.path / "missing");
  CHECK(copy->read_at(0, buffer) == std::size_t{4});

  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  OpenOutcome fifo_open;
  CHECK(returns_promptly(fifo, [&] { fifo_open = open_regular_file_outcome(fifo); }));
  CHECK_FALSE(fifo_open.file);
  CHECK(fifo_open.why == "it is a FIFO, not a regular file");
  CHECK(open_regular_file_outcome("/dev/zero").why == "it is a character device, not a regular file");
  CHECK(open_regular_file_outcome(dir.path / "missing").missing);
  CHECK(open_regular_file_outcome(dir.path / "f", {.max_bytes = 9}).why ==
        "it is 10 bytes, more than the limit of 9 bytes");
  const auto refused = open_regular_file(dir.path);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "cannot read " + quoted_path(dir.path) + ": it is a directory, not a regular file");
}

TEST_CASE("safe file: an atomic write creates, replaces and keeps the permission bits") {
  TempDir dir;
  const fs::path target = dir.path / "out.py";
  REQUIRE(write_file_atomically(target, "one\n").ok());
  CHECK(get(target) == "one\n");
  REQUIRE(::chmod(target.c_str(), 0751) == 0);
  REQUIRE(write_file_atomically(target, "two\n").ok());
  CHECK(get(target) == "two\n");
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0751);
  REQUIRE(write_file_atomically(target, "").ok());
  CHECK(get(target).empty());
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.py"});
}

TEST_CASE("safe file: a link planted at the old temporary name is never followed (regression)") {
  // The tool used to write OUT.tmp with ofstream and rename it: a link
  // planted there made it overwrite the link's target.
  TempDir dir;
  put(dir.path / "victim", "precious\n");
  fs::create_symlink(dir.path / "victim", dir.path / "out.py.tmp");
  REQUIRE(write_file_atomically(dir.path / "out.py", "generated\n").ok());
  CHECK(get(dir.path / "victim") == "precious\n");
  CHECK(get(dir.path / "out.py") == "generated\n");
  CHECK(fs::is_symlink(dir.path / "out.py.tmp"));
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.py", "out.py.tmp", "victim"});
}

TEST_CASE("safe file: targets that are not regular files are refused, or replaced without following") {
  TempDir dir;
  put(dir.path / "victim", "precious\n");
  fs::create_symlink(dir.path / "victim", dir.path / "link");
  const auto refused = write_file_atomically(dir.path / "link", "x");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "cannot write " + quoted_path(dir.path / "link") + ": it is a symbolic link, not a regular file; refusing to replace it");
  CHECK(get(dir.path / "victim") == "precious\n");

  // With replace_special_files the link itself is replaced, its target untouched.
  REQUIRE(write_file_atomically(dir.path / "link", "new\n", {.replace_special_files = true}).ok());
  CHECK_FALSE(fs::is_symlink(dir.path / "link"));
  CHECK(get(dir.path / "link") == "new\n");
  CHECK(get(dir.path / "victim") == "precious\n");

  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(contains(write_file_atomically(fifo, "x").error().message, "it is a FIFO, not a regular file"));
  CHECK(contains(write_file_atomically("/dev/null", "x").error().message, "it is a character device"));
  fs::create_directory(dir.path / "sub");
  CHECK(contains(write_file_atomically(dir.path / "sub", "x").error().message, "it is a directory"));
  CHECK(contains(write_file_atomically(dir.path / "sub", "x", {.replace_special_files = true}).error().message,
                 "it is a directory"));
  CHECK(contains(write_file_atomically(dir.path / "sub" / "", "x").error().message, "names a directory"));
  CHECK(contains(write_file_atomically(dir.path / "missing" / "f", "x").error().message,
                 "cannot create a temporary file in"));
  CHECK(names_in(dir.path) == std::vector<std::string>{"fifo", "link", "sub", "victim"});
  CHECK(names_in(dir.path / "sub").empty());
}

TEST_CASE("safe file: a failed write leaves no temporary behind") {
  if (::geteuid() == 0) {
    MESSAGE("skipped the read-only directory case: root ignores directory permissions");
  } else {
    TempDir dir;
    fs::create_directory(dir.path / "ro");
    fs::permissions(dir.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(contains(write_file_atomically(dir.path / "ro" / "f", "x").error().message, "Permission denied"));
    fs::permissions(dir.path / "ro", fs::perms::owner_all);
    CHECK(names_in(dir.path / "ro").empty());
  }
  // A write that fails after the temporary exists (the file size limit):
  // the temporary goes, the old content stays.
  TempDir dir;
  const fs::path target = dir.path / "out";
  put(target, "old");
  struct rlimit saved {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const auto r = write_file_atomically(target, std::string(100, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_FALSE(r.ok());
  CHECK(contains(r.error().message, "failed: File too large"));
  CHECK(get(target) == "old");
  CHECK(names_in(dir.path) == std::vector<std::string>{"out"});
}

TEST_CASE("safe file: private directories") {
  TempDir dir;
  const fs::path cache = dir.path / "cache";
  REQUIRE(check_private_directory(cache, true).ok());
  struct stat st {};
  REQUIRE(::lstat(cache.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(check_private_directory(cache, false).ok());
  CHECK(check_private_directory(cache, true).ok());  // exists already: fine

  REQUIRE(::chmod(cache.c_str(), 0777) == 0);
  CHECK(check_private_directory(cache, true).error().message ==
        "not using directory " + quoted_path(cache) + ": group or others may write to it (mode 0777)");
  REQUIRE(::chmod(cache.c_str(), 0720) == 0);
  CHECK(contains(check_private_directory(cache, false).error().message, "(mode 0720)"));
  REQUIRE(::chmod(cache.c_str(), 0755) == 0);  // readable by others is allowed: it holds no secrets
  CHECK(check_private_directory(cache, false).ok());

  fs::create_directory(dir.path / "real");
  fs::create_symlink(dir.path / "real", dir.path / "link");
  CHECK(contains(check_private_directory(dir.path / "link", true).error().message,
                 "it is a symbolic link, not a directory"));
  put(dir.path / "file", "");
  CHECK(contains(check_private_directory(dir.path / "file", true).error().message, "it is a regular file, not a directory"));
  CHECK(contains(check_private_directory(dir.path / "absent", false).error().message, "No such file or directory"));

  if (::geteuid() == 0) {
    const fs::path foreign = dir.path / "foreign";
    REQUIRE(check_private_directory(foreign, true).ok());
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
    CHECK(check_private_directory(foreign, false).error().message ==
          "not using directory " + quoted_path(foreign) + ": it belongs to user id 65534, not to this user (0)");
  }
}

#endif

TEST_CASE("safe file: content written in pieces replaces the target; a failed fill leaves nothing") {
  TempDir dir;
  const fs::path target = dir.path / "out.py";
  put(target, "old\n");
  REQUIRE(write_file_atomically_streamed(target, [](const FileWriter& write) -> wrapir::Result<void> {
            for (const char* piece : {"one ", "two ", "", "three\n"})
              if (auto done = write(piece); !done) return done;
            return {};
          }).ok());
  CHECK(get(target) == "one two three\n");

  // The filler fails half way: the target keeps its content, no temporary is left.
  const auto refused = write_file_atomically_streamed(target, [](const FileWriter& write) -> wrapir::Result<void> {
    if (auto done = write("partial"); !done) return done;
    return wrapir::Diagnostic{"the emitter gave up"};
  });
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "the emitter gave up");
  CHECK(get(target) == "one two three\n");
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.py"});

  // ... or throws: the same.
  CHECK_THROWS_AS((void)write_file_atomically_streamed(target, [](const FileWriter& write) -> wrapir::Result<void> {
                    (void)write("partial");
                    throw std::runtime_error("boom");
                  }),
                  std::runtime_error);
  CHECK(get(target) == "one two three\n");
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.py"});
}

TEST_CASE("safe file: a piece that cannot be written reaches the filler as a diagnostic") {
  TempDir dir;
  const fs::path target = dir.path / "out";
  put(target, "old");
  struct rlimit saved {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  std::optional<wrapir::Diagnostic> seen;
  const auto r = write_file_atomically_streamed(target, [&](const FileWriter& write) -> wrapir::Result<void> {
    if (auto done = write("abc"); !done) return done;  // fits
    wrapir::Result<void> done = write(std::string(100, 'x'));
    if (!done) seen = done.error();
    return done;
  });
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_FALSE(r.ok());
  REQUIRE(seen.has_value());
  CHECK(seen->message == r.error().message);
  CHECK(contains(r.error().message, "failed: File too large"));
  CHECK(get(target) == "old");
  CHECK(names_in(dir.path) == std::vector<std::string>{"out"});
}
