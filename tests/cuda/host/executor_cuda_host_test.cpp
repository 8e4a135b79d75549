// Host-only checks of the executor's CUDA backend (include/wrapir/run/cuda/):
// what must work, or fail with a clear diagnostic, on a machine with no GPU —
// kernels.json parsing, the Triton provider's refusals before any driver
// call (no entry, no cubin, metadata mismatch, files outside the export or
// not regular files, no backend), cuBLAS not found,
// the GEMM operand layouts, and the backend's answer without a device.

#include <wrapir/cuda/context.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* kernels_json = R"({"kernels": [
  {"name": "k0", "language": "triton", "cubin": "kernels/k0.cubin", "metadata": "kernels/k0.json", "symbol": "k0",
   "constants": {"XBLOCK": 128}, "num_warps": 4, "num_stages": 1, "shared_memory_bytes": 0, "grid_type": "Grid1D"},
  {"name": "k_lost", "language": "triton", "source": "kernels/k_lost.py", "cubin": null,
   "why": "no loaded autotuner of this name"},
  {"name": "k_bad", "language": "triton", "cubin": "kernels/k_bad.cubin", "metadata": "kernels/k_bad.json",
   "symbol": "k_bad", "constants": {"XBLOCK": 64}, "num_warps": 8, "shared_memory_bytes": 0, "grid_type": "Grid2D"},
  {"name": "cpp_k", "language": "cpp"},
  {"name": "k_out", "language": "triton", "cubin": "../../etc/passwd", "metadata": "kernels/k0.json", "symbol": "k0",
   "constants": {"XBLOCK": 128}, "num_warps": 4, "shared_memory_bytes": 0, "grid_type": "Grid1D"},
  {"name": "k_meta_out", "language": "triton", "cubin": "kernels/k0.cubin", "metadata": "/etc/passwd", "symbol": "k0",
   "constants": {"XBLOCK": 128}, "num_warps": 4, "shared_memory_bytes": 0, "grid_type": "Grid1D"}
]})";

/// A temporary export folder: kernels.json and the metadata files.
struct ExportDir {
  fs::path path;
  ExportDir() {
    path = fs::temp_directory_path() / ("wrapir_cuda_host_" + std::to_string(::getpid()));
    fs::create_directories(path / "kernels");
    std::ofstream(path / "kernels.json") << kernels_json;
    std::ofstream(path / "kernels" / "k0.json") << R"({"name": "k0", "num_warps": 4, "shared": 0})";
    std::ofstream(path / "kernels" / "k0.cubin") << "\x7f" "ELF";  // read, never loaded: no backend
    // k_bad's metadata names another symbol and warp count: two exports mixed.
    std::ofstream(path / "kernels" / "k_bad.json") << R"({"name": "k_other", "num_warps": 4, "shared": 0})";
  }
  ~ExportDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const std::vector<ir::KernelParam> signature{{"in_ptr0", ir::ParamType{true, ir::DType::float32}},
                                             {"xnumel", ir::ParamType{false, ir::DType::int32}}};

run::KernelRequest request(std::string_view name, ir::KernelLanguage language = ir::KernelLanguage::triton) {
  return run::KernelRequest{name, language, "", signature, nullptr};
}

}  // namespace

TEST_CASE("kernels.json: entries, and malformed ones named") {
  auto entries = rc::triton_entries_from_json(kernels_json);
  REQUIRE_MESSAGE(entries, entries.error().message);
  REQUIRE(entries->size() == 5);  // the C++ kernel is skipped
  const rc::TritonKernelEntry& k0 = (*entries)[0];
  CHECK(k0.cubin == "kernels/k0.cubin");
  CHECK(k0.grid_type == ir::GridType::grid_1d);
  REQUIRE(k0.constants.size() == 1);
  CHECK(k0.constants[0] == std::pair<std::string, std::int64_t>{"XBLOCK", 128});
  CHECK((*entries)[1].cubin.empty());
  CHECK((*entries)[1].why == "no loaded autotuner of this name");
  CHECK((*entries)[2].grid_type == ir::GridType::grid_2d);

  CHECK(contains(rc::triton_entries_from_json("{").error().message, "not JSON"));
  CHECK(contains(rc::triton_entries_from_json("{}").error().message, "no 'kernels' array"));
  CHECK(contains(rc::triton_entries_from_json(R"({"kernels": [{"name": "a", "grid_type": "Grid9D"}]})").error().message,
                 "entry 0 ('a'): unknown grid type 'Grid9D'"));
  CHECK(contains(rc::triton_entries_from_json(R"({"kernels": [{"name": "a", "num_warps": "4"}]})").error().message,
                 "'num_warps' is not an integer"));
  CHECK(contains(rc::triton_entries_from_json(R"({"kernels": [{"language": "triton"}]})").error().message,
                 "entry 0 has no 'name'"));
}

TEST_CASE("kernels.json: launch constants, the arguments Triton specialised away") {
  auto entries = rc::triton_entries_from_json(R"({"kernels": [{"name": "k", "launch_constants": {"xnumel": 1}}]})");
  REQUIRE_MESSAGE(entries, entries.error().message);
  REQUIRE((*entries)[0].launch_constants.size() == 1);
  CHECK((*entries)[0].launch_constants[0] == std::pair<std::string, std::int64_t>{"xnumel", 1});
  CHECK(contains(rc::triton_entries_from_json(R"({"kernels": [{"name": "k", "launch_constants": [1]}]})").error().message,
                 "'launch_constants' is not an object"));
  CHECK(contains(
      rc::triton_entries_from_json(R"({"kernels": [{"name": "k", "launch_constants": {"xnumel": "1"}}]})").error().message,
      "launch constant 'xnumel' is not an integer"));
}

TEST_CASE("Triton provider: refusals before the driver is asked") {
  ExportDir dir;
  auto provider = rc::TritonKernelProvider::load(dir.path, nullptr);
  REQUIRE_MESSAGE(provider, provider.error().message);
  SUBCASE("another language is not its") {
    auto fn = (*provider)->provide(request("cpp_k", ir::KernelLanguage::cpp));
    REQUIRE(fn);
    CHECK_FALSE(*fn);
  }
  SUBCASE("a kernel kernels.json does not list") {
    CHECK(contains((*provider)->provide(request("nope")).error().message, "has no entry for it"));
  }
  SUBCASE("a kernel the exporter found no cubin for, with its reason") {
    CHECK((*provider)->provide(request("k_lost")).error().message ==
          "the export has no cubin for it (no loaded autotuner of this name)");
  }
  SUBCASE("metadata from another export") {
    const std::string m = (*provider)->provide(request("k_bad")).error().message;
    CHECK(contains(m, "metadata mismatch: kernels.json says symbol 'k_bad'"));
    CHECK(contains(m, "says 'k_other'"));
  }
  SUBCASE("consistent files but no backend to load them on") {
    CHECK(contains((*provider)->provide(request("k0")).error().message, "no CUDA backend"));
  }
  SUBCASE("paths that leave the export directory") {
    CHECK(contains((*provider)->provide(request("k_out")).error().message,
                   "its cubin: the kernel file's path '../../etc/passwd' leaves the kernel directory"));
    CHECK(contains((*provider)->provide(request("k_meta_out")).error().message,
                   "its metadata: the kernel file's path '/etc/passwd' is absolute"));
  }
  SUBCASE("a cubin that is no regular file is refused unread: a FIFO, a symbolic link to /dev/zero") {
    fs::remove(dir.path / "kernels" / "k0.cubin");
    REQUIRE(::mkfifo((dir.path / "kernels" / "k0.cubin").c_str(), 0600) == 0);  // no writer: reading would hang
    CHECK(contains((*provider)->provide(request("k0")).error().message, "FIFO"));
    fs::remove(dir.path / "kernels" / "k0.cubin");
    fs::create_symlink("/dev/zero", dir.path / "kernels" / "k0.cubin");  // reading would never end
    CHECK(contains((*provider)->provide(request("k0")).error().message, "symbolic link"));
  }
  SUBCASE("a kernels.json that is a FIFO") {
    fs::remove(dir.path / "kernels.json");
    REQUIRE(::mkfifo((dir.path / "kernels.json").c_str(), 0600) == 0);
    auto fifo = rc::TritonKernelProvider::load(dir.path, nullptr);
    REQUIRE_FALSE(fifo);
    CHECK(contains(fifo.error().message, "FIFO"));
  }
  SUBCASE("a missing kernels.json") {
    auto none = rc::TritonKernelProvider::load(dir.path / "nowhere", nullptr);
    REQUIRE_FALSE(none);
    CHECK(contains(none.error().message, "kernels.json"));
  }
}

TEST_CASE("a module file that is no regular file is refused before the driver is asked") {
  const std::string m = wrapir::cuda::Module::load_file("/dev/zero").error().message;
  CHECK(contains(m, "cannot read '/dev/zero'"));
  CHECK(contains(m, "not a regular file"));
}

TEST_CASE("cuBLAS that cannot be loaded is a diagnostic naming what was tried") {
  auto lib = rc::cublas_detail::load_from({"/nonexistent/libcublas.so.99"});
  REQUIRE_FALSE(lib);
  CHECK(contains(lib.error().message, "cuBLAS is not available: tried"));
  CHECK(contains(lib.error().message, "/nonexistent/libcublas.so.99"));
  CHECK(contains(lib.error().message, "WRAPIR_CUBLAS"));
}

TEST_CASE("GEMM operands: row-major, transposed views, and layouts cuBLAS cannot take") {
  using rc::cublas_detail::operand_of;
  // [3, 4] row-major: cuBLAS sees its transpose as is, ld 4.
  auto row = operand_of(3, 4, 4, 1);
  REQUIRE(row);
  CHECK(row->op == CUBLAS_OP_N);
  CHECK(row->ld == 4);
  // A [4, 3] .t() view of a [3, 4] row-major matrix: strides (1, 4).
  auto t = operand_of(4, 3, 1, 4);
  REQUIRE(t);
  CHECK(t->op == CUBLAS_OP_T);
  CHECK(t->ld == 4);
  // A row slice with padding: ld is the row stride.
  CHECK(operand_of(3, 4, 16, 1)->ld == 16);
  // Every other element: no unit stride, refused.
  CHECK_FALSE(operand_of(3, 4, 8, 2));
  // Rows overlapping (ld < cols): refused.
  CHECK_FALSE(operand_of(3, 4, 2, 1));
  // Single rows and columns take any stride on their size-1 side.
  CHECK(operand_of(1, 4, 999, 1)->ld == 4);
  CHECK(operand_of(4, 1, 1, 999)->op == CUBLAS_OP_N);
}

TEST_CASE("the CUDA backend without a device answers with the driver's reason") {
  auto reason = wrapir::cuda::no_device_reason();
  auto backend = rc::CudaBackend::create(0);
  if (reason) {
    REQUIRE_FALSE(backend);
    CHECK(backend.error().message == *reason);
  } else {
    REQUIRE_MESSAGE(backend, backend.error().message);
    CHECK((*backend)->device_type() == ir::DeviceType::cuda);
    // A device storage of another ordinal is refused, not misplaced.
    CHECK(contains((*backend)->allocate(wrapir::cuda_device(5), 16).error().message, "holds device 0"));
  }
}

// ---------------------------------------------------------------------------
// The GEMM externs' calls, checked without cuBLAS: a column-major reference
// GEMM (float32) in cuBLAS's place, on host memory tagged as the GPU's. Each
// case compares with a row-major product computed here, so the row/column
// swap, transposed views, leading dimensions, batch strides and addmm's
// broadcast bias are all checked.
// ---------------------------------------------------------------------------

namespace {

cublasStatus_t reference_gemm(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const void* alpha, const void* A, cudaDataType at, int lda, long long sa, const void* B,
                              cudaDataType bt, int ldb, long long sb, const void* beta, void* C, cudaDataType ct,
                              int ldc, long long sc, int batch, cublasComputeType_t, cublasGemmAlgo_t) {
  if (at != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  for (int b = 0; b < batch; ++b) {
    const float* a = static_cast<const float*>(A) + b * sa;
    const float* bb = static_cast<const float*>(B) + b * sb;
    float* c = static_cast<float*>(C) + b * sc;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float acc = 0;
        for (int l = 0; l < k; ++l)
          acc += (ta == CUBLAS_OP_N ? a[i + l * lda] : a[l + i * lda]) * (tb == CUBLAS_OP_N ? bb[l + j * ldb] : bb[j + l * ldb]);
        float& out = c[i + j * ldc];
        out = al * acc + (be == 0 ? 0.0f : be * out);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// Host memory that says it is cuda:0 (the executor tests' backend).
class TaggedHost final : public run::DeviceBackend {
 public:
  [[nodiscard]] ir::DeviceType device_type() const noexcept override { return ir::DeviceType::cuda; }
  [[nodiscard]] std::string describe() const override { return "tagged host memory"; }
  [[nodiscard]] wrapir::Result<std::shared_ptr<run::Storage>> allocate(const ir::Device& d,
                                                                       std::int64_t bytes) const override {
    auto s = std::make_shared<run::Storage>();
    void* p = bytes == 0 ? nullptr : std::calloc(1, static_cast<std::size_t>(bytes));
    s->data = static_cast<std::byte*>(p);
    s->nbytes = bytes;
    s->device = d;
    s->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    return s;
  }
  [[nodiscard]] wrapir::Result<void> zero(std::byte* p, std::int64_t n) const override {
    std::memset(p, 0, static_cast<std::size_t>(n));
    return {};
  }
  [[nodiscard]] wrapir::Result<void> copy(std::byte* d, const ir::Device&, const std::byte* s, const ir::Device&,
                                          std::int64_t n) const override {
    std::memmove(d, s, static_cast<std::size_t>(n));
    return {};
  }
  [[nodiscard]] wrapir::Result<void> synchronize() const override { return {}; }
};

struct GemmFixture {
  rc::CublasLibrary lib;
  std::shared_ptr<TaggedHost> backend = std::make_shared<TaggedHost>();
  std::unique_ptr<rc::cublas_detail::Gemm> gemm;
  GemmFixture() {
    lib.gemm = &reference_gemm;
    lib.destroy = [](cublasHandle_t) { return CUBLAS_STATUS_SUCCESS; };
    gemm = std::make_unique<rc::cublas_detail::Gemm>(lib, backend, wrapir::cuda_device(0), nullptr);
  }
  /// A tensor of `sizes`/`strides` on the tagged device, element e = f(e).
  run::Tensor tensor(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, float scale) {
    const std::int64_t bytes = run::bytes_spanned(sizes, strides, 0, ir::DType::float32).value();
    auto s = backend->allocate(wrapir::cuda_device(0), bytes).value();
    auto* f = reinterpret_cast<float*>(s->data);
    for (std::int64_t i = 0; i < bytes / 4; ++i) f[i] = scale * static_cast<float>((i * 7) % 11) - 3.0f;
    return run::Tensor{s, ir::DType::float32, std::move(sizes), std::move(strides), 0};
  }
};

float at(const run::Tensor& t, std::initializer_list<std::int64_t> index) {
  std::int64_t off = t.offset, k = 0;
  for (std::int64_t i : index) off += i * t.strides[static_cast<std::size_t>(k++)];
  return reinterpret_cast<const float*>(t.storage->data)[off];
}

wrapir::Result<run::Value> call(rc::cublas_detail::Gemm& g, bool batched, bool bias, std::vector<run::Value> args,
                                const run::Tensor& out, std::vector<run::KeywordArg> kwargs = {}) {
  kwargs.push_back({"out", run::Value{out}});
  return rc::cublas_detail::gemm_call(g, run::ExternCall{"gemm", args, kwargs}, batched, bias);
}

}  // namespace

TEST_CASE("GEMM externs: mm over row-major and transposed operands equals the row-major product") {
  GemmFixture f;
  const std::int64_t m = 3, k = 5, n = 4;
  const run::Tensor a = f.tensor({m, k}, {k, 1}, 1.0f);
  // mat2 as Inductor passes a Linear weight: a [k, n] .t() view of [n, k].
  const run::Tensor b = f.tensor({k, n}, {1, k}, 0.5f);
  const run::Tensor out = f.tensor({m, n}, {n, 1}, 0.0f);
  auto r = call(*f.gemm, false, false, {run::Value{a}, run::Value{b}}, out);
  REQUIRE_MESSAGE(r, r.error().message);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (std::int64_t l = 0; l < k; ++l) want += at(a, {i, l}) * at(b, {l, j});
      CHECK(at(out, {i, j}) == doctest::Approx(want));
    }
}

TEST_CASE("GEMM externs: addmm broadcasts a bias row and applies alpha and beta") {
  GemmFixture f;
  const std::int64_t m = 4, k = 3, n = 5;
  const run::Tensor bias = f.tensor({n}, {1}, 2.0f);
  const run::Tensor a = f.tensor({m, k}, {1, m}, 1.0f);  // transposed view
  const run::Tensor b = f.tensor({k, n}, {n, 1}, 1.0f);
  const run::Tensor out = f.tensor({m, n}, {n, 1}, 9.0f);  // garbage to be overwritten
  auto r = call(*f.gemm, false, true, {run::Value{bias}, run::Value{a}, run::Value{b}}, out,
                {{"alpha", run::Value{std::int64_t{2}}}, {"beta", run::Value{0.5}}});
  REQUIRE_MESSAGE(r, r.error().message);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (std::int64_t l = 0; l < k; ++l) want += at(a, {i, l}) * at(b, {l, j});
      CHECK(at(out, {i, j}) == doctest::Approx(2.0f * want + 0.5f * at(bias, {j})));
    }
}

TEST_CASE("GEMM externs: addmm with a full bias, and bmm with batch strides") {
  GemmFixture f;
  SUBCASE("full bias") {
    const run::Tensor bias = f.tensor({2, 3}, {3, 1}, 1.0f);
    const run::Tensor a = f.tensor({2, 2}, {2, 1}, 1.0f);
    const run::Tensor b = f.tensor({2, 3}, {3, 1}, 1.0f);
    const run::Tensor out = f.tensor({2, 3}, {3, 1}, 0.0f);
    REQUIRE(call(*f.gemm, false, true, {run::Value{bias}, run::Value{a}, run::Value{b}}, out));
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 3; ++j)
        CHECK(at(out, {i, j}) ==
              doctest::Approx(at(bias, {i, j}) + at(a, {i, 0}) * at(b, {0, j}) + at(a, {i, 1}) * at(b, {1, j})));
  }
  SUBCASE("bmm") {
    const std::int64_t batch = 3, m = 2, k = 4, n = 3;
    const run::Tensor a = f.tensor({batch, m, k}, {m * k, k, 1}, 1.0f);
    const run::Tensor b = f.tensor({batch, k, n}, {k * n, 1, k}, 1.0f);  // each matrix transposed
    const run::Tensor out = f.tensor({batch, m, n}, {m * n, n, 1}, 0.0f);
    REQUIRE(call(*f.gemm, true, false, {run::Value{a}, run::Value{b}}, out));
    for (std::int64_t s = 0; s < batch; ++s)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          float want = 0;
          for (std::int64_t l = 0; l < k; ++l) want += at(a, {s, i, l}) * at(b, {s, l, j});
          CHECK(at(out, {s, i, j}) == doctest::Approx(want));
        }
  }
}

TEST_CASE("GEMM externs: refusals name the extern and the argument") {
  GemmFixture f;
  const run::Tensor a = f.tensor({3, 4}, {8, 2}, 1.0f);  // no unit stride
  const run::Tensor b = f.tensor({4, 2}, {2, 1}, 1.0f);
  const run::Tensor out = f.tensor({3, 2}, {2, 1}, 0.0f);
  CHECK(contains(call(*f.gemm, false, false, {run::Value{a}, run::Value{b}}, out).error().message,
                 "extern_kernels.mm: argument 'self' has a layout cuBLAS cannot take"));
  const run::Tensor a2 = f.tensor({3, 5}, {5, 1}, 1.0f);
  CHECK(contains(call(*f.gemm, false, false, {run::Value{a2}, run::Value{b}}, out).error().message,
                 "shapes do not multiply"));
  const run::Tensor host = run::empty_cpu({3, 4}, ir::DType::float32).value();
  CHECK(contains(call(*f.gemm, false, false, {run::Value{host}, run::Value{b}}, out).error().message,
                 "argument 'self' is on the CPU"));
  const run::Tensor a3 = f.tensor({3, 4}, {4, 1}, 1.0f);
  CHECK(contains(call(*f.gemm, true, false, {run::Value{a3}, run::Value{b}}, out).error().message,
                 "extern_kernels.bmm: expects 3-D self, mat2 and out"));
}
