// The CPU kernel cache: compile, call through the trampoline, cache hits
// without a compiler run, identities that follow sources, flags and
// includes, refusal of planted files, compiler errors as diagnostics, and a
// real Inductor kernel when the torch venv is there.
#include <wrapir/run/cpu/kernel_cache.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using wrapir::ir::DType;
using wrapir::ir::KernelParam;
using wrapir::ir::ParamType;
namespace cpu = wrapir::run::cpu;

namespace {

/// A fresh private directory under the temp dir, removed at scope exit.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string t = (fs::temp_directory_path() / "wrapir-cpu-kernel-test.XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

const char* const saxpy_source = R"(
#include <cstdint>
extern "C" void kernel(const float* x, float* y, const float a, const std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
)";

std::vector<KernelParam> saxpy_signature() {
  return {{"x", ParamType{true, DType::float32}},
          {"y", ParamType{true, DType::float32}},
          {"a", ParamType{false, DType::float32}},
          {"n", ParamType{false, DType::int64}}};
}

cpu::CompileOptions plain_options() {
  cpu::CompileOptions o;
  o.flags = {"-O1", "-std=c++17"};
  return o;
}

/// Calls the saxpy kernel on 5 elements and checks y = 2x + y.
void check_saxpy(const wrapir::run::CpuKernelFn& fn) {
  std::vector<float> x{1, 2, 3, 4, 5}, y{10, 20, 30, 40, 50};
  void* xp = x.data();
  void* yp = y.data();
  float a = 2.0F;
  std::int64_t n = 5;
  std::vector<void*> args{&xp, &yp, &a, &n};
  REQUIRE(fn(args).has_value());
  for (std::size_t i = 0; i < 5; ++i) CHECK(y[i] == doctest::Approx(2.0F * x[i] + (10.0F * (i + 1))));
}

}  // namespace

TEST_CASE("cpu kernel cache: compile, call through the trampoline, then hit the cache without the compiler") {
  ScratchDir scratch;
  const fs::path dir = scratch.path / "cache";
  cpu::KernelCache cache{dir, plain_options()};
  auto first = cache.load("saxpy", saxpy_source, saxpy_signature());
  REQUIRE_MESSAGE(first.has_value(), first.error().message);
  CHECK_FALSE(first->from_cache);
  check_saxpy(first->fn);
  CHECK(first->identity.hex().size() == 64);

  // The cache directory is private.
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  // A second cache object (a new process, as far as the cache knows) finds
  // the kernel without starting any process: no compile, no --version
  // (the compiler's identity is memoised by its file's stat).
  const auto started = cpu::detail::processes_started().load();
  cpu::KernelCache again{dir, plain_options()};
  auto second = again.load("saxpy", saxpy_source, saxpy_signature());
  REQUIRE_MESSAGE(second.has_value(), second.error().message);
  CHECK(second->from_cache);
  CHECK(second->identity == first->identity);
  CHECK(again.compiler_runs() == 0);
  CHECK(cpu::detail::processes_started().load() == started);
  check_saxpy(second->fn);

  // The kernel name is never part of a path: a hostile name changes nothing.
  auto hostile = again.load("../../etc/passwd\n", saxpy_source, saxpy_signature());
  REQUIRE(hostile.has_value());
  CHECK(hostile->identity == first->identity);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    CHECK((name.ends_with(".v1.so") || name.ends_with(".v1.deps")));
  }
}

TEST_CASE("cpu kernel cache: a wrapper compiler that logs its runs is not run on a cache hit") {
  ScratchDir scratch;
  const fs::path log = scratch.path / "runs.log";
  const fs::path wrapper = scratch.path / "cxx";
  write_text(wrapper, "#!/bin/sh\necho run >> '" + log.string() + "'\nexec g++ \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  cpu::CompileOptions o = plain_options();
  o.compiler = wrapper;
  auto count_runs = [&] {
    std::ifstream in(log);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) ++n;
    return n;
  };
  {
    cpu::KernelCache cache{scratch.path / "cache", o};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE_MESSAGE(k.has_value(), k.error().message);
  }
  const int after_first = count_runs();
  CHECK(after_first >= 1);
  cpu::KernelCache cache{scratch.path / "cache", o};
  auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
  REQUIRE(k.has_value());
  CHECK(k->from_cache);
  CHECK(count_runs() == after_first);
}

TEST_CASE("cpu kernel cache: the identity follows the source, the flags and the included files") {
  ScratchDir scratch;
  const fs::path include_dir = scratch.path / "inc";
  fs::create_directory(include_dir);
  write_text(include_dir / "scale.h", "#define WRAPIR_TEST_SCALE 3\n");
  const std::string source = R"(
#include "scale.h"
extern "C" void kernel(long* out) { *out = WRAPIR_TEST_SCALE; }
)";
  const std::vector<KernelParam> sig{{"out", ParamType{true, DType::int64}}};
  cpu::CompileOptions o = plain_options();
  o.flags.push_back("-I" + include_dir.string());
  auto value_of = [&](cpu::KernelCache& cache) -> std::pair<long, std::string> {
    auto k = cache.load("k", source, sig);
    REQUIRE_MESSAGE(k.has_value(), k.error().message);
    long out = 0;
    void* p = &out;
    std::vector<void*> args{&p};
    REQUIRE(k->fn(args).has_value());
    return {out, k->identity.hex()};
  };
  cpu::KernelCache cache{scratch.path / "cache", o};
  const auto [v1, id1] = value_of(cache);
  CHECK(v1 == 3);

  // A changed header: a new identity and the new value (the recorded
  // dependency list notices it without a preprocessor run).
  write_text(include_dir / "scale.h", "#define WRAPIR_TEST_SCALE 7 /* longer: a new size and content */\n");
  const auto [v2, id2] = value_of(cache);
  CHECK(v2 == 7);
  CHECK(id2 != id1);

  // A changed flag.
  cpu::CompileOptions o2 = o;
  o2.flags.push_back("-DUNUSED_FLAG=1");
  cpu::KernelCache flagged{scratch.path / "cache", o2};
  const auto [v3, id3] = value_of(flagged);
  CHECK(v3 == 7);
  CHECK(id3 != id2);

  // A changed source.
  auto other = cache.load("k", source + "\n// a comment\n", sig);
  REQUIRE(other.has_value());
  CHECK(other->identity.hex() != id2);
}

TEST_CASE("cpu kernel cache: a compiler that hangs is stopped after the timeout, with what it started") {
  ScratchDir scratch;
  const fs::path pid_file = scratch.path / "grandchild.pid";
  const fs::path wrapper = scratch.path / "cxx";
  // Answers --version; otherwise starts a grandchild that sleeps (as g++
  // starts cc1plus) and sleeps itself.
  write_text(wrapper, "#!/bin/sh\nif [ \"$1\" = --version ]; then exec g++ --version; fi\n"
                      "sleep 120 & echo $! > '" + pid_file.string() + "'\nsleep 120\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  cpu::CompileOptions o = plain_options();
  o.compiler = wrapper;
  o.timeout = std::chrono::milliseconds(500);
  cpu::KernelCache cache{scratch.path / "cache", o};
  const auto start = std::chrono::steady_clock::now();
  auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(k.has_value());
  CHECK(k.error().message.find("was stopped after 500 ms") != std::string::npos);
  CHECK(took < std::chrono::seconds(60));
  // The grandchild went with its group.
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  in >> grandchild;
  REQUIRE(grandchild > 0);
  // Gone, or a zombie nobody reaped yet (its parent died; in a container
  // PID 1 may not reap).
  auto alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, name, state;
    return stat >> pid >> name >> state && state != "Z";
  };
  for (int i = 0; i < 100 && alive(); ++i) ::usleep(10'000);
  CHECK_FALSE(alive());
}

TEST_CASE("cpu kernel cache: a compile error is a diagnostic with the compiler's message") {
  ScratchDir scratch;
  cpu::KernelCache cache{scratch.path / "cache", plain_options()};
  auto k = cache.load("broken_kernel", "extern \"C\" void kernel(float* p) { this_is_not_declared(p); }\n",
                      std::vector<KernelParam>{{"p", ParamType{true, DType::float32}}});
  REQUIRE_FALSE(k.has_value());
  const std::string& m = k.error().message;
  CHECK(m.find("'broken_kernel'") != std::string::npos);
  CHECK(m.find("does not compile") != std::string::npos);
  CHECK(m.find("this_is_not_declared") != std::string::npos);
  CHECK(m.find("kernel.cpp") != std::string::npos);

  // A long message is cut.
  cpu::CompileOptions o = plain_options();
  o.max_message_bytes = 40;
  cpu::KernelCache short_cache{scratch.path / "cache", o};
  auto cut = short_cache.load("broken_kernel", "extern \"C\" void kernel(float* p) { undeclared_a(p); undeclared_b(p); }\n",
                              std::vector<KernelParam>{{"p", ParamType{true, DType::float32}}});
  REQUIRE_FALSE(cut.has_value());
  CHECK(cut.error().message.find("more bytes]") != std::string::npos);
}

TEST_CASE("cpu kernel cache: a signature that disagrees with the kernel does not compile") {
  ScratchDir scratch;
  cpu::KernelCache cache{scratch.path / "cache", plain_options()};
  // Too few parameters.
  auto few = cache.load("saxpy", saxpy_source,
                        std::vector<KernelParam>{{"x", ParamType{true, DType::float32}}});
  REQUIRE_FALSE(few.has_value());
  CHECK(few.error().message.find("parameter count differs") != std::string::npos);
  // A scalar where the kernel takes a pointer.
  auto sig = saxpy_signature();
  sig[0].type.pointer = false;
  auto scalar = cache.load("saxpy", saxpy_source, sig);
  REQUIRE_FALSE(scalar.has_value());
  CHECK(scalar.error().message.find("parameter 0 is a scalar in the signature") != std::string::npos);
  // The wrong element size.
  sig = saxpy_signature();
  sig[1].type.dtype = DType::float64;
  auto wide = cache.load("saxpy", saxpy_source, sig);
  REQUIRE_FALSE(wide.has_value());
  CHECK(wide.error().message.find("element size differs") != std::string::npos);
  // A scalar dtype the trampoline cannot pass is refused before compiling.
  sig = saxpy_signature();
  sig[2].type.dtype = DType::bfloat16;
  auto bf = cache.load("saxpy", saxpy_source, sig);
  REQUIRE_FALSE(bf.has_value());
  CHECK(bf.error().message.find("cannot pass") != std::string::npos);
  // A bad entry name.
  cpu::CompileOptions o = plain_options();
  o.entry = "kernel(); int x";
  cpu::KernelCache bad_entry{scratch.path / "cache", o};
  auto e = bad_entry.load("saxpy", saxpy_source, saxpy_signature());
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("not a C name") != std::string::npos);
}

TEST_CASE("cpu kernel cache: calls with the wrong argument count or a null argument are diagnostics") {
  ScratchDir scratch;
  cpu::KernelCache cache{scratch.path / "cache", plain_options()};
  auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
  REQUIRE(k.has_value());
  std::vector<void*> three(3, nullptr);
  CHECK(k->fn(three).error().message.find("expected 4") != std::string::npos);
  std::vector<void*> nulls(4, nullptr);
  CHECK(k->fn(nulls).error().message.find("null pointer") != std::string::npos);
}

// Regression (issue 14 audit): a kernel's failed TORCH_CHECK came out as
// `kernel, /root/.cache/wrapir/cpu-kernels/build.EpPbRz/kernel.cpp:60, index
// out of bounds`, naming a build directory removed after compiling.
TEST_CASE("cpu kernel cache: what a kernel throws is a diagnostic at the line of its source") {
  ScratchDir scratch;
  cpu::KernelCache cache{scratch.path / "cache", plain_options()};
  // The form of torch's header-only STD_TORCH_CHECK, which Inductor's kernels use.
  const char* const checked = R"(#include <cstdint>
#include <stdexcept>
#include <string>
extern "C" void kernel(const float* x, float* y, const float a, const std::int64_t n) {
  if (n > 4) throw std::runtime_error(std::string(__func__) + ", " + __FILE__ + ":" + std::to_string(__LINE__) + ", index out of bounds: 0 <= tmp10 < 4L");
  if (n < 0) throw 7;
  for (std::int64_t i = 0; i < n; ++i) y[i] = a * x[i];
}
)";
  auto k = cache.load("checked", checked, saxpy_signature());
  REQUIRE_MESSAGE(k.has_value(), k.error().message);
  std::vector<float> x(8, 1.0F), y(8, 0.0F);
  void* xp = x.data();
  void* yp = y.data();
  float a = 2.0F;
  std::int64_t n = 8;
  std::vector<void*> args{&xp, &yp, &a, &n};
  auto r = k->fn(args);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "index out of bounds: 0 <= tmp10 < 4L (line 5 of the kernel's source)");
  n = -1;
  r = k->fn(args);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "threw an exception that is not a std::exception");
  n = 3;
  CHECK(k->fn(args).has_value());
  CHECK(y[2] == 2.0F);
}

TEST_CASE("cpu kernel cache: kernel_exception_text keeps what it cannot read") {
  using cpu::detail::kernel_exception_text;
  const std::string prefix = "/c/build.";
  CHECK(kernel_exception_text("kernel, /c/build.AbC123/kernel.cpp:60, bad", prefix) == "bad (line 60 of the kernel's source)");
  CHECK(kernel_exception_text("f, /usr/include/x.h:7, bad, really", prefix) == "bad, really (/usr/include/x.h:7)");
  CHECK(kernel_exception_text("at /c/build.AbC123/kernel.cpp:60 and /c/build.AbC123/kernel.cpp:61", prefix) ==
        "at kernel.cpp:60 and kernel.cpp:61");
  CHECK(kernel_exception_text("/c/build.AbC123/other.cpp:1", prefix) == "/c/build.AbC123/other.cpp:1");
  CHECK(kernel_exception_text("out of memory, sorry", prefix) == "out of memory, sorry");
  CHECK(kernel_exception_text("a b, x.cpp:1, m", prefix) == "a b, x.cpp:1, m");
  CHECK(kernel_exception_text("f, x.cpp:, m", prefix) == "f, x.cpp:, m");
  CHECK(kernel_exception_text("f, x.cpp:1a, m", prefix) == "f, x.cpp:1a, m");
  CHECK(kernel_exception_text("", prefix).empty());
}

TEST_CASE("cpu kernel cache: planted links, FIFOs and writable entries are refused") {
  ScratchDir scratch;
  const fs::path dir = scratch.path / "cache";
  cpu::KernelIdentity id;
  {
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE(k.has_value());
    id = k->identity;
  }
  const fs::path so = dir / (id.hex() + ".v1.so");
  REQUIRE(fs::is_regular_file(so));

  SUBCASE("a symbolic link at the shared object") {
    const fs::path real = scratch.path / "elsewhere.so";
    fs::rename(so, real);
    fs::create_symlink(real, so);
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE_FALSE(k.has_value());
    CHECK(k.error().message.find("symbolic link") != std::string::npos);
  }
  SUBCASE("a FIFO at the shared object") {
    fs::remove(so);
    REQUIRE(::mkfifo(so.c_str(), 0600) == 0);
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE_FALSE(k.has_value());
    CHECK(k.error().message.find("FIFO") != std::string::npos);
  }
  SUBCASE("a shared object others may write") {
    REQUIRE(::chmod(so.c_str(), 0722) == 0);
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE_FALSE(k.has_value());
    CHECK(k.error().message.find("others may write") != std::string::npos);
  }
  SUBCASE("a symbolic link at the dependency list") {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.path().string().ends_with(".v1.deps")) continue;
      const fs::path real = scratch.path / "elsewhere.deps";
      fs::rename(e.path(), real);
      fs::create_symlink(real, e.path());
    }
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE_FALSE(k.has_value());
    CHECK(k.error().message.find("symbolic link") != std::string::npos);
  }
  SUBCASE("a corrupt dependency list is rebuilt by compiling again") {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().string().ends_with(".v1.deps")) write_text(e.path(), "garbage");
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE(k.has_value());
    CHECK_FALSE(k->from_cache);
    CHECK(k->identity == id);
  }
  SUBCASE("a cache directory others may write") {
    REQUIRE(::chmod(dir.c_str(), 0777) == 0);
    cpu::KernelCache cache{dir, plain_options()};
    auto k = cache.load("saxpy", saxpy_source, saxpy_signature());
    REQUIRE_FALSE(k.has_value());
    CHECK(k.error().message.find("may write") != std::string::npos);
    ::chmod(dir.c_str(), 0700);
  }
}

TEST_CASE("cpu kernel cache: make-style dependency lists are parsed") {
  const auto deps = cpu::detail::parse_make_dependencies(
      "/b/kernel.so: /b/kernel.cpp /usr/include/a.h \\\n /opt/with\\ space/b.h /x/$$dollar.h\n/usr/include/a.h:\n");
  REQUIRE(deps.size() == 4);
  CHECK(deps[0] == "/b/kernel.cpp");
  CHECK(deps[1] == "/usr/include/a.h");
  CHECK(deps[2] == "/opt/with space/b.h");
  CHECK(deps[3] == "/x/$dollar.h");
}

TEST_CASE("cpu kernel cache: SHA-256 matches the FIPS 180-2 test vectors") {
  auto empty = cpu::detail::sha256("");
  REQUIRE(empty.has_value());
  CHECK(cpu::detail::hex(*empty) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  auto abc = cpu::detail::sha256("abc");
  REQUIRE(abc.has_value());
  CHECK(cpu::detail::hex(*abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto two_blocks = cpu::detail::sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq");
  REQUIRE(two_blocks.has_value());
  CHECK(cpu::detail::hex(*two_blocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("cpu kernel cache: the language is checked by the provider") {
  ScratchDir scratch;
  cpu::KernelCache cache{scratch.path / "cache", plain_options()};
  auto r = cache.provide("triton_poi_0", wrapir::ir::KernelLanguage::triton, "def k(): pass", {});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("triton") != std::string::npos);
}

TEST_CASE("cpu kernel cache: two kernels loaded one after the other stay distinct (regression)") {
  // Loading through /proc/self/fd/N once returned the first kernel for the
  // second: glibc matched the reused descriptor path to the loaded object.
  ScratchDir scratch;
  cpu::KernelCache cache{scratch.path / "cache", plain_options()};
  const std::vector<KernelParam> sig{{"out", ParamType{true, DType::int64}}};
  std::vector<wrapir::run::CpuKernelFn> fns;
  for (int i = 0; i < 3; ++i) {
    auto k = cache.load("k", "extern \"C\" void kernel(long* out) { *out = " + std::to_string(100 + i) + "; }\n", sig);
    REQUIRE_MESSAGE(k.has_value(), k.error().message);
    fns.push_back(k->fn);
  }
  for (int i = 0; i < 3; ++i) {
    long out = 0;
    void* p = &out;
    std::vector<void*> args{&p};
    REQUIRE(fns[static_cast<std::size_t>(i)](args).has_value());
    CHECK(out == 100 + i);
  }
}
