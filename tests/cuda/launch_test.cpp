// wrapir::cuda on a real device: the driver, devices, modules in three
// formats, functions and their attributes, memory, streams, events, and
// launching — untyped and typed — with the results checked on the host.

#include "gpu_test_main.hpp"

#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/memory.hpp>
#include <wrapir/cuda/module.hpp>
#include <wrapir/cuda/stream.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace cuda = wrapir::cuda;

namespace {

using wrapir_test::contains;
using wrapir_test::must;

std::vector<char> read_all(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

cuda::Module test_module() { return must(cuda::Module::load_file(WRAPIR_TEST_KERNELS_CUBIN)); }

}  // namespace

TEST_CASE("the driver reports a device and its properties") {
  const cuda::Driver& d = *must(cuda::driver());
  CHECK(d.version >= 12000);
  CHECK(must(cuda::device_count()) >= 1);
  const cuda::DeviceInfo info = must(cuda::device_info(0));
  MESSAGE("device 0: " << info.name << ", sm_" << info.compute_major << info.compute_minor << ", "
                       << info.multiprocessors << " SMs, driver " << d.version);
  CHECK(!info.name.empty());
  CHECK(info.compute_major >= 7);
  CHECK(info.max_threads_per_block >= 1024);
  CHECK(info.max_grid[0] == 2147483647);
  CHECK(info.max_shared_per_block_optin >= info.max_shared_per_block);
  CHECK(info.total_memory_bytes > 0);

  auto missing = cuda::device_info(1000);
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.error().message, "CUDA device 1000 does not exist"));
  CHECK_FALSE(cuda::Context::primary(-1).ok());
}

TEST_CASE("modules load from cubin, PTX and fatbin, from memory and from files") {
  for (const char* path : {WRAPIR_TEST_KERNELS_CUBIN, WRAPIR_TEST_KERNELS_PTX, WRAPIR_TEST_KERNELS_FATBIN}) {
    CAPTURE(path);
    const std::vector<char> bytes = read_all(path);
    REQUIRE(!bytes.empty());
    cuda::Module from_memory = must(cuda::Module::load(std::as_bytes(std::span(bytes)), "in memory"));
    cuda::Module from_file = must(cuda::Module::load_file(path));
    CHECK(from_file.label() == path);
    const cuda::Function f = must(from_memory.function("add_f32"));
    CHECK(f.name() == "add_f32");
    CHECK(f.attributes().max_threads_per_block >= 256);
    CHECK(f.attributes().registers > 0);
    CHECK(f.attributes().binary_version >= 70);
    CHECK(must(from_file.function("axpy_f32")).get() != nullptr);
  }
}

TEST_CASE("module and function errors name what failed and why") {
  auto no_file = cuda::Module::load_file("/nonexistent/kernels.cubin");
  REQUIRE_FALSE(no_file.ok());
  CHECK(no_file.error().message == "cannot read '/nonexistent/kernels.cubin': No such file or directory");

  auto empty = cuda::Module::load({}, "empty.cubin");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message == "cuModuleLoadDataEx(module 'empty.cubin'): the image is empty");

  const std::string bad_ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken( { oops }\n";
  auto broken = cuda::Module::load(std::as_bytes(std::span(bad_ptx)), "broken.ptx");
  REQUIRE_FALSE(broken.ok());
  MESSAGE(broken.error().message);
  CHECK(contains(broken.error().message, "cuModuleLoadDataEx(module 'broken.ptx'): CUDA_ERROR_"));
  CHECK(contains(broken.error().message, "JIT log:"));

  // Bytes that are neither ELF, fatbin nor text are refused before the driver sees them.
  const std::vector<char> garbage{'\x01', '\x00', '\x02', '\x03'};
  auto binary = cuda::Module::load(std::as_bytes(std::span(garbage)), "garbage.bin");
  REQUIRE_FALSE(binary.ok());
  CHECK(binary.error().message ==
        "cuModuleLoadDataEx(module 'garbage.bin'): the image is neither a cubin (ELF), a fatbin, nor PTX text (it "
        "holds a NUL byte)");

  cuda::Module m = test_module();
  auto missing = m.function("no_such_kernel");
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.error().message, "cuModuleGetFunction(kernel 'no_such_kernel' in module '"));
  CHECK(contains(missing.error().message, "CUDA_ERROR_NOT_FOUND"));

  cuda::Module moved = std::move(m);
  CHECK(moved.get() != nullptr);
  CHECK(m.get() == nullptr);  // NOLINT: checking the moved-from state on purpose
  CHECK(contains(m.function("add_f32").error().message, "the module is empty"));
}

TEST_CASE("memory: allocation, zero bytes, copies, fills, pinned buffers") {
  cuda::DeviceBuffer none = must(cuda::DeviceBuffer::allocate(0));
  CHECK(none.address() == 0);
  CHECK(none.size_bytes() == 0);
  must(cuda::copy_to_device(none.address(), nullptr, 0));

  auto huge = cuda::DeviceBuffer::allocate(std::size_t{1} << 60);
  REQUIRE_FALSE(huge.ok());
  CHECK(contains(huge.error().message, "cuMemAlloc(1152921504606846976 bytes): CUDA_ERROR_OUT_OF_MEMORY"));

  const std::vector<std::int32_t> host{1, 2, 3, 4, 5};
  cuda::DeviceBuffer buf = must(cuda::DeviceBuffer::allocate(host.size() * sizeof(std::int32_t)));
  must(cuda::copy_to_device(buf.as<std::int32_t>(), std::span(host)));
  std::vector<std::int32_t> back(host.size());
  must(cuda::copy_to_host(std::span(back), buf.as<std::int32_t>()));
  CHECK(back == host);

  cuda::Stream stream = must(cuda::Stream::create());
  cuda::PinnedBuffer pinned = must(cuda::PinnedBuffer::allocate(buf.size_bytes()));
  must(cuda::fill_bytes_async(buf.address(), 0xff, buf.size_bytes(), stream));
  must(cuda::copy_to_host_async(pinned.data(), buf.address(), buf.size_bytes(), stream));
  must(stream.synchronize());
  for (std::byte b : pinned.bytes()) CHECK(b == std::byte{0xff});

  cuda::DeviceBuffer other = must(cuda::DeviceBuffer::allocate(buf.size_bytes()));
  must(cuda::copy_to_device(buf.as<std::int32_t>(), std::span(host)));
  must(cuda::copy_async(other.address(), buf.address(), buf.size_bytes(), stream));
  must(stream.synchronize());
  must(cuda::copy_to_host(std::span(back), other.as<std::int32_t>()));
  CHECK(back == host);

  cuda::DeviceBuffer moved = std::move(other);
  CHECK(moved.size_bytes() == buf.size_bytes());
  CHECK(other.address() == 0);  // NOLINT: moved-from on purpose
}

TEST_CASE("untyped launch computes, and an empty grid launches nothing") {
  cuda::Module m = test_module();
  const cuda::Function add = must(m.function("add_f32"));
  const int n = 1000;
  const std::uint32_t blocks = (n + 127) / 128;
  std::vector<float> a(n), b(n);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 1000.0f);
  cuda::DeviceBuffer da = must(cuda::DeviceBuffer::allocate(n * sizeof(float)));
  cuda::DeviceBuffer db = must(cuda::DeviceBuffer::allocate(n * sizeof(float)));
  cuda::DeviceBuffer dout = must(cuda::DeviceBuffer::allocate(n * sizeof(float)));
  must(cuda::copy_to_device(da.as<float>(), std::span<const float>(a)));
  must(cuda::copy_to_device(db.as<float>(), std::span<const float>(b)));
  must(cuda::fill_bytes_async(dout.address(), 0, dout.size_bytes(), nullptr));

  cuda::Stream stream = must(cuda::Stream::create());
  const cuda::LaunchConfig config{.grid = {blocks}, .block = {128}, .stream = stream};
  must(cuda::launch(add, config, dout.address(), da.address(), db.address(), n));
  must(stream.synchronize());
  std::vector<float> out(n);
  must(cuda::copy_to_host(std::span(out), dout.as<float>()));
  for (int i = 0; i < n; ++i) REQUIRE(out[i] == a[i] + b[i]);

  // An empty grid: no launch, so not even the bad block size is noticed.
  must(cuda::launch(add, {.grid = {0}, .block = {1 << 20}, .stream = stream}, dout.address(), da.address(),
                    db.address(), n));

  // A launch the driver refuses names the kernel and the configuration.
  auto refused = cuda::launch(add, {.grid = {1}, .block = {4096}, .stream = stream}, dout.address(), da.address(),
                              db.address(), n);
  REQUIRE_FALSE(refused.ok());
  CHECK(contains(refused.error().message,
                 "cuLaunchKernel(kernel 'add_f32', grid (1, 1, 1), block (4096, 1, 1), 0 bytes of shared memory): "
                 "CUDA_ERROR_INVALID_VALUE"));
}

TEST_CASE("typed kernels: checked signatures, conversions, mixed scalar widths") {
  cuda::Module m = test_module();
  using Axpy = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, float, std::int64_t>;
  const Axpy axpy = must(Axpy::bind(must(m.function("axpy_f32"))));

  const std::int64_t n = 3000;
  std::vector<float> x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  cuda::DeviceBuffer dx = must(cuda::DeviceBuffer::allocate(n * sizeof(float)));
  cuda::DeviceBuffer dy = must(cuda::DeviceBuffer::allocate(n * sizeof(float)));
  must(cuda::copy_to_device(dx.as<float>(), std::span<const float>(x)));
  must(cuda::copy_to_device(dy.as<float>(), std::span<const float>(y)));
  // DevicePtr<float> passes as DevicePtr<const float>; an int count widens to int64.
  must(axpy({.grid = {static_cast<std::uint32_t>((n + 255) / 256)}, .block = {256}}, dy.as<float>(), dx.as<float>(),
            2.0f, 3000));
  must(wrapir_test::gpu_context()->synchronize());
  std::vector<float> out(n);
  must(cuda::copy_to_host(std::span(out), dy.as<float>()));
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(out[i] == 2.0f * static_cast<float>(i) + 1.0f);

  // bind() compares the declared signature with the compiled one (drivers >= 12.4).
  if (cuda::loaded_driver().cuFuncGetParamInfo) {
    CHECK(must(must(m.function("axpy_f32")).parameter_sizes()) == std::vector<std::size_t>{8, 8, 4, 8});
    using WrongWidth = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, float, std::int32_t>;
    auto wrong = WrongWidth::bind(must(m.function("axpy_f32")));
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().message == "kernel 'axpy_f32': parameter 3 is 8 bytes but is declared as 4 bytes");
    using TooFew = cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>, float>;
    auto few = TooFew::bind(must(m.function("axpy_f32")));
    REQUIRE_FALSE(few.ok());
    CHECK(few.error().message == "kernel 'axpy_f32' has 4 parameter(s) but its Kernel type declares 3");
    CHECK(must(must(m.function("empty_kernel")).parameter_sizes()).empty());
  } else {
    MESSAGE("driver before 12.4: parameter sizes are not checked");
  }
}

TEST_CASE("3-D grids reach every block") {
  cuda::Module m = test_module();
  const cuda::Kernel<cuda::DevicePtr<int>> ids = must(cuda::Kernel<cuda::DevicePtr<int>>::bind(must(m.function("block_ids"))));
  const cuda::Dim3 grid{5, 3, 2};
  const std::size_t blocks = grid.volume();
  cuda::DeviceBuffer out = must(cuda::DeviceBuffer::allocate(blocks * 3 * sizeof(int)));
  must(ids({.grid = grid, .block = {32}}, out.as<int>()));
  std::vector<int> host(blocks * 3);
  must(cuda::copy_to_host(std::span(host), out.as<int>()));
  std::size_t linear = 0;
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 5; ++x, ++linear) {
        CHECK(host[3 * linear] == x);
        CHECK(host[3 * linear + 1] == y);
        CHECK(host[3 * linear + 2] == z);
      }
}

TEST_CASE("dynamic shared memory above 48 KB needs the opt-in") {
  cuda::Module m = test_module();
  cuda::Function f = must(m.function("shared_rotate"));
  const int words = 24 * 1024;  // 96 KB
  const auto bytes = static_cast<std::uint32_t>(words * sizeof(int));
  cuda::DeviceBuffer out = must(cuda::DeviceBuffer::allocate(bytes));
  const cuda::LaunchConfig config{.grid = {1}, .block = {256}, .shared_bytes = bytes};

  auto refused = cuda::launch(f, config, out.address(), words);
  REQUIRE_FALSE(refused.ok());
  CHECK(contains(refused.error().message, "98304 bytes of shared memory"));

  must(f.set_max_dynamic_shared(static_cast<int>(bytes)));
  CHECK(f.attributes().max_dynamic_shared_bytes == static_cast<int>(bytes));
  must(cuda::launch(f, config, out.address(), words));
  std::vector<int> host(words);
  must(cuda::copy_to_host(std::span(host), out.as<int>()));
  for (int i = 0; i < words; ++i) REQUIRE(host[i] == ((i + 1) % words) * 3);

  auto too_much = f.set_max_dynamic_shared(1 << 30);
  REQUIRE_FALSE(too_much.ok());
  CHECK(contains(too_much.error().message, "cuFuncSetAttribute(kernel 'shared_rotate', max dynamic shared memory"));
  CHECK(contains(f.set_max_dynamic_shared(-1).error().message, "negative dynamic shared memory"));
}

TEST_CASE("events time GPU work on a stream") {
  cuda::Module m = test_module();
  const cuda::Function add = must(m.function("add_in_place_i32"));
  const int n = 1 << 22;
  const std::uint32_t blocks = n / 256;
  cuda::DeviceBuffer data = must(cuda::DeviceBuffer::allocate(n * sizeof(int)));
  cuda::Stream stream = must(cuda::Stream::create());
  must(cuda::fill_bytes_async(data.address(), 0, data.size_bytes(), stream));
  cuda::Event start = must(cuda::Event::create());
  cuda::Event stop = must(cuda::Event::create());
  must(start.record(stream));
  for (int i = 0; i < 10; ++i)
    must(cuda::launch(add, {.grid = {blocks}, .block = {256}, .stream = stream}, data.address(), 1, n));
  must(stop.record(stream));
  const float ms = must(cuda::elapsed_ms(start, stop));
  MESSAGE("10 passes over 16 MB: " << ms << " ms");
  CHECK(std::isfinite(ms));
  CHECK(ms > 0.0f);
  std::vector<int> host(n);
  must(cuda::copy_to_host(std::span(host), data.as<int>()));
  CHECK(host.front() == 10);
  CHECK(host.back() == 10);

  // Ordering across streams.
  cuda::Stream other = must(cuda::Stream::create());
  must(cuda::launch(add, {.grid = {blocks}, .block = {256}, .stream = stream}, data.address(), 5, n));
  must(stop.record(stream));
  must(cuda::wait(other, stop));
  must(cuda::copy_to_host_async(host.data(), data.address(), 4, other));
  must(other.synchronize());
  CHECK(host.front() == 15);
}

int main(int argc, char** argv) { return wrapir_test::run_gpu_tests(argc, argv); }
