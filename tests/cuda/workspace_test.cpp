// wrapir::cuda's workspaces on a real device, each zero mode observed by a
// kernel: add_in_place_i32 adds onto the workspace and the contents are
// copied back. zero_on_call is zero at every call (even when the driver
// hands back memory a previous call dirtied); zero_per_graph keeps its
// contents across the calls of one run, is zero again after
// begin_graph_run, and is zeroed anew when a larger request grows it.

#include "gpu_test_main.hpp"

#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/stream.hpp>
#include <wrapir/cuda/workspace.hpp>
#include <wrapir/ir/lines.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuda = wrapir::cuda;
using wrapir::ir::WorkspaceZeroMode;

namespace {

using wrapir_test::contains;
using wrapir_test::must;

constexpr std::int64_t ints = 1 << 16;

struct Fixture {
  cuda::Module module = must(cuda::Module::load_file(WRAPIR_TEST_KERNELS_CUBIN));
  cuda::Function add = must(module.function("add_in_place_i32"));
  cuda::Stream stream = must(cuda::Stream::create());

  /// Adds `amount` to the first `count` ints at `address`, on the stream.
  void add_to(CUdeviceptr address, std::int32_t amount, std::int64_t count) const {
    const auto n = static_cast<std::int32_t>(count);
    const auto blocks = static_cast<std::uint32_t>((n + 255) / 256);
    must(cuda::launch(add, {.grid = {blocks}, .block = {256}, .stream = stream}, address, amount, n));
  }
  /// The first `count` ints at `address`, after the stream's work.
  [[nodiscard]] std::vector<std::int32_t> read(CUdeviceptr address, std::int64_t count) const {
    must(stream.synchronize());
    std::vector<std::int32_t> out(static_cast<std::size_t>(count));
    must(cuda::copy_to_host(out.data(), address, out.size() * sizeof(std::int32_t)));
    return out;
  }
  /// Whether the first `count` ints at `address` all equal `value`.
  [[nodiscard]] bool all_equal(CUdeviceptr address, std::int64_t count, std::int32_t value) const {
    const std::vector<std::int32_t> values = read(address, count);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != value) {
        MESSAGE("element " << i << " is " << values[i] << ", expected " << value);
        return false;
      }
    }
    return true;
  }
  /// Leaves memory full of 0xff bytes free for the driver to hand out again,
  /// so that a workspace that is zero was zeroed, not merely fresh.
  void dirty_free_memory(std::size_t bytes) const {
    cuda::DeviceBuffer junk = must(cuda::DeviceBuffer::allocate(bytes));
    must(cuda::fill_bytes_async(junk.address(), 0xff, bytes, stream));
    must(stream.synchronize());
  }
};

cuda::WorkspaceRequest ints_request(std::string_view name, std::int64_t count, WorkspaceZeroMode mode) {
  return {.name = name, .count = count, .item_bytes = sizeof(std::int32_t), .zero_mode = mode};
}

}  // namespace

TEST_CASE("workspace sizes: elements times element size, checked") {
  CHECK(cuda::workspace_bytes("workspace_0", 0, 1) == std::size_t{0});
  CHECK(cuda::workspace_bytes("workspace_0", 1024, 4) == std::size_t{4096});

  auto negative = cuda::workspace_bytes("workspace_0", -1, 1);
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.error().message == "workspace 'workspace_0': negative element count -1");
  auto no_item = cuda::workspace_bytes("workspace_0", 8, 0);
  REQUIRE_FALSE(no_item.ok());
  CHECK(no_item.error().message == "workspace 'workspace_0': element size 0 bytes");
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  auto overflow = cuda::workspace_bytes("workspace_1", huge, 8);
  REQUIRE_FALSE(overflow.ok());
  CHECK(overflow.error().message ==
        "workspace 'workspace_1': 9223372036854775807 elements of 8 bytes overflow a 64-bit size");
  CHECK(cuda::workspace_bytes("workspace_1", huge, 1) == static_cast<std::size_t>(huge));
}

TEST_CASE("bad workspace requests are diagnostics, for every zero mode") {
  Fixture fx;
  cuda::WorkspacePool pool;
  for (const WorkspaceZeroMode mode :
       {WorkspaceZeroMode::uninitialized, WorkspaceZeroMode::zero_on_call, WorkspaceZeroMode::zero_per_graph}) {
    CAPTURE(wrapir::ir::workspace_zero_mode_name(mode));
    auto unnamed = pool.acquire({.name = "", .count = 8, .zero_mode = mode}, fx.stream);
    REQUIRE_FALSE(unnamed.ok());
    CHECK(unnamed.error().message == "workspace '': a workspace needs a name");
    auto negative = pool.acquire({.name = "ws", .count = -8, .zero_mode = mode}, fx.stream);
    REQUIRE_FALSE(negative.ok());
    CHECK(negative.error().message == "workspace 'ws': negative element count -8");
    auto overflow = pool.acquire(
        {.name = "ws", .count = std::numeric_limits<std::int64_t>::max(), .item_bytes = 16, .zero_mode = mode},
        fx.stream);
    REQUIRE_FALSE(overflow.ok());
    CHECK(contains(overflow.error().message, "overflow"));
    // Too large for any device: the driver's refusal, naming the workspace.
    auto too_large = pool.acquire({.name = "ws", .count = std::int64_t{1} << 60, .zero_mode = mode}, fx.stream);
    REQUIRE_FALSE(too_large.ok());
    CHECK(contains(too_large.error().message, "workspace 'ws': cuMemAlloc(1152921504606846976 bytes)"));
  }
  auto bad_mode = pool.acquire({.name = "ws", .count = 8, .zero_mode = static_cast<WorkspaceZeroMode>(7)}, fx.stream);
  REQUIRE_FALSE(bad_mode.ok());
  CHECK(bad_mode.error().message == "workspace 'ws': invalid zero mode 7");
  // Nothing was kept.
  CHECK(pool.graph_workspace_count() == 0);
  CHECK(pool.held_bytes() == 0);
}

TEST_CASE("uninitialized workspaces are allocated per call and owned by the caller") {
  Fixture fx;
  cuda::WorkspacePool pool;
  cuda::Workspace ws = must(pool.acquire({.name = "workspace_0", .count = 1000}, fx.stream));
  CHECK(ws.zero_mode() == WorkspaceZeroMode::uninitialized);
  CHECK(ws.owns_memory());
  CHECK(ws.size_bytes() == 1000);
  CHECK(ws.address() != 0);
  CHECK(ws.as<std::byte>().address == ws.address());
  // Usable by a kernel.
  fx.add_to(ws.address(), 1, 250);
  CHECK(fx.read(ws.address(), 250).size() == 250);

  cuda::Workspace empty = must(pool.acquire({.name = "workspace_1", .count = 0}, fx.stream));
  CHECK(empty.address() == 0);
  CHECK(empty.size_bytes() == 0);
  CHECK(pool.graph_workspace_count() == 0);
}

TEST_CASE("zero_on_call workspaces are zero at every call") {
  Fixture fx;
  cuda::WorkspacePool pool;
  const std::size_t bytes = ints * sizeof(std::int32_t);
  for (int call = 0; call < 3; ++call) {
    CAPTURE(call);
    fx.dirty_free_memory(bytes);
    cuda::Workspace ws = must(pool.acquire(ints_request("workspace_0", ints, WorkspaceZeroMode::zero_on_call), fx.stream));
    CHECK(ws.owns_memory());
    CHECK(ws.size_bytes() == bytes);
    fx.add_to(ws.address(), 7, ints);
    CHECK(fx.all_equal(ws.address(), ints, 7));  // 0 + 7 whatever the memory held before
  }
  CHECK(pool.graph_workspace_count() == 0);
  cuda::Workspace empty = must(pool.acquire(ints_request("workspace_0", 0, WorkspaceZeroMode::zero_on_call), fx.stream));
  CHECK(empty.address() == 0);
}

TEST_CASE("zero_per_graph workspaces keep their contents within a run and are zero at the next") {
  Fixture fx;
  cuda::WorkspacePool pool;
  const auto per_graph = [](std::string_view name, std::int64_t count) {
    return ints_request(name, count, WorkspaceZeroMode::zero_per_graph);
  };
  must(pool.begin_graph_run(fx.stream));  // nothing to zero yet

  // Run 1: two calls share the buffer; the kernels leave it dirty, so the
  // second call sees the first call's additions.
  fx.dirty_free_memory(ints * sizeof(std::int32_t));
  const cuda::Workspace first = must(pool.acquire(per_graph("workspace_0", ints), fx.stream));
  CHECK_FALSE(first.owns_memory());
  CHECK(first.zero_mode() == WorkspaceZeroMode::zero_per_graph);
  CHECK(first.size_bytes() == ints * sizeof(std::int32_t));
  CHECK(fx.all_equal(first.address(), ints, 0));  // zeroed when made
  fx.add_to(first.address(), 1, ints);
  const cuda::Workspace second = must(pool.acquire(per_graph("workspace_0", ints), fx.stream));
  CHECK(second.address() == first.address());
  fx.add_to(second.address(), 1, ints);
  CHECK(fx.all_equal(second.address(), ints, 2));
  CHECK(pool.graph_workspace_count() == 1);
  CHECK(pool.graph_workspace_bytes("workspace_0") == ints * sizeof(std::int32_t));
  CHECK_FALSE(pool.graph_workspace_bytes("workspace_9").has_value());

  // Run 2: zero again, same buffer.
  must(pool.begin_graph_run(fx.stream));
  const cuda::Workspace next_run = must(pool.acquire(per_graph("workspace_0", ints), fx.stream));
  CHECK(next_run.address() == first.address());
  CHECK(fx.all_equal(next_run.address(), ints, 0));
  fx.add_to(next_run.address(), 3, ints);

  // A larger request grows the buffer, zeroed over its whole size although
  // the old one held 3s.
  fx.dirty_free_memory(4 * ints * sizeof(std::int32_t));
  const cuda::Workspace grown = must(pool.acquire(per_graph("workspace_0", 4 * ints), fx.stream));
  CHECK(grown.size_bytes() == 4 * ints * sizeof(std::int32_t));
  CHECK(pool.graph_workspace_bytes("workspace_0") == 4 * ints * sizeof(std::int32_t));
  CHECK(fx.all_equal(grown.address(), 4 * ints, 0));
  fx.add_to(grown.address(), 5, 4 * ints);

  // A smaller request reuses the grown buffer as it is.
  const cuda::Workspace smaller = must(pool.acquire(per_graph("workspace_0", ints / 2), fx.stream));
  CHECK(smaller.address() == grown.address());
  CHECK(smaller.size_bytes() == ints / 2 * sizeof(std::int32_t));
  CHECK(pool.graph_workspace_bytes("workspace_0") == 4 * ints * sizeof(std::int32_t));
  CHECK(fx.all_equal(smaller.address(), 4 * ints, 5));

  // Another name is another buffer; an empty one has no address until it grows.
  const cuda::Workspace other = must(pool.acquire(per_graph("workspace_1", ints), fx.stream));
  CHECK(other.address() != grown.address());
  CHECK(fx.all_equal(other.address(), ints, 0));
  const cuda::Workspace empty = must(pool.acquire(per_graph("semaphores", 0), fx.stream));
  CHECK(empty.address() == 0);
  CHECK(pool.graph_workspace_bytes("semaphores") == std::size_t{0});
  const cuda::Workspace semaphores = must(pool.acquire(per_graph("semaphores", 16), fx.stream));
  CHECK(semaphores.address() != 0);
  CHECK(fx.all_equal(semaphores.address(), 16, 0));
  CHECK(pool.graph_workspace_count() == 3);
  CHECK(pool.held_bytes() == (4 * ints + ints + 16) * sizeof(std::int32_t));

  // Per-call requests of the same name do not touch the per-graph buffer.
  cuda::Workspace on_call =
      must(pool.acquire(ints_request("workspace_0", ints, WorkspaceZeroMode::zero_on_call), fx.stream));
  CHECK(on_call.address() != grown.address());
  CHECK(fx.all_equal(grown.address(), 4 * ints, 5));

  // Run 3: every per-graph buffer is zero again.
  must(pool.begin_graph_run(fx.stream));
  CHECK(fx.all_equal(grown.address(), 4 * ints, 0));
  fx.add_to(other.address(), 1, ints);
  must(pool.begin_graph_run(fx.stream));
  CHECK(fx.all_equal(other.address(), ints, 0));

  // The pool moves with its buffers.
  cuda::WorkspacePool moved = std::move(pool);
  CHECK(moved.graph_workspace_count() == 3);
  CHECK(must(moved.acquire(per_graph("workspace_0", ints), fx.stream)).address() == grown.address());
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
