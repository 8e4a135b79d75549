// Host-only checks of the executor's CUDA backend (include/wrapir/run/cuda/):
// what must work, or fail with a clear diagnostic, on a machine with no GPU —
// kernels.json parsing, the Triton provider's refusals before any driver
// call (no entry, no cubin, metadata mismatch, no backend), cuBLAS not found,
// the GEMM operand layouts, and the backend's answer without a device.

#include <wrapir/cuda/context.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#include <wrapir/run/cuda/triton_kernels.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
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
  {"name": "cpp_k", "language": "cpp"}
]})";

/// A temporary export folder: kernels.json and the metadata files.
struct ExportDir {
  fs::path path;
  ExportDir() {
    path = fs::temp_directory_path() / ("wrapir_cuda_host_" + std::to_string(::getpid()));
    fs::create_directories(path / "kernels");
    std::ofstream(path / "kernels.json") << kernels_json;
    std::ofstream(path / "kernels" / "k0.json") << R"({"name": "k0", "num_warps": 4, "shared": 0})";
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
  REQUIRE(entries->size() == 3);  // the C++ kernel is skipped
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
  SUBCASE("a missing kernels.json") {
    auto none = rc::TritonKernelProvider::load(dir.path / "nowhere", nullptr);
    REQUIRE_FALSE(none);
    CHECK(contains(none.error().message, "kernels.json"));
  }
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
