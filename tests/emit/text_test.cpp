// The text form's printer (emit/text.hpp): the exact text of a small
// program, and how scalars, strings, expressions and broken programs print.

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/program.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
using wrapir::text::to_text;

/// `value` as an argument of a one-line program, as printed.
std::string printed_arg(ir::Arg value) {
  ir::Program p{"p"};
  p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "aten.f", {std::move(value)}, {}});
  const std::string text = to_text(p);
  const std::string_view head = "  ExternKernelAlloc result=none kernel=aten.f args=[";
  const std::size_t at = text.find(head);
  REQUIRE(at != std::string::npos);
  const std::size_t start = at + head.size();
  const std::size_t stop = text.find("] kwargs=[]\n", start);
  REQUIRE(stop != std::string::npos);
  return text.substr(start, stop - start);
}

}  // namespace

TEST_CASE("emit/text: golden text of a small program") {
  ir::Program p{"add_relu"};
  ir::Builder b{p};
  ex::Expr s0 = b.size_symbol("s0", 1024);
  ir::BufferId x = b.input("arg0_1", {s0, b.ctx().integer(4)}, ir::DType::float32);
  ir::KernelMetadata meta;
  meta.num_warps = 4;
  meta.grid_type = ir::GridType::grid_1d;
  meta.block = {ir::BlockSize{"XBLOCK", 1024}};
  ir::KernelId k = b.triton_kernel("triton_poi_fused_add_relu_0",
                                   "@triton.jit\ndef triton_poi_fused_add_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: "
                                   "tl.constexpr):\n    xoffset = tl.program_id(0) * XBLOCK\n",
                                   "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32", meta);
  ir::BufferId out = b.empty({s0, b.ctx().integer(4)}, ir::DType::float32);
  b.call(k, {x, out, s0 * 4});
  b.comment("relu(x + 1)");
  b.output(out);
  const std::string golden =
      "program add_relu {\n"
      "  symbol s0 : positive origin=input hint=1024\n"
      "  buffer arg0_1 : input float32[s0, 4] strides=[4, 1] offset=0 device=cuda:0\n"
      "  buffer buf0 : output float32[s0, 4] strides=[4, 1] offset=0 device=cuda:0\n"
      "  kernel triton_poi_fused_add_relu_0 : triton(in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32)\n"
      "  inputs s0, %arg0_1\n"
      "  KernelDefinition kernel=@triton_poi_fused_add_relu_0 source=\"@triton.jit\\ndef "
      "triton_poi_fused_add_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\\n    xoffset = "
      "tl.program_id(0) * XBLOCK\\n\" metadata={constants=[], num_warps=4, num_stages=none, "
      "shared_memory_bytes=none, grid_type=Grid1D, block=[XBLOCK=1024]}\n"
      "  Allocate buffer=%buf0\n"
      "  KernelCall kernel=@triton_poi_fused_add_relu_0 args=[%arg0_1, %buf0, #(4*s0)] arg_types=[*fp32, *fp32, i32] "
      "grid=launcher device=cuda:0 stream=0\n"
      "  Comment text=\"relu(x + 1)\"\n"
      "  outputs %buf0\n"
      "}\n";
  CHECK(to_text(p) == golden);
  // The appending overload appends.
  std::string appended = "# dump\n";
  wrapir::text::to_text(p, appended);
  CHECK(appended == "# dump\n" + golden);
  // And the golden text reads back to the program.
  wrapir::text::TextParseOptions options;
  options.context = p.context;
  auto parsed = wrapir::text::parse_program_text(golden, options);
  REQUIRE(parsed);
  CHECK(*parsed == p);
}

TEST_CASE("emit/text: to_string prints one line or one value, as the text form does") {
  ir::Program p{"p"};
  ir::Builder b{p};
  const ex::Expr s0 = b.size_symbol("s0", 64);
  const ir::BufferId x = b.input("arg0_1", {s0}, ir::DType::float32);
  const ir::KernelId k = b.triton_kernel("k0", "src", "in_ptr0: *fp32, xnumel: i32");
  const ir::TypedGrid grid{ir::GridType::grid_1d, {ir::NamedExpr{"xnumel", s0}}, {ir::BlockSize{"XBLOCK", 128}}};
  b.call(k, {x, s0}, {.grid = grid});
  const ir::Line& call = p.body.back();
  using wrapir::text::to_string;
  const std::string line = to_string(call, p);
  CHECK(line ==
        "KernelCall kernel=@k0 args=[%arg0_1, #s0] arg_types=[*fp32, i32] "
        "grid=typed{type=Grid1D, numels=[xnumel=s0], block=[XBLOCK=128]} device=cuda:0 stream=0");
  // Every line of the program's text is to_string of the line.
  CHECK(to_text(p).find("  " + line + "\n") != std::string::npos);
  // A line kind directly, and the parts of one.
  const auto& kc = std::get<ir::KernelCall>(call);
  CHECK(to_string(kc, p) == line);
  CHECK(to_string(kc.grid, p) == "typed{type=Grid1D, numels=[xnumel=s0], block=[XBLOCK=128]}");
  CHECK(to_string(kc.args, p) == "[%arg0_1, #s0]");
  CHECK(to_string(kc.args[0], p) == "%arg0_1");
  CHECK(to_string(ir::LaunchGrid{ir::ExplicitGrid{s0, b.ctx().integer(1), s0 * 2}}, p) ==
        "explicit{x=s0, y=1, z=(2*s0)}");
  CHECK(to_string(ir::Arg{std::string("a\"b")}, p) == "\"a\\\"b\"");
  CHECK(to_string(x, p) == "%arg0_1");
  CHECK(to_string(s0 + 1, p) == "(s0 + 1)");
  // Ids of another program's tables never read past this one's.
  CHECK(to_string(ir::BufferId{7}, p) == "%<invalid id 7>");
}

TEST_CASE("emit/text: arguments are unambiguous literals") {
  ir::Program p{"p"};
  ex::Context& ctx = p.ctx();
  CHECK(printed_arg(ir::Arg{3}) == "3");
  CHECK(printed_arg(ir::Arg{-3}) == "-3");
  CHECK(printed_arg(ir::Arg{ctx.integer(3)}) == "#3");
  CHECK(printed_arg(ir::Arg{ctx.integer(-3)}) == "#(-3)");
  CHECK(printed_arg(ir::Arg{ctx.symbol("s0")}) == "#s0");
  CHECK(printed_arg(ir::Arg{3.0}) == "3.0");
  CHECK(printed_arg(ir::Arg{-0.0}) == "-0.0");
  CHECK(printed_arg(ir::Arg{1e21}) == "1e+21");
  CHECK(printed_arg(ir::Arg{1e-7}) == "1e-07");
  CHECK(printed_arg(ir::Arg{0.1}) == "0.1");
  CHECK(printed_arg(ir::Arg{std::numeric_limits<double>::infinity()}) == "inf");
  CHECK(printed_arg(ir::Arg{-std::numeric_limits<double>::infinity()}) == "-inf");
  CHECK(printed_arg(ir::Arg{std::numeric_limits<double>::quiet_NaN()}) == "nan");
  CHECK(printed_arg(ir::Arg{true}) == "true");
  CHECK(printed_arg(ir::Arg{false}) == "false");
  CHECK(printed_arg(ir::Arg{ir::None{}}) == "none");
  CHECK(printed_arg(ir::Arg{std::string("none")}) == "\"none\"");
  CHECK(printed_arg(ir::Arg{wrapir::cuda_device(1)}) == "device(cuda:1)");
  CHECK(printed_arg(ir::Arg{wrapir::cpu_device()}) == "device(cpu)");
  CHECK(printed_arg(ir::Arg{ir::DType::bool_}) == "dtype(bool)");
  CHECK(printed_arg(ir::Arg{ir::ArgList{}}) == "[]");
  CHECK(printed_arg(ir::Arg{ir::ArgList{{ir::Arg{1}, ir::Arg{ir::ArgList{{ir::Arg{2.5}}}}}}}) == "[1, [2.5]]");
  CHECK(printed_arg(ir::Arg{std::numeric_limits<std::int64_t>::min()}) == "-9223372036854775808");
}

TEST_CASE("emit/text: strings are escaped onto one ASCII line") {
  CHECK(printed_arg(ir::Arg{std::string("a\"b\\c\nd\te\rf")}) == R"("a\"b\\c\nd\te\rf")");
  CHECK(printed_arg(ir::Arg{std::string("\x01\x1f\x7f\x80\xff")}) == R"("\x01\x1f\x7f\x80\xff")");
  CHECK(printed_arg(ir::Arg{std::string("caf\xc3\xa9")}) == R"("caf\xc3\xa9")");
  CHECK(printed_arg(ir::Arg{std::string("\0z", 2)}) == R"("\x00z")");
  CHECK(printed_arg(ir::Arg{std::string()}) == R"("")");
}

TEST_CASE("emit/text: expressions are bare when atomic, parenthesised otherwise") {
  ir::Program p{"p"};
  ex::Context& ctx = p.ctx();
  const ex::Expr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
  // A symbol named like the text form's `none` is parenthesised, so that
  // `outputs none` always means None.
  const ex::Expr none_symbol = ctx.symbol("none");
  for (ex::Expr s : {s0, s1, none_symbol}) p.symbols.push_back(ir::SymbolDecl{s, ir::SymbolOrigin::input});
  p.outputs = {s0, ctx.integer(0), ctx.integer(7), ctx.integer(-7), s0 * s1 + 1, ex::floor_div(s0, ctx.integer(2)),
               none_symbol, ir::None{}};
  const std::string text = to_text(p);
  CHECK(text.find("  outputs s0, 0, 7, (-7), (s0*s1 + 1), (s0 // 2), (none), none\n") != std::string::npos);
  wrapir::text::TextParseOptions options;
  options.context = p.context;
  auto parsed = wrapir::text::parse_program_text(text, options);
  REQUIRE(parsed);
  CHECK(*parsed == p);
}

TEST_CASE("emit/text: an Identity prints as its operand, bare when that is atomic") {
  // print_python drops Identity; the text form follows it, and must then
  // print what reads back the same: `s0`, not `(s0)`.
  ir::Program p{"p"};
  ex::Context& ctx = p.ctx();
  const ex::Expr s0 = ctx.symbol("s0");
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input});
  p.outputs = {ex::identity(s0), ex::identity(s0 + 1), ex::identity(ctx.integer(3))};
  const std::string text = to_text(p);
  CHECK(text.find("  outputs s0, (s0 + 1), 3\n") != std::string::npos);
  auto parsed = wrapir::text::parse_program_text(text);
  REQUIRE(parsed);
  CHECK(to_text(*parsed) == text);
}

TEST_CASE("emit/text: table entries leave out default attributes") {
  ir::Program p{"tables"};
  ex::Context& ctx = p.ctx();
  const ex::Expr s0 = ctx.symbol("s0");
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input});
  ir::BufferDecl plain{"a", ir::Layout::contiguous(ctx, {s0}, ir::DType::float16, wrapir::cuda_device(0)),
                       ir::BufferRole::input};
  ir::BufferDecl every = plain;
  every.name = "b";
  every.role = ir::BufferRole::comm;
  every.donated = true;
  every.comm = ir::CommBufferInfo{ir::CommBufferType::symm_mem, "tp"};
  every.multi_output = true;
  every.stream = 3;
  every.aligned = false;
  p.buffers = {plain, every};
  const std::string text = to_text(p);
  CHECK(text.find("  buffer a : input float16[s0] strides=[1] offset=0 device=cuda:0\n") != std::string::npos);
  CHECK(text.find("  buffer b : comm float16[s0] strides=[1] offset=0 device=cuda:0 donated=true "
                  "comm={type=symm_mem, group=\"tp\"} multi_output=true stream=3 aligned=false\n") !=
        std::string::npos);
}

TEST_CASE("emit/text: a broken program prints without crashing, and the text is refused") {
  ir::Program p{"broken"};
  p.body.emplace_back(ir::Allocate{ir::BufferId{5}});
  p.body.emplace_back(ir::SymbolicCallArg{ex::Expr{}, ex::Expr{}});
  p.body.emplace_back(ir::EnterSubgraph{ir::GraphId{0}});
  p.symbols.push_back(ir::SymbolDecl{p.ctx().integer(3), ir::SymbolOrigin::input});
  p.body.emplace_back(ir::KernelCall{ir::KernelId{1}, {}, {}, ir::LauncherGrid{}, ir::Device{}, 0});
  const std::string text = to_text(p);
  CHECK(text.find("Allocate buffer=%<invalid id 5>") != std::string::npos);
  CHECK(text.find("SymbolicCallArg symbol=<null expression> value=<null expression>") != std::string::npos);
  CHECK(text.find("EnterSubgraph graph=^<invalid id 0>") != std::string::npos);
  CHECK(text.find("symbol <not a symbol: 3> : origin=input") != std::string::npos);
  CHECK(text.find("KernelCall kernel=@<invalid id 1>") != std::string::npos);
  CHECK_FALSE(wrapir::text::parse_program_text(text));
}
