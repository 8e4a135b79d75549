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
// - BM_arena_unrelated/<n>: plan_arena on n buffers of unrelated size
//   symbols, one live at a time (peak/bound is 1 when they share offset 0);
//   BM_symbolic_above_unrelated/<n>: symbolic_placement with one block
//   above n of them (the largest set of incomparable forms one offset gets);
// - BM_pools_*: Inductor's pool planner (quadratic in the number of
//   children a TemporalSplit holds, as in memory_planning.py), on 10k;
// - BM_quality/<trace>: one iteration per corpus trace; counters give each
//   planner's peak over the max-live lower bound (arena, pools under each
//   policy, and the reuse planner run on `program_from_trace` of the trace,
//   whose own bound is the denominator there), so the console table is the
//   quality table.
// - BM_growth/<planner>/<shape>/<buffers> (100k and 1M only with
//   WRAPIR_BENCH_LARGE=1): how the cost grows with the
//   number of buffers on four trace shapes (chain: each op reads the
//   previous op's output; fan_out: a source read by 8 branches joined into
//   the next source; random; transformer, 14 buffers per layer) at 10k,
//   100k and 1M buffers: `arena` and `pools` plan the trace
//   (place_in_arenas, place_in_pools), `arena_program` and `pools_program`
//   plan program_from_trace(trace, {.symbolic = true}) (every other buffer
//   symbolic; the trace, symbolic offsets, rewrite and statistics), and
//   `reuse_program` runs plan_reuse on the same program. One iteration each
//   at 100k and up; time per buffer (time / buffers) is the figure to
//   compare across sizes.
// docs/performance.md records the results next to the command.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include <wrapir/ir/builder.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/pools.hpp>
#include <wrapir/pass/reuse.hpp>
#include <wrapir/pass/symbolic_placement.hpp>
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
BENCHMARK(BM_arena_symbolic_random)->Arg(100)->Arg(400)->Arg(1000)->Arg(2000)->Unit(benchmark::kMillisecond);

/// n buffers `int8[s_i]` of unrelated size symbols (hints 4096 to 10496),
/// each allocated, used by one kernel and freed before the next: one is
/// live at a time, so the bound is the largest and every offset can be 0.
wrapir::ir::Program one_at_a_time(std::size_t n) {
  wrapir::ir::Program p{"unrelated"};
  wrapir::ir::Builder b{p};
  const auto k = b.triton_kernel("touch", "@triton.jit\ndef touch(in_ptr0):\n    pass\n", "in_ptr0: *i8");
  for (std::size_t i = 0; i < n; ++i) {
    const auto s = b.size_symbol("s" + std::to_string(i), 4096 + 64 * static_cast<std::int64_t>((i * 37) % 101));
    const auto buf = b.empty({s}, wrapir::ir::DType::int8);
    wrapir::ir::CallOptions o;
    o.free_after = {buf};
    b.call(k, {buf}, o);
  }
  return p;
}

/// plan_arena on `one_at_a_time(n)`: peak/bound and the planner's time.
void BM_arena_unrelated(benchmark::State& state) {
  const wrapir::ir::Program p = one_at_a_time(static_cast<std::size_t>(state.range(0)));
  double ratio = 0;
  for (auto _ : state) {
    auto planned = plan_arena(p);
    if (!planned) {
      state.SkipWithError(("plan_arena: " + planned.error().message).c_str());
      return;
    }
    ratio = static_cast<double>(planned->stats.peak_bytes) / static_cast<double>(planned->stats.lower_bound_bytes);
    state.PauseTiming();
    planned = wrapir::Diagnostic{""};  // freeing the program is not planning
    state.ResumeTiming();
  }
  state.counters["buffers"] = static_cast<double>(state.range(0));
  state.counters["peak/bound"] = ratio;
}
BENCHMARK(BM_arena_unrelated)->Arg(64)->Arg(640)->Arg(6500)->Arg(65000)->Unit(benchmark::kMillisecond);

/// symbolic_placement's costliest set: a long-lived block placed (by hand,
/// validly) above n short blocks of unrelated sizes at offset 0, so its
/// offset is the Max of n forms none of which dominates another.
void BM_symbolic_above_unrelated(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  wrapir::expr::Context ctx;
  AllocationTrace t;
  Placement hint;
  std::vector<wrapir::expr::Expr> sizes;
  hint.arenas.push_back({0, 128});
  for (std::size_t i = 0; i < n; ++i) {
    t.allocations.push_back({"b" + std::to_string(i), 64, i, i + 1, 0, false, false});
    sizes.push_back(ctx.symbol("s" + std::to_string(i), wrapir::expr::Assumption::nonnegative));
    hint.blocks.push_back({0, 0});
  }
  t.allocations.push_back({"long", 64, 0, n, 0, false, false});
  sizes.push_back(ctx.symbol("L", wrapir::expr::Assumption::nonnegative));
  hint.blocks.push_back({0, 64});
  t.steps = n;
  for (auto _ : state) benchmark::DoNotOptimize(symbolic_placement(t, hint, sizes));
  state.counters["buffers"] = static_cast<double>(n + 1);
}
BENCHMARK(BM_symbolic_above_unrelated)->Arg(1000)->Arg(4000)->Arg(16000)->Unit(benchmark::kMillisecond);

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

enum class Shape { chain, fan_out, random, transformer };

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::chain:
      return "chain";
    case Shape::fan_out:
      return "fan_out";
    case Shape::random:
      return "random";
    case Shape::transformer:
      return "transformer";
  }
  return "?";
}

AllocationTrace make_trace(Shape s, std::size_t buffers) {
  switch (s) {
    case Shape::chain:
      return chain_trace({.blocks = buffers}, 1);
    case Shape::fan_out:
      return fan_out_trace({.blocks = buffers}, 1);
    case Shape::random:
      return random_trace({.blocks = buffers}, 2);
    case Shape::transformer:
      return transformer_trace({.layers = buffers / 14}, 1);
  }
  return {};
}

/// One trace (and its symbolic program) alive at a time: at 1M buffers a
/// program is hundreds of megabytes.
struct GrowthCase {
  Shape shape;
  std::size_t buffers;
  AllocationTrace trace;
  std::unique_ptr<wrapir::ir::Program> program;
  bool symbolic = false;
};
GrowthCase& growth_case(Shape s, std::size_t buffers, bool with_program, bool symbolic) {
  static GrowthCase current{Shape::chain, 0, {}, nullptr};
  if (current.shape != s || current.buffers != buffers) {
    current = GrowthCase{s, buffers, make_trace(s, buffers), nullptr};
  }
  if (with_program && (!current.program || current.symbolic != symbolic)) {
    current.program.reset();
    current.program = std::make_unique<wrapir::ir::Program>(program_from_trace(current.trace, {.symbolic = symbolic}));
    current.symbolic = symbolic;
  }
  return current;
}

enum class Planner { arena, pools, arena_program, pools_program, reuse_program };

void BM_growth(benchmark::State& state, Planner planner, Shape shape, std::size_t buffers, bool symbolic) {
  const bool program = planner == Planner::arena_program || planner == Planner::pools_program ||
                       planner == Planner::reuse_program;
  GrowthCase& c = growth_case(shape, buffers, program, symbolic);
  const AllocationTrace& t = c.trace;
  std::int64_t peak = 0, bound = 0;
  for (auto _ : state) {
    switch (planner) {
      case Planner::arena:
        peak = place_in_arenas(t).placement.total_bytes();
        break;
      case Planner::pools:
        peak = place_in_pools(t).placement.total_bytes();
        break;
      case Planner::arena_program:
      case Planner::pools_program:
      case Planner::reuse_program: {
        auto planned = planner == Planner::arena_program   ? plan_arena(*c.program)
                       : planner == Planner::pools_program ? plan_pools(*c.program)
                                                           : plan_reuse(*c.program);
        if (!planned) {
          state.SkipWithError(planned.error().message.c_str());
          return;
        }
        peak = planned.value().stats.peak_bytes;
        bound = planned.value().stats.lower_bound_bytes;
        state.PauseTiming();
        planned = wrapir::Diagnostic{""};  // freeing the program is not planning
        state.ResumeTiming();
        break;
      }
    }
    benchmark::DoNotOptimize(peak);
  }
  if (!program) bound = max_live_bytes(t);
  state.counters["buffers"] = static_cast<double>(t.allocations.size());
  state.counters["peak/bound"] = static_cast<double>(peak) / static_cast<double>(bound);
}

const int registered = [] {
  const std::pair<Planner, const char*> planners[] = {{Planner::arena, "arena"},
                                                      {Planner::pools, "pools"},
                                                      {Planner::arena_program, "arena_program"},
                                                      {Planner::pools_program, "pools_program"},
                                                      {Planner::reuse_program, "reuse_program"}};
  // 100k and 1M buffers take minutes and gigabytes: only on request
  // (WRAPIR_BENCH_LARGE=1), not in bench.smoke.
  const char* env = std::getenv("WRAPIR_BENCH_LARGE");
  const bool large = env != nullptr && std::string(env) == "1";
  // Shape-major, so that each trace and program is made once. Programs
  // come concrete and symbolic (`_sym`: every other buffer k*s0 bytes, k
  // distinct per buffer), the known worst case of the arena's offset forms
  // (docs/memory-planning.md): chains, fan-outs and the transformer (whose
  // saved activations stack, a distinct size per layer below each) run to
  // 100k with WRAPIR_BENCH_LARGE=1, random not at all
  // (`BM_arena_symbolic_random` covers it).
  for (const Shape shape : {Shape::chain, Shape::fan_out, Shape::random, Shape::transformer})
    for (const std::size_t buffers : {std::size_t{10'000}, std::size_t{100'000}, std::size_t{1'000'000}})
      for (const bool symbolic : {false, true})
        for (const auto& [planner, name] : planners) {
          const bool program = planner != Planner::arena && planner != Planner::pools;
          if ((buffers > 10'000 && !large) || (symbolic && !program)) continue;
          if (symbolic && planner == Planner::arena_program &&
              (shape == Shape::random || buffers > 100'000))
            continue;
          auto* b = benchmark::RegisterBenchmark(("BM_growth/" + std::string(name) + (symbolic ? "_sym/" : "/") +
                                                  shape_name(shape) + "/" + std::to_string(buffers))
                                                     .c_str(),
                                                 BM_growth, planner, shape, buffers, symbolic);
          b->Unit(benchmark::kMillisecond);
          if (buffers >= 100'000) b->Iterations(1);
        }

  for (const NamedTrace& n : corpus())
    benchmark::RegisterBenchmark(("BM_quality/" + n.name).c_str(), BM_quality, &n)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  return 0;
}();

}  // namespace
