#pragma once
/// \file
/// The device side of `run::Executor`: what the executor asks of a device
/// that is not the host — memory, copies, zero fills and waiting for queued
/// work. Kernels come from the kernel provider (`run/executor_kernels.hpp`)
/// and externs from the extern registry, both chosen with the backend (the
/// CUDA one is `run/cuda/backend.hpp`); so the line handlers never ask which
/// device they run on, they call the backend of the buffer's device.
///
/// The executor handles CPU memory itself (a program for a device may still
/// hold CPU buffers: a `DeviceCopy` to the host, an `item()`); every buffer,
/// pool and launch on another device type is the backend's, and a program
/// with a device the executor has no backend for is refused when prepared.
///
/// Device addresses travel in `Storage::data` as `std::byte*` (the driver's
/// 64-bit address): never dereferenced by the executor, only offset and
/// packed into kernel arguments.
///
/// A backend may be shared by several executors and called from several
/// threads only if its implementation says so (the CUDA one is
/// thread-compatible: one stream, an internally locked allocator; the
/// stream a thread's work goes to is kept per thread).
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/run/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace wrapir::run {

/// Device work recorded once and replayed (CUDA Graph mode,
/// docs/runtime.md "CUDA Graph mode"): what `DeviceBackend::end_capture`
/// returns. Not thread-safe: the executor serialises its graph calls.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  /// Enqueues the recorded work once, in order with the work around it.
  /// Only a graph ended with `executable` true can be launched.
  [[nodiscard]] virtual Result<void> launch() = 0;
  /// Makes this executable graph run `recaptured`'s work from now on: the
  /// same program captured again with other addresses (the nodes and their
  /// order are the same; their arguments differ). `recaptured` is consumed.
  [[nodiscard]] virtual Result<void> update(DeviceGraph& recaptured) = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  /// The device type whose buffers this backend holds (`cuda`).
  [[nodiscard]] virtual ir::DeviceType device_type() const noexcept = 0;
  /// For diagnostics: `CUDA device 0 (NVIDIA H100)`.
  [[nodiscard]] virtual std::string describe() const = 0;
  /// `bytes` of uninitialised memory on `device`, owned by the storage
  /// (released when the last tensor on it goes). Zero bytes give a storage
  /// with a null address.
  [[nodiscard]] virtual Result<std::shared_ptr<Storage>> allocate(const ir::Device& device,
                                                                  std::int64_t bytes) const = 0;
  /// Sets `bytes` bytes at `data` (a device address) to zero, in order
  /// with the kernels launched before and after.
  [[nodiscard]] virtual Result<void> zero(std::byte* data, std::int64_t bytes) const = 0;
  /// Copies `bytes` bytes; each side is host memory or this device's, as
  /// its device says. A copy to the host has finished when this returns;
  /// others are ordered with the launches around them.
  [[nodiscard]] virtual Result<void> copy(std::byte* dst, const ir::Device& dst_device, const std::byte* src,
                                          const ir::Device& src_device, std::int64_t bytes) const = 0;
  /// Waits until all work queued so far has finished (before host timing,
  /// and before results are handed back).
  [[nodiscard]] virtual Result<void> synchronize() const = 0;

  // ---- streams (optional; a backend of one stream ignores them) -----------
  // Stream contexts (`EnterStreamContext{k}`) put work on side streams; the
  // executor derives when one stream must wait for another from the lines'
  // effects (docs/runtime.md, "Streams") and calls these three. Stream 0 is
  // the backend's own stream; side stream k (1..max_streams-1) is made on
  // first use. The defaults do nothing: the CPU runs everything in order.

  /// The largest stream index plus one a program may name.
  static constexpr std::uint32_t max_streams = 64;
  /// From now on the calling thread's work on this backend (launches,
  /// copies, fills, externs) goes to stream `k`.
  [[nodiscard]] virtual Result<void> use_stream(std::uint32_t k) const {
    (void)k;
    return {};
  }
  /// Marks what stream `k` has queued so far, for a later `wait_stream`.
  [[nodiscard]] virtual Result<void> record_stream(std::uint32_t k) const {
    (void)k;
    return {};
  }
  /// Work queued on `waiter` from now on starts after what `k` had queued
  /// when it was last recorded (or later work of `k`: never less).
  [[nodiscard]] virtual Result<void> wait_stream(std::uint32_t waiter, std::uint32_t k) const {
    (void)waiter;
    (void)k;
    return {};
  }

  // ---- graph mode (optional; the default backend refuses) -----------------
  /// Whether `begin_capture` can work here; the reason when not.
  [[nodiscard]] virtual Result<void> can_capture() const {
    return Diagnostic{describe() + " cannot capture device graphs (graph mode needs a backend that records its work, "
                                   "such as run::cuda::CudaBackend)"};
  }
  /// From now until `end_capture`, the work this thread enqueues (launches,
  /// fills, device-to-device copies) is recorded instead of run. Nothing
  /// that waits for the device, allocates from the driver or copies to the
  /// host may happen in between.
  [[nodiscard]] virtual Result<void> begin_capture() const { return can_capture(); }
  /// Ends the capture: the recorded work, made launchable when `executable`
  /// (else only good as `DeviceGraph::update`'s argument). A capture that
  /// failed is ended here too, and its partial graph dropped.
  [[nodiscard]] virtual Result<std::unique_ptr<DeviceGraph>> end_capture(bool executable) const {
    (void)executable;
    if (Result<void> r = can_capture(); !r) return r.error();
    return Diagnostic{"end_capture: no capture is in progress"};
  }
};

using DeviceBackendPtr = std::shared_ptr<const DeviceBackend>;

}  // namespace wrapir::run
