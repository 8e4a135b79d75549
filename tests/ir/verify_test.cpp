// Tests of include/wrapir/ir/verify.hpp, in the manner of MLIR's
// expected-error tests: each check has a program that breaks it and the
// exact findings it must give, and well-formed programs (one built with the
// Builder, one with every line kind) must give none.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/reflect.hpp>
#include <wrapir/ir/verify.hpp>

#include <boost/variant2/variant.hpp>
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

using namespace wrapir::ir;
using wrapir::cuda_device;
using wrapir::expr::Expr;
namespace expr = wrapir::expr;

/// The findings of `p`, one `to_string` per line.
std::string findings(const Program& p) {
  std::string text;
  for (const Finding& f : verify(p)) text += to_string(f) + "\n";
  return text;
}

/// The expected findings, in the same form.
std::string lines(std::initializer_list<std::string_view> expected) {
  std::string text;
  for (std::string_view line : expected) (text += line) += "\n";
  return text;
}

// expect_findings(program, {"line 2 (Free): buffer buf0: ..."}): the exact
// findings, in order. A macro so that a failure points at the test's line.
#define EXPECT_FINDINGS(program, ...) CHECK(findings(program) == lines(__VA_ARGS__))

/// A program with one symbolic size `s0`, one input `arg0_1` of `s0`
/// float32 elements and a Triton kernel `triton_0` (defined at line 0) that
/// reads one float32 buffer and writes another.
struct Fixture {
  Program p{"graph"};
  Builder b{p};
  Expr s0 = b.size_symbol("s0", 8);
  BufferId x = b.input("arg0_1", {s0}, DType::float32);
  KernelId k = b.triton_kernel("triton_0", "def triton_0(in_ptr0, out_ptr0, xnumel): pass",
                               "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");

  expr::Context& ctx() { return p.ctx(); }
  Expr I(std::int64_t v) { return ctx().integer(v); }
  Layout layout(std::vector<Expr> sizes, DType dtype = DType::float32, wrapir::Device device = cuda_device(0)) {
    return Layout::contiguous(ctx(), std::move(sizes), dtype, device);
  }
  /// A table entry without a line.
  BufferId decl(std::string_view name, std::vector<Expr> sizes, DType dtype = DType::float32,
                BufferRole role = BufferRole::intermediate) {
    return b.declare(name, layout(std::move(sizes), dtype), role);
  }
  /// `triton_0(x, out, s0)`.
  void call(BufferId in, BufferId out) { b.call(k, {in, out, s0}); }
  void append(Line l) { b.append(std::move(l)); }
};

/// Declares, in every subgraph (recursively), the symbols its input
/// layouts use as sizes, as `input_shape` symbols read from that input.
/// Builder::subgraph gives a subgraph inputs shaped like the operands but
/// does not declare their symbols, which each program must do itself.
void declare_shape_symbols(Program& p) {
  for (Program& g : p.subgraphs) {
    for (const ProgramInput& in : g.inputs) {
      const BufferId* b = boost::variant2::get_if<BufferId>(&in);
      if (!b) continue;
      const Layout& l = g.buffers[b->index].layout;
      for (std::size_t i = 0; i < l.rank(); ++i)
        if (l.sizes[i].is_symbol() && !g.find_symbol(l.sizes[i]))
          g.symbols.push_back(SymbolDecl{
              l.sizes[i], SymbolOrigin::input_shape, *b, {KeyStep{KeyStepKind::size, static_cast<std::int64_t>(i)}}});
    }
    declare_shape_symbols(g);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Well-formed programs
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: a program built with the Builder has no findings") {
  Fixture f;
  Builder& b = f.b;
  const auto y = b.input("arg1_1", {f.s0}, DType::float32);
  const auto buf0 = b.empty({f.s0}, DType::float32);
  b.call(f.k, {f.x, buf0, f.s0}, {.free_after = {}});
  const auto buf1 = b.view(buf0, {f.s0}, {f.I(1)}, f.I(0));
  const auto buf2 = b.empty({f.s0}, DType::float32);
  b.call(f.k, {buf1, buf2, f.s0}, {.free_after = {buf0}});
  const auto numel = b.computed_symbol("xnumel", expr::mul(f.s0, f.I(2)));
  const auto buf3 = b.extern_alloc("aten.cat.default", {ArgList{{buf2, y}}}, f.layout({numel}));
  const auto multi = b.extern_alloc_multi("aten.topk.default", {buf3, std::int64_t{2}});
  const auto parts = b.unpack(multi, {f.layout({f.I(2)}), f.layout({f.I(2)}, DType::int64)});
  const auto u0 = b.unbacked_symbol("u0");
  const auto count = b.extern_alloc("aten.count_nonzero.default", {parts[1]}, f.layout({}, DType::int64));
  b.dynamic_scalar(u0, count);
  const auto ws = b.workspace(u0, WorkspaceZeroMode::zero_on_call);
  b.free({ws, count});
  b.assert_size_stride(parts[0]);
  b.enter_device(cuda_device(0));
  b.comment("end of the device scope");
  b.exit_device();
  f.p.buffers[f.x.index].donated = true;
  b.free({f.x, buf2});
  b.output(parts[0]);
  b.output(f.s0);
  CHECK(findings(f.p) == "");
  CHECK(f.p.body.size() > 15);
}

namespace {

/// A valid program with at least one line of every kind, in an order that
/// keeps it valid.
Program program_with_every_line_kind() {
  Program p{"every_kind"};
  Builder b{p};
  expr::Context& ctx = p.ctx();
  const auto dev = cuda_device(0);
  auto contiguous = [&](std::vector<Expr> sizes, DType d = DType::float32) {
    return Layout::contiguous(ctx, std::move(sizes), d, dev);
  };
  const Expr s0 = b.size_symbol("s0", 16);
  const BufferId x = b.input("arg0_1", {s0}, DType::float32);
  p.buffers[x.index].donated = true;
  const BufferId pred = b.input("arg1_1", {}, DType::bool_);
  const char* signature = "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32";

  // KernelDefinition, GetRawStream, EnterDeviceContext, Allocate,
  // EnterStreamContext, KernelCall, ExitStreamContext, SymbolicCallArg.
  const KernelId k0 = b.triton_kernel("triton_0", "src0", signature);
  const KernelId k1 = b.triton_kernel("triton_1", "src1", signature);
  b.append(GetRawStream{dev, 0});
  b.enter_device(dev);
  const BufferId buf0 = b.empty({s0}, DType::float32);
  b.append(EnterStreamContext{1});
  b.call(k0, {x, buf0, s0});
  b.append(ExitStreamContext{});
  const Expr numel = b.computed_symbol("triton_0_xnumel", expr::mul(s0, ctx.integer(1)));

  // MultiKernelDefinition, MultiKernelCall, FreeIfNotReused, Reuse, Null,
  // Reinterpret, DeviceCopy.
  const KernelId mk = b.multi_kernel({k0, k1});
  const BufferId buf1 = b.empty({s0}, DType::float32);
  b.call_multi(mk, {buf0, buf1, numel});
  b.free({buf0});
  const BufferId buf2 = b.declare("buf2", contiguous({s0}), BufferRole::intermediate);
  b.append(FreeIfNotReused{buf1, true});
  b.append(Reuse{buf1, buf2, true});
  b.append(Null{});
  const BufferId view = b.view(buf2, {s0}, {ctx.integer(1)}, ctx.integer(0));
  const BufferId copy = b.empty({s0}, DType::float32);
  b.append(DeviceCopy{BufferArg{copy}, BufferArg{view}, false});

  // PoolCreate, AllocFromPool, DeallocFromPool, CommBufferAllocate,
  // CommBufferFree, WorkspaceAllocate, WorkspaceFree.
  p.pools.push_back(PoolDecl{"pool0", dev, expr::mul(s0, ctx.integer(4)), PoolTensor{DType::float32, {s0}, {ctx.integer(1)}}});
  b.append(PoolCreate{PoolId{0}});
  const BufferId pooled = b.declare("buf_pooled", contiguous({s0}), BufferRole::intermediate);
  b.append(AllocFromPool{pooled, PoolId{0}, ctx.integer(0)});
  b.append(DeallocFromPool{pooled, PoolId{0}, true});
  b.free({b.comm_buffer({s0}, DType::float32, "group0")});
  b.free({b.workspace(ctx.integer(64), WorkspaceZeroMode::zero_on_call)});

  // ExternKernelAlloc, ExternKernelOut, ExternKernelMultiOut, MultiOutput,
  // UnbackedSymbolDefs, ScatterFallback, IndexPutFallback, DynamicScalar,
  // AssertSizeStride.
  const BufferId mm = b.extern_alloc("aten.mm.default", {copy, copy}, contiguous({s0}));
  b.extern_out("extern_kernels.addmm", {mm, copy}, BufferArg{mm}, {NamedArg{"beta", 1.0}});
  const BufferId out0 = b.empty({s0}, DType::float32);
  const BufferId out1 = b.empty({s0}, DType::int64);
  const BufferId multi = b.declare("buf_multi", contiguous({}), BufferRole::intermediate);
  p.buffers[multi.index].multi_output = true;
  b.append(ExternKernelMultiOut{multi,
                                "aten.sort.values",
                                {copy},
                                {},
                                {NamedBuffer{"values", BufferArg{out0}}, NamedBuffer{"indices", BufferArg{out1}}}});
  const BufferId first = b.declare("buf_first", contiguous({s0}), BufferRole::intermediate);
  b.append(MultiOutput{first, multi, {KeyStep{KeyStepKind::index, 0}}});
  const Expr u0 = b.unbacked_symbol("u0");
  const KeyPath size_of_first{KeyStep{KeyStepKind::index, 0}, KeyStep{KeyStepKind::size, 0}};
  b.append(UnbackedSymbolDefs{multi, {SymbolBinding{u0, size_of_first}}});
  b.append(ScatterFallback{"aten.scatter_", out0, 0, BufferArg{out1}, 1.5, {NamedArg{"reduce", "add"}}});
  b.append(IndexPutFallback{"aten.index_put_", out0, {BufferArg{out1}, std::nullopt}, BufferArg{first}, true});
  const BufferId scalar = b.extern_alloc("aten.sum.default", {out1}, contiguous({}, DType::int64));
  const Expr u1 = b.unbacked_symbol("u1");
  b.dynamic_scalar(u1, scalar, {KeyStep{KeyStepKind::divide_by, 2}});
  b.assert_size_stride(first);
  b.append(AssertSizeStride{first, {s0}, {ctx.integer(1)}, "aten.sort.values"});
  b.append(AssertAlignment{first, 16, "aten.sort.values"});
  b.append(AssertScalar{expr::le(u1, s0), "u1 <= s0"});

  // Conditional, WhileLoop, EnterSubgraph, Comment, ExitSubgraph,
  // ExitDeviceContext, Free.
  auto pass_through = [](Builder& sb, std::span<const ProgramInput> ins) {
    sb.output(boost::variant2::get<BufferId>(ins[0]));
  };
  auto condition = [](Builder& sb, std::span<const ProgramInput>) { sb.output(sb.empty({}, DType::bool_)); };
  const auto chosen = b.conditional(BufferArg{pred}, {first}, pass_through, pass_through);
  const auto looped = b.while_loop({chosen[0]}, {u0}, condition, pass_through);
  b.append(EnterSubgraph{b.program().find_subgraph("true_graph_0").value()});
  b.comment("inlined branch");
  b.append(ExitSubgraph{});
  b.exit_device();
  b.append(Free{x});

  b.output(looped[0]);
  b.output(u1);
  declare_shape_symbols(p);
  return p;
}

}  // namespace

TEST_CASE("ir/verify: a program with every line kind verifies clean") {
  const Program p = program_with_every_line_kind();
  std::set<std::size_t> kinds;
  for (const Line& l : p.body) kinds.insert(l.index());
  CHECK(kinds.size() == line_kind_count);
  CHECK(findings(p) == "");
}

// ---------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: to_string writes the graph path, the line or table, the subject and the message") {
  CHECK(to_string(Finding{"", 4, "Free", "buffer arg0_1", "frees graph input 'arg0_1', which was not donated"}) ==
        "line 4 (Free): buffer arg0_1: frees graph input 'arg0_1', which was not donated");
  CHECK(to_string(Finding{"true_graph_0", 2, "KernelCall", "kernel triton_0", "argument 1 is bad"}) ==
        "true_graph_0: line 2 (KernelCall): kernel triton_0: argument 1 is bad");
  CHECK(to_string(Finding{"cond_fn_0/true_graph_1", std::nullopt, "outputs", "", "output 0 is bad"}) ==
        "cond_fn_0/true_graph_1: outputs: output 0 is bad");
  // The fields are there for tools: line index, kind and subject.
  Fixture f;
  f.append(Free{f.x});
  const auto found = verify(f.p);
  REQUIRE(found.size() == 1);
  CHECK(found[0].graph_path.empty());
  CHECK(found[0].line == std::optional<std::size_t>(1));
  CHECK(found[0].kind == "Free");
  CHECK(found[0].subject == "buffer arg0_1");
  CHECK(found[0].message == "frees graph input 'arg0_1', which was not donated");
  wrapir::Finding reexported = found[0];  // re-exported into wrapir
  CHECK(reexported == found[0]);
  CHECK(wrapir::verify(f.p) == found);
}

// ---------------------------------------------------------------------------
// 1. Use before definition
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: a buffer, kernel or symbol used before its definition") {
  SUBCASE("buffer") {
    Fixture f;
    const auto buf0 = f.decl("buf0", {f.s0});
    f.call(f.x, buf0);
    f.append(Allocate{buf0});
    EXPECT_FINDINGS(f.p, {"line 1 (KernelCall): buffer buf0: used before any line defines it"});
  }
  SUBCASE("kernel") {
    Program p{"graph"};
    Builder b{p};
    const auto s0 = b.size_symbol("s0");
    const auto x = b.input("arg0_1", {s0}, DType::float32);
    const auto k =
        b.declare_kernel("triton_0", KernelLanguage::triton, parse_signature("in_ptr0: *fp32, n: i32").value());
    b.call(k, {x, s0});
    b.append(KernelDefinition{k, SourceText{"src"}, {}});
    b.call(k, {x, s0});
    EXPECT_FINDINGS(p, {"line 0 (KernelCall): kernel triton_0: called before its KernelDefinition"});
  }
  SUBCASE("unbacked symbol") {
    Fixture f;
    const auto u0 = f.b.unbacked_symbol("u0");
    const auto buf0 = f.b.empty({u0}, DType::float32);
    const auto scalar = f.b.extern_alloc("aten.sum.default", {f.x}, f.layout({}, DType::int64));
    f.b.dynamic_scalar(u0, scalar);
    f.b.call(f.k, {f.x, buf0, u0});
    EXPECT_FINDINGS(f.p, {"line 1 (Allocate): symbol u0: used in the layout of buf0 before any DynamicScalar or "
                          "UnbackedSymbolDefs line defines it"});
  }
  SUBCASE("computed symbol") {
    Fixture f;
    f.p.symbols.push_back(SymbolDecl{f.ctx().symbol("xnumel"), SymbolOrigin::computed});
    const Expr xnumel = f.p.symbols.back().symbol;
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    f.b.call(f.k, {f.x, buf0, xnumel});
    f.append(SymbolicCallArg{xnumel, f.s0});
    f.b.call(f.k, {f.x, buf0, xnumel});
    EXPECT_FINDINGS(
        f.p, {"line 2 (KernelCall): symbol xnumel: used in argument 2 before any SymbolicCallArg line defines it"});
  }
}

// ---------------------------------------------------------------------------
// 2. Use after free
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: a buffer used after it was freed, through a dead view, or after its storage was reused") {
  SUBCASE("freed") {
    Fixture f;
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    f.b.free({buf0});
    f.call(f.x, buf0);
    EXPECT_FINDINGS(f.p, {"line 3 (KernelCall): buffer buf0: used after it was freed at line 2"});
  }
  SUBCASE("view of a dead base") {
    Fixture f;
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    const auto buf1 = f.b.view(buf0, {f.s0}, {f.I(1)}, f.I(0));
    f.b.free({buf0});
    f.call(f.x, buf1);
    EXPECT_FINDINGS(f.p, {"line 4 (KernelCall): buffer buf1: used after its base buf0 was freed at line 3"});
  }
  SUBCASE("storage given away by Reuse") {
    Fixture f;
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    const auto buf1 = f.decl("buf1", {f.s0});
    f.append(Reuse{buf0, buf1, true});
    f.call(f.x, buf0);
    f.call(f.x, buf1);
    EXPECT_FINDINGS(f.p, {"line 3 (KernelCall): buffer buf0: used after its storage was reused by buf1 at line 2"});
  }
  SUBCASE("pool released") {
    Fixture f;
    f.p.pools.push_back(PoolDecl{"pool0", cuda_device(0), f.I(1024)});
    const auto a = f.decl("buf0", {f.s0});
    const auto c = f.decl("buf1", {f.s0});
    f.append(PoolCreate{PoolId{0}});
    f.append(AllocFromPool{a, PoolId{0}, f.I(0)});
    f.append(AllocFromPool{c, PoolId{0}, f.I(512)});
    f.append(DeallocFromPool{a, PoolId{0}, true});
    f.call(f.x, c);
    f.append(AllocFromPool{a, PoolId{0}, f.I(0)});
    EXPECT_FINDINGS(f.p, {"line 5 (KernelCall): buffer buf1: used after its pool pool0 was released at line 4",
                          "line 6 (AllocFromPool): pool pool0: used after it was released at line 4",
                          "line 6 (AllocFromPool): buffer buf0: defined twice: it was already defined at line 2"});
  }
  SUBCASE("a buffer written by an extern kernel or copied after it was freed") {
    Fixture f;
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    f.b.free({buf0});
    f.b.extern_out("aten.add.out", {f.x, f.x}, BufferArg{buf0});
    f.append(DeviceCopy{BufferArg{buf0}, BufferArg{f.x}, false});
    EXPECT_FINDINGS(f.p, {"line 3 (ExternKernelOut): buffer buf0: used after it was freed at line 2",
                          "line 4 (DeviceCopy): buffer buf0: used after it was freed at line 2"});
  }
}

// ---------------------------------------------------------------------------
// 3, 4. Double free; freeing inputs
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: double free") {
  Fixture f;
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.b.free({buf0});
  f.b.free({buf0});
  f.append(Free{buf0});
  EXPECT_FINDINGS(f.p, {"line 3 (FreeIfNotReused): buffer buf0: freed twice: it was already freed at line 2",
                        "line 4 (Free): buffer buf0: freed twice: it was already freed at line 2"});
}

TEST_CASE("ir/verify: freeing a graph input that was not donated, or with FreeIfNotReused") {
  Fixture f;
  const auto donated = f.b.input("arg1_1", f.layout({f.s0}), true);
  const auto kept = f.b.input("arg2_1", {f.s0}, DType::float32);
  const auto weight = f.b.constant("weight", f.layout({f.s0}));
  f.append(Free{f.x});
  f.append(Free{donated});
  f.append(FreeIfNotReused{kept});
  f.append(Free{weight});
  EXPECT_FINDINGS(f.p, {"line 1 (Free): buffer arg0_1: frees graph input 'arg0_1', which was not donated",
                        "line 3 (FreeIfNotReused): buffer arg2_1: frees graph input 'arg2_1' with FreeIfNotReused; "
                        "only Free frees a donated input",
                        "line 4 (Free): buffer weight: frees constant 'weight', which the caller owns"});
}

// ---------------------------------------------------------------------------
// 5. Reuse keys
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: Reuse across different reuse keys") {
  Fixture f;
  auto reuse = [&](BufferId old_buffer, BufferId new_buffer) {
    f.append(FreeIfNotReused{old_buffer, true});
    f.append(Reuse{old_buffer, new_buffer, true});
  };
  SUBCASE("same key and same size, and a provably smaller storage, are accepted") {
    const auto buf0 = f.b.empty({expr::mul(f.s0, f.I(2))}, DType::float32);
    const auto buf1 = f.decl("buf1", {f.s0, f.I(2)});
    reuse(buf0, buf1);
    const auto buf2 = f.decl("buf2", {f.s0});
    reuse(buf1, buf2);
    f.call(f.x, buf2);
    CHECK(findings(f.p) == "");
  }
  SUBCASE("dtype") {
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    reuse(buf0, f.decl("buf1", {f.s0}, DType::int32));
    EXPECT_FINDINGS(f.p, {"line 3 (Reuse): buffer buf1: reuses buf0 of dtype float32 as dtype int32"});
  }
  SUBCASE("device") {
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    reuse(buf0, f.b.declare("buf1", f.layout({f.s0}, DType::float32, cuda_device(1)), BufferRole::intermediate));
    EXPECT_FINDINGS(f.p, {"line 3 (Reuse): buffer buf1: reuses buf0 of device cuda:0 on device cuda:1"});
  }
  SUBCASE("alignment") {
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    const auto buf1 = f.decl("buf1", {f.s0});
    f.p.buffers[buf1.index].aligned = false;
    reuse(buf0, buf1);
    EXPECT_FINDINGS(f.p, {"line 3 (Reuse): buffer buf1: reuses aligned buf0 as an unaligned buffer"});
  }
  SUBCASE("stream") {
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    const auto buf1 = f.decl("buf1", {f.s0});
    f.p.buffers[buf1.index].stream = 2;
    reuse(buf0, buf1);
    EXPECT_FINDINGS(f.p, {"line 3 (Reuse): buffer buf1: reuses buf0 of stream 0 on stream 2"});
  }
  SUBCASE("a storage that may be too small") {
    const auto s1 = f.b.size_symbol("s1");
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    reuse(buf0, f.decl("buf1", {s1}));
    const auto buf2 = f.b.empty({f.s0}, DType::float32);
    reuse(buf2, f.decl("buf3", {f.s0, f.I(2)}));
    EXPECT_FINDINGS(
        f.p,
        {"line 3 (Reuse): buffer buf1: needs s1 storage elements, but the storage of buf0 has s0 and may be smaller",
         "line 6 (Reuse): buffer buf3: needs 2*s0 storage elements, but the storage of buf2 has s0 and may be "
         "smaller"});
  }
  SUBCASE("old storage that is not there to take") {
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    const auto buf1 = f.decl("buf1", {f.s0});
    const auto buf2 = f.decl("buf2", {f.s0});
    const auto buf3 = f.decl("buf3", {f.s0});
    const auto buf4 = f.decl("buf4", {f.s0});
    f.b.free({buf0});                   // line 2: not offered for reuse
    f.append(Reuse{buf0, buf1, true});  // line 3
    f.append(Reuse{buf1, buf2, true});  // line 4: in-place reuse of a live buffer is fine
    f.append(Reuse{buf1, buf3, true});  // line 5: buf2 already took it
    f.append(Reuse{f.x, buf4, true});   // line 6: a non-donated input
    EXPECT_FINDINGS(
        f.p, {"line 3 (Reuse): buffer buf0: its storage is reused after it was freed at line 2",
              "line 5 (Reuse): buffer buf1: its storage is reused after buf2 already took it at line 4",
              "line 6 (Reuse): buffer arg0_1: its storage is reused, but it is a graph input that was not donated"});
  }
  SUBCASE("storage offered for reuse that no Reuse takes") {
    const auto buf0 = f.b.empty({f.s0}, DType::float32);
    f.append(FreeIfNotReused{buf0, true});
    EXPECT_FINDINGS(f.p, {"line 2 (FreeIfNotReused): buffer buf0: marked reused, but no Reuse line takes its storage"});
  }
}

TEST_CASE("ir/verify: an output whose storage a Reuse with delete_old = false takes stays returnable") {
  Fixture f;
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.b.output(buf0);
  const auto buf1 = f.decl("buf1", {f.s0});
  f.append(Reuse{buf0, buf1, false});
  f.call(f.x, buf1);
  CHECK(findings(f.p) == "");
  std::get<Reuse>(f.p.body[2]).delete_old = true;
  EXPECT_FINDINGS(f.p, {"outputs: buffer buf0: output 0 is not live at the end of the program: its storage was reused "
                        "by buf1 at line 2"});
  std::get<Reuse>(f.p.body[2]).delete_old = false;
  f.b.free({buf1});
  EXPECT_FINDINGS(f.p, {"outputs: buffer buf0: output 0 is not live at the end of the program: its storage was reused "
                        "by buf1 at line 2"});
}

TEST_CASE("ir/verify: pools: created once, before use, released once, on the buffer's device") {
  Fixture f;
  f.p.pools.push_back(PoolDecl{"pool0", cuda_device(0), f.I(1024)});
  f.p.pools.push_back(PoolDecl{"pool1", cuda_device(1), f.I(1024)});
  const auto buf0 = f.decl("buf0", {f.s0});
  const auto buf1 = f.decl("buf1", {f.s0});
  const auto buf2 = f.decl("buf2", {f.s0});
  f.append(AllocFromPool{buf0, PoolId{0}, f.I(0)});    // line 1: before PoolCreate
  f.append(PoolCreate{PoolId{0}});                     // line 2
  f.append(PoolCreate{PoolId{0}});                     // line 3: twice
  f.append(PoolCreate{PoolId{1}});                     // line 4
  f.append(AllocFromPool{buf1, PoolId{1}, f.I(-64)});  // line 5: negative offset, other device
  f.append(DeallocFromPool{buf1, PoolId{0}, false});   // line 6: from another pool
  f.append(AllocFromPool{buf2, PoolId{0}, f.I(0)});    // line 7
  f.append(FreeIfNotReused{buf2});                     // line 8: pooled buffers end with DeallocFromPool
  f.append(DeallocFromPool{buf0, PoolId{0}, true});    // line 9
  f.append(DeallocFromPool{buf0, PoolId{0}, true});    // line 10
  EXPECT_FINDINGS(f.p, {"line 1 (AllocFromPool): pool pool0: used before its PoolCreate",
                        "line 3 (PoolCreate): pool pool0: created twice: it was already created at line 2",
                        "line 5 (AllocFromPool): the byte offset -64 is negative",
                        "line 5 (AllocFromPool): buffer buf1: is on cuda:0 but pool pool1 is on cuda:1",
                        "line 6 (DeallocFromPool): buffer buf1: was not carved from pool pool0",
                        "line 8 (FreeIfNotReused): buffer buf2: was carved from pool pool0; DeallocFromPool ends it",
                        "line 10 (DeallocFromPool): buffer buf0: freed twice: it was already freed at line 9",
                        "line 10 (DeallocFromPool): pool pool0: released twice: it was already released at line 9"});
}

TEST_CASE("ir/verify: comm buffers and workspaces are created and freed by their own lines") {
  Fixture f;
  const auto comm = f.b.comm_buffer({f.s0}, DType::float32, "group0");  // line 1
  const auto other = f.b.declare("buf9", f.layout({f.s0}), BufferRole::comm);
  f.p.buffers[other.index].comm = CommBufferInfo{CommBufferType::symm_mem, "group1"};
  f.append(FreeIfNotReused{comm, true});                                      // line 2: offered to a Reuse
  f.append(Reuse{comm, other, true});                                         // line 3: another group
  f.append(Free{other});                                                      // line 4
  const auto ws = f.b.workspace(f.I(64), WorkspaceZeroMode::zero_per_graph);  // line 5
  f.append(WorkspaceFree{ws});  // line 6: the builder would not free a ZERO_PER_GRAPH workspace
  f.append(CommBufferFree{ws});                                               // line 7
  EXPECT_FINDINGS(f.p, {"line 3 (Reuse): buffer buf9: reuses buf0, whose comm buffer type or group differs",
                        "line 4 (Free): buffer buf9: is a comm buffer, which only CommBufferFree frees",
                        "line 6 (WorkspaceFree): buffer workspace_0: is a ZERO_PER_GRAPH workspace, which lives for "
                        "the whole run and is never freed",
                        "line 7 (CommBufferFree): buffer workspace_0: is a workspace, which only WorkspaceFree frees",
                        "line 7 (CommBufferFree): buffer workspace_0: is not a comm buffer (its role is workspace)",
                        "line 7 (CommBufferFree): buffer workspace_0: freed twice: it was already freed at line 6"});
}

TEST_CASE("ir/verify: device copies and extern calls use live buffers of matching shape") {
  Fixture f;
  const auto wide = f.b.empty({f.s0, f.I(4)}, DType::float32);
  const auto four = f.b.empty({f.I(4)}, DType::float32);
  const auto eight = f.b.empty({f.I(8)}, DType::float32);
  f.append(DeviceCopy{BufferArg{wide}, BufferArg{f.x}, true});
  f.append(DeviceCopy{BufferArg{four}, BufferArg{eight}, false});
  f.b.free({four});
  f.append(
      ExternKernelMultiOut{std::nullopt, "aten.sort.values", {eight}, {}, {NamedBuffer{"values", BufferArg{four}}}});
  f.append(IndexPutFallback{"aten.index_put_", eight, {std::nullopt, BufferArg{four}}, BufferArg{f.x}, false});
  f.append(ScatterFallback{"aten.scatter_", four, 0, BufferArg{eight}, 1.0, {}});
  EXPECT_FINDINGS(f.p, {"line 4 (DeviceCopy): copies 1 dimensions into 2",
                        "line 5 (DeviceCopy): size 0 of the source is 8 but the destination's is 4",
                        "line 7 (ExternKernelMultiOut): buffer buf1: used after it was freed at line 6",
                        "line 8 (IndexPutFallback): buffer buf1: used after it was freed at line 6",
                        "line 9 (ScatterFallback): buffer buf1: used after it was freed at line 6"});
}

TEST_CASE("ir/verify: operator paths must name real operators (regression, issue 12)") {
  // `torch.builtins.exec(...)`, `torch.os.system(...)` and `torch.load(...)`
  // passed verify because an operator path only had to start with an
  // allowed namespace; each line kind that names an operator is checked.
  for (const char* attack : {"torch.builtins.exec", "torch.os.system", "torch.load"}) {
    CAPTURE(attack);
    Fixture f;
    const auto out = f.b.empty({f.s0}, DType::float32);
    f.append(ExternKernelAlloc{std::nullopt, attack, {std::string("import os")}, {}});
    f.append(ExternKernelOut{attack, {f.x}, {}, BufferArg{out}});
    f.append(ExternKernelMultiOut{std::nullopt, attack, {f.x}, {}, {}});
    f.append(ScatterFallback{attack, out, 0, BufferArg{f.x}, 1.0, {}});
    f.append(IndexPutFallback{attack, out, {BufferArg{f.x}}, BufferArg{f.x}, false});
    const std::string why = "operator '" + std::string(attack) +
                            "' is not an operator a program may call: under 'torch' only "
                            "torch.ops.<namespace>.<op>[.<overload>] is callable";
    EXPECT_FINDINGS(f.p, {"line 2 (ExternKernelAlloc): " + why, "line 3 (ExternKernelOut): " + why,
                          "line 4 (ExternKernelMultiOut): " + why, "line 5 (ScatterFallback): " + why,
                          "line 6 (IndexPutFallback): " + why});
  }
}

TEST_CASE("ir/verify: an operator path with a Python keyword part (regression, issue 12)") {
  // `aten.import.default` passed verify and made the Python module a
  // SyntaxError; Python and FX both print operator paths as Python.
  Fixture f;
  f.append(ExternKernelAlloc{std::nullopt, "aten.import.default", {}, {}});
  f.append(ExternKernelAlloc{std::nullopt, "torch.ops.aten.mm.None", {}, {}});
  f.append(ExternKernelAlloc{std::nullopt, "aten.match.default", {}, {}});  // a soft keyword is a fine attribute
  EXPECT_FINDINGS(f.p, {"line 1 (ExternKernelAlloc): operator 'aten.import.default' has the part 'import', a "
                        "Python keyword, so the Python and FX targets cannot print it",
                        "line 2 (ExternKernelAlloc): operator 'torch.ops.aten.mm.None' has the part 'None', a "
                        "Python keyword, so the Python and FX targets cannot print it"});
}

TEST_CASE("ir/verify: the operator registry of VerifyOptions declares extra paths") {
  Fixture f;
  f.append(ExternKernelAlloc{std::nullopt, "torch.nn.functional.gelu", {f.x}, {}});
  CHECK(verify(f.p).size() == 1);
  VerifyOptions options;
  REQUIRE(options.operators.declare("torch.nn.functional.gelu"));
  CHECK(verify(f.p, options).empty());
  // Also inside subgraphs.
  Program outer{"outer"};
  outer.subgraphs.push_back(f.p);
  outer.subgraphs.back().name = "inner";
  for (const Finding& finding : verify(outer, options))
    CHECK(finding.message.find("torch.nn.functional.gelu") == std::string::npos);
}

TEST_CASE("ir/verify: views that reach past their storage (regression, issue 12)") {
  // These passed verify and emit, and read and wrote memory the program did
  // not own: neither reinterpret_tensor nor alloc_from_pool checks bounds.
  SUBCASE("a Reinterpret past the end of its base") {
    Fixture f;
    const auto base = f.b.empty({f.I(8)}, DType::float32);             // line 1: 32 bytes
    f.b.view(base, {f.I(4)}, {f.I(1)}, f.I(4));                          // line 2: bytes 16-32, fits
    f.b.view(base, {f.I(4)}, {f.I(1)}, f.I(6));                          // line 3: 40 bytes
    f.b.view(base, {f.I(3), f.I(3)}, {f.I(3), f.I(1)}, f.I(0));          // line 4: 9 elements
    f.b.view(base, {f.I(2), f.I(0)}, {f.I(1000), f.I(1)}, f.I(0));       // line 5: empty, fits
    f.b.view(base, {f.I(1), f.I(8)}, {f.I(1000), f.I(1)}, f.I(0));       // line 6: size 1 ignores its stride
    EXPECT_FINDINGS(f.p, {"line 3 (Reinterpret): buffer buf2: the view of buf0 reaches past the storage it views: "
                          "its extent of 40 bytes exceeds the 32 bytes of storage it views",
                          "line 4 (Reinterpret): buffer buf3: the view of buf0 reaches past the storage it views: "
                          "its extent of 36 bytes exceeds the 32 bytes of storage it views"});
  }
  SUBCASE("a view of a view is measured from its own base's first element") {
    Fixture f;
    const auto base = f.b.empty({f.I(8)}, DType::float32);
    const auto upper = f.b.view(base, {f.I(4)}, {f.I(1)}, f.I(4));  // 16 bytes of room left
    f.b.view(upper, {f.I(4)}, {f.I(1)}, f.I(0));                    // fits exactly
    f.b.view(upper, {f.I(4)}, {f.I(1)}, f.I(2));                    // 24 > 16
    EXPECT_FINDINGS(f.p, {"line 4 (Reinterpret): buffer buf3: the view of buf1 reaches past the storage it views: "
                          "its extent of 24 bytes exceeds the 16 bytes of storage it views"});
  }
  SUBCASE("byte extents when the view's dtype differs from its base's") {
    Fixture f;
    const auto base = f.b.empty({f.I(8)}, DType::float32);  // 32 bytes
    const auto fits = f.decl("wide4", {f.I(4)}, DType::float64);
    const auto over = f.decl("wide5", {f.I(5)}, DType::float64);
    f.append(Reinterpret{fits, base});
    f.append(Reinterpret{over, base});
    EXPECT_FINDINGS(f.p, {"line 2 (Reinterpret): buffer wide4: has dtype float64 but its base buf0 has dtype float32",
                          "line 3 (Reinterpret): buffer wide5: has dtype float64 but its base buf0 has dtype float32",
                          "line 3 (Reinterpret): buffer wide5: the view of buf0 reaches past the storage it views: "
                          "its extent of 40 bytes exceeds the 32 bytes of storage it views"});
  }
  SUBCASE("symbolic extents: decided by bounds where they can be") {
    Fixture f;
    const auto base = f.b.empty({f.s0}, DType::float32);
    f.b.view(base, {f.s0}, {f.I(1)}, f.I(0));  // fits for every s0
    f.b.view(base, {f.s0}, {f.I(1)}, f.I(1));  // one past the end for every s0
    EXPECT_FINDINGS(f.p, {"line 3 (Reinterpret): buffer buf2: the view of buf0 reaches past the storage it views: "
                          "its extent of 4*s0 + 4 bytes exceeds the 4*s0 bytes of storage it views"});
    CHECK(runtime_checks(f.p).empty());
  }
  SUBCASE("a buffer carved past the end of its pool") {
    Fixture f;
    f.p.pools.push_back(PoolDecl{"pool0", cuda_device(0), f.I(64)});
    const auto a = f.decl("a", {f.I(8)});
    const auto b = f.decl("b", {f.I(8)});
    f.append(PoolCreate{PoolId{0}});
    f.append(AllocFromPool{a, PoolId{0}, f.I(32)});  // bytes 32-64: fits
    f.append(AllocFromPool{b, PoolId{0}, f.I(48)});  // bytes 48-80
    EXPECT_FINDINGS(f.p, {"line 3 (AllocFromPool): buffer b: the slice of pool pool0 reaches past the storage it "
                          "views: it reaches 80 bytes into a pool of 64 bytes"});
  }
  SUBCASE("buffer-argument views, with negative offsets and strides") {
    Fixture f;
    const auto out = f.b.empty({f.I(8)}, DType::float32);
    f.b.call(f.k, {BufferArg{f.x, View{{f.s0}, {f.I(1)}, f.I(0)}}, BufferArg{out, View{{f.I(9)}, {f.I(1)}, f.I(0)}},
                   f.s0});
    f.b.call(f.k, {BufferArg{out, View{{f.I(2)}, {f.I(1)}, f.I(-1)}}, BufferArg{out, View{{f.I(2)}, {f.I(-1)}, f.I(4)}},
                   f.s0});
    f.b.output(BufferArg{out, View{{f.I(4)}, {f.I(2)}, f.I(1)}});  // elements 1..7: fits
    EXPECT_FINDINGS(f.p, {"line 2 (KernelCall): argument 1, a view of buf0, reaches past the storage it views: its "
                          "extent of 36 bytes exceeds the 32 bytes of storage it views",
                          "line 3 (KernelCall): argument 0, a view of buf0, reaches past the storage it views: its "
                          "storage offset -1 is negative",
                          "line 3 (KernelCall): argument 1, a view of buf0, reaches past the storage it views: its "
                          "stride 0 (-1) is negative"});
  }
  SUBCASE("extents that overflow 64 bits") {
    Fixture f;
    const auto base = f.b.empty({f.I(8)}, DType::float32);
    f.b.view(base, {f.I(std::int64_t{1} << 62)}, {f.I(4)}, f.I(0));
    const std::string text = findings(f.p);
    CHECK(text.find("line 2 (Reinterpret): buffer buf1: the view of buf0 reaches past the storage it views: its "
                    "extent cannot be computed: integer overflow") == 0);
  }
}

TEST_CASE("ir/verify: views whose bounds depend on the symbols need a run-time check") {
  Fixture f;
  const auto s1 = f.b.size_symbol("s1", 4);
  const auto base = f.b.empty({f.s0}, DType::float32);
  f.b.view(base, {s1}, {f.I(1)}, f.I(0));  // s1 <= s0?
  f.p.pools.push_back(PoolDecl{"pool0", cuda_device(0), f.I(1024)});
  const auto pooled = f.decl("pooled", {f.s0});
  f.append(PoolCreate{PoolId{0}});
  f.append(AllocFromPool{pooled, PoolId{0}, f.I(0)});  // 4*s0 <= 1024?
  f.b.call(f.k, {BufferArg{f.x, View{{s1}, {f.I(1)}, f.I(1)}}, base, f.s0});
  CHECK(verify(f.p).empty());
  const std::vector<RuntimeCheck> checks = runtime_checks(f.p);
  REQUIRE(checks.size() == 3);
  CHECK(checks[0].line == 2);
  CHECK(checks[0].kind == "Reinterpret");
  CHECK(checks[0].subject == "buffer buf1: the view of buf0");
  CHECK(checks[0].extent.fit == ViewFit::unknown);
  REQUIRE(checks[0].extent.open_conditions.size() == 1);
  CHECK(wrapir::expr::print_python(checks[0].extent.open_conditions[0].lhs) == "4*s1");
  CHECK(wrapir::expr::print_python(checks[0].extent.open_conditions[0].rhs) == "4*s0");
  CHECK(checks[1].subject == "buffer pooled: the slice of pool pool0");
  CHECK(wrapir::expr::print_python(checks[1].extent.needed_bytes) == "4*s0");
  CHECK(checks[2].kind == "KernelCall");
  CHECK(checks[2].subject == "argument 0, a view of arg0_1,");
}

// ---------------------------------------------------------------------------
// 6. Reinterpret
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: Reinterpret of an unallocated or dead base") {
  Fixture f;
  const auto buf0 = f.decl("buf0", {f.s0});
  const auto view0 = f.decl("buf1", {f.s0});
  f.append(Reinterpret{view0, buf0});
  f.append(Allocate{buf0});
  f.b.free({buf0});
  const auto view1 = f.decl("buf2", {f.s0});
  f.append(Reinterpret{view1, buf0});
  const auto view2 = f.decl("buf3", {f.s0}, DType::int32);
  const auto buf4 = f.b.empty({f.s0}, DType::float32);
  f.append(Reinterpret{view2, buf4});
  f.append(FreeIfNotReused{view2});
  EXPECT_FINDINGS(f.p, {"line 1 (Reinterpret): buffer buf0: used before any line defines it",
                        "line 4 (Reinterpret): buffer buf0: used after it was freed at line 3",
                        "line 6 (Reinterpret): buffer buf3: has dtype int32 but its base buf4 has dtype float32",
                        "line 7 (FreeIfNotReused): buffer buf3: is a view, which owns no storage and is never freed"});
}

// ---------------------------------------------------------------------------
// 7. Kernel calls
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: kernel call arity and types against the signature") {
  Fixture f;
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  const auto ints = f.b.empty({f.s0}, DType::int32);
  std::vector<ParamType> types;
  for (const KernelParam& param : f.p.kernel(f.k).signature) types.push_back(param.type);
  SUBCASE("argument count and argument types") {
    f.append(KernelCall{f.k, {f.x, buf0}, types, LauncherGrid{}, cuda_device(0), 0});
    f.append(KernelCall{f.k,
                        {f.x, buf0, f.s0},
                        {types[0], ParamType{true, DType::float16}, types[2]},
                        LauncherGrid{},
                        cuda_device(0),
                        0});
    f.append(KernelCall{f.k, {f.x, buf0, f.s0}, {types[0]}, LauncherGrid{}, cuda_device(0), 0});
    EXPECT_FINDINGS(
        f.p,
        {"line 3 (KernelCall): kernel triton_0: called with 2 arguments, but its signature has 3 parameters",
         "line 4 (KernelCall): kernel triton_0: argument type 1 is *fp16 but parameter 'out_ptr0' is *fp32",
         "line 5 (KernelCall): kernel triton_0: called with 1 argument types, but its signature has 3 parameters"});
  }
  SUBCASE("each argument against its parameter") {
    f.b.call(f.k, {ints, buf0, f.s0});
    f.b.call(f.k, {f.x, f.s0, 2.5});
    f.b.call(f.k, {f.x, buf0, std::int64_t{8}});
    f.b.call(f.k, {f.x, buf0, true});
    f.b.call(f.k, {f.x, buf0, "eight"});
    f.b.call(f.k, {f.x, None{}, expr::mul(f.s0, f.I(2))});
    EXPECT_FINDINGS(
        f.p,
        {"line 3 (KernelCall): kernel triton_0: argument 0 is an int32 buffer but parameter 'in_ptr0' is *fp32",
         "line 4 (KernelCall): kernel triton_0: argument 1 is a symbolic integer but parameter 'out_ptr0' is *fp32",
         "line 4 (KernelCall): kernel triton_0: argument 2 is a float but parameter 'xnumel' is i32",
         "line 7 (KernelCall): kernel triton_0: argument 2 is a string but parameter 'xnumel' is i32",
         "line 8 (KernelCall): kernel triton_0: argument 1 is None but parameter 'out_ptr0' is *fp32"});
  }
  SUBCASE("float and bool scalar parameters") {
    const auto k = f.b.triton_kernel("triton_1", "src", "out_ptr0: *fp32, alpha: fp32, flag: i1");
    f.b.call(k, {buf0, 0.5, false});
    f.b.call(k, {buf0, std::int64_t{1}, std::int64_t{0}});
    f.b.call(k, {buf0, f.s0, 0.5});
    EXPECT_FINDINGS(
        f.p, {"line 6 (KernelCall): kernel triton_1: argument 1 is a symbolic integer but parameter 'alpha' is fp32",
              "line 6 (KernelCall): kernel triton_1: argument 2 is a float but parameter 'flag' is i1"});
  }
}

TEST_CASE("ir/verify: multi-kernel definitions and calls") {
  Fixture f;
  const auto k1 = f.b.triton_kernel("triton_1", "src", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  const auto k16 = f.b.triton_kernel("triton_2", "src", "in_ptr0: *fp16, xnumel: i32");
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  SUBCASE("a well-formed multi-kernel") {
    const auto mk = f.b.multi_kernel({f.k, k1}, {}, {ShapeKey{{8}}, std::nullopt});
    f.b.call_multi(mk, {f.x, buf0, f.s0});
    CHECK(findings(f.p) == "");
  }
  SUBCASE("candidates, slices and shape keys") {
    const auto later = f.b.declare_kernel("triton_3", KernelLanguage::triton, f.p.kernel(f.k).signature);
    const auto mk = f.b.declare_kernel("multi_kernel_0", KernelLanguage::triton, f.p.kernel(f.k).signature);
    f.append(MultiKernelDefinition{mk,
                                   {f.k, later, k16, mk},
                                   {{ArgSlice{0, 3}}, {ArgSlice{0, 4}}, {ArgSlice{0, 1}, ArgSlice{2, 3}}},
                                   {std::nullopt}});
    EXPECT_FINDINGS(
        f.p, {"line 4 (MultiKernelDefinition): kernel multi_kernel_0: has 4 candidates but 3 arg_index entries",
              "line 4 (MultiKernelDefinition): kernel multi_kernel_0: has 4 candidates but 1 shape_keys",
              "line 4 (MultiKernelDefinition): kernel triton_3: is candidate 1 but is not defined before this line",
              "line 4 (MultiKernelDefinition): kernel multi_kernel_0: arg_index[1] slice [0, 4) is not inside its 3 "
              "arguments",
              "line 4 (MultiKernelDefinition): kernel multi_kernel_0: arg_index[2] passes parameter 'in_ptr0' (*fp32) "
              "to parameter 'in_ptr0' (*fp16) of candidate triton_2",
              "line 4 (MultiKernelDefinition): kernel multi_kernel_0: lists itself as candidate 3"});
  }
  SUBCASE("a slice that selects the wrong count") {
    const auto mk = f.b.multi_kernel({f.k, k1}, {{ArgSlice{0, 3}}, {ArgSlice{0, 2}}});
    f.b.call_multi(mk, {f.x, buf0});
    EXPECT_FINDINGS(f.p, {"line 4 (MultiKernelDefinition): kernel multi_kernel_0: arg_index[1] selects 2 arguments but "
                          "candidate triton_1 takes 3",
                          "line 5 (MultiKernelCall): kernel multi_kernel_0: called with 2 arguments, but its signature "
                          "has 3 parameters"});
  }
  SUBCASE("calling a kernel with the other call line") {
    const auto mk = f.b.multi_kernel({f.k, k1});
    f.b.call(mk, {f.x, buf0, f.s0});
    f.b.call_multi(f.k, {f.x, buf0, f.s0});
    EXPECT_FINDINGS(f.p, {"line 5 (KernelCall): kernel multi_kernel_0: is a multi-kernel, which MultiKernelCall calls",
                          "line 6 (MultiKernelCall): kernel triton_0: is not a multi-kernel; KernelCall calls it"});
  }
}

// ---------------------------------------------------------------------------
// 8. Symbols
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: a pool created as a tensor spans the pool's bytes") {
  Fixture f;
  f.p.pools.push_back(PoolDecl{"pool0", cuda_device(0), f.I(1024), PoolTensor{DType::float32, {f.I(16), f.I(16)}, {f.I(16), f.I(1)}}});
  f.p.pools.push_back(PoolDecl{"pool1", cuda_device(0), f.I(1024), PoolTensor{DType::float32, {f.I(128)}, {f.I(1)}}});
  f.p.pools.push_back(PoolDecl{"pool2", cuda_device(0), f.I(1024), PoolTensor{DType::float32, {f.I(128)}, {}}});
  f.p.pools.push_back(PoolDecl{"pool3", cuda_device(0), expr::mul(f.s0, f.I(8)), PoolTensor{DType::int64, {f.s0}, {f.I(1)}}});
  f.b.output(f.x);
  EXPECT_FINDINGS(f.p, {"pools: pool pool1: its tensor spans 512 bytes, not its size 1024",
                        "pools: pool pool2: its tensor has 1 sizes but 0 strides"});
}

TEST_CASE("ir/verify: alignment and scalar asserts") {
  Fixture f;
  const Expr u0 = f.b.unbacked_symbol("u0");
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.append(AssertAlignment{buf0, 16, "aten.foo.default"});
  f.append(AssertAlignment{buf0, 24, std::nullopt});
  f.append(AssertAlignment{buf0, 0, std::string("two\nlines")});
  f.append(AssertScalar{expr::le(f.s0, f.I(64)), "s0 <= 64"});
  f.append(AssertScalar{expr::ge(u0, f.I(1)), "u0 >= 1"});
  f.append(AssertScalar{f.I(0), "never"});
  f.append(AssertScalar{f.s0, "a\nb"});
  f.append(AssertSizeStride{buf0, {f.s0}, {f.I(1)}, std::string()});
  f.b.output(buf0);
  EXPECT_FINDINGS(
      f.p,
      {"line 3 (AssertAlignment): the alignment 24 is not a positive power of two",
       "line 4 (AssertAlignment): the alignment 0 is not a positive power of two",
       "line 4 (AssertAlignment): the op name 'two\\x0alines' is empty or has a line break or control character; it "
       "must be one line of text",
       "line 6 (AssertScalar): symbol u0: used in the condition before any DynamicScalar or UnbackedSymbolDefs line "
       "defines it",
       "line 7 (AssertScalar): the condition is always false (it folded to 0): the program would always stop here",
       "line 8 (AssertScalar): the message 'a\\x0ab' has a line break or control character; it must be one line of "
       "text",
       "line 9 (AssertSizeStride): the op name '' is empty or has a line break or control character; it must be one "
       "line of text"});
}

TEST_CASE("ir/verify: undefined symbols in sizes, arguments, grids, values, asserts and pools") {
  Fixture f;
  const Expr u0 = f.b.unbacked_symbol("u0");
  const Expr z = f.ctx().symbol("z");  // in the context, not in the table
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.b.call(f.k, {f.x, buf0, z}, {.grid = ExplicitGrid{u0, f.I(1), f.I(1)}});
  f.append(SymbolicCallArg{f.b.computed_symbol("ps0", f.s0), expr::add(u0, f.I(1))});
  f.append(AssertSizeStride{buf0, {u0}, {f.I(1)}});
  f.p.pools.push_back(PoolDecl{"pool0", cuda_device(0), expr::mul(z, f.I(4))});
  f.append(PoolCreate{PoolId{0}});
  f.append(AllocFromPool{f.decl("buf1", {f.s0}), PoolId{0}, u0});
  f.b.output(expr::add(u0, z));
  EXPECT_FINDINGS(
      f.p,
      {"line 2 (KernelCall): symbol z: used in argument 2 but not declared in this program's symbol table",
       "line 2 (KernelCall): symbol u0: used in grid x before any DynamicScalar or UnbackedSymbolDefs line defines it",
       "line 4 (SymbolicCallArg): symbol u0: used in the value before any DynamicScalar or UnbackedSymbolDefs line "
       "defines it",
       "line 4 (SymbolicCallArg): symbol ps0: defined twice: it was already defined at line 3",
       "line 5 (AssertSizeStride): symbol u0: used in size 0 before any DynamicScalar or UnbackedSymbolDefs line "
       "defines it",
       "line 6 (PoolCreate): symbol z: used in the size of the pool but not declared in this program's symbol table",
       "line 7 (AllocFromPool): symbol u0: used in the byte offset before any DynamicScalar or UnbackedSymbolDefs line "
       "defines it",
       "outputs: symbol u0: used in output 0 before any DynamicScalar or UnbackedSymbolDefs line defines it",
       "outputs: symbol z: used in output 0 but not declared in this program's symbol table"});
}

TEST_CASE("ir/verify: symbols defined twice or by a line that does not match their origin") {
  Fixture f;
  const Expr u0 = f.b.unbacked_symbol("u0");
  const auto scalar = f.b.extern_alloc("aten.sum.default", {f.x}, f.layout({}, DType::int64));
  f.b.dynamic_scalar(u0, scalar);
  f.b.dynamic_scalar(u0, scalar);
  f.b.dynamic_scalar(f.s0, scalar);
  f.append(SymbolicCallArg{u0, f.I(3)});
  EXPECT_FINDINGS(
      f.p, {"line 3 (DynamicScalar): symbol u0: defined twice: it was already defined at line 2",
            "line 4 (DynamicScalar): symbol s0: defined by this line, but its origin is input, not unbacked",
            "line 5 (SymbolicCallArg): symbol u0: defined by this line, but its origin is unbacked, not computed"});
}

TEST_CASE("ir/verify: symbol tables: inputs, input_shape sources and layouts of inputs") {
  Fixture f;
  const Expr u0 = f.b.unbacked_symbol("u0");
  f.b.shape_symbol("s1", f.x, KeyStep{KeyStepKind::size, 3});
  f.p.symbols.push_back(SymbolDecl{f.ctx().symbol("s2"), SymbolOrigin::input});
  f.b.input("arg1_1", {u0}, DType::float32);
  f.p.inputs.emplace_back(u0);
  EXPECT_FINDINGS(f.p, {"symbols: symbol s1: reads dimension 3 of arg0_1, which has rank 1",
                        "inputs: symbol u0: is input 3 but its origin is unbacked, not input",
                        "symbols: symbol s2: has origin input but is not one of the program's inputs",
                        "buffers: symbol u0: used in the layout of arg1_1 before any DynamicScalar or "
                        "UnbackedSymbolDefs line defines it"});
}

// ---------------------------------------------------------------------------
// 9. Scopes
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: unbalanced enter and exit lines") {
  SUBCASE("exit without enter, mismatched exit, enter left open") {
    Fixture f;
    f.append(ExitDeviceContext{});
    f.b.enter_device(cuda_device(0));
    f.append(EnterStreamContext{1});
    f.append(ExitDeviceContext{});
    f.append(EnterStreamContext{2});
    EXPECT_FINDINGS(
        f.p, {"line 1 (ExitDeviceContext): closes no open scope: there is no EnterDeviceContext before it",
              "line 2 (EnterDeviceContext): is never closed: no ExitDeviceContext matches it",
              "line 4 (ExitDeviceContext): closes the EnterStreamContext of line 3; only ExitStreamContext closes it",
              "line 5 (EnterStreamContext): is never closed: no ExitStreamContext matches it"});
  }
  SUBCASE("subgraph scopes and stream 0") {
    Fixture f;
    f.p.subgraphs.emplace_back("branch", f.p.context);
    f.append(EnterSubgraph{GraphId{0}});
    f.append(EnterStreamContext{0});
    f.append(ExitStreamContext{});
    f.append(ExitSubgraph{});
    f.append(ExitSubgraph{});
    f.append(EnterSubgraph{GraphId{3}});
    EXPECT_FINDINGS(
        f.p, {"line 2 (EnterStreamContext): enters stream 0, the default stream; side streams are numbered from 1",
              "line 5 (ExitSubgraph): closes no open scope: there is no EnterSubgraph before it",
              "line 6 (EnterSubgraph): subgraph #3: not in this program's subgraph table (1 entries)",
              "line 6 (EnterSubgraph): is never closed: no ExitSubgraph matches it"});
  }
}

// ---------------------------------------------------------------------------
// 10. Outputs
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: outputs freed or never defined at the end of the program") {
  Fixture f;
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.b.free({buf0});
  const auto buf1 = f.decl("buf1", {f.s0});
  const auto buf2 = f.b.empty({f.s0}, DType::float32);
  const auto view = f.b.view(buf2, {f.s0}, {f.I(1)}, f.I(0));
  f.b.free({buf2});
  f.b.output(buf0);
  f.b.output(buf1);
  f.b.output(view);
  f.b.output(f.x);
  f.p.outputs.emplace_back(None{});
  EXPECT_FINDINGS(
      f.p, {"outputs: buffer buf0: output 0 is not live at the end of the program: it was freed at line 2",
            "outputs: buffer buf1: output 1 is never defined",
            "outputs: buffer buf3: output 2 is not live at the end of the program: its base buf2 was freed at line 5"});
}

// ---------------------------------------------------------------------------
// 11. Subgraph signatures
// ---------------------------------------------------------------------------

namespace {

void return_first_input(Builder& sb, std::span<const ProgramInput> ins) {
  sb.output(boost::variant2::get<BufferId>(ins[0]));
}

}  // namespace

TEST_CASE("ir/verify: Conditional operands, predicate and outputs against its subgraphs") {
  Fixture f;
  const auto pred = f.b.input("pred", {}, DType::bool_);
  const auto outs = f.b.conditional(BufferArg{pred}, {f.x}, return_first_input, return_first_input);
  declare_shape_symbols(f.p);
  CHECK(findings(f.p) == "");
  auto& cond = std::get<Conditional>(f.p.body.back());
  SUBCASE("operand count, dtype, device and rank") {
    const auto ints = f.b.input("ints", {f.s0, f.s0}, DType::int32, cuda_device(1));
    cond.operands = {ints};
    std::get<Conditional>(f.p.body.back()).operands.push_back(f.s0);
    EXPECT_FINDINGS(f.p, {"line 1 (Conditional): subgraph true_graph_0: takes 1 inputs but the Conditional passes 2",
                          "line 1 (Conditional): subgraph false_graph_0: takes 1 inputs but the Conditional passes 2"});
    std::get<Conditional>(f.p.body.back()).operands = {ints};
    EXPECT_FINDINGS(
        f.p,
        {"line 1 (Conditional): subgraph true_graph_0: input 0 has dtype float32 but the Conditional passes int32",
         "line 1 (Conditional): subgraph true_graph_0: input 0 is on cuda:0 but the Conditional passes a buffer on "
         "cuda:1",
         "line 1 (Conditional): subgraph true_graph_0: input 0 has rank 1 but the Conditional passes a buffer of rank "
         "2",
         "line 1 (Conditional): subgraph false_graph_0: input 0 has dtype float32 but the Conditional passes int32",
         "line 1 (Conditional): subgraph false_graph_0: input 0 is on cuda:0 but the Conditional passes a buffer on "
         "cuda:1",
         "line 1 (Conditional): subgraph false_graph_0: input 0 has rank 1 but the Conditional passes a buffer of rank "
         "2"});
    std::get<Conditional>(f.p.body.back()).operands = {f.s0};
    EXPECT_FINDINGS(f.p, {"line 1 (Conditional): subgraph true_graph_0: input 0 is a buffer but the Conditional passes "
                          "a symbolic integer",
                          "line 1 (Conditional): subgraph false_graph_0: input 0 is a buffer but the Conditional "
                          "passes a symbolic integer"});
  }
  SUBCASE("predicate") {
    cond.predicate = f.x;
    EXPECT_FINDINGS(
        f.p, {"line 1 (Conditional): buffer arg0_1: is the predicate but has dtype float32; a predicate buffer is bool",
              "line 1 (Conditional): buffer arg0_1: is the predicate but has a size s0; a predicate buffer holds one "
              "element"});
    std::get<Conditional>(f.p.body.back()).predicate = true;
    EXPECT_FINDINGS(f.p, {"line 1 (Conditional): the predicate is a bool; it must be a bool buffer of one element or a "
                          "symbolic integer"});
    std::get<Conditional>(f.p.body.back()).predicate = f.s0;
    CHECK(findings(f.p) == "");
  }
  SUBCASE("outputs") {
    f.p.buffers[outs[0].index].layout.dtype = DType::float16;
    f.p.subgraphs[1].outputs.emplace_back(f.s0);
    f.p.subgraphs[2 - 1].outputs.erase(f.p.subgraphs[1].outputs.begin());
    EXPECT_FINDINGS(f.p, {"line 1 (Conditional): subgraph true_graph_0: output 0 has dtype float32 but the "
                          "Conditional's output buf0 has dtype float16",
                          "line 1 (Conditional): subgraph false_graph_0: output 0 is a symbolic integer; a "
                          "Conditional's outputs are buffers"});
  }
  SUBCASE("missing subgraph") {
    cond.false_graph = GraphId{7};
    EXPECT_FINDINGS(f.p, {"line 1 (Conditional): subgraph #7: not in this program's subgraph table (2 entries)"});
  }
}

TEST_CASE("ir/verify: WhileLoop carried and additional values against its condition and body") {
  Fixture f;
  auto condition = [](Builder& sb, std::span<const ProgramInput>) { sb.output(sb.empty({}, DType::bool_)); };
  const auto outs = f.b.while_loop({f.x}, {f.s0}, condition, return_first_input);
  declare_shape_symbols(f.p);
  CHECK(findings(f.p) == "");
  auto& loop = std::get<WhileLoop>(f.p.body.back());
  SUBCASE("condition returns one bool buffer") {
    Program& cond = f.p.subgraphs[loop.cond_graph.index];
    cond.buffers[1].layout.dtype = DType::int8;
    EXPECT_FINDINGS(
        f.p,
        {"line 1 (WhileLoop): subgraph cond_fn_0: returns an int8 buffer; a loop condition returns one bool buffer"});
    cond.outputs.push_back(cond.outputs[0]);
    EXPECT_FINDINGS(
        f.p, {"line 1 (WhileLoop): subgraph cond_fn_0: returns 2 outputs; a loop condition returns one bool buffer"});
  }
  SUBCASE("inputs are the carried then the additional values") {
    loop.additional = {f.x};
    EXPECT_FINDINGS(f.p, {"line 1 (WhileLoop): subgraph cond_fn_0: input 1 is a symbolic integer but the WhileLoop "
                          "passes a float32 buffer",
                          "line 1 (WhileLoop): subgraph body_fn_0: input 1 is a symbolic integer but the WhileLoop "
                          "passes a float32 buffer"});
    std::get<WhileLoop>(f.p.body.back()).additional.clear();
    EXPECT_FINDINGS(f.p, {"line 1 (WhileLoop): subgraph cond_fn_0: takes 2 inputs but the WhileLoop passes 1",
                          "line 1 (WhileLoop): subgraph body_fn_0: takes 2 inputs but the WhileLoop passes 1"});
  }
  SUBCASE("body returns one value per carried value, and the outputs match") {
    f.p.buffers[outs[0].index].layout.dtype = DType::int64;
    Program& body = f.p.subgraphs[loop.body_graph.index];
    body.buffers[0].layout.dtype = DType::float16;  // also the input: both condition and body now differ
    EXPECT_FINDINGS(
        f.p,
        {"line 1 (WhileLoop): subgraph body_fn_0: input 0 has dtype float16 but the WhileLoop passes float32",
         "line 1 (WhileLoop): subgraph body_fn_0: output 0 has dtype float16 but carried value 0 has dtype float32",
         "line 1 (WhileLoop): buffer buf0: is output 0 with dtype int64 but carried value 0 has dtype float32"});
    body.outputs.clear();
    loop.outputs.clear();
    EXPECT_FINDINGS(
        f.p, {"line 1 (WhileLoop): subgraph body_fn_0: input 0 has dtype float16 but the WhileLoop passes float32",
              "line 1 (WhileLoop): subgraph body_fn_0: returns 0 outputs but the WhileLoop carries 1 values",
              "line 1 (WhileLoop): has 0 outputs but carries 1 values"});
  }
}

TEST_CASE("ir/verify: findings inside subgraphs carry the subgraph's path") {
  Fixture f;
  const auto pred = f.b.input("pred", {}, DType::bool_);
  // The loop condition holds a Conditional whose true branch frees its input.
  auto condition = [](Builder& sb, std::span<const ProgramInput> ins) {
    const auto flag = boost::variant2::get<BufferId>(ins[1]);
    auto frees_its_input = [](Builder& ib, std::span<const ProgramInput> inner) {
      const auto v = boost::variant2::get<BufferId>(inner[0]);
      ib.append(FreeIfNotReused{v});
      ib.output(v);
    };
    sb.output(sb.conditional(BufferArg{flag}, {flag}, frees_its_input, return_first_input)[0]);
  };
  f.b.while_loop({f.x}, {pred}, condition, return_first_input);
  declare_shape_symbols(f.p);
  EXPECT_FINDINGS(f.p, {"cond_fn_0/true_graph_0: line 0 (FreeIfNotReused): buffer arg0_1: frees graph input 'arg0_1' "
                        "with FreeIfNotReused; only Free frees a donated input",
                        "cond_fn_0/true_graph_0: outputs: buffer arg0_1: output 0 is not live at the end of the "
                        "program: it was freed at line 0"});
}

// ---------------------------------------------------------------------------
// 12. Names
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: duplicate and invalid names") {
  Fixture f;
  f.p.kernels.push_back(KernelDecl{"arg0_1", KernelLanguage::triton, {}});
  f.p.pools.push_back(PoolDecl{"s0", cuda_device(0), f.I(64)});
  f.p.subgraphs.emplace_back("triton_0", f.p.context);
  f.p.buffers.push_back(BufferDecl{"bad name", f.layout({f.I(4)})});
  f.p.symbols.push_back(SymbolDecl{f.s0, SymbolOrigin::input});
  f.p.kernels[0].signature[0].name = "in ptr";
  f.b.comment("ok\ttabs are fine");
  f.append(Comment{"two\nlines"});
  f.append(WorkspaceAllocate{f.decl("ws", {f.I(4)}, DType::uint8, BufferRole::workspace),
                             WorkspaceZeroMode::zero_on_call, "import os"});
  f.b.extern_alloc("aten.mm.default", {f.x}, f.layout({f.s0}));
  std::get<ExternKernelAlloc>(f.p.body.back()).kernel = "aten.mm(x)";
  std::get<ExternKernelAlloc>(f.p.body.back()).kwargs.push_back(NamedArg{"out=", 1});
  EXPECT_FINDINGS(
      f.p, {"buffers: buffer 'bad name': invalid buffer name 'bad name': expected an identifier [A-Za-z_][A-Za-z0-9_]* "
            "that is not a keyword or a reserved name",
            "symbols: symbol s0: its name is already used by a symbol of this program",
            "kernels: kernel triton_0: invalid kernel parameter name 'in ptr': expected an identifier "
            "[A-Za-z_][A-Za-z0-9_]* that is not a keyword or a reserved name",
            "kernels: kernel arg0_1: its name is already used by a buffer of this program",
            "pools: pool s0: its name is already used by a symbol of this program",
            "subgraphs: subgraph triton_0: its name is already used by a kernel of this program",
            "line 2 (Comment): the text 'two\\x0alines' has a line break or control character; a comment is one line",
            "line 3 (WorkspaceAllocate): invalid workspace inner name 'import os': expected an identifier "
            "[A-Za-z_][A-Za-z0-9_]* that is not a keyword or a reserved name",
            "line 4 (ExternKernelAlloc): invalid operator name 'aten.mm(x)': expected a dotted path of identifiers "
            "such as aten.mm.default",
            "line 4 (ExternKernelAlloc): invalid keyword argument name 'out=': expected an identifier "
            "[A-Za-z_][A-Za-z0-9_]* that is not a keyword or a reserved name"});
}

// ---------------------------------------------------------------------------
// Structure: ids, roles, definitions, paths, layouts
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: ids out of range") {
  Fixture f;
  f.append(Allocate{BufferId{99}});
  f.append(KernelCall{KernelId{5}, {}, {}, LauncherGrid{}, cuda_device(0), 0});
  f.append(PoolCreate{PoolId{2}});
  f.p.inputs.emplace_back(BufferId{42});
  f.p.outputs.emplace_back(BufferArg{BufferId{43}});
  EXPECT_FINDINGS(f.p, {"inputs: buffer #42: not in this program's buffer table (1 entries)",
                        "line 1 (Allocate): buffer #99: not in this program's buffer table (1 entries)",
                        "line 2 (KernelCall): kernel #5: not in this program's kernel table (1 entries)",
                        "line 3 (PoolCreate): pool #2: not in this program's pool table (0 entries)",
                        "outputs: buffer #43: not in this program's buffer table (1 entries)"});
}

TEST_CASE("ir/verify: a buffer defined twice, or by a line its role does not allow") {
  Fixture f;
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.append(Allocate{buf0});
  f.append(Allocate{f.x});
  const auto ws = f.decl("ws0", {f.I(16)}, DType::uint8, BufferRole::workspace);
  f.append(Allocate{ws});
  const auto plain = f.decl("buf1", {f.I(16)});
  f.append(WorkspaceAllocate{plain, WorkspaceZeroMode::uninitialized, "ws_ptr"});
  f.append(CommBufferAllocate{f.decl("buf2", {f.I(16)})});
  f.append(WorkspaceFree{buf0});
  f.append(FreeIfNotReused{ws});
  EXPECT_FINDINGS(f.p, {"line 2 (Allocate): buffer buf0: defined twice: it was already defined at line 1",
                        "line 3 (Allocate): buffer arg0_1: is a graph input, which no line defines",
                        "line 4 (Allocate): buffer ws0: is a workspace, which only WorkspaceAllocate defines",
                        "line 5 (WorkspaceAllocate): buffer buf1: is not a workspace (its role is intermediate)",
                        "line 6 (CommBufferAllocate): buffer buf2: is not a comm buffer (its role is intermediate)",
                        "line 7 (WorkspaceFree): buffer buf0: is not a workspace (its role is intermediate)",
                        "line 8 (FreeIfNotReused): buffer ws0: is a workspace, which only WorkspaceFree frees"});
}

TEST_CASE("ir/verify: multi-output results are read only by MultiOutput and UnbackedSymbolDefs") {
  Fixture f;
  const auto multi = f.b.extern_alloc_multi("aten.topk.default", {f.x, std::int64_t{2}});
  const auto parts = f.b.unpack(multi, {f.layout({f.I(2)})});
  f.call(multi, parts[0]);
  f.p.outputs.emplace_back(BufferArg{multi});
  f.append(MultiOutput{f.decl("buf9", {f.I(2)}), parts[0], {KeyStep{KeyStepKind::size, 0}}});
  EXPECT_FINDINGS(
      f.p, {"line 3 (KernelCall): buffer buf0: used as a tensor, but it holds a multi-output result, which only "
            "MultiOutput and UnbackedSymbolDefs read",
            "line 3 (KernelCall): kernel triton_0: argument 0 is a uint8 buffer but parameter 'in_ptr0' is *fp32",
            "line 4 (MultiOutput): buffer buf1: is not a multi-output result, which MultiOutput reads",
            "line 4 (MultiOutput): path step 0 is a size step; only index and key steps select an element",
            "outputs: buffer buf0: is output 0 but holds a multi-output result, which is never returned"});
}

TEST_CASE("ir/verify: KernelDefinition twice, with the wrong kind of source, and bad metadata") {
  Fixture f;
  KernelMetadata meta;
  meta.num_warps = 0;
  meta.constants.push_back(NamedArg{"XBLOCK", 1024});
  f.append(KernelDefinition{f.k, BinaryRef{"k.cubin", "triton_0"}, meta});
  EXPECT_FINDINGS(f.p, {"line 1 (KernelDefinition): kernel triton_0: defined twice: it was already defined at line 0",
                        "line 1 (KernelDefinition): kernel triton_0: is a triton kernel, but its definition gives a "
                        "binary instead of source text",
                        "line 1 (KernelDefinition): num_warps 0 is not positive"});
}

TEST_CASE("ir/verify: DynamicScalar and UnbackedSymbolDefs paths") {
  Fixture f;
  const auto u0 = f.b.unbacked_symbol("u0");
  const auto u1 = f.b.unbacked_symbol("u1");
  const auto u2 = f.b.unbacked_symbol("u2");
  const auto scalar = f.b.extern_alloc("aten.sum.default", {f.x}, f.layout({}, DType::int64));
  f.b.dynamic_scalar(u0, scalar, {KeyStep{KeyStepKind::divide_by, 0}});
  f.b.dynamic_scalar(u1, scalar, {KeyStep{KeyStepKind::convert_to_int}, KeyStep{KeyStepKind::convert_to_int}});
  f.b.dynamic_scalar(u2, f.x, {KeyStep{KeyStepKind::convert_to_int}});
  f.append(UnbackedSymbolDefs{scalar, {SymbolBinding{f.b.unbacked_symbol("u3"), {KeyStep{KeyStepKind::stride, -1}}}}});
  EXPECT_FINDINGS(f.p,
                  {"line 2 (DynamicScalar): the path must be empty, one convert_to_int step or one divide_by step with "
                   "a positive divisor",
                   "line 3 (DynamicScalar): the path must be empty, one convert_to_int step or one divide_by step with "
                   "a positive divisor",
                   "line 5 (UnbackedSymbolDefs): the path of binding 0: step 0 (stride) has the negative value -1"});
}

TEST_CASE("ir/verify: layouts of buffer declarations are validated") {
  Fixture f;
  f.p.buffers.push_back(BufferDecl{"buf0", Layout{{f.s0}, {}, f.I(0), DType::float32, cuda_device(0)}});
  f.p.buffers.push_back(BufferDecl{"buf1", Layout{{f.I(-1)}, {f.I(1)}, f.I(0), DType::float32, cuda_device(0)}});
  f.p.buffers.push_back(BufferDecl{"buf2", Layout{{f.s0}, {f.I(1)}, Expr{}, DType::float32, cuda_device(0)}});
  f.append(Allocate{BufferId{1}});
  EXPECT_FINDINGS(f.p, {"buffers: buffer buf0: invalid layout: layout has 1 sizes but 0 strides",
                        "buffers: buffer buf1: invalid layout: layout size 0 is negative",
                        "buffers: buffer buf2: invalid layout: layout storage offset is a null expression"});
}

// ---------------------------------------------------------------------------
// Malformed programs: findings, never undefined behaviour
// ---------------------------------------------------------------------------

TEST_CASE("ir/verify: null expressions, expressions of another context and bad enumerators are findings") {
  Fixture f;
  expr::Context other;
  const Expr foreign = other.symbol("s0");
  const auto buf0 = f.b.empty({f.s0}, DType::float32);
  f.b.call(f.k, {f.x, buf0, Expr{}});
  f.b.call(f.k, {f.x, buf0, foreign}, {.grid = ExplicitGrid{f.I(1), Expr{}, f.I(1)}});
  f.append(WorkspaceAllocate{f.decl("ws", {f.I(8)}, DType::uint8, BufferRole::workspace),
                             static_cast<WorkspaceZeroMode>(9), "ws_ptr"});
  f.append(EnterDeviceContext{wrapir::Device{static_cast<wrapir::DeviceType>(42), 0}});
  f.append(ExitDeviceContext{});
  f.append(DynamicScalar{f.s0, buf0, {KeyStep{static_cast<KeyStepKind>(77), 0}}});
  f.p.kernels[0].signature[2].type.dtype = static_cast<DType>(200);
  EXPECT_FINDINGS(
      f.p, {"kernels: kernel triton_0: parameter 'xnumel' has dtype 200, which is not a DType",
            "line 2 (KernelCall): argument 2 is a null expression",
            "line 2 (KernelCall): kernel triton_0: argument type 2 is i32 but parameter 'xnumel' is <invalid dtype>",
            "line 3 (KernelCall): argument 2 belongs to another expression context than the program's",
            "line 3 (KernelCall): kernel triton_0: argument type 2 is i32 but parameter 'xnumel' is <invalid dtype>",
            "line 3 (KernelCall): grid y is a null expression",
            "line 4 (WorkspaceAllocate): zero mode 9 is not a WorkspaceZeroMode",
            "line 5 (EnterDeviceContext): device: device type 42 is not a DeviceType",
            "line 7 (DynamicScalar): the path must be empty, one convert_to_int step or one divide_by step with a "
            "positive divisor",
            "line 7 (DynamicScalar): symbol s0: defined by this line, but its origin is input, not unbacked"});
}

TEST_CASE("ir/verify: a valueless line, a program without a context and deep argument lists") {
  SUBCASE("valueless line") {
    Fixture f;
    f.append(Null{});
    struct Throws {
      operator Comment() const { throw 1; }  // NOLINT: implicit on purpose
    };
    Line& line = f.p.body.back();
    CHECK_THROWS(line.emplace<Comment>(Throws{}));
    REQUIRE(line.valueless_by_exception());
    EXPECT_FINDINGS(f.p, {"line 1 (<valueless>): the line holds no line kind (an exception left it valueless)"});
  }
  SUBCASE("subgraph with another context, root without one") {
    Fixture f;
    f.p.subgraphs.emplace_back("branch");  // a fresh context
    EXPECT_FINDINGS(f.p, {"branch: program: the subgraph's expression context is not the root program's"});
    Program moved_from{"graph"};
    Program taken = std::move(moved_from);
    (void)taken;
    moved_from.context.reset();
    moved_from.name = "graph";
    EXPECT_FINDINGS(moved_from, {"program: the program has no expression context"});
  }
  SUBCASE("nested lists") {
    Fixture f;
    Arg deep = std::int64_t{1};
    for (int i = 0; i < 100; ++i) deep = ArgList{{deep}};
    f.append(ExternKernelAlloc{std::nullopt, "aten.foo.default", {deep}, {}});
    EXPECT_FINDINGS(f.p, {"line 1 (ExternKernelAlloc): argument 0 nests lists more than 64 deep"});
  }
}

namespace {

/// Corrupts one field at a time, of any type a line or table holds: ids out
/// of range, null and foreign expressions, enumerators outside their
/// enumeration, emptied lists, text with line breaks, other argument kinds.
class Corrupter {
 public:
  Corrupter(Program& p, expr::Context& foreign, std::uint64_t seed) : p_(p), foreign_(foreign), rng_(seed) {}

  std::uint64_t next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

  template <class T>
  void corrupt(T& field) {
    using U = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<U, BufferId> || std::is_same_v<U, KernelId> || std::is_same_v<U, PoolId> ||
                  std::is_same_v<U, GraphId>) {
      constexpr std::uint32_t ids[] = {0, 1, 2, 5, 1000, 0xffffffffu};
      field.index = ids[below(std::size(ids))];
    } else if constexpr (std::is_same_v<U, Expr>) {
      switch (below(4)) {
        case 0: field = Expr{}; break;
        case 1: field = foreign_.symbol("s0"); break;
        case 2: field = p_.ctx().symbol("undeclared"); break;
        default: field = p_.ctx().integer(-5); break;
      }
    } else if constexpr (std::is_same_v<U, bool>) {
      field = !field;
    } else if constexpr (std::is_enum_v<U>) {
      field = static_cast<U>(next() & 0xff);
    } else if constexpr (std::is_integral_v<U>) {
      field = static_cast<U>(next());
    } else if constexpr (std::is_same_v<U, std::string>) {
      field = below(2) ? std::string("a\nb") : std::string();
    } else if constexpr (std::is_same_v<U, Name> || std::is_same_v<U, OpName>) {
      field.text = below(2) ? "x; import os" : "";
    } else if constexpr (std::is_same_v<U, wrapir::Device>) {
      field.type = static_cast<wrapir::DeviceType>(next() & 0xff);
      field.index = static_cast<int>(next() % 1000) - 500;
    } else if constexpr (std::is_same_v<U, Arg>) {
      switch (below(6)) {
        case 0: field = Arg{BufferId{static_cast<std::uint32_t>(below(4))}}; break;
        case 1: field = Arg{Expr{}}; break;
        case 2: field = Arg{"text"}; break;
        case 3: field = Arg{BufferArg{BufferId{0}, View{{Expr{}}, {}, Expr{}}}}; break;
        case 4: field = Arg{ArgList{{Arg{BufferId{7}}, Arg{foreign_.integer(1)}}}}; break;
        default: field = Arg{DType(static_cast<DType>(250))}; break;
      }
    } else if constexpr (std::is_same_v<U, BufferArg>) {
      if (below(2))
        corrupt(field.buffer);
      else
        field.view = View{{p_.ctx().integer(1)}, {Expr{}, Expr{}}, foreign_.integer(0)};
    } else if constexpr (std::is_same_v<U, LaunchGrid>) {
      field = below(2) ? LaunchGrid{ExplicitGrid{Expr{}, foreign_.integer(1), p_.ctx().symbol("undeclared")}}
                       : LaunchGrid{TypedGrid{static_cast<GridType>(200), {NamedExpr{"bad name", Expr{}}}, {}}};
    } else if constexpr (std::is_same_v<U, KernelSource>) {
      field = below(2) ? KernelSource{BinaryRef{"x", "y"}} : KernelSource{SourceText{"z"}};
    } else if constexpr (std::is_same_v<U, wrapir::ir::Box<KernelMetadata>>) {
      corrupt(*field);
    } else if constexpr (std::is_same_v<U, KernelMetadata>) {
      field.num_warps = -1;
      field.grid_type = static_cast<GridType>(99);
      field.constants.push_back(NamedArg{"", Arg{Expr{}}});
    } else if constexpr (std::is_same_v<U, KeyStep>) {
      field.kind = static_cast<KeyStepKind>(next() & 0xff);
      field.value = static_cast<std::int64_t>(next());
    } else if constexpr (std::is_same_v<U, SymbolBinding>) {
      if (below(2))
        corrupt(field.symbol);
      else
        corrupt(field.path);
    } else if constexpr (std::is_same_v<U, NamedArg> || std::is_same_v<U, NamedBuffer>) {
      field.name.text = "not a name";
    } else if constexpr (std::is_same_v<U, ArgSlice>) {
      field.start = static_cast<std::int64_t>(next() % 7) - 3;
      field.stop = static_cast<std::int64_t>(next() % 7) - 3;
    } else if constexpr (std::is_same_v<U, ParamType>) {
      field.dtype = static_cast<DType>(next() & 0xff);
      field.pointer = !field.pointer;
    } else if constexpr (requires {
                           field.empty();
                           field.clear();
                           field[0];
                         }) {  // vectors
      if (field.empty() || below(3) == 0) {
        field.clear();
      } else {
        corrupt(field[below(field.size())]);
      }
    } else if constexpr (requires {
                           field.reset();
                           *field;
                         }) {  // optionals
      if (field && below(2))
        corrupt(*field);
      else
        field.reset();
    }
  }

  /// Corrupts one field of one line, or one table entry.
  void corrupt_program() {
    const std::size_t choice = below(10);
    if (choice < 7 && !p_.body.empty()) {
      Line& line = p_.body[below(p_.body.size())];
      std::visit(
          [&](auto& l) {
            std::size_t fields = 0;
            for_each_field(l, [&](std::string_view, auto&) { ++fields; });
            const std::size_t target = below(fields);
            std::size_t i = 0;
            for_each_field(l, [&](std::string_view, auto& field) {
              if (i++ == target) corrupt(field);
            });
          },
          line);
      return;
    }
    if (choice == 7 && !p_.buffers.empty()) {
      BufferDecl& d = p_.buffers[below(p_.buffers.size())];
      switch (below(6)) {
        case 0: corrupt(d.role); break;
        case 1: corrupt(d.layout.dtype); break;
        case 2: corrupt(d.layout.device); break;
        case 3: corrupt(d.layout.sizes); break;
        case 4: corrupt(d.layout.storage_offset); break;
        default: d.multi_output = !d.multi_output; break;
      }
      return;
    }
    if (choice == 8 && !p_.symbols.empty()) {
      SymbolDecl& s = p_.symbols[below(p_.symbols.size())];
      switch (below(4)) {
        case 0: corrupt(s.symbol); break;
        case 1: corrupt(s.origin); break;
        case 2: corrupt(s.source); break;
        default: corrupt(s.path); break;
      }
      return;
    }
    if (!p_.inputs.empty()) {
      ProgramInput& in = p_.inputs[below(p_.inputs.size())];
      if (BufferId* b = boost::variant2::get_if<BufferId>(&in))
        corrupt(*b);
      else
        corrupt(boost::variant2::get<Expr>(in));
    }
    if (!p_.outputs.empty()) p_.outputs[below(p_.outputs.size())] = BufferArg{BufferId{0xffffffffu}};
  }

 private:
  Program& p_;
  expr::Context& foreign_;
  std::uint64_t rng_;
};

}  // namespace

TEST_CASE("ir/verify: corrupted programs give findings and never undefined behaviour") {
  // Run under the sanitizers (asan-ubsan preset) this is the check that
  // malformed programs are findings, not crashes.
  const Program clean = program_with_every_line_kind();
  expr::Context foreign;
  std::size_t with_findings = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    Program p = clean;
    Corrupter corrupter(p, foreign, seed * 0x9e3779b97f4a7c15ULL);
    const std::size_t edits = 1 + corrupter.below(4);
    for (std::size_t i = 0; i < edits; ++i) corrupter.corrupt_program();
    std::vector<Finding> found;
    CHECK_NOTHROW(found = verify(p));
    for (const Finding& f : found) {
      const std::string text = to_string(f);
      CHECK(text.find('\n') == std::string::npos);
      CHECK(!f.message.empty());
    }
    if (!found.empty()) ++with_findings;
  }
  // Most corruptions are caught (a flipped flag such as non_blocking is not
  // a mistake).
  CHECK(with_findings > 300);
}

// ---------------------------------------------------------------------------
// Kernel metadata (triton_meta, inductor_meta, const parameters) and provenance
// ---------------------------------------------------------------------------

namespace {

/// The metadata Inductor records for `triton_1(in_ptr0, in_out_ptr0, xnumel, XBLOCK)`.
KernelMetadata recorded_triton_metadata() {
  KernelMetadata m;
  m.grid_type = GridType::grid_1d;
  m.triton_meta = TritonMeta{cuda_device(0), 90, 32, {"XBLOCK"}, {ParamAttribute{"in_ptr0", "tt.divisibility", 16}},
                             false};
  m.inductor_meta = InductorMeta{"triton_1", {"in_out_ptr0"}, {AutotuneHint::one_element_per_thread}, 2, 1, 0,
                                 "91D1D1166449D9E2"};
  return m;
}

}  // namespace

TEST_CASE("ir/verify: the kernel metadata Inductor records is accepted") {
  Fixture f;
  f.b.triton_kernel("triton_1", "src", "in_ptr0: *fp32, in_out_ptr0: *fp32, xnumel: i32", recorded_triton_metadata());
  KernelMetadata cpp;
  cpp.const_params = {"in_ptr0", "ks0"};
  f.b.kernel("cpp_fused_0", KernelLanguage::cpp, SourceText{"src"}, "in_ptr0: *float32, out_ptr0: *float32, ks0: int64",
             cpp);
  EXPECT_FINDINGS(f.p, {});
}

TEST_CASE("ir/verify: kernel metadata naming what the kernel does not have is refused") {
  Fixture f;
  KernelMetadata m = recorded_triton_metadata();
  m.triton_meta->warp_size = 48;
  m.triton_meta->compute_capability = 0;
  m.triton_meta->constexprs = {"XBLOCK", "xnumel", "XBLOCK"};
  m.triton_meta->attributes = {ParamAttribute{"nope", "tt.divisibility", 16},
                               ParamAttribute{"in_ptr0", "tt.divisibility", 12},
                               ParamAttribute{"in_ptr0", "tt divisibility;", 16}};
  m.inductor_meta->kernel_name = Name{"triton_9"};
  m.inductor_meta->mutated_arg_names = {"xnumel", "out_ptr9"};
  m.inductor_meta->autotune_hints = {AutotuneHint::one_element_per_thread, AutotuneHint::one_element_per_thread,
                                     static_cast<AutotuneHint>(7)};
  m.inductor_meta->num_load = -1;
  m.inductor_meta->backend_hash = "a\nb";
  m.const_params = {"in_ptr0"};
  f.b.triton_kernel("triton_1", "src", "in_ptr0: *fp32, in_out_ptr0: *fp32, xnumel: i32", m);
  const std::string k = "line 1 (KernelDefinition): kernel triton_1: ";
  EXPECT_FINDINGS(
      f.p, {k + "triton_meta compute_capability 0 is not positive",
            k + "triton_meta warp_size 48 is not a positive power of two",
            k + "constexpr parameter 'xnumel' is also a runtime parameter of its signature",
            k + "constexpr parameter 'XBLOCK' is listed twice",
            k + "triton_meta attribute 0 is about 'nope', which is neither a parameter of its signature nor a constexpr",
            k + "triton_meta attribute 1: a divisibility of 12 is not a positive power of two",
            k + "triton_meta attribute 2 has the name 'tt divisibility;': expected a dotted name such as tt.divisibility",
            k + "its inductor_meta names it 'triton_9'",
            k + "mutated argument 'xnumel' is a scalar i32, not a pointer the kernel could write through",
            k + "mutated argument 'out_ptr9' is not a parameter of its signature",
            k + "autotune hint ONE_ELEMENT_PER_THREAD is listed twice",
            k + "autotune hint 7 is not an AutotuneHint",
            k + "inductor_meta num_load -1 is negative",
            k + "inductor_meta backend_hash 'a\\x0ab' is not one line of text",
            k + "is a triton kernel, but its metadata declares const parameters, which only C++ definitions have"});
}

TEST_CASE("ir/verify: C++ const parameters name parameters, and a C++ kernel has no triton_meta") {
  Fixture f;
  KernelMetadata m;
  m.const_params = {"in_ptr0", "in_ptr1", "in_ptr0"};
  m.triton_meta = TritonMeta{};
  f.b.kernel("cpp_fused_0", KernelLanguage::cpp, SourceText{"src"}, "in_ptr0: *float32, out_ptr0: *float32", m);
  const std::string k = "line 1 (KernelDefinition): kernel cpp_fused_0: ";
  EXPECT_FINDINGS(f.p, {k + "is a cpp kernel, but its metadata has a triton_meta",
                        k + "const parameter 'in_ptr1' is not a parameter of its signature",
                        k + "const parameter 'in_ptr0' is listed twice"});
}

TEST_CASE("ir/verify: provenance entries are one line of text") {
  Fixture f;
  const auto out = f.b.empty({f.s0}, DType::float32);
  f.call(f.x, out);
  auto& call = std::get<KernelCall>(f.p.body.back());
  call.provenance = Provenance{{"add", ""}, {"aten.add\nimport os"}, std::string("relu")};
  f.b.output(out);
  EXPECT_FINDINGS(f.p, {"line 2 (KernelCall): provenance source node 1 '' is not one line of text (empty, or with a "
                        "line break or control character)",
                        "line 2 (KernelCall): provenance ATen operator 0 'aten.add\\x0aimport os' is not one line of "
                        "text (empty, or with a line break or control character)"});
}
