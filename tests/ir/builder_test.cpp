// Tests of include/wrapir/ir/builder.hpp: what each builder call appends,
// fresh names, and the mistakes it refuses at the call that made them.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/verify.hpp>

#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

using namespace wrapir::ir;
using wrapir::Builder;
using wrapir::Program;

namespace {

std::vector<std::string_view> kinds(const Program& p) {
  std::vector<std::string_view> out;
  for (const auto& l : p.body) out.push_back(kind_name(l));
  return out;
}

constexpr const char* add_signature = "in_ptr0: *fp32, in_ptr1: *fp32, out_ptr0: *fp32, xnumel: i32";

}  // namespace

TEST_CASE("ir/builder: allocate, launch and free in a few calls") {
  Program p{"add"};
  Builder b{p};
  auto n = b.size_symbol("s0", 1024);
  auto x = b.input("arg0_1", {n}, wrapir::f32);
  auto y = b.input("arg1_1", {n}, wrapir::f32, wrapir::cuda_device(0));
  auto k = b.triton_kernel("triton_poi_add_0", "@triton.jit\ndef k(): pass", add_signature,
                           KernelMetadata{.num_warps = 4, .grid_type = GridType::grid_1d, .block = {{"XBLOCK", 1024}}});
  auto out = b.empty({n}, wrapir::f32);
  auto tmp = b.empty({n}, wrapir::f32);
  b.call(k, {x, y, tmp, n}, {.free_after = {}});
  b.call(k, {tmp, y, out, n}, {.free_after = {tmp}});
  b.output(out);

  CHECK(kinds(p) == std::vector<std::string_view>{"KernelDefinition", "Allocate", "Allocate", "KernelCall",
                                                  "KernelCall", "FreeIfNotReused"});
  CHECK(p.buffer(out).name == "buf0");
  CHECK(p.buffer(tmp).name == "buf1");
  CHECK(p.buffer(out).role == BufferRole::output);
  CHECK(p.buffer(tmp).role == BufferRole::intermediate);
  CHECK(p.inputs.size() == 3);
  CHECK(boost::variant2::get<wrapir::expr::Expr>(p.inputs[0]) == n);
  REQUIRE(p.symbols.size() == 1);
  CHECK(p.symbols[0].hint == 1024);
  CHECK(p.symbols[0].origin == SymbolOrigin::input);

  const auto& call = std::get<KernelCall>(p.body[3]);
  CHECK(call.kernel == k);
  CHECK(call.args.size() == 4);
  CHECK(call.arg_types == std::vector<ParamType>{{true, wrapir::f32}, {true, wrapir::f32}, {true, wrapir::f32},
                                                 {false, wrapir::i32}});
  CHECK(call.device == wrapir::cuda_device(0));
  CHECK(std::holds_alternative<KernelDefinition>(p.body[0]));
  CHECK(std::get<KernelDefinition>(p.body[0]).metadata->block[0].value == 1024);
}

TEST_CASE("ir/builder: fresh names skip names already in the program") {
  Program p;
  Builder b{p};
  b.declare("buf0", Layout::contiguous(p.ctx(), {p.ctx().integer(4)}, wrapir::f32, wrapir::cuda_device(0)),
            BufferRole::constant);
  auto a = b.empty({p.ctx().integer(4)}, wrapir::f32);
  auto c = b.empty({p.ctx().integer(4)}, wrapir::f32);
  CHECK(p.buffer(a).name == "buf1");
  CHECK(p.buffer(c).name == "buf2");
  // A second builder on the same program continues without collisions.
  Builder again{p};
  CHECK(p.buffer(again.empty({p.ctx().integer(1)}, wrapir::f32)).name == "buf3");
  CHECK(b.fresh_name("workspace_") == "workspace_0");
}

TEST_CASE("ir/builder: free picks the line the buffer's role needs") {
  Program p;
  Builder b{p};
  auto four = p.ctx().integer(4);
  auto in = b.input("arg0_1", Layout::contiguous(p.ctx(), {four}, wrapir::f32, wrapir::cuda_device(0)), true);
  auto ws = b.workspace(p.ctx().integer(1024), WorkspaceZeroMode::zero_on_call);
  auto comm = b.comm_buffer({four}, wrapir::f32, "0");
  auto tmp = b.empty({four}, wrapir::f32);
  b.free({in, ws, comm, tmp});
  CHECK(kinds(p) == std::vector<std::string_view>{"WorkspaceAllocate", "CommBufferAllocate", "Allocate", "Free",
                                                  "WorkspaceFree", "CommBufferFree", "FreeIfNotReused"});
  CHECK(p.buffer(in).donated);
  CHECK(p.buffer(ws).name == "workspace_0");
  CHECK(p.buffer(ws).layout.dtype == wrapir::u8);
  CHECK(p.buffer(comm).comm->group == "0");
  CHECK(std::get<WorkspaceAllocate>(p.body[0]).inner_name == Name{"ws_ptr"});
}

TEST_CASE("ir/builder: workspace requests of a call are allocated before it and freed after it") {
  Program p;
  Builder b{p};
  auto& ctx = p.ctx();
  auto x = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
  auto k = b.triton_kernel("triton_red_0", "pass", "in_ptr0: *fp32, ws_ptr: *u8, sem_ptr: *u8");
  b.call(k, {x}, {.workspaces = {{ctx.integer(256), WorkspaceZeroMode::zero_on_call},
                                 {ctx.integer(8), WorkspaceZeroMode::uninitialized, Name{"sem_ptr"}}}});
  CHECK(kinds(p) == std::vector<std::string_view>{"KernelDefinition", "WorkspaceAllocate", "WorkspaceAllocate",
                                                  "KernelCall", "WorkspaceFree", "WorkspaceFree"});
  const auto& call = std::get<KernelCall>(p.body[3]);
  REQUIRE(call.args.size() == 3);
  CHECK(call.args[1] == Arg{BufferId{1}});
  CHECK(call.args[2] == Arg{BufferId{2}});
  CHECK(std::get<WorkspaceFree>(p.body[4]).workspace == BufferId{2});  // reverse order
  CHECK(std::get<WorkspaceFree>(p.body[5]).workspace == BufferId{1});
  CHECK(verify(p).empty());

  // Too many or too few arguments counting the workspaces, or two requests
  // for one parameter of a plain kernel, are refused.
  CHECK_THROWS_WITH_AS(b.call(k, {x, x}, {.workspaces = {{ctx.integer(1)}, {ctx.integer(1), {}, Name{"sem_ptr"}}}}),
                       doctest::Contains("2 arguments and 2 workspaces for a signature of 3 parameters"), BuildError);
  CHECK_THROWS_WITH_AS(b.call(k, {x}, {.workspaces = {{ctx.integer(1)}, {ctx.integer(2)}}}),
                       doctest::Contains("two requests for the parameter 'ws_ptr'"), BuildError);
}

TEST_CASE("ir/builder: zero_per_graph workspaces are shared, grown to the largest request and never freed") {
  Program p;
  Builder b{p};
  auto& ctx = p.ctx();
  auto s0 = b.size_symbol("s0", 16);
  auto x = b.input("arg0_1", {s0}, wrapir::f32);
  auto k = b.triton_kernel("triton_red_0", "pass", "in_ptr0: *fp32, sem_ptr: *u8");
  const WorkspaceRequest sem{ctx.integer(64), WorkspaceZeroMode::zero_per_graph, Name{"sem_ptr"}};
  b.call(k, {x}, {.workspaces = {sem}});
  b.call(k, {x}, {.workspaces = {{s0 * ctx.integer(4), WorkspaceZeroMode::zero_per_graph, Name{"sem_ptr"}}}});
  CHECK(kinds(p) == std::vector<std::string_view>{"KernelDefinition", "WorkspaceAllocate", "KernelCall", "KernelCall"});
  REQUIRE(p.buffers.size() == 2);
  CHECK(p.buffers[1].layout.sizes.front() == wrapir::expr::max(ctx.integer(64), s0 * ctx.integer(4)));
  CHECK(std::get<KernelCall>(p.body[2]).args[1] == std::get<KernelCall>(p.body[3]).args[1]);
  // Another dtype is another workspace.
  auto other = b.workspace(ctx.integer(8), WorkspaceZeroMode::zero_per_graph, Name{"sem_ptr"}, wrapir::i32);
  CHECK(other != BufferId{1});
  CHECK(verify(p).empty());
}

TEST_CASE("ir/builder: a multi-kernel call merges its candidates' workspaces by inner name") {
  Program p;
  Builder b{p};
  auto& ctx = p.ctx();
  auto x = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
  auto k0 = b.triton_kernel("triton_red_0", "pass", "in_ptr0: *fp32, ws_ptr: *u8");
  auto k1 = b.triton_kernel("triton_red_1", "pass", "in_ptr0: *fp32, ws_ptr: *u8");
  auto mk = b.multi_kernel({k0, k1});
  b.call_multi(mk, {x}, {.workspaces = {{ctx.integer(128), WorkspaceZeroMode::uninitialized},
                                        {ctx.integer(512), WorkspaceZeroMode::zero_on_call}}});
  CHECK(kinds(p) == std::vector<std::string_view>{"KernelDefinition", "KernelDefinition", "MultiKernelDefinition",
                                                  "WorkspaceAllocate", "MultiKernelCall", "WorkspaceFree"});
  const auto& ws = std::get<WorkspaceAllocate>(p.body[3]);
  CHECK(ws.zero_mode == WorkspaceZeroMode::zero_on_call);
  CHECK(p.buffer(ws.workspace).layout.sizes.front() == ctx.integer(512));
  CHECK(std::get<MultiKernelCall>(p.body[4]).args.size() == 2);
  CHECK(verify(p).empty());

  CHECK_THROWS_WITH_AS(b.call_multi(mk, {x}, {.workspaces = {{ctx.integer(1), WorkspaceZeroMode::zero_on_call},
                                                             {ctx.integer(1), WorkspaceZeroMode::zero_per_graph}}}),
                       doctest::Contains("want zero modes ZERO_ON_CALL and ZERO_PER_GRAPH, which do not combine"),
                       BuildError);
  CHECK(combine(WorkspaceZeroMode::uninitialized, WorkspaceZeroMode::zero_per_graph) ==
        WorkspaceZeroMode::zero_per_graph);
  CHECK(!combine(WorkspaceZeroMode::zero_per_graph, WorkspaceZeroMode::zero_on_call));
}

TEST_CASE("ir/builder: views, extern calls, unpacking and dynamic scalars") {
  Program p;
  Builder b{p};
  auto& ctx = p.ctx();
  auto a = b.input("arg0_1", {ctx.integer(8), ctx.integer(8)}, wrapir::f32);
  auto v = b.view(a, {ctx.integer(8)}, {ctx.integer(9)}, ctx.integer(0));  // the diagonal
  CHECK(p.buffer(v).layout.strides[0] == ctx.integer(9));
  auto mm = b.extern_alloc("aten.mm.default", {a, a},
                           Layout::contiguous(ctx, {ctx.integer(8), ctx.integer(8)}, wrapir::f32, wrapir::cuda_device(0)));
  auto out = b.empty({ctx.integer(8), ctx.integer(8)}, wrapir::f32);
  b.extern_out("extern_kernels.mm", {a, mm}, BufferArg{out});
  auto topk = b.extern_alloc_multi("aten.topk.default", {a, 2});
  CHECK(p.buffer(topk).multi_output);
  auto parts = b.unpack(topk, {Layout::contiguous(ctx, {ctx.integer(2)}, wrapir::f32, wrapir::cuda_device(0)),
                               Layout::contiguous(ctx, {ctx.integer(2)}, wrapir::i64, wrapir::cuda_device(0))});
  REQUIRE(parts.size() == 2);
  auto u0 = b.unbacked_symbol("u0");
  b.dynamic_scalar(u0, parts[1], {KeyStep{KeyStepKind::divide_by, 4}});
  CHECK(kinds(p) == std::vector<std::string_view>{"Reinterpret", "ExternKernelAlloc", "Allocate", "ExternKernelOut",
                                                  "ExternKernelAlloc", "MultiOutput", "MultiOutput", "DynamicScalar"});
  CHECK(std::get<MultiOutput>(p.body[6]).path == KeyPath{KeyStep{KeyStepKind::index, 1}});
  CHECK(u0.unbacked());
}

TEST_CASE("ir/builder: a conditional with its subgraphs in one call") {
  Program p{"cond"};
  Builder b{p};
  auto& ctx = p.ctx();
  auto s0 = b.size_symbol("s0");
  auto x = b.input("arg0_1", {s0}, wrapir::f32);
  auto k = b.triton_kernel("triton_neg_0", "src", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  auto outs = b.conditional(
      wrapir::expr::gt(s0, ctx.integer(4)), {x, s0},
      [&](Builder& t, std::span<const ProgramInput> in) {
        auto xin = boost::variant2::get<BufferId>(in[0]);
        auto n = boost::variant2::get<wrapir::expr::Expr>(in[1]);
        auto kk = t.triton_kernel("triton_neg_1", "src", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
        auto r = t.empty({n}, wrapir::f32);
        t.call(kk, {xin, r, n});
        t.output(r);
      },
      [&](Builder& f, std::span<const ProgramInput> in) { f.output(boost::variant2::get<BufferId>(in[0])); });
  (void)k;
  REQUIRE(outs.size() == 1);
  REQUIRE(p.subgraphs.size() == 2);
  CHECK(p.subgraphs[0].name == "true_graph_0");
  CHECK(p.subgraphs[1].name == "false_graph_0");
  CHECK(p.subgraphs[0].context == p.context);
  CHECK(p.subgraphs[0].inputs.size() == 2);
  CHECK(p.subgraphs[0].buffers[0].name == "arg0_1");
  CHECK(p.subgraphs[0].symbols[0].symbol == s0);
  const auto& c = std::get<Conditional>(p.body.back());
  CHECK(c.true_graph == GraphId{0});
  CHECK(c.outputs == outs);
  CHECK(p.buffer(outs[0]).layout.sizes[0] == s0);

  auto loop = b.while_loop(
      {x}, {}, [&](Builder& c2, std::span<const ProgramInput> in) { c2.output(boost::variant2::get<BufferId>(in[0])); },
      [&](Builder& body, std::span<const ProgramInput> in) { body.output(boost::variant2::get<BufferId>(in[0])); });
  CHECK(loop.size() == 1);
  CHECK(p.subgraphs[2].name == "cond_fn_0");
  CHECK(p.subgraphs[3].name == "body_fn_0");
}

TEST_CASE("ir/builder: mistakes are refused where they are made") {
  Program p;
  Builder b{p};
  auto& ctx = p.ctx();
  CHECK_THROWS_WITH_AS(b.input("x; import os", {ctx.integer(1)}, wrapir::f32),
                       doctest::Contains("invalid buffer name 'x; import os'"), BuildError);
  CHECK_THROWS_WITH_AS(b.size_symbol("__import__('os')"), doctest::Contains("invalid symbol name"), BuildError);
  auto x = b.input("arg0_1", {ctx.integer(1)}, wrapir::f32);
  CHECK_THROWS_WITH_AS(b.input("arg0_1", {ctx.integer(1)}, wrapir::f32), doctest::Contains("already used"),
                       BuildError);
  auto k = b.triton_kernel("k0", "src", "in_ptr0: *fp32");
  CHECK_THROWS_WITH_AS(b.call(k, {x, 1}), doctest::Contains("2 arguments for a signature of 1 parameters"),
                       BuildError);
  CHECK_THROWS_WITH_AS(b.call(KernelId{9}, {x}), doctest::Contains("kernel id 9 is not in program"), BuildError);
  CHECK_THROWS_WITH_AS(b.triton_kernel("k1", "src", "a: fp33"), doctest::Contains("unknown parameter type"),
                       BuildError);
  CHECK_THROWS_WITH_AS(b.extern_out("os.system('rm')", {}, BufferArg{x}), doctest::Contains("invalid operator name"),
                       BuildError);
  CHECK_THROWS_WITH_AS(b.comment("two\nlines"), doctest::Contains("line break"), BuildError);
  wrapir::expr::Context other;
  CHECK_THROWS_WITH_AS(b.empty({other.integer(3)}, wrapir::f32), doctest::Contains("another context"), BuildError);
  CHECK_THROWS_WITH_AS(b.multi_kernel({k}), doctest::Contains("at least two"), BuildError);
  CHECK_THROWS_AS(b.free({BufferId{42}}), BuildError);
}

TEST_CASE("ir/builder: subgraphs declare the symbols of their inputs' shapes and verify clean") {
  Program p{"cond_shapes"};
  Builder b{p};
  auto s0 = b.size_symbol("s0", 8);
  auto s1 = b.size_symbol("s1", 4);
  auto x = b.input("arg0_1", {s0, s1}, wrapir::f32);
  auto pred = b.input("arg1_1", {}, wrapir::DType::bool_);
  auto outs = b.conditional(
      pred, {x},
      [](Builder& t, std::span<const ProgramInput> in) {
        const auto xin = boost::variant2::get<BufferId>(in[0]);
        const auto& l = t.program().buffer(xin).layout;
        auto r = t.empty(l.sizes, wrapir::f32);
        t.extern_out("aten.neg.out", {xin}, BufferArg{r});
        t.output(r);
      },
      [](Builder& f, std::span<const ProgramInput> in) {
        const auto xin = boost::variant2::get<BufferId>(in[0]);
        auto r = f.empty(f.program().buffer(xin).layout.sizes, wrapir::f32);
        f.extern_out("aten.abs.out", {xin}, BufferArg{r});
        f.output(r);
      });
  b.output(outs[0]);
  const Program& t = p.subgraphs[0];
  REQUIRE(t.symbols.size() == 2);
  CHECK(t.symbols[0].symbol == s0);
  CHECK(t.symbols[0].origin == SymbolOrigin::input_shape);
  CHECK(t.symbols[0].path == KeyPath{KeyStep{KeyStepKind::size, 0}});
  CHECK(t.symbols[1].symbol == s1);
  const auto findings = wrapir::verify(p);
  for (const auto& f : findings) FAIL_CHECK(to_string(f));
  CHECK(findings.empty());

  // A symbol inside a larger expression cannot be read from the input.
  auto y = b.input("arg2_1", {s0 * s1}, wrapir::f32);
  CHECK_THROWS_WITH_AS(b.conditional(pred, {y}, [](Builder&, std::span<const ProgramInput>) {},
                                     [](Builder&, std::span<const ProgramInput>) {}),
                       doctest::Contains("pass it as an operand"), BuildError);
}
