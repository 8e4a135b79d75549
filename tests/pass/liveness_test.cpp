// Tests of include/wrapir/pass/liveness.hpp: storage blocks and their
// lifetimes on hand-built programs (views, reuse, multi-output tuples,
// workspaces, comm buffers, outputs, frees), the trace's sizes at hints and
// the fallback, and the diagnostics for malformed programs.

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/trace.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace wrapir::ir;
using wrapir::cuda_device;
using wrapir::expr::Expr;
namespace pass = wrapir::pass;

/// Kernel `k` reads one float32 buffer and writes another.
struct Fixture {
  Program p{"graph"};
  Builder b{p};
  Expr s0 = b.size_symbol("s0", 16);
  BufferId x = b.input("arg0_1", {s0}, DType::float32);
  KernelId k = b.triton_kernel("triton_0", "src", "in_ptr0: *fp32, out_ptr0: *fp32");
};

pass::Liveness live(const Program& p) {
  auto r = pass::liveness_of(p);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return r.value();
}

pass::AllocationTrace traced(const Program& p, const pass::TraceOptions& o = {}) {
  auto r = pass::trace_of(p, o);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return r.value();
}

}  // namespace

TEST_CASE("liveness: a chain of kernels; blocks end at their last use, outputs at the end") {
  Fixture f;
  BufferId a = f.b.empty({f.s0}, DType::float32);  // line 1
  f.b.call(f.k, {f.x, a});                         // line 2
  BufferId c = f.b.empty({f.s0}, DType::float32);  // line 3
  f.b.call(f.k, {a, c}, {.free_after = {a}});      // line 4, free at 5
  BufferId d = f.b.empty({f.s0}, DType::float32);  // line 6
  f.b.call(f.k, {c, d}, {.free_after = {c}});      // line 7, free at 8
  f.b.comment("done");                             // line 9
  f.b.output(d);
  const pass::Liveness l = live(f.p);
  REQUIRE(l.lifetimes.size() == 3);
  CHECK(l.steps == 10);
  CHECK(l.lifetimes[0] == pass::BufferLifetime{a, 1, 5, pass::StorageOrigin::allocate, false, {}});
  CHECK(l.lifetimes[1] == pass::BufferLifetime{c, 3, 8, pass::StorageOrigin::allocate, false, {}});
  CHECK(l.lifetimes[2] == pass::BufferLifetime{d, 6, 9, pass::StorageOrigin::allocate, true, {}});
  CHECK(l.storage_of[f.x.index] == pass::Liveness::no_storage);
  CHECK(l.storage_of[a.index] == 0);

  const pass::AllocationTrace t = traced(f.p);
  CHECK(t.steps == 10);
  REQUIRE(t.allocations.size() == 3);
  CHECK(t.allocations[0] == pass::TracedAllocation{"buf0", 64, 1, 6, pass::device_key(cuda_device(0)), false});
  CHECK(t.allocations[2] == pass::TracedAllocation{"buf2", 64, 6, 10, pass::device_key(cuda_device(0)), true});
  // At line 4 buf0 and buf1 are live; at line 7 buf1 and buf2.
  CHECK(pass::max_live_bytes(t) == 128);
}

TEST_CASE("liveness: a view extends its base's block, and a Reuse joins the new buffer to the old storage") {
  Fixture f;
  BufferId a = f.b.empty({f.s0}, DType::float32);                   // 1
  BufferId v = f.b.view(a, {f.s0}, {f.p.ctx().integer(1)}, f.p.ctx().integer(0));  // 2
  f.b.free({a});                                                     // 3 (its view is used later)
  f.b.call(f.k, {f.x, v});                                           // 4
  BufferId n = f.b.declare("buf9", f.p.buffer(a).layout, BufferRole::intermediate);
  f.p.body[3] = FreeIfNotReused{a, true};
  f.b.append(Reuse{a, n, true});                                     // 5
  f.b.call(f.k, {f.x, n});                                           // 6
  f.b.comment("end");                                                // 7
  const pass::Liveness l = live(f.p);
  REQUIRE(l.lifetimes.size() == 1);
  CHECK(l.lifetimes[0] == pass::BufferLifetime{a, 1, 6, pass::StorageOrigin::allocate, false, {v, n}});
  CHECK(l.storage_of[v.index] == 0);
  CHECK(l.storage_of[n.index] == 0);
}

TEST_CASE("liveness: multi-output elements start with their tuple and live while the tuple does") {
  Fixture f;
  wrapir::expr::Context& ctx = f.p.ctx();
  BufferId tuple = f.b.extern_alloc_multi("aten.split", {f.x, 2});                        // 1
  std::vector<BufferId> parts = f.b.unpack(tuple, {Layout::contiguous(ctx, {ctx.integer(8)}, DType::float32,
                                                                      cuda_device(0)),
                                                   Layout::contiguous(ctx, {ctx.integer(4)}, DType::float32,
                                                                      cuda_device(0))});  // 2, 3
  f.b.free({parts[0]});                                                                    // 4
  f.b.comment("x");                                                                        // 5
  f.b.free({tuple});                                                                       // 6
  f.b.comment("y");                                                                        // 7
  f.b.free({parts[1]});                                                                    // 8
  const pass::Liveness l = live(f.p);
  REQUIRE(l.lifetimes.size() == 2);
  CHECK(l.storage_of[tuple.index] == pass::Liveness::no_storage);
  CHECK(l.lifetimes[0] ==
        pass::BufferLifetime{parts[0], 1, 6, pass::StorageOrigin::multi_output_element, false, {}});
  CHECK(l.lifetimes[1] ==
        pass::BufferLifetime{parts[1], 1, 8, pass::StorageOrigin::multi_output_element, false, {}});
  const pass::AllocationTrace t = traced(f.p);
  CHECK(t.allocations[0].bytes == 32);
  CHECK(t.allocations[1].bytes == 16);
}

TEST_CASE("liveness: workspaces, comm buffers and extern results own blocks") {
  Fixture f;
  wrapir::expr::Context& ctx = f.p.ctx();
  KernelId kw = f.b.triton_kernel("triton_ws", "src", "in_ptr0: *fp32, ws_ptr: *u8");
  f.b.call(kw, {f.x}, {.workspaces = {WorkspaceRequest{ctx.integer(100)}}});  // 2 alloc, 3 call, 4 free
  BufferId c = f.b.comm_buffer({ctx.integer(4)}, DType::float32, "0");        // 5
  f.b.free({c});                                                              // 6
  BufferId e = f.b.extern_alloc("aten.mm", {f.x, f.x},
                                Layout::contiguous(ctx, {f.s0, f.s0}, DType::float16, cuda_device(0)));  // 7
  f.b.output(e);
  const pass::Liveness l = live(f.p);
  REQUIRE(l.lifetimes.size() == 3);
  CHECK(l.lifetimes[0].origin == pass::StorageOrigin::workspace);
  CHECK(l.lifetimes[0].first_line == 2);
  CHECK(l.lifetimes[0].last_line == 4);
  CHECK(l.lifetimes[1] == pass::BufferLifetime{c, 5, 6, pass::StorageOrigin::comm, false, {}});
  CHECK(l.lifetimes[2] == pass::BufferLifetime{e, 7, 7, pass::StorageOrigin::extern_result, true, {}});
  const pass::AllocationTrace t = traced(f.p);
  CHECK(t.allocations[0].bytes == 100);
  CHECK(t.allocations[2].bytes == 16 * 16 * 2);
}

TEST_CASE("liveness: sizes use the hints, the options' hints first, and the fallback for unknown symbols") {
  Fixture f;
  Expr u0 = f.b.unbacked_symbol("u0");
  Expr s1 = f.b.size_symbol("s1", 3);
  f.b.empty({u0}, DType::int64);
  f.b.empty({s1, f.s0}, DType::float32);
  // A symbol the tables do not declare (an unverified program).
  f.b.empty({f.p.ctx().symbol("q9")}, DType::uint8);
  pass::AllocationTrace t = traced(f.p);
  REQUIRE(t.allocations.size() == 3);
  CHECK(t.allocations[0].bytes == 8192 * 8);
  CHECK(t.allocations[1].bytes == 3 * 16 * 4);
  CHECK(t.allocations[2].bytes == 8192);
  pass::TraceOptions o;
  o.fallback_hint = 2;
  o.hints.set(s1, 10);
  t = traced(f.p, o);
  CHECK(t.allocations[0].bytes == 16);
  CHECK(t.allocations[1].bytes == 10 * 16 * 4);
  CHECK(t.allocations[2].bytes == 2);
}

TEST_CASE("liveness: a strided layout's storage, and a zero-size buffer") {
  Fixture f;
  wrapir::expr::Context& ctx = f.p.ctx();
  // sizes (2, 3) strides (1, 4) offset 5: 5 + 1 + 1*1 + 2*4 = 15 elements.
  f.b.allocate(Layout{{ctx.integer(2), ctx.integer(3)}, {ctx.integer(1), ctx.integer(4)}, ctx.integer(5),
                      DType::float64, cuda_device(0)});
  f.b.empty({ctx.integer(0)}, DType::float32);
  const pass::AllocationTrace t = traced(f.p);
  CHECK(t.allocations[0].bytes == 15 * 8);
  CHECK(t.allocations[1].bytes == 0);
}

TEST_CASE("liveness: devices fold into distinct keys") {
  CHECK(pass::device_key(cuda_device(0)) != pass::device_key(cuda_device(1)));
  CHECK(pass::device_key(Device{DeviceType::cpu, std::nullopt}) != pass::device_key(Device{DeviceType::cpu, 0}));
  CHECK(pass::device_key(Device{DeviceType::cpu, 1}) != pass::device_key(cuda_device(1)));
}

TEST_CASE("liveness: Conditional outputs own blocks; subgraph bodies are not traced") {
  Fixture f;
  std::vector<BufferId> outs = f.b.conditional(
      true, {f.x},
      [&](Builder& g, auto inputs) {
        BufferId t = g.empty({g.program().buffers[boost::variant2::get<BufferId>(inputs[0]).index].layout.sizes[0]},
                             DType::float32);
        g.output(t);
      },
      [&](Builder& g, auto inputs) {
        BufferId t = g.empty({g.program().buffers[boost::variant2::get<BufferId>(inputs[0]).index].layout.sizes[0]},
                             DType::float32);
        g.output(t);
      });
  f.b.free({outs[0]});
  const pass::Liveness l = live(f.p);
  REQUIRE(l.lifetimes.size() == 1);
  CHECK(l.lifetimes[0] == pass::BufferLifetime{outs[0], 1, 2, pass::StorageOrigin::control_result, false, {}});
}

TEST_CASE("liveness: malformed programs give diagnostics") {
  Fixture f;
  BufferId a = f.b.empty({f.s0}, DType::float32);
  SUBCASE("defined twice") {
    f.b.append(Allocate{a});
    auto r = pass::liveness_of(f.p);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "line 2: buffer buf0 is defined twice: first at line 1");
  }
  SUBCASE("an id out of range") {
    f.b.append(FreeIfNotReused{BufferId{99}});
    auto r = pass::trace_of(f.p);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "line 2: buffer #99 is not in the buffer table");
  }
  SUBCASE("a size that overflows at the hints") {
    Expr big = f.b.size_symbol("s9", std::int64_t{1} << 62);
    f.b.empty({big}, DType::float32);
    auto r = pass::trace_of(f.p);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("buffer buf1") != std::string::npos);
    CHECK(r.error().message.find("overflows") != std::string::npos);
  }
  SUBCASE("an output out of range") {
    f.p.outputs.push_back(BufferArg{BufferId{77}, std::nullopt});
    auto r = pass::liveness_of(f.p);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "outputs: buffer #77 is not in the buffer table");
  }
}

TEST_CASE("liveness: a size whose bytes overflow int64 at the hints is a diagnostic") {
  Program p;
  Builder b{p};
  auto s0 = b.size_symbol("s0", std::int64_t{1} << 62);
  (void)b.empty({s0}, DType::float32);  // 2^64 bytes
  auto t = pass::trace_of(p);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message.find("overflows int64 bytes") != std::string::npos);
  // An element count past int64 has no size at all.
  Program q;
  Builder c{q};
  const auto big = q.ctx().integer(std::int64_t{1} << 40);
  q.buffers.push_back(BufferDecl{"big", Layout{{big, big}, {big, q.ctx().integer(1)}, q.ctx().integer(0),
                                               DType::float32, cuda_device(0)}});
  c.append(Allocate{BufferId{0}});
  REQUIRE_FALSE(pass::trace_of(q).ok());
}
