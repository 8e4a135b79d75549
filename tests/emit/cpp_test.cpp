// The C++ emitter (emit/cpp.hpp): golden units for builder programs, the
// embedded C interface, escaping, the diagnostics of programs it cannot
// render, and emitted programs compiled with g++ -Wall -Wextra -Werror,
// loaded and run through the C entry point with externs served by
// run/c_abi_adapter.hpp.
//
// Goldens live in tests/golden/cpp/<name>.cpp and are compared byte for
// byte (the runtime prelude and C interface are cut out: they have tests of
// their own); WRAPIR_UPDATE_GOLDEN=1 rewrites them.

#include <wrapir/emit/cpp.hpp>
#include <wrapir/emit/targets.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/c_abi.h>
#include <wrapir/run/c_abi_adapter.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <doctest/doctest.h>

#include "support/golden.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
namespace run = wrapir::run;

#ifdef WRAPIR_SOURCE_DIR
const std::filesystem::path source_dir = WRAPIR_SOURCE_DIR;
#else
const std::filesystem::path source_dir = ".";
#endif
const std::filesystem::path golden_dir = source_dir / "tests/golden/cpp";

using wrapir_test::read_file;

/// The unit without its fixed parts (the C interface and the runtime),
/// which would make every golden restate them.
std::string without_prelude(const std::string& unit) {
  std::string out = unit;
  const std::size_t abi = out.find("/* wrapir/run/c_abi.h");
  const std::size_t abi_end = out.find("#endif /* WRAPIR_RUN_C_ABI_H */");
  if (abi != std::string::npos && abi_end != std::string::npos)
    out.replace(abi, abi_end + 31 - abi, "/* <the C interface of wrapir/run/c_abi.h> */");
  const std::size_t rt = out.find("\n#include <algorithm>\n");
  const std::size_t rt_end = out.find("}  // namespace wrapir_rt_v2\n");
  if (rt != std::string::npos && rt_end != std::string::npos)
    out.replace(rt, rt_end + 29 - rt, "\n/* <the runtime of emit/detail/cpp_runtime.hpp> */\n");
  const std::size_t debug = out.find("\n#include <cstdio>\n#include <filesystem>\n");
  const std::size_t debug_end = out.find("}  // namespace wrapir_rt_debug_v1\n");
  if (debug != std::string::npos && debug_end != std::string::npos)
    out.replace(debug, debug_end + 35 - debug, "\n/* <the debug printer's runtime of emit/detail/cpp_runtime.hpp> */\n");
  return out;
}

void check_golden(const std::string& name, const std::string& unit) {
  wrapir_test::check_golden_file(golden_dir / (name + ".cpp"), without_prelude(unit));
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

const char* const add_relu_source =
    "#include <cstdint>\n"
    "extern \"C\" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0, int64_t ks0)\n"
    "{\n"
    "    int tid = 0;  // as Inductor's kernels have: unused\n"
    "    for (int64_t x0 = 0; x0 < ks0; ++x0) {\n"
    "        float v = in_ptr0[x0] + in_ptr1[x0];\n"
    "        out_ptr0[x0] = v > 0 ? v : 0;\n"
    "    }\n"
    "}\n";

/// `relu(x + y)` on the CPU with a dynamic size read from x's shape.
ir::Program add_relu() {
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cpu_device());
  auto& ctx = p.ctx();
  const ex::Expr s0 = ctx.symbol("s0");
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto y = b.input("arg1_1", {s0}, wrapir::f32);
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input_shape, x, {ir::KeyStep{ir::KeyStepKind::size, 0}}, 8});
  const auto k = b.kernel("cpp_fused_add_relu_0", ir::KernelLanguage::cpp, ir::SourceText{add_relu_source},
                          "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, ks0: i64");
  const auto out = b.empty({s0}, wrapir::f32);
  b.call(k, {x, y, out, s0}, {.free_after = {x, y}});
  b.output(out);
  return p;
}

/// An extern with out=, a view as the output, asserts and a comment that
/// tries to break out of its comment.
ir::Program extern_view() {
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cpu_device());
  auto& ctx = p.ctx();
  const auto a = b.input("arg0_1", {ctx.integer(2), ctx.integer(3)}, wrapir::f32);
  const auto c = b.input("arg1_1", {ctx.integer(3), ctx.integer(2)}, wrapir::f32);
  b.comment("mm */ \"quoted\" \\ end\\");
  const auto out = b.empty({ctx.integer(2), ctx.integer(2)}, wrapir::f32);
  b.extern_out("extern_kernels.mm", {a, c}, ir::BufferArg{out, std::nullopt});
  b.assert_size_stride(out);
  const auto v = b.view(out, {ctx.integer(2)}, {ctx.integer(1)}, ctx.integer(2));
  b.append(ir::AssertScalar{ex::ge(ctx.integer(2), ctx.integer(1)), "2 >= 1"});
  b.output(v);
  b.output(out);
  return p;
}

const char* const negate_source =
    "#include <cstdint>\n"
    "extern \"C\" void kernel(const float* in_ptr0, float* out_ptr0, int64_t n)\n"
    "{ for (int64_t i = 0; i < n; ++i) out_ptr0[i] = -in_ptr0[i]; }\n";
const char* const is_small_source =
    "#include <cstdint>\n"
    "extern \"C\" void kernel(const float* in_ptr0, bool* out_ptr0)\n"
    "{ *out_ptr0 = in_ptr0[0] < 100.0f; }\n";
const char* const double_source =
    "#include <cstdint>\n"
    "extern \"C\" void kernel(const float* in_ptr0, float* out_ptr0, int64_t n)\n"
    "{ for (int64_t i = 0; i < n; ++i) out_ptr0[i] = 2 * in_ptr0[i]; }\n";

/// A conditional on a bool input, then a while loop doubling until the
/// first element reaches 100.
ir::Program control() {
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cpu_device());
  auto& ctx = p.ctx();
  const auto pred = b.input("arg0_1", {}, wrapir::b8);
  const auto x = b.input("arg1_1", {ctx.integer(4)}, wrapir::f32);
  auto copy_branch = [&](bool negate) {
    return [negate, &ctx](ir::Builder& sb, std::span<const ir::ProgramInput> inputs) {
      sb.set_default_device(wrapir::cpu_device());
      const auto in = boost::variant2::get<ir::BufferId>(inputs[0]);
      const auto k = sb.kernel(negate ? "cpp_negate_0" : "cpp_double_0", ir::KernelLanguage::cpp,
                               ir::SourceText{negate ? negate_source : double_source},
                               "in_ptr0: *fp32, out_ptr0: *fp32, n: i64");
      const auto out = sb.empty({ctx.integer(4)}, wrapir::f32);
      sb.call(k, {in, out, 4});
      sb.output(out);
    };
  };
  const auto branch = b.conditional(ir::BufferArg{pred, std::nullopt}, {x}, copy_branch(true), copy_branch(false));
  const auto looped = b.while_loop(
      {branch[0]}, {},
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        sb.set_default_device(wrapir::cpu_device());
        const auto carried = boost::variant2::get<ir::BufferId>(in[0]);
        const auto k = sb.kernel("cpp_is_small_0", ir::KernelLanguage::cpp, ir::SourceText{is_small_source},
                                 "in_ptr0: *fp32, out_ptr0: *i1");
        const auto flag = sb.empty({}, wrapir::b8);
        sb.call(k, {carried, flag});
        sb.output(flag);
      },
      copy_branch(false));
  b.output(looped[0]);
  return p;
}

// ---- compiling and running emitted units ------------------------------------

/// A fresh private directory under the system's temporary directory.
std::filesystem::path scratch_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wrapir_cpp_test_XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

struct Loaded {
  void* handle = nullptr;
  int (*run)(const wrapir_extern_table*, const wrapir_value*, size_t, wrapir_value*, size_t, void*, char*, size_t) = nullptr;
  const wrapir_program_info* (*info)() = nullptr;
  std::string compiler_output;
};

/// Compiles `unit` as the corpus check does (g++ -std=c++17 -Wall -Wextra
/// -Werror -shared) and loads it; an empty handle when there is no g++.
Loaded compile_and_load(const std::string& unit, const std::string& prefix = "wrapir_model") {
  Loaded l;
  if (std::system("g++ --version > /dev/null 2>&1") != 0) return l;
  const std::filesystem::path dir = scratch_directory();
  std::ofstream(dir / "unit.cpp", std::ios::binary) << unit;
  const std::string command = "g++ -std=c++17 -O1 -Wall -Wextra -Werror -shared -fPIC " + (dir / "unit.cpp").string() +
                              " -o " + (dir / "unit.so").string() + " > " + (dir / "log.txt").string() + " 2>&1";
  const int rc = std::system(command.c_str());
  l.compiler_output = read_file(dir / "log.txt");
  REQUIRE_MESSAGE(rc == 0, "the emitted unit does not compile cleanly:\n" << l.compiler_output.substr(0, 4000));
  CHECK(l.compiler_output.empty());  // no warning either
  l.handle = dlopen((dir / "unit.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(l.handle != nullptr, dlerror());
  l.run = reinterpret_cast<decltype(l.run)>(dlsym(l.handle, (prefix + "_run").c_str()));
  l.info = reinterpret_cast<decltype(l.info)>(dlsym(l.handle, (prefix + "_info").c_str()));
  REQUIRE(reinterpret_cast<void*>(l.run) != nullptr);
  REQUIRE(reinterpret_cast<void*>(l.info) != nullptr);
  std::filesystem::remove_all(dir);  // loaded: the files are no longer needed
  return l;
}

run::Tensor float_tensor(std::vector<float> values) {
  run::Tensor t = run::empty_cpu({static_cast<std::int64_t>(values.size())}, ir::DType::float32).value();
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

std::vector<float> floats_of(const run::Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<const float*>(t.data())[static_cast<std::int64_t>(i) * (t.strides.empty() ? 1 : t.strides[0])];
  return out;
}

struct Outcome {
  int rc = 0;
  std::string message;
  std::vector<run::Value> outputs;
};

Outcome call(const Loaded& l, const std::vector<run::Value>& inputs, std::size_t output_count,
             const wrapir_extern_table* table = nullptr) {
  auto borrowed = wrapir::run::c_abi::borrow(inputs);
  REQUIRE(borrowed.has_value());
  std::vector<wrapir_value> out(output_count);
  char message[1024] = "untouched";
  Outcome o;
  o.rc = l.run(table, borrowed->data(), borrowed->size(), out.data(), out.size(), nullptr, message, sizeof message);
  o.message = message;
  if (o.rc == WRAPIR_OK)
    for (wrapir_value& v : out) o.outputs.push_back(wrapir::run::c_abi::adopt(v).value());
  return o;
}

}  // namespace

TEST_CASE("emit/cpp: the embedded C interface is wrapir/run/c_abi.h") {
  CHECK(wrapir::cpp::detail::c_abi_text == read_file(source_dir / "include/wrapir/run/c_abi.h"));
}

TEST_CASE("emit/cpp: golden units") {
  check_golden("add_relu", emit_ok(add_relu()));
  check_golden("extern_view", emit_ok(extern_view()));
  check_golden("control", emit_ok(control()));
}

TEST_CASE("emit/cpp: string literals read back byte for byte") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string text(static_cast<std::size_t>(rng() % 40), '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    const std::string lit = wrapir::cpp::detail::string_literal(text);
    // Read the literal back as a C++ compiler would.
    REQUIRE(lit.front() == '"');
    REQUIRE(lit.back() == '"');
    std::string back;
    for (std::size_t i = 1; i + 1 < lit.size(); ++i) {
      const char c = lit[i];
      REQUIRE(c != '"');
      REQUIRE(static_cast<unsigned char>(c) >= 0x20);
      REQUIRE(static_cast<unsigned char>(c) < 0x7f);
      if (c != '\\') {
        back += c;
        continue;
      }
      const char n = lit[++i];
      if (n >= '0' && n <= '7') {
        const int v = (n - '0') * 64 + (lit[i + 1] - '0') * 8 + (lit[i + 2] - '0');
        i += 2;
        back += static_cast<char>(v);
      } else {
        back += n;
      }
    }
    CHECK(back == text);
  }
}

TEST_CASE("emit/cpp: comments cannot end early or continue onto the next line") {
  for (const char* text : {"*/ int x;", "a /* b", "ends with a backslash \\", "*", "/", "**//**", "\n#define x"}) {
    std::string out;
    wrapir::cpp::detail::append_comment(out, text);
    CHECK(out.rfind("/* ", 0) == 0);
    CHECK(out.find("*/") == out.size() - 2);
    CHECK(out.find("/*", 1) == std::string::npos);
    CHECK(out.find('\n') == std::string::npos);
  }
}

TEST_CASE("emit/cpp: programs it cannot render get a diagnostic naming the line") {
  SUBCASE("a Triton kernel") {
    ir::Program p{"call"};
    ir::Builder b{p};
    const auto x = b.input("arg0_1", {p.ctx().integer(8)}, wrapir::f32);
    const auto k = b.triton_kernel("triton_poi_0", "@triton.jit\ndef triton_poi_0(in_ptr0, xnumel): pass\n",
                                   "in_ptr0: *fp32, xnumel: i32");
    b.call(k, {x, 8});
    const std::string why = emit_error(p);
    CHECK(why.find("KernelDefinition") != std::string::npos);
    CHECK(why.find("has no launch configuration") != std::string::npos);  // tests/emit/cpp_cuda_test.cpp
  }
  SUBCASE("a buffer on a device that is neither the CPU nor CUDA") {
    ir::Program p{"call"};
    ir::Builder b{p};
    (void)b.input("arg0_1", {p.ctx().integer(8)}, wrapir::f32, ir::Device{ir::DeviceType::xpu, 0});
    CHECK(emit_error(p).find("emit::cpp renders CPU and CUDA programs only") != std::string::npos);
  }
  SUBCASE("a name the emitter keeps for itself") {
    ir::Program p = add_relu();
    p.buffers[2].name = "wrapir_where";
    CHECK(emit_error(p).find("starts with 'wrapir'") != std::string::npos);
  }
  SUBCASE("a symbol and a buffer of one name") {
    ir::Program p = add_relu();
    p.buffers[2].name = "s0";
    CHECK(emit_error(p).find("used twice") != std::string::npos);
  }
  SUBCASE("an entry prefix that is not a C identifier, or names a type") {
    wrapir::cpp::CppOptions o;
    o.entry_prefix = "bad prefix";
    CHECK(emit_error(add_relu(), o).find("not a C identifier") != std::string::npos);
    o.entry_prefix = "wrapir_program";
    CHECK(emit_error(add_relu(), o).find("a type of the C interface") != std::string::npos);
  }
  SUBCASE("a kernel argument of another dtype than its parameter") {
    ir::Program p = add_relu();
    p.buffers[0].layout.dtype = ir::DType::float64;
    const std::string why = emit_error(p);
    CHECK(why.find("line 2 (KernelCall)") != std::string::npos);
    CHECK(why.find("float64") != std::string::npos);
  }
  SUBCASE("a kernel id out of range") {
    ir::Program p = add_relu();
    for (ir::Line& l : p.body)
      if (auto* c = std::get_if<ir::KernelCall>(&l)) c->kernel.index = 7;
    CHECK(emit_error(p).find("out of range") != std::string::npos);
  }
}

TEST_CASE("emit/cpp: an emitted program compiles without warnings and runs through its C entry point") {
  const std::string unit = emit_ok(add_relu());
  const Loaded l = compile_and_load(unit);
  if (l.handle == nullptr) {
    MESSAGE("no g++: the emitted unit is not compiled");
    return;
  }
  const wrapir_program_info* info = l.info();
  CHECK(std::string(info->name) == "call");
  CHECK(info->input_count == 2);
  CHECK(info->output_count == 1);

  Outcome o = call(l, {run::Value{float_tensor({1, -2, 3})}, run::Value{float_tensor({1, 1, -5})}}, 1);
  REQUIRE_MESSAGE(o.rc == WRAPIR_OK, o.message);
  CHECK(o.message.empty());
  CHECK(floats_of(*o.outputs[0].get_if<run::Tensor>()) == std::vector<float>{2, 0, 0});

  SUBCASE("inputs of other sizes than the symbol's binding") {
    o = call(l, {run::Value{float_tensor({1, 2, 3})}, run::Value{float_tensor({1, 2})}}, 1);
    CHECK(o.rc == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(o.message.find("input 1 (arg1_1) has sizes [2], the program expects [3]") != std::string::npos);
  }
  SUBCASE("an input of another dtype") {
    run::Tensor d = run::empty_cpu({3}, ir::DType::float64).value();
    o = call(l, {run::Value{d}, run::Value{float_tensor({1, 2, 3})}}, 1);
    CHECK(o.rc == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(o.message.find("'arg0_1'") != std::string::npos);
  }
  SUBCASE("an input that claims more elements than its storage holds") {
    run::Tensor t = float_tensor({1, 2, 3});
    auto borrowed = wrapir::run::c_abi::borrow(std::vector<run::Value>{run::Value{t}, run::Value{t}}).value();
    borrowed[0].tensor.sizes[0] = 1000;
    wrapir_value out{};
    char message[256];
    CHECK(l.run(nullptr, borrowed.data(), 2, &out, 1, nullptr, message, sizeof message) == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(message).find("reaches") != std::string::npos);
  }
  SUBCASE("counts and the stream are checked") {
    wrapir_value out{};
    char message[256];
    CHECK(l.run(nullptr, nullptr, 0, &out, 1, nullptr, message, sizeof message) == WRAPIR_ERROR_INVALID_ARGUMENT);
    int stream = 0;
    auto in = wrapir::run::c_abi::borrow(std::vector<run::Value>{run::Value{float_tensor({1})}, run::Value{float_tensor({1})}}).value();
    CHECK(l.run(nullptr, in.data(), 2, &out, 1, &stream, message, sizeof message) == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(message).find("stream") != std::string::npos);
  }
}

TEST_CASE("emit/cpp: externs go through the host's table, views alias their base") {
  const Loaded l = compile_and_load(emit_ok(extern_view()));
  if (l.handle == nullptr) return;
  auto registry = std::make_shared<run::ExternRegistry>();
  REQUIRE(registry
              ->add("extern_kernels.mm",
                    [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
                      const run::Tensor& a = *c.args[0].get_if<run::Tensor>();
                      const run::Tensor& b = *c.args[1].get_if<run::Tensor>();
                      const run::Tensor& out = *c.kwarg("out")->get_if<run::Tensor>();
                      const auto* pa = static_cast<const float*>(a.data());
                      const auto* pb = static_cast<const float*>(b.data());
                      auto* po = static_cast<float*>(out.data());
                      for (int i = 0; i < 2; ++i)
                        for (int j = 0; j < 2; ++j) {
                          float s = 0;
                          for (int k = 0; k < 3; ++k) s += pa[i * 3 + k] * pb[k * 2 + j];
                          po[i * 2 + j] = s;
                        }
                      return run::Value{};
                    })
              .has_value());
  wrapir::run::c_abi::CExternTable externs(registry);
  const wrapir_extern_table table = externs.table();
  run::Tensor a = run::empty_cpu({2, 3}, ir::DType::float32).value();
  run::Tensor b = run::empty_cpu({3, 2}, ir::DType::float32).value();
  for (int i = 0; i < 6; ++i) {
    static_cast<float*>(a.data())[i] = static_cast<float>(i + 1);
    static_cast<float*>(b.data())[i] = static_cast<float>(i % 2);
  }
  Outcome o = call(l, {run::Value{a}, run::Value{b}}, 2, &table);
  REQUIRE_MESSAGE(o.rc == WRAPIR_OK, o.message);
  const run::Tensor& view = *o.outputs[0].get_if<run::Tensor>();
  const run::Tensor& full = *o.outputs[1].get_if<run::Tensor>();
  CHECK(view.storage->data == full.storage->data);  // one storage, kept alive by either output
  CHECK(view.offset == 2);
  CHECK(floats_of(view) == std::vector<float>{0, 15});  // row 1 of [[0, 6], [0, 15]]

  SUBCASE("no table: the run fails naming the extern table") {
    o = call(l, {run::Value{a}, run::Value{b}}, 2, nullptr);
    CHECK(o.rc == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(o.message.find("extern table") != std::string::npos);
  }
  SUBCASE("an extern the host lacks") {
    wrapir::run::c_abi::CExternTable empty(std::make_shared<run::ExternRegistry>());
    const wrapir_extern_table none = empty.table();
    o = call(l, {run::Value{a}, run::Value{b}}, 2, &none);
    CHECK(o.rc == WRAPIR_ERROR_INVALID_ARGUMENT);
    CHECK(o.message.find("'extern_kernels.mm' is not in the host's extern table") != std::string::npos);
  }
  SUBCASE("an extern that fails: its message, prefixed by the line") {
    auto failing = std::make_shared<run::ExternRegistry>();
    REQUIRE(failing->add("extern_kernels.mm", [](const run::ExternCall&) -> wrapir::Result<run::Value> {
                     return wrapir::Diagnostic{"no BLAS today"};
                   }).has_value());
    wrapir::run::c_abi::CExternTable t(failing);
    const wrapir_extern_table ft = t.table();
    o = call(l, {run::Value{a}, run::Value{b}}, 2, &ft);
    CHECK(o.rc == WRAPIR_ERROR_RUNTIME);
    CHECK(o.message == "line 2 (ExternKernelOut) of graph 'call': extern 'extern_kernels.mm': no BLAS today");
  }
}

TEST_CASE("emit/cpp: conditionals and while loops run as C++ control flow") {
  const Loaded l = compile_and_load(emit_ok(control()));
  if (l.handle == nullptr) return;
  auto flag = [](bool v) {
    run::Tensor t = run::empty_cpu({}, ir::DType::bool_).value();
    *static_cast<bool*>(t.data()) = v;
    return run::Value{t};
  };
  // true: negate, then double while x[0] < 100: -3 -> -6 -> ... stays negative, so
  // use a positive start through the false branch instead.
  Outcome o = call(l, {flag(false), run::Value{float_tensor({3, 1, 2, 0})}}, 1);
  REQUIRE_MESSAGE(o.rc == WRAPIR_OK, o.message);
  // false: double once (6), then double while < 100: 6, 12, 24, 48, 96 -> 192.
  CHECK(floats_of(*o.outputs[0].get_if<run::Tensor>()) == std::vector<float>{192, 64, 128, 0});
  o = call(l, {flag(true), run::Value{float_tensor({-200, 1, 2, 3})}}, 1);
  REQUIRE_MESSAGE(o.rc == WRAPIR_OK, o.message);
  CHECK(floats_of(*o.outputs[0].get_if<run::Tensor>()) == std::vector<float>{200, -1, -2, -3});
}

TEST_CASE("emit/cpp: a loop that never ends stops at the emitted limit") {
  ir::Program p = control();
  wrapir::cpp::CppOptions o;
  o.max_loop_iterations = 5;
  const Loaded l = compile_and_load(emit_ok(p, o));
  if (l.handle == nullptr) return;
  run::Tensor zero = run::empty_cpu({}, ir::DType::bool_).value();
  *static_cast<bool*>(zero.data()) = false;
  Outcome r = call(l, {run::Value{zero}, run::Value{float_tensor({0, 0, 0, 0})}}, 1);  // 0 * 2 stays < 100
  CHECK(r.rc == WRAPIR_ERROR_RUNTIME);
  CHECK(r.message.find("the loop ran 5 iterations") != std::string::npos);
  CHECK(r.message.find("(WhileLoop) of graph 'call'") != std::string::npos);
}

TEST_CASE("emit/cpp: a kernel argument out of its parameter's range fails naming the line and kernel") {
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cpu_device());
  const ex::Expr n = b.size_symbol("s0", 4);
  const auto x = b.input("arg0_1", {n}, wrapir::f32);
  const auto k = b.kernel("cpp_fill_0", ir::KernelLanguage::cpp,
                          ir::SourceText{"#include <cstdint>\nextern \"C\" void kernel(float* out_ptr0, int32_t n)\n"
                                         "{ for (int32_t i = 0; i < n; ++i) out_ptr0[i] = 1.0f; }\n"},
                          "out_ptr0: *fp32, n: i32");
  b.call(k, {x, ex::mul(n, p.ctx().integer(1 << 30))});
  b.output(x);
  const Loaded l = compile_and_load(emit_ok(p));
  if (l.handle == nullptr) return;
  Outcome o = call(l, {run::Value{std::int64_t{4}}, run::Value{float_tensor({0, 0, 0, 0})}}, 1);
  CHECK(o.rc == WRAPIR_ERROR_RUNTIME);
  CHECK(o.message ==
        "line 1 (KernelCall 'cpp_fill_0') of graph 'call': argument 1 = 4294967296 does not fit the parameter's type");
  o = call(l, {run::Value{std::int64_t{-4}}, run::Value{float_tensor({0, 0, 0, 0})}}, 1);
  CHECK(o.rc == WRAPIR_ERROR_INVALID_ARGUMENT);
  CHECK(o.message.find("symbol 's0' would be -4") != std::string::npos);
}

// ---- the debug printer (CppOptions::debug_level) -----------------------------

namespace {

wrapir::cpp::CppOptions debug_options(int level, std::vector<std::string> filter = {}, std::string directory = "tmp/jit_inductor") {
  wrapir::cpp::CppOptions o;
  o.debug_level = level;
  o.debug_kernel_filter = std::move(filter);
  o.debug_save_directory = std::move(directory);
  return o;
}

/// The lines a loaded unit's debug printer hands its sink.
struct DebugLines {
  std::vector<std::string> lines;
  static void write(void* host, const char* line) { static_cast<DebugLines*>(host)->lines.emplace_back(line); }
};

void set_sink(const Loaded& l, DebugLines& sink) {
  auto set = reinterpret_cast<void (*)(void (*)(void*, const char*), void*)>(dlsym(l.handle, "wrapir_model_debug_sink"));
  REQUIRE(reinterpret_cast<void*>(set) != nullptr);
  set(&DebugLines::write, &sink);
}

std::vector<run::Value> add_relu_inputs() {
  return {run::Value{float_tensor({1, -2, 3})}, run::Value{float_tensor({1, 1, -5})}};
}

}  // namespace

TEST_CASE("emit/cpp: debug printer goldens, levels 1 to 3; level 0 adds nothing") {
  check_golden("add_relu_debug1", emit_ok(add_relu(), debug_options(1)));
  check_golden("add_relu_debug2", emit_ok(add_relu(), debug_options(2)));
  check_golden("add_relu_debug3", emit_ok(add_relu(), debug_options(3)));
  check_golden("extern_view_debug2", emit_ok(extern_view(), debug_options(2)));
  // Level 0 with a filter and a directory is the unit without the printer.
  CHECK(emit_ok(add_relu(), debug_options(0, {"x"}, "elsewhere")) == emit_ok(add_relu()));
  const std::string plain = emit_ok(add_relu());
  CHECK(plain.find("wrapir_debug") == std::string::npos);
  CHECK(plain.find("_debug_sink") == std::string::npos);
}

TEST_CASE("emit/cpp: the debug printer's options are checked") {
  CHECK(emit_error(add_relu(), debug_options(4)).find("debug_level 4 is outside 0-3") != std::string::npos);
  CHECK(emit_error(add_relu(), debug_options(-1)).find("outside 0-3") != std::string::npos);
  CHECK(emit_error(add_relu(), debug_options(1, {}, "")).find("debug_save_directory") != std::string::npos);
  CHECK(emit_error(add_relu(), debug_options(1, {}, std::string("a\0b", 3))).find("NUL") != std::string::npos);
  // The path and messages are escaped literals, whatever they hold.
  const std::string unit = emit_ok(add_relu(), debug_options(1, {}, "dir \"quoted\"\n"));
  CHECK(unit.find("\"dir \\\"quoted\\\"\\012/before_launch_cpp_fused_add_relu_0_arg0_1.npy\"") != std::string::npos);
}

TEST_CASE("emit/cpp: the cpp target takes the debug printer's options") {
  const wrapir::EmitTarget target = wrapir::cpp_target();
  auto emit_with = [&](std::vector<std::pair<std::string, std::string>> pairs) {
    wrapir::EmitOptions o;
    for (auto& [k, v] : pairs) o.values.emplace_back(k, v);
    std::string out;
    wrapir::Result<void> r = target.emit(add_relu(), o, out);
    return r ? out : "error: " + r.error().message;
  };
  CHECK(emit_with({{"debug_level", "2"}, {"debug_kernels", "CPP_fused_add_relu_0,other"}}) ==
        emit_ok(add_relu(), debug_options(2, {"CPP_fused_add_relu_0", "other"})));
  CHECK(emit_with({{"debug_level", "1"}, {"debug_save_directory", "/tmp/x"}}) ==
        emit_ok(add_relu(), debug_options(1, {}, "/tmp/x")));
  CHECK(emit_with({{"debug_level", "5"}}).rfind("error: ", 0) == 0);
  CHECK(emit_with({{"debug_level", "2"}, {"debug_kernels", "a,,b"}}).find("empty name") != std::string::npos);
}

TEST_CASE("emit/cpp: debug level 2 prints each argument and the inputs to the host's sink") {
  const Loaded l = compile_and_load(emit_ok(add_relu(), debug_options(2)));
  if (l.handle == nullptr) return;
  DebugLines sink;
  set_sink(l, sink);
  const Outcome o = call(l, add_relu_inputs(), 1);
  REQUIRE_MESSAGE(o.rc == WRAPIR_OK, o.message);
  REQUIRE(sink.lines.size() == 10);
  CHECK(sink.lines[0] ==
        "[  aoti_model_inputs - arg0_1: float32 cpu sizes=[3] strides=[1] offset=0 numel=3 min=-2 max=3 "
        "mean=0.666666667  ]");
  CHECK(sink.lines[1] ==
        "[  aoti_model_inputs - arg1_1: float32 cpu sizes=[3] strides=[1] offset=0 numel=3 min=-5 max=1 mean=-1  ]");
  CHECK(sink.lines[2] ==
        "[  before_launch - cpp_fused_add_relu_0 - arg0_1: float32 cpu sizes=[3] strides=[1] offset=0 numel=3 min=-2 "
        "max=3 mean=0.666666667  ]");
  CHECK(sink.lines[4].rfind("[  before_launch - cpp_fused_add_relu_0 - buf0: float32 cpu sizes=[3] strides=[1]", 0) == 0);
  CHECK(sink.lines[5] == "[  before_launch - cpp_fused_add_relu_0 - ks0: 3  ]");
  CHECK(sink.lines[8] ==
        "[  after_launch - cpp_fused_add_relu_0 - buf0: float32 cpu sizes=[3] strides=[1] offset=0 numel=3 min=0 max=2 "
        "mean=0.666666667  ]");
  CHECK(sink.lines[9] == "[  after_launch - cpp_fused_add_relu_0 - ks0: 3  ]");

  SUBCASE("a filter that names no kernel of the program leaves only the inputs") {
    const Loaded f = compile_and_load(emit_ok(add_relu(), debug_options(2, {"triton_other"})));
    DebugLines s2;
    set_sink(f, s2);
    REQUIRE(call(f, add_relu_inputs(), 1).rc == WRAPIR_OK);
    CHECK(s2.lines.size() == 2);
  }
}

TEST_CASE("emit/cpp: debug level 3 prints kernel and extern names, filtered case-insensitively") {
  const Loaded l = compile_and_load(emit_ok(add_relu(), debug_options(3, {"CPP_Fused_Add_Relu_0"})));
  if (l.handle == nullptr) return;
  DebugLines sink;
  set_sink(l, sink);
  REQUIRE(call(l, add_relu_inputs(), 1).rc == WRAPIR_OK);
  CHECK(sink.lines ==
        std::vector<std::string>{"[ before_launch: cpp_fused_add_relu_0 ]", "[ after_launch: cpp_fused_add_relu_0 ]"});
  const std::string externs = emit_ok(extern_view(), debug_options(3));
  CHECK(externs.find("wrapir_debug::print_line(wrapir_debug_sink, \"[ before_launch: extern_kernels.mm ]\");") !=
        std::string::npos);
}

TEST_CASE("emit/cpp: debug level 1 writes each tensor argument as a .npy file numpy reads") {
  const std::filesystem::path dir = scratch_directory() / "saved";  // created by the run
  const Loaded l = compile_and_load(emit_ok(add_relu(), debug_options(1, {}, dir.string())));
  if (l.handle == nullptr) return;
  REQUIRE(call(l, add_relu_inputs(), 1).rc == WRAPIR_OK);
  for (const char* name : {"before_launch_cpp_fused_add_relu_0_arg0_1.npy", "before_launch_cpp_fused_add_relu_0_arg1_1.npy",
                           "before_launch_cpp_fused_add_relu_0_buf0.npy", "after_launch_cpp_fused_add_relu_0_arg0_1.npy",
                           "after_launch_cpp_fused_add_relu_0_arg1_1.npy"})
    CHECK_MESSAGE(std::filesystem::exists(dir / name), name);
  const std::string file = read_file(dir / "after_launch_cpp_fused_add_relu_0_buf0.npy");
  REQUIRE(file.size() > 10);
  CHECK(file.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_length = static_cast<unsigned char>(file[8]) + 256u * static_cast<unsigned char>(file[9]);
  CHECK((10 + header_length) % 64 == 0);  // numpy's alignment of the data
  REQUIRE(file.size() == 10 + header_length + 12);
  const std::string header = file.substr(10, header_length);
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0) == 0);
  CHECK(header.back() == '\n');
  float values[3];
  std::memcpy(values, file.data() + 10 + header_length, sizeof values);
  CHECK(values[0] == 2);
  CHECK(values[1] == 0);
  CHECK(values[2] == 0);
  std::filesystem::remove_all(dir.parent_path());

  SUBCASE("a directory that cannot be made fails the run, naming the file") {
    const Loaded bad = compile_and_load(emit_ok(add_relu(), debug_options(1, {}, "/proc/wrapir_no_such_place")));
    const Outcome o = call(bad, add_relu_inputs(), 1);
    CHECK(o.rc == WRAPIR_ERROR_RUNTIME);
    CHECK(o.message.find("line 2 (KernelCall 'cpp_fused_add_relu_0') of graph 'call': the debug printer cannot write "
                         "'/proc/wrapir_no_such_place/before_launch_cpp_fused_add_relu_0_arg0_1.npy'") !=
          std::string::npos);
  }
}

TEST_CASE("emit/cpp: a name used twice is found among many, wherever the two are") {
  // check_names partitions the names by hash once there are more than 1024:
  // a duplicate must be found in any part, and distinct names never refused.
  std::mt19937 rng(11);
  for (const std::size_t extra : {std::size_t{10}, std::size_t{3000}, std::size_t{40000}}) {
    ir::Program p = add_relu();
    const ir::BufferDecl model = p.buffers[2];
    for (std::size_t i = 0; i < extra; ++i) {
      ir::BufferDecl d = model;
      d.name = "extra" + std::to_string(i);
      p.buffers.push_back(d);
    }
    CHECK(wrapir::cpp::to_cpp(p).has_value());
    for (int round = 0; round < 3; ++round) {
      ir::Program q = p;
      const std::size_t a = 3 + rng() % extra;
      std::size_t b = 3 + rng() % extra;
      if (b == a) b = a == 3 ? 4 : 3;
      q.buffers[b].name = q.buffers[a].name;
      const std::string why = emit_error(q);
      CHECK_MESSAGE(why.find("the name '" + q.buffers[a].name + "' is used twice") != std::string::npos, why);
    }
    ir::Program q = p;
    q.buffers.back().name = "s0";  // a buffer named as a symbol
    CHECK(emit_error(q).find("the name 's0' is used twice") != std::string::npos);
  }
}

TEST_CASE("emit/cpp: the debug printer leaves out arguments that are not tensors") {
  // An extern may take a multi-output buffer (a list of results): level 2
  // prints its tensor arguments only, where it used to refuse the program.
  ir::Program p{"call"};
  ir::Builder b{p};
  b.set_default_device(wrapir::cpu_device());
  const auto x = b.input("arg0_1", {p.ctx().integer(4)}, wrapir::f32);
  const auto pair = b.extern_alloc_multi("aten.split.Tensor", {x, std::int64_t{2}});
  const auto out = b.empty({p.ctx().integer(4)}, wrapir::f32);
  b.extern_out("aten.cat.out", {pair}, ir::BufferArg{out, std::nullopt});
  b.output(out);
  const std::string unit = emit_ok(p, debug_options(2));
  CHECK(unit.find("\"before_launch - aten.cat.out - buf") != std::string::npos);  // the out tensor
  CHECK(unit.find("- aten.cat.out - " + p.buffers[pair.index].name + "\"") == std::string::npos);
  CHECK(unit.find("\"before_launch - aten.split.Tensor - arg0_1\"") != std::string::npos);
}
