// The C++ emitter on CUDA programs (emit/cpp.hpp, emit/cpp_cuda.hpp):
// goldens for a real Inductor export (tests/cuda/data/mlp_layernorm_gelu)
// and a builder program with symbolic grids, a workspace, a device scalar,
// pools and views; the launch configurations read from an export; the
// diagnostics; and every emitted unit compiled with the local g++ against
// the CUDA Toolkit's cuda.h with -Wall -Wextra -Werror (the toolkit is
// installed without a GPU; the run itself is tests/cuda/cpp_emit_run_test.cpp).
//
// Goldens: tests/golden/cpp/<name>.cpp, with the C interface and both
// runtime parts cut out; WRAPIR_UPDATE_GOLDEN=1 rewrites them.

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/cpp_cuda.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/pass/arena.hpp>

#include <doctest/doctest.h>

#include "support/golden.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
namespace fs = std::filesystem;

#ifdef WRAPIR_SOURCE_DIR
const fs::path source_dir = WRAPIR_SOURCE_DIR;
#else
const fs::path source_dir = ".";
#endif
const fs::path golden_dir = source_dir / "tests/golden/cpp";
const fs::path export_dir = source_dir / "tests/cuda/data/mlp_layernorm_gelu";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The unit without the C interface and the two runtime parts.
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

std::string emit_ok(const ir::Program& p, const wrapir::cpp::CppOptions& options) {
  auto r = wrapir::cpp::to_cpp(p, options);
  REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? std::string() : r.error().message));
  return r.value();
}

std::string emit_error(const ir::Program& p, const wrapir::cpp::CppOptions& options) {
  auto r = wrapir::cpp::to_cpp(p, options);
  REQUIRE_MESSAGE(!r.has_value(), "expected a diagnostic");
  return r.error().message;
}

ir::Program export_program() {
  const std::string text = wrapir_test::read_file(export_dir / "program.json");
  auto p = wrapir::io::program_from_json(text);
  REQUIRE_MESSAGE(p.has_value(), (p.has_value() ? std::string() : p.error().message));
  return std::move(p).value();
}

wrapir::cpp::CppOptions export_options(bool embed = false) {
  auto k = wrapir::cpp::cuda_kernels_from_export(export_dir, embed);
  REQUIRE_MESSAGE(k.has_value(), (k.has_value() ? std::string() : k.error().message));
  wrapir::cpp::CppOptions o;
  o.cuda_kernels = *std::move(k);
  return o;
}

/// `y = -x` over a dynamic size (grid: ceil(s0 / 256)), a zeroed
/// workspace, a reduction into a one-element int64 whose value is read on
/// the host (`.item()`, an unbacked symbol), a view, an extern mm, and a
/// launch constant (`ynumel` = 1, which the cubin no longer takes).
ir::Program features() {
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cuda_device(0));
  auto& ctx = p.ctx();
  const ex::Expr s0 = b.size_symbol("s0", 1000);
  const auto x = b.input("arg1_1", {s0}, wrapir::f32);
  const auto m = b.input("arg2_1", {ctx.integer(4), ctx.integer(4)}, wrapir::f32);
  b.enter_device(wrapir::cuda_device(0));
  const auto neg = b.triton_kernel("triton_poi_fused_neg_0", "@triton.jit\ndef triton_poi_fused_neg_0(): pass\n",
                                   "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32, ynumel: i32");
  const auto y = b.empty({s0}, wrapir::f32);
  b.call(neg, {x, y, s0, 1});
  const auto count = b.triton_kernel("triton_red_fused_count_1", "@triton.jit\ndef triton_red_fused_count_1(): pass\n",
                                     "in_ptr0: *fp32, out_ptr0: *i64, ws_ptr: *u8, xnumel: i32, r0_numel: i32");
  const auto n = b.empty({}, wrapir::i64);
  const auto ws = b.workspace(ctx.integer(64), ir::WorkspaceZeroMode::zero_on_call);
  b.call(count, {y, n, ws, 1, s0});
  b.free({ws});
  const ex::Expr u0 = b.unbacked_symbol("u0");
  b.dynamic_scalar(u0, n);
  const auto half = b.view(y, {ex::floor_div(s0, ctx.integer(2))}, {ctx.integer(1)}, ctx.integer(0));
  const auto mm = b.empty({ctx.integer(4), ctx.integer(4)}, wrapir::f32);
  b.extern_out("extern_kernels.mm", {m, m}, ir::BufferArg{mm, std::nullopt});
  b.exit_device();
  b.output(half);
  b.output(mm);
  b.output(u0);
  return p;
}

wrapir::cpp::CppOptions features_options() {
  wrapir::cpp::CppOptions o;
  wrapir::cpp::CudaKernelLaunch neg;
  neg.name = "triton_poi_fused_neg_0";
  neg.cubin = "kernels/triton_poi_fused_neg_0.cubin";
  neg.symbol = "triton_poi_fused_neg_0";
  neg.num_warps = 4;
  neg.constants = {{"XBLOCK", 256}};
  neg.launch_constants = {{"ynumel", 1}};
  wrapir::cpp::CudaKernelLaunch count;
  count.name = "triton_red_fused_count_1";
  count.cubin = "kernels/triton_red_fused_count_1.cubin";
  count.symbol = "triton_red_fused_count_1";
  count.num_warps = 8;
  count.shared_bytes = 64 * 1024;  // above 48 KB: the function opts in when loaded
  count.grid_type = ir::GridType::grid_1d;
  count.constants = {{"XBLOCK", 1}, {"R0_BLOCK", 2048}};
  count.global_scratch_bytes = 128;
  count.image = std::string("\x7f" "ELF fake cubin \x00\xff", 18);
  o.cuda_kernels = {neg, count};
  return o;
}

/// The CUDA Toolkit's include directory, or empty.
fs::path cuda_include() {
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && fs::exists(fs::path(home) / "include/cuda.h"))
    return fs::path(home) / "include";
  if (fs::exists("/usr/local/cuda/include/cuda.h")) return "/usr/local/cuda/include";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/local", ec))
    if (e.path().filename().string().rfind("cuda", 0) == 0 && fs::exists(e.path() / "include/cuda.h"))
      return e.path() / "include";
  return {};
}

/// Compiles `unit` to an object with g++ -std=c++17 -O1 -Wall -Wextra
/// -Werror against cuda.h; false (with a message) when there is no g++ or
/// no toolkit.
bool compile_clean(const std::string& unit, const std::string& name) {
  const fs::path include = cuda_include();
  if (include.empty() || std::system("g++ --version > /dev/null 2>&1") != 0) {
    MESSAGE("no g++ or no CUDA Toolkit headers: the emitted CUDA unit is not compiled here");
    return false;
  }
  std::string pattern = (fs::temp_directory_path() / "wrapir_cpp_cuda_test_XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  const fs::path dir = pattern;
  std::ofstream(dir / (name + ".cpp"), std::ios::binary) << unit;
  const std::string command = "g++ -std=c++17 -O1 -Wall -Wextra -Werror -fPIC -isystem " + include.string() + " -c " +
                              (dir / (name + ".cpp")).string() + " -o " + (dir / (name + ".o")).string() + " > " +
                              (dir / "log.txt").string() + " 2>&1";
  const int rc = std::system(command.c_str());
  const std::string log = wrapir_test::read_file(dir / "log.txt");
  fs::remove_all(dir);
  REQUIRE_MESSAGE(rc == 0, "the emitted CUDA unit does not compile cleanly:\n" << log.substr(0, 4000));
  CHECK(log.empty());
  return true;
}

}  // namespace

TEST_CASE("emit/cpp cuda: the launch configurations of an export are read from kernels.json and the metadata") {
  const wrapir::cpp::CppOptions o = export_options();
  REQUIRE(o.cuda_kernels.size() == 2);
  const wrapir::cpp::CudaKernelLaunch& ln = o.cuda_kernels[0];
  CHECK(ln.name == "triton_per_fused_native_layer_norm_0");
  CHECK(ln.symbol == "triton_per_fused_native_layer_norm_0");
  CHECK(ln.cubin == "kernels/triton_per_fused_native_layer_norm_0.cubin");
  CHECK(ln.num_warps == 2);
  CHECK(ln.shared_bytes == 1024);
  CHECK(ln.grid_type == ir::GridType::grid_1d);
  REQUIRE(ln.constants.size() == 1);
  CHECK(ln.constants[0] == std::pair<std::string, std::int64_t>{"XBLOCK", 8});
  CHECK(ln.image.empty());
  const wrapir::cpp::CppOptions embedded = export_options(true);
  CHECK(embedded.cuda_kernels[1].image.size() == fs::file_size(export_dir / embedded.cuda_kernels[1].cubin));
}

TEST_CASE("emit/cpp cuda: a bad export is a diagnostic naming the file and why") {
  std::string pattern = (fs::temp_directory_path() / "wrapir_cpp_cuda_export_XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  const fs::path dir = pattern;
  fs::create_directories(dir / "kernels");
  fs::copy_file(export_dir / "kernels/triton_poi_fused_addmm_gelu_1.json", dir / "kernels/k.json");
  auto write_list = [&](const std::string& entry) {
    std::ofstream(dir / "kernels.json") << "{\"kernels\": [{\"name\": \"k\", \"language\": \"triton\", "
                                           "\"cubin\": \"kernels/k.cubin\", \"metadata\": \"kernels/k.json\", " +
                                               entry + "}]}";
  };
  auto error = [&] {
    auto r = wrapir::cpp::cuda_kernels_from_export(dir);
    REQUIRE_FALSE(r.has_value());
    return r.error().message;
  };
  write_list("\"grid_type\": \"Grid1D\", \"num_warps\": 8");
  CHECK(contains(error(), "metadata mismatch: kernels.json says num_warps 8"));
  write_list("\"grid_type\": \"Grid9D\"");
  CHECK(contains(error(), "unknown or missing grid_type 'Grid9D'"));
  write_list("\"grid_type\": \"Grid1D\", \"symbol\": \"other\"");
  CHECK(contains(error(), "symbol 'other'"));
  std::ofstream(dir / "kernels.json") << "{\"kernels\": [{\"name\": \"k\", \"cubin\": \"../k.cubin\", \"metadata\": "
                                         "\"kernels/k.json\", \"grid_type\": \"Grid1D\"}]}";
  CHECK(contains(error(), "its file '../k.cubin' leaves the export directory"));
  std::ofstream(dir / "kernels.json") << "{\"kernels\": [{\"name\": \"k\", \"cubin\": \"kernels/k.cubin\", \"metadata\": "
                                         "\"/etc/k.json\", \"grid_type\": \"Grid1D\"}]}";
  CHECK(contains(error(), "its file '/etc/k.json' is absolute; it must be relative to the export directory"));
  std::ofstream(dir / "kernels.json") << "{\"kernels\": 3}";
  CHECK(contains(error(), "no 'kernels' array"));
  fs::remove_all(dir);
}

TEST_CASE("emit/cpp cuda: golden units") {
  const std::string mlp = emit_ok(export_program(), export_options());
  wrapir_test::check_golden_file(golden_dir / "cuda_mlp_layernorm_gelu.cpp", without_prelude(mlp));
  const std::string f = emit_ok(features(), features_options());
  wrapir_test::check_golden_file(golden_dir / "cuda_features.cpp", without_prelude(f));
  // The launcher's grid rule as C++ ceiling division over the dynamic size.
  CHECK(contains(f, "rt::launch_triton(wrapir_cuda_kernels[0], wrapir_cuda_set, (((s0 + 255L) / 256L)), (1L), (1L)"));
  // The launch constant is passed by the call but not to the cubin.
  CHECK(contains(f, "void* wrapir_args[] = {&wrapir_a0, &wrapir_a1, &wrapir_a2, nullptr, nullptr};"));
  CHECK(contains(f, "rt::cuda_empty_strided("));
  CHECK(contains(f, "rt::zero_storage(workspace_0);"));
  CHECK(contains(f, "WRAPIR_DEVICE_CUDA};"));
  CHECK(contains(f, "extern \"C\" int wrapir_model_init(const char* kernel_directory"));
  // The embedded cubin, byte for byte.
  CHECK(contains(f, "const unsigned char wrapir_cubin_1[] = {\n    127, 69, 76, 70,"));
  CHECK(contains(f, "0, 255,\n    0};"));
}

TEST_CASE("emit/cpp cuda: an arena-planned CUDA program carves one device allocation") {
  auto planned = wrapir::pass::plan_arena(features());
  REQUIRE_MESSAGE(planned.has_value(), (planned.has_value() ? std::string() : planned.error().message));
  const std::string unit = emit_ok(planned->program, features_options());
  CHECK(contains(unit, "= rt::cuda_allocate("));
  CHECK(contains(unit, "rt::alloc_from_pool("));
  CHECK_FALSE(contains(unit, " = rt::allocate("));
  (void)compile_clean(unit, "arena");
}

TEST_CASE("emit/cpp cuda: the emitted units compile with g++ against cuda.h without warnings") {
  (void)compile_clean(emit_ok(export_program(), export_options()), "mlp");
  (void)compile_clean(emit_ok(features(), features_options()), "features");
  wrapir::cpp::CppOptions embedded = export_options(true);
  embedded.entry_prefix = "mlp";
  const std::string unit = emit_ok(export_program(), embedded);
  CHECK(contains(unit, "extern \"C\" int mlp_run("));
  (void)compile_clean(unit, "embedded");
}

TEST_CASE("emit/cpp cuda: programs it cannot render get a diagnostic naming the line and kernel") {
  SUBCASE("a Triton kernel without a launch configuration") {
    const std::string why = emit_error(export_program(), {});
    CHECK(contains(why, "line 1 (KernelDefinition)"));
    CHECK(contains(why, "Triton kernel 'triton_per_fused_native_layer_norm_0' has no launch configuration"));
  }
  SUBCASE("a launch constant that is no parameter") {
    wrapir::cpp::CppOptions o = features_options();
    o.cuda_kernels[0].launch_constants = {{"znumel", 1}};
    const std::string why = emit_error(features(), o);
    CHECK(contains(why, "(KernelCall)"));
    CHECK(contains(why, "the launch constant 'znumel' is no parameter"));
  }
  SUBCASE("a configuration named twice, or without a cubin") {
    wrapir::cpp::CppOptions o = features_options();
    o.cuda_kernels.push_back(o.cuda_kernels[0]);
    CHECK(contains(emit_error(features(), o), "names kernel 'triton_poi_fused_neg_0' twice"));
    o = features_options();
    o.cuda_kernels[0].cubin.clear();
    CHECK(contains(emit_error(features(), o), "has no symbol or no cubin"));
    o = features_options();
    o.cuda_kernels[0].num_warps = 64;
    CHECK(contains(emit_error(features(), o), "num_warps outside 1..32"));
  }
  SUBCASE("a grid type whose block sizes are missing") {
    wrapir::cpp::CppOptions o = features_options();
    o.cuda_kernels[0].constants.clear();
    const std::string why = emit_error(features(), o);
    CHECK(contains(why, "kernel 'triton_poi_fused_neg_0'"));
    CHECK(contains(why, "XBLOCK"));
  }
  SUBCASE("a host buffer passed to a Triton kernel's pointer of another dtype") {
    ir::Program p = features();
    p.buffers[0].layout.dtype = ir::DType::float64;
    CHECK(contains(emit_error(p, features_options()), "but the parameter is *fp32"));
  }
  SUBCASE("a buffer on a device that is neither the CPU nor CUDA") {
    ir::Program p = features();
    p.buffers[0].layout.device = ir::Device{ir::DeviceType::mps, 0};
    CHECK(contains(emit_error(p, features_options()), "renders CPU and CUDA programs only"));
  }
}

TEST_CASE("emit/cpp cuda: a multi-kernel launches its first candidate with that candidate's arguments") {
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cuda_device(0));
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
  const auto y = b.empty({ctx.integer(64)}, wrapir::f32);
  const auto a = b.triton_kernel("triton_red_a_0", "@triton.jit\ndef a(): pass\n", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  const auto c = b.triton_kernel("triton_red_b_0", "@triton.jit\ndef b(): pass\n", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  const auto multi = b.multi_kernel({a, c});
  b.call_multi(multi, {x, y, 64});
  b.output(y);
  wrapir::cpp::CppOptions o;
  for (const char* name : {"triton_red_a_0", "triton_red_b_0"}) {
    wrapir::cpp::CudaKernelLaunch l;
    l.name = name;
    l.cubin = std::string(name) + ".cubin";
    l.symbol = name;
    l.constants = {{"XBLOCK", 32}};
    o.cuda_kernels.push_back(l);
  }
  const std::string unit = emit_ok(p, o);
  CHECK(contains(unit, "/* multi-kernel multi_kernel_0: calls its first candidate, triton_red_a_0 */"));
  CHECK(contains(unit, "rt::launch_triton(wrapir_cuda_kernels[0], wrapir_cuda_set, (2L), (1L), (1L), wrapir_args, 3);"));
  (void)compile_clean(unit, "multi");
  // A slice outside the call's arguments is refused, naming the multi-kernel.
  for (ir::Line& l : p.body)
    if (auto* d = std::get_if<ir::MultiKernelDefinition>(&l)) d->arg_index = {{ir::ArgSlice{0, 5}}, {ir::ArgSlice{0, 3}}};
  CHECK(contains(emit_error(p, o), "the argument slice [0, 5) of multi-kernel 'multi_kernel_0' is outside its 3 arguments"));
}
