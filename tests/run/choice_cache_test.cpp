// Tests of include/wrapir/run/choice_cache.hpp: the stable hash, the record
// format (every truncation and every single-byte corruption is rejected),
// the on-disk cache (misses are silent, bad entries warn and never throw,
// planted FIFOs and links are never followed nor block, the shared fallback
// directory is private to its user, writers racing from threads and from
// processes never expose a torn file) and the choice registry.

#include <wrapir/run/choice_cache.hpp>
#include <wrapir/run/detail/stable_hash.hpp>
#include <wrapir/run/detail/text.hpp>

#include <doctest/doctest.h>

#include "support/fifo_watchdog.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#define WRAPIR_TEST_POSIX 1
#endif

namespace {

namespace fs = std::filesystem;
using namespace wrapir::run;
namespace detail = wrapir::run::detail;

/// A fresh directory under the system temporary directory, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device random;
    const fs::path base = fs::temp_directory_path();
    for (int attempt = 0;; ++attempt) {
      path = base / ("wrapir-choice-cache-test-" + detail::hex16((std::uint64_t{random()} << 32) | random()));
      if (fs::create_directory(path)) break;
      REQUIRE(attempt < 100);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Collects warnings; thread-safe.
struct Warnings {
  std::mutex mutex;
  std::vector<std::string> lines;
  WarningSink sink() {
    return [this](std::string_view message) {
      const std::scoped_lock lock(mutex);
      lines.emplace_back(message);
    };
  }
  std::size_t count() {
    const std::scoped_lock lock(mutex);
    return lines.size();
  }
  std::string joined() {
    const std::scoped_lock lock(mutex);
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }
};

void write_file(const fs::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  REQUIRE(out.good());
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Names in `dir` other than the entries themselves (temporary files left behind).
std::vector<std::string> stray_files(const fs::path& dir) {
  std::vector<std::string> stray;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 7 || name.substr(name.size() - 7) != ".choice") stray.push_back(name);
  }
  return stray;
}

const ChoiceRecord sample_record{ChoiceKey{0x00c0ffee12345678ULL}, 3, 2};

}  // namespace

TEST_CASE("stable hash: FNV-1a test vectors and field boundaries") {
  // Published FNV-1a 64 vectors: a change here would orphan every cache entry.
  CHECK(detail::fnv1a_64("") == 0xcbf29ce484222325ULL);
  CHECK(detail::fnv1a_64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(detail::fnv1a_64("foobar") == 0x85944171f73967e8ULL);
  CHECK(detail::fnv1a_64("bar", detail::fnv1a_64("foo")) == detail::fnv1a_64("foobar"));

  using detail::StableHasher;
  CHECK(StableHasher{}.add_string("ab").add_string("c").digest() !=
        StableHasher{}.add_string("a").add_string("bc").digest());
  // Integers are eight little-endian bytes, whatever the host's byte order.
  CHECK(StableHasher{}.add_u64(0x0102).digest() == detail::fnv1a_64(std::string_view("\x02\x01\0\0\0\0\0\0", 8)));
  CHECK(StableHasher{}.add_i64(-1).digest() == detail::fnv1a_64(std::string(8, '\xff')));
  const std::vector<std::int64_t> one{1};
  const std::vector<std::int64_t> two{1, 0};
  CHECK(StableHasher{}.add_i64s(one).digest() != StableHasher{}.add_i64s(two).digest());
}

TEST_CASE("run text helpers: hex, canonical decimals, quoting") {
  CHECK(detail::hex16(0) == "0000000000000000");
  CHECK(detail::hex16(0xabcdef0123456789ULL) == "abcdef0123456789");
  CHECK(detail::parse_hex16("abcdef0123456789") == 0xabcdef0123456789ULL);
  CHECK_FALSE(detail::parse_hex16("ABCDEF0123456789"));
  CHECK_FALSE(detail::parse_hex16("abcdef012345678"));
  CHECK_FALSE(detail::parse_hex16("abcdef01234567890"));
  CHECK_FALSE(detail::parse_hex16("-bcdef0123456789"));

  CHECK(detail::parse_canonical_decimal("0") == 0U);
  CHECK(detail::parse_canonical_decimal("42") == 42U);
  CHECK(detail::parse_canonical_decimal("18446744073709551615") == 18446744073709551615ULL);
  for (std::string_view bad : {"", "01", "-1", "+1", "1 ", "18446744073709551616", "99999999999999999999", "1x"}) {
    CAPTURE(bad);
    CHECK_FALSE(detail::parse_canonical_decimal(bad));
  }

  CHECK(detail::quoted("multi_kernel_0") == "'multi_kernel_0'");
  CHECK(detail::quoted("a'b\\c\nd\x7f") == "'a\\'b\\\\c\\x0ad\\x7f'");
}

TEST_CASE("choice record: layout and round trip") {
  const std::string text = format_choice_record(sample_record);
  const std::string body = "wrapir-multi-kernel-choice v1 key=00c0ffee12345678 candidates=3 choice=2 checksum=";
  CHECK(text == body + detail::hex16(detail::fnv1a_64(body)) + "\n");
  CHECK(text.size() <= max_choice_record_size);
  const auto parsed = parse_choice_record(text);
  REQUIRE(parsed.ok());
  CHECK(*parsed == sample_record);

  // The largest values still fit the reader's buffer.
  const ChoiceRecord largest{ChoiceKey{~0ULL}, ~0ULL, ~0ULL - 1};
  const std::string large = format_choice_record(largest);
  CHECK(large.size() <= max_choice_record_size);
  CHECK(parse_choice_record(large) == largest);
}

TEST_CASE("choice record: the example in the header comment and docs/cuda.md") {
  // Checksum computed independently (Python, FNV-1a 64 of the line up to "checksum=").
  const std::string documented =
      "wrapir-multi-kernel-choice v1 key=f0d7f0c6720e6fbe candidates=2 choice=1 checksum=ddc5f1e203d53d62\n";
  const ChoiceRecord record{ChoiceKey{0xf0d7f0c6720e6fbeULL}, 2, 1};
  CHECK(parse_choice_record(documented) == record);
  CHECK(format_choice_record(record) == documented);
}

TEST_CASE("choice record: every truncation is rejected") {
  const std::string text = format_choice_record(sample_record);
  for (std::size_t length = 0; length < text.size(); ++length) {
    CAPTURE(length);
    CHECK_FALSE(parse_choice_record(std::string_view(text).substr(0, length)).ok());
  }
}

TEST_CASE("choice record: every single-byte corruption is rejected") {
  const std::string text = format_choice_record(sample_record);
  for (std::size_t i = 0; i < text.size(); ++i) {
    for (const unsigned char flip : {0x01, 0x02, 0x10, 0x20, 0x80}) {
      std::string corrupt = text;
      corrupt[i] = static_cast<char>(static_cast<unsigned char>(corrupt[i]) ^ flip);
      CAPTURE(i);
      CAPTURE(flip);
      CHECK_FALSE(parse_choice_record(corrupt).ok());
    }
  }
}

TEST_CASE("choice record: diagnostics say what is wrong") {
  const std::string text = format_choice_record(sample_record);
  auto error = [](std::string_view t) {
    const auto r = parse_choice_record(t);
    REQUIRE_FALSE(r.ok());
    return r.error().message;
  };
  CHECK(error("") == "the entry is empty");
  CHECK(error(text.substr(0, text.size() - 1)) == "the entry is truncated (no end of line)");
  CHECK(error(text + "x") == "the entry has data after its end of line");
  CHECK(error(text + text) == "the entry has data after its end of line");
  CHECK(error("hello\n") == "the entry is not a wrapir multi-kernel choice record");
  CHECK(error("wrapir-multi-kernel-choice v2 key=0000000000000000\n") ==
        "the entry has format version 'v2', expected v1");
  CHECK(error("wrapir-multi-kernel-choice v1 key=0000000000000000\n") == "the entry has 3 fields, expected 6");

  std::string bad_checksum = text;
  bad_checksum[bad_checksum.size() - 2] = bad_checksum[bad_checksum.size() - 2] == '0' ? '1' : '0';
  CHECK(error(bad_checksum).find("does not match its content") != std::string::npos);

  // Self-consistent but out of range: a valid checksum over choice >= candidates.
  const std::string out_of_range = format_choice_record(ChoiceRecord{ChoiceKey{7}, 2, 2});
  CHECK(error(out_of_range) == "the entry's choice 2 is out of range for 2 candidates");
  CHECK(error(format_choice_record(ChoiceRecord{ChoiceKey{7}, 0, 0})) ==
        "the entry's choice 0 is out of range for 0 candidates");
}

TEST_CASE("choice cache: a miss is silent, a stored choice loads back, no temporary files remain") {
  TempDir dir;
  Warnings warnings;
  const ChoiceCache cache(dir.path / "nested" / "cache", warnings.sink());
  const ChoiceKey key{0x1111222233334444ULL};
  CHECK_FALSE(cache.load(key, 3));
  CHECK(warnings.count() == 0);

  CHECK(cache.store(key, 3, 1));
  CHECK(cache.path_for(key) == dir.path / "nested" / "cache" / "1111222233334444.v1.choice");
  CHECK(read_file(cache.path_for(key)) == format_choice_record(ChoiceRecord{key, 3, 1}));
  CHECK(cache.load(key, 3) == 1U);
  CHECK(cache.store(key, 3, 2));
  CHECK(cache.load(key, 3) == 2U);
  CHECK(cache.load(ChoiceKey{key.value + 1}, 3) == std::nullopt);
  CHECK(stray_files(cache.directory()).empty());
  CHECK(warnings.joined() == "");
}

TEST_CASE("choice cache: unusable entries are ignored with a warning and overwritten by the next store") {
  TempDir dir;
  Warnings warnings;
  const ChoiceCache cache(dir.path, warnings.sink());
  const ChoiceKey key{0xabcdULL};
  const fs::path path = cache.path_for(key);
  auto load_warns = [&](std::size_t count, std::string_view expected) {
    const std::size_t before = warnings.count();
    CHECK_FALSE(cache.load(key, count));
    REQUIRE(warnings.count() == before + 1);
    CHECK(warnings.lines.back().find(expected) != std::string::npos);
    CHECK(warnings.lines.back().find(path.string()) != std::string::npos);
    CHECK(warnings.lines.back().find("benchmarking again") != std::string::npos);
  };

  const std::string valid = format_choice_record(ChoiceRecord{key, 3, 1});
  write_file(path, valid.substr(0, valid.size() / 2));
  load_warns(3, "truncated");
  write_file(path, "");
  load_warns(3, "empty");
  write_file(path, std::string(max_choice_record_size + 1, 'x'));
  load_warns(3, "more than the limit of 160 bytes (no valid record is that long)");
  write_file(path, format_choice_record(ChoiceRecord{ChoiceKey{0xdcbaULL}, 3, 1}));
  load_warns(3, "is for key 000000000000dcba, not 000000000000abcd");
  write_file(path, valid);
  load_warns(2, "is for 3 candidates, not 2");
  write_file(path, format_choice_record(ChoiceRecord{key, 3, 5}));
  load_warns(3, "out of range");

  CHECK(cache.store(key, 3, 0));
  CHECK(cache.load(key, 3) == 0U);
}

TEST_CASE("choice cache: I/O failures warn and never throw") {
  TempDir dir;
  Warnings warnings;
  // The entry's path is a directory: reading fails, renaming over it fails.
  const ChoiceCache cache(dir.path, warnings.sink());
  const ChoiceKey key{42};
  fs::create_directory(cache.path_for(key));
  CHECK_FALSE(cache.load(key, 2));
  CHECK(warnings.count() == 1);
  CHECK(warnings.lines.back().find("it is a directory, not a regular file") != std::string::npos);
  CHECK_FALSE(cache.store(key, 2, 1));
  CHECK(warnings.count() == 2);
  CHECK(warnings.lines.back().find("it is a directory") != std::string::npos);
  CHECK(stray_files(dir.path).empty());

  // The directory cannot be created: a regular file is in the way.
  write_file(dir.path / "file", "x");
  const ChoiceCache blocked(dir.path / "file" / "cache", warnings.sink());
  CHECK_FALSE(blocked.store(key, 2, 1));
  CHECK(warnings.lines.back().find("cannot create multi-kernel cache directory") != std::string::npos);
  CHECK_FALSE(blocked.load(key, 2));
}

TEST_CASE("choice cache: threads racing to store one entry never expose a torn file") {
  TempDir dir;
  Warnings warnings;
  const ChoiceCache cache(dir.path, warnings.sink());
  const ChoiceKey key{0x5eed};
  std::atomic<bool> done{false};
  std::atomic<int> failed_stores{0};
  std::vector<std::thread> writers;
  for (std::size_t t = 0; t < 3; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (!cache.store(key, 4, t + 1)) ++failed_stores;
      }
    });
  }
  std::thread watcher([&] {
    for (auto& w : writers) w.join();
    done = true;
  });
  bool seen = false;
  int bad_reads = 0;
  while (!done) {
    const auto choice = cache.load(key, 4);
    if (choice) seen = true;
    if ((choice && (*choice < 1 || *choice > 3)) || (!choice && seen)) ++bad_reads;
  }
  watcher.join();
  CHECK(bad_reads == 0);
  CHECK(failed_stores == 0);
  const auto final_choice = cache.load(key, 4);
  REQUIRE(final_choice);
  CHECK(*final_choice >= 1);
  CHECK(*final_choice <= 3);
  CHECK(warnings.joined() == "");
  CHECK(stray_files(dir.path).empty());
}

TEST_CASE("choice cache: two processes racing to store one entry never expose a torn file") {
#ifdef WRAPIR_TEST_POSIX
  TempDir dir;
  Warnings warnings;
  const ChoiceCache reader(dir.path, warnings.sink());
  const ChoiceKey key{0xf0f0};
  constexpr int stores_per_writer = 400;
  auto start_writer = [&](std::size_t choice) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      // The child touches no doctest state and leaves with _exit.
      int failures = 0;
      const ChoiceCache writer(dir.path, [&failures](std::string_view) { ++failures; });
      for (int i = 0; i < stores_per_writer; ++i) {
        if (!writer.store(key, 3, choice)) ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    return pid;
  };
  const pid_t first = start_writer(1);
  const pid_t second = start_writer(2);
  REQUIRE(first > 0);
  REQUIRE(second > 0);

  int statuses[2] = {-1, -1};
  bool exited[2] = {false, false};
  bool seen = false;
  int reads = 0;
  int bad_reads = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(exited[0] && exited[1]) && std::chrono::steady_clock::now() < deadline) {
    const auto choice = reader.load(key, 3);
    ++reads;
    if (choice) seen = true;
    if ((choice && *choice != 1 && *choice != 2) || (!choice && seen)) ++bad_reads;
    const pid_t pids[2] = {first, second};
    for (int i = 0; i < 2; ++i) {
      if (!exited[i] && ::waitpid(pids[i], &statuses[i], WNOHANG) == pids[i]) exited[i] = true;
    }
  }
  REQUIRE(exited[0]);
  REQUIRE(exited[1]);
  CHECK(WIFEXITED(statuses[0]));
  CHECK(WEXITSTATUS(statuses[0]) == 0);
  CHECK(WIFEXITED(statuses[1]));
  CHECK(WEXITSTATUS(statuses[1]) == 0);
  CHECK(reads > 0);
  CHECK(bad_reads == 0);
  const auto final_choice = reader.load(key, 3);
  REQUIRE(final_choice);
  CHECK((*final_choice == 1 || *final_choice == 2));
  CHECK(warnings.joined() == "");
  CHECK(stray_files(dir.path).empty());
#else
  MESSAGE("skipped: needs fork()");
#endif
}

#ifdef WRAPIR_TEST_POSIX
namespace {
/// Sets (or unsets, for nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
}  // namespace

TEST_CASE("choice cache: the default directory follows the environment") {
  const ScopedEnv home("HOME", "/home/someone");
  {
    const ScopedEnv dir(cache_directory_variable, "/custom/dir");
    const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(default_choice_cache_directory() == fs::path("/custom/dir"));
  }
  {
    const ScopedEnv dir(cache_directory_variable, std::nullopt);
    const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    CHECK(default_choice_cache_directory() == fs::path("/xdg/wrapir/multi_kernel"));
  }
  {
    const ScopedEnv dir(cache_directory_variable, "");
    const ScopedEnv xdg("XDG_CACHE_HOME", "relative/is/ignored");
    CHECK(default_choice_cache_directory() == fs::path("/home/someone/.cache/wrapir/multi_kernel"));
  }
  {
    const ScopedEnv dir(cache_directory_variable, std::nullopt);
    const ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
    const ScopedEnv no_home("HOME", std::nullopt);
    CHECK(default_choice_cache_directory() == shared_choice_cache_directory());
    CHECK(default_choice_cache_directory().filename() == "wrapir-multi-kernel-" + std::to_string(::geteuid()));
  }
  {
    const ScopedEnv disabled(disable_cache_variable, "1");
    CHECK(cache_disabled_by_environment());
  }
  {
    const ScopedEnv disabled(disable_cache_variable, "0");
    CHECK_FALSE(cache_disabled_by_environment());
  }
  {
    const ScopedEnv disabled(disable_cache_variable, std::nullopt);
    CHECK_FALSE(cache_disabled_by_environment());
  }
}

namespace {
using wrapir_test::returns_promptly;
}  // namespace

TEST_CASE("choice cache: a FIFO planted as an entry neither blocks nor is read (regression)") {
  // The reader used fopen: a FIFO with no writer hung it forever.
  TempDir dir;
  Warnings warnings;
  const ChoiceCache cache(dir.path, warnings.sink());
  const ChoiceKey key{0xf1f0};
  REQUIRE(::mkfifo(cache.path_for(key).c_str(), 0600) == 0);
  std::optional<std::size_t> loaded = 7;
  CHECK(returns_promptly(cache.path_for(key), [&] { loaded = cache.load(key, 2); }));
  CHECK_FALSE(loaded);
  REQUIRE(warnings.count() == 1);
  CHECK(warnings.lines.back().find("it is a FIFO, not a regular file; benchmarking again") != std::string::npos);
  // The next store replaces the FIFO with a real entry.
  CHECK(cache.store(key, 2, 1));
  CHECK(fs::is_regular_file(fs::symlink_status(cache.path_for(key))));
  CHECK(cache.load(key, 2) == 1U);
  CHECK(stray_files(dir.path).empty());
}

TEST_CASE("choice cache: a link planted as an entry is not followed, and a store replaces the link") {
  TempDir dir;
  Warnings warnings;
  const ChoiceCache cache(dir.path / "cache", warnings.sink());
  const ChoiceKey key{0x11e};
  fs::create_directory(cache.directory());
  // The link points at a valid record: following it would select choice 1.
  const std::string record = format_choice_record(ChoiceRecord{key, 2, 1});
  write_file(dir.path / "elsewhere", record);
  fs::create_symlink(dir.path / "elsewhere", cache.path_for(key));
  CHECK_FALSE(cache.load(key, 2));
  REQUIRE(warnings.count() == 1);
  CHECK(warnings.lines.back().find("it is a symbolic link, which is not followed") != std::string::npos);
  // A link to a device is refused just the same, without opening the device.
  fs::remove(cache.path_for(key));
  fs::create_symlink("/dev/zero", cache.path_for(key));
  CHECK_FALSE(cache.load(key, 2));
  CHECK(warnings.lines.back().find("it is a symbolic link, which is not followed") != std::string::npos);

  fs::remove(cache.path_for(key));
  fs::create_symlink(dir.path / "elsewhere", cache.path_for(key));
  CHECK(cache.store(key, 2, 0));
  CHECK(read_file(dir.path / "elsewhere") == record);  // the link's target is untouched
  CHECK_FALSE(fs::is_symlink(cache.path_for(key)));
  CHECK(cache.load(key, 2) == 0U);
}

TEST_CASE("choice cache: the shared fallback directory is per user, mode 0700, and refused when others can write") {
  TempDir dir;
  const ScopedEnv tmpdir("TMPDIR", dir.path.string());
  const fs::path shared = shared_choice_cache_directory();
  CHECK(shared == dir.path / ("wrapir-multi-kernel-" + std::to_string(::geteuid())));
  Warnings warnings;
  const ChoiceCache cache(shared, warnings.sink());
  const ChoiceKey key{0x5a};
  CHECK_FALSE(cache.load(key, 2));  // no directory yet: a plain miss
  CHECK(warnings.count() == 0);
  CHECK(cache.store(key, 2, 1));
  struct stat st {};
  REQUIRE(::lstat(shared.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(cache.load(key, 2) == 1U);
  CHECK(warnings.count() == 0);

  REQUIRE(::chmod(shared.c_str(), 0777) == 0);
  CHECK_FALSE(cache.load(key, 2));
  REQUIRE(warnings.count() == 1);
  CHECK(warnings.lines.back().find("group or others may write to it (mode 0777); benchmarking again") !=
        std::string::npos);
  CHECK_FALSE(cache.store(key, 2, 0));
  CHECK(warnings.lines.back().find("(mode 0777); not caching the choice") != std::string::npos);

  // A link in its place (someone else's directory behind it) is refused too.
  fs::remove_all(shared);
  fs::create_directory(dir.path / "theirs");
  fs::create_symlink(dir.path / "theirs", shared);
  CHECK_FALSE(cache.store(key, 2, 0));
  CHECK(warnings.lines.back().find("it is a symbolic link, not a directory") != std::string::npos);
  CHECK(fs::is_empty(dir.path / "theirs"));
  fs::remove(shared);

  if (::geteuid() == 0) {  // only root can give a directory away
    REQUIRE(::mkdir(shared.c_str(), 0700) == 0);
    REQUIRE(::chown(shared.c_str(), 65534, 65534) == 0);
    CHECK_FALSE(cache.load(key, 2));
    CHECK(warnings.lines.back().find("it belongs to user id 65534") != std::string::npos);
    CHECK_FALSE(cache.store(key, 2, 0));
    CHECK(fs::is_empty(shared));
  }

  // Another spelling of the shared directory gets the same checks: a
  // lexical comparison would have let `<tmp>/./wrapir-multi-kernel-<uid>`
  // or a link to the temporary directory skip them.
  fs::remove_all(shared);
  fs::create_directory(dir.path / "sub");
  fs::create_directory_symlink(dir.path, dir.path / "sub" / "to_tmp");
  const std::string leaf = "wrapir-multi-kernel-" + std::to_string(::geteuid());
  for (const fs::path& spelling : {dir.path / "." / leaf, fs::path(dir.path.string() + "//" + leaf + "/"),
                                   dir.path / "sub" / ".." / leaf, dir.path / "sub" / "to_tmp" / leaf}) {
    CAPTURE(spelling);
    CHECK(is_shared_choice_cache_directory(spelling));
    REQUIRE(::mkdir(shared.c_str(), 0777) == 0);
    REQUIRE(::chmod(shared.c_str(), 0777) == 0);
    const ChoiceCache respelled(spelling, warnings.sink());
    CHECK_FALSE(respelled.store(key, 2, 0));
    CHECK(warnings.lines.back().find("(mode 0777); not caching the choice") != std::string::npos);
    CHECK(fs::is_empty(shared));
    fs::remove(shared);
  }
  CHECK_FALSE(is_shared_choice_cache_directory(dir.path / "sub" / leaf));

  // A directory the user chose is used as it is, group-writable or not.
  const ChoiceCache chosen(dir.path / "team", warnings.sink());
  fs::create_directory(chosen.directory());
  REQUIRE(::chmod(chosen.directory().c_str(), 0775) == 0);
  CHECK(chosen.store(key, 2, 1));
  CHECK(chosen.load(key, 2) == 1U);
}

TEST_CASE("choice cache: warnings escape control characters and bytes that are not UTF-8 in paths") {
  TempDir dir;
  Warnings warnings;
  const ChoiceCache cache(dir.path / "evil\nwrapir: error: forged\xff", warnings.sink());
  const ChoiceKey key{0xe5c};
  fs::create_directories(cache.path_for(key));  // an entry that is a directory: a warning naming the path
  CHECK_FALSE(cache.load(key, 2));
  REQUIRE(warnings.count() == 1);
  const std::string& line = warnings.lines.back();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find("evil\\x0awrapir: error: forged\\xff") != std::string::npos);
}

#endif

TEST_CASE("choice registry: record, lookup, conflicts") {
  ChoiceRegistry registry;
  CHECK(registry.record("multi_kernel_1", "triton_per_fused_sum_1"));
  CHECK(registry.record("multi_kernel_0", "triton_red_fused_sum_0"));
  CHECK(registry.record("multi_kernel_0", "triton_red_fused_sum_0"));  // same pair again
  const wrapir::Result<void> conflict = registry.record("multi_kernel_0", "triton_per_fused_sum_1");
  REQUIRE_FALSE(conflict);
  CHECK(conflict.error().message ==
        "multi-kernel 'multi_kernel_0' already chose 'triton_red_fused_sum_0'; not recording "
        "'triton_per_fused_sum_1'");
  CHECK(registry.lookup("multi_kernel_0") == std::string("triton_red_fused_sum_0"));
  const auto missing = registry.lookup("multi_kernel_9");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("no choice recorded for multi-kernel 'multi_kernel_9'") == 0);
  using Entries = std::vector<std::pair<std::string, std::string>>;
  CHECK(registry.entries() ==
        Entries{{"multi_kernel_0", "triton_red_fused_sum_0"}, {"multi_kernel_1", "triton_per_fused_sum_1"}});
}

TEST_CASE("choice registry: concurrent records keep one choice per name") {
  ChoiceRegistry registry;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        // Appended rather than `"mk_" + std::to_string(i)`, which trips g++ 12's
        // -O3 -Wrestrict false positive (GCC bug 105329).
        std::string name = "mk_";
        name += std::to_string(i);
        std::string candidate = "k";
        candidate += std::to_string(t);
        if (!registry.record(name, candidate)) ++refused;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(registry.entries().size() == 100);
  CHECK(refused == 300);  // each name: one thread won, three were refused
}
