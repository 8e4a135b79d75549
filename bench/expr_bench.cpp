// Google Benchmark figures for the expression library, on a corpus of the
// launch-grid, indexing and storage-size expressions a wrapper meets.
// docs/performance.md records the results next to sympy's figures
// (shared/reference/anchors.md). Each benchmark reports time per expression.
//
// The growth benchmarks (BM_Grow*) time the worst cases of issue 12 at
// n = 1k, 10k, 100k operands: n-ary sums, products and sums of FloorDivs,
// through the constructors and through the parser, Min over n arguments,
// a 1 MB parse, literals crafted to share the low bits of their hashes, and
// (for the cost model) a sum folded with `+` one term at a time. They use
// only the public API, so this file also builds against an older checkout
// for side-by-side figures. Counters: bytes_per_node is the heap the
// context grew by, divided by the nodes it holds; bytes_per_operand what
// building one expression from existing operands added (the context's
// arena grows in blocks, so small n read coarse).

#include <wrapir/expr/compile.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/parse.hpp>
#include <wrapir/expr/print_cpp.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/expr/simplify.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <malloc.h>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ex = wrapir::expr;

// Inductor-style text: grids, index math, sizes, strides, padded sizes.
const std::vector<std::string> corpus_text = {
    "-((s0*s1) // -(1024))",                 // Grid1D, XBLOCK = 1024
    "(s0 + 127) // 128",                     // CeilDiv(s0, 128)
    "s77*(s27 // 4)",                        // numel after a reshape
    "max(1, s27 // 4)",                      // a stride
    "((x0 // 4) % 8)",                       // ModularIndexing
    "(x0 % s1) + s1*(x0 // s1)",             // index from a flat offset
    "align(4*s0*s1)",                        // storage bytes, 64-aligned
    "s0*s1*s2 + 2*s0*s1 + s0",               // a padded size
    "min(s0, 1024)",                         // a clamped block
    "((s0 + 63) // 64)*64",                  // rounded-up size
};

struct Corpus {
  ex::Context ctx;
  std::vector<ex::Expr> exprs;
  std::vector<ex::Expr> raw;  // the same trees built without simplification
  ex::Bindings bindings;

  Corpus() {
    for (const auto& t : corpus_text) exprs.push_back(ex::parse(ctx, t).value());
    for (ex::Expr e : exprs) raw.push_back(unsimplify(e));
    const char* names[] = {"s0", "s1", "s2", "s27", "s77", "x0"};
    std::int64_t value = 1000;
    for (const char* n : names) bindings.set(ctx.symbol(n), value += 37);
  }

  // Rebuilds a tree node by node with make_raw, so that simplify has all the
  // work to do again.
  ex::Expr unsimplify(ex::Expr e) {
    if (e.operands().empty()) return e;
    std::vector<ex::Expr> ops;
    for (ex::Expr o : e.operands()) ops.push_back(unsimplify(o));
    if (e.is(ex::Kind::add) || e.is(ex::Kind::mul)) std::reverse(ops.begin(), ops.end());  // not canonical order
    return ctx.make_raw(e.kind(), ops, e.value());
  }
};

Corpus& corpus() {
  static Corpus c;
  return c;
}

void per_expression(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * corpus_text.size()));
}

void BM_SimplifyRawTree(benchmark::State& state) {
  auto& c = corpus();
  for (auto _ : state)
    for (ex::Expr r : c.raw) benchmark::DoNotOptimize(ex::simplify(r));
  per_expression(state);
}
BENCHMARK(BM_SimplifyRawTree);

// The typical grid alone: `(s0*s1 + 1023) // 1024` from a raw tree.
void BM_SimplifyGrid(benchmark::State& state) {
  auto& c = corpus();
  ex::Expr s0 = c.ctx.symbol("s0"), s1 = c.ctx.symbol("s1");
  ex::Expr numel = c.ctx.make_raw(ex::Kind::mul, std::vector<ex::Expr>{s1, s0});
  ex::Expr raw = c.ctx.make_raw(ex::Kind::floor_div,
                                std::vector<ex::Expr>{c.ctx.make_raw(ex::Kind::add, std::vector<ex::Expr>{c.ctx.integer(1023), numel}),
                                                      c.ctx.integer(1024)});
  for (auto _ : state) benchmark::DoNotOptimize(ex::simplify(raw));
}
BENCHMARK(BM_SimplifyGrid);

// Building a grid with the canonical constructors: ceil_div(s0*s1, 1024).
void BM_BuildGrid(benchmark::State& state) {
  auto& c = corpus();
  ex::Expr s0 = c.ctx.symbol("s0"), s1 = c.ctx.symbol("s1"), block = c.ctx.integer(1024);
  for (auto _ : state) benchmark::DoNotOptimize(ex::ceil_div(s0 * s1, block));
}
BENCHMARK(BM_BuildGrid);

void BM_CheckedEval(benchmark::State& state) {
  auto& c = corpus();
  for (auto _ : state)
    for (ex::Expr e : c.exprs) benchmark::DoNotOptimize(ex::eval(e, c.bindings));
  per_expression(state);
}
BENCHMARK(BM_CheckedEval);

void BM_CompiledEval(benchmark::State& state) {
  auto& c = corpus();
  std::vector<ex::CompiledExpr> compiled;
  std::vector<std::vector<std::int64_t>> values;
  for (ex::Expr e : c.exprs) {
    compiled.push_back(ex::compile(e).value());
    values.emplace_back();
    for (ex::Expr s : compiled.back().symbols()) values.back().push_back(*c.bindings.get(s));
  }
  for (auto _ : state) {
    for (std::size_t i = 0; i < compiled.size(); ++i) {
      std::int64_t out = 0;
      benchmark::DoNotOptimize(compiled[i].try_eval(values[i], out));
      benchmark::DoNotOptimize(out);
    }
  }
  per_expression(state);
}
BENCHMARK(BM_CompiledEval);

void BM_CompiledEvalGrid(benchmark::State& state) {
  auto& c = corpus();
  const ex::CompiledExpr grid = ex::compile(c.exprs[0]).value();
  const std::int64_t values[] = {4096, 4096};
  for (auto _ : state) {
    std::int64_t out = 0;
    benchmark::DoNotOptimize(grid.try_eval(values, out));
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_CompiledEvalGrid);

void BM_PrintPython(benchmark::State& state) {
  auto& c = corpus();
  for (auto _ : state)
    for (ex::Expr e : c.exprs) benchmark::DoNotOptimize(ex::print_python(e));
  per_expression(state);
}
BENCHMARK(BM_PrintPython);

void BM_PrintCpp(benchmark::State& state) {
  auto& c = corpus();
  for (auto _ : state)
    for (ex::Expr e : c.exprs) benchmark::DoNotOptimize(ex::print_cpp(e));
  per_expression(state);
}
BENCHMARK(BM_PrintCpp);

void BM_Parse(benchmark::State& state) {
  auto& c = corpus();
  for (auto _ : state)
    for (const auto& t : corpus_text) benchmark::DoNotOptimize(ex::parse(c.ctx, t));
  per_expression(state);
}
BENCHMARK(BM_Parse);

// --- growth -------------------------------------------------------------------

/// `prefix` followed by `i` ("s42"). (Not `"s" + std::to_string(i)`: g++ 12
/// at -O3 warns about it, a false -Wrestrict.)
std::string numbered(const char* prefix, std::int64_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

std::string chain_text(std::int64_t n, const char* op, const char* before, const char* after) {
  std::string text;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) text += op;
    text += before;
    text += std::to_string(i);
    text += after;
  }
  return text;
}

/// Bytes the program holds from malloc, small blocks and mmapped ones.
std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

/// Parses `text` into a fresh context per iteration (the context's
/// construction and destruction are timed too: they are part of a load).
/// The growth series may pass 1 MiB: `max_length` is raised for them.
void parse_fresh(benchmark::State& state, const std::string& text, std::size_t max_length = std::size_t{1} << 20) {
  ex::ParseOptions options;
  options.max_length = max_length;
  std::size_t bytes = 0, nodes = 0;
  for (auto _ : state) {
    const std::size_t before = heap_in_use();
    auto ctx = std::make_unique<ex::Context>();
    auto r = ex::parse(*ctx, text, options);
    if (!r.has_value()) state.SkipWithError(r.error().to_string().c_str());
    benchmark::DoNotOptimize(r);
    bytes = heap_in_use() - before;
    nodes = ctx->size();
  }
  state.counters["bytes_per_node"] = static_cast<double>(bytes) / static_cast<double>(std::max<std::size_t>(nodes, 1));
  state.counters["input_bytes"] = static_cast<double>(text.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_GrowParseSum(benchmark::State& state) { parse_fresh(state, chain_text(state.range(0), " + ", "s", "")); }
BENCHMARK(BM_GrowParseSum)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GrowParseProduct(benchmark::State& state) { parse_fresh(state, chain_text(state.range(0), "*", "s", "")); }
BENCHMARK(BM_GrowParseProduct)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GrowParseFloorDivSum(benchmark::State& state) {
  parse_fresh(state, chain_text(state.range(0), " + ", "(s", " // 3)"), std::size_t{4} << 20);
}
BENCHMARK(BM_GrowParseFloorDivSum)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GrowParseMin(benchmark::State& state) { parse_fresh(state, "Min(" + chain_text(state.range(0), ", ", "s", "") + ")"); }
BENCHMARK(BM_GrowParseMin)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

/// 1 MB of `s0 + 7*s1 - s2 + ...` (distinct symbols, mixed coefficients).
void BM_GrowParseOneMegabyteSum(benchmark::State& state) {
  std::string text;
  for (std::int64_t i = 0; text.size() < (std::size_t{1} << 20) - 32; ++i) {
    text += i == 0 ? "" : i % 3 == 0 ? " - " : " + ";
    if (i % 5 == 0) text += std::to_string(i % 97) + "*";
    text += numbered("s", i);
  }
  parse_fresh(state, text);
}
BENCHMARK(BM_GrowParseOneMegabyteSum)->Arg(1)->Unit(benchmark::kMillisecond);

/// ~1 MB of literals that are multiples of 2^20 inside FloorDivs: their
/// structural hashes share the low bits that once chose a table slot.
void BM_GrowParseCollidingLiterals(benchmark::State& state) {
  std::string text;
  for (std::int64_t i = 1; text.size() < (std::size_t{1} << 20) - 64; ++i) {
    text += i == 1 ? "FloorDiv(s0, " : " + FloorDiv(s0, ";
    text += std::to_string(i << 20) + ")";
  }
  parse_fresh(state, text);
}
BENCHMARK(BM_GrowParseCollidingLiterals)->Arg(1)->Unit(benchmark::kMillisecond);

/// Hostile text of about 1 MB (or half, around a 0.5 MB sum): each must
/// parse or fail within about a second. Parsed with the default options, so
/// the limits (max_depth, max_lookups) are part of what is timed.
enum class Hostile { minus_before_sum, scaled_nesting, floor_div_chain, alternating_signs, like_terms, max_mixed };

std::string hostile_text(Hostile kind) {
  const std::size_t mb = (std::size_t{1} << 20) - 64;
  std::string half;  // s0 + s1 + ... of about 0.5 MB
  for (std::int64_t i = 0; half.size() < mb / 2; ++i) {
    half += i == 0 ? "s" : " + s";
    half += std::to_string(i);
  }
  std::string text;
  switch (kind) {
    case Hostile::minus_before_sum: return std::string(250, '-') + "(" + half + ")";
    case Hostile::scaled_nesting:
      text = std::string(120, '(') + half;
      for (int i = 0; i < 120; ++i) text += ")*3 + s1";
      return text;
    case Hostile::floor_div_chain:
      text = "(" + half + ")";
      for (int i = 0; i < 255; ++i) {
        text += "//";
        text += std::to_string(i % 7 + 2);
      }
      return text;
    case Hostile::alternating_signs:
      for (std::int64_t i = 0; text.size() < mb; ++i) {
        text += i == 0 ? "s" : " - s";
        text += std::to_string(i);
      }
      return text;
    case Hostile::like_terms:
      for (std::int64_t i = 0; text.size() < mb; ++i) {
        text += i == 0 ? "" : " + ";
        text += std::to_string(i % 9 + 1);
        text += "*x";
      }
      return text;
    case Hostile::max_mixed:
      text = "Max(";
      for (std::int64_t i = 0; text.size() < mb; ++i) {
        text += i == 0 ? "s" : ", s";
        text += std::to_string(i);
        text += i % 2 == 0 ? " // 2" : "";
      }
      return text + ")";
  }
  return text;
}

void BM_Hostile(benchmark::State& state, Hostile kind) {
  const std::string text = hostile_text(kind);
  bool parsed = false;
  for (auto _ : state) {
    auto ctx = std::make_unique<ex::Context>();
    auto r = ex::parse(*ctx, text);
    parsed = r.has_value();
    benchmark::DoNotOptimize(r);
  }
  state.counters["parsed"] = parsed ? 1 : 0;  // 0: stopped with a diagnostic
  state.counters["input_bytes"] = static_cast<double>(text.size());
}
BENCHMARK_CAPTURE(BM_Hostile, minus_before_sum, Hostile::minus_before_sum)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Hostile, scaled_nesting, Hostile::scaled_nesting)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Hostile, floor_div_chain, Hostile::floor_div_chain)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Hostile, alternating_signs, Hostile::alternating_signs)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Hostile, like_terms, Hostile::like_terms)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Hostile, max_mixed, Hostile::max_mixed)->Unit(benchmark::kMillisecond);

/// The n-ary constructors on n operands that exist already.
template <class Build>
void build_fresh(benchmark::State& state, Build&& build) {
  std::size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto ctx = std::make_unique<ex::Context>();
    std::vector<ex::Expr> operands;
    for (std::int64_t i = 0; i < state.range(0); ++i) operands.push_back(ctx->symbol(numbered("s", i)));
    std::reverse(operands.begin(), operands.end());  // not in canonical order
    const std::size_t before = heap_in_use();
    state.ResumeTiming();
    benchmark::DoNotOptimize(build(*ctx, operands));
    state.PauseTiming();
    bytes = heap_in_use() - before;
    ctx.reset();
    state.ResumeTiming();
  }
  state.counters["bytes_per_operand"] = static_cast<double>(bytes) / static_cast<double>(state.range(0));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_GrowAddSpan(benchmark::State& state) {
  build_fresh(state, [](ex::Context&, const std::vector<ex::Expr>& ops) { return ex::add(ops); });
}
BENCHMARK(BM_GrowAddSpan)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GrowMulSpan(benchmark::State& state) {
  build_fresh(state, [](ex::Context&, const std::vector<ex::Expr>& ops) { return ex::mul(ops); });
}
BENCHMARK(BM_GrowMulSpan)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GrowFloorDivSumSpan(benchmark::State& state) {
  build_fresh(state, [](ex::Context&, const std::vector<ex::Expr>& ops) {
    std::vector<ex::Expr> terms;
    terms.reserve(ops.size());
    for (ex::Expr s : ops) terms.push_back(ex::floor_div(s, 3));
    return ex::add(terms);
  });
}
BENCHMARK(BM_GrowFloorDivSumSpan)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

/// The cost model of folding with `+`: each step builds (and keeps) a sum
/// one term longer, so n steps cost O(n^2) time and memory.
void BM_GrowFoldPlus(benchmark::State& state) {
  build_fresh(state, [](ex::Context& ctx, const std::vector<ex::Expr>& ops) {
    ex::Expr s = ctx.integer(0);
    for (ex::Expr t : ops) s = s + t;
    return s;
  });
}
BENCHMARK(BM_GrowFoldPlus)->Arg(1000)->Arg(4000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
