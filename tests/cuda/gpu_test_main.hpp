#pragma once
// The main() of every wrapir::cuda test: without a usable device it checks
// that the failure arrives as an error value, prints the line ctest reads as
// a skip, and exits 77; with one, it makes device 0's primary context
// current and runs the doctest cases. Include it first, once per test
// executable: it carries doctest's implementation.

#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace wrapir_test {

/// The value, or the test case fails with the diagnostic.
template <class T>
T must(wrapir::Result<T> r) {
  if (!r) FAIL(r.error().message);
  return std::move(r).value();
}

/// Fails the test case with the diagnostic of a failed operation.
inline void must(const wrapir::cuda::Status& s) {
  if (!s) FAIL(s.error().message);
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// The context every test case runs in (device 0).
inline std::optional<wrapir::cuda::Context>& gpu_context() {
  static std::optional<wrapir::cuda::Context> ctx;
  return ctx;
}

inline int run_gpu_tests(int argc, char** argv) {
  namespace cuda = wrapir::cuda;
  if (auto why = cuda::no_device_reason()) {
    // What a program sees on such a machine: errors, never a crash.
    const bool driver_said_why = why->find("CUDA") != std::string::npos;
    auto buffer = cuda::DeviceBuffer::allocate(1024);
    const char ptx[] = ".version 8.0";
    auto module = cuda::Module::load(std::as_bytes(std::span(ptx)), "probe");
    if (!driver_said_why || buffer.ok() || module.ok()) {
      std::printf("FAILED: without a device, wrapir::cuda must answer with errors (got: %s)\n", why->c_str());
      return 1;
    }
    std::printf("skipped: no CUDA device (%s)\n", why->c_str());
    return 77;
  }
  auto ctx = cuda::use_device(0);
  if (!ctx) {
    std::printf("FAILED: %s\n", ctx.error().message.c_str());
    return 1;
  }
  gpu_context().emplace(std::move(ctx).value());
  doctest::Context runner(argc, argv);
  const int result = runner.run();
  gpu_context().reset();
  return result;
}

}  // namespace wrapir_test
