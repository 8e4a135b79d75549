// wrapir::cuda graphs on a real device: capture records without running,
// replay runs the recorded work exactly once per launch, kernel nodes come
// in launch order with their captured parameters, in-place argument updates
// redirect later replays (and only later ones), failed or illegal captures
// leave the stream usable, and the per-shape cache replays, captures, or
// runs uncaptured past its cap — with every result checked on the host.

#include "gpu_test_main.hpp"

#include <wrapir/cuda/graph.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/stream.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cuda = wrapir::cuda;

namespace {

using wrapir_test::contains;
using wrapir_test::must;

using AddF32 = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, cuda::DevicePtr<const float>,
                            std::int32_t>;
using AddInPlace = cuda::Kernel<cuda::DevicePtr<int>, std::int32_t, std::int32_t>;
using Key = std::vector<std::int64_t>;

/// The test kernels and a stream of their own (non-blocking: it does not
/// wait for the legacy stream, so copies below go through it too).
struct Fixture {
  cuda::Module module = must(cuda::Module::load_file(WRAPIR_TEST_KERNELS_CUBIN));
  AddF32 add = must(AddF32::bind(must(module.function("add_f32"))));
  AddInPlace add_in_place = must(AddInPlace::bind(must(module.function("add_in_place_i32"))));
  cuda::Stream stream = must(cuda::Stream::create());

  template <class T>
  cuda::DeviceBuffer upload(const std::vector<T>& host) const {
    cuda::DeviceBuffer b = must(cuda::DeviceBuffer::allocate(host.size() * sizeof(T)));
    must(cuda::copy_to_device_async(b.address(), host.data(), b.size_bytes(), stream));
    must(stream.synchronize());
    return b;
  }
  /// A buffer of `count` elements whose every byte is `byte`.
  template <class T>
  cuda::DeviceBuffer filled(std::size_t count, std::uint8_t byte) const {
    cuda::DeviceBuffer b = must(cuda::DeviceBuffer::allocate(count * sizeof(T)));
    fill(b, byte);
    return b;
  }
  void fill(const cuda::DeviceBuffer& b, std::uint8_t byte) const {
    must(cuda::fill_bytes_async(b.address(), byte, b.size_bytes(), stream));
    must(stream.synchronize());
  }
  /// Waits for the stream, then copies the whole buffer back.
  template <class T>
  std::vector<T> download(const cuda::DeviceBuffer& b) const {
    must(stream.synchronize());
    std::vector<T> host(b.size_bytes() / sizeof(T));
    must(cuda::copy_to_host(host.data(), b.address(), b.size_bytes()));
    return host;
  }
  bool all_bytes_are(const cuda::DeviceBuffer& b, std::uint8_t byte) const {
    const std::vector<std::uint8_t> bytes = download<std::uint8_t>(b);
    return std::all_of(bytes.begin(), bytes.end(), [&](std::uint8_t x) { return x == byte; });
  }
  bool all_ints_are(const cuda::DeviceBuffer& b, int value) const {
    const std::vector<int> v = download<int>(b);
    return std::all_of(v.begin(), v.end(), [&](int x) { return x == value; });
  }
};

cuda::LaunchConfig on(CUstream s, int n, std::uint32_t block = 256) {
  return {.grid = {(static_cast<std::uint32_t>(n) + block - 1) / block}, .block = {block}, .stream = s};
}

/// The value of argument `i` of a captured kernel node.
template <class T>
T captured_argument(const cuda::KernelNode& node, std::size_t i) {
  REQUIRE(node.params.kernelParams != nullptr);
  T value{};
  std::memcpy(&value, node.params.kernelParams[i], sizeof(T));
  return value;
}

CUstreamCaptureStatus capture_status(CUstream s) {
  CUstreamCaptureStatus status{};
  must(cuda::check(cuda::loaded_driver().cuStreamIsCapturing(s, &status), "cuStreamIsCapturing"));
  return status;
}

std::vector<float> iota_mod(int n, int mod, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % mod) * scale;
  return v;
}

}  // namespace

TEST_CASE("a capture records without running; its replay computes what direct launches compute") {
  Fixture f;
  const int n = 1000;
  const std::vector<float> a = iota_mod(n, 17, 1.0f), b = iota_mod(n, 5, 2.0f);
  const cuda::DeviceBuffer da = f.upload(a), db = f.upload(b);
  const cuda::DeviceBuffer out1 = f.filled<float>(n, 0xff), out2 = f.filled<float>(n, 0xff),
                           out3 = f.filled<float>(n, 0xff);
  int calls = 0;
  // Three dependent launches, each with another block size, so that the
  // kernel nodes' order can be read back from their blocks.
  auto record = [&](CUstream s) -> cuda::Status {
    ++calls;
    if (auto st = f.add(on(s, n, 128), out1.as<float>(), da.as<float>(), db.as<float>(), n); !st) return st;
    if (auto st = f.add(on(s, n, 256), out2.as<float>(), out1.as<float>(), db.as<float>(), n); !st) return st;
    return f.add(on(s, n, 64), out3.as<float>(), out2.as<float>(), out1.as<float>(), n);
  };
  cuda::Graph graph = must(cuda::capture_graph(f.stream, record));
  CHECK(calls == 1);
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);
  CHECK(must(graph.node_count()) == 3);
  // Captured, not run.
  CHECK(f.all_bytes_are(out1, 0xff));
  CHECK(f.all_bytes_are(out3, 0xff));

  cuda::GraphExec exec = must(cuda::GraphExec::instantiate(std::move(graph)));
  CHECK_FALSE(graph);  // NOLINT(bugprone-use-after-move): instantiate took it over
  CHECK(exec.graph());
  CHECK(exec.node_count() == 3);
  REQUIRE(exec.kernel_count() == 3);
  const std::uint32_t blocks[] = {128, 256, 64};
  const cuda::DeviceBuffer* outs[] = {&out1, &out2, &out3};
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const cuda::KernelNode& node = exec.kernel_nodes()[i];
    CHECK(node.function() == f.add.function().get());
    CHECK(node.block() == cuda::Dim3{blocks[i], 1, 1});
    CHECK(node.grid() == cuda::Dim3{(n + blocks[i] - 1) / blocks[i], 1, 1});
    CHECK(node.shared_bytes() == 0);
    CHECK(captured_argument<CUdeviceptr>(node, 0) == outs[i]->address());
    CHECK(captured_argument<std::int32_t>(node, 3) == n);
  }
  CHECK(captured_argument<CUdeviceptr>(exec.kernel_nodes()[1], 1) == out1.address());

  must(exec.launch(f.stream));
  const std::vector<float> r1 = f.download<float>(out1), r2 = f.download<float>(out2), r3 = f.download<float>(out3);
  int wrong = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    // Small integers: exact in float.
    wrong += r1[i] != a[i] + b[i];
    wrong += r2[i] != a[i] + 2 * b[i];
    wrong += r3[i] != 2 * a[i] + 3 * b[i];
  }
  CHECK(wrong == 0);
  CHECK(calls == 1);
}

TEST_CASE("each replay runs the captured work exactly once, on whichever stream launches it") {
  Fixture f;
  const int n = 4096;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);
  cuda::GraphExec exec = must(cuda::capture_and_instantiate(f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = f.add_in_place(on(s, n), data.as<int>(), 3, n); !st) return st;
    return f.add_in_place(on(s, n), data.as<int>(), 4, n);
  }));
  CHECK(f.all_ints_are(data, 0));  // capturing ran nothing
  must(exec.launch(f.stream));
  CHECK(f.all_ints_are(data, 7));
  for (int i = 0; i < 9; ++i) must(exec.launch(f.stream));
  CHECK(f.all_ints_are(data, 70));

  cuda::Stream other = must(cuda::Stream::create());
  must(exec.launch(other));
  must(other.synchronize());
  CHECK(f.all_ints_are(data, 77));
}

TEST_CASE("fills and copies are nodes of the graph but not kernel nodes") {
  Fixture f;
  const int n = 3000;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0x7f), copy = f.filled<int>(n, 0);
  cuda::GraphExec exec = must(cuda::capture_and_instantiate(f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = cuda::fill_bytes_async(data.address(), 0, data.size_bytes(), s); !st) return st;
    if (auto st = f.add_in_place(on(s, n), data.as<int>(), 5, n); !st) return st;
    return cuda::copy_async(copy.address(), data.address(), data.size_bytes(), s);
  }));
  CHECK(exec.node_count() == 3);
  REQUIRE(exec.kernel_count() == 1);
  CHECK(exec.kernel_nodes()[0].function() == f.add_in_place.function().get());
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    must(exec.launch(f.stream));
    // The fill resets the data before each addition.
    CHECK(f.all_ints_are(data, 5));
    CHECK(f.all_ints_are(copy, 5));
  }
}

TEST_CASE("update_kernel redirects later replays to new buffers and leaves the old ones alone") {
  Fixture f;
  const int n = 2000;
  const std::vector<float> a_old = iota_mod(n, 11, 1.0f), b_old = iota_mod(n, 3, 1.0f);
  const std::vector<float> a_new = iota_mod(n, 7, 4.0f), b_new = iota_mod(n, 13, -1.0f);
  const cuda::DeviceBuffer da_old = f.upload(a_old), db_old = f.upload(b_old);
  const cuda::DeviceBuffer da_new = f.upload(a_new), db_new = f.upload(b_new);
  const cuda::DeviceBuffer out_old = f.filled<float>(n, 0xff), out_new = f.filled<float>(n, 0xff);
  auto sum_is = [&](const cuda::DeviceBuffer& out, const std::vector<float>& a, const std::vector<float>& b,
                    std::size_t count) {
    const std::vector<float> r = f.download<float>(out);
    std::uint32_t untouched = 0;
    std::memset(&untouched, 0xff, sizeof untouched);
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::uint32_t bits = 0;
      std::memcpy(&bits, &r[i], sizeof bits);
      if (i < count ? r[i] != a[i] + b[i] : bits != untouched) return false;
    }
    return true;
  };

  cuda::GraphExec exec = must(cuda::capture_and_instantiate(f.stream, [&](CUstream s) {
    return f.add(on(s, n), out_old.as<float>(), da_old.as<float>(), db_old.as<float>(), n);
  }));
  REQUIRE(exec.kernel_count() == 1);
  const cuda::KernelNode captured = exec.kernel_nodes()[0];

  // A launch enqueued before the update keeps the old arguments.
  must(exec.launch(f.stream));
  must(exec.update_kernel(0, out_new.as<float>(), da_new.as<const float>(), db_new.as<const float>(), n));
  must(exec.launch(f.stream));
  CHECK(sum_is(out_old, a_old, b_old, n));
  CHECK(sum_is(out_new, a_new, b_new, n));

  // Later replays touch only the new buffers.
  f.fill(out_old, 0xff);
  f.fill(out_new, 0xff);
  must(exec.launch(f.stream));
  CHECK(sum_is(out_new, a_new, b_new, n));
  CHECK(f.all_bytes_are(out_old, 0xff));
  // The node keeps what was captured, and its launch shape.
  const cuda::KernelNode& now = exec.kernel_nodes()[0];
  CHECK(captured_argument<CUdeviceptr>(now, 0) == out_old.address());
  CHECK(now.grid() == captured.grid());
  CHECK(now.block() == captured.block());

  // Scalars change too: a smaller count under the same grid.
  f.fill(out_new, 0xff);
  const int m = 100;
  must(exec.update_kernel(0, out_new.as<float>(), da_old.as<const float>(), db_old.as<const float>(), m));
  must(exec.launch(f.stream));
  CHECK(sum_is(out_new, a_old, b_old, m));

  // The untyped form, back to the captured buffers.
  f.fill(out_old, 0xff);
  f.fill(out_new, 0xff);
  CUdeviceptr out_address = out_old.address(), a_address = da_old.address(), b_address = db_old.address();
  std::int32_t count = n;
  void* params[] = {&out_address, &a_address, &b_address, &count};
  must(exec.set_kernel_arguments(0, params));
  must(exec.launch(f.stream));
  CHECK(sum_is(out_old, a_old, b_old, n));
  CHECK(f.all_bytes_are(out_new, 0xff));
}

TEST_CASE("updating one kernel node leaves the others as captured") {
  Fixture f;
  const int n = 512;
  const cuda::DeviceBuffer x = f.filled<int>(n, 0), y = f.filled<int>(n, 0), z = f.filled<int>(n, 0);
  cuda::GraphExec exec = must(cuda::capture_and_instantiate(f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = f.add_in_place(on(s, n), x.as<int>(), 1, n); !st) return st;
    return f.add_in_place(on(s, n), y.as<int>(), 2, n);
  }));
  REQUIRE(exec.kernel_count() == 2);
  must(exec.update_kernel(1, z.as<int>(), std::int32_t{20}, std::int32_t{n}));
  must(exec.launch(f.stream));
  must(exec.launch(f.stream));
  CHECK(f.all_ints_are(x, 2));
  CHECK(f.all_ints_are(y, 0));
  CHECK(f.all_ints_are(z, 40));
}

TEST_CASE("bad kernel node indices and mismatched argument lists are diagnostics") {
  Fixture f;
  const int n = 256;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);
  const cuda::DeviceBuffer in = f.filled<float>(n, 0), out = f.filled<float>(n, 0);
  cuda::GraphExec exec = must(cuda::capture_and_instantiate(f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = f.add_in_place(on(s, n), data.as<int>(), 1, n); !st) return st;
    return f.add(on(s, n), out.as<float>(), in.as<float>(), in.as<float>(), n);
  }));
  REQUIRE(exec.kernel_count() == 2);

  const auto beyond = exec.update_kernel(2, data.as<int>(), 1, n);
  REQUIRE_FALSE(beyond.ok());
  CHECK(beyond.error().message == "kernel node index 2 is out of range: the graph has 2 kernel nodes (0 to 1)");
  const auto far = exec.set_kernel_arguments(99, nullptr);
  REQUIRE_FALSE(far.ok());
  CHECK(contains(far.error().message, "kernel node index 99 is out of range"));

  if (cuda::loaded_driver().cuFuncGetParamInfo) {
    const auto too_few = exec.update_kernel(1, out.as<float>(), in.as<float>(), in.as<float>());
    REQUIRE_FALSE(too_few.ok());
    CHECK(too_few.error().message == "update of kernel node 1: the kernel has 4 parameters but 3 arguments were given");
    const auto too_many = exec.update_kernel(0, data.as<int>(), 1, n, 7);
    REQUIRE_FALSE(too_many.ok());
    CHECK(too_many.error().message ==
          "update of kernel node 0: the kernel has 3 parameters but 4 arguments were given");
    const auto too_wide = exec.update_kernel(0, data.as<int>(), std::int64_t{1}, n);
    REQUIRE_FALSE(too_wide.ok());
    CHECK(too_wide.error().message ==
          "update of kernel node 0: parameter 1 is 4 bytes but the argument given is 8 bytes");
  } else {
    MESSAGE("the driver cannot report parameter sizes (needs 12.4): argument lists are not checked");
  }
  // Refused updates changed nothing.
  must(exec.launch(f.stream));
  CHECK(f.all_ints_are(data, 1));
  // A right one still goes through after a refused one for the same node.
  must(exec.update_kernel(0, data.as<int>(), 10, n));
  must(exec.launch(f.stream));
  CHECK(f.all_ints_are(data, 11));

  cuda::GraphExec empty;
  CHECK(contains(empty.launch(f.stream).error().message, "the graph is empty"));
  CHECK(contains(empty.update_kernel(0, 1).error().message, "the graph is empty"));
  CHECK(contains(cuda::GraphExec::instantiate(cuda::Graph{}).error().message, "the graph is empty"));
  CHECK(contains(cuda::Graph{}.node_count().error().message, "the graph is empty"));
}

TEST_CASE("a record that fails or throws ends the capture, runs nothing, and leaves the stream usable") {
  Fixture f;
  const int n = 1024;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);

  auto failed = cuda::capture_graph(f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = f.add_in_place(on(s, n), data.as<int>(), 1, n); !st) return st;
    return wrapir::Diagnostic{"planned failure in record"};
  });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "planned failure in record");
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);

  // A launch the driver rejects during the capture (1025 threads per block).
  auto rejected = cuda::capture_graph(f.stream, [&](CUstream s) {
    return f.add_in_place({.grid = {1}, .block = {1025}, .stream = s}, data.as<int>(), 1, n);
  });
  REQUIRE_FALSE(rejected.ok());
  CHECK(contains(rejected.error().message, "cuLaunchKernel(kernel 'add_in_place_i32'"));
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);

  CHECK_THROWS_AS((void)cuda::capture_graph(f.stream,
                                            [&](CUstream s) -> cuda::Status {
                                              must(f.add_in_place(on(s, n), data.as<int>(), 1, n));
                                              throw std::runtime_error("record threw");
                                            }),
                  std::runtime_error);
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);

  // None of the recorded additions ran; the stream still works.
  must(f.add_in_place(on(f.stream, n), data.as<int>(), 2, n));
  CHECK(f.all_ints_are(data, 2));
}

TEST_CASE("work that breaks the rules of capture is reported when the capture ends") {
  Fixture f;
  const int n = 1024;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);
  bool sync_refused = false;
  auto invalid = cuda::capture_graph(f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = f.add_in_place(on(s, n), data.as<int>(), 1, n); !st) return st;
    // Synchronising a capturing stream is illegal and invalidates the
    // capture; this record ignores the refusal, as careless code would.
    sync_refused = !f.stream.synchronize().ok();
    return {};
  });
  CHECK(sync_refused);
  REQUIRE_FALSE(invalid.ok());
  CHECK(contains(invalid.error().message, "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"));
  CHECK(contains(invalid.error().message, "the capture was invalidated"));
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);
  must(f.add_in_place(on(f.stream, n), data.as<int>(), 2, n));
  CHECK(f.all_ints_are(data, 2));
}

TEST_CASE("thread-local capture refuses the capturing thread's allocations, not other threads'") {
  Fixture f;
  bool other_thread_allocated = false;
  std::string other_thread_error = "the other thread did not run";
  auto refused = cuda::capture_graph(f.stream, [&](CUstream) -> cuda::Status {
    std::thread other([&] {
      if (auto s = wrapir_test::gpu_context()->make_current(); !s) {
        other_thread_error = s.error().message;
        return;
      }
      auto buffer = cuda::DeviceBuffer::allocate(1 << 20);
      other_thread_allocated = buffer.ok();
      if (!buffer) other_thread_error = buffer.error().message;
    });
    other.join();
    // An allocation would not be replayed: the driver refuses it here.
    auto here = cuda::DeviceBuffer::allocate(1 << 20);
    if (!here) return here.error();
    return {};
  });
  CHECK_MESSAGE(other_thread_allocated, other_thread_error);
  REQUIRE_FALSE(refused.ok());
  CHECK(contains(refused.error().message, "cuMemAlloc(1048576 bytes)"));
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);
}

TEST_CASE("the legacy default stream is never captured, and captures do not nest") {
  Fixture f;
  int calls = 0;
  auto count_call = [&](CUstream) -> cuda::Status {
    ++calls;
    return {};
  };
  for (CUstream legacy : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY}) {
    auto refused = cuda::capture_graph(legacy, count_call);
    REQUIRE_FALSE(refused.ok());
    CHECK(contains(refused.error().message, "cannot capture a CUDA graph on the legacy default stream"));
  }
  CHECK(calls == 0);

  auto outer = cuda::capture_graph(f.stream, [&](CUstream s) -> cuda::Status {
    auto inner = cuda::capture_graph(s, count_call);
    if (!inner) return inner.error();
    return {};
  });
  REQUIRE_FALSE(outer.ok());
  CHECK(contains(outer.error().message, "the stream is already being captured"));
  CHECK(calls == 0);
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);

  // The per-thread default stream can be captured.
  auto per_thread = cuda::capture_graph(CU_STREAM_PER_THREAD, count_call);
  CHECK_MESSAGE(per_thread.ok(), (per_thread.ok() ? std::string{} : per_thread.error().message));
  CHECK(calls == 1);
}

TEST_CASE("a record that enqueues nothing gives an empty graph that replays as a no-op") {
  Fixture f;
  const cuda::DeviceBuffer data = f.filled<int>(16, 0);
  // An empty grid (a zero-sized tensor) launches nothing, so records nothing.
  cuda::GraphExec exec = must(cuda::capture_and_instantiate(f.stream, [&](CUstream s) {
    return f.add_in_place({.grid = {0}, .block = {256}, .stream = s}, data.as<int>(), 1, 0);
  }));
  CHECK(exec.node_count() == 0);
  CHECK(exec.kernel_count() == 0);
  must(exec.launch(f.stream));
  const auto none = exec.update_kernel(0, data.as<int>(), 1, 0);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message == "kernel node index 0 is out of range: the graph has 0 kernel nodes");
  CHECK(f.all_ints_are(data, 0));
}

TEST_CASE("GraphCache replays per symbol tuple, captures new tuples, and runs uncaptured past its cap") {
  Fixture f;
  const int n = 1024;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);
  int calls = 0;
  auto adding = [&](int amount) {
    return [&, amount](CUstream s) {
      ++calls;
      return f.add_in_place(on(s, n), data.as<int>(), amount, n);
    };
  };
  cuda::GraphCache cache(3);
  CHECK(cache.max_graphs() == 3);
  int expected = 0;
  struct Step {
    Key symbols;
    int amount;  // what this call's record would add
    cuda::GraphRun outcome;
    int added;         // what the call must add
    int record_calls;  // how often record must run
  };
  using enum cuda::GraphRun;
  const Step steps[] = {
      {{1}, 1, captured, 1, 1},
      {{2}, 2, captured, 2, 1},
      {{1}, 100, replayed, 1, 0},  // the graph of (1) adds 1, whatever the record would do now
      {{1, 0}, 10, captured, 10, 1},  // another length: another key
      {{1, 0}, 999, replayed, 10, 0},
      {{2}, 555, replayed, 2, 0},
      {{3}, 1000, uncaptured, 1000, 1},  // the cache is full
      {{3}, 1000, uncaptured, 1000, 1},  // and stays so: (3) is not cached
      {{0, 1}, 4, uncaptured, 4, 1},
  };
  for (const Step& step : steps) {
    CAPTURE(cuda::GraphCache::symbols_text(step.symbols));
    const int calls_before = calls;
    CHECK(must(cache.run(step.symbols, f.stream, adding(step.amount))) == step.outcome);
    CHECK(calls - calls_before == step.record_calls);
    expected += step.added;
    CHECK(f.all_ints_are(data, expected));
    CHECK(cache.size() <= 3);
  }
  CHECK(cache.size() == 3);
  CHECK(cache.stats().captured == 3);
  CHECK(cache.stats().replayed == 3);
  CHECK(cache.stats().uncaptured == 3);
  CHECK(cache.find(Key{1}) != nullptr);
  CHECK(cache.find(Key{1, 0}) != nullptr);
  CHECK(cache.find(Key{1}) != cache.find(Key{1, 0}));
  CHECK(cache.find(Key{3}) == nullptr);
  CHECK(cache.find(Key{}) == nullptr);

  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(cache.find(Key{1}) == nullptr);
  // The empty tuple (a program without dynamic sizes) is a key like any other.
  CHECK(must(cache.run(Key{}, f.stream, adding(5))) == captured);
  CHECK(must(cache.run(Key{}, f.stream, adding(7))) == replayed);
  expected += 10;
  CHECK(f.all_ints_are(data, expected));

  cuda::GraphCache never(0);
  CHECK(must(never.run(Key{1}, f.stream, adding(1))) == uncaptured);
  CHECK(must(never.run(Key{1}, f.stream, adding(1))) == uncaptured);
  CHECK(never.size() == 0);
  expected += 2;
  CHECK(f.all_ints_are(data, expected));
}

namespace {
/// Sends every tuple to one bucket: only whole-tuple comparison tells them apart.
struct OneBucket {
  std::size_t operator()(std::span<const std::int64_t>) const noexcept { return 0; }
};
}  // namespace

TEST_CASE("GraphCache keys are whole tuples, not hashes") {
  Fixture f;
  const int n = 256;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);
  auto adding = [&](int amount) {
    return [&, amount](CUstream s) { return f.add_in_place(on(s, n), data.as<int>(), amount, n); };
  };
  cuda::BasicGraphCache<OneBucket> cache(10);
  const Key keys[] = {{1}, {2}, {1, 0}, {0, 1}, {}, {1, 0, 0}, {-1}};
  int amount = 1, expected = 0;
  for (const Key& key : keys) {
    CHECK(must(cache.run(key, f.stream, adding(amount))) == cuda::GraphRun::captured);
    expected += amount;
    amount *= 2;
  }
  CHECK(cache.size() == std::size(keys));
  CHECK(f.all_ints_are(data, expected));
  // Each replay adds its own tuple's amount: 1, 2, 4, ... in key order.
  amount = 1;
  for (const Key& key : keys) {
    CAPTURE(cuda::GraphCache::symbols_text(key));
    CHECK(must(cache.run(key, f.stream, adding(0))) == cuda::GraphRun::replayed);
    expected += amount;
    amount *= 2;
    CHECK(f.all_ints_are(data, expected));
  }
}

TEST_CASE("GraphCache: new addresses go in through find() before a replay") {
  Fixture f;
  const int n = 1500;
  const std::vector<float> a1 = iota_mod(n, 9, 1.0f), b1 = iota_mod(n, 4, 1.0f);
  const std::vector<float> a2 = iota_mod(n, 6, 3.0f), b2 = iota_mod(n, 10, 0.5f);
  const cuda::DeviceBuffer da1 = f.upload(a1), db1 = f.upload(b1), da2 = f.upload(a2), db2 = f.upload(b2);
  const cuda::DeviceBuffer out1 = f.filled<float>(n, 0xff), out2 = f.filled<float>(n, 0xff);
  auto program = [&](const cuda::DeviceBuffer& out, const cuda::DeviceBuffer& a, const cuda::DeviceBuffer& b) {
    return [&](CUstream s) { return f.add(on(s, n), out.as<float>(), a.as<float>(), b.as<float>(), n); };
  };
  cuda::GraphCache cache(4);
  const Key symbols{n};

  CHECK(must(cache.run(symbols, f.stream, program(out1, da1, db1))) == cuda::GraphRun::captured);
  // Second call, same sizes, other tensors: update, then replay.
  f.fill(out1, 0xff);
  cuda::GraphExec* exec = cache.find(symbols);
  REQUIRE(exec != nullptr);
  must(exec->update_kernel(0, out2.as<float>(), da2.as<const float>(), db2.as<const float>(), n));
  CHECK(must(cache.run(symbols, f.stream, program(out2, da2, db2))) == cuda::GraphRun::replayed);
  const std::vector<float> r = f.download<float>(out2);
  int wrong = 0;
  for (std::size_t i = 0; i < r.size(); ++i) wrong += r[i] != a2[i] + b2[i];
  CHECK(wrong == 0);
  CHECK(f.all_bytes_are(out1, 0xff));
  CHECK(cache.find(symbols) == exec);  // the entry stays where it was
}

TEST_CASE("GraphCache: a failed capture caches nothing and the next call captures again") {
  Fixture f;
  const int n = 128;
  const cuda::DeviceBuffer data = f.filled<int>(n, 0);
  cuda::GraphCache cache(2);
  const Key symbols{7, 8};
  auto failed = cache.run(symbols, f.stream, [&](CUstream s) -> cuda::Status {
    if (auto st = f.add_in_place(on(s, n), data.as<int>(), 1, n); !st) return st;
    return wrapir::Diagnostic{"planned failure"};
  });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "capturing the CUDA graph for symbols (7, 8): planned failure");
  CHECK(cache.size() == 0);
  CHECK(cache.stats().captured == 0);
  CHECK(capture_status(f.stream) == CU_STREAM_CAPTURE_STATUS_NONE);
  CHECK(f.all_ints_are(data, 0));

  auto again = cache.run(symbols, f.stream, [&](CUstream s) { return f.add_in_place(on(s, n), data.as<int>(), 3, n); });
  CHECK(must(std::move(again)) == cuda::GraphRun::captured);
  CHECK(f.all_ints_are(data, 3));

  // An uncaptured run's failure is the record's own.
  cuda::GraphCache full(0);
  auto uncaptured = full.run(symbols, f.stream, [](CUstream) -> cuda::Status { return wrapir::Diagnostic{"no"}; });
  REQUIRE_FALSE(uncaptured.ok());
  CHECK(uncaptured.error().message == "no");
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
