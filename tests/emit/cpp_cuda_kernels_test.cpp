// The C++ emitter's CUDA units with PTX, cubin and CUDA C++ kernels and
// host C++ kernels beside them (emit/cpp.hpp, emit/cpp_cuda.hpp): goldens
// of the unit and its companion .cu, the unit compiled with g++ against
// cuda.h (-Wall -Wextra -Werror), the companion with nvcc where there is
// one, the embedded binaries, and the diagnostics. The program is
// tests/support/cpp_cuda_kernels_program.hpp; the GPU run is
// tests/cuda/cpp_emit_kernels_run_test.cpp.

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/cpp_cuda.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/verify.hpp>

#include <doctest/doctest.h>

#include "support/cpp_cuda_kernels_program.hpp"
#include "support/golden.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace ir = wrapir::ir;
namespace fs = std::filesystem;

#ifdef WRAPIR_SOURCE_DIR
const fs::path source_dir = WRAPIR_SOURCE_DIR;
#else
const fs::path source_dir = ".";
#endif
const fs::path golden_dir = source_dir / "tests/golden/cpp";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The unit without the C interface and the runtime (as cpp_cuda_test.cpp).
std::string without_prelude(std::string out) {
  const std::size_t abi = out.find("/* wrapir/run/c_abi.h");
  const std::size_t abi_end = out.find("#endif /* WRAPIR_RUN_C_ABI_H */");
  if (abi != std::string::npos && abi_end != std::string::npos)
    out.replace(abi, abi_end + 31 - abi, "/* <the C interface of wrapir/run/c_abi.h> */");
  const std::string end = "}  // namespace wrapir_rt_v2\n";
  const std::size_t rt = out.find("\n#include <algorithm>\n");
  const std::size_t cuda_end = out.find(end, out.find("\n#include <cuda.h>\n"));
  if (rt != std::string::npos && cuda_end != std::string::npos)
    out.replace(rt, cuda_end + end.size() - rt,
                "\n/* <the runtime of emit/detail/cpp_runtime.hpp and cpp_cuda_runtime.hpp> */\n");
  return out;
}

std::string emit_ok(const ir::Program& p, const wrapir::cpp::CppOptions& options = {}) {
  auto r = wrapir::cpp::to_cpp(p, options);
  REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? std::string() : r.error().message));
  return r.value();
}

std::string emit_error(const ir::Program& p, const wrapir::cpp::CppOptions& options = {}) {
  auto r = wrapir::cpp::to_cpp(p, options);
  REQUIRE_MESSAGE(!r.has_value(), "expected a diagnostic");
  return r.error().message;
}

fs::path cuda_home() {
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && fs::exists(fs::path(home) / "include/cuda.h"))
    return home;
  if (fs::exists("/usr/local/cuda/include/cuda.h")) return "/usr/local/cuda";
  return {};
}

/// Runs `command` in a fresh directory holding `files`; the log when it
/// fails. False when `tool` is missing.
bool compiles(const std::string& tool, const std::vector<std::pair<std::string, std::string>>& files,
              const std::string& command) {
  if (std::system((tool + " --version > /dev/null 2>&1").c_str()) != 0) {
    MESSAGE("no " << tool << ": not compiled here");
    return false;
  }
  std::string pattern = (fs::temp_directory_path() / "wrapir_cpp_cuda_kernels_XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  const fs::path dir = pattern;
  for (const auto& [name, text] : files) std::ofstream(dir / name, std::ios::binary) << text;
  const int rc = std::system(("cd " + dir.string() + " && " + command + " > log.txt 2>&1").c_str());
  const std::string log = wrapir_test::read_file(dir / "log.txt");
  fs::remove_all(dir);
  REQUIRE_MESSAGE(rc == 0, command << ":\n" << log.substr(0, 4000));
  CHECK(log.empty());
  return true;
}

}  // namespace

TEST_CASE("emit/cpp cuda kernels: the test program is valid") {
  for (const auto language : {ir::KernelLanguage::ptx, ir::KernelLanguage::cubin}) {
    const ir::Program p = wrapir_test::cuda_kernels_program(language, "kernels/test_kernels.ptx");
    const auto findings = ir::verify(p);
    CHECK_MESSAGE(findings.empty(), (findings.empty() ? std::string() : findings.front().message));
  }
}

TEST_CASE("emit/cpp cuda kernels: golden unit and companion") {
  const ir::Program p = wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, "kernels/test_kernels.ptx", 0);
  const std::string unit = emit_ok(p);
  wrapir_test::check_golden_file(golden_dir / "cuda_kernel_languages.cpp", without_prelude(unit));
  // The PTX kernel: a slot of the kernel table, its file relative to the
  // directory _init names, 4 warps, launched over the explicit grid.
  CHECK(contains(unit, "{\"add_kernel\", \"kernels/test_kernels.ptx\", \"add_f32\", 4u, 0u, 0, 0, nullptr,"));
  CHECK(contains(unit, "rt::launch_triton(wrapir_cuda_kernels[0], wrapir_cuda_set, (((s0 + 127L) / 128L)), (1L), (1L)"));
  // The CUDA C++ kernel: declared, called with the run's stream, checked.
  CHECK(contains(unit, "extern \"C\" int wrapir_model_k0_cuda_scale(void*, void*, float, std::int32_t, CUstream);"));
  CHECK(contains(unit, "rt::check_cuda_cpp_kernel(wrapir_model_k0_cuda_scale(wrapir_a0, wrapir_a1, wrapir_a2, wrapir_a3, "
                       "rt::cuda_stream()), \"cuda_scale\");"));
  // The host kernel, defined in the unit.
  CHECK(contains(unit, "extern \"C\" void wrapir_model_k0_cpp_fused_mul_0(const int64_t* in_ptr0"));
  CHECK(!contains(unit, "#define kernel"));
  CHECK(contains(unit, "also compile with their flags"));
  CHECK(contains(unit, "WRAPIR_DEVICE_CUDA};"));
  const std::string cu = wrapir::cpp::cuda_companion(p).value();
  wrapir_test::check_golden_file(golden_dir / "cuda_kernel_languages.cu", cu);
  // Renamed in its own text, not by a macro that would reach into what it includes.
  CHECK(contains(cu, "extern \"C\" int wrapir_model_k0_cuda_scale("));
  CHECK(!contains(cu, "#define"));
  // A program without CUDA C++ kernels has no companion.
  ir::Program plain{"call"};
  CHECK(wrapir::cpp::cuda_companion(plain).value().empty());
}

TEST_CASE("emit/cpp cuda kernels: the unit compiles with g++ against cuda.h, the companion with nvcc") {
  const fs::path home = cuda_home();
  if (home.empty()) {
    MESSAGE("no CUDA Toolkit: not compiled here");
    return;
  }
  for (const auto language : {ir::KernelLanguage::ptx, ir::KernelLanguage::cubin}) {
    const ir::Program p = wrapir_test::cuda_kernels_program(language, "kernels/test_kernels.bin", 0);
    (void)compiles("g++", {{"unit.cpp", emit_ok(p)}},
                   "g++ -std=c++17 -O1 -Wall -Wextra -Werror -fPIC -isystem " + (home / "include").string() +
                       " -c unit.cpp -o unit.o");
  }
  const ir::Program p = wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, "kernels/test_kernels.ptx");
  const std::string nvcc = (home / "bin/nvcc").string();
  if (fs::exists(nvcc))
    (void)compiles(nvcc, {{"companion.cu", wrapir::cpp::cuda_companion(p).value()}},
                   nvcc + " -std=c++17 -O2 -Xcompiler -Wall,-Wextra,-Werror,-fPIC -c companion.cu -o companion.o");
}

TEST_CASE("emit/cpp cuda kernels: PTX and cubin binaries are embedded from the files their definitions name") {
  std::string pattern = (fs::temp_directory_path() / "wrapir_cpp_cuda_images_XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  const fs::path dir = pattern;
  fs::create_directories(dir / "kernels");
  std::ofstream(dir / "kernels/add.ptx", std::ios::binary) << ".version 8.0\n.target sm_90\n";
  const ir::Program p = wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, "kernels/add.ptx");
  auto images = wrapir::cpp::binary_kernel_images(p, dir);
  REQUIRE_MESSAGE(images.has_value(), (images.has_value() ? std::string() : images.error().message));
  REQUIRE(images->size() == 1u);
  CHECK((*images)[0].name == "add_kernel");
  CHECK((*images)[0].symbol == "add_f32");
  wrapir::cpp::CppOptions o;
  o.cuda_kernels = *images;
  const std::string unit = emit_ok(p, o);
  // ".v" = 46, 118: the bytes, NUL-terminated for cuModuleLoadData.
  CHECK(contains(unit, "const unsigned char wrapir_cubin_0[] = {\n    46, 118, 101,"));
  CHECK(contains(unit, ", wrapir_cubin_0, nullptr, nullptr, nullptr},"));
  // A missing file is a diagnostic naming the kernel and the file.
  const ir::Program missing = wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, "kernels/none.ptx");
  auto none = wrapir::cpp::binary_kernel_images(missing, dir);
  REQUIRE_FALSE(none.has_value());
  CHECK(contains(none.error().message, "kernel 'add_kernel'"));
  CHECK(contains(none.error().message, "none.ptx"));
  // Only regular files inside the directory are embedded: not an absolute
  // path, not one climbing out, not a symbolic link at the file (each would
  // copy another file, /etc/passwd here, into the unit).
  for (const char* outside : {"/etc/passwd", "../../../../etc/passwd", "kernels/../../x.ptx"}) {
    auto refused = wrapir::cpp::binary_kernel_images(wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, outside), dir);
    REQUIRE_FALSE(refused.has_value());
    CHECK(contains(refused.error().message, "only files under the kernel directory are embedded"));
    CHECK((contains(refused.error().message, "is absolute") || contains(refused.error().message, "leaves the kernel directory")));
  }
  fs::create_symlink("/etc/passwd", dir / "kernels/link.ptx");
  auto linked = wrapir::cpp::binary_kernel_images(wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, "kernels/link.ptx"), dir);
  REQUIRE_FALSE(linked.has_value());
  CHECK(contains(linked.error().message, "symbolic link"));
  fs::remove_all(dir);
}

TEST_CASE("emit/cpp cuda kernels: what cannot be launched gets a diagnostic naming the line and kernel") {
  const auto program = [] { return wrapir_test::cuda_kernels_program(ir::KernelLanguage::ptx, "k.ptx"); };
  SUBCASE("a PTX kernel without num_warps") {
    ir::Program p = program();
    for (ir::Line& line : p.body)
      if (auto* l = std::get_if<ir::KernelDefinition>(&line)) l->metadata->num_warps.reset();
    const std::string why = emit_error(p);
    CHECK(contains(why, "(KernelDefinition)"));
    CHECK(contains(why, "kernel 'add_kernel' (PTX) has no num_warps in its metadata"));
  }
  SUBCASE("a PTX kernel launched without an explicit grid") {
    ir::Program p = program();
    for (ir::Line& line : p.body)
      if (auto* l = std::get_if<ir::KernelCall>(&line); l != nullptr && l->kernel.index == 0) l->grid = ir::LauncherGrid{};
    const std::string why = emit_error(p);
    CHECK(contains(why, "(KernelCall)"));
    CHECK(contains(why, "kernel 'add_kernel' is a PTX kernel"));
    CHECK(contains(why, "launched over an explicit grid"));
  }
  SUBCASE("a CUDA C++ kernel given a grid") {
    ir::Program p = program();
    for (ir::Line& line : p.body)
      if (auto* l = std::get_if<ir::KernelCall>(&line); l != nullptr && l->kernel.index == 1)
        l->grid = ir::ExplicitGrid{p.ctx().integer(1), p.ctx().integer(1), p.ctx().integer(1)};
    const std::string why = emit_error(p);
    CHECK(contains(why, "(KernelCall)"));
    CHECK(contains(why, "kernel 'cuda_scale' is a CUDA C++ kernel"));
    CHECK(contains(why, "launches its device code itself"));
  }
  SUBCASE("embedded bytes of another file than the definition names") {
    wrapir::cpp::CudaKernelLaunch e;
    e.name = "add_kernel";
    e.cubin = "other.ptx";
    e.symbol = "add_f32";
    e.image = ".version 8.0\n";
    wrapir::cpp::CppOptions o;
    o.cuda_kernels = {e};
    CHECK(contains(emit_error(program(), o), "embeds the bytes of 'other.ptx', its definition names 'k.ptx'"));
  }
  SUBCASE("a CUDA C++ kernel whose name is no C identifier has no companion") {
    ir::Program p = program();
    p.kernels[1].name = "wrapir__x";
    auto cu = wrapir::cpp::cuda_companion(p);
    REQUIRE_FALSE(cu.has_value());
    CHECK(contains(cu.error().message, "is not a C identifier"));
  }
}
