// The Python emitter (emit/python.hpp): golden modules for the shapes of
// Inductor's wrappers, every line kind, escaping of hostile text, and the
// diagnostics of programs that cannot be rendered.
//
// Goldens live in tests/golden/python/<name>.py and are compared byte for
// byte; WRAPIR_UPDATE_GOLDEN=1 rewrites them (review the diff before
// committing).

#include <wrapir/emit/python.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <boost/mp11/algorithm.hpp>
#include <sys/wait.h>

#include <doctest/doctest.h>

#include "ir/support/random_programs.hpp"
#include "support/golden.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
namespace py = wrapir::python;

#ifdef WRAPIR_SOURCE_DIR
const std::filesystem::path golden_dir = std::filesystem::path(WRAPIR_SOURCE_DIR) / "tests/golden/python";
#else
const std::filesystem::path golden_dir = "tests/golden/python";
#endif

using wrapir_test::read_file;

/// Compares `actual` with the golden file `name`.py byte for byte; on a
/// mismatch reports the first differing line. With WRAPIR_UPDATE_GOLDEN=1
/// the file is rewritten instead.
void check_golden(const std::string& name, const std::string& actual) {
  wrapir_test::check_golden_file(golden_dir / (name + ".py"), actual);
}

/// What a sink taking pieces of `piece_bytes` received, piece by piece.
struct Streamed {
  wrapir::Result<void> done;
  std::string text;
  std::vector<std::size_t> pieces;
};

Streamed emit_streamed(const ir::Program& p, std::size_t piece_bytes, const py::PythonOptions& options = {}) {
  Streamed s;
  const wrapir::TextSink sink{[&](std::string_view piece) -> wrapir::Result<void> {
                                s.text += piece;
                                s.pieces.push_back(piece.size());
                                return {};
                              },
                              piece_bytes};
  s.done = py::to_python(p, sink, options);
  return s;
}

/// The string overload's result, or its diagnostic, as text.
std::string emitted_or_error(const wrapir::Result<std::string>& r) {
  return r ? "module:\n" + *r : "error: " + r.error().to_string();
}

/// Every module the tests emit also goes through sinks of tiny and small
/// pieces and through a stream, which must give the same bytes (or the
/// same diagnostic): the goldens hold for the streaming path too.
void check_streamed_same(const ir::Program& p, const py::PythonOptions& options, const wrapir::Result<std::string>& r) {
  for (std::size_t piece_bytes : {std::size_t{1}, std::size_t{4096}}) {
    const Streamed s = emit_streamed(p, piece_bytes, options);
    CAPTURE(piece_bytes);
    CHECK(emitted_or_error(s.done ? wrapir::Result<std::string>(s.text) : wrapir::Result<std::string>(s.done.error())) ==
          emitted_or_error(r));
  }
  std::ostringstream stream;
  const wrapir::Result<void> done = py::to_python(p, stream, options);
  CHECK(emitted_or_error(done ? wrapir::Result<std::string>(stream.str()) : wrapir::Result<std::string>(done.error())) ==
        emitted_or_error(r));
}

std::string emit_ok(const ir::Program& p, const py::PythonOptions& options = {}) {
  auto r = py::to_python(p, options);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  check_streamed_same(p, options, r);
  return r.value();
}

std::string emit_error(const ir::Program& p, const py::PythonOptions& options = {}) {
  auto r = py::to_python(p, options);
  REQUIRE_MESSAGE(!r.ok(), "expected a diagnostic");
  check_streamed_same(p, options, r);
  return r.error().message;
}

/// The text between `def call(args):` and the harness.
std::string call_body(const std::string& module) {
  const std::size_t start = module.find("def call(args):\n");
  const std::size_t stop = module.find("\n\ndef get_args():");
  REQUIRE(start != std::string::npos);
  return module.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
}

const char* const pointwise_source =
    "\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef triton_poi_fused_add_0(in_ptr0, in_ptr1, "
    "out_ptr0, xnumel, XBLOCK : tl.constexpr):\n    xoffset = tl.program_id(0) * XBLOCK\n    xindex = xoffset + "
    "tl.arange(0, XBLOCK)[:]\n    xmask = xindex < xnumel\n    tmp0 = tl.load(in_ptr0 + (xindex), xmask)\n    tmp1 "
    "= tl.load(in_ptr1 + (xindex), xmask)\n    tl.store(out_ptr0 + (xindex), tmp0 + tmp1, xmask)\n";

const char* const unary_signature = "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32";

ir::KernelMetadata grid1d(std::int64_t xblock = 1024) {
  return ir::KernelMetadata{.num_warps = 4, .grid_type = ir::GridType::grid_1d, .block = {{"XBLOCK", xblock}}};
}

/// Reference §8's example: `x + y` on CUDA.
ir::Program pointwise_add() {
  ir::Program p{"pointwise_add"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(8)}, wrapir::f32);
  const auto y = b.input("arg1_1", {ctx.integer(8)}, wrapir::f32);
  const auto k = b.triton_kernel("triton_poi_fused_add_0", pointwise_source,
                                 "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32", grid1d());
  const auto out = b.empty({ctx.integer(8)}, wrapir::f32);
  b.call(k, {x, y, out, 8}, {.free_after = {x, y}});
  b.output(out);
  return p;
}

/// A kernel whose signature is `in, out, n`, with a tiny source.
ir::KernelId unary_kernel(ir::Builder& b, const std::string& name) {
  return b.triton_kernel(name, "@triton.jit\ndef " + name + "(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n    pass\n",
                         unary_signature, grid1d());
}

}  // namespace

TEST_CASE("emit/python: pointwise add, the shape of reference section 8") {
  check_golden("pointwise_add", emit_ok(pointwise_add()));
}

TEST_CASE("emit/python: to_python(program, {}) is the call with default options") {
  // A sink is not brace-initialisable from nothing, so this is not ambiguous.
  CHECK(py::to_python(pointwise_add(), {}).value() == emit_ok(pointwise_add()));
}

TEST_CASE("emit/python: the appending overload appends, and leaves the string alone on failure") {
  const ir::Program p = pointwise_add();
  std::string out = "# prefix\n";
  CHECK(py::to_python(p, out, {}).has_value());
  CHECK(out == "# prefix\n" + emit_ok(p));
  ir::Program bad = p;
  bad.body.emplace_back(ir::Free{ir::BufferId{99}});
  std::string kept = "# prefix\n";
  auto done = py::to_python(bad, kept, {});
  REQUIRE_FALSE(done.has_value());
  CHECK(done.error().message.find("buffer id 99 is out of range") != std::string::npos);
  CHECK(kept == "# prefix\n");
}

// ---------------------------------------------------------------------------
// Writing to a sink

TEST_CASE("emit/python: a sink gets the string's bytes on random programs, whatever the piece size") {
  py::PythonOptions deferred;
  deferred.size_asserts = py::SizeAsserts::deferred;
  py::PythonOptions debug;
  debug.debug_level = 2;
  std::size_t rendered = 0;
  for (std::uint32_t seed = 0; seed < 40; ++seed) {
    const ir::Program random = wrapir_test::random_program(seed);
    CAPTURE(seed);
    for (const py::PythonOptions* options : {&deferred, &debug}) {
      const auto r = py::to_python(random, *options);
      rendered += r.ok() ? 1 : 0;
      check_streamed_same(random, *options, r);
    }
    const ir::Program broken = wrapir_test::mutate(random, seed);
    check_streamed_same(broken, {}, py::to_python(broken));
  }
  CHECK(rendered > 40);  // most random programs render: the comparison is of modules, not of diagnostics
}

/// A chain of `n` launches, each into a fresh buffer.
ir::Program launch_chain(int n) {
  ir::Program p{"chain"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto k = b.triton_kernel("triton_poi_copy_0", "@triton.jit\ndef triton_poi_copy_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n    pass\n",
                                 unary_signature, grid1d());
  ir::BufferId last = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
  for (int i = 0; i < n; ++i) {
    const auto next = b.empty({ctx.integer(64)}, wrapir::f32);
    b.call(k, {last, next, 64}, {.free_after = {last}});
    last = next;
  }
  b.output(last);
  return p;
}

TEST_CASE("emit/python: the emitter passes the module on a piece at a time") {
  const ir::Program p = launch_chain(2000);
  const std::string whole = emit_ok(p);
  const Streamed s = emit_streamed(p, 4096);
  REQUIRE(s.done.has_value());
  CHECK(s.text == whole);
  REQUIRE(s.pieces.size() > 20);
  // A piece is passed on at the first line boundary past 4096 bytes; a
  // line of this program is under 200 bytes.
  for (std::size_t i = 0; i < s.pieces.size(); ++i) {
    CAPTURE(i);
    CHECK(s.pieces[i] < 4096 + 200);
    CHECK(s.pieces[i] > 0);
  }
}

/// A stream buffer that takes `room` bytes and then fails.
class FullDisk : public std::streambuf {
 public:
  explicit FullDisk(std::size_t room) : room_(room) {}
  std::string taken;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::size_t fits = std::min(room_ - taken.size(), static_cast<std::size_t>(n));
    taken.append(s, fits);
    return static_cast<std::streamsize>(fits);
  }
  int_type overflow(int_type) override { return traits_type::eof(); }

 private:
  std::size_t room_;
};

TEST_CASE("emit/python: a sink that fails is a diagnostic, never a short module") {
  const ir::Program p = launch_chain(500);
  const std::string whole = emit_ok(p);

  std::size_t calls = 0, before = 0;
  const wrapir::TextSink refuses_third{[&](std::string_view piece) -> wrapir::Result<void> {
                                         if (++calls == 3) return wrapir::Diagnostic{"disk full"};
                                         before += piece.size();
                                         return {};
                                       },
                                       1024};
  const wrapir::Result<void> done = py::to_python(p, refuses_third);
  REQUIRE_FALSE(done.has_value());
  CHECK(calls == 3);
  CHECK(done.error().message ==
        "writing the Python module failed after " + std::to_string(before) + " bytes: disk full");

  FullDisk disk{10000};
  std::ostream out(&disk);
  const wrapir::Result<void> streamed = py::to_python(p, out);
  REQUIRE_FALSE(streamed.has_value());
  CHECK(streamed.error().message.find("writing the Python module failed after") == 0);
  CHECK(streamed.error().message.find("the output stream failed") != std::string::npos);
  CHECK(disk.taken == whole.substr(0, 10000));

  std::ostringstream bad;
  bad.setstate(std::ios::badbit);
  CHECK_FALSE(py::to_python(p, bad).has_value());

  const wrapir::Result<void> no_function = py::to_python(p, wrapir::TextSink{nullptr});
  REQUIRE_FALSE(no_function.has_value());
  CHECK(no_function.error().message == "the sink for the Python module has no write function");
}

TEST_CASE("emit/python: the imports a body's launches and streams need are declared before it") {
  // The header is written before the body: each import that only some
  // line kinds need must be found by the walk that precedes it.
  ir::Program p{"needs"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(8)}, wrapir::f32);
  const auto k = b.kernel("cuda_scale", ir::KernelLanguage::cuda,
                          ir::SourceText{"extern \"C\" __global__ void cuda_scale(float* p, float a) {}"},
                          "p: *fp32, a: fp32");
  b.call(k, {x, 2.5});
  p.body.emplace_back(ir::EnterStreamContext{.stream = 1});
  b.call(k, {x, 0.5});
  p.body.emplace_back(ir::ExitStreamContext{});
  b.output(x);
  const std::string module = emit_ok(p);
  const std::size_t body = module.find("def call(args):");
  REQUIRE(body != std::string::npos);
  CHECK(module.find("from ctypes import c_float, c_double, c_bool\n") < body);
  CHECK(module.find("import collections\n") < body);
  CHECK(module.find("from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n") < body);
  CHECK(module.find("c_float(2.5)") > body);
}

TEST_CASE("emit/python: reduction with a symbolic grid") {
  ir::Program p{"reduction"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 4096);
  const auto x = b.input("arg1_1", {s0, ctx.integer(512)}, wrapir::f32);
  const auto k = b.triton_kernel(
      "triton_red_fused_sum_0",
      "@triton.jit\ndef triton_red_fused_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, R0_BLOCK: "
      "tl.constexpr):\n    pass\n",
      "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32, r0_numel: i32",
      ir::KernelMetadata{.num_warps = 8, .grid_type = ir::GridType::fixed, .block = {{"XBLOCK", 8}, {"R0_BLOCK", 512}}});
  const auto out = b.empty({s0}, wrapir::f32);
  b.call(k, {x, out, s0, 512},
         {.grid = ir::ExplicitGrid{ex::ceil_div(s0, ctx.integer(8)), ctx.integer(1), ctx.integer(1)},
          .free_after = {x}});
  b.output(out);
  check_golden("reduction_symbolic_grid", emit_ok(p));
}

TEST_CASE("emit/python: extern mm with an epilogue kernel") {
  ir::Program p{"mm_relu"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto a = b.input("arg0_1", {ctx.integer(8), ctx.integer(16)}, wrapir::f32);
  const auto w = b.input("arg1_1", {ctx.integer(32), ctx.integer(16)}, wrapir::f32);
  const auto bias = b.input("arg2_1", {ctx.integer(32)}, wrapir::f32);
  const auto mm = b.empty({ctx.integer(8), ctx.integer(32)}, wrapir::f32);
  b.comment("Topologically Sorted Source Nodes: [linear], Original ATen: [aten.mm]");
  b.extern_out("extern_kernels.mm",
               {a, ir::BufferArg{w, ir::View{{ctx.integer(16), ctx.integer(32)}, {ctx.integer(1), ctx.integer(16)},
                                             ctx.integer(0)}}},
               ir::BufferArg{mm});
  const auto k = b.triton_kernel(
      "triton_poi_fused_addmm_relu_0", "@triton.jit\ndef triton_poi_fused_addmm_relu_0(in_out_ptr0, in_ptr0, xnumel, "
      "XBLOCK: tl.constexpr):\n    pass\n",
      "in_out_ptr0: *fp32, in_ptr0: *fp32, xnumel: i32", grid1d(256));
  b.call(k, {mm, bias, 256}, {.free_after = {a, w, bias}});
  b.output(mm);
  check_golden("extern_mm_epilogue", emit_ok(p));
}

TEST_CASE("emit/python: a multi-output extern kernel unpacked") {
  ir::Program p{"topk"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(16), ctx.integer(64)}, wrapir::f32);
  const auto multi = b.extern_alloc_multi("torch.ops.aten.topk.default", {x, 4}, {{"sorted", true}});
  auto layout = [&](ir::DType d) { return ir::Layout::contiguous(ctx, {ctx.integer(16), ctx.integer(4)}, d, wrapir::cuda_device(0)); };
  const auto parts = b.unpack(multi, {layout(wrapir::f32), layout(wrapir::i64)});
  b.assert_size_stride(parts[0]);
  b.free({multi, x});
  b.output(parts[0]);
  b.output(parts[1]);
  check_golden("multi_output_unpack", emit_ok(p));
}

TEST_CASE("emit/python: a view as an output") {
  ir::Program p{"view_output"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(4), ctx.integer(8)}, wrapir::f32);
  const auto k = unary_kernel(b, "triton_poi_fused_mul_0");
  const auto buf = b.empty({ctx.integer(4), ctx.integer(8)}, wrapir::f32);
  b.call(k, {x, buf, 32}, {.free_after = {x}});
  const auto alias = b.view(buf, {ctx.integer(8)}, {ctx.integer(1)}, ctx.integer(8));
  b.output(alias);
  b.output(ir::ProgramOutput{ir::BufferArg{buf, ir::View{{ctx.integer(8), ctx.integer(4)}, {ctx.integer(1), ctx.integer(8)},
                                                         ctx.integer(0)}}});
  check_golden("view_output", emit_ok(p));
}

TEST_CASE("emit/python: a conditional lifts both branches") {
  ir::Program p{"cond"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto pred = b.input("arg0_1", {}, wrapir::b8);
  const auto x = b.input("arg1_1", {ctx.integer(8)}, wrapir::f32);
  auto branch = [&](const std::string& kernel_name) {
    return [kernel_name, &ctx](ir::Builder& sb, std::span<const ir::ProgramInput> inputs) {
      const auto in = boost::variant2::get<ir::BufferId>(inputs[0]);
      const auto k = unary_kernel(sb, kernel_name);
      const auto out = sb.empty({ctx.integer(8)}, wrapir::f32);
      sb.call(k, {in, out, 8});
      sb.output(out);
    };
  };
  const auto outs = b.conditional(ir::BufferArg{pred}, {x}, branch("triton_poi_fused_sin_0"), branch("triton_poi_fused_cos_1"));
  b.free({pred, x});
  b.output(outs[0]);
  check_golden("conditional", emit_ok(p));
}

TEST_CASE("emit/python: a while loop") {
  ir::Program p{"loop"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 16);
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto outs = b.while_loop(
      {x}, {s0},
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const auto carried = boost::variant2::get<ir::BufferId>(in[0]);
        const auto flag = sb.extern_alloc("torch.ops.aten.any.default", {carried},
                                          ir::Layout{{}, {}, ctx.integer(0), wrapir::b8, wrapir::cuda_device(0)});
        sb.output(flag);
      },
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const auto carried = boost::variant2::get<ir::BufferId>(in[0]);
        const auto n = boost::variant2::get<ex::Expr>(in[1]);
        const auto k = unary_kernel(sb, "triton_poi_fused_sub_0");
        const auto out = sb.empty({n}, wrapir::f32);
        sb.call(k, {carried, out, n});
        sb.output(out);
      });
  b.output(outs[0]);
  check_golden("while_loop", emit_ok(p));
}

// Regression: the outputs were bound to the carried buffers themselves, so a
// loop that never ran returned the program's input (eager returns a copy)
// or a buffer that a later Reuse overwrites (Inductor's plan after a
// while_loop reuses the carried buffer's storage).
TEST_CASE("emit/python: a while loop that never runs returns copies of its carried buffers") {
  ir::Program p{"loop"};
  ir::Builder b{p, wrapir::cpu_device()};
  const auto x = b.input("arg0_1", {p.ctx().integer(4)}, wrapir::f32);
  const auto i0 = b.extern_alloc("torch.ops.aten.zeros.default", {},
                                 ir::Layout{{}, {}, p.ctx().integer(0), wrapir::i64, wrapir::cpu_device()});
  const auto outs = b.while_loop(
      {i0, x}, {},
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const auto i = boost::variant2::get<ir::BufferId>(in[0]);
        sb.output(sb.extern_alloc("torch.ops.aten.gt.Scalar", {i, 100},
                                  ir::Layout{{}, {}, p.ctx().integer(0), wrapir::b8, wrapir::cpu_device()}));
      },
      [&](ir::Builder& sb, std::span<const ir::ProgramInput> in) {
        const auto i = boost::variant2::get<ir::BufferId>(in[0]);
        const auto y = boost::variant2::get<ir::BufferId>(in[1]);
        sb.output(sb.extern_alloc("torch.ops.aten.add.Scalar", {i, 1}, sb.program().buffers[i.index].layout));
        sb.output(sb.extern_alloc("torch.ops.aten.mul.Scalar", {y, 2}, sb.program().buffers[y.index].layout));
      });
  b.output(outs[0]);
  b.output(outs[1]);
  const std::string text = emit_ok(p);
  const std::string i_out = p.buffers[outs[0].index].name;
  const std::string x_out = p.buffers[outs[1].index].name;
  const std::string i_in = p.buffers[i0.index].name;
  // After the first test of the condition, before the loop.
  const auto first_test = text.find("_result,) = ");
  const auto copies = text.find("    if not ");
  const auto loop = text.find("    while ");
  REQUIRE(first_test != std::string::npos);
  REQUIRE(copies != std::string::npos);
  REQUIRE(loop != std::string::npos);
  CHECK(first_test < copies);
  CHECK(copies < loop);
  CHECK(text.find(i_out + " = " + i_in + ".clone()\n") != std::string::npos);
  CHECK(text.find(x_out + " = arg0_1.clone()\n") != std::string::npos);
}

TEST_CASE("emit/python: dynamic shapes bind symbols from inputs and from data") {
  ir::Program p{"dynamic"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 8);
  ir::Program& prog = b.program();
  const auto s1sym = ctx.symbol("s1", ex::Assumption::positive);
  const auto s2sym = ctx.symbol("s2", ex::Assumption::positive);
  const auto x = b.input("arg1_1", ir::Layout{{s0, s1sym}, {s2sym, ctx.integer(1)}, ctx.integer(0), wrapir::f32,
                                               wrapir::cuda_device(0)});
  prog.symbols.push_back(ir::SymbolDecl{s1sym, ir::SymbolOrigin::input_shape, x, {{ir::KeyStepKind::size, 1}}, 128});
  prog.symbols.push_back(ir::SymbolDecl{s2sym, ir::SymbolOrigin::input_shape, x, {{ir::KeyStepKind::stride, 0}}, 256});
  const auto numel = b.computed_symbol("triton_poi_fused_abs_0_xnumel", s0 * s1sym);
  const auto k = unary_kernel(b, "triton_poi_fused_abs_0");
  const auto out = b.empty({s0, s1sym}, wrapir::f32);
  b.call(k, {x, out, numel});
  const auto count = b.extern_alloc("torch.ops.aten.count_nonzero.default", {out},
                                    ir::Layout{{}, {}, ctx.integer(0), wrapir::i64, wrapir::cuda_device(0)});
  const auto u0 = b.unbacked_symbol("u0");
  const auto u1 = b.unbacked_symbol("u1");
  b.dynamic_scalar(u0, count, {ir::KeyStep{ir::KeyStepKind::divide_by, 4}});
  const auto nz = b.extern_alloc_multi("torch.ops.aten.nonzero_static.default", {out}, {{"size", ir::Arg{u0}}});
  b.append(ir::UnbackedSymbolDefs{nz, {{u1, {{ir::KeyStepKind::index, 0}, {ir::KeyStepKind::size, 0}}}}});
  b.free({count, nz});
  b.output(out);
  b.output(u0 * 2);
  check_golden("dynamic_shapes", emit_ok(p));
}

TEST_CASE("emit/python: reuse, pool and null lines") {
  ir::Program p{"memory"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
  const auto k = unary_kernel(b, "triton_poi_fused_exp_0");
  const auto buf0 = b.empty({ctx.integer(64)}, wrapir::f32);
  b.call(k, {x, buf0, 64});
  b.append(ir::FreeIfNotReused{buf0, true});
  const auto buf1 = b.declare("buf1", ir::Layout::contiguous(ctx, {ctx.integer(64)}, wrapir::f32, wrapir::cuda_device(0)),
                              ir::BufferRole::intermediate);
  b.append(ir::Reuse{buf0, buf1, true});
  const auto buf2 = b.declare("buf2", ir::Layout::contiguous(ctx, {ctx.integer(8), ctx.integer(8)}, wrapir::f32,
                                                              wrapir::cuda_device(0)),
                              ir::BufferRole::intermediate);
  b.append(ir::Reuse{buf1, buf2, false});
  b.append(ir::Null{});
  p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(1024)});
  const ir::PoolId pool{0};
  const auto buf3 = b.declare("buf3", ir::Layout::contiguous(ctx, {ctx.integer(64)}, wrapir::f32, wrapir::cuda_device(0)),
                              ir::BufferRole::intermediate);
  const auto buf4 = b.declare("buf4", ir::Layout::contiguous(ctx, {ctx.integer(32)}, wrapir::i64, wrapir::cuda_device(0)),
                              ir::BufferRole::intermediate);
  b.append(ir::PoolCreate{pool});
  b.append(ir::AllocFromPool{buf3, pool, ctx.integer(0)});
  b.append(ir::AllocFromPool{buf4, pool, ctx.integer(256)});
  b.call(k, {buf2, buf3, 64});
  b.append(ir::DeallocFromPool{buf3, pool, false});
  b.call(k, {buf2, buf4, 32});
  b.append(ir::DeallocFromPool{buf4, pool, true});
  b.free({x});
  b.output(buf2);
  check_golden("memory_lines", emit_ok(p));
}

TEST_CASE("emit/python: a pool is created as its tensor when typed, else as bytes") {
  ir::Program p{"typed_pool"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 8);
  const auto x = b.input("arg0_1", {s0, ctx.integer(128)}, wrapir::f32);
  const auto k = unary_kernel(b, "triton_poi_fused_exp_0");
  const auto buf0 = b.declare("buf0", ir::Layout::contiguous(ctx, {s0, ctx.integer(128)}, wrapir::f32, wrapir::cuda_device(0)),
                              ir::BufferRole::intermediate);
  p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), s0 * 512,
                                 ir::PoolTensor{ir::DType::float32, {s0, ctx.integer(128)}, {ctx.integer(128), ctx.integer(1)}}});
  p.pools.push_back(ir::PoolDecl{"pool1", wrapir::cuda_device(0), ctx.integer(1024)});
  b.append(ir::PoolCreate{ir::PoolId{0}});
  b.append(ir::AllocFromPool{buf0, ir::PoolId{0}, ctx.integer(0)});
  b.call(k, {x, buf0, 64});
  b.append(ir::PoolCreate{ir::PoolId{1}});
  b.append(ir::DeallocFromPool{buf0, ir::PoolId{0}, true});
  b.output(x);
  const std::string body = call_body(emit_ok(p));
  CHECK(body.find("pool0 = empty_strided_cuda((s0, 128), (128, 1), torch.float32)\n") != std::string::npos);
  CHECK(body.find("pool1 = empty_strided_cuda((1024, ), (1, ), torch.uint8)\n") != std::string::npos);
  CHECK(body.find("buf0 = alloc_from_pool(pool0, 0, torch.float32, (s0, 128), (128, 1))\n") != std::string::npos);
}

TEST_CASE("emit/python: a pool's del releases the names Reuse bound to its storage (regression)") {
  // plan_pools keeps a reused name bound (delete_old = false) and releases
  // the pool at the group's end; the new name held the pool's storage alive
  // past that `del`, so the pool was never freed before the call returned.
  for (const bool delete_old : {false, true}) {
    CAPTURE(delete_old);
    ir::Program p{"pool_reuse"};
    ir::Builder b{p};
    auto& ctx = p.ctx();
    const auto x = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
    const auto k = unary_kernel(b, "triton_poi_fused_exp_0");
    auto layout = [&] { return ir::Layout::contiguous(ctx, {ctx.integer(64)}, wrapir::f32, wrapir::cuda_device(0)); };
    p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(256)});
    const ir::PoolId pool{0};
    const auto buf0 = b.declare("buf0", layout(), ir::BufferRole::intermediate);
    const auto buf1 = b.declare("buf1", layout(), ir::BufferRole::intermediate);
    const auto buf2 = b.declare("buf2", layout(), ir::BufferRole::intermediate);
    const auto out = b.empty({ctx.integer(64)}, wrapir::f32);
    b.append(ir::PoolCreate{pool});
    b.append(ir::AllocFromPool{buf0, pool, ctx.integer(0)});
    b.call(k, {x, buf0, 64});
    b.append(ir::Reuse{buf0, buf1, delete_old});
    b.call(k, {buf1, buf1, 64});
    b.append(ir::Reuse{buf1, buf2, delete_old});
    b.call(k, {buf2, out, 64});
    b.append(ir::DeallocFromPool{buf2, pool, true});
    b.output(out);
    const std::string body = call_body(emit_ok(p));
    CHECK(body.find(delete_old ? "del pool0, buf2\n" : "del pool0, buf0, buf1, buf2\n") != std::string::npos);
  }
}

TEST_CASE("emit/python: workspaces") {
  ir::Program p{"workspaces"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(1024)}, wrapir::f32);
  const auto k = b.triton_kernel("triton_red_fused_sum_0", "@triton.jit\ndef k(in_ptr0, out_ptr0, ws_ptr, xnumel):\n    pass\n",
                                 "in_ptr0: *fp32, out_ptr0: *fp32, ws_ptr: *u8, xnumel: i32", grid1d());
  const auto out = b.empty({ctx.integer(1)}, wrapir::f32);
  const auto ws0 = b.workspace(ctx.integer(1024), ir::WorkspaceZeroMode::zero_on_call);
  b.call(k, {x, out, ws0, 1024}, {.free_after = {ws0}});
  const auto ws1 = b.workspace(ctx.integer(4096), ir::WorkspaceZeroMode::uninitialized);
  b.call(k, {x, out, ws1, 1024}, {.free_after = {ws1}});
  const auto ws2 = b.workspace(ctx.integer(64), ir::WorkspaceZeroMode::zero_per_graph, "semaphores");
  b.call(k, {x, out, ws2, 1024});
  b.output(out);
  check_golden("workspaces", emit_ok(p));
}

namespace {

ir::Program debug_program() {
  ir::Program p{"debug"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 64);
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto w = b.input("arg1_1", {s0, s0}, wrapir::f32);
  const auto k0 = unary_kernel(b, "triton_poi_fused_relu_0");
  const auto k1 = unary_kernel(b, "Triton_Poi_Fused_Tanh_1");
  const auto buf0 = b.empty({s0}, wrapir::f32);
  b.call(k0, {x, buf0, s0});
  const auto buf1 = b.empty({s0}, wrapir::f32);
  b.call(k1, {buf0, buf1, s0});
  const auto buf2 = b.empty({s0, ctx.integer(1)}, wrapir::f32);
  b.extern_out("extern_kernels.mm", {w, ir::BufferArg{buf1, ir::View{{s0, ctx.integer(1)}, {ctx.integer(1), ctx.integer(1)}, ctx.integer(0)}}},
               ir::BufferArg{buf2});
  b.free({buf0, buf1});
  b.output(buf2);
  return p;
}

}  // namespace

TEST_CASE("emit/python: debug printer level 1 saves the filtered kernels' tensors") {
  py::PythonOptions options;
  options.debug_level = 1;
  options.debug_kernel_filter = {"triton_poi_fused_tanh_1", "EXTERN_KERNELS.MM"};
  const std::string module = emit_ok(debug_program(), options);
  CHECK(module.find("before_launch_triton_poi_fused_relu_0") == std::string::npos);
  check_golden("debug_level1_filtered", module);
}

TEST_CASE("emit/python: debug printer level 2 prints every argument") {
  py::PythonOptions options;
  options.debug_level = 2;
  options.debug_kernel_filter = {"TRITON_POI_FUSED_RELU_0", "extern_kernels.mm"};
  const std::string module = emit_ok(debug_program(), options);
  CHECK(module.find("Triton_Poi_Fused_Tanh_1 - ") == std::string::npos);
  check_golden("debug_level2_filtered", module);
}

TEST_CASE("emit/python: debug printer level 3 only imports the helper; bad levels are diagnostics") {
  py::PythonOptions options;
  options.debug_level = 3;
  const std::string module = emit_ok(debug_program(), options);
  CHECK(module.find("import _print_debugging_tensor_value_info") != std::string::npos);
  CHECK(call_body(module) == call_body(emit_ok(debug_program())));
  options.debug_level = 4;
  CHECK(emit_error(debug_program(), options).find("debug_level 4") != std::string::npos);
}

TEST_CASE("emit/python: deferred size asserts come before each input's first reader") {
  py::PythonOptions options;
  options.size_asserts = py::SizeAsserts::deferred;
  const std::string module = emit_ok(debug_program(), options);
  check_golden("deferred_size_asserts", module);
  const std::string body = call_body(module);
  CHECK(body.find("assert_size_stride(arg1_1") > body.find("Triton_Poi_Fused_Tanh_1.run"));
  options.size_asserts = py::SizeAsserts::none;
  CHECK(call_body(emit_ok(debug_program(), options)).find("assert_size_stride") == std::string::npos);
}

TEST_CASE("emit/python: multi-kernel definitions and calls") {
  ir::Program p{"multi"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(64), ctx.integer(1024)}, wrapir::f32);
  const char* sig = "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32, r0_numel: i32";
  const auto red = b.triton_kernel("triton_red_fused_sum_0", "@triton.jit\ndef red(): pass\n", sig);
  const auto per = b.triton_kernel("triton_per_fused_sum_1", "@triton.jit\ndef per(): pass\n", sig);
  const auto mk = b.multi_kernel({red, per});
  const auto mm0 = b.triton_kernel("triton_mm_2", "@triton.jit\ndef mm0(): pass\n", sig);
  const auto mm1 = b.triton_kernel("triton_mm_3", "@triton.jit\ndef mm1(): pass\n", sig);
  const auto sized = b.multi_kernel({mm0, mm1}, {{ir::ArgSlice{0, 3}}, {ir::ArgSlice{0, 2}, ir::ArgSlice{3, 4}}},
                                    {ir::ShapeKey{{64, 1024}, {64}}, std::nullopt});
  const auto out = b.empty({ctx.integer(64)}, wrapir::f32);
  b.call_multi(mk, {x, out, 64, 1024});
  b.call_multi(sized, {x, out, 64, 1024}, {.free_after = {x}});
  b.output(out);
  const std::string module = emit_ok(p);
  check_golden("multi_kernel", module);
  // The candidates of one size-hint multi-kernel must have distinct keys.
  ir::Program dup = p;
  for (ir::Line& line : dup.body)
    if (auto* d = std::get_if<ir::MultiKernelDefinition>(&line); d && !d->shape_keys.empty())
      d->shape_keys = {std::nullopt, std::nullopt};
  CHECK(emit_error(dup).find("two candidates with the shape key None") != std::string::npos);
}

TEST_CASE("emit/python: device and stream contexts, copies and comm buffers") {
  ir::Program p{"contexts"};
  ir::Builder b{p, wrapir::cuda_device(1)};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(8)}, wrapir::f32, wrapir::cuda_device(0));
  const auto k = unary_kernel(b, "triton_poi_fused_neg_0");
  b.enter_device(wrapir::cuda_device(1));
  const auto y = b.empty({ctx.integer(8)}, wrapir::f32);
  b.append(ir::DeviceCopy{ir::BufferArg{y}, ir::BufferArg{x}, true});
  b.append(ir::GetRawStream{wrapir::cuda_device(1), 0});
  b.append(ir::EnterStreamContext{1});
  const auto z = b.empty({ctx.integer(8)}, wrapir::f32);
  b.call(k, {y, z, 8});
  b.call(k, {y, z, 8}, {.stream = 1});
  b.append(ir::ExitStreamContext{});
  const auto on0 = b.empty({ctx.integer(8)}, wrapir::f32, wrapir::cuda_device(0));
  const auto comm = b.comm_buffer({ctx.integer(8)}, wrapir::f32, "group'0");
  b.call(k, {z, comm, 8});
  b.free({comm, on0});
  b.exit_device();
  b.output(z);
  check_golden("contexts", emit_ok(p));
}

// ---------------------------------------------------------------------------
// Every line kind

namespace {

/// A program with what lines of every kind can refer to: buffers, kernels,
/// a pool, a multi-kernel candidate pair and two subgraphs.
struct Fixture {
  ir::Program p{"kinds"};
  ir::BufferId in, buf, out, view, ws, comm, multi, idx;
  ir::KernelId kernel, candidate;
  ex::Expr s0, u0, xnumel;

  Fixture() {
    ir::Builder b{p};
    auto& ctx = p.ctx();
    s0 = b.size_symbol("s0", 32);
    in = b.input("arg0_1", {s0}, wrapir::f32);
    u0 = b.unbacked_symbol("u0");
    xnumel = ctx.symbol("xnumel_0", ex::Assumption::nonnegative);
    p.symbols.push_back(ir::SymbolDecl{xnumel, ir::SymbolOrigin::computed, std::nullopt, {}, std::nullopt});
    kernel = b.declare_kernel("triton_poi_0", ir::KernelLanguage::triton, *ir::parse_signature(unary_signature));
    candidate = b.declare_kernel("triton_poi_1", ir::KernelLanguage::triton, *ir::parse_signature(unary_signature));
    b.declare_kernel("multi_kernel_0", ir::KernelLanguage::triton, *ir::parse_signature(unary_signature));
    auto layout = [&](std::vector<ex::Expr> sizes, ir::DType d = wrapir::f32) {
      return ir::Layout::contiguous(ctx, std::move(sizes), d, wrapir::cuda_device(0));
    };
    buf = b.declare("buf0", layout({s0}), ir::BufferRole::intermediate);
    out = b.declare("buf1", layout({s0}), ir::BufferRole::intermediate);
    view = b.declare("buf2", layout({ctx.integer(4)}), ir::BufferRole::intermediate);
    ws = b.declare("workspace_0", layout({ctx.integer(256)}, wrapir::u8), ir::BufferRole::workspace);
    comm = b.declare("buf3", layout({ctx.integer(8)}), ir::BufferRole::comm);
    p.buffers[comm.index].comm = ir::CommBufferInfo{ir::CommBufferType::symm_mem, "0"};
    multi = b.declare("buf4", layout({}), ir::BufferRole::intermediate);
    p.buffers[multi.index].multi_output = true;
    idx = b.declare("buf5", layout({ctx.integer(4)}, wrapir::i64), ir::BufferRole::intermediate);
    p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(512)});
    for (const char* name : {"true_graph_0", "false_graph_0"}) {
      ir::Program g{name, p.context};
      ir::Builder gb{g};
      const auto a = gb.input("arg0_1", {s0}, wrapir::f32);
      g.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input_shape, a, {{ir::KeyStepKind::size, 0}}, 32});
      gb.output(a);
      p.subgraphs.push_back(std::move(g));
    }
    // Every line below may use buf, out, comm and the pool's buffers freely:
    // the emitter checks ids and names, not liveness.
    p.body.emplace_back(ir::KernelDefinition{kernel, ir::SourceText{"@triton.jit\ndef k(): pass\n"}, {}});
    p.body.emplace_back(ir::KernelDefinition{candidate, ir::SourceText{"@triton.jit\ndef c(): pass\n"}, {}});
  }
};

template <class T>
T sample(Fixture& f) {
  auto& ctx = f.p.ctx();
  const ir::Device cuda0 = wrapir::cuda_device(0);
  if constexpr (std::is_same_v<T, ir::Allocate>) return {f.buf};
  else if constexpr (std::is_same_v<T, ir::FreeIfNotReused>) return {f.buf, false};
  else if constexpr (std::is_same_v<T, ir::Reuse>) return {f.buf, f.out, true};
  else if constexpr (std::is_same_v<T, ir::Free>) return {f.in};
  else if constexpr (std::is_same_v<T, ir::Null>) return {};
  else if constexpr (std::is_same_v<T, ir::PoolCreate>) return {ir::PoolId{0}};
  else if constexpr (std::is_same_v<T, ir::AllocFromPool>) return {f.buf, ir::PoolId{0}, ctx.integer(64)};
  else if constexpr (std::is_same_v<T, ir::DeallocFromPool>) return {f.buf, ir::PoolId{0}, true};
  else if constexpr (std::is_same_v<T, ir::CommBufferAllocate>) return {f.comm};
  else if constexpr (std::is_same_v<T, ir::CommBufferFree>) return {f.comm};
  else if constexpr (std::is_same_v<T, ir::WorkspaceAllocate>) return {f.ws, ir::WorkspaceZeroMode::zero_on_call, "ws_ptr"};
  else if constexpr (std::is_same_v<T, ir::WorkspaceFree>) return {f.ws};
  else if constexpr (std::is_same_v<T, ir::DeviceCopy>) return {ir::BufferArg{f.out}, ir::BufferArg{f.in}, false};
  else if constexpr (std::is_same_v<T, ir::Reinterpret>) return {f.view, f.buf};
  else if constexpr (std::is_same_v<T, ir::KernelDefinition>)
    return {f.p.find_kernel("multi_kernel_0").value(), ir::SourceText{"def k(): pass\n"}, {}};
  else if constexpr (std::is_same_v<T, ir::KernelCall>)
    return {f.kernel, {f.in, f.out, f.s0}, {}, ir::LauncherGrid{}, cuda0, 0};
  else if constexpr (std::is_same_v<T, ir::SymbolicCallArg>) return {f.xnumel, f.s0 * 4};
  else if constexpr (std::is_same_v<T, ir::MultiKernelDefinition>)
    return {f.p.find_kernel("multi_kernel_0").value(), {f.kernel, f.candidate}, {{{0, 3}}, {{0, 3}}}, {}};
  else if constexpr (std::is_same_v<T, ir::MultiKernelCall>)
    return {f.p.find_kernel("multi_kernel_0").value(), {f.in, f.out, f.s0}, {}, cuda0, 0};
  else if constexpr (std::is_same_v<T, ir::ExternKernelAlloc>) return {f.out, "aten.relu.default", {f.in}, {}};
  else if constexpr (std::is_same_v<T, ir::ExternKernelOut>) return {"aten.relu.out", {f.in}, {}, ir::BufferArg{f.out}};
  else if constexpr (std::is_same_v<T, ir::ExternKernelMultiOut>)
    return {std::nullopt, "aten.aminmax.out", {f.in}, {}, {{"out0", ir::BufferArg{f.buf}}, {"out1", ir::BufferArg{f.out}}}};
  else if constexpr (std::is_same_v<T, ir::MultiOutput>) return {f.out, f.multi, {{ir::KeyStepKind::key, 0, "values"}}};
  else if constexpr (std::is_same_v<T, ir::ScatterFallback>)
    return {"aten.scatter_", f.buf, 0, ir::BufferArg{f.idx}, ir::Arg{2.5}, {{"reduce", "add"}}};
  else if constexpr (std::is_same_v<T, ir::IndexPutFallback>)
    return {"aten.index_put_", f.buf, {std::nullopt, ir::BufferArg{f.idx}}, ir::BufferArg{f.out}, true};
  else if constexpr (std::is_same_v<T, ir::DynamicScalar>) return {f.u0, f.idx, {{ir::KeyStepKind::convert_to_int}}};
  else if constexpr (std::is_same_v<T, ir::UnbackedSymbolDefs>)
    return {f.multi, {{f.u0, {{ir::KeyStepKind::index, 1}, {ir::KeyStepKind::stride, 0}}}}};
  else if constexpr (std::is_same_v<T, ir::AssertSizeStride>)
    return {f.in, {f.s0}, {ctx.integer(1)}, "aten.relu.default"};
  else if constexpr (std::is_same_v<T, ir::AssertAlignment>) return {f.out, 16, "aten.relu.default"};
  else if constexpr (std::is_same_v<T, ir::AssertScalar>) return {ex::ge(f.u0, ctx.integer(1)), "u0 >= 1"};
  else if constexpr (std::is_same_v<T, ir::EnterSubgraph>) return {ir::GraphId{0}};
  else if constexpr (std::is_same_v<T, ir::ExitSubgraph>) return {};
  else if constexpr (std::is_same_v<T, ir::Conditional>)
    return {ir::Arg{ex::gt(f.s0, ctx.integer(4))}, ir::GraphId{0}, ir::GraphId{1}, {f.in}, {f.out}};
  else if constexpr (std::is_same_v<T, ir::WhileLoop>) return {ir::GraphId{0}, ir::GraphId{1}, {f.in}, {}, {f.out}};
  else if constexpr (std::is_same_v<T, ir::EnterDeviceContext>) return {wrapir::cuda_device(1)};
  else if constexpr (std::is_same_v<T, ir::ExitDeviceContext>) return {};
  else if constexpr (std::is_same_v<T, ir::EnterStreamContext>) return {2};
  else if constexpr (std::is_same_v<T, ir::ExitStreamContext>) return {};
  else if constexpr (std::is_same_v<T, ir::GetRawStream>) return {cuda0, 0};
  else if constexpr (std::is_same_v<T, ir::Comment>) return {"a comment"};
  else static_assert(sizeof(T) == 0, "add a sample of this line kind");
}

/// The matching line that keeps the scopes balanced around `T`.
template <class T>
void append_with_partner(Fixture& f, T line) {
  if constexpr (std::is_same_v<T, ir::ExitSubgraph>) f.p.body.emplace_back(ir::EnterSubgraph{ir::GraphId{0}});
  if constexpr (std::is_same_v<T, ir::ExitDeviceContext>) f.p.body.emplace_back(ir::EnterDeviceContext{wrapir::cuda_device(1)});
  if constexpr (std::is_same_v<T, ir::ExitStreamContext>) f.p.body.emplace_back(ir::EnterStreamContext{1});
  f.p.body.emplace_back(std::move(line));
  if constexpr (std::is_same_v<T, ir::EnterSubgraph>) f.p.body.emplace_back(ir::ExitSubgraph{});
  if constexpr (std::is_same_v<T, ir::EnterDeviceContext>) f.p.body.emplace_back(ir::ExitDeviceContext{});
  if constexpr (std::is_same_v<T, ir::EnterStreamContext>) f.p.body.emplace_back(ir::ExitStreamContext{});
  if constexpr (std::is_same_v<T, ir::MultiKernelCall>)
    f.p.body.insert(f.p.body.end() - 1, sample<ir::MultiKernelDefinition>(f));
}

}  // namespace

TEST_CASE("emit/python: every line kind renders") {
  std::string all;
  boost::mp11::mp_for_each<ir::LineKinds>([&](auto kind) {
    using T = decltype(kind);
    Fixture base;
    Fixture f;
    append_with_partner(f, sample<T>(f));
    CAPTURE(T::kind);
    const std::string module = emit_ok(f.p);
    if constexpr (std::is_same_v<T, ir::Null>) {
      CHECK(module == emit_ok(base.p));
    } else {
      CHECK(module != emit_ok(base.p));
    }
    all += "# ---- " + std::string(T::kind) + "\n";
    if constexpr (std::is_same_v<T, ir::KernelDefinition> || std::is_same_v<T, ir::MultiKernelDefinition>) {
      const std::size_t start = module.find("async_compile = AsyncCompile()\n");
      const std::size_t stop = module.find("async_compile.wait(globals())");
      REQUIRE(start != std::string::npos);
      all += module.substr(start, stop - start);
    }
    all += call_body(module) + "\n";
  });
  check_golden("every_line_kind", all);
}

// ---------------------------------------------------------------------------
// Escaping

TEST_CASE("emit/python: hostile kernel sources become exact Python literals") {
  std::string raw_ok = "@triton.jit\ndef k():\n    x = \"it's\"\n";
  std::string with_quotes = "def k():\n    s = '''doc'''\n";
  std::string with_backslash = "def k():\n    s = \"a\\nb\"\n";
  std::string with_cr_nul = std::string("a\r\nb") + '\0' + "c'";
  ir::Program p{"escapes"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(4)}, wrapir::f32);
  const auto out = b.empty({ctx.integer(4)}, wrapir::f32);
  int n = 0;
  for (const std::string* src : {&raw_ok, &with_quotes, &with_backslash, &with_cr_nul}) {
    const auto k = b.triton_kernel("triton_k_" + std::to_string(n++), *src, unary_signature);
    b.call(k, {x, out, 4});
  }
  b.comment("ends here\"\"\" ''' \\ \xc3\xa9");
  p.body.emplace_back(ir::Comment{"x\nimport os; os.system('rm -rf /')\r\x7f\xff"});
  b.output(out);
  const std::string module = emit_ok(p);
  CHECK(module.find("'''" + raw_ok + "'''") != std::string::npos);
  CHECK(module.find(R"('def k():\n    s = \'\'\'doc\'\'\'\n')") != std::string::npos);
  CHECK(module.find(R"('def k():\n    s = "a\\nb"\n')") != std::string::npos);
  CHECK(module.find(R"('a\r\nb\x00c\'')") != std::string::npos);
  CHECK(module.find("# ends here\"\"\" ''' \\ \xc3\xa9\n") != std::string::npos);
  CHECK(module.find(R"(# x\x0aimport os; os.system('rm -rf /')\x0d\x7f\xff)") != std::string::npos);
  check_golden("escaping", module);
}

TEST_CASE("emit/python: string arguments and keys are escaped literals") {
  ir::Program p{"strings"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(4)}, wrapir::f32);
  b.extern_alloc("aten.foo.default", {x, std::string("'); import os #"), 1e300, -0.0, true, ir::None{}, wrapir::cuda_device(1),
                                      wrapir::bf16, ir::ArgList{{ir::Arg{1}, ir::Arg{ctx.integer(2) * ctx.symbol("s9")}}}},
                 ir::Layout::contiguous(ctx, {ctx.integer(4)}, wrapir::f32, wrapir::cuda_device(0)));
  p.symbols.push_back(ir::SymbolDecl{ctx.symbol("s9"), ir::SymbolOrigin::input, std::nullopt, {}, std::nullopt});
  p.inputs.emplace_back(ctx.symbol("s9"));
  const std::string body = call_body(emit_ok(p));
  CHECK(body.find(R"(aten.foo.default(arg0_1, '\'); import os #', 1e+300, -0.0, True, None, device(type='cuda', index=1), torch.bfloat16, [1, 2*s9]))") !=
        std::string::npos);
  // Not UTF-8: no literal holds it.
  ir::Program bad = p;
  std::get<ir::ExternKernelAlloc>(bad.body.back()).args[1] = std::string("\xff\xfe");
  CHECK(emit_error(bad).find("is not valid UTF-8") != std::string::npos);
}

TEST_CASE("emit/python: bidi and C1 controls never reach generated code raw (regression, issue 12 one escaper)") {
  // U+202E and U+2066 reorder how a line is displayed (Trojan Source): code
  // around them reads differently from what it does. Each target escapes
  // them with the one escaper: string literals as \uXXXX, comments as bytes,
  // and a kernel source leaves the raw triple-quoted form for the escaped
  // literal.
  const std::string rlo = "\xe2\x80\xae";
  const std::string lri = "\xe2\x81\xa6";
  const std::string nel = "\xc2\x85";
  ir::Program p{"bidi"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(4)}, wrapir::f32);
  const auto out = b.empty({ctx.integer(4)}, wrapir::f32);
  const auto k = b.triton_kernel("triton_k_0", "def k():\n    s = 'admin" + rlo + "'\n", unary_signature);
  b.call(k, {x, out, 4});
  b.comment("ok " + lri + "x" + nel);
  b.extern_alloc("aten.foo.default", {x, std::string("user") + rlo + " \xc3\xa9"},
                 ir::Layout::contiguous(ctx, {ctx.integer(4)}, wrapir::f32, wrapir::cuda_device(0)));
  b.output(out);
  const std::string module = emit_ok(p);
  CHECK(module.find(rlo) == std::string::npos);
  CHECK(module.find(lri) == std::string::npos);
  CHECK(module.find(nel) == std::string::npos);
  CHECK(module.find(R"('def k():\n    s = \'admin\u202e\'\n')") != std::string::npos);
  CHECK(module.find(R"(# ok \xe2\x81\xa6x\xc2\x85)" "\n") != std::string::npos);
  CHECK(module.find(R"('user\u202e )" "\xc3\xa9'") != std::string::npos);  // other UTF-8 is kept
  // Diagnostics quote names the same way.
  ir::Program bad = p;
  bad.kernels[0].name = "evil" + rlo;
  CHECK(emit_error(bad).find(R"('evil\xe2\x80\xae')") != std::string::npos);
}

TEST_CASE("emit/python: a kernel constant's view is bounds-checked like every argument (regression, issue 12 effects)") {
  // What a line touches comes from the effects table, which includes a
  // definition's metadata constants; the hand-written field walk skipped
  // them, so a view the verifier refuses passed the emitter.
  ir::Program p{"constant_view"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto buf = b.empty({ctx.integer(8)}, wrapir::f32);  // 32 bytes
  ir::KernelMetadata metadata = grid1d();
  metadata.constants.push_back(ir::NamedArg{
      ir::Name{"table"}, ir::Arg{ir::BufferArg{buf, ir::View{{ctx.integer(9)}, {ctx.integer(1)}, ctx.integer(0)}}}});
  const auto k = b.triton_kernel("triton_k_0", "def k(): pass\n", unary_signature, metadata);
  b.call(k, {buf, buf, 8});
  CHECK(emit_error(p).find("(KernelDefinition) of program 'constant_view': a view of buf0 reaches past the storage "
                           "it views: its extent of 36 bytes exceeds the 32 bytes") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Diagnostics

TEST_CASE("emit/python: programs that cannot be rendered are diagnostics") {
  SUBCASE("an id out of range names the line") {
    ir::Program p = pointwise_add();
    p.body.emplace_back(ir::Allocate{ir::BufferId{7}});
    const std::string e = emit_error(p);
    CHECK(e.find("line 5 (Allocate) of program 'pointwise_add'") != std::string::npos);
    CHECK(e.find("buffer id 7 is out of range (the program has 3 buffers)") != std::string::npos);
  }
  SUBCASE("an invalid name") {
    ir::Program p = pointwise_add();
    p.buffers[2].name = "buf0; import os";
    CHECK(emit_error(p).find("invalid buffer name 'buf0; import os'") != std::string::npos);
  }
  SUBCASE("a name that would shadow the module's own") {
    ir::Program p = pointwise_add();
    p.buffers[2].name = "empty_strided_cuda";
    CHECK(emit_error(p).find("would shadow a name of the generated Python module") != std::string::npos);
  }
  SUBCASE("a name that would shadow RuntimeError, which run-time guards raise (regression)") {
    ir::Program p = pointwise_add();
    p.buffers[2].name = "RuntimeError";
    CHECK(emit_error(p).find("would shadow a name of the generated Python module") != std::string::npos);
  }
  SUBCASE("a buffer named like a kernel") {
    ir::Program p = pointwise_add();
    p.buffers[2].name = "triton_poi_fused_add_0";
    CHECK(emit_error(p).find("is also the name of a kernel") != std::string::npos);
  }
  SUBCASE("a helper name the program already uses") {
    ir::Program p = pointwise_add();
    p.buffers[2].name = "stream0";
    CHECK(emit_error(p).find("needs the name 'stream0'") != std::string::npos);
  }
  SUBCASE("unbalanced scopes") {
    ir::Program p = pointwise_add();
    p.body.emplace_back(ir::ExitSubgraph{});
    CHECK(emit_error(p).find("ExitSubgraph does not close the innermost open scope") != std::string::npos);
    ir::Program q = pointwise_add();
    q.body.emplace_back(ir::EnterStreamContext{1});
    CHECK(emit_error(q).find("EnterStreamContext line is never closed") != std::string::npos);
  }
  SUBCASE("a binary kernel") {
    ir::Program p{"binary"};
    ir::Builder b{p};
    b.kernel("k", ir::KernelLanguage::cubin, ir::BinaryRef{"k.cubin", "k"}, "");
    CHECK(emit_error(p).find("binary") != std::string::npos);
  }
  SUBCASE("a call of a kernel nobody defines") {
    ir::Program p = pointwise_add();
    p.body.erase(p.body.begin());
    CHECK(emit_error(p).find("is called but no KernelDefinition") != std::string::npos);
  }
  SUBCASE("an operator outside the module's namespaces") {
    ir::Program p = pointwise_add();
    p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "buf0.add_", {}, {}});
    CHECK(emit_error(p) == "line 5 (ExternKernelAlloc) of program 'pointwise_add': operator 'buf0.add_' is not an "
                           "operator a program may call: expected aten.<op>[.<overload>], "
                           "torch.ops.<namespace>.<op>[.<overload>], inductor_ops.<op>[.<overload>], "
                           "_quantized.<op>[.<overload>], extern_kernels.<name> or a path declared in the operator "
                           "registry");
  }
  SUBCASE("a null expression") {
    ir::Program p = pointwise_add();
    p.body.emplace_back(ir::SymbolicCallArg{p.ctx().symbol("x0"), ex::Expr{}});
    CHECK(emit_error(p).find("the symbol's value is a null expression") != std::string::npos);
  }
  SUBCASE("a duplicate keyword argument") {
    ir::Program p = pointwise_add();
    p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "aten.f", {}, {{"a", 1}, {"a", 2}}});
    CHECK(emit_error(p).find("keyword argument 'a' is given twice") != std::string::npos);
  }
}

TEST_CASE("emit/python: operators that reach beyond operators are diagnostics (regression, issue 12)") {
  // These emitted, and ran when the module was called: an operator path
  // only had to start with an allowed namespace. Every line kind that calls
  // an operator is checked.
  for (const char* attack : {"torch.builtins.exec", "torch.os.system", "torch.load"}) {
    CAPTURE(attack);
    const auto with_line = [&](ir::Line line) {
      ir::Program p = pointwise_add();
      p.body.push_back(std::move(line));
      return emit_error(p);
    };
    const ir::BufferId out{2};
    const std::string why = std::string(": operator '") + attack +
                            "' is not an operator a program may call: under 'torch' only "
                            "torch.ops.<namespace>.<op>[.<overload>] is callable";
    CHECK(with_line(ir::ExternKernelAlloc{std::nullopt, attack, {std::string("import os; os.system('id')")}, {}}) ==
          "line 5 (ExternKernelAlloc) of program 'pointwise_add'" + why);
    CHECK(with_line(ir::ExternKernelOut{attack, {}, {}, ir::BufferArg{out}}) ==
          "line 5 (ExternKernelOut) of program 'pointwise_add'" + why);
    CHECK(with_line(ir::ExternKernelMultiOut{std::nullopt, attack, {}, {}, {}}) ==
          "line 5 (ExternKernelMultiOut) of program 'pointwise_add'" + why);
    CHECK(with_line(ir::ScatterFallback{attack, out, 0, ir::BufferArg{out}, 1.0, {}}) ==
          "line 5 (ScatterFallback) of program 'pointwise_add'" + why);
    CHECK(with_line(ir::IndexPutFallback{attack, out, {}, ir::BufferArg{out}, false}) ==
          "line 5 (IndexPutFallback) of program 'pointwise_add'" + why);
  }
}

TEST_CASE("emit/python: an operator with a Python keyword part is a diagnostic (regression, issue 12)") {
  // `aten.import.default(...)` made the whole module a SyntaxError.
  ir::Program p = pointwise_add();
  p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "aten.import.default", {}, {}});
  CHECK(emit_error(p) == "line 5 (ExternKernelAlloc) of program 'pointwise_add': operator 'aten.import.default' "
                         "has the part 'import', a Python keyword");
  ir::Program q = pointwise_add();
  q.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "torch.ops.aten.mm.None", {}, {}});
  CHECK(emit_error(q).find("has the part 'None', a Python keyword") != std::string::npos);
}

TEST_CASE("emit/python: PythonOptions::operators declares extra operator paths") {
  ir::Program p = pointwise_add();
  p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "torch.nn.functional.gelu", {ir::BufferArg{ir::BufferId{2}}}, {}});
  CHECK(emit_error(p).find("operator 'torch.nn.functional.gelu' is not an operator a program may call") !=
        std::string::npos);
  py::PythonOptions options;
  REQUIRE(options.operators.declare("torch.nn.functional.gelu"));
  CHECK(call_body(emit_ok(p, options)).find("    torch.nn.functional.gelu(buf0)\n") != std::string::npos);
  // A declared path must still start with a name the module binds...
  ir::Program q = pointwise_add();
  q.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "mylib.fused", {}, {}});
  REQUIRE(options.operators.declare("mylib.fused"));
  CHECK(emit_error(q, options) == "line 5 (ExternKernelAlloc) of program 'pointwise_add': operator 'mylib.fused' "
                                  "starts with 'mylib', which the generated module does not bind (it binds aten, "
                                  "torch, extern_kernels, inductor_ops and _quantized)");
  // ... and be printable as Python.
  ir::Program r = pointwise_add();
  r.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "torch.nn.functional.lambda", {}, {}});
  REQUIRE(options.operators.declare("torch.nn.functional.lambda"));
  CHECK(emit_error(r, options).find("has the part 'lambda', a Python keyword") != std::string::npos);
}

TEST_CASE("emit/python: views that provably reach past their storage are diagnostics (regression, issue 12)") {
  // These emitted reinterpret_tensor / alloc_from_pool calls that read and
  // wrote past the storage: neither checks bounds.
  const auto program = [](auto&& add_lines) {
    ir::Program p{"views"};
    ir::Builder b{p};
    auto& ctx = p.ctx();
    const auto k = unary_kernel(b, "triton_poi_fused_0");
    const auto buf = b.empty({ctx.integer(8)}, wrapir::f32);  // 32 bytes
    add_lines(b, ctx, k, buf);
    return p;
  };
  SUBCASE("Reinterpret") {
    const ir::Program p = program([](ir::Builder& b, ex::Context& ctx, ir::KernelId, ir::BufferId buf) {
      b.view(buf, {ctx.integer(4)}, {ctx.integer(1)}, ctx.integer(6));
    });
    CHECK(emit_error(p) == "line 2 (Reinterpret) of program 'views': view buf1 of buf0 reaches past the storage it "
                           "views: its extent of 40 bytes exceeds the 32 bytes of storage it views");
  }
  SUBCASE("a view of a view") {
    const ir::Program p = program([](ir::Builder& b, ex::Context& ctx, ir::KernelId, ir::BufferId buf) {
      const auto upper = b.view(buf, {ctx.integer(4)}, {ctx.integer(1)}, ctx.integer(4));
      b.view(upper, {ctx.integer(4)}, {ctx.integer(1)}, ctx.integer(1));
    });
    CHECK(emit_error(p).find("view buf2 of buf1 reaches past the storage it views: its extent of 20 bytes exceeds "
                             "the 16 bytes") != std::string::npos);
  }
  SUBCASE("a buffer-argument view, a negative stride, an output view") {
    ir::Program p = program([](ir::Builder& b, ex::Context& ctx, ir::KernelId k, ir::BufferId buf) {
      b.call(k, {ir::BufferArg{buf, ir::View{{ctx.integer(9)}, {ctx.integer(1)}, ctx.integer(0)}}, buf, 8});
    });
    CHECK(emit_error(p) == "line 2 (KernelCall) of program 'views': a view of buf0 reaches past the storage it "
                           "views: its extent of 36 bytes exceeds the 32 bytes of storage it views");
    ir::Program q = program([](ir::Builder& b, ex::Context& ctx, ir::KernelId k, ir::BufferId buf) {
      b.call(k, {ir::BufferArg{buf, ir::View{{ctx.integer(2)}, {ctx.integer(-1)}, ctx.integer(4)}}, buf, 8});
    });
    CHECK(emit_error(q).find("its stride 0 (-1) is negative") != std::string::npos);
    ir::Program r = program([](ir::Builder& b, ex::Context& ctx, ir::KernelId, ir::BufferId buf) {
      b.output(ir::ProgramOutput{ir::BufferArg{buf, ir::View{{ctx.integer(8)}, {ctx.integer(2)}, ctx.integer(0)}}});
    });
    CHECK(emit_error(r) == "program 'views': a view of buf0 reaches past the storage it views: its extent of 60 "
                           "bytes exceeds the 32 bytes of storage it views");
  }
  SUBCASE("a Reinterpret that changes the dtype (regression: measured in the view's element size)") {
    // reinterpret_tensor keeps the base's dtype, so an int8 view of 32
    // elements over a float32 base of 8 reaches 128 bytes, not 32.
    ir::Program p = program([](ir::Builder& b, ex::Context& ctx, ir::KernelId, ir::BufferId buf) {
      b.view(buf, {ctx.integer(32)}, {ctx.integer(1)}, ctx.integer(0));
    });
    p.buffers[1].layout.dtype = wrapir::i8;
    CHECK(emit_error(p).find("view 'buf1' has dtype int8 but its base 'buf0' has dtype float32; reinterpret_tensor "
                             "cannot change a dtype") != std::string::npos);
  }
  SUBCASE("a pool slice whose stride may be negative (regression: it was never checked)") {
    ir::Program p{"pooled"};
    ir::Builder b{p};
    auto& ctx = p.ctx();
    const auto s0 = b.size_symbol("s0", 200);
    p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(64)});
    const auto a = b.declare("a", ir::Layout{{ctx.integer(2)}, {s0 - 100}, ctx.integer(0), wrapir::f32,
                                             wrapir::cuda_device(0)},
                             ir::BufferRole::intermediate);
    b.append(ir::PoolCreate{ir::PoolId{0}});
    b.append(ir::AllocFromPool{a, ir::PoolId{0}, ctx.integer(0)});
    const ir::ViewExtent e = ir::check_pool_slice(p.buffers[a.index].layout, ctx.integer(0), ctx.integer(64));
    CHECK(e.fit != ir::ViewFit::fits);  // the stride's sign is open: a run-time check at the least
    bool stride_condition = false;
    for (const ir::ExtentCondition& c : e.open_conditions)
      stride_condition = stride_condition || ex::print_python(c.lhs).find("s0") != std::string::npos ||
                         ex::print_python(c.rhs).find("s0") != std::string::npos;
    CHECK(stride_condition);
  }
  SUBCASE("AllocFromPool") {
    ir::Program p{"pooled"};
    ir::Builder b{p};
    auto& ctx = p.ctx();
    p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(64)});
    const auto a = b.declare("a", ir::Layout::contiguous(ctx, {ctx.integer(8)}, wrapir::f32, wrapir::cuda_device(0)),
                             ir::BufferRole::intermediate);
    b.append(ir::PoolCreate{ir::PoolId{0}});
    b.append(ir::AllocFromPool{a, ir::PoolId{0}, ctx.integer(48)});
    CHECK(emit_error(p) == "line 1 (AllocFromPool) of program 'pooled': buffer a carved from pool pool0 reaches past "
                           "the storage it views: it reaches 80 bytes into a pool of 64 bytes");
  }
}

TEST_CASE("emit/python: views whose bounds depend on the symbols get a guard that raises") {
  ir::Program p{"guarded"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 8);
  const auto s1 = b.size_symbol("s1", 4);
  const auto x = b.input("arg0_1", {s0}, wrapir::f32);
  const auto k = unary_kernel(b, "triton_poi_fused_0");
  const auto buf = b.empty({s0}, wrapir::f32);
  b.call(k, {x, buf, s0});
  const auto alias = b.view(buf, {s1}, {ctx.integer(1)}, ctx.integer(0));
  b.output(alias);
  const std::string module = emit_ok(p);
  const std::string guard =
      "if not ((4*s1) <= (4*s0)): raise RuntimeError('view buf1 of buf0 reaches past the storage it views: it needs "
      "%d bytes, the storage has %d' % (4*s1, 4*s0))\n";
  const std::size_t at = module.find(guard);
  REQUIRE(at != std::string::npos);
  CHECK(at < module.find("buf1 = reinterpret_tensor(buf0"));  // before the view is taken
  if (std::system("python3 -c 'pass' > /dev/null 2>&1") != 0) return;
  // The guard itself, run by Python: passes when the view fits, raises a
  // RuntimeError that says why when it does not.
  const auto run = [&](int v0, int v1) {
    const std::string script = "s0 = " + std::to_string(v0) + "; s1 = " + std::to_string(v1) +
                               "\ntry:\n    " + guard.substr(0, guard.size() - 1) +
                               "\nexcept RuntimeError as e:\n    assert 'needs 16 bytes, the storage has 8' in str(e), e\n"
                               "    raise SystemExit(3)\n";
    const std::filesystem::path file = std::filesystem::temp_directory_path() / "wrapir_guard_test.py";
    std::ofstream(file) << script;
    return std::system(("python3 '" + file.string() + "' > /dev/null 2>&1").c_str());
  };
  CHECK(run(8, 4) == 0);
  CHECK(run(4, 4) == 0);
  CHECK(WEXITSTATUS(run(2, 4)) == 3);
}

namespace {

/// Every callee of the Python source `module` (`name(`, `a.b.c(`), outside
/// string literals and comments, with the position of each.
std::vector<std::string> callees(std::string_view module) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  while (i < module.size()) {
    const char c = module[i];
    if (c == '#') {
      while (i < module.size() && module[i] != '\n') ++i;
    } else if (module.substr(i, 3) == "'''" || module.substr(i, 3) == "\"\"\"") {
      const std::string_view quote = module.substr(i, 3);
      const std::size_t end = module.find(quote, i + 3);
      i = end == std::string_view::npos ? module.size() : end + 3;
    } else if (c == '\'' || c == '"') {
      ++i;
      while (i < module.size() && module[i] != c) i += module[i] == '\\' ? 2 : 1;
      ++i;
    } else if (c == '(') {
      std::size_t start = i;
      while (start > 0 && ident(module[start - 1])) --start;
      if (start < i) out.emplace_back(module.substr(start, i - start));
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("emit/python: generated code never calls anything a program merely names") {
  // Every call in every golden module is one of the module's own helpers, a
  // method of a value the module made, a kernel or subgraph function the
  // module defines, or an operator path `ir::check_operator_path` accepts.
  const std::vector<std::string_view> helpers = {
      "AsyncCompile", "async_compile.triton", "async_compile.cpp_pybinding", "async_compile.cuda",
      "async_compile.multi_kernel", "async_compile.size_hint_multi_kernel", "async_compile.wait", "globals",
      "empty_strided_cpu", "empty_strided_cuda", "empty_strided_xpu", "empty_strided", "empty_strided_p2p",
      "reinterpret_tensor", "alloc_from_pool", "assert_size_stride", "assert_alignment", "get_raw_stream", "torch.cuda._DeviceGuard",
      "torch.cuda.set_device", "torch.xpu._DeviceGuard", "torch.xpu.set_device", "torch.cuda.stream",
      "torch.cuda.current_device", "torch.device", "torch.save", "os.makedirs", "_print_debugging_tensor_value_info",
      "collections.defaultdict", "c_void_p", "c_long", "c_int", "c_float", "c_double", "c_bool", "rand_strided",
      "print_performance", "benchmark_compiled_module", "compiled_module_main", "get_args", "call", "list", "args.clear",
      "slice", "RuntimeError", "min", "max", "abs", "int", "math.floor", "math.ceil", "math.trunc", "round"};
  const std::vector<std::string_view> methods = {"run", "item", "clone", "copy_", "zero_", "size", "stride",
                                                 "storage_offset", "data_ptr", "__floordiv__"};
  int modules = 0;
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir)) {
    if (entry.path().extension() != ".py") continue;
    ++modules;
    const std::string module = read_file(entry.path());
    std::vector<std::string> defined;  // kernels and subgraph functions
    std::istringstream lines(module);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("def ", 0) == 0) defined.push_back(line.substr(4, line.find('(') - 4));
      if (const std::size_t eq = line.find(" = async_compile."); eq != std::string::npos && line[0] != ' ')
        defined.push_back(line.substr(0, eq));
    }
    const auto is_defined = [&](std::string_view n) { return std::find(defined.begin(), defined.end(), n) != defined.end(); };
    for (const std::string& callee : callees(module)) {
      CAPTURE(entry.path().filename().string());
      CAPTURE(callee);
      const std::string_view root = std::string_view(callee).substr(0, callee.find('.'));
      const std::string_view last = std::string_view(callee).substr(callee.rfind('.') + 1);
      const bool ok = std::find(helpers.begin(), helpers.end(), callee) != helpers.end() || is_defined(callee) ||
                      !wrapir::ir::check_operator_path(callee) ||
                      (callee.find('.') != std::string::npos &&
                       std::find(methods.begin(), methods.end(), last) != methods.end() &&
                       (root.empty() || wrapir::ir::is_valid_name(root))) ||  // `buf1[0].size(0)`
                      (is_defined(root) && last == root);  // a CUDA kernel `k.k(...)`
      CHECK(ok);
    }
  }
  CHECK(modules >= 10);
}

// ---------------------------------------------------------------------------
// The goldens are Python

TEST_CASE("emit/python: every golden module parses as Python") {
  if (std::system("python3 -c 'import ast' > /dev/null 2>&1") != 0) {
    MESSAGE("python3 is not available; skipping the syntax check of the goldens");
    return;
  }
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir)) {
    if (entry.path().extension() != ".py" || entry.path().stem() == "every_line_kind") continue;
    const std::string command = "python3 -c \"import ast,sys; ast.parse(open(sys.argv[1], encoding='utf-8').read())\" '" +
                                entry.path().string() + "'";
    CAPTURE(entry.path().string());
    CHECK(std::system(command.c_str()) == 0);
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("emit/python: provenance is written back as Inductor's comments") {
  ir::Program p = pointwise_add();
  auto& def = std::get<ir::KernelDefinition>(p.body[0]);
  def.provenance = ir::Provenance{{"add"}, {"aten.add"}, std::nullopt};
  for (ir::Line& l : p.body)
    if (auto* call = std::get_if<ir::KernelCall>(&l))
      call->provenance = ir::Provenance{{"add", "relu\xff"}, {"aten.add"}, std::string("add")};
  const std::string module = emit_ok(p);
  INFO(module);
  // Before the definition, in the header, and before the launch and its stream.
  CHECK(module.find("\n\n# Topologically Sorted Source Nodes: [add], Original ATen: [aten.add]\n"
                    "triton_poi_fused_add_0 = async_compile.triton(") != std::string::npos);
  const std::string body = call_body(module);
  const std::size_t comment =
      body.find("# Topologically Sorted Source Nodes: [add, relu\\xff], Original ATen: [aten.add]\n");
  REQUIRE(comment != std::string::npos);
  CHECK(comment < body.find("get_raw_stream"));
  CHECK(comment < body.find("triton_poi_fused_add_0.run("));
  // A context alone is no comment, as Inductor's LineContext renders nothing.
  for (ir::Line& l : p.body)
    if (auto* call = std::get_if<ir::KernelCall>(&l)) call->provenance = ir::Provenance{{}, {}, std::string("add")};
  CHECK(call_body(emit_ok(p)).find("Topologically") == std::string::npos);
}

TEST_CASE("emit/python: a C++ kernel's binding types keep the const of its definition") {
  ir::Program p{"cpp_const"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto x = b.input("arg0_1", {ctx.integer(8)}, wrapir::f32, wrapir::cpu_device());
  ir::KernelMetadata m;
  m.const_params = {"in_ptr0", "ks0"};
  const auto k = b.kernel("cpp_fused_0", ir::KernelLanguage::cpp, ir::SourceText{"extern \"C\" void kernel() {}"},
                          "in_ptr0: *float32, out_ptr0: *float32, ks0: int64", m);
  const auto out = b.empty({ctx.integer(8)}, wrapir::f32, wrapir::cpu_device());
  b.call(k, {x, out, 8});
  b.output(out);
  const std::string module = emit_ok(p);
  INFO(module);
  CHECK(module.find("cpp_fused_0 = async_compile.cpp_pybinding(['const float*', 'float*', 'const int64_t'], ") !=
        std::string::npos);
}
