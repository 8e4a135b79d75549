// The CUDA backend's streams without a GPU (docs/runtime.md, "Streams"):
// the real CudaBackend, Triton provider and executor over the null driver
// (bench/null_driver/null_cuda.cpp, built as this test's libcuda.so.1),
// whose log says, in order, which stream each launch went to and which
// events were recorded and waited for. Checks the fork at a stream
// context's entry, the launches on the side stream, the joins before the
// first line that needs them, a borrowed stream used and never destroyed,
// and that a program without stream contexts makes no event call.

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#include <wrapir/run/executor.hpp>

#include "../../../bench/null_driver/null_cuda.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifndef WRAPIR_SOURCE_DIR
#define WRAPIR_SOURCE_DIR "."
#endif

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;

constexpr ir::Device gpu = wrapir::cuda_device(0);

/// kernels.json naming one of the test export's cubins `k` (the null driver
/// loads any bytes).
fs::path kernel_directory() {
  const fs::path data = fs::path(WRAPIR_SOURCE_DIR) / "tests/cuda/data/mlp_layernorm_gelu/kernels";
  const fs::path dir = fs::temp_directory_path() / "wrapir_executor_streams_test";
  fs::create_directories(dir / "kernels");
  for (const auto& file : fs::directory_iterator(data))
    fs::copy_file(file.path(), dir / "kernels" / file.path().filename(), fs::copy_options::overwrite_existing);
  const std::string real = "triton_poi_fused_addmm_gelu_1";
  std::ofstream(dir / "kernels.json")
      << "{\"kernels\": [{\"name\": \"k\", \"language\": \"triton\", \"cubin\": \"kernels/" << real
      << ".cubin\", \"metadata\": \"kernels/" << real << ".json\", \"symbol\": \"" << real
      << "\", \"constants\": {\"XBLOCK\": 128}, \"num_warps\": 4, \"shared_memory_bytes\": 0, \"grid_type\": \"Grid1D\"}]}";
  return dir;
}

/// The log of one call, one string per entry: `launch@s1`, `record e0@s0`,
/// `wait s1<-e0`, `alloc`, `sync@s0`, `create s1`. Streams are named by
/// the backend's index (s0: stream 0; side streams in order of creation),
/// events by the stream they are first recorded on.
struct DriverLog {
  std::vector<std::string> entries;
};

DriverLog read_log(int n, std::uintptr_t base, std::map<std::uintptr_t, std::string>& streams) {
  struct Raw {
    std::string function;
    std::uintptr_t stream, event;
  };
  std::vector<Raw> raw;
  for (int i = 0; i < n; ++i) {
    std::uintptr_t s = 0, e = 0;
    const int f = wrapir_null_cuda_log_entry(i, &s, &e);
    raw.push_back(Raw{wrapir_null_cuda_name(f), s, e});
  }
  streams.try_emplace(base, "s0");
  for (const Raw& r : raw)
    if (r.function == "cuStreamCreate") streams.try_emplace(r.stream, "s" + std::to_string(streams.size()));
  std::map<std::uintptr_t, std::string> events;
  for (const Raw& r : raw)
    if (r.function == "cuEventRecord" && !events.contains(r.event))
      events[r.event] = "e" + streams[r.stream].substr(1);
  auto stream = [&](std::uintptr_t s) { return streams.contains(s) ? streams[s] : std::string("s?"); };
  auto event = [&](std::uintptr_t e) { return events.contains(e) ? events[e] : std::string("e?"); };
  DriverLog out;
  for (const Raw& r : raw) {
    if (r.function == "cuLaunchKernel") out.entries.push_back("launch@" + stream(r.stream));
    else if (r.function == "cuEventRecord") out.entries.push_back("record " + event(r.event) + "@" + stream(r.stream));
    else if (r.function == "cuStreamWaitEvent") out.entries.push_back("wait " + stream(r.stream) + "<-" + event(r.event));
    else if (r.function == "cuMemAlloc") out.entries.push_back("alloc");
    else if (r.function == "cuStreamSynchronize") out.entries.push_back("sync@" + stream(r.stream));
    else if (r.function == "cuStreamCreate") out.entries.push_back("create " + stream(r.stream));
    else if (r.function == "cuEventCreate") continue;  // named by its records
    else out.entries.push_back(r.function + "@" + stream(r.stream));
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "; ";
  return s;
}

struct Fixture {
  std::shared_ptr<rc::CudaBackend> backend;
  std::shared_ptr<rc::TritonKernelProvider> kernels;
  std::map<std::uintptr_t, std::string> streams;  // names, kept across calls

  explicit Fixture(rc::CudaBackend::Options options = {}) {
    backend = rc::CudaBackend::create(0, options).value();
    kernels = rc::TritonKernelProvider::load(kernel_directory(), backend).value();
  }

  /// Runs `p` `warm` times, then once with the log on.
  DriverLog run_logged(const ir::Program& p, int warm = 2) {
    auto exe = run::Executor::prepare(p, {.device = backend, .kernels = kernels});
    REQUIRE_MESSAGE(exe, exe.error().message);
    run::Tensor x{backend->allocate(gpu, 256 * 4).value(), ir::DType::float32, {256}, {1}, 0};
    wrapir_null_cuda_log_start();  // side streams are made on the first call: name them
    for (int i = 0; i < warm; ++i) {
      auto out = exe->run(std::span(&x, 1));
      REQUIRE_MESSAGE(out, out.error().message);
      if (i == 0) (void)read_log(wrapir_null_cuda_log_stop(), reinterpret_cast<std::uintptr_t>(backend->stream()), streams);
    }
    wrapir_null_cuda_log_start();
    auto out = exe->run(std::span(&x, 1));
    const int n = wrapir_null_cuda_log_stop();
    REQUIRE_MESSAGE(out, out.error().message);
    return read_log(n, reinterpret_cast<std::uintptr_t>(backend->stream()), streams);
  }
};

/// `k(in, in, out, 256)`: the export's pointwise kernel (bias + gelu) takes
/// (in_out_ptr0, in_ptr0, xnumel); declared here with three pointers.
ir::KernelId kernel(ir::Builder& b) {
  return b.kernel("k", ir::KernelLanguage::triton, ir::SourceText{""}, "in_out_ptr0: *fp32, in_ptr0: *fp32, xnumel: i32");
}

}  // namespace

TEST_CASE("CUDA streams (null driver): two regions fork, launch on their streams and join before their reader") {
  // a = k(x); {1: k(a)}; {2: b = k(x)...}: region 1 writes a, region 2
  // writes b, then k(a, b) on stream 0 joins both.
  ir::Program p{"regions"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(256)}, ir::DType::float32);
  auto k = kernel(b);
  auto a = b.empty({c.integer(256)}, ir::DType::float32);
  b.call(k, {a, x, 256});
  b.append(ir::EnterStreamContext{1});
  b.call(k, {a, a, 256});
  b.append(ir::ExitStreamContext{});
  b.append(ir::EnterStreamContext{2});
  auto bb = b.empty({c.integer(256)}, ir::DType::float32);
  b.call(k, {bb, x, 256});
  b.append(ir::ExitStreamContext{});
  b.call(k, {a, bb, 256});
  b.output(a);
  Fixture f;
  const DriverLog log = f.run_logged(p);
  const std::vector<std::string> want{
      "launch@s0",                                       // a
      "record e0@s0", "wait s1<-e0", "launch@s1", "record e1@s1",  // region 1
      "record e0@s0", "wait s2<-e0", "launch@s2", "record e2@s2",  // region 2: not after region 1
      "wait s0<-e1", "wait s0<-e2", "launch@s0",        // k(a, b) joins both
  };
  CHECK_MESSAGE(log.entries == want, joined(log.entries));
}

TEST_CASE("CUDA streams (null driver): a program without stream contexts makes no event call") {
  ir::Program p{"plain"};
  ir::Builder b{p, gpu};
  auto& c = b.ctx();
  auto x = b.input("x", {c.integer(256)}, ir::DType::float32);
  auto k = kernel(b);
  auto a = b.empty({c.integer(256)}, ir::DType::float32);
  b.call(k, {a, x, 256});
  b.call(k, {a, a, 256});
  b.output(a);
  Fixture f;
  const DriverLog log = f.run_logged(p);
  const std::vector<std::string> want{"launch@s0", "launch@s0"};
  CHECK_MESSAGE(log.entries == want, joined(log.entries));
}

TEST_CASE("CUDA streams (null driver): a borrowed stream takes every launch and is never destroyed") {
  const auto borrowed = reinterpret_cast<CUstream>(std::uintptr_t{0xb000});
  const int destroy = wrapir_null_cuda_count_of("cuStreamDestroy"), create = wrapir_null_cuda_count_of("cuStreamCreate");
  std::vector<std::uint64_t> before(wrapir_null_cuda_function_count), after(wrapir_null_cuda_function_count);
  wrapir_null_cuda_counts(before.data(), wrapir_null_cuda_function_count);
  {
    ir::Program p{"borrowed"};
    ir::Builder b{p, gpu};
    auto& c = b.ctx();
    auto x = b.input("x", {c.integer(256)}, ir::DType::float32);
    auto k = kernel(b);
    auto a = b.empty({c.integer(256)}, ir::DType::float32);
    b.call(k, {a, x, 256});
    b.append(ir::EnterStreamContext{1});
    b.call(k, {a, a, 256});
    b.append(ir::ExitStreamContext{});
    b.output(a);
    Fixture f(rc::CudaBackend::Options{.borrowed_stream = borrowed});
    CHECK(f.backend->stream() == borrowed);
    CHECK(f.backend->borrows_stream());
    const DriverLog log = f.run_logged(p);
    CHECK(f.streams.at(reinterpret_cast<std::uintptr_t>(borrowed)) == "s0");
    const std::vector<std::string> want{"launch@s0",    "record e0@s0", "wait s1<-e0",
                                        "launch@s1",    "record e1@s1", "wait s0<-e1"};
    CHECK_MESSAGE(log.entries == want, joined(log.entries));
    CHECK(f.backend->synchronize());
  }
  wrapir_null_cuda_counts(after.data(), wrapir_null_cuda_function_count);
  // One stream made (side stream 1) and destroyed with the backend; the
  // borrowed one neither.
  CHECK(after[static_cast<std::size_t>(create)] - before[static_cast<std::size_t>(create)] == 1);
  CHECK(after[static_cast<std::size_t>(destroy)] - before[static_cast<std::size_t>(destroy)] == 1);
}

TEST_CASE("CUDA streams (null driver): stream indices past the backend's are refused") {
  Fixture f;
  CHECK(f.backend->use_stream(63));
  CHECK(f.backend->use_stream(0));
  auto bad = f.backend->use_stream(64);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "stream 64 is past the backend's 64 streams");
  CHECK(f.backend->current_stream() == f.backend->stream());
}
