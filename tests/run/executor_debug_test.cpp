// Tests of the executor's intermediate-value debug printer
// (`ExecutorOptions::debug`, run/detail/executor_debug.hpp) and of the
// recycled per-call state (run/detail/executor_prepare.hpp `FramePool`):
// levels 1-3 on the CPU, the kernel filter, refusals; calls after a
// failure, outputs and freed buffers not kept alive between calls, extern
// argument lists rebuilt per call.

#include <wrapir/ir/builder.hpp>
#include <wrapir/run/executor.hpp>

#include <doctest/doctest.h>

#include "support/float_tensor.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace run = wrapir::run;
using wrapir::expr::Expr;

constexpr ir::Device cpu = wrapir::cpu_device();

constexpr auto make = wrapir_test::float_tensor;

std::vector<float> read(const run::Value& v) {
  const run::Tensor* t = v.get_if<run::Tensor>();
  REQUIRE(t != nullptr);
  const auto* p = static_cast<const float*>(t->data());
  return {p, p + t->numel()};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// add(x, y, out, n); then mm-like extern `extern_kernels.neg(out, out=o2)`.
struct AddNeg {
  ir::Program p{"add_neg"};
  AddNeg() {
    ir::Builder b{p, cpu};
    Expr n = b.size_symbol("s0", 4);
    auto x = b.input("x", {n}, ir::DType::float32);
    auto y = b.input("y", {n}, ir::DType::float32);
    auto k = b.kernel("triton_poi_add_0", ir::KernelLanguage::cpp, ir::SourceText{""},
                      "a: *fp32, b: *fp32, out: *fp32, n: i64");
    auto t = b.empty({n}, ir::DType::float32);
    b.call(k, {x, y, t, n});
    auto o = b.empty({n}, ir::DType::float32);
    b.extern_out("extern_kernels.neg", {t}, ir::BufferArg{o, std::nullopt});
    b.output(o);
  }
  static run::ExecutorOptions options() {
    run::ExecutorOptions o;
    auto kernels = std::make_shared<run::KernelRegistry>();
    REQUIRE(kernels->add("triton_poi_add_0", run::cpu_kernel([](const float* a, const float* b, float* out, std::int64_t n) {
                           for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
                         })));
    auto externs = std::make_shared<run::ExternRegistry>();
    REQUIRE(externs->add("extern_kernels.neg", [](const run::ExternCall& c) -> wrapir::Result<run::Value> {
      const run::Tensor& in = *c.arg(0, "self")->get_if<run::Tensor>();
      const run::Tensor& out = *c.kwarg("out")->get_if<run::Tensor>();
      for (std::int64_t i = 0; i < in.numel(); ++i)
        static_cast<float*>(out.data())[i] = -static_cast<const float*>(in.data())[i];
      return run::Value{};
    }));
    o.kernels = kernels;
    o.externs = externs;
    return o;
  }
};

}  // namespace

TEST_CASE("executor debug printer: level 3 prints kernel and extern names around each call") {
  AddNeg prog;
  std::ostringstream out;
  run::ExecutorOptions o = AddNeg::options();
  o.debug.level = 3;
  o.debug.out = &out;
  auto exe = run::Executor::prepare(prog.p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({2}, {1, 2}), make({2}, {10, 20})};
  const std::vector<std::int64_t> n{2};
  auto r = exe->run(in, n);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read((*r)[0]) == std::vector<float>{-11, -22});
  CHECK(out.str() ==
        "[ before_launch: triton_poi_add_0 ]\n[ after_launch: triton_poi_add_0 ]\n"
        "[ before_launch: extern_kernels.neg ]\n[ after_launch: extern_kernels.neg ]\n");
}

TEST_CASE("executor debug printer: level 2 prints every argument's value, the filter picks kernels") {
  AddNeg prog;
  std::ostringstream out;
  run::ExecutorOptions o = AddNeg::options();
  o.debug.level = 2;
  o.debug.out = &out;
  o.debug.kernel_filter = {"TRITON_POI_ADD_0"};  // case-insensitive; the extern is not wrapped
  auto exe = run::Executor::prepare(prog.p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({2}, {1, 2}), make({2}, {10, 20})};
  const std::vector<std::int64_t> n{2};
  auto r = exe->run(in, n);
  REQUIRE_MESSAGE(r, r.error().message);
  const std::string text = out.str();
  CHECK(count(text, "inductor: before_launch - triton_poi_add_0 - ") == 4);  // x, y, buf, n
  CHECK(count(text, "inductor: after_launch - triton_poi_add_0 - ") == 4);
  CHECK(text.find("inductor: before_launch - triton_poi_add_0 - x\n[1, 2]\nNumber of elements: 2\nSize: [2]\n"
                  "Dtype: float32\nMean: 1.5\nMin: 1\nMax: 2\nStd: 0.70710678\n") != std::string::npos);
  CHECK(text.find("inductor: before_launch - triton_poi_add_0 - s0\nValue: 2\n") != std::string::npos);
  // After the launch the output holds the sums.
  CHECK(text.find("after_launch - triton_poi_add_0 - buf0\n[11, 22]\n") != std::string::npos);
  CHECK(text.find("extern_kernels.neg") == std::string::npos);
}

TEST_CASE("executor debug printer: level 1 saves the tensor arguments before and after") {
  AddNeg prog;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "wrapir_executor_debug_test";
  std::filesystem::remove_all(dir);
  run::ExecutorOptions o = AddNeg::options();
  o.debug.level = 1;
  o.debug.save_directory = dir.string();
  auto exe = run::Executor::prepare(prog.p, o);
  REQUIRE_MESSAGE(exe, exe.error().message);
  const std::vector<run::Tensor> in{make({2}, {1, 2}), make({2}, {10, 20})};
  const std::vector<std::int64_t> n{2};
  REQUIRE(exe->run(in, n));
  // Pointer arguments only: x, y, buf0 for the kernel; buf0, buf1 for the extern.
  for (const char* f : {"before_launch_triton_poi_add_0_x", "after_launch_triton_poi_add_0_buf0",
                        "before_launch_extern_kernels_neg_buf0", "after_launch_extern_kernels_neg_buf1"})
    CHECK_MESSAGE(std::filesystem::exists(dir / (std::string(f) + ".safetensors")), f);
  CHECK_FALSE(std::filesystem::exists(dir / "before_launch_triton_poi_add_0_s0.safetensors"));
  // A safetensors file: 8-byte little-endian header length, the JSON
  // header, then the data.
  std::ifstream file(dir / "after_launch_extern_kernels_neg_buf1.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 8);
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header * 256 + static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  REQUIRE(bytes.size() == 8 + header + 8);
  CHECK(bytes.substr(8, header).find(R"("buf1":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})") != std::string::npos);
  float values[2];
  std::memcpy(values, bytes.data() + 8 + header, sizeof values);
  CHECK(values[0] == -11);
  CHECK(values[1] == -22);
  // A link planted where a file goes is refused, never written through.
  const std::filesystem::path victim = dir / "victim";
  std::ofstream(victim) << "keep";
  const std::filesystem::path planted = dir / "before_launch_triton_poi_add_0_x.safetensors";
  std::filesystem::remove(planted);
  std::filesystem::create_symlink(victim, planted);
  const auto refused = exe->run(in, n);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("the debug printer cannot save x") != std::string::npos);
  std::ifstream kept(victim);
  std::string content((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  CHECK(content == "keep");
  std::filesystem::remove_all(dir);
}

TEST_CASE("executor debug printer: bad levels and graph mode are refused; off prints nothing") {
  AddNeg prog;
  run::ExecutorOptions o = AddNeg::options();
  o.debug.level = 4;
  auto bad = run::Executor::prepare(prog.p, o);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("debug.level must be 0, 1, 2 or 3, not 4") != std::string::npos);
  o.debug.level = -1;
  CHECK_FALSE(run::Executor::prepare(prog.p, o));
  o.debug.level = 2;
  o.graph.enabled = true;
  auto graph = run::Executor::prepare(prog.p, o);
  REQUIRE_FALSE(graph);
  CHECK(graph.error().message.find("graph mode") != std::string::npos);

  std::ostringstream out;
  run::ExecutorOptions off = AddNeg::options();
  off.debug.out = &out;
  auto exe = run::Executor::prepare(prog.p, off);
  REQUIRE(exe);
  const std::vector<run::Tensor> in{make({2}, {1, 2}), make({2}, {10, 20})};
  const std::vector<std::int64_t> n{2};
  REQUIRE(exe->run(in, n));
  CHECK(out.str().empty());
}

TEST_CASE("executor recycled state: calls after a failure, other sizes, nothing kept alive between calls") {
  AddNeg prog;
  auto exe = run::Executor::prepare(prog.p, AddNeg::options());
  REQUIRE(exe);
  std::weak_ptr<run::Storage> first_output, first_input;
  {
    const std::vector<run::Tensor> in{make({3}, {1, 2, 3}), make({3}, {1, 1, 1})};
    const std::vector<std::int64_t> n{3};
    auto r = exe->run(in, n);
    REQUIRE(r);
    CHECK(read((*r)[0]) == std::vector<float>{-2, -3, -4});
    first_output = (*r)[0].get_if<run::Tensor>()->storage;
    first_input = in[0].storage;
  }
  // The executor keeps neither the caller's inputs nor the outputs it
  // handed out, nor its intermediates.
  CHECK(first_output.expired());
  CHECK(first_input.expired());

  // A failing call (sizes contradict the scalar) leaves nothing behind that
  // breaks the next one.
  const std::vector<run::Tensor> wrong{make({2}, {1, 2}), make({2}, {1, 1})};
  const std::vector<std::int64_t> three{3};
  auto failed = exe->run(wrong, three);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message.find("has sizes [2], the program expects [3]") != std::string::npos);
  const std::vector<std::int64_t> two{2};
  for (int i = 0; i < 3; ++i) {
    auto r = exe->run(wrong, two);
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(read((*r)[0]) == std::vector<float>{-2, -3});
  }
  // A bigger call after smaller ones: every layout is evaluated anew.
  const std::vector<run::Tensor> big{make({5}, {1, 2, 3, 4, 5}), make({5}, {0, 0, 0, 0, 1})};
  const std::vector<std::int64_t> five{5};
  auto r = exe->run(big, five);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(read((*r)[0]) == std::vector<float>{-1, -2, -3, -4, -6});
}
