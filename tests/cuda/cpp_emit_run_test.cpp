// The C++ emitter's CUDA units on a GPU (emit/cpp.hpp): the real export in
// tests/cuda/data/mlp_layernorm_gelu (two Triton kernels, extern mm and
// addmm) emitted as a standalone unit, compiled with g++ (or nvcc) against
// the CUDA Toolkit's cuda.h with -Wall -Wextra -Werror, linked with -lcuda,
// loaded with dlopen and run through its C entry point on the CUDA
// backend's stream, the externs served from the executor's cuBLAS registry
// through run/c_abi_adapter.hpp; the output compared with eager PyTorch's
// saved beside the export. Reports itself skipped without a device, on a GPU
// that is not sm_90 (the cubins' architecture), without cuBLAS, or without
// a compiler and cuda.h.

#include "gpu_test_main.hpp"
#include "support/cpp_unit_loader.hpp"
#include "support/cuda_export.hpp"

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/cpp_cuda.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/run/c_abi.h>
#include <wrapir/run/c_abi_adapter.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/cuda/cublas.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>
#endif

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
namespace rc = wrapir::run::cuda;
namespace fs = std::filesystem;
using wrapir_test::contains;
using wrapir_test::must;

const fs::path data = wrapir_test::mlp_export_dir();
using wrapir_test::read_text;
using wrapir_test::to_device;
using wrapir_test::to_host;

using Unit = wrapir_test::LoadedUnit;

/// The unit compiled to a shared object and loaded; an empty Unit when
/// there is no compiler or toolkit.
Unit compile_and_load(const std::string& source, const std::string& prefix) {
  const fs::path home = wrapir_test::cuda_home();
  if (home.empty() || std::system("g++ --version > /dev/null 2>&1") != 0) return {};
  const fs::path dir = wrapir_test::scratch_directory("wrapir_cpp_cuda_run");
  std::ofstream(dir / "unit.cpp", std::ios::binary) << source;
  std::string link = "-lcuda";
  if (fs::exists(home / "lib64/stubs/libcuda.so")) link = "-L" + (home / "lib64/stubs").string() + " -lcuda";
  const std::string command = "g++ -std=c++17 -O2 -Wall -Wextra -Werror -shared -fPIC -isystem " +
                              (home / "include").string() + " " + (dir / "unit.cpp").string() + " -o " +
                              (dir / "unit.so").string() + " " + link + " > " + (dir / "log.txt").string() + " 2>&1";
  const int rc = std::system(command.c_str());
  const std::string log = read_text(dir / "log.txt");
  REQUIRE_MESSAGE(rc == 0, "the emitted CUDA unit does not compile cleanly:\n" << log.substr(0, 4000));
  CHECK(log.empty());
  Unit u = wrapir_test::load_unit(dir / "unit.so", prefix);
  fs::remove_all(dir);
  return u;
}

void run_and_compare(bool embed) {
  ir::Program program = wrapir_test::load_export_program();
  wrapir::cpp::CppOptions options;
  options.cuda_kernels = must(wrapir::cpp::cuda_kernels_from_export(data, embed));
  options.entry_prefix = "mlp";
  const std::string source = must(wrapir::cpp::to_cpp(program, options));
  Unit unit = compile_and_load(source, "mlp");
  if (unit.handle == nullptr) {
    MESSAGE("no g++ or no CUDA Toolkit headers: not run");
    return;
  }
  auto backend = must(rc::CudaBackend::create(0));
  run::c_abi::CExternTable externs(rc::cublas_externs(backend));
  const wrapir_extern_table table = externs.table();
  char message[2048] = {0};
  if (!embed) {
    // Before init, the unit does not know where its cubins are.
    const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
    std::vector<run::Value> in;
    for (const ir::ProgramInput& x : program.inputs)
      in.push_back(run::Value{to_device(*backend, *inputs_file.find(program.buffer(boost::variant2::get<ir::BufferId>(x)).name))});
    auto borrowed = must(run::c_abi::borrow(in));
    std::vector<wrapir_value> out(program.outputs.size());
    const int rc0 = unit.run(&table, borrowed.data(), borrowed.size(), out.data(), out.size(), backend->stream(), message,
                             sizeof message);
    CHECK(rc0 == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(contains(message, "line 6 (KernelCall 'triton_per_fused_native_layer_norm_0')"));
    CHECK(contains(message, "call its _init first"));
    REQUIRE(unit.init(data.c_str(), message, sizeof message) == WRAPIR_OK);
  }
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  const auto expected_file = wrapir_test::load_export_tensors("outputs.safetensors");
  const run::Tensor* expected = expected_file.find("out0");
  REQUIRE(expected != nullptr);
  const auto* want = static_cast<const float*>(expected->data());
  for (int call = 0; call < 3; ++call) {
    std::vector<run::Value> in;
    for (const ir::ProgramInput& x : program.inputs) {
      const run::Tensor* t = inputs_file.find(program.buffer(boost::variant2::get<ir::BufferId>(x)).name);
      REQUIRE(t != nullptr);
      in.push_back(run::Value{to_device(*backend, *t)});
    }
    must(backend->synchronize());
    auto borrowed = must(run::c_abi::borrow(in));
    std::vector<wrapir_value> out(program.outputs.size());
    const int rc = unit.run(&table, borrowed.data(), borrowed.size(), out.data(), out.size(), backend->stream(), message,
                            sizeof message);
    REQUIRE_MESSAGE(rc == WRAPIR_OK, message);
    run::Value v = must(run::c_abi::adopt(out[0]));
    const run::Tensor& got_tensor = *v.get_if<run::Tensor>();
    CHECK(got_tensor.device().type == ir::DeviceType::cuda);
    CHECK(got_tensor.sizes == expected->sizes);
    const std::vector<float> got = to_host(*backend, got_tensor);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - double(want[i])));
    MESSAGE("call " << call << std::string(embed ? " (embedded cubins)" : "") << ": largest difference from eager "
                    << worst);
    CHECK(worst < 1e-4);
  }
  must(backend->synchronize());
}

}  // namespace

TEST_CASE("an emitted CUDA unit runs the real export through its C entry point and matches eager PyTorch") {
  run_and_compare(false);
}

TEST_CASE("with its cubins embedded, an emitted CUDA unit needs no files") { run_and_compare(true); }

TEST_CASE("an input in host memory where the program wants the GPU is refused, naming it") {
  ir::Program program = wrapir_test::load_export_program();
  wrapir::cpp::CppOptions options;
  options.cuda_kernels = must(wrapir::cpp::cuda_kernels_from_export(data));
  options.entry_prefix = "mlp_host";
  Unit unit = compile_and_load(must(wrapir::cpp::to_cpp(program, options)), "mlp_host");
  if (unit.handle == nullptr) return;
  auto backend = must(rc::CudaBackend::create(0));
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  std::vector<run::Value> in;
  for (const ir::ProgramInput& x : program.inputs)
    in.push_back(run::Value{*inputs_file.find(program.buffer(boost::variant2::get<ir::BufferId>(x)).name)});
  auto borrowed = must(run::c_abi::borrow(in));
  std::vector<wrapir_value> out(program.outputs.size());
  char message[1024] = {0};
  run::c_abi::CExternTable externs(rc::cublas_externs(backend));
  const wrapir_extern_table table = externs.table();
  const int rc = unit.run(&table, borrowed.data(), borrowed.size(), out.data(), out.size(), backend->stream(), message,
                          sizeof message);
  CHECK(rc == WRAPIR_ERROR_INVALID_ARGUMENT);
  CHECK(contains(message, "input 0 ('arg0_1') is in host memory, the program expects it in device memory"));
}

namespace {

/// The lines a unit's debug printer hands its sink.
struct DebugLines {
  std::vector<std::string> lines;
  static void write(void* host, const char* line) { static_cast<DebugLines*>(host)->lines.emplace_back(line); }
};

/// The float32 elements of a .npy file the debug printer wrote.
std::vector<float> read_npy_f32(const fs::path& path) {
  const std::string bytes = read_text(path);
  REQUIRE(bytes.size() > 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const std::size_t header = std::size_t(static_cast<unsigned char>(bytes[8])) | std::size_t(static_cast<unsigned char>(bytes[9])) << 8;
  REQUIRE(bytes.find("'descr': '<f4'") != std::string::npos);
  const std::size_t start = 10 + header;
  std::vector<float> out((bytes.size() - start) / sizeof(float));
  std::memcpy(out.data(), bytes.data() + start, out.size() * sizeof(float));
  return out;
}

/// The number after `key=` in a printed line.
double field(const std::string& line, const std::string& key) {
  const std::size_t at = line.find(" " + key + "=");
  REQUIRE_MESSAGE(at != std::string::npos, line);
  return std::strtod(line.c_str() + at + key.size() + 2, nullptr);
}

/// One run of the export through a unit emitted with the debug printer;
/// none when there is no compiler or toolkit to build the unit.
std::optional<DebugLines> run_debug_unit(const wrapir::cpp::CppOptions& options) {
  ir::Program program = wrapir_test::load_export_program();
  Unit unit = compile_and_load(must(wrapir::cpp::to_cpp(program, options)), options.entry_prefix);
  if (unit.handle == nullptr) {
    MESSAGE("no g++ or no CUDA Toolkit headers: not run");
    return std::nullopt;
  }
  DebugLines sink;
  using SinkFn = void (*)(void (*)(void*, const char*), void*);
  const auto set_sink = unit.entry<SinkFn>(options.entry_prefix, "debug_sink");
  REQUIRE(reinterpret_cast<void*>(set_sink) != nullptr);
  set_sink(&DebugLines::write, &sink);
  auto backend = must(rc::CudaBackend::create(0));
  run::c_abi::CExternTable externs(rc::cublas_externs(backend));
  const wrapir_extern_table table = externs.table();
  const auto inputs_file = wrapir_test::load_export_tensors("inputs.safetensors");
  std::vector<run::Value> in;
  for (const ir::ProgramInput& x : program.inputs)
    in.push_back(run::Value{to_device(*backend, *inputs_file.find(program.buffer(boost::variant2::get<ir::BufferId>(x)).name))});
  must(backend->synchronize());
  auto borrowed = must(run::c_abi::borrow(in));
  std::vector<wrapir_value> out(program.outputs.size());
  char message[2048] = {0};
  const int rc = unit.run(&table, borrowed.data(), borrowed.size(), out.data(), out.size(), backend->stream(), message,
                          sizeof message);
  REQUIRE_MESSAGE(rc == WRAPIR_OK, message);
  run::Value v = must(run::c_abi::adopt(out[0]));
  must(backend->synchronize());
  return sink;
}

wrapir::cpp::CppOptions debug_options(int level, const std::string& prefix) {
  wrapir::cpp::CppOptions options;
  options.cuda_kernels = must(wrapir::cpp::cuda_kernels_from_export(data, true));
  options.entry_prefix = prefix;
  options.debug_level = level;
  return options;
}

}  // namespace

TEST_CASE("the debug printer of an emitted CUDA unit reads device tensors: level 2 prints their statistics") {
  const std::optional<DebugLines> printed = run_debug_unit(debug_options(2, "mlp_debug2"));
  if (!printed) return;
  const DebugLines& sink = *printed;
  REQUIRE(sink.lines.size() > 7);
  CHECK(sink.lines[0].rfind("[  aoti_model_inputs - arg0_1: float32 cuda sizes=[64] strides=[1] offset=0 numel=64 min=", 0) == 0);
  // The output, after the last extern, against eager's.
  const auto expected_file = wrapir_test::load_export_tensors("outputs.safetensors");
  const run::Tensor* expected = expected_file.find("out0");
  REQUIRE(expected != nullptr);
  const auto* want = static_cast<const float*>(expected->data());
  const auto count = static_cast<std::size_t>(expected->numel());
  double low = want[0], high = want[0], sum = 0;
  for (std::size_t i = 0; i < count; ++i) {
    low = std::min<double>(low, want[i]);
    high = std::max<double>(high, want[i]);
    sum += want[i];
  }
  const std::string prefix = "[  after_launch - extern_kernels.addmm - buf6: float32 cuda sizes=[32, 64] strides=[64, 1]";
  const auto line = std::find_if(sink.lines.begin(), sink.lines.end(),
                                 [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
  REQUIRE_MESSAGE(line != sink.lines.end(), "no line starts with " << prefix);
  CHECK(field(*line, "min") == doctest::Approx(low).epsilon(1e-4));
  CHECK(field(*line, "max") == doctest::Approx(high).epsilon(1e-4));
  CHECK(field(*line, "mean") == doctest::Approx(sum / double(count)).epsilon(1e-3));
  // Every Triton launch is wrapped too.
  CHECK(std::any_of(sink.lines.begin(), sink.lines.end(), [](const std::string& l) {
    return l.rfind("[  before_launch - triton_poi_fused_addmm_gelu_1 - buf5: float32 cuda sizes=[32, 256]", 0) == 0;
  }));
}

TEST_CASE("the debug printer of an emitted CUDA unit saves device tensors as .npy at level 1, as filtered") {
  const fs::path saved = wrapir_test::scratch_directory("wrapir_cpp_cuda_debug");
  wrapir::cpp::CppOptions options = debug_options(1, "mlp_debug1");
  options.debug_save_directory = saved.string();
  options.debug_kernel_filter = {"EXTERN_KERNELS.ADDMM"};
  const std::optional<DebugLines> sink = run_debug_unit(options);
  if (!sink) return;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(saved)) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  // Only the filtered extern's arguments: before and after, each of its
  // three tensor arguments and its output.
  CHECK(files.size() == 8);
  for (const std::string& f : files) CHECK_MESSAGE(contains(f, "extern_kernels.addmm"), f);
  const fs::path out = saved / "after_launch_extern_kernels.addmm_buf6.npy";
  REQUIRE_MESSAGE(fs::exists(out), "files: " << files.size());
  const std::vector<float> got = read_npy_f32(out);
  const auto expected_file = wrapir_test::load_export_tensors("outputs.safetensors");
  const run::Tensor* expected = expected_file.find("out0");
  REQUIRE(got.size() == static_cast<std::size_t>(expected->numel()));
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(double(got[i]) - double(static_cast<const float*>(expected->data())[i])));
  CHECK(worst < 1e-4);
  CHECK(sink->lines.empty());  // level 1 prints nothing
  fs::remove_all(saved);
}

int main(int argc, char** argv) {
  if (auto why = wrapir::cuda::no_device_reason()) return wrapir_test::run_gpu_tests(argc, argv);  // prints the skip
  auto info = wrapir::cuda::device_info(0);
  if (info && info->compute_major != 9) {
    std::printf("skipped: the exported cubins are sm_90, this GPU is sm_%d%d\n", info->compute_major,
                info->compute_minor);
    return 77;
  }
  if (auto lib = rc::cublas_library(); !lib) {
    std::printf("skipped: %s\n", lib.error().message.c_str());
    return 77;
  }
  return wrapir_test::run_gpu_tests(argc, argv);
}
