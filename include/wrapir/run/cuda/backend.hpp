#pragma once
/// \file
/// The CUDA backend of `run::Executor` (docs/runtime.md, "CUDA backend"):
/// device memory, copies and fills on the streams of one device, through
/// wrapir/cuda (the driver loaded at run time, so a binary with this
/// backend still starts without a GPU; `CudaBackend::create` then answers
/// with the driver's reason).
///
/// ```
/// auto backend = wrapir::run::cuda::CudaBackend::create(0).value();
/// auto kernels = wrapir::run::cuda::TritonKernelProvider::load("export_dir", backend).value();
/// wrapir::run::ExecutorOptions options{.device = backend, .kernels = kernels,
///                                      .externs = wrapir::run::cuda::cublas_externs(backend).value()};
/// ```
///
/// Streams (docs/runtime.md, "Streams"): the backend's stream (stream 0) is
/// a new non-blocking stream it owns, or the caller's
/// (`Options::borrowed_stream`, e.g. torch's current stream): then it is
/// never destroyed, the caller keeps it alive while the backend, any
/// executor, graph or tensor of it lives, and it must belong to device
/// `ordinal`'s primary context. Side streams 1..63 (stream contexts) are
/// the backend's own, non-blocking, made on first use. Which stream a
/// thread's work goes to is kept per thread (`use_stream`); launchers read
/// it per launch (`StreamSource`). Only one backend's side stream is
/// current per thread at a time.
///
/// Memory: a caching allocator. Buffers are handed back to a per-size free
/// list when their last tensor goes and reused by later allocations of that
/// size. Work without stream contexts runs on stream 0, so a block reused by
/// a later kernel is ordered after every earlier use (the rule PyTorch's
/// caching allocator relies on for one stream); the executor joins a side
/// stream that freed or allocated memory before the next allocation or free
/// on another stream, which keeps the rule. Sizes are rounded up to 512
/// bytes; cached bytes are capped (`Options::max_cached_bytes`) and freed
/// when an allocation fails, before it is retried once.
///
/// Thread safety: the allocator locks; launches, copies and fills go to
/// stream 0 (or the thread's side stream) in the order threads make them,
/// so sharing one backend between threads that run executors at once is
/// safe only for programs that do not depend on each other's results.
///
/// Graph mode (`ExecutorOptions::graph`, docs/runtime.md): `begin_capture`
/// puts stream 0 in capture mode (`cuStreamBeginCapture`; side streams
/// forked from it join the capture, and the executor joins them back before
/// `end_capture`; thread-local: this thread may make no call a replay would
/// not repeat, such as `cuMemAlloc`, while other threads may), `end_capture`
/// ends it and
/// instantiates the graph (`cuda::GraphExec`), and `DeviceGraph::update`
/// is `cuGraphExecUpdate` (a new instantiation where the driver lacks it or
/// refuses the update). The executor never allocates from this backend
/// while it captures: graph mode plans the graph's memory beforehand.
///
/// The driver keeps the current context per thread: `create` makes the
/// backend's current on the creating thread; any other thread that runs an
/// executor on it calls `make_current()` first.
#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/driver.hpp>
#include <wrapir/cuda/graph.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/stream.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/run/executor_backend.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wrapir::run::cuda {

namespace drv = wrapir::cuda;

struct CudaBackendOptions {
  /// Bytes kept in the free lists at most; blocks freed beyond it go back
  /// to the driver.
  std::int64_t max_cached_bytes = std::int64_t{4} << 30;
  /// The caller's stream to run on instead of a new one (not owned, never
  /// destroyed; see the file comment for the contract). Graph mode needs a
  /// stream that can be captured: not the legacy default stream (null).
  std::optional<CUstream> borrowed_stream;
};

namespace backend_detail {
/// The stream this thread's work on one backend goes to (`use_stream`):
/// `owner` is the backend's state, null when the thread uses stream 0.
struct CurrentStream {
  const void* owner = nullptr;
  CUstream stream = nullptr;
};
inline thread_local CurrentStream current_stream;
}  // namespace backend_detail

/// What a launcher keeps instead of a stream: the backend's stream 0 and
/// the key of its per-thread current stream, read per launch (a load of a
/// thread-local and a compare).
struct StreamSource {
  const void* owner = nullptr;
  CUstream base = nullptr;
  [[nodiscard]] CUstream current() const noexcept {
    const backend_detail::CurrentStream& c = backend_detail::current_stream;
    // No null test needed: an override's owner is a backend's state, and
    // with none `c` is {null, null}, which a source without a backend
    // (owner and base null) answers alike.
    return c.owner == owner ? c.stream : base;
  }
};

class CudaBackend final : public DeviceBackend {
 public:
  using Options = CudaBackendOptions;

  /// Device `ordinal`'s primary context (made current on the calling
  /// thread) and a new non-blocking stream, or `options.borrowed_stream`;
  /// the driver's reason when there is no driver or device.
  [[nodiscard]] static Result<std::shared_ptr<CudaBackend>> create(int ordinal = 0, Options options = {}) {
    auto ctx = drv::use_device(ordinal);
    if (!ctx) return ctx.error();
    drv::Stream owned;
    if (!options.borrowed_stream) {
      auto stream = drv::Stream::create();
      if (!stream) return stream.error();
      owned = *std::move(stream);
    }
    auto info = drv::device_info(ordinal);
    const CUstream base = options.borrowed_stream ? *options.borrowed_stream : owned.get();
    auto state = std::make_shared<State>(*std::move(ctx), std::move(owned), base, options);
    state->name = info ? info->name : std::string("?");
    return std::shared_ptr<CudaBackend>(new CudaBackend(std::move(state), ordinal));
  }

  [[nodiscard]] ir::DeviceType device_type() const noexcept override { return ir::DeviceType::cuda; }
  [[nodiscard]] std::string describe() const override {
    return "CUDA device " + std::to_string(ordinal_) + " (" + state_->name + ")";
  }
  /// Stream 0: the backend's own or the borrowed one. Work goes there
  /// unless the calling thread uses a side stream (`current_stream`).
  [[nodiscard]] CUstream stream() const noexcept { return state_->stream; }
  /// Where the calling thread's next launch, copy or fill goes.
  [[nodiscard]] CUstream current_stream() const noexcept { return stream_source().current(); }
  /// What a launcher keeps to find `current_stream` per launch.
  [[nodiscard]] StreamSource stream_source() const noexcept { return StreamSource{state_.get(), state_->stream}; }
  /// Whether stream 0 is the caller's (`Options::borrowed_stream`).
  [[nodiscard]] bool borrows_stream() const noexcept { return !state_->owned_stream; }
  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }
  /// Makes the backend's context current on the calling thread (the driver
  /// keeps the current context per thread).
  [[nodiscard]] drv::Status make_current() const { return state_->context.make_current(); }

  [[nodiscard]] Result<std::shared_ptr<Storage>> allocate(const ir::Device& device,
                                                          std::int64_t bytes) const override {
    if (device.type != ir::DeviceType::cuda || device.index.value_or(ordinal_) != ordinal_)
      return Diagnostic{"the CUDA backend holds device " + std::to_string(ordinal_) + ", not " + ir::to_string(device)};
    if (bytes < 0) return Diagnostic{"cannot allocate " + std::to_string(bytes) + " bytes"};
    if (bytes == 0) {
      auto storage = std::make_shared<Storage>();
      storage->device = ir::Device{ir::DeviceType::cuda, ordinal_};
      return storage;
    }
    const std::size_t rounded = round_up(static_cast<std::size_t>(bytes));
    auto address = state_->take(rounded);
    if (!address) return address.error();
    // One heap allocation per storage (this runs for every buffer of every
    // call): the storage and what gives its block back live together.
    auto block = std::make_shared<Block>(state_, *address, rounded);
    block->storage.device = ir::Device{ir::DeviceType::cuda, ordinal_};
    block->storage.nbytes = bytes;
    block->storage.data = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(*address));
    // The aliasing pointer takes the block's reference over (moved, not
    // copied: two reference-count updates fewer per buffer).
    Storage* storage = &block->storage;
    return std::shared_ptr<Storage>(std::move(block), storage);
  }

  [[nodiscard]] Result<void> zero(std::byte* data, std::int64_t bytes) const override {
    if (bytes <= 0) return {};
    return drv::fill_bytes_async(address(data), 0, static_cast<std::size_t>(bytes), current_stream());
  }

  [[nodiscard]] Result<void> copy(std::byte* dst, const ir::Device& dst_device, const std::byte* src,
                                  const ir::Device& src_device, std::int64_t bytes) const override {
    if (bytes <= 0) return {};
    const auto n = static_cast<std::size_t>(bytes);
    const bool to_host = dst_device.type == ir::DeviceType::cpu, from_host = src_device.type == ir::DeviceType::cpu;
    if (to_host && from_host) {
      std::memmove(dst, src, n);
      return {};
    }
    const CUstream on = current_stream();
    if (from_host) return drv::copy_to_device_async(address(dst), src, n, on);
    if (to_host) {
      if (auto s = drv::copy_to_host_async(dst, address(src), n, on); !s) return s;
      return drv::check(drv::loaded_driver().cuStreamSynchronize(on), "cuStreamSynchronize");
    }
    return drv::copy_async(address(dst), address(src), n, on);
  }

  /// Waits for stream 0 and every side stream made so far.
  [[nodiscard]] Result<void> synchronize() const override { return state_->synchronize_all(); }

  // ---- streams (docs/runtime.md, "Streams") --------------------------------
  [[nodiscard]] Result<void> use_stream(std::uint32_t k) const override {
    backend_detail::CurrentStream& c = backend_detail::current_stream;
    if (k == 0) {
      if (c.owner == state_.get()) c = {};
      return {};
    }
    auto lane = state_->lane(k);
    if (!lane) return lane.error();
    c = {state_.get(), (*lane)->stream};
    return {};
  }
  [[nodiscard]] Result<void> record_stream(std::uint32_t k) const override {
    auto lane = state_->lane(k);
    if (!lane) return lane.error();
    return drv::check(drv::loaded_driver().cuEventRecord((*lane)->event.get(), (*lane)->stream), "cuEventRecord");
  }
  [[nodiscard]] Result<void> wait_stream(std::uint32_t waiter, std::uint32_t k) const override {
    auto w = state_->lane(waiter);
    if (!w) return w.error();
    auto from = state_->lane(k);
    if (!from) return from.error();
    return drv::check(drv::loaded_driver().cuStreamWaitEvent((*w)->stream, (*from)->event.get(), 0), "cuStreamWaitEvent");
  }

  [[nodiscard]] Result<void> can_capture() const override { return {}; }
  [[nodiscard]] Result<void> begin_capture() const override {
    auto d = drv::driver();
    if (!d) return d.error();
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (const CUresult r = (*d)->cuStreamIsCapturing(stream(), &status); r != CUDA_SUCCESS)
      return drv::driver_error("cuStreamIsCapturing", r);
    if (status != CU_STREAM_CAPTURE_STATUS_NONE)
      return Diagnostic{"the backend's stream is already being captured (captures do not nest)"};
    return drv::check((*d)->cuStreamBeginCapture(stream(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  }
  [[nodiscard]] Result<std::unique_ptr<DeviceGraph>> end_capture(bool executable) const override {
    CUgraph captured = nullptr;
    const CUresult r = drv::loaded_driver().cuStreamEndCapture(stream(), &captured);
    drv::Graph graph(captured);
    if (r != CUDA_SUCCESS) return drv::driver_error("cuStreamEndCapture", r);
    if (!graph) return Diagnostic{"cuStreamEndCapture returned no graph"};
    auto out = std::make_unique<Graph>(state_);
    if (!executable) {
      out->captured = std::move(graph);
      return std::unique_ptr<DeviceGraph>(std::move(out));
    }
    auto exec = drv::GraphExec::instantiate(std::move(graph));
    if (!exec) return exec.error();
    out->exec.emplace(*std::move(exec));
    return std::unique_ptr<DeviceGraph>(std::move(out));
  }

  /// Allocator counters (tests, benchmarks).
  struct Stats {
    std::int64_t driver_allocations = 0, reused = 0, cached_bytes = 0;
  };
  [[nodiscard]] Stats stats() const {
    std::lock_guard lock(state_->mutex);
    return state_->stats;
  }

  /// Frees every cached block (after the stream's work is done). Blocks
  /// an executor's recycled call state keeps for its next call
  /// (docs/runtime.md, "The launch path") are not cached here: they come
  /// back when that executor goes.
  [[nodiscard]] Result<void> release_cached() const {
    if (auto s = synchronize(); !s) return s;
    state_->release_all();
    return {};
  }

 private:
  static constexpr std::size_t granularity = 512;
  static std::size_t round_up(std::size_t bytes) noexcept { return (bytes + granularity - 1) / granularity * granularity; }
  static CUdeviceptr address(const void* p) noexcept {
    return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
  }

  /// A stream and the event that marks its work (`record_stream`); lane 0
  /// holds stream 0 without owning it.
  struct Lane {
    CUstream stream = nullptr;
    drv::Stream owned;  // side streams
    drv::Event event;   // without timing: for ordering only
  };

  /// Context first: destroyed last, after the streams and the blocks.
  struct State {
    drv::Context context;
    drv::Stream owned_stream;  // empty when stream 0 is borrowed
    CUstream stream;           // stream 0
    Options options;
    // Made on first use under the lock, never removed while the state
    // lives: once published in `lane_of`, a lane is read without the lock.
    std::mutex lanes_mutex;
    std::array<std::unique_ptr<Lane>, max_streams> lanes{};
    std::array<std::atomic<Lane*>, max_streams> lane_of{};
    std::string name;
    std::mutex mutex;
    std::unordered_map<std::size_t, std::vector<CUdeviceptr>> free;
    // The list of the size last taken or given back (a program's buffers
    // are often of one size): no hash lookup then. Elements of an
    // unordered_map keep their address until erased (release_all).
    std::size_t last_bytes = 0;
    std::vector<CUdeviceptr>* last_list = nullptr;
    Stats stats;

    /// The free list of `bytes` (created when `create`), under the lock.
    std::vector<CUdeviceptr>* list_of(std::size_t bytes, bool create) {
      if (last_list != nullptr && last_bytes == bytes) [[likely]]
        return last_list;
      std::vector<CUdeviceptr>* list = nullptr;
      if (create) {
        list = &free[bytes];
      } else {
        const auto it = free.find(bytes);
        if (it == free.end()) return nullptr;
        list = &it->second;
      }
      last_bytes = bytes;
      last_list = list;
      return list;
    }

    State(drv::Context c, drv::Stream owned, CUstream base, Options o)
        : context(std::move(c)), owned_stream(std::move(owned)), stream(base), options(o) {}
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
      (void)synchronize_all();
      release_all();
      // A side stream current on this thread must not outlive its state
      // (another state could later be allocated at the same address).
      if (backend_detail::current_stream.owner == this) backend_detail::current_stream = {};
    }

    /// Stream `k`'s lane, made on first use.
    Result<Lane*> lane(std::uint32_t k) {
      if (k >= max_streams)
        return Diagnostic{"stream " + std::to_string(k) + " is past the backend's " + std::to_string(max_streams) +
                          " streams"};
      if (Lane* made = lane_of[k].load(std::memory_order_acquire)) [[likely]]
        return made;
      std::lock_guard lock(lanes_mutex);
      if (lanes[k]) return lanes[k].get();
      auto made = std::make_unique<Lane>();
      if (k == 0) {
        made->stream = stream;
      } else {
        auto s = drv::Stream::create();
        if (!s) return s.error();
        made->owned = *std::move(s);
        made->stream = made->owned.get();
      }
      auto e = drv::Event::create(CU_EVENT_DISABLE_TIMING);
      if (!e) return e.error();
      made->event = *std::move(e);
      lanes[k] = std::move(made);
      lane_of[k].store(lanes[k].get(), std::memory_order_release);
      return lanes[k].get();
    }

    Result<void> synchronize_all() {
      const drv::Driver& d = drv::loaded_driver();
      if (auto s = drv::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize"); !s) return s;
      std::lock_guard lock(lanes_mutex);
      for (std::size_t k = 1; k < lanes.size(); ++k)
        if (lanes[k])
          if (auto s = drv::check(d.cuStreamSynchronize(lanes[k]->stream), "cuStreamSynchronize"); !s) return s;
      return {};
    }
    Result<CUdeviceptr> take(std::size_t bytes) {
      {
        std::lock_guard lock(mutex);
        if (std::vector<CUdeviceptr>* list = list_of(bytes, false); list != nullptr && !list->empty()) {
          const CUdeviceptr a = list->back();
          list->pop_back();
          stats.cached_bytes -= static_cast<std::int64_t>(bytes);
          ++stats.reused;
          return a;
        }
      }
      auto d = drv::driver();
      if (!d) return d.error();
      CUdeviceptr a = 0;
      CUresult r = (*d)->cuMemAlloc(&a, bytes);
      if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        // Cached blocks may be what fills the device: free them and retry.
        (void)synchronize_all();
        release_all();
        r = (*d)->cuMemAlloc(&a, bytes);
      }
      if (r != CUDA_SUCCESS) return drv::driver_error("cuMemAlloc(" + std::to_string(bytes) + " bytes)", r);
      std::lock_guard lock(mutex);
      ++stats.driver_allocations;
      return a;
    }

    void give_back(CUdeviceptr a, std::size_t bytes) noexcept {
      {
        std::lock_guard lock(mutex);
        if (stats.cached_bytes + static_cast<std::int64_t>(bytes) <= options.max_cached_bytes) {
          try {
            list_of(bytes, true)->push_back(a);
            stats.cached_bytes += static_cast<std::int64_t>(bytes);
            return;
          } catch (...) {  // no memory for the list: free the block instead
          }
        }
      }
      // cuMemFree waits for the work that may still use the block.
      (void)drv::loaded_driver().cuMemFree(a);
    }

    void release_all() noexcept {
      std::lock_guard lock(mutex);
      for (auto& [bytes, blocks] : free)
        for (CUdeviceptr a : blocks) (void)drv::loaded_driver().cuMemFree(a);
      free.clear();
      last_list = nullptr;
      stats.cached_bytes = 0;
    }
  };

  /// A storage whose block returns to the free list when the last tensor
  /// on it goes; the state outlives every block it handed out.
  struct Block {
    Storage storage;
    std::shared_ptr<State> state;
    CUdeviceptr address;
    std::size_t rounded;
    Block(std::shared_ptr<State> s, CUdeviceptr a, std::size_t r) noexcept : state(std::move(s)), address(a), rounded(r) {}
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    ~Block() { state->give_back(address, rounded); }
  };

  /// A captured graph; holds the backend's state so that the context
  /// outlives it (members are destroyed last to first).
  struct Graph final : DeviceGraph {
    std::shared_ptr<const State> state;
    std::optional<drv::Graph> captured;     // not executable: update's argument
    std::optional<drv::GraphExec> exec;     // executable

    explicit Graph(std::shared_ptr<const State> s) : state(std::move(s)) {}
    Result<void> launch() override {
      if (!exec) return Diagnostic{"the graph was captured to update another, it cannot be launched"};
      return exec->launch(state->stream);
    }
    Result<void> update(DeviceGraph& recaptured) override {
      auto* other = dynamic_cast<Graph*>(&recaptured);
      if (other == nullptr || !exec) return Diagnostic{"only an executable CUDA graph is updated, from a CUDA capture"};
      drv::Graph from = other->captured ? std::move(*other->captured) : drv::Graph{};
      if (!from) return Diagnostic{"the recaptured graph is empty"};
      const drv::Driver& d = drv::loaded_driver();
      if (d.cuGraphExecUpdate != nullptr) {
        CUgraphExecUpdateResultInfo info{};
        if (d.cuGraphExecUpdate(exec->get(), from.get(), &info) == CUDA_SUCCESS) return {};
      }
      // No in-place update (an old driver, or one that refuses it): a new
      // executable graph, at the cost of an instantiation.
      auto fresh = drv::GraphExec::instantiate(std::move(from));
      if (!fresh) return fresh.error();
      exec.emplace(*std::move(fresh));
      return {};
    }
  };

  CudaBackend(std::shared_ptr<State> state, int ordinal) : state_(std::move(state)), ordinal_(ordinal) {}

  std::shared_ptr<State> state_;
  int ordinal_ = 0;
};

}  // namespace wrapir::run::cuda
