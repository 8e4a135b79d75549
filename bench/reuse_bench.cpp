// Google Benchmark figures for the reuse planner (pass/reuse.hpp) on a
// program of 100k buffers, like an Inductor wrapper for a long graph: each
// step allocates a buffer of one of a few shapes (dynamic and static),
// launches a kernel that reads a live buffer and writes the new one, and
// frees the buffers that died, with an occasional workspace. The planner's
// target is under 100 ms for it (single thread, -O3); it reports buffers/s.
// `plan_reuse(const Program&)` includes copying the program (about a third
// of its time); `plan_reuse(Program&&)` plans in place. Also timed:
// extracting the liveness trace alone (pass/liveness.hpp).
//
//   cmake --preset release && cmake --build build/release --target reuse_bench
//   build/release/bench/reuse_bench --benchmark_repetitions=7

#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/reuse.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <random>
#include <utility>
#include <vector>

namespace {

namespace ir = wrapir::ir;
namespace pass = wrapir::pass;

constexpr std::size_t target_buffers = 100'000;

ir::Program make_program(std::size_t buffers) {
  ir::Program p{"bench"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  const auto s0 = b.size_symbol("s0", 4096);
  const auto s1 = b.size_symbol("s1", 512);
  const std::vector<std::vector<wrapir::expr::Expr>> shapes{
      {s0, s1}, {s0}, {s1, ctx.integer(64)}, {ctx.integer(1024)}, {s0, ctx.integer(3)}, {ctx.integer(8), s1}};
  const ir::KernelId k = b.triton_kernel("triton_poi_0", "src", "in_ptr0: *fp32, out_ptr0: *fp32");
  const ir::KernelId kw = b.triton_kernel("triton_red_ws_0", "src", "in_ptr0: *fp32, out_ptr0: *fp32, ws_ptr: *u8");
  std::mt19937 rng(42);
  std::deque<ir::BufferId> live;
  ir::BufferId first = b.input("arg0_1", {s0, s1}, ir::DType::float32);
  live.push_back(first);
  for (std::size_t i = 0; i < buffers; ++i) {
    const ir::BufferId out = b.empty(shapes[rng() % shapes.size()], ir::DType::float32);
    const ir::BufferId in = live[rng() % live.size()];
    if (i % 16 == 0)
      b.call(kw, {in, out}, {.workspaces = {ir::WorkspaceRequest{ctx.integer(4096)}}});
    else
      b.call(k, {in, out});
    live.push_back(out);
    // Keep a working set of about 8 buffers; the input stays.
    while (live.size() > 8 + rng() % 4) {
      const ir::BufferId dead = live[1];
      live.erase(live.begin() + 1);
      b.free({dead});
    }
  }
  b.output(live.back());
  return p;
}

void BM_plan_reuse(benchmark::State& state) {
  const ir::Program p = make_program(target_buffers);
  std::size_t reuses = 0;
  for (auto _ : state) {
    auto r = pass::plan_reuse(p);
    if (!r) std::abort();
    reuses = r.value().stats.reuses;
    state.PauseTiming();
    r = wrapir::Diagnostic{};  // freeing the plan is not timed
    state.ResumeTiming();
  }
  state.counters["reuses"] = static_cast<double>(reuses);
  state.counters["buffers/s"] =
      benchmark::Counter(static_cast<double>(target_buffers), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_plan_reuse)->Unit(benchmark::kMillisecond);

// The same, planning a program the caller gives up (`plan_reuse(Program&&)`):
// the copy it would take is made outside the timed region.
void BM_plan_reuse_moved(benchmark::State& state) {
  const ir::Program p = make_program(target_buffers);
  for (auto _ : state) {
    state.PauseTiming();
    ir::Program copy = p;
    state.ResumeTiming();
    auto r = pass::plan_reuse(std::move(copy));
    if (!r) std::abort();
    state.PauseTiming();
    r = wrapir::Diagnostic{};
    state.ResumeTiming();
  }
  state.counters["buffers/s"] =
      benchmark::Counter(static_cast<double>(target_buffers), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_plan_reuse_moved)->Unit(benchmark::kMillisecond);

void BM_trace_of(benchmark::State& state) {
  const ir::Program p = make_program(target_buffers);
  for (auto _ : state) {
    auto t = pass::trace_of(p);
    if (!t) std::abort();
    benchmark::DoNotOptimize(t.value().allocations.data());
  }
  state.counters["buffers/s"] =
      benchmark::Counter(static_cast<double>(target_buffers), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_trace_of)->Unit(benchmark::kMillisecond);

}  // namespace
