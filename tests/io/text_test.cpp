// The text form's parser (io/text.hpp) against its printer (emit/text.hpp):
// round trips of every line kind, and the diagnostics of bad input.

#include <wrapir/emit/text.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/io/text.hpp>
#include <wrapir/ir/program.hpp>

#include <boost/mp11/algorithm.hpp>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace ex = wrapir::expr;
using wrapir::text::parse_program_text;
using wrapir::text::TextParseOptions;
using wrapir::text::to_text;

TextParseOptions in_context(const ir::Program& p) {
  TextParseOptions options;
  options.context = p.context;
  return options;
}

/// print -> parse (into p's context) == p, and the reprint is identical;
/// returns the text.
std::string check_round_trip(const ir::Program& p) {
  const std::string text = to_text(p);
  auto parsed = parse_program_text(text, in_context(p));
  if (!parsed) FAIL_CHECK(parsed.error().message << "\n" << text);
  REQUIRE(parsed);
  CHECK(*parsed == p);
  CHECK(to_text(*parsed) == text);
  // A fresh context reads the same text (what a bug report needs).
  auto fresh = parse_program_text(text);
  REQUIRE(fresh);
  CHECK(to_text(*fresh) == text);
  return text;
}

/// The message of the diagnostic `text` gives (fails the test if it parses).
std::string error_of(std::string_view text, TextParseOptions options = {}) {
  auto parsed = parse_program_text(text, std::move(options));
  if (parsed) {
    FAIL_CHECK("expected a diagnostic for:\n" << text);
    return {};
  }
  const std::string& message = parsed.error().message;
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind("line ", 0) == 0);
  return message;
}

/// A program with a small header and tables (plus the extra table lines
/// given), and `body` as its body lines (text), for negative tests. The body
/// starts on line 7 when no extra table lines are given.
std::string wrap(std::string_view body, std::string_view symbols = {}, std::string_view buffers = {},
                 std::string_view kernels = {}) {
  std::string text = "program p {\n  symbol s0 : positive origin=input hint=8\n";
  text += symbols;
  text += "  buffer buf0 : input float32[s0] strides=[1] offset=0 device=cuda:0\n";
  text += "  buffer buf1 : output float32[s0] strides=[1] offset=0 device=cuda:0\n";
  text += buffers;
  text += "  kernel k0 : triton(in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32)\n";
  text += kernels;
  text += "  inputs %buf0, s0\n";
  text += body;
  text += "  outputs %buf1\n}\n";
  return text;
}

// ---- a program with every line kind ---------------------------------------

struct Fixture {
  ir::Program program{"every_kind"};
  ex::Context& ctx = program.ctx();
  ex::Expr s0, s1, u0, c0;
  ir::BufferId in0, in1, buf0, buf1, view0, ws0, comm0, multi0, pooled0, item0;
  ir::KernelId k0, k1, mk;
  ir::PoolId pool0;
};

ir::Layout contiguous(ex::Context& ctx, std::vector<ex::Expr> sizes, ir::DType dtype = ir::DType::float32,
                      ir::Device device = wrapir::cuda_device(0)) {
  return ir::Layout::contiguous(ctx, std::move(sizes), dtype, device);
}

ir::Program make_branch(Fixture& f, std::string name, bool nested) {
  ir::Program g{std::move(name), f.program.context};
  ex::Context& ctx = f.ctx;
  g.symbols.push_back(ir::SymbolDecl{f.s0, ir::SymbolOrigin::input});
  g.buffers.push_back(ir::BufferDecl{"arg0_1", contiguous(ctx, {f.s0}), ir::BufferRole::input});
  g.buffers.push_back(ir::BufferDecl{"buf0", contiguous(ctx, {f.s0}), ir::BufferRole::output});
  g.inputs = {ir::BufferId{0}, f.s0};
  if (nested) {
    ir::Program inner = make_branch(f, "inner_graph_0", false);
    g.subgraphs.push_back(inner);
    inner.name = "inner_graph_1";
    g.subgraphs.push_back(std::move(inner));
    g.body.emplace_back(ir::Conditional{ir::Arg{ex::gt(f.s0, ctx.integer(4))}, ir::GraphId{0}, ir::GraphId{1},
                                        {ir::BufferId{0}, f.s0}, {ir::BufferId{1}}});
  } else {
    g.body.emplace_back(ir::Allocate{ir::BufferId{1}});
    g.body.emplace_back(ir::ExternKernelOut{"aten.relu.default", {ir::BufferId{0}}, {}, {ir::BufferId{1}}});
  }
  g.outputs = {ir::BufferArg{ir::BufferId{1}}};
  return g;
}

Fixture make_every_kind() {
  Fixture f;
  ir::Program& p = f.program;
  ex::Context& ctx = f.ctx;
  f.s0 = ctx.symbol("s0");
  f.s1 = ctx.symbol("s1");
  f.u0 = ctx.symbol("u0", ex::Assumption::nonnegative, true);
  f.c0 = ctx.symbol("c0", ex::Assumption::nonnegative);
  const ex::Expr u1 = ctx.symbol("u1", ex::Assumption::integer, true);

  p.buffers.push_back(ir::BufferDecl{"arg0_1", contiguous(ctx, {f.s0, f.s1}), ir::BufferRole::input, true});
  f.in0 = ir::BufferId{0};
  p.buffers.push_back(ir::BufferDecl{.name = "arg1_1",
                                     .layout = ir::Layout{{f.s0, ctx.integer(3)}, {ctx.integer(1), f.s0},
                                                          f.s1 * 2 + 1, ir::DType::bfloat16, wrapir::cpu_device()},
                                     .role = ir::BufferRole::constant,
                                     .aligned = false,
                                     .stream = 2});
  f.in1 = ir::BufferId{1};
  p.buffers.push_back(ir::BufferDecl{"buf0", contiguous(ctx, {f.s0 * f.s1}), ir::BufferRole::intermediate});
  f.buf0 = ir::BufferId{2};
  p.buffers.push_back(ir::BufferDecl{"buf1", contiguous(ctx, {ex::ceil_div(f.s0, ctx.integer(4))}, ir::DType::int64),
                                     ir::BufferRole::output});
  f.buf1 = ir::BufferId{3};
  p.buffers.push_back(ir::BufferDecl{"buf2", ir::Layout{{f.s1}, {f.s0}, ctx.integer(5), ir::DType::float32,
                                                        wrapir::cuda_device(0)},
                                     ir::BufferRole::intermediate});
  f.view0 = ir::BufferId{4};
  p.buffers.push_back(ir::BufferDecl{"workspace_0", contiguous(ctx, {ctx.integer(1024)}, ir::DType::uint8),
                                     ir::BufferRole::workspace});
  f.ws0 = ir::BufferId{5};
  p.buffers.push_back(ir::BufferDecl{.name = "buf3",
                                     .layout = contiguous(ctx, {f.s0}),
                                     .role = ir::BufferRole::comm,
                                     .comm = ir::CommBufferInfo{ir::CommBufferType::symm_mem, "group \"0\"\n"}});
  f.comm0 = ir::BufferId{6};
  p.buffers.push_back(ir::BufferDecl{.name = "buf4",
                                     .layout = contiguous(ctx, {}),
                                     .role = ir::BufferRole::intermediate,
                                     .multi_output = true});
  f.multi0 = ir::BufferId{7};
  p.buffers.push_back(ir::BufferDecl{"buf5", contiguous(ctx, {f.s0}), ir::BufferRole::intermediate});
  f.pooled0 = ir::BufferId{8};
  p.buffers.push_back(ir::BufferDecl{"buf6", contiguous(ctx, {}, ir::DType::int64), ir::BufferRole::intermediate});
  f.item0 = ir::BufferId{9};

  p.symbols.push_back(ir::SymbolDecl{f.s0, ir::SymbolOrigin::input, std::nullopt, {}, 1024});
  p.symbols.push_back(ir::SymbolDecl{f.s1, ir::SymbolOrigin::input_shape, f.in0,
                                     {ir::KeyStep{ir::KeyStepKind::size, 1}}, std::nullopt});
  p.symbols.push_back(ir::SymbolDecl{f.u0, ir::SymbolOrigin::unbacked});
  p.symbols.push_back(ir::SymbolDecl{u1, ir::SymbolOrigin::unbacked, std::nullopt, {}, -7});
  p.symbols.push_back(ir::SymbolDecl{f.c0, ir::SymbolOrigin::computed});

  p.kernels.push_back(ir::KernelDecl{"triton_poi_add_0", ir::KernelLanguage::triton,
                                     *ir::parse_signature("in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32")});
  f.k0 = ir::KernelId{0};
  p.kernels.push_back(ir::KernelDecl{"cubin_kernel", ir::KernelLanguage::cubin, {}});
  f.k1 = ir::KernelId{1};
  p.kernels.push_back(ir::KernelDecl{"multi_kernel_0", ir::KernelLanguage::triton,
                                     *ir::parse_signature("in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32")});
  f.mk = ir::KernelId{2};

  p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(1), f.s0 * 64 + 128,
                                 ir::PoolTensor{ir::DType::float32, {f.s0 * 16 + 32}, {ctx.integer(1)}}});
  f.pool0 = ir::PoolId{0};

  p.subgraphs.push_back(make_branch(f, "true_graph_0", true));
  p.subgraphs.push_back(make_branch(f, "false_graph_0", false));
  p.inputs = {f.in0, f.s0, ir::BufferId{1}};

  const ir::View view{{f.s1, ctx.integer(2)}, {ctx.integer(1), f.s1}, f.s0 + 3};
  auto& body = p.body;
  using ir::Arg;
  body.emplace_back(ir::Comment{"start: \"quoted\", back\\slash, tab\t, caf\xc3\xa9"});
  body.emplace_back(ir::EnterDeviceContext{wrapir::cuda_device(0)});
  body.emplace_back(ir::GetRawStream{wrapir::cuda_device(0), 0});
  body.emplace_back(ir::KernelDefinition{
      f.k0, ir::SourceText{"@triton.jit\ndef k(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n\tpass  # \"q\" \\"},
      ir::KernelMetadata{{ir::NamedArg{"XBLOCK", Arg{1024}}, ir::NamedArg{"scale", Arg{0.5}}},
                         4, std::nullopt, 49152, ir::GridType::grid_1d,
                         {ir::BlockSize{"XBLOCK", 1024}, ir::BlockSize{"R0_BLOCK", 8}}}});
  body.emplace_back(ir::KernelDefinition{f.k1, ir::BinaryRef{"/tmp/k \"x\".cubin", "kernel_entry"}, {}});
  body.emplace_back(ir::MultiKernelDefinition{
      f.mk, {f.k0, f.k1},
      {{ir::ArgSlice{0, 3}}, {ir::ArgSlice{0, 2}, ir::ArgSlice{-3, -1}}},
      {ir::ShapeKey{{4, 8}, {8}}, std::nullopt}});
  body.emplace_back(ir::SymbolicCallArg{f.c0, f.s0 * f.s1});
  body.emplace_back(ir::Allocate{f.buf0});
  body.emplace_back(ir::Reinterpret{f.view0, f.buf0});
  body.emplace_back(ir::PoolCreate{f.pool0});
  body.emplace_back(ir::AllocFromPool{f.pooled0, f.pool0, ctx.integer(64)});
  body.emplace_back(ir::WorkspaceAllocate{f.ws0, ir::WorkspaceZeroMode::zero_on_call, "ws_ptr"});
  body.emplace_back(ir::CommBufferAllocate{f.comm0});
  body.emplace_back(ir::EnterStreamContext{1});
  body.emplace_back(ir::KernelCall{f.k0,
                                   {Arg{f.in0}, Arg{ir::BufferArg{f.buf0, view}}, Arg{f.c0}},
                                   {ir::ParamType{true, ir::DType::float32}, ir::ParamType{true, ir::DType::float32},
                                    ir::ParamType{false, ir::DType::int32}},
                                   ir::LauncherGrid{}, wrapir::cuda_device(0), 1});
  body.emplace_back(ir::KernelCall{f.k0, {Arg{f.in0}, Arg{f.buf0}, Arg{ex::max(f.s0, f.s1)}}, {},
                                   ir::ExplicitGrid{ex::ceil_div(f.s0, ctx.integer(128)), ctx.integer(1), f.s1},
                                   wrapir::cuda_device(0), 0});
  body.emplace_back(ir::KernelCall{
      f.k0, {Arg{f.in0}, Arg{f.buf0}, Arg{f.s0}}, {},
      ir::TypedGrid{ir::GridType::grid_2d, {ir::NamedExpr{"xnumel", f.s0}, ir::NamedExpr{"ynumel", f.s1 - 1}},
                    {ir::BlockSize{"XBLOCK", 64}, ir::BlockSize{"YBLOCK", 16}}},
      wrapir::cuda_device(0), 0});
  body.emplace_back(ir::ExitStreamContext{});
  body.emplace_back(ir::MultiKernelCall{f.mk, {Arg{f.in0}, Arg{f.buf0}, Arg{ctx.integer(7)}},
                                        {ir::ParamType{true, ir::DType::float32}}, wrapir::cuda_device(0), 0});
  // No NaN here: NaN != NaN, so no program holding one is ==; see the
  // test of odd floats.
  body.emplace_back(ir::ExternKernelAlloc{
      f.buf1, "aten.cat.default",
      {Arg{ir::ArgList{{Arg{f.in0}, Arg{ir::BufferArg{f.buf0, view}}, Arg{ir::ArgList{}}}}}, Arg{-1}},
      {ir::NamedArg{"alpha", Arg{-0.0}}, ir::NamedArg{"beta", Arg{std::numeric_limits<double>::infinity()}},
       ir::NamedArg{"gamma", Arg{-std::numeric_limits<double>::infinity()}}, ir::NamedArg{"tiny", Arg{5e-324}},
       ir::NamedArg{"big", Arg{1.7976931348623157e308}}, ir::NamedArg{"third", Arg{1.0 / 3.0}},
       ir::NamedArg{"whole", Arg{100.0}}, ir::NamedArg{"flag", Arg{true}}, ir::NamedArg{"off", Arg{false}},
       ir::NamedArg{"nothing", Arg{ir::None{}}}, ir::NamedArg{"dev", Arg{wrapir::cuda_device(3)}},
       ir::NamedArg{"cpu", Arg{wrapir::cpu_device()}}, ir::NamedArg{"dtype", Arg{ir::DType::bool_}},
       ir::NamedArg{"text", Arg{std::string("a\"b\\c\nd\xc3\xa9 nul \x01 del \x7f")}},
       ir::NamedArg{"lo", Arg{std::numeric_limits<std::int64_t>::min()}},
       ir::NamedArg{"hi", Arg{std::numeric_limits<std::int64_t>::max()}},
       ir::NamedArg{"symint", Arg{ctx.integer(3)}}, ir::NamedArg{"negsym", Arg{ctx.integer(-3)}}}});
  body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "aten._assert_async.msg", {Arg{f.buf1}}, {}});
  body.emplace_back(ir::ExternKernelOut{"extern_kernels.mm", {Arg{f.in0}, Arg{f.in1}},
                                        {ir::NamedArg{"out_dtype", Arg{ir::DType::float32}}},
                                        ir::BufferArg{f.buf0, view}});
  body.emplace_back(ir::ExternKernelMultiOut{f.multi0, "aten.topk.values", {Arg{f.in0}, Arg{2}}, {},
                                             {ir::NamedBuffer{"values", ir::BufferArg{f.buf0}},
                                              ir::NamedBuffer{"indices", ir::BufferArg{f.buf1, view}}}});
  body.emplace_back(ir::ExternKernelMultiOut{std::nullopt, "aten.foo.default", {}, {}, {}});
  body.emplace_back(ir::MultiOutput{f.view0, f.multi0,
                                    {ir::KeyStep{ir::KeyStepKind::index, 0},
                                     ir::KeyStep{ir::KeyStepKind::key, 0, "values"},
                                     ir::KeyStep{ir::KeyStepKind::index, 1}}});
  body.emplace_back(ir::ScatterFallback{"aten.scatter_", f.buf0, 1, ir::BufferArg{f.in0}, Arg{2.5},
                                        {ir::NamedArg{"reduce", Arg{std::string("add")}}}});
  body.emplace_back(ir::IndexPutFallback{"aten.index_put_", f.buf0,
                                         {std::nullopt, ir::BufferArg{f.item0}, ir::BufferArg{f.in0, view}},
                                         ir::BufferArg{f.in1}, true});
  body.emplace_back(ir::DynamicScalar{f.u0, f.item0, {ir::KeyStep{ir::KeyStepKind::convert_to_int}}});
  body.emplace_back(ir::DynamicScalar{u1, f.item0, {ir::KeyStep{ir::KeyStepKind::divide_by, 4}}});
  body.emplace_back(ir::UnbackedSymbolDefs{
      f.multi0,
      {ir::SymbolBinding{f.u0, {ir::KeyStep{ir::KeyStepKind::index, 0}, ir::KeyStep{ir::KeyStepKind::size, 1}}},
       ir::SymbolBinding{u1, {ir::KeyStep{ir::KeyStepKind::stride, 0}, ir::KeyStep{ir::KeyStepKind::storage_offset},
                              // Not canonical (a key on an index step): printed as a record.
                              ir::KeyStep{ir::KeyStepKind::index, 2, "odd"},
                              ir::KeyStep{ir::KeyStepKind::storage_offset, 5}}}}});
  body.emplace_back(ir::AssertSizeStride{f.in0, {f.s0, f.s1}, {f.s1, ctx.integer(1)}});
  body.emplace_back(ir::AssertSizeStride{f.in0, {f.s0, f.s1}, {f.s1, ctx.integer(1)}, "aten.mm.default"});
  body.emplace_back(ir::AssertAlignment{f.buf0, 16, "aten.foo.default"});
  body.emplace_back(ir::AssertAlignment{f.buf0, 64, std::nullopt});
  body.emplace_back(ir::AssertScalar{ex::ge(u1, ctx.integer(2)), "u1 >= 2"});
  body.emplace_back(ir::DeviceCopy{ir::BufferArg{f.buf0}, ir::BufferArg{f.in0, view}, true});
  body.emplace_back(ir::Conditional{Arg{f.item0}, ir::GraphId{0}, ir::GraphId{1}, {Arg{f.in0}, Arg{f.s0}},
                                    {f.buf1}});
  body.emplace_back(ir::WhileLoop{ir::GraphId{1}, ir::GraphId{0}, {Arg{f.in0}}, {Arg{f.s0}}, {f.buf1}});
  body.emplace_back(ir::EnterSubgraph{ir::GraphId{0}});
  body.emplace_back(ir::Null{});
  body.emplace_back(ir::ExitSubgraph{});
  body.emplace_back(ir::DeallocFromPool{f.pooled0, f.pool0, true});
  body.emplace_back(ir::WorkspaceFree{f.ws0});
  body.emplace_back(ir::CommBufferFree{f.comm0});
  body.emplace_back(ir::Reuse{f.buf0, f.view0, false});
  body.emplace_back(ir::FreeIfNotReused{f.buf0, true});
  body.emplace_back(ir::Free{f.in0});
  body.emplace_back(ir::ExitDeviceContext{});
  p.outputs = {ir::BufferArg{f.buf1}, ir::BufferArg{f.buf0, view}, f.s0 + 1, ctx.integer(-2), ir::None{}};
  return f;
}

// ---- generic sample values, one overload per field type --------------------

struct Sampler {
  ex::Context& ctx;

  void fill(ir::BufferId& id) { id = ir::BufferId{1}; }
  void fill(ir::KernelId& id) { id = ir::KernelId{0}; }
  void fill(ir::PoolId& id) { id = ir::PoolId{0}; }
  void fill(ir::GraphId& id) { id = ir::GraphId{0}; }
  void fill(ex::Expr& e) { e = ctx.symbol("s0") * 3 + 1; }
  void fill(bool& b) { b = true; }
  void fill(std::uint32_t& v) { v = 7; }
  void fill(std::int64_t& v) { v = -42; }
  void fill(double& v) { v = 0.1; }
  void fill(std::string& s) { s = "x\t\"y\""; }  // one line: Comment text is a string too
  void fill(ir::Name& n) { n = "some_name"; }
  void fill(ir::OpName& n) { n = "aten.some.op"; }
  void fill(ir::Device& d) { d = wrapir::cuda_device(2); }
  void fill(ir::ParamType& t) { t = ir::ParamType{true, ir::DType::float16}; }
  void fill(ir::Arg& a) {
    a = ir::Arg{ir::ArgList{{ir::Arg{ir::BufferId{0}}, ir::Arg{ctx.symbol("s0")}, ir::Arg{2}, ir::Arg{2.0},
                             ir::Arg{std::string("s")}, ir::Arg{ir::None{}}}}};
  }
  void fill(ir::NamedArg& a) { a = ir::NamedArg{"kw", ir::Arg{1}}; }
  void fill(ir::NamedBuffer& b) { b = ir::NamedBuffer{"out0", ir::BufferArg{ir::BufferId{1}}}; }
  void fill(ir::NamedExpr& n) { n = ir::NamedExpr{"xnumel", ctx.symbol("s0")}; }
  void fill(ir::BlockSize& b) { b = ir::BlockSize{"XBLOCK", 128}; }
  void fill(ir::BufferArg& b) {
    b = ir::BufferArg{ir::BufferId{0}, ir::View{{ctx.symbol("s0")}, {ctx.integer(2)}, ctx.integer(1)}};
  }
  void fill(ir::ArgSlice& s) { s = ir::ArgSlice{1, 4}; }
  void fill(ir::KeyStep& s) { s = ir::KeyStep{ir::KeyStepKind::key, 0, "k"}; }
  void fill(ir::SymbolBinding& b) { b = ir::SymbolBinding{ctx.symbol("s0"), {ir::KeyStep{ir::KeyStepKind::size, 0}}}; }
  void fill(ir::LaunchGrid& g) { g = ir::ExplicitGrid{ctx.integer(1), ctx.symbol("s0"), ctx.integer(1)}; }
  void fill(ir::KernelSource& s) { s = ir::SourceText{"src"}; }
  void fill(ir::KernelMetadata& m) {
    m.num_warps = 8;
    m.grid_type = ir::GridType::split_scan;
    fill(m.triton_meta);
    fill(m.inductor_meta);
    fill(m.const_params);
  }
  void fill(ir::AutotuneHint& h) { h = ir::AutotuneHint::one_element_per_thread; }
  // Records filled field by field.
  template <class R>
    requires(std::is_same_v<R, ir::TritonMeta> || std::is_same_v<R, ir::InductorMeta> ||
             std::is_same_v<R, ir::ParamAttribute> || std::is_same_v<R, ir::Provenance>)
  void fill(R& r) {
    ir::for_each_field(r, [&](std::string_view, auto& field) { fill(field); });
  }
  template <class E>
    requires std::is_enum_v<E>
  void fill(E& e) {
    e = static_cast<E>(1);
  }
  template <class T>
  void fill(std::optional<T>& o) {
    o.emplace();
    fill(*o);
  }
  template <class T>
  void fill(ir::OptionalBox<T>& o) {
    fill(o.emplace());
  }
  template <class T>
  void fill(ir::Box<T>& b) {
    fill(*b);
  }
  template <class T>
  void fill(std::vector<T>& v) {
    v.resize(2);
    for (T& x : v) fill(x);
  }
  template <class T>
  void fill(ir::VectorBox<T>& v) {
    std::vector<T> items;
    fill(items);
    v = std::move(items);
  }
  template <class T, std::size_t N>
  void fill(ir::SmallVector<T, N>& v) {
    v.resize(2);
    for (T& x : v) fill(x);
  }
};

/// A small program whose body is one line of kind T, every field filled.
template <class T>
ir::Program program_with(const T& line_template) {
  ir::Program p{"one_kind"};
  ex::Context& ctx = p.ctx();
  const ex::Expr s0 = ctx.symbol("s0");
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input});
  p.buffers.push_back(ir::BufferDecl{"a", ir::Layout::contiguous(ctx, {s0}, ir::DType::float32, wrapir::cuda_device(0)),
                                     ir::BufferRole::input});
  p.buffers.push_back(ir::BufferDecl{"b", ir::Layout::contiguous(ctx, {s0}, ir::DType::float32, wrapir::cuda_device(0)),
                                     ir::BufferRole::output});
  p.kernels.push_back(ir::KernelDecl{"k", ir::KernelLanguage::triton, {}});
  p.pools.push_back(ir::PoolDecl{"pool0", wrapir::cuda_device(0), ctx.integer(1 << 20)});
  ir::Program sub{"sub", p.context};
  sub.outputs.emplace_back(ir::None{});
  p.subgraphs.push_back(std::move(sub));
  p.inputs = {ir::BufferId{0}, s0};
  T line = line_template;
  Sampler sampler{ctx};
  ir::for_each_field(line, [&](std::string_view, auto& field) { sampler.fill(field); });
  p.body.emplace_back(std::move(line));
  p.outputs = {ir::BufferArg{ir::BufferId{1}}};
  return p;
}

}  // namespace

TEST_CASE("io/text: a program holding every line kind round trips") {
  Fixture f = make_every_kind();
  std::set<std::size_t> kinds;
  for (const ir::Line& l : f.program.body) kinds.insert(l.index());
  for (const ir::Program& g : f.program.subgraphs)
    for (const ir::Line& l : g.body) kinds.insert(l.index());
  CHECK(kinds.size() == ir::line_kind_count);

  const std::string text = check_round_trip(f.program);
  INFO(text);
  // Nested subgraphs nest with braces and indentation.
  CHECK(text.find("\n  subgraph true_graph_0 {\n") != std::string::npos);
  CHECK(text.find("\n    subgraph inner_graph_0 {\n") != std::string::npos);
  CHECK(text.find("Conditional predicate=#(4 < s0) true_graph=^inner_graph_0") != std::string::npos);
  // One IR line per text line: kernel sources and comments are escaped.
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  const std::size_t expected_lines = [&] {
    std::size_t n = 0;
    auto count = [&](const ir::Program& p, auto&& self) -> void {
      n += 4 + p.symbols.size() + p.buffers.size() + p.kernels.size() + p.pools.size() + p.body.size();
      for (const ir::Program& g : p.subgraphs) self(g, self);
    };
    count(f.program, count);
    return n;
  }();
  CHECK(lines == expected_lines);
  // The text is ASCII.
  for (char c : text) CHECK(static_cast<unsigned char>(c) < 0x80);
}

TEST_CASE("io/text: each kind of ir::LineKinds round trips with every field set") {
  boost::mp11::mp_for_each<ir::LineKinds>([](auto kind) {
    using T = decltype(kind);
    CAPTURE(T::kind);
    const ir::Program p = program_with(T{});
    const std::string text = check_round_trip(p);
    CHECK(text.find(std::string("  ") + std::string(T::kind)) != std::string::npos);
  });
}

TEST_CASE("io/text: odd floats keep their value and sign") {
  ir::Program p{"floats"};
  const double values[] = {-0.0, 0.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                           5e-324, 1e300, 0.1, 123456789.0, -2.5e-7, std::numeric_limits<double>::max()};
  std::vector<ir::Arg> args;
  for (double v : values) args.emplace_back(v);
  p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "aten.f", args, {}});
  const std::string text = to_text(p);
  CHECK(text.find("args=[-0.0, 0.0, inf, -inf, nan, -nan, 5e-324, 1e+300, 0.1, 123456789.0, -2.5e-07, "
                  "1.7976931348623157e+308]") != std::string::npos);
  auto parsed = parse_program_text(text, in_context(p));
  REQUIRE(parsed);
  CHECK(to_text(*parsed) == text);
  const auto& read = std::get<ir::ExternKernelAlloc>(parsed->body.at(0)).args;
  REQUIRE(read.size() == std::size(values));
  for (std::size_t i = 0; i < read.size(); ++i) {
    const double* d = read[i].get_if<double>();
    REQUIRE(d);
    CAPTURE(i);
    if (std::isnan(values[i])) {
      CHECK(std::isnan(*d));
    } else {
      CHECK(*d == values[i]);
    }
    CHECK(std::signbit(*d) == std::signbit(values[i]));
  }
}

TEST_CASE("io/text: strings with every ASCII byte and UTF-8 text round trip") {
  // A string argument may hold any UTF-8 text, control characters included
  // (a comment may not: see below).
  std::string all;
  for (int c = 0; c < 128; ++c) all += static_cast<char>(c);
  all += "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  ir::Program p{"bytes"};
  p.body.emplace_back(ir::ExternKernelAlloc{std::nullopt, "aten.foo.default", {ir::Arg{all}}, {}});
  p.body.emplace_back(ir::Comment{"tab\tand caf\xc3\xa9"});
  p.body.emplace_back(ir::Comment{""});
  const std::string text = check_round_trip(p);
  CHECK(text.find(R"(\x00\x01)") != std::string::npos);
  CHECK(text.find(R"(\t\n\x0b\x0c\r)") != std::string::npos);
  CHECK(text.find(R"( !\"#$)") != std::string::npos);
  CHECK(text.find(R"([\\])") != std::string::npos);
  CHECK(text.find(R"(~\x7fcaf\xc3\xa9)") != std::string::npos);
  // Raw non-ASCII bytes and upper-case hex escapes are read too.
  auto parsed = parse_program_text("program p {\n  inputs\n  Comment text=\"caf\xc3\xa9 \\xC3\\xA9\"\n  outputs\n}\n");
  REQUIRE(parsed);
  CHECK(std::get<ir::Comment>(parsed->body.at(0)).text == "caf\xc3\xa9 \xc3\xa9");
}

TEST_CASE("io/text: refuses what JSON refuses: multi-line comments and text that is not UTF-8") {
  // Regression (issue 12): the text form read comments with line breaks and
  // strings of arbitrary bytes, which the JSON loader refuses and no
  // emitter can print faithfully.
  for (const char* escaped : {"a\\nb", "a\\rb", "\\x00", "a\\x0bb", "\\x1b[2J", "del\\x7f"}) {
    CAPTURE(escaped);
    CHECK(error_of(wrap(std::string("  Comment text=\"") + escaped + "\"\n")) ==
          "line 7, column 3: comment text must be one line: no line breaks or control characters other than tab");
  }
  // A tab is fine, as in JSON.
  CHECK(parse_program_text(wrap("  Comment text=\"a\\tb\"\n")));
  // Escapes that decode to bytes that are not UTF-8, in any string.
  for (const char* escaped : {"\\xff", "\\xc3", "\\xc0\\xaf", "\\xed\\xa0\\x80", "\\xf4\\x90\\x80\\x80", "caf\\xe9"}) {
    CAPTURE(escaped);
    CHECK(error_of(wrap(std::string("  Comment text=\"") + escaped + "\"\n")) ==
          "line 7, column 16: the string is not valid UTF-8 once its \\x escapes are decoded; strings hold UTF-8 "
          "text");
    CHECK(error_of(wrap(std::string("  ExternKernelAlloc result=none kernel=aten.mm.default args=[\"") + escaped +
                        "\"] kwargs=[]\n"))
              .find("is not valid UTF-8 once its \\x escapes are decoded") != std::string::npos);
  }
  // Raw bytes that are not UTF-8, anywhere in the source: refused up front,
  // with the line and column of the first one.
  CHECK(error_of(wrap("  Comment text=\"caf\xe9\"\n")) ==
        "line 7, column 20: the input is not valid UTF-8: byte \\xe9 does not start a well-formed UTF-8 sequence");
  CHECK(error_of("// \xff\nprogram p {\n  inputs\n  outputs\n}\n") ==
        "line 1, column 4: the input is not valid UTF-8: byte \\xff does not start a well-formed UTF-8 sequence");
  CHECK(error_of("program p {\n  inputs\n  outputs\n}\n// overlong \xc0\xaf\n").rfind("line 5, column 13: ", 0) == 0);
  CHECK(error_of("program p {\n  inputs\n  outputs\n}\n\xed\xa0\x80").find("not valid UTF-8") != std::string::npos);
}

TEST_CASE("io/text: hand-written text: comments, blank lines, CRLF, free spacing") {
  const std::string text =
      "// a bug report\r\n"
      "program  demo{\r\n"
      "\r\n"
      "\tsymbol s0 : positive   origin=input\r\n"
      "  symbol s1 : positive hint=4 origin=input_shape source=%x path=[size( 1 )]\r\n"
      "  buffer x : input float32[ s0 , s1 ] strides=[s1,1] offset=0 device=cuda:0 donated=true\r\n"
      "  buffer y : output float32[s0] device=cpu offset=(s0 - s0) strides=[ 1 ]\r\n"
      "  kernel k : triton(a:*fp32,  n: i32)\r\n"
      "  inputs %x , s0\r\n"
      "    // indented comment\r\n"
      "  KernelCall kernel = @k args=[ %x , #( s0*2 ) ] arg_types=[*fp32, i32] grid=launcher device=cuda:0 "
      "stream=0\r\n"
      "  outputs %y<sizes=[s0], strides=[1], offset=0>\r\n"
      "}\r\n"
      "// trailing comment\n\n";
  auto parsed = parse_program_text(text);
  if (!parsed) FAIL(parsed.error().message);
  const ir::Program& p = *parsed;
  CHECK(p.name == "demo");
  REQUIRE(p.symbols.size() == 2);
  CHECK(p.symbols[1].source == ir::BufferId{0});
  CHECK(p.symbols[1].hint == 4);
  CHECK(p.buffers[0].donated);
  CHECK(p.buffers[1].layout.storage_offset.is_integer(0));
  const auto& call = std::get<ir::KernelCall>(p.body.at(0));
  CHECK(call.args.at(1) == ir::Arg{p.ctx().symbol("s0") * 2});
  const std::string printed = to_text(p);
  CHECK(printed ==
        "program demo {\n"
        "  symbol s0 : positive origin=input\n"
        "  symbol s1 : positive origin=input_shape source=%x path=[size(1)] hint=4\n"
        "  buffer x : input float32[s0, s1] strides=[s1, 1] offset=0 device=cuda:0 donated=true\n"
        "  buffer y : output float32[s0] strides=[1] offset=0 device=cpu\n"
        "  kernel k : triton(a: *fp32, n: i32)\n"
        "  inputs %x, s0\n"
        "  KernelCall kernel=@k args=[%x, #(2*s0)] arg_types=[*fp32, i32] grid=launcher device=cuda:0 stream=0\n"
        "  outputs %y<sizes=[s0], strides=[1], offset=0>\n"
        "}\n");
}

TEST_CASE("io/text: parsing into the printed program's context gives an equal program") {
  Fixture f = make_every_kind();
  const std::string text = to_text(f.program);
  auto same = parse_program_text(text, in_context(f.program));
  REQUIRE(same);
  CHECK(same->context == f.program.context);
  CHECK(*same == f.program);
  auto fresh = parse_program_text(text);
  REQUIRE(fresh);
  CHECK(fresh->context != f.program.context);
  CHECK_FALSE(*fresh == f.program);  // other context: expressions differ by identity
  for (const ir::Program& g : fresh->subgraphs) CHECK(g.context == fresh->context);
}

TEST_CASE("io/text: diagnostics for bad structure") {
  CHECK(error_of("") == "line 1, column 1: empty input: expected 'program NAME {'");
  CHECK(error_of("// only a comment\n\n").find("empty input") != std::string::npos);
  CHECK(error_of("programme p {\n").find("expected 'program NAME {'") != std::string::npos);
  CHECK(error_of("program p\n").find("expected '{' after the program name") != std::string::npos);
  CHECK(error_of("program p {\n  inputs\n  outputs\n").find("unexpected end of input: program 'p' opened on line 1 "
                                                          "is not closed") != std::string::npos);
  CHECK(error_of("program p {\n  inputs\n}\n").find("has no 'outputs' line") != std::string::npos);
  CHECK(error_of("program p {\n  outputs\n}\n").find("the 'outputs' line must follow the 'inputs' line") !=
        std::string::npos);
  CHECK(error_of("program p {\n  inputs\n  inputs\n  outputs\n}\n").find("duplicate 'inputs' line") !=
        std::string::npos);
  // Trailing garbage.
  CHECK(error_of("program p {\n  inputs\n  outputs\n}\nNull\n") ==
        "line 5, column 1: unexpected text after the end of the program");
  CHECK(error_of("program p {\n  inputs\n  outputs\n} x\n").find("unexpected 'x' after '}'") != std::string::npos);
  CHECK(error_of("program p { x\n").find("after '{'") != std::string::npos);
  CHECK(error_of(wrap("  Allocate buffer=%buf1 extra\n")).find("unexpected 'extra' after the last field of Allocate") !=
        std::string::npos);
  CHECK(error_of(wrap("  Null 1\n")).find("after the last field of Null") != std::string::npos);
  // Order of the sections.
  CHECK(error_of(wrap("", "", "", "  symbol s9 : positive origin=input\n")).find("'symbol' line out of order") !=
        std::string::npos);
  CHECK(error_of(wrap("  Allocate buffer=%buf1\n  buffer b9 : input float32[] strides=[] offset=0 device=cpu\n"))
            .find("'buffer' line out of order") != std::string::npos);
  CHECK(error_of("program p {\n  Null\n  inputs\n  outputs\n}\n").find("a body line must follow the 'inputs' line") !=
        std::string::npos);
  CHECK(error_of("program p {\n  inputs\n  outputs\n  Null\n}\n").find("after the 'outputs' line; expected '}'") !=
        std::string::npos);
  CHECK(error_of("program p {\n  program q {\n").find("nested programs are written 'subgraph NAME {'") !=
        std::string::npos);
}

TEST_CASE("io/text: diagnostics for unknown kinds and fields") {
  CHECK(error_of(wrap("  Allocat buffer=%buf1\n")) == "line 7, column 3: unknown line kind 'Allocat'");
  CHECK(error_of(wrap("  %buf1\n")).find("expected a line kind or a table keyword, found '%buf1'") !=
        std::string::npos);
  CHECK(error_of(wrap("  Allocate buf=%buf1\n")) ==
        "line 7, column 12: unknown field 'buf' of Allocate; its fields are: buffer");
  CHECK(error_of(wrap("  FreeIfNotReused buffer=%buf1\n")) ==
        "line 7, column 31: missing field 'reused' of FreeIfNotReused");
  CHECK(error_of(wrap("  FreeIfNotReused reused=true buffer=%buf1\n"))
            .find("field 'reused' of FreeIfNotReused is out of order: expected 'buffer' here") != std::string::npos);
  CHECK(error_of(wrap("  FreeIfNotReused buffer=%buf1 reused=true reused=false\n"))
            .find("field 'reused' of FreeIfNotReused is given twice") != std::string::npos);
  CHECK(error_of(wrap("  Allocate buffer=%buf1 size=3\n")).find("unknown field 'size' of Allocate") !=
        std::string::npos);
  CHECK(error_of(wrap("  Allocate buffer\n")).find("expected '=' after field 'buffer'") != std::string::npos);
  // Records: missing, unknown, extra fields.
  CHECK(error_of(wrap("  DeviceCopy destination=%buf1<sizes=[s0], strides=[1]> source=%buf0 non_blocking=false\n"))
            .find("missing field 'offset' of a view") != std::string::npos);
  CHECK(error_of(wrap("  DeviceCopy destination=%buf1<sizes=[s0], strides=[1], offset=0, x=1> source=%buf0 "
                      "non_blocking=false\n"))
            .find("too many fields in a view") != std::string::npos);
  CHECK(error_of(wrap("  DeviceCopy destination=%buf1<sizes=[s0], stride=[1], offset=0> source=%buf0 "
                      "non_blocking=false\n"))
            .find("unknown field 'stride' of a view") != std::string::npos);
  // Table attributes.
  CHECK(error_of(wrap("", "", "", "  pool p0 : device=cuda:0\n")).find("missing attribute 'size_bytes' of a pool") !=
        std::string::npos);
  CHECK(error_of(wrap("", "", "", "  pool p0 : device=cuda:0 size_bytes=1 colour=red\n"))
            .find("unknown attribute 'colour' of a pool; expected one of device, size_bytes") != std::string::npos);
  CHECK(error_of(wrap("", "", "", "  pool p0 : device=cuda:0 device=cpu size_bytes=1\n"))
            .find("attribute 'device' of a pool is given twice") != std::string::npos);
}

TEST_CASE("io/text: diagnostics for bad references") {
  CHECK(error_of(wrap("  Allocate buffer=%nope\n")) == "line 7, column 19: unknown buffer '%nope'");
  CHECK(error_of(wrap("  Allocate buffer=buf1\n")).find("expected a buffer reference %name, found 'buf1'") !=
        std::string::npos);
  CHECK(error_of(wrap("  PoolCreate pool=$nope\n")).find("unknown pool '$nope'") != std::string::npos);
  CHECK(error_of(wrap("  KernelDefinition kernel=@nope source=\"\" metadata={constants=[], num_warps=none, "
                      "num_stages=none, shared_memory_bytes=none, grid_type=none, block=[]}\n"))
            .find("unknown kernel '@nope'") != std::string::npos);
  CHECK(error_of(wrap("  EnterSubgraph graph=^later\n")).find("unknown subgraph '^later'") != std::string::npos);
  CHECK(error_of(wrap("", "  symbol s1 : positive origin=input_shape source=%ghost\n"))
            .find("unknown buffer '%ghost' (source of symbol 's1')") != std::string::npos);
  CHECK(error_of(wrap("", "", "  buffer buf0 : input float32[] strides=[] offset=0 device=cpu\n"))
            .find("duplicate name 'buf0'") != std::string::npos);
  CHECK(error_of(wrap("", "", "", "  kernel s0 : cuda()\n")).find("duplicate name 's0': kernel and symbol") !=
        std::string::npos);
}

TEST_CASE("io/text: hostile names are refused with a diagnostic") {
  const char* hostile[] = {"x; import os", "__import__('os')", "\"x\"", "a'b", "import", "class", "1abc",
                           "a.b", "x\\ny", "caf\xc3\xa9", "x\x01"};
  for (const char* name : hostile) {
    CAPTURE(name);
    const std::string n = name;
    std::string message = error_of("program " + n + " {\n  inputs\n  outputs\n}\n");
    CHECK((message.find("invalid program name") != std::string::npos ||
           message.find("expected '{' after the program name") != std::string::npos));
    message = error_of(wrap("", "", "  buffer " + n + " : input float32[] strides=[] offset=0 device=cpu\n"));
    CHECK((message.find("invalid buffer name") != std::string::npos ||
           message.find("expected ':' after the buffer name") != std::string::npos));
    message = error_of(wrap("  WorkspaceAllocate workspace=%buf1 zero_mode=ZERO_ON_CALL inner_name=" + n + "\n"));
    CHECK((message.find("invalid identifier name") != std::string::npos ||
           message.find("after the last field") != std::string::npos));
  }
  CHECK(error_of(wrap("", "", "  buffer x; : input float32[] strides=[] offset=0 device=cpu\n"))
            .find("invalid buffer name 'x;'") != std::string::npos);
  CHECK(error_of("program __import__('os') {\n").find("invalid program name '__import__'") != std::string::npos);
  CHECK(error_of(wrap("  ExternKernelAlloc result=none kernel=os.system;x args=[] kwargs=[]\n"))
            .find("invalid operator name 'os.system;x'") != std::string::npos);
  CHECK(error_of(wrap("  ExternKernelAlloc result=none kernel=aten.mm args=[] kwargs=[x y=1]\n"))
            .find("expected '=' after the keyword argument name") != std::string::npos);
  CHECK(error_of(wrap("  ExternKernelAlloc result=none kernel=aten.mm args=[] kwargs=[if=1]\n"))
            .find("invalid keyword argument name 'if'") != std::string::npos);
  CHECK(error_of(wrap("", "", "", "  kernel k1 : triton(x;y: i32)\n")).find("invalid kernel parameter name") !=
        std::string::npos);
  CHECK(error_of(wrap("", "  symbol os : positive origin=input\n  symbol __s : positive origin=input\n"))
            .find("invalid symbol name '__s'") != std::string::npos);
}

TEST_CASE("io/text: an optional field may be left out; given, it is in its place") {
  auto only_line = [](const std::string& text) {
    auto parsed = parse_program_text(text);
    REQUIRE_MESSAGE(parsed.ok(), (parsed.ok() ? std::string() : parsed.error().message));
    REQUIRE(parsed.value().body.size() == 1);
    return parsed.value().body[0];
  };
  // Text written before AssertSizeStride had an op name still reads.
  const ir::Line old = only_line(wrap("  AssertSizeStride buffer=%buf0 sizes=[s0] strides=[1]\n"));
  CHECK_FALSE(std::get<ir::AssertSizeStride>(old).op_name.has_value());
  const ir::Line named = only_line(wrap("  AssertSizeStride buffer=%buf0 sizes=[s0] strides=[1] op_name=\"aten.mm\"\n"));
  CHECK(std::get<ir::AssertSizeStride>(named).op_name == std::optional<std::string>{"aten.mm"});
  const ir::Line none = only_line(wrap("  AssertAlignment buffer=%buf0 alignment=16 op_name=none\n"));
  CHECK_FALSE(std::get<ir::AssertAlignment>(none).op_name.has_value());
  // A required field is still required; an optional one misplaced is named.
  CHECK(error_of(wrap("  AssertAlignment buffer=%buf0 op_name=\"x\"\n")).find("expected 'alignment' here") !=
        std::string::npos);
  CHECK(error_of(wrap("  AssertAlignment buffer=%buf0\n")).find("missing field 'alignment'") != std::string::npos);
  CHECK(error_of(wrap("  AssertAlignment op_name=\"x\" buffer=%buf0 alignment=16\n")).find("out of order") !=
        std::string::npos);
  CHECK(error_of(wrap("  AssertAlignment buffer=%buf0 alignment=16 op_name=\"x\" op_name=\"y\"\n"))
            .find("given twice") != std::string::npos);
}

TEST_CASE("io/text: kernel metadata and provenance print compactly and read back") {
  ir::Program p{"meta"};
  ex::Context& ctx = p.ctx();
  const ex::Expr s0 = ctx.symbol("s0");
  p.symbols.push_back(ir::SymbolDecl{s0, ir::SymbolOrigin::input});
  p.buffers.push_back(ir::BufferDecl{"a", contiguous(ctx, {s0}), ir::BufferRole::input});
  p.kernels.push_back(ir::KernelDecl{"k", ir::KernelLanguage::triton,
                                     {ir::KernelParam{"in_out_ptr0", ir::ParamType{true, ir::DType::float32}}}});
  p.inputs = {ir::BufferId{0}, s0};
  ir::KernelMetadata m;
  m.grid_type = ir::GridType::grid_1d;
  m.triton_meta = ir::TritonMeta{wrapir::cuda_device(0), 90, 32, {"XBLOCK"},
                                 {ir::ParamAttribute{"in_out_ptr0", "tt.divisibility", 16}}, false};
  m.inductor_meta = ir::InductorMeta{"k", {"in_out_ptr0"}, {ir::AutotuneHint::one_element_per_thread}, 1, 1, 0, "ABC"};
  ir::KernelDefinition def{ir::KernelId{0}, ir::SourceText{"src"}, m};
  def.provenance = ir::Provenance{{"add", "relu"}, {"aten.add", "aten.relu"}, std::nullopt};
  p.body.emplace_back(def);
  ir::KernelCall call{ir::KernelId{0}, {ir::Arg{ir::BufferId{0}}}, {ir::ParamType{true, ir::DType::float32}},
                      ir::LauncherGrid{}, wrapir::cuda_device(0), 0};
  call.provenance = ir::Provenance{{}, {}, std::string("relu")};
  p.body.emplace_back(call);
  p.body.emplace_back(ir::KernelCall{ir::KernelId{0}, {ir::Arg{ir::BufferId{0}}},
                                     {ir::ParamType{true, ir::DType::float32}}, ir::LauncherGrid{},
                                     wrapir::cuda_device(0), 0});
  const std::string text = check_round_trip(p);
  INFO(text);
  CHECK(text.find("metadata={constants=[], num_warps=none, num_stages=none, shared_memory_bytes=none, "
                  "grid_type=Grid1D, block=[], triton_meta={device=cuda:0, compute_capability=90, warp_size=32, "
                  "constexprs=[XBLOCK], attributes=[{param=in_out_ptr0, name=\"tt.divisibility\", value=16}], "
                  "launch_pdl=false}, inductor_meta={kernel_name=k, mutated_arg_names=[in_out_ptr0], "
                  "autotune_hints=[ONE_ELEMENT_PER_THREAD], num_load=1, num_store=1, num_reduction=0, "
                  "backend_hash=\"ABC\"}} provenance={source_nodes=[\"add\", \"relu\"], aten=[\"aten.add\", "
                  "\"aten.relu\"], context=none}\n") != std::string::npos);
  CHECK(text.find("stream=0 provenance={context=\"relu\"}\n") != std::string::npos);
  // Without provenance a line prints as it did before it could have one.
  CHECK(text.find("device=cuda:0 stream=0\n") != std::string::npos);
}

TEST_CASE("io/text: text written before kernel metadata grew still reads; what is given is checked") {
  auto only_line = [](const std::string& text) {
    auto parsed = parse_program_text(text);
    REQUIRE_MESSAGE(parsed.ok(), (parsed.ok() ? std::string() : parsed.error().message));
    REQUIRE(parsed.value().body.size() == 1);
    return parsed.value().body[0];
  };
  const std::string old_metadata = "metadata={constants=[], num_warps=4, num_stages=none, shared_memory_bytes=none, "
                                   "grid_type=Grid1D, block=[XBLOCK=1024]}";
  const ir::Line old = only_line(wrap("  KernelDefinition kernel=@k0 source=\"s\" " + old_metadata + "\n"));
  const auto& def = std::get<ir::KernelDefinition>(old);
  CHECK(!def.metadata->triton_meta);
  CHECK(def.metadata->const_params.empty());
  CHECK(!def.provenance);
  // A list the record omits when empty may be given; boxed fields in their place.
  const ir::Line given = only_line(wrap(
      "  KernelDefinition kernel=@k0 source=\"s\" metadata={constants=[], num_warps=none, num_stages=none, "
      "shared_memory_bytes=none, grid_type=none, block=[], inductor_meta={kernel_name=none, mutated_arg_names=[], num_load=3, num_store=none, "
      "num_reduction=none, backend_hash=none}, "
      "const_params=[in_ptr0]} provenance={aten=[\"aten.mm\"], context=none}\n"));
  const auto& g = std::get<ir::KernelDefinition>(given);
  REQUIRE(g.metadata->inductor_meta);
  CHECK(g.metadata->inductor_meta->num_load == 3);
  CHECK(g.metadata->const_params == std::vector<ir::Name>{"in_ptr0"});
  CHECK(g.provenance == ir::Provenance{{}, {"aten.mm"}, std::nullopt});
  CHECK(error_of(wrap("  KernelDefinition kernel=@k0 source=\"s\" " + old_metadata.substr(0, old_metadata.size() - 1) +
                      ", inductor_meta={autotune_hints=[FAST]}}\n"))
            .find("unknown autotune hint 'FAST', expected one of ONE_ELEMENT_PER_THREAD") != std::string::npos);
  CHECK(error_of(wrap("  KernelDefinition kernel=@k0 source=\"s\" " + old_metadata.substr(0, old_metadata.size() - 1) +
                      ", triton_meta={attributes=[{param=in_ptr0, value=16}]}}\n"))
            .find("of a parameter attribute is out of order: expected 'name' here") != std::string::npos);
  CHECK(error_of(wrap("  KernelDefinition kernel=@k0 source=\"s\" " + old_metadata +
                      " provenance={context=\"x\", aten=[]}\n"))
            .find("out of order") != std::string::npos);
}

TEST_CASE("io/text: diagnostics for bad values") {
  CHECK(error_of(wrap("  Comment text=\"abc\n")) == "line 7, column 16: unterminated string: missing closing '\"'");
  CHECK(error_of(wrap("  Comment text=\"a\\qb\"\n")).find("invalid escape '\\\\q'") != std::string::npos);
  CHECK(error_of(wrap("  Comment text=\"a\\x4\"\n")).find("\\x takes two hexadecimal digits") != std::string::npos);
  CHECK(error_of(wrap("  Comment text=\"a\tb\"\n")).find("control character in a string") != std::string::npos);
  CHECK(error_of(wrap("  Comment text=abc\n")).find("expected a string in double quotes, found 'abc'") !=
        std::string::npos);
  // Expressions.
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[(s0 +)] strides=[1]\n")) ==
        "line 7, column 45: invalid expression: expected an expression, found ')'");
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[(s0 + 1] strides=[1]\n"))
            .find("unbalanced '(' in an expression") != std::string::npos);
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[(s0 + s7)] strides=[1]\n")) ==
        "line 7, column 46: undeclared symbol 's7' in an expression of program 'p': declare it with a 'symbol' line");
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[-1] strides=[1]\n"))
            .find("expected an expression (a symbol, an integer or a parenthesised expression)") !=
        std::string::npos);
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[(1 // 0)] strides=[1]\n")).find("invalid expression") !=
        std::string::npos);
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[(s0 # 1)] strides=[1]\n"))
            .find("unexpected '#' in an expression") != std::string::npos);
  // Numbers, enums, devices, dtypes.
  CHECK(error_of(wrap("  EnterStreamContext stream=-1\n")).find("expected a non-negative 32-bit integer") !=
        std::string::npos);
  CHECK(error_of(wrap("  EnterStreamContext stream=4294967296\n")).find("out of range") != std::string::npos);
  CHECK(error_of(wrap("  ScatterFallback kernel=aten.scatter_ self=%buf1 dim=1.5 index=%buf0 src=1 kwargs=[]\n"))
            .find("expected a 64-bit integer, found '1.5'") != std::string::npos);
  CHECK(error_of(wrap("  ScatterFallback kernel=aten.scatter_ self=%buf1 dim=99999999999999999999 index=%buf0 "
                      "src=1 kwargs=[]\n"))
            .find("is out of range") != std::string::npos);
  CHECK(error_of(wrap("  ScatterFallback kernel=aten.scatter_ self=%buf1 dim=0 index=%buf0 src=1e999 kwargs=[]\n"))
            .find("invalid float '1e999'") != std::string::npos);
  CHECK(error_of(wrap("  ScatterFallback kernel=aten.scatter_ self=%buf1 dim=0 index=%buf0 src=s0 kwargs=[]\n"))
            .find("a symbolic integer is written #s0") != std::string::npos);
  CHECK(error_of(wrap("  WorkspaceAllocate workspace=%buf1 zero_mode=ZERO inner_name=ws\n"))
            .find("unknown workspace zero mode 'ZERO', expected one of UNINITIALIZED, ZERO_ON_CALL, ZERO_PER_GRAPH") !=
        std::string::npos);
  CHECK(error_of(wrap("  EnterDeviceContext device=gpu:0\n")).find("unknown device type 'gpu'") != std::string::npos);
  CHECK(error_of(wrap("  EnterDeviceContext device=cuda:300\n")).find("larger than 127") != std::string::npos);
  CHECK(error_of(wrap("  FreeIfNotReused buffer=%buf1 reused=yes\n")).find("expected true or false, found 'yes'") !=
        std::string::npos);
  CHECK(error_of(wrap("  KernelCall kernel=@k0 args=[] arg_types=[*fp99] grid=launcher device=cuda:0 stream=0\n"))
            .find("expected a parameter type such as *fp32 or i32, found '*fp99'") != std::string::npos);
  CHECK(error_of(wrap("  KernelCall kernel=@k0 args=[] arg_types=[] grid=auto device=cuda:0 stream=0\n"))
            .find("expected a launch grid") != std::string::npos);
  CHECK(error_of(wrap("  KernelCall kernel=@k0 args=[%buf0 %buf1] arg_types=[] grid=launcher device=cuda:0 "
                      "stream=0\n"))
            .find("expected ',' or ']' in a list") != std::string::npos);
  CHECK(error_of(wrap("  MultiOutput result=%buf1 source=%buf0 path=[storage_offset(1)]\n"))
            .find("key step 'storage_offset' takes no argument") != std::string::npos);
  CHECK(error_of(wrap("  MultiOutput result=%buf1 source=%buf0 path=[item]\n")).find("unknown key step 'item'") !=
        std::string::npos);
  CHECK(error_of(wrap("", "", "  buffer b2 : input float99[] strides=[] offset=0 device=cpu\n"))
            .find("unknown dtype 'float99'") != std::string::npos);
  CHECK(error_of(wrap("", "  symbol s1 : positive\n")).find("missing attribute 'origin' of a symbol") !=
        std::string::npos);
  CHECK(error_of(wrap("", "", "", "  kernel k1 : triton(n: i32\n")).find("unterminated signature") !=
        std::string::npos);
}

TEST_CASE("io/text: symbols are declared before expressions use them, with their flags") {
  // The declared assumption and unbacked flag are what the symbol gets.
  auto parsed = parse_program_text(
      "program p {\n  symbol u0 : nonnegative unbacked origin=unbacked\n  symbol i0 : integer origin=input\n"
      "  inputs i0\n  outputs (u0 + i0)\n}\n");
  REQUIRE(parsed);
  const ex::Expr u0 = parsed->ctx().find_symbol("u0");
  REQUIRE(u0);
  CHECK(u0.unbacked());
  CHECK(u0.assumption() == ex::Assumption::nonnegative);
  CHECK(parsed->ctx().find_symbol("i0").assumption() == ex::Assumption::integer);
  // A symbol of the context but not of the program is still undeclared;
  // the symbol of another program (a subgraph's parent) is not inherited.
  auto context = std::make_shared<ex::Context>();
  (void)context->symbol("s5");
  TextParseOptions options;
  options.context = context;
  CHECK(error_of("program p {\n  inputs\n  outputs s5\n}\n", options).find("undeclared symbol 's5'") !=
        std::string::npos);
  CHECK(error_of("program p {\n  symbol s0 : positive origin=input\n  subgraph g {\n    inputs\n    outputs s0\n"
                 "  }\n  inputs\n  outputs\n}\n")
            .find("undeclared symbol 's0' in an expression of program 'g'") != std::string::npos);
  // Conflicting declarations of one symbol in one context.
  CHECK(error_of("program p {\n  symbol s0 : positive origin=input\n  subgraph g {\n"
                 "    symbol s0 : integer origin=input\n    inputs\n    outputs\n  }\n  inputs\n  outputs\n}\n")
            .find("cannot redeclare it as integer") != std::string::npos);
}

TEST_CASE("io/text: nesting and length limits") {
  // Subgraphs nested max_depth deep.
  auto nested = [](std::size_t depth) {
    std::string text;
    for (std::size_t i = 0; i < depth; ++i)
      text += std::string(i == 0 ? "program" : "subgraph") + " g" + std::to_string(i) + " {\n";
    for (std::size_t i = 0; i < depth; ++i) text += "inputs\noutputs\n}\n";
    return text;
  };
  TextParseOptions options;
  options.max_depth = 8;
  CHECK(parse_program_text(nested(8), options));
  CHECK(error_of(nested(9), options).find("subgraphs nest deeper than 8 levels") != std::string::npos);
  // A default limit keeps hostile nesting from running away.
  CHECK(error_of(nested(100000)).find("subgraphs nest deeper than 64 levels") != std::string::npos);
  // Argument lists.
  auto lists = [](std::size_t depth) {
    return wrap("  ExternKernelAlloc result=none kernel=aten.f args=[" + std::string(depth, '[') +
                std::string(depth, ']') + "] kwargs=[]\n");
  };
  CHECK(parse_program_text(lists(8), options));
  CHECK(error_of(lists(9), options).find("argument lists nest deeper than 8 levels") != std::string::npos);
  CHECK(error_of(lists(1000000)).find("argument lists nest deeper than 64 levels") != std::string::npos);
  // Expressions.
  const std::string deep_expr = std::string(10000, '(') + "s0" + std::string(10000, ')');
  CHECK(error_of(wrap("  AssertSizeStride buffer=%buf0 sizes=[" + deep_expr + "] strides=[1]\n"))
            .find("invalid expression") != std::string::npos);
  // Length.
  options.max_length = 16;
  CHECK(error_of(nested(1), options).find("more than the limit of 16") != std::string::npos);
}

TEST_CASE("io/text: a failed parse returns no program") {
  // Everything up to the bad line is fine; the result is still only the error.
  auto parsed = parse_program_text(wrap("  Allocate buffer=%buf1\n  Allocate buffer=%buf9\n"));
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().message == "line 8, column 19: unknown buffer '%buf9'");
}

#ifdef WRAPIR_SOURCE_DIR
TEST_CASE("io/text: the fuzzer's seed corpus says what it means") {
  // valid_*.wir parse and print stably; invalid_*.wir are refused.
  const std::filesystem::path dir = std::filesystem::path(WRAPIR_SOURCE_DIR) / "tests/fuzz/corpus/text_fuzz";
  std::size_t valid = 0, invalid = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto parsed = parse_program_text(text);
    if (name.rfind("valid_", 0) == 0) {
      ++valid;
      if (!parsed) FAIL_CHECK(parsed.error().message);
      REQUIRE(parsed);
      const std::string printed = to_text(*parsed);
      auto again = parse_program_text(printed);
      REQUIRE(again);
      CHECK(to_text(*again) == printed);
    } else if (name.rfind("invalid_", 0) == 0) {
      ++invalid;
      CHECK_FALSE(parsed);
    }
  }
  CHECK(valid >= 5);
  CHECK(invalid >= 5);
}
#endif
