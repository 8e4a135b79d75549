// Google Benchmark figures for the memory planners at trace level
// (pass/arena.hpp, pass/pools.hpp) and of the reuse planner
// (pass/reuse.hpp) on programs made from the same traces:
// - BM_arena_*: wrapir's arena planner on traces of about 100k buffers (a
//   transformer of 7000 layers, random blocks); the target is
//   < 100 ms single-threaded with the default options; the counters
//   `orders` and `rounds` show how much of the search the adaptive stop
//   (`ArenaOptions::stop_within`) left out;
// - BM_arena_symbolic_*: plan_arena on programs whose every other buffer
//   has a symbolic size (`program_from_trace(..., {.symbolic = true})`):
//   packing at the hints plus `symbolic_placement`, whose offset forms
//   grow with how many blocks stack below one another (a transformer of
//   32 layers, 482 buffers, and random traces whose sizes are all
//   distinct, the worst case for the forms);
// - BM_pools_*: Inductor's pool planner (quadratic in the number of
//   children a TemporalSplit holds, as in memory_planning.py), on 10k;
// - BM_quality/<trace>: one iteration per corpus trace; counters give each
//   planner's peak over the max-live lower bound (arena, pools under each
//   policy, and the reuse planner run on `program_from_trace` of the trace,
//   whose own bound is the denominator there), so the console table is the
//   quality table.
// docs/performance.md records the results next to the command.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/pass/traces.hpp>

namespace {

using namespace wrapir::pass;

const AllocationTrace& big_transformer() {
  static const AllocationTrace t = transformer_trace({.layers = 7000}, 1);
  return t;
}

const AllocationTrace& big_random() {
  static const AllocationTrace t = random_trace({.blocks = 100'000}, 2);
  return t;
}

void report(benchmark::State& state, const AllocationTrace& t, std::int64_t peak) {
  state.counters["buffers"] = static_cast<double>(t.allocations.size());
  state.counters["peak/bound"] = static_cast<double>(peak) / static_cast<double>(max_live_bytes(t));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * t.allocations.size()));
}

/// The arena planner with its default options.
void arena_defaults(benchmark::State& state, const AllocationTrace& t) {
  std::int64_t peak = 0;
  ArenaPlan plan;
  for (auto _ : state) {
    plan = place_in_arenas(t);
    peak = plan.placement.total_bytes();
    benchmark::DoNotOptimize(peak);
  }
  report(state, t, peak);
  state.counters["orders"] = static_cast<double>(plan.orders_completed);
  state.counters["rounds"] = static_cast<double>(plan.improvement_rounds);
}

void BM_arena_transformer_100k(benchmark::State& state) { arena_defaults(state, big_transformer()); }
BENCHMARK(BM_arena_transformer_100k)->Unit(benchmark::kMillisecond);

void BM_arena_transformer_100k_one_order(benchmark::State& state) {
  const AllocationTrace& t = big_transformer();
  std::int64_t peak = 0;
  for (auto _ : state) {
    const ArenaPlan plan = place_in_arenas(t, {.orders = {ArenaOrder::size}, .improvement_rounds = 0});
    peak = plan.placement.total_bytes();
    benchmark::DoNotOptimize(peak);
  }
  report(state, t, peak);
}
BENCHMARK(BM_arena_transformer_100k_one_order)->Unit(benchmark::kMillisecond);

void BM_arena_random_100k(benchmark::State& state) { arena_defaults(state, big_random()); }
BENCHMARK(BM_arena_random_100k)->Unit(benchmark::kMillisecond);

void BM_arena_random_100k_one_order(benchmark::State& state) {
  const AllocationTrace& t = big_random();
  std::int64_t peak = 0;
  for (auto _ : state) {
    const ArenaPlan plan = place_in_arenas(t, {.orders = {ArenaOrder::conflict}, .improvement_rounds = 0});
    peak = plan.placement.total_bytes();
    benchmark::DoNotOptimize(peak);
  }
  report(state, t, peak);
}
BENCHMARK(BM_arena_random_100k_one_order)->Unit(benchmark::kMillisecond);

/// plan_arena on a program with symbolic sizes made from `t`.
void arena_symbolic(benchmark::State& state, const AllocationTrace& t) {
  const wrapir::ir::Program p = program_from_trace(t, {.symbolic = true});
  for (auto _ : state) {
    auto planned = plan_arena(p);
    if (!planned) {
      state.SkipWithError(("plan_arena: " + planned.error().message).c_str());
      return;
    }
    benchmark::DoNotOptimize(planned);
  }
  state.counters["buffers"] = static_cast<double>(t.allocations.size());
}

void BM_arena_symbolic_transformer(benchmark::State& state) {
  static const AllocationTrace t = transformer_trace({.layers = 32}, 1);
  arena_symbolic(state, t);
}
BENCHMARK(BM_arena_symbolic_transformer)->Unit(benchmark::kMillisecond);

void BM_arena_symbolic_random(benchmark::State& state) {
  const AllocationTrace t = random_trace({.blocks = static_cast<std::size_t>(state.range(0))}, 42);
  arena_symbolic(state, t);
}
BENCHMARK(BM_arena_symbolic_random)->Arg(100)->Arg(400)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_pools_transformer_10k(benchmark::State& state) {
  static const AllocationTrace t = transformer_trace({.layers = 700}, 1);
  std::int64_t peak = 0;
  for (auto _ : state) {
    const PoolPlan plan = place_in_pools(t);
    peak = plan.placement.total_bytes();
    benchmark::DoNotOptimize(peak);
  }
  report(state, t, peak);
}
BENCHMARK(BM_pools_transformer_10k)->Unit(benchmark::kMillisecond);

void BM_pools_random_10k(benchmark::State& state) {
  static const AllocationTrace t = random_trace({.blocks = 10'000}, 2);
  std::int64_t peak = 0;
  for (auto _ : state) {
    const PoolPlan plan = place_in_pools(t);
    peak = plan.placement.total_bytes();
    benchmark::DoNotOptimize(peak);
  }
  report(state, t, peak);
}
BENCHMARK(BM_pools_random_10k)->Unit(benchmark::kMillisecond);

/// Peak over the lower bound of every planner on one corpus trace.
void BM_quality(benchmark::State& state, const NamedTrace* named) {
  const AllocationTrace& t = named->trace;
  const double bound = static_cast<double>(max_live_bytes(t));
  double arena = 0;
  for (auto _ : state) {
    arena = static_cast<double>(place_in_arenas(t).placement.total_bytes());
    benchmark::DoNotOptimize(arena);
  }
  state.counters["arena"] = arena / bound;
  state.counters["pools_none"] =
      static_cast<double>(place_in_pools(t, PoolPolicy::none).placement.total_bytes()) / bound;
  state.counters["pools_inter"] =
      static_cast<double>(place_in_pools(t, PoolPolicy::intermediates).placement.total_bytes()) / bound;
  state.counters["pools_outputs"] =
      static_cast<double>(place_in_pools(t, PoolPolicy::outputs).placement.total_bytes()) / bound;
  state.counters["pools_comb"] =
      static_cast<double>(place_in_pools(t, PoolPolicy::combined).placement.total_bytes()) / bound;
  // The reuse planner needs a program; the program's bound is its own.
  const wrapir::ir::Program p = program_from_trace(t);
  const auto reused = plan_reuse(p);
  if (reused) {
    const PlanStats& s = reused.value().stats;
    state.counters["reuse"] = static_cast<double>(s.peak_bytes) / static_cast<double>(s.lower_bound_bytes);
  } else {
    state.SkipWithError(("plan_reuse: " + reused.error().message).c_str());
  }
  const auto arena_program = plan_arena(p);
  if (arena_program) {
    const PlanStats& s = arena_program.value().stats;
    state.counters["arena_prog"] = static_cast<double>(s.peak_bytes) / static_cast<double>(s.lower_bound_bytes);
  }
  state.counters["buffers"] = static_cast<double>(t.allocations.size());
}

const std::vector<NamedTrace>& corpus() {
  static const std::vector<NamedTrace> c = trace_corpus();
  return c;
}

const int registered = [] {
  for (const NamedTrace& n : corpus())
    benchmark::RegisterBenchmark(("BM_quality/" + n.name).c_str(), BM_quality, &n)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  return 0;
}();

}  // namespace
