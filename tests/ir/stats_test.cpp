// Tests of include/wrapir/ir/stats.hpp: counts, bytes and the naive peak.

#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/stats.hpp>

#include <boost/variant2/variant.hpp>
#include <doctest/doctest.h>

#include <span>

using namespace wrapir::ir;

TEST_CASE("ir/stats: counts, bytes allocated and the naive peak at the hints") {
  wrapir::Program p{"two_kernels"};
  wrapir::Builder b{p};
  auto s0 = b.size_symbol("s0", 100);
  auto x = b.input("arg0_1", {s0}, wrapir::f32);
  auto k = b.triton_kernel("k0", "src", "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32");
  auto t = b.empty({s0}, wrapir::f32);     // 400 bytes
  b.call(k, {x, t, s0});
  auto u = b.empty({s0, p.ctx().integer(2)}, wrapir::i64);  // 1600 bytes
  b.call(k, {t, u, s0}, {.free_after = {t}});
  auto ws = b.workspace(p.ctx().integer(64), WorkspaceZeroMode::zero_on_call);
  b.call(k, {u, u, s0});
  b.free({ws});
  b.output(u);

  const ProgramStats st = program_stats(p);
  CHECK(st.lines == p.body.size());
  CHECK(st.kernels == 1);
  CHECK(st.launches == 3);
  CHECK(st.allocations == 3);
  CHECK(st.lines_per_kind[line_kind_index<Allocate>] == 2);
  CHECK(st.lines_per_kind[line_kind_index<KernelCall>] == 3);
  CHECK(wrapir::expr::print_python(st.bytes_allocated) == "20*s0 + 64");
  CHECK(st.bytes_allocated_at_hints == 2064);
  CHECK(st.peak_bytes_at_hints == 2000);  // t and u together; t is freed before the workspace
}

TEST_CASE("ir/stats: without hints the sizes stay symbolic and the peak is unknown") {
  wrapir::Program p;
  wrapir::Builder b{p};
  auto s0 = b.size_symbol("s0");
  (void)b.empty({s0}, wrapir::f16);
  const ProgramStats st = program_stats(p);
  CHECK(wrapir::expr::print_python(st.bytes_allocated) == "2*s0");
  CHECK_FALSE(st.bytes_allocated_at_hints);
  CHECK_FALSE(st.peak_bytes_at_hints);
}

TEST_CASE("ir/stats: a malformed program gives what can be computed, never a crash") {
  wrapir::Program p;
  p.body.push_back(Allocate{BufferId{7}});
  p.body.push_back(FreeIfNotReused{BufferId{9}});
  const ProgramStats st = program_stats(p);
  CHECK(st.lines == 2);
  CHECK(st.allocations == 0);
  CHECK(st.peak_bytes_at_hints == 0);
}

// Regression tests: sums past int64 used to overflow a signed integer (UB,
// caught by UBSan) and a size that does not fit int64 counted as 0 bytes.
// Stats never wrap: a figure that does not fit is absent.

TEST_CASE("ir/stats: a live sum past int64 at the hints leaves the peak absent instead of overflowing") {
  wrapir::Program p;
  wrapir::Builder b{p};
  auto s0 = b.size_symbol("s0", std::int64_t{1} << 60);  // 2^62 bytes of float32 each
  (void)b.empty({s0}, wrapir::f32);
  (void)b.empty({s0}, wrapir::f32);
  const ProgramStats st = program_stats(p);
  CHECK(st.allocations == 2);
  CHECK(wrapir::expr::print_python(st.bytes_allocated) == "8*s0");
  CHECK_FALSE(st.bytes_allocated_at_hints);
  CHECK_FALSE(st.peak_bytes_at_hints);
}

TEST_CASE("ir/stats: a constant total past int64 has no expression and no value, and nothing throws") {
  wrapir::Program p;
  wrapir::Builder b{p};
  const auto huge = p.ctx().integer(std::int64_t{1} << 60);
  (void)b.empty({huge}, wrapir::f32);
  (void)b.empty({huge}, wrapir::f32);
  const ProgramStats st = program_stats(p);
  CHECK(st.allocations == 2);
  CHECK_FALSE(st.peak_bytes_at_hints);
  CHECK_FALSE(st.bytes_allocated);
  CHECK_FALSE(st.bytes_allocated_at_hints);
}

TEST_CASE("ir/stats: a buffer of [2^40, 2^40] float32 is not counted as 0 bytes") {
  wrapir::Program p;
  wrapir::Builder b{p};
  const auto big = p.ctx().integer(std::int64_t{1} << 40);
  (void)b.empty({p.ctx().integer(8)}, wrapir::f32);
  // (Pushed by hand: the builder refuses a layout whose size overflows; a
  // JSON document or a pass may still hold one.)
  p.buffers.push_back(BufferDecl{"big", Layout{{big, big}, {big, p.ctx().integer(1)}, p.ctx().integer(0),
                                               wrapir::f32, wrapir::cuda_device(0)}});
  b.append(Allocate{BufferId{static_cast<std::uint32_t>(p.buffers.size() - 1)}});
  const ProgramStats st = program_stats(p);
  CHECK(st.allocations == 2);
  CHECK_FALSE(st.bytes_allocated);
  CHECK_FALSE(st.bytes_allocated_at_hints);
  CHECK_FALSE(st.peak_bytes_at_hints);
}

TEST_CASE("ir/stats: sizes that overflow only at the hints keep the symbolic total") {
  wrapir::Program p;
  wrapir::Builder b{p};
  auto s0 = b.size_symbol("s0", std::int64_t{1} << 62);
  (void)b.empty({s0}, wrapir::f32);
  const ProgramStats st = program_stats(p);
  CHECK(wrapir::expr::print_python(st.bytes_allocated) == "4*s0");
  CHECK_FALSE(st.bytes_allocated_at_hints);
  CHECK_FALSE(st.peak_bytes_at_hints);
}

TEST_CASE("ir/stats: releases of storage that was never counted subtract nothing") {
  // A donated input freed, an offered FreeIfNotReused, a pool region: none
  // of them lowers the peak below what was counted.
  wrapir::Program p;
  wrapir::Builder b{p};
  auto x = b.input("arg0_1", Layout::contiguous(p.ctx(), {p.ctx().integer(1000)}, wrapir::f32, wrapir::cuda_device(0)),
                   true);
  auto t = b.empty({p.ctx().integer(10)}, wrapir::f32);  // 40 bytes
  b.free({x});
  b.append(FreeIfNotReused{t, true});
  auto u = b.declare("u", Layout::contiguous(p.ctx(), {p.ctx().integer(10)}, wrapir::f32, wrapir::cuda_device(0)),
                     BufferRole::intermediate);
  b.append(Reuse{t, u, true});
  (void)b.empty({p.ctx().integer(5)}, wrapir::f32);  // 20 bytes
  const ProgramStats st = program_stats(p);
  CHECK(st.allocations == 2);
  CHECK(st.peak_bytes_at_hints == 60);
}

TEST_CASE("ir/stats: an extern result is counted unless it is a multi-output tuple") {
  wrapir::Program p;
  wrapir::Builder b{p};
  auto x = b.input("arg0_1", {p.ctx().integer(4)}, wrapir::f32);
  auto tuple = b.extern_alloc_multi("aten.topk", {x, std::int64_t{2}});
  (void)b.extern_alloc("aten.relu", {x}, Layout::contiguous(p.ctx(), {p.ctx().integer(4)}, wrapir::f32,
                                                             wrapir::cuda_device(0)));  // 16 bytes
  auto out = b.empty({p.ctx().integer(2)}, wrapir::f32);  // 8 bytes
  auto r = b.declare("r", Layout::contiguous(p.ctx(), {p.ctx().integer(3)}, wrapir::f32, wrapir::cuda_device(0)),
                     BufferRole::intermediate);
  b.append(ExternKernelMultiOut{r, OpName{"aten.f"}, {Arg{x}}, {}, {NamedBuffer{"out0", BufferArg{out}}}});  // 12
  (void)tuple;
  const ProgramStats st = program_stats(p);
  CHECK(st.allocations == 3);  // the tuple is a definition but holds no storage
  CHECK(st.bytes_allocated_at_hints == 36);
}

TEST_CASE("ir/stats: elements of a multi-output result are counted, the tuple's end is not (regression)") {
  // Exported from Inductor (bucketize, topk): the tuple's FreeIfNotReused
  // subtracted bytes that were never added (peak 79 for one 80-byte buffer)
  // and the elements' storage was never counted (topk's peak read 0).
  wrapir::Program p;
  wrapir::Builder b{p};
  auto& ctx = p.ctx();
  auto x = b.input("arg0_1", {ctx.integer(64)}, wrapir::f32);
  auto tuple = b.extern_alloc_multi("aten.topk", {x, std::int64_t{2}});
  const auto elements = b.unpack(tuple, {Layout::contiguous(ctx, {ctx.integer(2)}, wrapir::f32, wrapir::cuda_device(0)),
                                         Layout::contiguous(ctx, {ctx.integer(2)}, wrapir::i64, wrapir::cuda_device(0))});
  b.append(FreeIfNotReused{tuple, false});
  b.append(FreeIfNotReused{elements[0], false});
  (void)b.empty({ctx.integer(20)}, wrapir::f32);  // 80 bytes, with indices (16) still live
  const ProgramStats st = program_stats(p);
  CHECK(st.allocations == 3);
  CHECK(st.bytes_allocated_at_hints == 8 + 16 + 80);
  CHECK(st.peak_bytes_at_hints == 96);
}

TEST_CASE("ir/stats: a Conditional's outputs are held by the caller until released (regression)") {
  // Exported from Inductor (torch.cond, while_loop): the outputs were left
  // out where the Conditional defines them but their release was
  // subtracted, so the caller's peak read low (512 for 513 live bytes).
  wrapir::Program p;
  wrapir::Builder b{p};
  auto& ctx = p.ctx();
  const auto pred = b.input("arg0_1", {}, wrapir::b8);
  const auto x = b.input("arg1_1", {ctx.integer(10)}, wrapir::f32);
  auto branch = [&ctx](Builder& sb, std::span<const ProgramInput> inputs) {
    const auto in = boost::variant2::get<BufferId>(inputs[0]);
    sb.output(sb.extern_alloc("aten.sin", {in}, Layout::contiguous(ctx, {ctx.integer(10)}, wrapir::f32,
                                                                  wrapir::cuda_device(0))));  // 40 bytes
  };
  const auto flag = b.empty({}, wrapir::b8);  // 1 byte, live across the Conditional
  const auto outs = b.conditional(BufferArg{flag}, {x}, branch, branch);
  b.append(FreeIfNotReused{flag, false});
  b.append(FreeIfNotReused{outs[0], false});
  (void)b.empty({ctx.integer(5)}, wrapir::f32);  // 20 bytes
  (void)pred;
  const ProgramStats st = program_stats(p);
  CHECK(st.peak_bytes_at_hints == 41);  // the flag and the output; then 20 bytes, not 20 - 40
  CHECK(st.allocations == 1 + 2 + 1);   // the flag, each branch's result, the last buffer
  CHECK(st.bytes_allocated_at_hints == 1 + 40 + 40 + 20);
}

TEST_CASE("ir/stats: each device peaks on its own, and the peak is the sum of theirs") {
  // index_put's CUDA export: two CUDA buffers early, three host buffers
  // later. At no one moment are 768 bytes live (640 at most), but each
  // device must hold its own peak: 256 on the GPU, 512 on the host, as the
  // planners' per-device bound and arenas count them.
  wrapir::Program p{"two_devices"};
  wrapir::Builder b{p};
  auto k = b.triton_kernel("k0", "src", "in_ptr0: *fp32, out_ptr0: *fp32");
  const auto n = [&](std::int64_t v) { return p.ctx().integer(v); };
  auto a = b.empty({n(32)}, wrapir::f32, wrapir::cuda_device(0));  // 128 bytes
  auto g = b.empty({n(32)}, wrapir::f32, wrapir::cuda_device(0));  // 128
  b.call(k, {a, g}, {.free_after = {a}});
  auto h = b.empty({n(32)}, wrapir::i64, wrapir::cpu_device());  // 256
  auto ones = b.empty({n(16)}, wrapir::i64, wrapir::cpu_device());  // 128
  b.call(k, {h, ones}, {.free_after = {ones}});
  auto out = b.empty({n(32)}, wrapir::i64, wrapir::cpu_device());  // 256
  b.call(k, {h, out}, {.free_after = {h}});
  b.output(g);
  b.output(out);
  CHECK(program_stats(p).peak_bytes_at_hints == 256 + 512);
}
