// The verifier's worst cases (issue 12 §4: no input of 1 MB or less takes
// more than about 2 s). Each program is built to about `kilobytes` of JSON
// (io::to_json, compact; the size is reported as `json_kB`) and stresses
// what costs the verifier the most per byte: distinct symbolic layouts
// (free symbols per expression), Reuse lines between buffers of different
// symbolic sizes (the reuse key builds and bounds `old - new`), chains of
// views with symbolic offsets (each view's room derives from its base's),
// pool slices at symbolic offsets, and launches with view arguments. The
// `lines` counter gives lines/s. BM_stats_worst times, on the same
// programs, the statistics `wrapir verify` prints after the findings.
// docs/performance.md ("Verifier cost") records the results.

#include <wrapir/expr/ops.hpp>
#include <wrapir/io/json.hpp>
#include <wrapir/ir/builder.hpp>
#include <wrapir/ir/stats.hpp>
#include <wrapir/ir/verify.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace wrapir;
namespace ir = wrapir::ir;

enum Shape : int { distinct_sums, reuse_chain, view_chain, pool_slices, view_args, deep_views, shape_count };
const char* const shape_names[] = {"distinct_sums", "reuse_chain", "view_chain", "pool_slices", "view_args", "deep_views"};

/// A sum of `terms` FloorDivs of distinct symbols, different for each `salt`.
expr::Expr long_sum(const std::vector<expr::Expr>& syms, std::size_t salt, std::size_t terms) {
  std::vector<expr::Expr> parts;
  for (std::size_t t = 0; t < terms; ++t)
    parts.push_back(expr::floor_div(syms[(salt * 7 + t * 13) % syms.size()], static_cast<std::int64_t>(2 + (salt + t) % 5)));
  parts.push_back(syms[salt % syms.size()]);
  return expr::add(std::span<const expr::Expr>(parts));
}

/// One program of the shape, grown until its JSON reaches `bytes`.
ir::Program make(Shape shape, std::size_t bytes) {
  ir::Program p{"worst"};
  ir::Builder b{p};
  auto& ctx = p.ctx();
  std::vector<expr::Expr> syms;
  for (int i = 0; i < 64; ++i) syms.push_back(b.size_symbol("s" + std::to_string(i), 64 + i));
  const ir::KernelId k = b.triton_kernel("touch", "src", "ptr: *fp32, other: *fp32");
  const ir::BufferId big = b.input("arg0_1", {expr::mul(syms[0], syms[1]), syms[2]}, DType::float32);
  const ir::PoolId pool = [&] {
    if (shape != pool_slices) return ir::PoolId{};
    p.pools.push_back(ir::PoolDecl{"pool0", cuda_device(0), expr::add(long_sum(syms, 1, 40), ctx.integer(1 << 30))});
    b.append(ir::PoolCreate{ir::PoolId{0}});
    return ir::PoolId{0};
  }();
  std::size_t i = 0;
  ir::BufferId prev = big;
  // Check the size every few steps: to_json is not free.
  for (std::size_t step = 0;; ++step) {
    if (step % 64 == 0 && io::to_json(p).size() >= bytes) break;
    switch (shape) {
      case distinct_sums: {
        const ir::BufferId x = b.empty({long_sum(syms, i, 6), long_sum(syms, i + 1, 3)}, DType::float32);
        b.call(k, {x, big});
        b.free({x});
        break;
      }
      case reuse_chain: {
        // Each buffer takes the previous one's storage: the key compares
        // two different symbolic sizes.
        const ir::BufferId x = b.declare("buf" + std::to_string(p.buffers.size()),
                                         ir::Layout::contiguous(ctx, {long_sum(syms, i, 8)}, DType::float32, cuda_device(0)),
                                         ir::BufferRole::intermediate);
        if (prev == big)
          b.append(ir::Allocate{x});
        else
          b.append(ir::Reuse{prev, x, true});
        b.call(k, {x, big});
        prev = x;
        break;
      }
      case view_chain: {
        // A view of the previous view, at a symbolic offset.
        const ir::BufferId v = b.view(prev, {syms[(i + 3) % 64]}, {ctx.integer(1)}, syms[(i + 5) % 64]);
        b.call(k, {v, big});
        prev = (i % 512 == 511) ? big : v;
        break;
      }
      case deep_views: {
        // One unbroken chain of views, each at an offset no other uses: the
        // room of the last one is a sum over the whole chain.
        const expr::Expr offset = expr::floor_div(syms[i % 64], static_cast<std::int64_t>(2 + (i / 64) % 97));
        const ir::BufferId v = b.view(prev, {syms[(i + 3) % 64]}, {ctx.integer(1)}, offset);
        b.call(k, {v, big});
        prev = v;
        break;
      }
      case pool_slices: {
        const ir::BufferId x = b.declare("buf" + std::to_string(p.buffers.size()),
                                         ir::Layout::contiguous(ctx, {long_sum(syms, i, 4)}, DType::float32, cuda_device(0)),
                                         ir::BufferRole::intermediate);
        b.append(ir::AllocFromPool{x, pool, expr::mul(long_sum(syms, i + 2, 4), ctx.integer(256))});
        b.call(k, {x, big});
        b.append(ir::DeallocFromPool{x, pool, false});
        break;
      }
      case view_args: {
        const ir::View v{{syms[i % 64], long_sum(syms, i, 3)}, {long_sum(syms, i + 1, 3), ctx.integer(1)}, syms[(i + 9) % 64]};
        b.call(k, {ir::BufferArg{big, v}, big});
        break;
      }
      default: break;
    }
    ++i;
  }
  return p;
}

/// Verifies the JSON text's program (loaded once, as a command would).
void BM_verify_worst(benchmark::State& state) {
  const auto shape = static_cast<Shape>(state.range(0));
  const auto bytes = static_cast<std::size_t>(state.range(1)) * 1024;
  const std::string json = io::to_json(make(shape, bytes));
  auto loaded = io::program_from_json(json);
  if (!loaded) {
    state.SkipWithError(loaded.error().message.c_str());
    return;
  }
  const ir::Program& p = loaded.value();
  std::size_t findings = 0;
  for (auto _ : state) {
    const auto f = ir::verify(p);
    findings = f.size();
    benchmark::DoNotOptimize(f.data());
  }
  state.SetLabel(shape_names[shape]);
  state.counters["json_kB"] = static_cast<double>(json.size()) / 1024.0;
  state.counters["lines"] = benchmark::Counter(static_cast<double>(p.body.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_verify_worst)
    ->ArgNames({"shape", "kB"})
    ->ArgsProduct({{distinct_sums, reuse_chain, view_chain, pool_slices, view_args, deep_views}, {75, 1024}})
    ->Unit(benchmark::kMillisecond);

/// The statistics `wrapir verify` and `wrapir stats` print after verifying
/// (ir::program_stats): the bytes allocated are one symbolic sum over every
/// allocation, so distinct sizes stress it (summed one allocation at a
/// time, 5,300 distinct sizes in 1 MB took 5.7 s).
void BM_stats_worst(benchmark::State& state) {
  const auto shape = static_cast<Shape>(state.range(0));
  const auto bytes = static_cast<std::size_t>(state.range(1)) * 1024;
  const ir::Program p = make(shape, bytes);
  std::size_t allocations = 0;
  for (auto _ : state) {
    const ir::ProgramStats stats = ir::program_stats(p);
    allocations = stats.allocations;
    benchmark::DoNotOptimize(stats.bytes_allocated);
  }
  state.SetLabel(shape_names[shape]);
  state.counters["allocations"] = static_cast<double>(allocations);
  state.counters["lines"] = benchmark::Counter(static_cast<double>(p.body.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_stats_worst)
    ->ArgNames({"shape", "kB"})
    ->ArgsProduct({{distinct_sums, reuse_chain, pool_slices}, {75, 1024}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
