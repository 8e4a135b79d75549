#pragma once
/// \file
/// Streams and events: ordering work and timing it.
///
/// `Stream` and `Event` are move-only owners. Functions that only enqueue
/// work take a plain `CUstream`, so a stream from PyTorch
/// (`torch.cuda.current_stream().cuda_stream`), from the CUDA runtime or the
/// legacy default stream (`nullptr`) works as well as a `Stream`.
///
/// `elapsed_ms(start, stop)` is the GPU time between two recorded events —
/// what the multi-kernel timer (cuda/multi_kernel.hpp) measures with.

#include <wrapir/cuda/detail/unique_handle.hpp>
#include <wrapir/cuda/driver.hpp>

namespace wrapir::cuda {

namespace detail {
struct DestroyStream {
  void operator()(CUstream s) const noexcept { (void)loaded_driver().cuStreamDestroy(s); }
};
struct DestroyEvent {
  void operator()(CUevent e) const noexcept { (void)loaded_driver().cuEventDestroy(e); }
};
}  // namespace detail

/// A stream of the current context.
class Stream {
 public:
  Stream() = default;

  /// Non-blocking by default: it does not synchronise with the legacy
  /// default stream, as PyTorch's side streams do not.
  [[nodiscard]] static Result<Stream> create(unsigned flags = CU_STREAM_NON_BLOCKING) {
    auto d = driver();
    if (!d) return d.error();
    CUstream s{};
    if (const CUresult r = (*d)->cuStreamCreate(&s, flags); r != CUDA_SUCCESS) return driver_error("cuStreamCreate", r);
    Stream out;
    out.stream_ = detail::UniqueHandle<CUstream, detail::DestroyStream>(s);
    return out;
  }

  [[nodiscard]] CUstream get() const noexcept { return stream_.get(); }
  operator CUstream() const noexcept { return stream_.get(); }  // NOLINT: a Stream is used where a CUstream is

  [[nodiscard]] Status synchronize() const {
    return check(loaded_driver().cuStreamSynchronize(get()), "cuStreamSynchronize");
  }

 private:
  detail::UniqueHandle<CUstream, detail::DestroyStream> stream_{};
};

/// An event of the current context; timing-capable unless created with
/// CU_EVENT_DISABLE_TIMING (cheaper, for pure ordering).
class Event {
 public:
  Event() = default;

  [[nodiscard]] static Result<Event> create(unsigned flags = CU_EVENT_DEFAULT) {
    auto d = driver();
    if (!d) return d.error();
    CUevent e{};
    if (const CUresult r = (*d)->cuEventCreate(&e, flags); r != CUDA_SUCCESS) return driver_error("cuEventCreate", r);
    Event out;
    out.event_ = detail::UniqueHandle<CUevent, detail::DestroyEvent>(e);
    return out;
  }

  [[nodiscard]] CUevent get() const noexcept { return event_.get(); }

  [[nodiscard]] Status record(CUstream stream) const {
    return check(loaded_driver().cuEventRecord(get(), stream), "cuEventRecord");
  }
  [[nodiscard]] Status synchronize() const { return check(loaded_driver().cuEventSynchronize(get()), "cuEventSynchronize"); }

 private:
  detail::UniqueHandle<CUevent, detail::DestroyEvent> event_{};
};

/// Milliseconds of GPU time between two recorded events (waits for `stop`).
[[nodiscard]] inline Result<float> elapsed_ms(const Event& start, const Event& stop) {
  if (auto s = stop.synchronize(); !s) return s.error();
  float ms = 0;
  if (const CUresult r = loaded_driver().cuEventElapsedTime(&ms, start.get(), stop.get()); r != CUDA_SUCCESS)
    return driver_error("cuEventElapsedTime", r);
  return ms;
}

/// Makes later work on `stream` wait for `event` (recorded on any stream).
[[nodiscard]] inline Status wait(CUstream stream, const Event& event) {
  return check(loaded_driver().cuStreamWaitEvent(stream, event.get(), 0), "cuStreamWaitEvent");
}

}  // namespace wrapir::cuda
