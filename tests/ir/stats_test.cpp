// Tests of include/wrapir/ir/stats.hpp: counts, bytes and the naive peak.

#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/stats.hpp>

#include <doctest/doctest.h>

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
