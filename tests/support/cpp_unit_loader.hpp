#pragma once
// What the GPU tests of emitted C++ units share (tests/cuda/cpp_emit_run_test.cpp,
// tests/cuda/cpp_emit_kernels_run_test.cpp): where the CUDA Toolkit is, a
// scratch directory per build, and the unit's shared object loaded with its
// C entry points (`<prefix>_run`, `<prefix>_init`). Each test keeps its own
// compiler command: what differs between them is what they build.
// Include after gpu_test_main.hpp.

#include <wrapir/run/c_abi.h>

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace wrapir_test {

/// The CUDA Toolkit's root (with include/cuda.h), or empty.
inline std::filesystem::path cuda_home() {
  namespace fs = std::filesystem;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(env); home != nullptr && fs::exists(fs::path(home) / "include/cuda.h")) return home;
  if (fs::exists("/usr/local/cuda/include/cuda.h")) return "/usr/local/cuda";
  return {};
}

/// A fresh directory under the system's temporary directory.
inline std::filesystem::path scratch_directory(const std::string& stem) {
  std::string pattern = (std::filesystem::temp_directory_path() / (stem + "_XXXXXX")).string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

using UnitRunFn = int (*)(const wrapir_extern_table*, const wrapir_value*, size_t, wrapir_value*, size_t, void*, char*,
                          size_t);
using UnitInitFn = int (*)(const char*, char*, size_t);

/// A loaded unit: empty (`handle` null) when the test could not build it for
/// want of a compiler or toolkit.
struct LoadedUnit {
  void* handle = nullptr;
  UnitRunFn run = nullptr;
  UnitInitFn init = nullptr;

  /// The entry point `<prefix>_<name>` of the unit, or null.
  template <class Fn>
  [[nodiscard]] Fn entry(const std::string& prefix, const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle, (prefix + "_" + name).c_str()));
  }
};

/// Loads the shared object at `path` and finds `<prefix>_run` and `<prefix>_init`.
inline LoadedUnit load_unit(const std::filesystem::path& path, const std::string& prefix) {
  LoadedUnit u;
  u.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(u.handle != nullptr, dlerror());
  u.run = u.entry<UnitRunFn>(prefix, "run");
  u.init = u.entry<UnitInitFn>(prefix, "init");
  REQUIRE(reinterpret_cast<void*>(u.run) != nullptr);
  REQUIRE(reinterpret_cast<void*>(u.init) != nullptr);
  return u;
}

}  // namespace wrapir_test
