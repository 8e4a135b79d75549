#pragma once
/// \file
/// The CUDA parts of multi-kernel dispatch (run/multi_kernel.hpp): a launcher
/// of candidate kernels, a timer built on CUDA events, and a restorer that
/// benchmarks on device copies of the buffers candidates mutate.
///
/// ```
/// // Combined arguments: the buffer, the amount, the count.
/// std::vector<cuda::KernelArg> args{data.as<int>(), cuda::KernelArg::value(std::int32_t{1}),
///                                   cuda::KernelArg::value(std::int32_t{n})};
/// auto launcher = cuda::MultiKernelLauncher::create({{slow, slow_config}, {fast, fast_config}}).value();
/// auto timer = cuda::EventTimer::create(stream).value();
/// auto restorer = cuda::DeviceRestorer::create(stream, {{.position = 0, .bytes = n * sizeof(int)}}).value();
/// auto dispatch = run::make_multi_kernel_dispatcher<cuda::KernelArg>(plan, std::move(launcher), std::move(timer),
///                                                                    std::move(restorer));
/// auto launched = dispatch(args);  // benchmarks on the first call, then launches the winner once
/// ```
///
/// * `KernelArg` is one kernel argument of up to 8 bytes — a device pointer
///   or a scalar — tagged with its size and whether it is a pointer, so that
///   mixed argument lists pass through `run::SlicedArgs` and the restorer
///   knows which arguments are buffers.
/// * `MultiKernelLauncher` launches candidate `i` (a `Function` and its
///   `LaunchConfig`) with its slice of the combined arguments: the argument
///   addresses go into an array on the stack, so a launch allocates nothing.
///   Where the driver reports parameter sizes (12.4+) every launch checks the
///   argument count and each argument's size against the kernel's, so a
///   4-byte value never passes where the kernel reads 8.
/// * `EventTimer` follows the timer contract: `warmup` untimed runs, then per
///   repetition `prepare()` (the restore copies), a flush of the stream so
///   that the copies are done before timing starts, and an event pair around
///   `run()` only. Its two events are made once and reused for every sample.
/// * `DeviceRestorer` clones the mutated buffers into scratch device memory
///   (stream-ordered device-to-device copies) and copies the originals into
///   them again on every `restore()`; the real buffers are not touched until
///   the winner's real launch.
///
/// The timer, the restorer and every candidate's `LaunchConfig` must use the
/// same stream: the events time what runs on the timer's stream, and only
/// stream order puts the restore copies before each timed run.
///
/// Errors: the multi-kernel contract wants failures of these parts as
/// exceptions (a launcher returns nothing; a timer returns samples), so they
/// throw `cuda::Error`, which carries the driver's diagnostic. While
/// benchmarking, the dispatcher turns an exception into "candidate failed"
/// (or, from `clone`, "copying the arguments failed") diagnostics; from the
/// real launch it propagates. `MultiKernelLauncher::launch` is the
/// non-throwing form that returns a `Status`.

#include <wrapir/cuda/driver.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/stream.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/run/multi_kernel.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace wrapir::cuda {

/// A CUDA failure where an interface needs an exception: the diagnostic,
/// whose message is also `what()`.
class Error : public std::runtime_error {
 public:
  explicit Error(Diagnostic diagnostic)
      : std::runtime_error(diagnostic.message), diagnostic_(std::move(diagnostic)) {}
  [[nodiscard]] const Diagnostic& diagnostic() const noexcept { return diagnostic_; }

 private:
  Diagnostic diagnostic_;
};

namespace detail {

/// Throws the error of `status`, with `context` in front of its message.
inline void throw_if_failed(const Status& status, std::string_view context = {}) {
  if (status) [[likely]]
    return;
  Diagnostic d = status.error();
  if (!context.empty()) d.message = std::string(context) + ": " + d.message;
  throw Error(std::move(d));
}

template <class T>
inline constexpr bool is_device_ptr = false;
template <class T>
inline constexpr bool is_device_ptr<DevicePtr<T>> = true;

}  // namespace detail

// ---------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------

/// One kernel argument: a device pointer or a trivially copyable value of at
/// most 8 bytes, stored by value with its size. The storage is always 8
/// aligned bytes, so a launch never reads past it whatever size the kernel
/// declares. A default-constructed argument is empty (size 0) and is
/// refused at launch.
class KernelArg {
 public:
  static constexpr std::size_t max_bytes = 8;

  KernelArg() noexcept = default;
  /// A typed device address is a pointer argument.
  template <class T>
  KernelArg(DevicePtr<T> p) noexcept : KernelArg(pointer(p.address)) {}  // NOLINT: implicit by design

  /// A device address (a buffer the restorer may clone).
  [[nodiscard]] static KernelArg pointer(CUdeviceptr address) noexcept {
    KernelArg a;
    std::memcpy(a.bytes_.data(), &address, sizeof address);
    a.size_ = sizeof address;
    a.pointer_ = true;
    return a;
  }

  /// A scalar passed by value, exactly as the kernel declares it: an
  /// `std::int32_t` for an `int`, a `float` for a `float`.
  template <class T>
  [[nodiscard]] static KernelArg value(const T& v) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "wrapir::cuda::KernelArg: values are copied byte for byte");
    static_assert(sizeof(T) <= max_bytes && alignof(T) <= max_bytes,
                  "wrapir::cuda::KernelArg: at most 8 bytes (larger parameters are not supported)");
    static_assert(!std::is_pointer_v<T>,
                  "wrapir::cuda::KernelArg: a host pointer is not a kernel argument; pass a device address with "
                  "KernelArg::pointer or a DevicePtr");
    static_assert(!detail::is_device_ptr<T>, "wrapir::cuda::KernelArg: a DevicePtr converts to a pointer argument");
    KernelArg a;
    std::memcpy(a.bytes_.data(), &v, sizeof(T));
    a.size_ = static_cast<std::uint8_t>(sizeof(T));
    return a;
  }

  /// The bytes the kernel receives.
  [[nodiscard]] const void* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] bool is_pointer() const noexcept { return pointer_; }
  /// The device address of a pointer argument; 0 for a value.
  [[nodiscard]] CUdeviceptr address() const noexcept {
    CUdeviceptr a = 0;
    if (pointer_) std::memcpy(&a, bytes_.data(), sizeof a);
    return a;
  }

  friend bool operator==(const KernelArg&, const KernelArg&) = default;

 private:
  alignas(max_bytes) std::array<std::byte, max_bytes> bytes_{};
  std::uint8_t size_ = 0;
  bool pointer_ = false;
};

// ---------------------------------------------------------------------------
// Launcher
// ---------------------------------------------------------------------------

/// One candidate: the kernel and how it is launched.
struct CandidateKernel {
  Function function{};
  LaunchConfig config{};
};

/// Launches candidate `i` with its `SlicedArgs<KernelArg>`. Copyable; valid
/// while the candidates' modules are loaded. Launching is thread-safe.
class MultiKernelLauncher {
 public:
  /// The most arguments one launch takes (their addresses are packed on the
  /// stack).
  static constexpr std::size_t max_arguments = 256;

  /// Checks the candidates: at least one, each a loaded function; where the
  /// driver reports parameters (12.4+), at most `max_arguments` of them and
  /// none larger than `KernelArg::max_bytes`.
  [[nodiscard]] static Result<MultiKernelLauncher> create(std::vector<CandidateKernel> candidates) {
    if (candidates.empty()) return Diagnostic{"multi-kernel launcher: no candidates"};
    auto d = driver();
    if (!d) return d.error();
    MultiKernelLauncher out;
    out.entries_.reserve(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      Entry e{std::move(candidates[i]), {}, false};
      const std::string where = "multi-kernel launcher: candidate " + std::to_string(i);
      if (e.kernel.function.get() == nullptr) return Diagnostic{where + " has no function (not looked up in a module)"};
      if ((*d)->cuFuncGetParamInfo) {
        auto sizes = e.kernel.function.parameter_sizes();
        if (!sizes) return Diagnostic{where + ": " + sizes.error().message};
        if (sizes->size() > max_arguments) {
          return Diagnostic{where + " (kernel '" + e.kernel.function.name() + "') has " +
                            std::to_string(sizes->size()) + " parameters; at most " + std::to_string(max_arguments) +
                            " are supported"};
        }
        for (std::size_t k = 0; k < sizes->size(); ++k) {
          if ((*sizes)[k] > KernelArg::max_bytes) {
            return Diagnostic{where + " (kernel '" + e.kernel.function.name() + "'): parameter " + std::to_string(k) +
                              " is " + std::to_string((*sizes)[k]) + " bytes; a KernelArg holds at most " +
                              std::to_string(KernelArg::max_bytes)};
          }
        }
        e.parameter_sizes = std::move(sizes).value();
        e.sizes_known = true;
      }
      out.entries_.push_back(std::move(e));
    }
    return out;
  }

  /// Launches candidate `candidate` with `args`; a diagnostic for a bad
  /// index, argument count or argument size, or a failed launch.
  [[nodiscard]] Status launch(std::size_t candidate, run::SlicedArgs<KernelArg> args) const {
    if (candidate >= entries_.size()) [[unlikely]] {
      return Diagnostic{"multi-kernel launcher: candidate " + std::to_string(candidate) + " does not exist (" +
                        std::to_string(entries_.size()) + " candidates)"};
    }
    const Entry& e = entries_[candidate];
    const std::size_t n = args.size();
    if (n > max_arguments || (e.sizes_known && n != e.parameter_sizes.size())) [[unlikely]] {
      return Diagnostic{describe(candidate) + ": given " + std::to_string(n) + " arguments, " +
                        (e.sizes_known ? "it takes " + std::to_string(e.parameter_sizes.size())
                                       : "at most " + std::to_string(max_arguments) + " are supported")};
    }
    std::array<void*, max_arguments> params;  // NOLINT: filled up to n below
    std::size_t k = 0;
    std::size_t bad = n;  // the first argument whose size is wrong, n if none
    args.for_each([&](const KernelArg& a) {
      params[k] = const_cast<void*>(a.data());  // the driver only reads through it
      const std::size_t expected = e.sizes_known ? e.parameter_sizes[k] : a.size();
      if ((a.size() != expected || a.empty()) && bad == n) bad = k;
      ++k;
    });
    if (bad != n) [[unlikely]]
      return argument_size_error(candidate, args[bad], bad);
    return detail::launch_packed(e.kernel.function, e.kernel.config, params.data());
  }

  /// The launcher concept's form: as `launch`, throwing `cuda::Error`.
  void operator()(std::size_t candidate, run::SlicedArgs<KernelArg> args) const {
    if (Status s = launch(candidate, args); !s) [[unlikely]]
      throw Error(s.error());
  }

  [[nodiscard]] std::size_t candidate_count() const noexcept { return entries_.size(); }
  [[nodiscard]] const CandidateKernel& candidate(std::size_t i) const { return entries_.at(i).kernel; }

 private:
  struct Entry {
    CandidateKernel kernel;
    std::vector<std::size_t> parameter_sizes;
    bool sizes_known;
  };

  MultiKernelLauncher() = default;

  [[nodiscard]] std::string describe(std::size_t candidate) const {
    return "kernel '" + entries_[candidate].kernel.function.name() + "' (candidate " + std::to_string(candidate) + ")";
  }

  [[nodiscard]] Diagnostic argument_size_error(std::size_t candidate, const KernelArg& a, std::size_t k) const {
    const Entry& e = entries_[candidate];
    if (a.empty()) return Diagnostic{describe(candidate) + ": argument " + std::to_string(k) + " is empty"};
    return Diagnostic{describe(candidate) + ": argument " + std::to_string(k) + " is " + std::to_string(a.size()) +
                      " bytes, but the kernel's parameter " + std::to_string(k) + " is " +
                      std::to_string(e.parameter_sizes[k]) + " bytes"};
  }

  std::vector<Entry> entries_;
};

// ---------------------------------------------------------------------------
// Timer
// ---------------------------------------------------------------------------

/// Times runs with an event pair on one stream (see the file comment).
/// Move-only (it owns its events).
///
/// Each sample is the GPU time from the start event to the stop event.
/// Because the stream is flushed after `prepare()`, the start event runs on
/// an idle stream and the sample also includes the host's launch latency
/// (a few microseconds) — the same for every candidate, so it does not
/// change which is fastest, and it keeps the restore copies out of the time.
class EventTimer {
 public:
  [[nodiscard]] static Result<EventTimer> create(CUstream stream) {
    auto start = Event::create();
    if (!start) return start.error();
    auto stop = Event::create();
    if (!stop) return stop.error();
    return EventTimer(stream, std::move(start).value(), std::move(stop).value());
  }

  /// `plan.warmup` times `prepare(); run();`, then `plan.repetitions`
  /// samples in milliseconds. Throws `cuda::Error` when the driver fails;
  /// exceptions of `prepare` and `run` propagate.
  template <class Prepare, class Run>
  std::vector<double> operator()(const run::BenchmarkPlan& plan, Prepare&& prepare, Run&& run) const {
    for (std::size_t i = 0; i < plan.warmup; ++i) {
      prepare();
      run();
    }
    std::vector<double> samples;
    samples.reserve(plan.repetitions);
    const Driver& d = loaded_driver();
    for (std::size_t i = 0; i < plan.repetitions; ++i) {
      prepare();
      if (const CUresult r = d.cuStreamSynchronize(stream_); r != CUDA_SUCCESS) [[unlikely]]
        throw Error(driver_error(where(plan, i) + ": cuStreamSynchronize (before timing)", r));
      detail::throw_if_failed(start_.record(stream_), where(plan, i));
      run();
      detail::throw_if_failed(stop_.record(stream_), where(plan, i));
      Result<float> ms = elapsed_ms(start_, stop_);
      if (!ms) [[unlikely]]
        throw Error(Diagnostic{where(plan, i) + ": " + ms.error().message});
      samples.push_back(static_cast<double>(*ms));
    }
    return samples;
  }

  [[nodiscard]] CUstream stream() const noexcept { return stream_; }

 private:
  EventTimer(CUstream stream, Event start, Event stop)
      : stream_(stream), start_(std::move(start)), stop_(std::move(stop)) {}

  static std::string where(const run::BenchmarkPlan& plan, std::size_t repetition) {
    return "timing candidate " + std::to_string(plan.candidate) + ", repetition " + std::to_string(repetition);
  }

  CUstream stream_ = nullptr;
  Event start_;
  Event stop_;
};

// ---------------------------------------------------------------------------
// Restorer
// ---------------------------------------------------------------------------

/// An argument some candidate writes: its position in the combined list and
/// how many bytes of its buffer to save and restore.
struct MutatedArgument {
  std::size_t position = 0;
  std::size_t bytes = 0;
  friend bool operator==(const MutatedArgument&, const MutatedArgument&) = default;
};

/// Benchmarks on scratch copies of the mutated buffers (see the file
/// comment). Arguments that hold the same device address share one scratch
/// copy — including pointer arguments not marked as mutated, so a candidate
/// that reads a buffer it also writes through another parameter sees its own
/// writes, as in the real launch. Buffers that only partly overlap (views at
/// other offsets) are not detected. A mutated argument of 0 bytes is left
/// as it is.
class DeviceRestorer {
 public:
  /// `mutated` may be in any order and repeat a position with the same byte
  /// count; the same position with two byte counts is an error.
  [[nodiscard]] static Result<DeviceRestorer> create(CUstream stream, std::vector<MutatedArgument> mutated) {
    std::sort(mutated.begin(), mutated.end(), [](const MutatedArgument& a, const MutatedArgument& b) {
      return a.position != b.position ? a.position < b.position : a.bytes < b.bytes;
    });
    for (std::size_t i = 1; i < mutated.size(); ++i) {
      if (mutated[i].position == mutated[i - 1].position && mutated[i].bytes != mutated[i - 1].bytes) {
        return Diagnostic{"multi-kernel restorer: argument " + std::to_string(mutated[i].position) +
                          " is listed as mutated with " + std::to_string(mutated[i - 1].bytes) + " and with " +
                          std::to_string(mutated[i].bytes) + " bytes"};
      }
    }
    mutated.erase(std::unique(mutated.begin(), mutated.end()), mutated.end());
    return DeviceRestorer(stream, std::move(mutated));
  }

  /// Scratch arguments of one benchmark; owns the scratch buffers. Its
  /// destructor waits for the stream before freeing them, so no queued run
  /// still writes into freed memory.
  class Scratch {
   public:
    Scratch(Scratch&&) noexcept = default;  // a moved-from Scratch owns no buffers
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    Scratch& operator=(Scratch&&) = delete;
    ~Scratch() {
      if (!buffers_.empty()) (void)loaded_driver().cuStreamSynchronize(stream_);
    }

    [[nodiscard]] std::span<const KernelArg> args() const noexcept { return args_; }

    /// Enqueues copies of the originals into the scratch buffers. Throws
    /// `cuda::Error` when the driver refuses.
    void restore() const {
      for (const Copy& c : copies_) {
        detail::throw_if_failed(copy_async(c.scratch, c.original, c.bytes, stream_),
                                "restoring argument " + std::to_string(c.position));
      }
    }

   private:
    friend class DeviceRestorer;
    struct Copy {
      std::size_t position;  // the first argument with this address, for messages
      CUdeviceptr original;
      CUdeviceptr scratch;
      std::size_t bytes;
    };
    Scratch(CUstream stream, std::span<const KernelArg> args) : stream_(stream), args_(args.begin(), args.end()) {}

    CUstream stream_;
    std::vector<KernelArg> args_;
    std::vector<DeviceBuffer> buffers_{};
    std::vector<Copy> copies_{};
  };

  /// Scratch copies of the mutated buffers of `args`, filled from the
  /// originals (enqueued on the stream). Throws `std::out_of_range` for a
  /// position past `args`, and `cuda::Error` for a mutated argument that is
  /// not a non-null device pointer or when the driver fails; what it
  /// allocated is freed.
  [[nodiscard]] Scratch clone(std::span<const KernelArg> args) const {
    Scratch scratch(stream_, args);
    for (const MutatedArgument& m : mutated_) {
      const std::string what = "mutated argument " + std::to_string(m.position);
      if (m.position >= args.size()) {
        throw std::out_of_range(what + " is out of range for " + std::to_string(args.size()) + " arguments");
      }
      const KernelArg& a = args[m.position];
      if (!a.is_pointer()) {
        throw Error(Diagnostic{what + " is not a device pointer (it is a " + std::to_string(a.size()) +
                               "-byte value); only buffers can be saved and restored"});
      }
      if (m.bytes == 0) continue;
      if (a.address() == 0) throw Error(Diagnostic{what + " is a null device pointer, but " +
                                                   std::to_string(m.bytes) + " bytes of it are to be saved"});
      auto same = std::find_if(scratch.copies_.begin(), scratch.copies_.end(),
                               [&](const Scratch::Copy& c) { return c.original == a.address(); });
      if (same == scratch.copies_.end()) {
        scratch.copies_.push_back({m.position, a.address(), 0, m.bytes});
      } else {
        same->bytes = std::max(same->bytes, m.bytes);
      }
    }
    scratch.buffers_.reserve(scratch.copies_.size());
    for (Scratch::Copy& c : scratch.copies_) {
      Result<DeviceBuffer> buffer = DeviceBuffer::allocate(c.bytes);
      if (!buffer) throw Error(Diagnostic{"scratch copy of argument " + std::to_string(c.position) + ": " +
                                          buffer.error().message});
      c.scratch = buffer->address();
      scratch.buffers_.push_back(std::move(buffer).value());
    }
    for (KernelArg& a : scratch.args_) {
      if (!a.is_pointer()) continue;
      for (const Scratch::Copy& c : scratch.copies_) {
        if (a.address() == c.original) {
          a = KernelArg::pointer(c.scratch);
          break;
        }
      }
    }
    scratch.restore();
    return scratch;
  }

  [[nodiscard]] CUstream stream() const noexcept { return stream_; }
  /// The mutated arguments, sorted by position, without repeats.
  [[nodiscard]] const std::vector<MutatedArgument>& mutated() const noexcept { return mutated_; }

 private:
  DeviceRestorer(CUstream stream, std::vector<MutatedArgument> mutated)
      : stream_(stream), mutated_(std::move(mutated)) {}

  CUstream stream_ = nullptr;
  std::vector<MutatedArgument> mutated_;
};

static_assert(run::CandidateLauncher<MultiKernelLauncher, KernelArg>);
static_assert(run::BenchmarkTimer<EventTimer>);
static_assert(run::ArgumentRestorer<DeviceRestorer, KernelArg>);

}  // namespace wrapir::cuda
