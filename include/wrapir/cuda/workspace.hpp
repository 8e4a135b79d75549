#pragma once
/// \file
/// Kernel workspaces on the device, with the three zero modes of the
/// reference §7 (`ir::WorkspaceZeroMode`).
///
/// A workspace is scratch memory a kernel receives as a parameter
/// (`ws_ptr`). How it must be initialised is its zero mode:
///
/// | mode | `WorkspacePool::acquire` | memory |
/// |---|---|---|
/// | `uninitialized` | allocates | owned by the returned `Workspace`, freed with it (`WorkspaceFree`) |
/// | `zero_on_call` | allocates and zeroes it on the stream | as above |
/// | `zero_per_graph` | the pool's buffer of that name: made (zeroed) on the first request, grown (zeroed again) when a request is larger, zeroed by `begin_graph_run` | the pool's, until the pool goes |
///
/// `zero_per_graph` is for kernels that leave the workspace as they found it
/// (all zeros — semaphores, counters), so zeroing once per run of the
/// program suffices. Inductor sizes it to the largest request of the run; the
/// pool does the same, growing the buffer when a later request is larger —
/// and since the kernels restore zeros, a grown buffer zeroed anew holds
/// exactly what the old one did.
///
/// ```
/// cuda::WorkspacePool pool;
/// for (each run of the program) {
///   pool.begin_graph_run(stream);                 // zero the per-graph workspaces
///   auto ws = pool.acquire({.name = "workspace_0", .count = n, .zero_mode = ir::WorkspaceZeroMode::zero_per_graph},
///                          stream);               // Result<Workspace>
///   launch(kernel, config, ..., ws->address());
/// }
/// ```
///
/// Sizes: `count` elements of `item_bytes` each (1: Inductor's uint8
/// workspaces). A count of 0 is a valid, empty workspace with a null
/// address; a negative count, an item size of 0 and a product that does not
/// fit in `std::size_t` are diagnostics naming the workspace.
///
/// Lifetimes: a `Workspace` of a per-call mode frees its memory when
/// destroyed (the driver's `cuMemFree` waits for work still using it). A
/// `zero_per_graph` `Workspace` only borrows the pool's buffer: its address
/// stays valid until a larger request of the same name grows the buffer,
/// which first waits for the context's queued work, or until the pool is
/// destroyed — destroy it after the work that uses it has finished.
///
/// Streams: zeroing is stream-ordered on the stream passed to `acquire` or
/// `begin_graph_run`; pass the stream the kernels run on. A pool is not
/// thread-safe: one pool per program that runs at a time.

#include <wrapir/cuda/driver.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace wrapir::cuda {

/// `count` elements of `item_bytes` each, in bytes; a diagnostic naming
/// workspace `name` for a negative count, a zero item size or an overflow.
[[nodiscard]] inline Result<std::size_t> workspace_bytes(std::string_view name, std::int64_t count,
                                                         std::size_t item_bytes) {
  const std::string where = "workspace " + ir::quote_for_diagnostic(name) + ": ";
  if (count < 0) return Diagnostic{where + "negative element count " + std::to_string(count)};
  if (item_bytes == 0) return Diagnostic{where + "element size 0 bytes"};
  const auto elements = static_cast<std::uint64_t>(count);
  if (elements > std::numeric_limits<std::size_t>::max() / item_bytes) {
    return Diagnostic{where + std::to_string(count) + " elements of " + std::to_string(item_bytes) +
                      " bytes overflow a " + std::to_string(8 * sizeof(std::size_t)) + "-bit size"};
  }
  return static_cast<std::size_t>(elements) * item_bytes;
}

/// What a kernel call asks for (Inductor's `WorkspaceArg`, evaluated).
struct WorkspaceRequest {
  /// The workspace's outer name (`workspace_0`): the key of a
  /// `zero_per_graph` buffer, and the name in diagnostics.
  std::string_view name{};
  /// Number of elements.
  std::int64_t count = 0;
  /// Bytes per element.
  std::size_t item_bytes = 1;
  ir::WorkspaceZeroMode zero_mode = ir::WorkspaceZeroMode::uninitialized;
};

/// A workspace handed to one kernel call. Move-only. Owns its memory for the
/// per-call modes; borrows the pool's for `zero_per_graph` (see the file
/// comment for how long that stays valid).
class Workspace {
 public:
  Workspace() = default;

  /// The device address; 0 for an empty workspace.
  [[nodiscard]] CUdeviceptr address() const noexcept { return address_; }
  /// The bytes requested (a `zero_per_graph` buffer may be larger).
  [[nodiscard]] std::size_t size_bytes() const noexcept { return bytes_; }
  [[nodiscard]] ir::WorkspaceZeroMode zero_mode() const noexcept { return zero_mode_; }
  /// Whether destroying this workspace frees its memory.
  [[nodiscard]] bool owns_memory() const noexcept { return zero_mode_ != ir::WorkspaceZeroMode::zero_per_graph; }
  template <class T>
  [[nodiscard]] DevicePtr<T> as() const noexcept {
    return DevicePtr<T>{address_};
  }

 private:
  friend class WorkspacePool;
  Workspace(DeviceBuffer owned, CUdeviceptr address, std::size_t bytes, ir::WorkspaceZeroMode mode)
      : owned_(std::move(owned)), address_(address), bytes_(bytes), zero_mode_(mode) {}

  DeviceBuffer owned_{};
  CUdeviceptr address_ = 0;
  std::size_t bytes_ = 0;
  ir::WorkspaceZeroMode zero_mode_ = ir::WorkspaceZeroMode::uninitialized;
};

/// Hands out workspaces and keeps the `zero_per_graph` ones across the calls
/// of a program run (see the file comment). Move-only; needs a current
/// context for every call and for its destruction.
class WorkspacePool {
 public:
  WorkspacePool() = default;
  WorkspacePool(WorkspacePool&&) noexcept = default;
  WorkspacePool& operator=(WorkspacePool&&) noexcept = default;
  WorkspacePool(const WorkspacePool&) = delete;
  WorkspacePool& operator=(const WorkspacePool&) = delete;
  ~WorkspacePool() = default;

  /// A workspace for one kernel call, initialised as `request.zero_mode`
  /// says, zeroing on `stream`.
  [[nodiscard]] Result<Workspace> acquire(const WorkspaceRequest& request, CUstream stream) {
    const std::string where = "workspace " + ir::quote_for_diagnostic(request.name) + ": ";
    if (request.name.empty()) return Diagnostic{"workspace '': a workspace needs a name"};
    auto bytes = workspace_bytes(request.name, request.count, request.item_bytes);
    if (!bytes) return bytes.error();
    switch (request.zero_mode) {
      case ir::WorkspaceZeroMode::uninitialized:
      case ir::WorkspaceZeroMode::zero_on_call: {
        auto memory = DeviceBuffer::allocate(*bytes);
        if (!memory) return Diagnostic{where + memory.error().message};
        if (request.zero_mode == ir::WorkspaceZeroMode::zero_on_call) {
          if (auto s = fill_bytes_async(memory->address(), 0, *bytes, stream); !s)
            return Diagnostic{where + "zeroing: " + s.error().message};
        }
        const CUdeviceptr address = memory->address();
        return Workspace(std::move(memory).value(), address, *bytes, request.zero_mode);
      }
      case ir::WorkspaceZeroMode::zero_per_graph: {
        auto buffer = graph_buffer(request.name, *bytes, stream, where);
        if (!buffer) return buffer.error();
        return Workspace(DeviceBuffer{}, *buffer, *bytes, request.zero_mode);
      }
    }
    return Diagnostic{where + "invalid zero mode " + std::to_string(static_cast<int>(request.zero_mode))};
  }

  /// Starts a run of the program: zeroes every `zero_per_graph` buffer on
  /// `stream` (ordered after the previous run's work on that stream).
  [[nodiscard]] Status begin_graph_run(CUstream stream) {
    for (const auto& [name, buffer] : per_graph_) {
      if (auto s = fill_bytes_async(buffer.address(), 0, buffer.size_bytes(), stream); !s)
        return Diagnostic{"workspace " + ir::quote_for_diagnostic(name) + ": zeroing for a new run: " +
                          s.error().message};
    }
    return {};
  }

  /// How many `zero_per_graph` workspaces the pool holds.
  [[nodiscard]] std::size_t graph_workspace_count() const noexcept { return per_graph_.size(); }
  /// The size of the `zero_per_graph` buffer `name` (the largest request so
  /// far), or nullopt when none was requested.
  [[nodiscard]] std::optional<std::size_t> graph_workspace_bytes(std::string_view name) const {
    const auto it = per_graph_.find(name);
    if (it == per_graph_.end()) return std::nullopt;
    return it->second.size_bytes();
  }
  /// The device memory the pool holds, in bytes.
  [[nodiscard]] std::size_t held_bytes() const noexcept {
    std::size_t total = 0;
    for (const auto& entry : per_graph_) total += entry.second.size_bytes();
    return total;
  }

 private:
  /// The address of the `zero_per_graph` buffer `name`, made or grown to at
  /// least `bytes` (zeroed when made or grown).
  Result<CUdeviceptr> graph_buffer(std::string_view name, std::size_t bytes, CUstream stream,
                                   const std::string& where) {
    auto it = per_graph_.find(name);
    if (it != per_graph_.end() && it->second.size_bytes() >= bytes) return it->second.address();
    if (it != per_graph_.end() && it->second.size_bytes() != 0) {
      // Kernels queued earlier in this run may still use the old buffer.
      if (auto s = check(loaded_driver().cuCtxSynchronize(), "cuCtxSynchronize"); !s)
        return Diagnostic{where + "waiting to grow from " + std::to_string(it->second.size_bytes()) + " to " +
                          std::to_string(bytes) + " bytes: " + s.error().message};
    }
    auto memory = DeviceBuffer::allocate(bytes);
    if (!memory) return Diagnostic{where + memory.error().message};
    if (auto s = fill_bytes_async(memory->address(), 0, bytes, stream); !s)
      return Diagnostic{where + "zeroing: " + s.error().message};
    if (it == per_graph_.end()) it = per_graph_.emplace(std::string(name), DeviceBuffer{}).first;
    it->second = std::move(memory).value();
    return it->second.address();
  }

  std::map<std::string, DeviceBuffer, std::less<>> per_graph_;
};

}  // namespace wrapir::cuda
