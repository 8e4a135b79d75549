#pragma once
/// \file
/// C++ kernels of Inductor CPU programs, compiled by the system compiler
/// into shared objects, cached on disk by a kernel identity, loaded with
/// `dlopen` and called through a generated trampoline as a `CpuKernelFn`.
///
/// **Calling.** Inductor's kernels are `extern "C" void kernel(<typed
/// params>)`. The cache appends to the kernel's translation unit a
/// trampoline `extern "C" void wrapir_entry(void* const* args)` that reads
/// argument `i` through `args[i]` as the signature's `ParamType` says (a
/// pointer parameter: a `void*` holding the address; a scalar: the value in
/// the signature's dtype) and converts it to the kernel's own parameter
/// type, which the trampoline deduces from `kernel`'s declaration. So no
/// libffi, and a signature that disagrees with the kernel (count, pointer
/// versus scalar, element size) is a compile error naming the parameter.
///
/// **Identity.** `KernelIdentity` is a SHA-256 (detail/sha256.hpp says why
/// a cryptographic hash) of: a format tag, the compiler's resolved path and
/// `--version` text, every flag, the entry name, the whole translation unit
/// (kernel source and trampoline, hence the signature) and every file the
/// compiler read for it (its `-MD` dependency output) with the SHA-256 of
/// each file's content. Changing the source, a flag, the compiler or any
/// included header (the torch prefix header, a system header) changes the
/// identity. Its hex form names the kernel in the multi-kernel choice cache
/// too: `CompiledCppProvider` (run/cpu/backend.hpp) gives it with each
/// kernel (`run::ProvidedKernel::identity`), and the executor makes it the
/// candidate's `run::Candidate::identity`, so a choice measured with one
/// build is never replayed for another.
///
/// **Cache layout** (one private directory, mode 0700, owned by this user):
///
/// * `<direct>.v1.deps`: the dependency list of a translation unit, keyed
///   by the hash of everything but the dependencies (compiler, flags, text).
///   A lookup reads it, hashes the listed files and so recomputes the full
///   identity without running the compiler (ccache's "direct mode").
/// * `<identity>.v1.so`: the shared object.
///
/// Files are written atomically (a fresh `O_EXCL | O_NOFOLLOW` temporary
/// renamed into place) and read without following links: a link, FIFO,
/// device or directory planted at an entry is refused with a diagnostic, as
/// is an entry that is writable by others, owned by someone else or larger
/// than a cap. A shared object is checked on an open descriptor, then
/// loaded by its path: only this user can write the directory, and the name
/// is the hash of the content. The kernel's name never becomes part of a
/// path: files are named by hashes.
///
/// **Compiling** runs the compiler with an argument vector through
/// `posix_spawn` (never a shell), in a fresh private build directory, with
/// warnings off (`-w`): a failure is a diagnostic with the compiler's
/// message, truncated to `max_message_bytes`.
///
/// **Threads.** A `KernelCache` may be shared: lookups and compiles are
/// serialised by an internal mutex (a compile holds it). Processes may share
/// a directory; two that compile one kernel at once both succeed and one
/// rename wins. Loaded objects stay loaded for the process's life (as
/// Python's ctypes keeps Inductor's), so a `CpuKernelFn` never dangles.
/// A dependency that changes while a process runs is noticed by the next
/// lookup (file digests are memoised by path, inode, size and mtime).

#include <wrapir/detail/safe_file.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/run/cpu/detail/sha256.hpp>
#include <wrapir/run/cpu/detail/spawn.hpp>
#include <wrapir/run/detail/text.hpp>
#include <wrapir/run/extern.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <chrono>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wrapir::run::cpu {

/// The identity of one compiled kernel (see the file comment).
struct KernelIdentity {
  detail::Sha256Digest digest{};
  /// 64 lowercase hexadecimal digits: the shared object's file name and the
  /// kernel's name in the multi-kernel choice cache.
  [[nodiscard]] std::string hex() const { return detail::hex(digest); }
  friend bool operator==(const KernelIdentity&, const KernelIdentity&) = default;
};

/// Which vector instruction set Inductor generated a kernel for; it must
/// match the `CPU_CAPABILITY_*` the kernel is compiled with (a kernel
/// generated for AVX-512 steps by 16 floats and is wrong under AVX2).
enum class VecIsa : std::uint8_t { none, avx2, avx512 };

/// The best ISA this CPU runs (Inductor's own choice on this machine).
[[nodiscard]] inline VecIsa detect_vec_isa() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return VecIsa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VecIsa::avx2;
#endif
  return VecIsa::none;
}

/// How kernels are compiled.
struct CompileOptions {
  /// A path, or a name searched for in `PATH` (no shell is involved).
  std::filesystem::path compiler = "g++";
  /// Flags before the source; the cache adds `-shared`, `pic_flags`, `-w -MD -MF ...
  /// -o ... source`.
  std::vector<std::string> flags{};
  /// Flags after the source: libraries the kernel links (their order
  /// matters to the linker, so they follow the object that needs them).
  std::vector<std::string> link_flags{};
  /// The name of the kernel's C entry point.
  std::string entry = "kernel";
  /// How the compiler is asked for position-independent code: nvcc passes
  /// the flag to its host compiler (`-Xcompiler -fPIC`).
  std::vector<std::string> pic_flags{"-fPIC"};
  /// The trampoline appended to the kernel's source, given the entry and
  /// the signature; null: the C++ kernels' (`detail::trampoline`). Another
  /// calling convention (run/cuda/cuda_cpp_kernels.hpp: a host function
  /// that takes a stream and returns a status) brings its own, still
  /// `extern "C" void wrapir_entry(void* const* args)`, reading
  /// `trampoline_extra_arguments` more arguments after the signature's.
  Result<std::string> (*trampoline)(std::string_view entry, std::span<const ir::KernelParam> signature) = nullptr;
  std::size_t trampoline_extra_arguments = 0;
  /// What the kernels are called in diagnostics.
  std::string kind = "C++ kernel";
  /// The compiler's message in a diagnostic is cut to this many bytes.
  std::size_t max_message_bytes = 4096;
  /// A compiler still running after this is killed (with what it started)
  /// and the kernel refused: a hanging compiler must not hang the program.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

/// Inductor's flags for its CPU kernels (its `cpp_builder` for a kernel:
/// standalone prefix header, -O3, its floating-point flags, OpenMP, the ISA),
/// with `torch_include` (`.../site-packages/torch/include`) for
/// `<torch/csrc/inductor/cpp_prefix.h>`, linked (as Inductor links them)
/// against `torch_include/../lib`'s libtorch_cpu and libc10 for the Sleef
/// math their vectorised loops call.
[[nodiscard]] inline CompileOptions inductor_compile_options(const std::filesystem::path& torch_include,
                                                             VecIsa isa = detect_vec_isa(),
                                                             std::filesystem::path compiler = "g++") {
  CompileOptions o;
  o.compiler = std::move(compiler);
  o.flags = {"-DTORCH_INDUCTOR_CPP_WRAPPER", "-DSTANDALONE_TORCH_HEADER", "-DC10_USING_CUSTOM_GENERATED_MACROS",
             "-O3", "-DNDEBUG", "-fno-trapping-math", "-funsafe-math-optimizations", "-ffinite-math-only",
             "-fno-signed-zeros", "-fno-math-errno", "-fno-finite-math-only", "-fno-unsafe-math-optimizations",
             "-ffp-contract=off", "-fexcess-precision=fast", "-fno-tree-loop-vectorize", "-march=native",
             "-std=c++17", "-fopenmp", "-I" + torch_include.string(),
             "-I" + (torch_include / "torch/csrc/api/include").string()};
  // Vectorised math (tanh, exp, erf, ...) calls Sleef, which torch's
  // libtorch_cpu carries; Inductor links its kernels against it too.
  const std::filesystem::path torch_lib = torch_include.parent_path() / "lib";
  o.link_flags = {"-L" + torch_lib.string(), "-Wl,-rpath," + torch_lib.string(), "-ltorch_cpu", "-lc10"};
  switch (isa) {
    case VecIsa::avx512:
      o.flags.insert(o.flags.end(), {"-DCPU_CAPABILITY_AVX512", "-mavx512f", "-mavx512dq", "-mavx512vl",
                                     "-mavx512bw", "-mfma"});
      break;
    case VecIsa::avx2: o.flags.insert(o.flags.end(), {"-DCPU_CAPABILITY_AVX2", "-mavx2", "-mfma", "-mf16c"}); break;
    case VecIsa::none: break;
  }
  return o;
}

/// The torch include directory: `$WRAPIR_TORCH_INCLUDE`, else the venv
/// wrapir's scripts create (`~/.cache/wrapir/venv-torch-2.11.0`), if it has
/// the prefix header.
[[nodiscard]] inline std::optional<std::filesystem::path> find_torch_include() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("WRAPIR_TORCH_INCLUDE"); env != nullptr && *env != '\0') candidates.emplace_back(env);
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    candidates.push_back(fs::path(home) /
                         ".cache/wrapir/venv-torch-2.11.0/lib/python3.11/site-packages/torch/include");
  std::error_code ec;
  for (const fs::path& c : candidates)
    if (fs::is_regular_file(c / "torch/csrc/inductor/cpp_prefix.h", ec)) return c;
  return std::nullopt;
}

/// A kernel cache's directory: `$<variable>`, else
/// `$XDG_CACHE_HOME/wrapir/<folder>`, else `~/.cache/wrapir/<folder>`.
[[nodiscard]] inline std::filesystem::path user_cache_directory(const char* variable, std::string_view folder) {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv(variable); env != nullptr && *env != '\0') return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return fs::path(xdg) / "wrapir" / folder;
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache/wrapir" / folder;
}

/// The default cache directory: `$WRAPIR_CPU_KERNEL_CACHE`, else
/// `$XDG_CACHE_HOME/wrapir/cpu-kernels`, else `~/.cache/wrapir/cpu-kernels`.
[[nodiscard]] inline std::filesystem::path default_cache_directory() {
  return user_cache_directory("WRAPIR_CPU_KERNEL_CACHE", "cpu-kernels");
}

namespace detail {

/// The C type the trampoline reads a scalar of `dtype` as, or empty.
[[nodiscard]] constexpr std::string_view scalar_c_type(ir::DType d) noexcept {
  switch (d) {
    case ir::DType::bool_: return "bool";
    case ir::DType::uint8: return "std::uint8_t";
    case ir::DType::int8: return "std::int8_t";
    case ir::DType::int16: return "std::int16_t";
    case ir::DType::int32: return "std::int32_t";
    case ir::DType::int64: return "std::int64_t";
    case ir::DType::uint16: return "std::uint16_t";
    case ir::DType::uint32: return "std::uint32_t";
    case ir::DType::uint64: return "std::uint64_t";
    case ir::DType::float32: return "float";
    case ir::DType::float64: return "double";
    default: return {};
  }
}

[[nodiscard]] inline bool is_identifier(std::string_view s) noexcept {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

/// A trampoline's parts: the `static_assert`s that check the kernel's
/// parameters (deduced as `wrapir_trampoline::P<i>` from `Params`, which the
/// caller declares) against the signature, and the call's arguments, each
/// read from `args[i]`.
struct TrampolineArguments {
  std::string checks;
  std::string arguments;
};

/// The checks and arguments for `signature`, whose parameters come first in
/// the kernel's (`expected_count` in all: a calling convention may add its
/// own after them).
[[nodiscard]] inline Result<TrampolineArguments> trampoline_arguments(std::span<const ir::KernelParam> signature,
                                                                      std::size_t expected_count,
                                                                      std::string_view what_else = {}) {
  TrampolineArguments out;
  out.checks = "static_assert(std::tuple_size_v<wrapir_trampoline::Params> == " + std::to_string(expected_count) +
               ", \"wrapir: the kernel's parameter count differs from its signature's (" +
               std::to_string(signature.size()) + ")" + std::string(what_else) + "\");\n";
  for (std::size_t i = 0; i < signature.size(); ++i) {
    const ir::ParamType type = signature[i].type;
    const std::string p = "wrapir_trampoline::P<" + std::to_string(i) + ">";
    const std::string where = "wrapir: parameter " + std::to_string(i);
    if (type.pointer) {
      out.checks += "static_assert(std::is_pointer_v<" + p + ">, \"" + where + " is a pointer in the signature\");\n";
      out.checks += "static_assert(wrapir_trampoline::pointee_is<" + p + ", " +
                    std::to_string(ir::itemsize(type.dtype)) + ">(), \"" + where +
                    ": element size differs from the signature's dtype\");\n";
      out.arguments += (i ? ", " : "") + ("static_cast<" + p + ">(*static_cast<void* const*>(args[" +
                                          std::to_string(i) + "]))");
    } else {
      const std::string_view c = scalar_c_type(type.dtype);
      if (c.empty())
        return Diagnostic{"parameter " + std::to_string(i) + " (" + run::detail::quoted(signature[i].name) +
                          ") is a scalar of " + std::string(ir::name(type.dtype)) +
                          ", which the trampoline cannot pass"};
      out.checks += "static_assert(std::is_arithmetic_v<" + p + ">, \"" + where + " is a scalar in the signature\");\n";
      out.arguments += (i ? ", " : "") + ("static_cast<" + p + ">(*static_cast<const " + std::string(c) + "*>(args[" +
                                          std::to_string(i) + "]))");
    }
  }
  return out;
}

/// The head of every trampoline: `Params`, `P<i>` and `pointee_is` for the
/// kernel `entry`.
[[nodiscard]] inline std::string trampoline_head(std::string_view entry) {
  return "#include <cstddef>\n#include <cstdint>\n#include <tuple>\n#include <type_traits>\n"
         "namespace wrapir_trampoline {\n"
         "template <class R, class... P> std::tuple<P...> params_of(R (*)(P...));\n"
         "template <class R, class... P> R result_of(R (*)(P...));\n"
         "using Params = decltype(params_of(&" + std::string(entry) + "));\n"
         "template <std::size_t I> using P = std::remove_cv_t<std::tuple_element_t<I, Params>>;\n"
         "template <class T, std::size_t N> constexpr bool pointee_is() {\n"
         "  using E = std::remove_cv_t<std::remove_pointer_t<T>>;\n"
         "  if constexpr (std::is_void_v<E>) return true; else return sizeof(E) == N;\n}\n"
         "}  // namespace wrapir_trampoline\n";
}

/// The trampoline appended to a kernel's source (see the file comment).
[[nodiscard]] inline Result<std::string> trampoline(std::string_view entry, std::span<const ir::KernelParam> signature) {
  if (!is_identifier(entry)) return Diagnostic{"the entry point " + run::detail::quoted(entry) + " is not a C name"};
  auto parts = trampoline_arguments(signature, signature.size());
  if (!parts) return std::move(parts).error();
  return "\n// ---- wrapir trampoline: wrapir_entry(args) calls the kernel with args[i] read as its signature says\n" +
         trampoline_head(entry) + parts->checks + "extern \"C\" void wrapir_entry(void* const* args) {\n  (void)args;\n  " +
         std::string(entry) + "(" + parts->arguments + ");\n}\n";
}

/// Paths from a make-style dependency file (`target: dep dep \` ...), with
/// `\ ` and `$$` unescaped.
[[nodiscard]] inline std::vector<std::string> parse_make_dependencies(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  bool seen_colon = false;
  auto flush = [&] {
    if (!current.empty() && seen_colon) out.push_back(current);
    current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || (text[i + 1] == '\r'))) {
      flush();
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '#')) {
      current += text[++i];
      continue;
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      current += '$';
      ++i;
      continue;
    }
    if (!seen_colon && c == ':' && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
      seen_colon = true;
      current.clear();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      if (c == '\n' && seen_colon) break;  // one rule only: the object's
      continue;
    }
    current += c;
  }
  flush();
  return out;
}

inline constexpr std::string_view deps_header = "wrapir-cpu-kernel-deps v1";

/// What a compiled kernel threw, for a diagnostic (which the executor
/// prefixes with the kernel's name). The kernel was compiled as
/// `<cache>/build.XXXXXX/kernel.cpp`, a directory removed right after, so
/// that path (`build_prefix` is `<cache>/build.`) becomes `kernel.cpp`; and
/// torch's header-only checks (STD_TORCH_CHECK under STANDALONE_TORCH_HEADER,
/// which Inductor's kernels are compiled with) throw `FUNCTION, FILE:LINE,
/// MESSAGE`, which becomes `MESSAGE (line LINE of the kernel's source)` —
/// the unit is the kernel's source with the trampoline after it, so its
/// line numbers are the source's — or `MESSAGE (FILE:LINE)` for a header.
[[nodiscard]] inline std::string kernel_exception_text(std::string what, std::string_view build_prefix) {
  for (std::size_t at = 0; !build_prefix.empty() && (at = what.find(build_prefix, at)) != std::string::npos;) {
    const std::size_t slash = what.find('/', at + build_prefix.size());
    if (slash == std::string::npos || what.compare(slash + 1, 10, "kernel.cpp") != 0) {
      at += build_prefix.size();
      continue;
    }
    what.erase(at, slash + 1 - at);
  }
  const std::size_t first = what.find(", ");
  if (first == std::string::npos || !is_identifier(std::string_view(what).substr(0, first))) return what;
  const std::size_t second = what.find(", ", first + 2);
  if (second == std::string::npos) return what;
  const std::string_view place = std::string_view(what).substr(first + 2, second - first - 2);
  const std::size_t colon = place.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == place.size() ||
      !std::all_of(place.begin() + static_cast<std::ptrdiff_t>(colon) + 1, place.end(),
                   [](char c) { return c >= '0' && c <= '9'; }))
    return what;
  const std::string_view file = place.substr(0, colon), line = place.substr(colon + 1);
  return what.substr(second + 2) + (file == "kernel.cpp" ? " (line " + std::string(line) + " of the kernel's source)"
                                                         : " (" + std::string(place) + ")");
}

/// The compiler's identity text: its resolved path and `--version`,
/// memoised per (path, device, inode, size, mtime) for the process.
struct CompilerIdentityMemo {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> by_key;
};
[[nodiscard]] inline CompilerIdentityMemo& compiler_identity_memo() {
  static CompilerIdentityMemo memo;
  return memo;
}

/// Digests of dependency files, memoised per (path, device, inode, size, mtime).
struct FileDigestMemo {
  std::mutex mutex;
  std::map<std::string, Sha256Digest, std::less<>> by_key;
};
[[nodiscard]] inline FileDigestMemo& file_digest_memo() {
  static FileDigestMemo memo;
  return memo;
}

[[nodiscard]] inline std::string stat_key(const std::string& path, const struct stat& st) {
  return path + '\0' + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' + std::to_string(st.st_size) +
         ':' + std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
}

/// Counts every process the kernel cache starts (tests check that a cache
/// hit starts none).
[[nodiscard]] inline std::atomic<std::uint64_t>& processes_started() {
  static std::atomic<std::uint64_t> count{0};
  return count;
}

}  // namespace detail

/// A loaded kernel: its identity and the function that calls it.
struct CompiledKernel {
  KernelIdentity identity{};
  CpuKernelFn fn{};
  bool from_cache = false;  // false: it was compiled by this call
};

/// Compiles, caches and loads C++ kernels (see the file comment).
class KernelCache {
 public:
  KernelCache(std::filesystem::path directory, CompileOptions options)
      : directory_(std::move(directory)), options_(std::move(options)) {}

  [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }
  [[nodiscard]] const CompileOptions& options() const noexcept { return options_; }
  /// How many compiler runs (compiles and `--version` queries) this cache made.
  [[nodiscard]] std::uint64_t compiler_runs() const noexcept { return compiler_runs_.load(); }

  /// The kernel `source` (with `extern "C" void <entry>(...)`) whose
  /// parameters are `signature`, from the cache or compiled now. `name` is
  /// the program's kernel name, used in diagnostics only.
  [[nodiscard]] Result<CompiledKernel> load(std::string_view name, std::string_view source,
                                            std::span<const ir::KernelParam> signature) {
    auto r = load_unnamed(source, signature);
    if (!r) return Diagnostic{options_.kind + " " + run::detail::quoted(name) + ": " + r.error().message};
    return r;
  }

  /// `load`'s function, after checking that the kernel is C++ (the
  /// executor's provider, `CompiledCppProvider`, uses `load` for the
  /// identity too).
  [[nodiscard]] Result<CpuKernelFn> provide(std::string_view name, ir::KernelLanguage language, std::string_view source,
                                            const std::vector<ir::KernelParam>& signature) {
    if (language != ir::KernelLanguage::cpp)
      return Diagnostic{"kernel " + run::detail::quoted(name) + " is written in " +
                        std::string(ir::kernel_language_name(language)) + ", which the CPU backend cannot run"};
    auto k = load(name, source, signature);
    if (!k) return std::move(k).error();
    return std::move(k->fn);
  }

 private:
  using Digest = detail::Sha256Digest;

  Result<CompiledKernel> load_unnamed(std::string_view source, std::span<const ir::KernelParam> signature) {
    std::lock_guard lock(mutex_);
    if (auto dir = prepare_directory(); !dir) return std::move(dir).error();
    auto tail = options_.trampoline != nullptr ? options_.trampoline(options_.entry, signature)
                                               : detail::trampoline(options_.entry, signature);
    if (!tail) return std::move(tail).error();
    const std::size_t arity = signature.size() + options_.trampoline_extra_arguments;
    const std::string unit = std::string(source) + *tail;
    auto compiler = compiler_identity();
    if (!compiler) return std::move(compiler).error();

    detail::HashInput direct_input;
    direct_input.add("wrapir-cpu-kernel/1").add(compiler->first).add(compiler->second).add(options_.entry);
    direct_input.add(std::to_string(options_.flags.size()));
    for (const std::string& f : options_.flags) direct_input.add(f);
    direct_input.add(std::to_string(options_.link_flags.size()));
    for (const std::string& f : options_.link_flags) direct_input.add(f);
    direct_input.add(std::to_string(options_.pic_flags.size()));
    for (const std::string& f : options_.pic_flags) direct_input.add(f);
    direct_input.add(unit);
    auto direct = detail::sha256(direct_input.text());
    if (!direct) return std::move(direct).error();
    const std::string direct_hex = detail::hex(*direct);

    // Direct mode: the dependency list recorded for this translation unit.
    const std::filesystem::path deps_path = directory_ / (direct_hex + ".v1.deps");
    wrapir::detail::ReadOptions read{.max_bytes = 4 << 20, .follow_symlinks = false, .limit_hint = {}};
    wrapir::detail::ReadOutcome deps_file = wrapir::detail::read_regular_file_outcome(deps_path, read);
    if (!deps_file.content && !deps_file.missing)
      return Diagnostic{"cache entry " + wrapir::detail::quoted_path(deps_path) + " is refused: " + deps_file.why};
    if (deps_file.content) {
      if (auto deps = parse_deps(*deps_file.content)) {
        auto identity = full_identity(*direct, *deps);
        if (identity) {
          const std::filesystem::path so = so_path(*identity);
          auto loaded = load_shared_object(so, arity, /*missing_ok=*/true);
          if (!loaded) return std::move(loaded).error();
          if (*loaded) return CompiledKernel{*identity, std::move(**loaded), true};
        }
        // A dependency vanished or changed: compile again below.
      }
      // A malformed list is rewritten by the compile below.
    }
    return compile(unit, *direct, deps_path, arity);
  }

  Result<void> prepare_directory() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (directory_.has_parent_path()) fs::create_directories(directory_.parent_path(), ec);
    return wrapir::detail::check_private_directory(directory_, true);
  }

  [[nodiscard]] std::filesystem::path so_path(const KernelIdentity& id) const {
    return directory_ / (id.hex() + ".v1.so");
  }

  /// The compiler's absolute path and identity text.
  Result<std::pair<std::string, std::string>> compiler_identity() {
    namespace fs = std::filesystem;
    fs::path path = options_.compiler;
    if (path.empty()) return Diagnostic{"no compiler is set"};
    if (path.native().find('/') == std::string::npos) {
      const char* env = std::getenv("PATH");
      std::string_view dirs = env != nullptr ? env : "/usr/bin:/bin";
      std::optional<fs::path> found;
      while (!found) {
        const std::size_t colon = dirs.find(':');
        const std::string_view dir = dirs.substr(0, colon);
        if (!dir.empty()) {
          const fs::path candidate = fs::path(dir) / path;
          if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) found = candidate;
        }
        if (colon == std::string_view::npos) break;
        dirs.remove_prefix(colon + 1);
      }
      if (!found) return Diagnostic{"compiler " + wrapir::detail::quoted_path(path) + " is not found in PATH"};
      path = *found;
    }
    std::error_code ec;
    const fs::path resolved = fs::canonical(path, ec);
    struct stat st {};
    if (ec || ::stat(resolved.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(resolved.c_str(), X_OK) != 0)
      return Diagnostic{"compiler " + wrapir::detail::quoted_path(path) + " is not an executable file"};
    const std::string key = detail::stat_key(resolved.string(), st);
    detail::CompilerIdentityMemo& memo = detail::compiler_identity_memo();
    {
      std::lock_guard lock(memo.mutex);
      if (const auto it = memo.by_key.find(key); it != memo.by_key.end()) return std::pair{path.string(), it->second};
    }
    auto scratch = make_build_directory();
    if (!scratch) return std::move(scratch).error();
    auto outcome = run({path.string(), "--version"}, *scratch / "version.txt");
    std::filesystem::remove_all(*scratch, ec);
    if (!outcome) return std::move(outcome).error();
    if (outcome->exit_status != 0)
      return Diagnostic{"compiler " + wrapir::detail::quoted_path(path) + " --version failed: " +
                        wrapir::detail::printable(outcome->output.substr(0, 512), false)};
    std::string identity = resolved.string() + "\n" + outcome->output.substr(0, 4096);
    std::lock_guard lock(memo.mutex);
    memo.by_key.emplace(key, identity);
    return std::pair{path.string(), std::move(identity)};
  }

  Result<std::filesystem::path> make_build_directory() const {
    std::string templ = (directory_ / "build.XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr)
      return Diagnostic{"cannot make a build directory in " + wrapir::detail::quoted_path(directory_) + ": " +
                        wrapir::detail::errno_text(errno)};
    return std::filesystem::path(templ);
  }

  Result<detail::ProcessOutcome> run(const std::vector<std::string>& argv, const std::filesystem::path& output) {
    ++compiler_runs_;
    ++detail::processes_started();
    return detail::run_process(argv, output, std::size_t{1} << 20, options_.timeout);
  }

  static std::optional<std::vector<std::string>> parse_deps(std::string_view text) {
    if (text.empty() || text.back() != '\n') return std::nullopt;
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t nl = text.find('\n', pos);
      lines.emplace_back(text.substr(pos, nl - pos));
      pos = nl + 1;
    }
    if (lines.empty() || lines[0].rfind(std::string(detail::deps_header) + " count=", 0) != 0) return std::nullopt;
    const std::string count_text = lines[0].substr(detail::deps_header.size() + 7);
    if (count_text.empty() || count_text.size() > 6 ||
        !std::all_of(count_text.begin(), count_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    if (std::stoul(count_text) != lines.size() - 1) return std::nullopt;
    lines.erase(lines.begin());
    for (const std::string& l : lines)
      if (l.empty() || l[0] != '/') return std::nullopt;
    return lines;
  }

  /// The SHA-256 of one dependency's content, memoised by its stat.
  static Result<Digest> file_digest(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return Diagnostic{"dependency " + wrapir::detail::quoted_path(path) + " is gone or not a regular file"};
    const std::string key = detail::stat_key(path, st);
    detail::FileDigestMemo& memo = detail::file_digest_memo();
    {
      std::lock_guard lock(memo.mutex);
      if (const auto it = memo.by_key.find(key); it != memo.by_key.end()) return it->second;
    }
    auto content = wrapir::detail::read_regular_file(path, {.max_bytes = std::uint64_t{64} << 20,
                                                            .follow_symlinks = true, .limit_hint = {}});
    if (!content) return std::move(content).error();
    auto digest = detail::sha256(*content);
    if (!digest) return digest;
    std::lock_guard lock(memo.mutex);
    memo.by_key.emplace(key, *digest);
    return digest;
  }

  static Result<KernelIdentity> full_identity(const Digest& direct, const std::vector<std::string>& deps) {
    detail::HashInput input;
    input.add("wrapir-cpu-kernel-identity/1").add(detail::hex(direct)).add(std::to_string(deps.size()));
    for (const std::string& d : deps) {
      auto digest = file_digest(d);
      if (!digest) return std::move(digest).error();
      input.add(d).add(detail::hex(*digest));
    }
    auto digest = detail::sha256(input.text());
    if (!digest) return std::move(digest).error();
    return KernelIdentity{*digest};
  }

  /// The kernel at `so`; nullopt when it is missing and `missing_ok`.
  Result<std::optional<CpuKernelFn>> load_shared_object(const std::filesystem::path& so, std::size_t arity,
                                                        bool missing_ok) {
    namespace sd = wrapir::detail::safe_file_detail;
    auto refuse = [&](const std::string& why) {
      return Diagnostic{"cache entry " + wrapir::detail::quoted_path(so) + " is refused: " + why};
    };
    struct stat before {};
    if (::lstat(so.c_str(), &before) != 0) {
      if (errno == ENOENT && missing_ok) return std::optional<CpuKernelFn>{};
      return refuse(wrapir::detail::errno_text(errno));
    }
    if (!S_ISREG(before.st_mode)) return refuse(sd::not_regular(before.st_mode));
    sd::Descriptor fd{sd::open_retrying(so.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)};
    if (fd.get() < 0) return refuse(wrapir::detail::errno_text(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return refuse(wrapir::detail::errno_text(errno));
    if (!S_ISREG(st.st_mode)) return refuse(sd::not_regular(st.st_mode));
    if (st.st_uid != ::geteuid()) return refuse("it belongs to another user");
    if ((st.st_mode & 022) != 0) return refuse("group or others may write to it");
    if (st.st_size <= 0 || st.st_size > (std::int64_t{512} << 20)) return refuse("its size is out of range");
    // Not through /proc/self/fd/N: glibc recognises an already loaded object
    // by its name, and descriptor numbers are reused, so a second kernel
    // would come back as the first. The entry's name is its content's hash
    // and the directory is private (checked above), so the path is loaded.
    void* handle = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return refuse("dlopen failed: " + wrapir::detail::printable(why != nullptr ? why : "unknown error", false));
    }
    using Entry = void (*)(void* const*);
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, "wrapir_entry"));
    if (entry == nullptr) return refuse("it has no wrapir_entry");
    CpuKernelFn fn = [entry, arity, build_prefix = (directory_ / "build.").string()](
                         std::span<void* const> args) -> Result<void> {
      if (args.size() != arity)
        return Diagnostic{"called with " + std::to_string(args.size()) + " arguments, expected " +
                          std::to_string(arity)};
      for (std::size_t i = 0; i < args.size(); ++i)
        if (args[i] == nullptr) return Diagnostic{"argument " + std::to_string(i) + " is a null pointer"};
      // A kernel's failed check (TORCH_CHECK) throws through the trampoline.
      try {
        entry(args.data());
      } catch (const std::exception& e) {
        return Diagnostic{detail::kernel_exception_text(e.what(), build_prefix)};
      } catch (...) {
        return Diagnostic{"threw an exception that is not a std::exception"};
      }
      return {};
    };
    return std::optional<CpuKernelFn>{std::move(fn)};
  }

  Result<CompiledKernel> compile(const std::string& unit, const Digest& direct, const std::filesystem::path& deps_path,
                                 std::size_t arity) {
    namespace fs = std::filesystem;
    auto build = make_build_directory();
    if (!build) return std::move(build).error();
    struct RemoveBuild {
      fs::path dir;
      ~RemoveBuild() {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    } remove_build{*build};
    const fs::path source = *build / "kernel.cpp";
    const fs::path object = *build / "kernel.so";
    const fs::path deps = *build / "kernel.d";
    if (auto w = wrapir::detail::write_file_atomically(source, unit); !w) return std::move(w).error();
    auto compiler = compiler_identity();
    if (!compiler) return std::move(compiler).error();
    std::vector<std::string> argv{compiler->first};
    argv.insert(argv.end(), options_.flags.begin(), options_.flags.end());
    argv.push_back("-shared");
    argv.insert(argv.end(), options_.pic_flags.begin(), options_.pic_flags.end());
    argv.insert(argv.end(), {"-w", "-MD", "-MF", deps.string(), "-o", object.string(), source.string()});
    argv.insert(argv.end(), options_.link_flags.begin(), options_.link_flags.end());
    auto outcome = run(argv, *build / "compiler-output.txt");
    if (!outcome) return std::move(outcome).error();
    if (outcome->exit_status != 0) {
      std::string message = outcome->output;
      // The build directory's name says nothing; the kernel's line numbers do.
      for (std::size_t at; (at = message.find(source.string())) != std::string::npos;)
        message.replace(at, source.string().size(), "kernel.cpp");
      const bool cut = message.size() > options_.max_message_bytes;
      if (cut) message.resize(options_.max_message_bytes);
      std::string shown = wrapir::detail::printable(message, false);
      if (cut) shown += " [... " + std::to_string(outcome->output_bytes - options_.max_message_bytes) + " more bytes]";
      const std::string how =
          outcome->timed_out ? "was stopped after " + std::to_string(options_.timeout.count()) + " ms"
          : outcome->signal != 0 ? "was killed by signal " + std::to_string(outcome->signal)
                                 : "exited with status " + std::to_string(outcome->exit_status);
      return Diagnostic{"does not compile (the compiler " + how + "): " + shown};
    }
    auto deps_text = wrapir::detail::read_regular_file(deps, {.max_bytes = 16 << 20, .follow_symlinks = false,
                                                              .limit_hint = {}});
    if (!deps_text) return std::move(deps_text).error();
    std::vector<std::string> dependencies;
    std::error_code ec;
    for (const std::string& d : detail::parse_make_dependencies(*deps_text)) {
      if (d == source.string()) continue;  // the unit itself is hashed as text
      fs::path p = fs::absolute(d, ec);
      if (ec || p.native().find('\n') != std::string::npos) return Diagnostic{"an unusable dependency path"};
      dependencies.push_back(p.lexically_normal().string());
    }
    std::sort(dependencies.begin(), dependencies.end());
    dependencies.erase(std::unique(dependencies.begin(), dependencies.end()), dependencies.end());
    auto identity = full_identity(direct, dependencies);
    if (!identity) return std::move(identity).error();

    // The object first, then the list that finds it: a reader that sees the
    // list always finds the object.
    const fs::path so = so_path(*identity);
    std::string staged_template = (directory_ / (identity->hex() + ".tmp.XXXXXX")).string();
    const int staged_fd = ::mkstemp(staged_template.data());
    if (staged_fd < 0) return Diagnostic{"cannot stage the shared object: " + wrapir::detail::errno_text(errno)};
    ::close(staged_fd);
    const fs::path staged = staged_template;
    // rename within one file system: the build directory is in the cache.
    if (::rename(object.c_str(), staged.c_str()) != 0 || ::chmod(staged.c_str(), 0700) != 0 ||
        ::rename(staged.c_str(), so.c_str()) != 0) {
      const int error = errno;
      ::unlink(staged.c_str());
      return Diagnostic{"cannot store " + wrapir::detail::quoted_path(so) + ": " + wrapir::detail::errno_text(error)};
    }
    std::string list = std::string(detail::deps_header) + " count=" + std::to_string(dependencies.size()) + "\n";
    for (const std::string& d : dependencies) list += d + "\n";
    if (auto w = wrapir::detail::write_file_atomically(
            deps_path, list, {.temporary_prefix = deps_path.filename().string() + ".tmp.", .replace_special_files = true});
        !w)
      return std::move(w).error();
    auto loaded = load_shared_object(so, arity, false);
    if (!loaded) return std::move(loaded).error();
    return CompiledKernel{*identity, std::move(**loaded), false};
  }

  std::filesystem::path directory_;
  CompileOptions options_;
  std::mutex mutex_{};
  std::atomic<std::uint64_t> compiler_runs_{0};
};

}  // namespace wrapir::run::cpu
