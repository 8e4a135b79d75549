#pragma once
/// \file
/// Device memory, pinned host memory, and copies between them.
///
/// `DeviceBuffer` owns a `cuMemAlloc` block and `PinnedBuffer` a
/// page-locked host block (asynchronous copies need one to be
/// asynchronous); both are move-only and free on destruction. A zero-byte
/// buffer is valid, holds a null address and calls no driver function — the
/// driver itself rejects zero-byte allocations, but zero-sized tensors are
/// ordinary in a wrapper. `DevicePtr<T>` is a typed, non-owning device
/// address, the type typed kernels take (cuda/launch.hpp).
///
/// All calls need a current context (cuda/context.hpp).

#include <wrapir/cuda/detail/unique_handle.hpp>
#include <wrapir/cuda/driver.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

namespace wrapir::cuda {

/// A typed device address. Converts to `DevicePtr<const T>`, never the
/// other way, and never from a raw integer or another element type without
/// saying so (the explicit constructor). The size of a `CUdeviceptr`, so it
/// is passed to kernels as one.
template <class T>
struct DevicePtr {
  CUdeviceptr address = 0;

  constexpr DevicePtr() noexcept = default;
  constexpr explicit DevicePtr(CUdeviceptr a) noexcept : address(a) {}
  constexpr operator DevicePtr<const T>() const noexcept  // NOLINT: adding const is always safe
    requires(!std::is_const_v<T>)
  {
    return DevicePtr<const T>{address};
  }
  /// The address `n` elements further on.
  [[nodiscard]] constexpr DevicePtr operator+(std::size_t n) const noexcept {
    return DevicePtr{address + n * sizeof(std::conditional_t<std::is_void_v<T>, std::byte, T>)};
  }
  friend constexpr bool operator==(DevicePtr, DevicePtr) = default;
};

namespace detail {
struct FreeDevice {
  void operator()(CUdeviceptr p) const noexcept { (void)loaded_driver().cuMemFree(p); }
};
struct FreePinned {
  void operator()(void* p) const noexcept { (void)loaded_driver().cuMemFreeHost(p); }
};
inline std::string bytes_text(std::size_t bytes) { return std::to_string(bytes) + " bytes"; }
}  // namespace detail

/// `bytes` of device memory in the current context.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;

  /// Allocates; the contents are undefined.
  [[nodiscard]] static Result<DeviceBuffer> allocate(std::size_t bytes) {
    if (bytes == 0) return DeviceBuffer{};
    auto d = driver();
    if (!d) return d.error();
    CUdeviceptr p = 0;
    if (const CUresult r = (*d)->cuMemAlloc(&p, bytes); r != CUDA_SUCCESS)
      return driver_error("cuMemAlloc(" + detail::bytes_text(bytes) + ")", r);
    DeviceBuffer out;
    out.memory_ = detail::UniqueHandle<CUdeviceptr, detail::FreeDevice>(p);
    out.bytes_ = bytes;
    return out;
  }

  [[nodiscard]] CUdeviceptr address() const noexcept { return memory_.get(); }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return bytes_; }
  /// The address as a typed pointer (no check of alignment or element count).
  template <class T>
  [[nodiscard]] DevicePtr<T> as() const noexcept {
    return DevicePtr<T>{address()};
  }

 private:
  detail::UniqueHandle<CUdeviceptr, detail::FreeDevice> memory_{};
  std::size_t bytes_ = 0;
};

/// `bytes` of page-locked host memory.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;

  [[nodiscard]] static Result<PinnedBuffer> allocate(std::size_t bytes) {
    if (bytes == 0) return PinnedBuffer{};
    auto d = driver();
    if (!d) return d.error();
    void* p = nullptr;
    if (const CUresult r = (*d)->cuMemAllocHost(&p, bytes); r != CUDA_SUCCESS)
      return driver_error("cuMemAllocHost(" + detail::bytes_text(bytes) + ")", r);
    PinnedBuffer out;
    out.memory_ = detail::UniqueHandle<void*, detail::FreePinned>(p);
    out.bytes_ = bytes;
    return out;
  }

  [[nodiscard]] void* data() const noexcept { return memory_.get(); }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {static_cast<std::byte*>(data()), bytes_}; }

 private:
  detail::UniqueHandle<void*, detail::FreePinned> memory_{};
  std::size_t bytes_ = 0;
};

/// Synchronous copies; a zero-byte copy does nothing.
[[nodiscard]] inline Status copy_to_device(CUdeviceptr dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return {};
  return check(loaded_driver().cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD(" + detail::bytes_text(bytes) + ")");
}
[[nodiscard]] inline Status copy_to_host(void* dst, CUdeviceptr src, std::size_t bytes) {
  if (bytes == 0) return {};
  return check(loaded_driver().cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH(" + detail::bytes_text(bytes) + ")");
}

/// Stream-ordered copies and fills (asynchronous to the host for device
/// memory and pinned host memory).
[[nodiscard]] inline Status copy_async(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  if (bytes == 0) return {};
  return check(loaded_driver().cuMemcpyDtoDAsync(dst, src, bytes, stream),
               "cuMemcpyDtoDAsync(" + detail::bytes_text(bytes) + ")");
}
[[nodiscard]] inline Status copy_to_device_async(CUdeviceptr dst, const void* src, std::size_t bytes,
                                                 CUstream stream) {
  if (bytes == 0) return {};
  return check(loaded_driver().cuMemcpyHtoDAsync(dst, src, bytes, stream),
               "cuMemcpyHtoDAsync(" + detail::bytes_text(bytes) + ")");
}
[[nodiscard]] inline Status copy_to_host_async(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
  if (bytes == 0) return {};
  return check(loaded_driver().cuMemcpyDtoHAsync(dst, src, bytes, stream),
               "cuMemcpyDtoHAsync(" + detail::bytes_text(bytes) + ")");
}
[[nodiscard]] inline Status fill_bytes_async(CUdeviceptr dst, std::uint8_t value, std::size_t bytes,
                                             CUstream stream) {
  if (bytes == 0) return {};
  return check(loaded_driver().cuMemsetD8Async(dst, value, bytes, stream),
               "cuMemsetD8Async(" + detail::bytes_text(bytes) + ")");
}

/// Typed conveniences over the byte copies.
template <class T>
[[nodiscard]] Status copy_to_device(DevicePtr<T> dst, std::span<const std::remove_const_t<T>> src) {
  static_assert(std::is_trivially_copyable_v<std::remove_const_t<T>>, "only trivially copyable elements can be copied");
  return copy_to_device(dst.address, src.data(), src.size_bytes());
}
template <class T>
[[nodiscard]] Status copy_to_host(std::span<std::remove_const_t<T>> dst, DevicePtr<T> src) {
  static_assert(std::is_trivially_copyable_v<std::remove_const_t<T>>, "only trivially copyable elements can be copied");
  return copy_to_host(dst.data(), src.address, dst.size_bytes());
}

}  // namespace wrapir::cuda
