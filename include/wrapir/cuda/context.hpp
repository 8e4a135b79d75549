#pragma once
/// \file
/// Devices and their primary contexts.
///
/// wrapir works in a device's *primary* context, the one the CUDA runtime,
/// PyTorch and Triton share, so buffers and streams pass freely between
/// wrapir and them. `Context::primary(ordinal)` retains it (and releases it
/// when the `Context` goes); `make_current()` binds it to the calling
/// thread, which every other wrapir::cuda call needs. `use_device(ordinal)`
/// does both.
///
/// A machine without a driver or a device answers with a diagnostic, never
/// a crash: `device_count()` is the way to ask, and
/// `no_device_reason()` the one line a test prints when it skips.

#include <wrapir/cuda/detail/unique_handle.hpp>
#include <wrapir/cuda/driver.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>

namespace wrapir::cuda {

/// How many CUDA devices this process can use; an error when the driver
/// cannot be loaded or initialised (no driver, no device).
[[nodiscard]] inline Result<int> device_count() {
  auto d = driver();
  if (!d) return d.error();
  int n = 0;
  if (const CUresult r = (*d)->cuDeviceGetCount(&n); r != CUDA_SUCCESS) return driver_error("cuDeviceGetCount", r);
  if (n == 0) return Diagnostic{"no CUDA device: the driver reports none"};
  return n;
}

/// Why this process cannot run CUDA work, or nothing when it can: the line
/// a test prints before it skips ("skipped: no CUDA device: ...").
[[nodiscard]] inline std::optional<std::string> no_device_reason() {
  auto n = device_count();
  if (n) return std::nullopt;
  return n.error().message;
}

/// What launching and planning need to know of a device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name{};
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  /// Shared memory a block may have without opting in, and with opting in.
  int max_shared_per_block = 0;
  int max_shared_per_block_optin = 0;
  std::array<int, 3> max_grid{};
  std::size_t total_memory_bytes = 0;
};

namespace detail {

inline Result<CUdevice> device_handle(int ordinal) {
  auto n = device_count();
  if (!n) return n.error();
  if (ordinal < 0 || ordinal >= *n)
    return Diagnostic{"CUDA device " + std::to_string(ordinal) + " does not exist: this machine has " +
                      std::to_string(*n) + " device(s)"};
  CUdevice dev{};
  if (const CUresult r = loaded_driver().cuDeviceGet(&dev, ordinal); r != CUDA_SUCCESS)
    return driver_error("cuDeviceGet(" + std::to_string(ordinal) + ")", r);
  return dev;
}

}  // namespace detail

/// The properties of device `ordinal`.
[[nodiscard]] inline Result<DeviceInfo> device_info(int ordinal) {
  auto dev = detail::device_handle(ordinal);
  if (!dev) return dev.error();
  const Driver& d = loaded_driver();
  DeviceInfo info;
  info.ordinal = ordinal;
  std::array<char, 256> name{};
  if (const CUresult r = d.cuDeviceGetName(name.data(), static_cast<int>(name.size()), *dev); r != CUDA_SUCCESS)
    return driver_error("cuDeviceGetName", r);
  info.name = name.data();
  struct Query {
    CUdevice_attribute attribute;
    int* out;
  };
  const std::array<Query, 9> queries{{
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.compute_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.compute_minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessors},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.max_shared_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.max_shared_per_block_optin},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &info.max_grid[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &info.max_grid[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &info.max_grid[2]},
  }};
  for (const Query& q : queries)
    if (const CUresult r = d.cuDeviceGetAttribute(q.out, q.attribute, *dev); r != CUDA_SUCCESS)
      return driver_error("cuDeviceGetAttribute(" + std::to_string(static_cast<int>(q.attribute)) + ")", r);
  std::size_t total = 0;
  if (const CUresult r = d.cuDeviceTotalMem(&total, *dev); r != CUDA_SUCCESS) return driver_error("cuDeviceTotalMem", r);
  info.total_memory_bytes = total;
  return info;
}

/// A retained primary context. Move-only; releasing the last retain lets
/// the driver tear the context down, so destroy every object made in it
/// (modules, buffers, streams, graphs) first — declare the `Context` first.
class Context {
 public:
  /// Retains device `ordinal`'s primary context (does not make it current).
  [[nodiscard]] static Result<Context> primary(int ordinal) {
    auto dev = detail::device_handle(ordinal);
    if (!dev) return dev.error();
    CUcontext ctx{};
    if (const CUresult r = loaded_driver().cuDevicePrimaryCtxRetain(&ctx, *dev); r != CUDA_SUCCESS)
      return driver_error("cuDevicePrimaryCtxRetain(device " + std::to_string(ordinal) + ")", r);
    return Context(*dev, ctx, ordinal);
  }

  /// Binds this context to the calling thread.
  [[nodiscard]] Status make_current() const {
    return check(loaded_driver().cuCtxSetCurrent(context_.get().context),
                 "cuCtxSetCurrent(device " + std::to_string(ordinal_) + ")");
  }

  /// Waits for all work in this context (it must be current).
  [[nodiscard]] Status synchronize() const { return check(loaded_driver().cuCtxSynchronize(), "cuCtxSynchronize"); }

  [[nodiscard]] CUcontext get() const noexcept { return context_.get().context; }
  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }

 private:
  struct Retained {
    CUdevice device{};
    CUcontext context{};
    friend bool operator==(const Retained&, const Retained&) = default;
  };
  struct Release {
    void operator()(Retained r) const noexcept { (void)loaded_driver().cuDevicePrimaryCtxRelease(r.device); }
  };
  Context(CUdevice dev, CUcontext ctx, int ordinal) : context_(Retained{dev, ctx}), ordinal_(ordinal) {}

  detail::UniqueHandle<Retained, Release> context_;
  int ordinal_ = 0;
};

/// Retains device `ordinal`'s primary context and makes it current.
[[nodiscard]] inline Result<Context> use_device(int ordinal) {
  auto ctx = Context::primary(ordinal);
  if (!ctx) return ctx;
  if (auto s = ctx->make_current(); !s) return s.error();
  return ctx;
}

}  // namespace wrapir::cuda
