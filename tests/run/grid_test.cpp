// Tests of include/wrapir/run/grid.hpp: every grid type of reference §4.1
// with hand-computed grids on both paths (expressions compiled and
// evaluated, and integers), the exact diagnostics of bad numels, block
// configurations and limits, the compiled grid's symbol handling, the
// constexpr core, and a seeded property test that the two paths agree on
// random numels and block configurations for every grid type (plus the
// covering laws of ceiling division and of the y-into-z split).

#include <wrapir/run/grid.hpp>

#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace doctest {
template <>
struct StringMaker<wrapir::run::Dim3> {
  static String convert(wrapir::run::Dim3 d) { return wrapir::run::to_string(d).c_str(); }
};
}  // namespace doctest

namespace {

namespace expr = wrapir::expr;
using namespace wrapir::run;
using wrapir::Result;
using wrapir::ir::BlockSize;
using wrapir::ir::ExplicitGrid;
using wrapir::ir::GridType;
using wrapir::ir::NamedExpr;
using wrapir::ir::TypedGrid;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

/// One grid to compute: numel values by name and a block configuration.
struct Case {
  GridType type = GridType::grid_1d;
  std::vector<std::pair<std::string, std::int64_t>> numels{};
  std::vector<BlockSize> block{};
};

/// Both paths on one case: the integer path, and the expression path with
/// every numel a non-negative symbol of its own name.
struct Paths {
  Result<Dim3> direct;
  Result<GridExprs> exprs;
  std::optional<Result<Dim3>> compiled{};  // when the expressions were built
  std::optional<bool> fast_ok{};
  Dim3 fast{};
};

Paths run_both(expr::Context& ctx, const Case& c) {
  std::vector<NamedInt> values;
  std::vector<NamedExpr> numels;
  for (const auto& [name, value] : c.numels) {
    values.push_back(NamedInt{name, value});
    numels.push_back(NamedExpr{name, ctx.symbol(name, expr::Assumption::nonnegative)});
  }
  Paths p{grid_dims(c.type, values, c.block), grid_exprs(ctx, c.type, numels, c.block)};
  if (!p.exprs) return p;
  const Result<CompiledGrid> compiled = compile_grid(*p.exprs);
  REQUIRE_MESSAGE(compiled.ok(), compiled.error().message);
  std::vector<std::int64_t> bound;
  for (const expr::Expr s : compiled->symbols()) {
    for (const auto& [name, value] : c.numels)
      if (name == s.name()) bound.push_back(value);
  }
  REQUIRE(bound.size() == compiled->symbols().size());
  p.compiled = compiled->eval(bound);
  p.fast_ok = compiled->try_eval(bound, p.fast);
  return p;
}

/// The grid of `c`, checked to be the same on both paths.
Dim3 grid_of(const Case& c) {
  expr::Context ctx;
  const Paths p = run_both(ctx, c);
  REQUIRE_MESSAGE(p.direct.ok(), p.direct.error().message);
  REQUIRE_MESSAGE(p.exprs.ok(), p.exprs.error().message);
  REQUIRE_MESSAGE(p.compiled->ok(), p.compiled->error().message);
  CHECK(**p.compiled == *p.direct);
  CHECK(*p.fast_ok);
  CHECK(p.fast == *p.direct);
  return *p.direct;
}

/// The diagnostic of a configuration error, checked to be the same text on
/// both paths (the expressions are never built).
std::string config_error(const Case& c) {
  expr::Context ctx;
  const Paths p = run_both(ctx, c);
  REQUIRE_FALSE(p.direct.ok());
  REQUIRE_FALSE(p.exprs.ok());
  CHECK(p.exprs.error().message == p.direct.error().message);
  return p.direct.error().message;
}

/// The diagnostics of a grid that builds but cannot launch: {integer path,
/// compiled path}; the fast path must fail too.
std::pair<std::string, std::string> launch_error(const Case& c) {
  expr::Context ctx;
  const Paths p = run_both(ctx, c);
  REQUIRE_MESSAGE(p.exprs.ok(), p.exprs.error().message);
  REQUIRE_FALSE(p.direct.ok());
  REQUIRE_FALSE(p.compiled->ok());
  CHECK_FALSE(*p.fast_ok);
  return {p.direct.error().message, p.compiled->error().message};
}

// ---------------------------------------------------------------------------
// Dim3
// ---------------------------------------------------------------------------

TEST_CASE("grid: Dim3 prints as (x, y, z), and a zero dimension means do not launch") {
  CHECK(Dim3{} == Dim3{1, 1, 1});
  CHECK_FALSE(Dim3{}.empty());
  CHECK(Dim3{0, 1, 1}.empty());
  CHECK(Dim3{1, 0, 1}.empty());
  CHECK(Dim3{1, 1, 0}.empty());
  CHECK(to_string(Dim3{8, 1, 4294967295U}) == "(8, 1, 4294967295)");
}

// ---------------------------------------------------------------------------
// Every grid type, by hand
// ---------------------------------------------------------------------------

TEST_CASE("grid: Grid1D divides xnumel by XBLOCK, rounding up") {
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 1000}}, {{"XBLOCK", 128}}}) == Dim3{8, 1, 1});
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 1024}}, {{"XBLOCK", 1024}}}) == Dim3{1, 1, 1});
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 1025}}, {{"XBLOCK", 1024}}}) == Dim3{2, 1, 1});
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 1}}, {{"XBLOCK", 1024}}}) == Dim3{1, 1, 1});
  // XBLOCK 1 (Inductor's absent block) launches one block per element.
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 1000}}, {{"XBLOCK", 1}}}) == Dim3{1000, 1, 1});
  // Entries the grid does not read are ignored.
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 1000}, {"r0_numel", 7}}, {{"R0_BLOCK", 8}, {"XBLOCK", 100}}}) ==
        Dim3{10, 1, 1});
}

TEST_CASE("grid: a zero numel gives an empty grid, which must not be launched") {
  const Dim3 g = grid_of({GridType::grid_1d, {{"xnumel", 0}}, {{"XBLOCK", 128}}});
  CHECK(g == Dim3{0, 1, 1});
  CHECK(g.empty());
  CHECK(grid_of({GridType::grid_2d, {{"xnumel", 10}, {"ynumel", 0}}, {{"XBLOCK", 4}, {"YBLOCK", 4}}}).empty());
}

TEST_CASE("grid: Grid2D and Grid3D divide each numel by its block") {
  CHECK(grid_of({GridType::grid_2d, {{"xnumel", 100}, {"ynumel", 70}}, {{"XBLOCK", 32}, {"YBLOCK", 16}}}) ==
        Dim3{4, 5, 1});
  CHECK(grid_of({GridType::grid_3d,
                 {{"xnumel", 10}, {"ynumel", 9}, {"znumel", 15}},
                 {{"XBLOCK", 4}, {"YBLOCK", 2}, {"ZBLOCK", 4}}}) == Dim3{3, 5, 4});
}

TEST_CASE("grid: BatchMatmulGrid3D swaps x and z") {
  const Case c{GridType::batch_matmul_grid_3d,
               {{"xnumel", 10}, {"ynumel", 9}, {"znumel", 15}},
               {{"XBLOCK", 4}, {"YBLOCK", 2}, {"ZBLOCK", 4}}};
  CHECK(grid_of(c) == Dim3{4, 5, 3});
  expr::Context ctx;
  const expr::Expr xnumel = ctx.symbol("xnumel");
  const expr::Expr znumel = ctx.symbol("znumel");
  const std::vector<NamedExpr> numels{{"xnumel", xnumel}, {"ynumel", ctx.symbol("ynumel")}, {"znumel", znumel}};
  const Result<GridExprs> g = grid_exprs(ctx, c.type, numels, c.block);
  REQUIRE(g.ok());
  CHECK(g->x == expr::ceil_div(znumel, 4));
  CHECK(g->z == expr::ceil_div(xnumel, 4));
}

TEST_CASE("grid: Grid2DWithYZOverflow splits a y over max_y_grid into y x z") {
  // 200000 y blocks: 4 slices (3 * 65535 < 200000) of 50000 blocks.
  CHECK(grid_of({GridType::grid_2d_with_yz_overflow,
                 {{"xnumel", 256}, {"ynumel", 200000}},
                 {{"XBLOCK", 64}, {"YBLOCK", 1}}}) == Dim3{4, 50000, 4});
  // The same through YBLOCK 2.
  CHECK(grid_of({GridType::grid_2d_with_yz_overflow,
                 {{"xnumel", 256}, {"ynumel", 400000}},
                 {{"XBLOCK", 64}, {"YBLOCK", 2}}}) == Dim3{4, 50000, 4});
  // Exactly the limit stays in y.
  CHECK(grid_of({GridType::grid_2d_with_yz_overflow,
                 {{"xnumel", 1}, {"ynumel", 65535}},
                 {{"XBLOCK", 1}, {"YBLOCK", 1}}}) == Dim3{1, 65535, 1});
  CHECK(grid_of({GridType::grid_2d_with_yz_overflow,
                 {{"xnumel", 1}, {"ynumel", 65536}},
                 {{"XBLOCK", 1}, {"YBLOCK", 1}}}) == Dim3{1, 32768, 2});
  // Small y: no split.
  CHECK(grid_of({GridType::grid_2d_with_yz_overflow,
                 {{"xnumel", 256}, {"ynumel", 1000}},
                 {{"XBLOCK", 64}, {"YBLOCK", 8}}}) == Dim3{4, 125, 1});
  // max_y_grid from the block configuration: 125 blocks over at most 100.
  CHECK(grid_of({GridType::grid_2d_with_yz_overflow,
                 {{"xnumel", 256}, {"ynumel", 1000}},
                 {{"XBLOCK", 64}, {"YBLOCK", 8}, {"max_y_grid", 100}}}) == Dim3{4, 63, 2});
  // No y blocks: y and z are 0 (Inductor's guarded division), not launched.
  const Dim3 empty = grid_of(
      {GridType::grid_2d_with_yz_overflow, {{"xnumel", 256}, {"ynumel", 0}}, {{"XBLOCK", 64}, {"YBLOCK", 8}}});
  CHECK(empty == Dim3{4, 0, 0});
  CHECK(empty.empty());
}

TEST_CASE("grid: MixOrderReductionGrid divides xnumel by RSPLIT_SIZE") {
  CHECK(grid_of({GridType::mix_order_reduction, {{"xnumel", 1000}}, {{"RSPLIT_SIZE", 64}, {"XBLOCK", 16}}}) ==
        Dim3{16, 1, 1});
  CHECK(config_error({GridType::mix_order_reduction, {{"xnumel", 1000}}, {{"RSPLIT_SIZE", 96}, {"XBLOCK", 64}}}) ==
        "MixOrderReductionGrid: RSPLIT_SIZE 96 is not a multiple of XBLOCK 64");
  CHECK(config_error({GridType::mix_order_reduction, {{"xnumel", 1000}}, {{"RSPLIT_SIZE", 64}}}) ==
        "MixOrderReductionGrid: missing block size 'XBLOCK' (where Inductor's config has none, write XBLOCK 1)");
  CHECK(config_error({GridType::mix_order_reduction, {{"xnumel", 1000}}, {{"XBLOCK", 8}}}) ==
        "MixOrderReductionGrid: missing block size 'RSPLIT_SIZE'");
}

TEST_CASE("grid: CooperativeReductionGrid puts RSPLIT in x and the x blocks in y") {
  CHECK(grid_of({GridType::cooperative_reduction, {{"xnumel", 100}}, {{"RSPLIT", 8}, {"XBLOCK", 8}}}) ==
        Dim3{8, 13, 1});
  CHECK(config_error({GridType::cooperative_reduction, {{"xnumel", 100}}, {{"XBLOCK", 8}}}) ==
        "CooperativeReductionGrid: missing block size 'RSPLIT'");
  CHECK(config_error({GridType::cooperative_reduction, {{"xnumel", 100}}, {{"RSPLIT", 0}, {"XBLOCK", 8}}}) ==
        "CooperativeReductionGrid: block size 'RSPLIT' is 0; it must be positive");
}

TEST_CASE("grid: SplitScanGrid scans r0 blocks in x with one row per y block") {
  CHECK(grid_of({GridType::split_scan, {{"xnumel", 7}, {"r0_numel", 10000}}, {{"R0_BLOCK", 1024}}}) ==
        Dim3{10, 7, 1});
  CHECK(grid_of({GridType::split_scan, {{"xnumel", 7}, {"r0_numel", 10000}}, {{"R0_BLOCK", 1024}, {"XBLOCK", 1}}}) ==
        Dim3{10, 7, 1});
  CHECK(config_error({GridType::split_scan, {{"xnumel", 7}, {"r0_numel", 10000}}, {{"R0_BLOCK", 1024}, {"XBLOCK", 4}}}) ==
        "SplitScanGrid: XBLOCK must be 1, got 4");
  CHECK(config_error({GridType::split_scan, {{"xnumel", 7}}, {{"R0_BLOCK", 1024}}}) ==
        "SplitScanGrid: missing numel 'r0_numel'");
}

TEST_CASE("grid: SequentialComboKernelGrid sums the sub-kernels' x blocks") {
  // 8 blocks for sub-kernel 0, and sub-kernel 1 has no x dimension: 100.
  CHECK(grid_of({GridType::sequential_combo,
                 {{"xnumel_0", 1000}, {"xnumel_1", 100}},
                 {{"XBLOCK", 128}, {"no_x_dim_1", 1}}}) == Dim3{108, 1, 1});
  CHECK(grid_of({GridType::sequential_combo, {{"xnumel_0", 1000}, {"xnumel_1", 100}}, {{"XBLOCK", 128}}}) ==
        Dim3{9, 1, 1});
  // y from the largest ynumel.
  CHECK(grid_of({GridType::sequential_combo,
                 {{"xnumel_0", 1000}, {"xnumel_1", 100}, {"ynumel_0", 300}, {"ynumel_1", 50}},
                 {{"XBLOCK", 128}, {"YBLOCK", 16}, {"no_x_dim_1", 1}}}) == Dim3{108, 19, 1});
  // min_blocks raises x.
  CHECK(grid_of({GridType::sequential_combo,
                 {{"xnumel_0", 1000}, {"xnumel_1", 100}},
                 {{"XBLOCK", 128}, {"no_x_dim_1", 1}, {"min_blocks", 200}}}) == Dim3{200, 1, 1});
  CHECK(grid_of({GridType::sequential_combo,
                 {{"xnumel_0", 1000}, {"xnumel_1", 100}},
                 {{"XBLOCK", 128}, {"no_x_dim_1", 1}, {"min_blocks", 50}}}) == Dim3{108, 1, 1});
  // Every sub-kernel without an x dimension: XBLOCK is not needed.
  CHECK(grid_of({GridType::sequential_combo, {{"xnumel_0", 3}}, {{"no_x_dim_0", 1}}}) == Dim3{3, 1, 1});
  // A large y splits into z as Grid2DWithYZOverflow does.
  CHECK(grid_of({GridType::sequential_combo,
                 {{"xnumel_0", 64}, {"ynumel_0", 200000}},
                 {{"XBLOCK", 64}, {"YBLOCK", 1}}}) == Dim3{1, 50000, 4});
}

TEST_CASE("grid: RoundRobinComboKernelGrid gives every sub-kernel the most blocks any needs") {
  CHECK(grid_of({GridType::round_robin_combo, {{"xnumel_0", 1000}, {"xnumel_1", 300}}, {{"XBLOCK", 128}}}) ==
        Dim3{16, 1, 1});
  // max(20, ceil(1000 / 128) = 8) * 2.
  CHECK(grid_of({GridType::round_robin_combo,
                 {{"xnumel_0", 1000}, {"xnumel_1", 20}},
                 {{"XBLOCK", 128}, {"no_x_dim_1", 1}}}) == Dim3{40, 1, 1});
  CHECK(grid_of({GridType::round_robin_combo,
                 {{"xnumel_0", 1000}, {"xnumel_1", 20}, {"xnumel_2", 5}, {"ynumel_2", 40}},
                 {{"XBLOCK", 128}, {"YBLOCK", 16}, {"min_blocks", 100}}}) == Dim3{100, 3, 1});
}

TEST_CASE("grid: SequentialFlattenComboKernelGrid folds each sub-kernel's y blocks into x") {
  // Sub-kernel 0: ceil(1000/128) * ceil(33/16) = 8 * 3; sub-kernel 1: ceil(500/64) = 8 (shared XBLOCK).
  CHECK(grid_of({GridType::sequential_flatten_combo,
                 {{"xnumel_0", 1000}, {"ynumel_0", 33}, {"xnumel_1", 500}},
                 {{"XBLOCK_0", 128}, {"XBLOCK", 64}, {"YBLOCK", 16}}}) == Dim3{32, 1, 1});
  CHECK(grid_of({GridType::sequential_flatten_combo,
                 {{"xnumel_0", 1000}, {"ynumel_0", 33}, {"xnumel_1", 500}, {"ynumel_1", 7}},
                 {{"XBLOCK_0", 128}, {"XBLOCK_1", 500}, {"YBLOCK_0", 33}, {"YBLOCK_1", 2}}}) == Dim3{12, 1, 1});
  CHECK(grid_of({GridType::sequential_flatten_combo,
                 {{"xnumel_0", 6}, {"ynumel_0", 10}},
                 {{"no_x_dim_0", 1}, {"YBLOCK_0", 4}}}) == Dim3{18, 1, 1});
  CHECK(config_error({GridType::sequential_flatten_combo, {{"xnumel_0", 1000}, {"xnumel_1", 500}}, {{"XBLOCK_0", 8}}}) ==
        "SequentialFlattenComboKernelGrid: missing block size 'XBLOCK_1' and the shared 'XBLOCK' it defaults to");
}

TEST_CASE("grid: FixedGrid and PrecomputedGrid ask for an explicit grid") {
  CHECK(config_error({GridType::fixed, {{"xnumel", 10}}, {{"XBLOCK", 8}}}) ==
        "FixedGrid: the grid is the launcher's extra arguments _grid_0, _grid_1, _grid_2, which a typed grid does "
        "not carry; give the call an ExplicitGrid with their values");
  CHECK(config_error({GridType::precomputed, {}, {}}) ==
        "PrecomputedGrid: the grid is an expression per autotuning config, recorded in the kernel's metadata "
        "(precomputed_grids), which a typed grid does not carry; give the call an ExplicitGrid with the chosen "
        "config's expressions");
}

TEST_CASE("grid: the expressions are Inductor's ceiling divisions") {
  expr::Context ctx;
  const expr::Expr xnumel = ctx.symbol("xnumel");
  const std::vector<NamedExpr> numels{{"xnumel", xnumel}};
  const std::vector<BlockSize> block{{"XBLOCK", 1024}};
  const Result<GridExprs> g = grid_exprs(ctx, TypedGrid{GridType::grid_1d, numels, block});
  REQUIRE(g.ok());
  CHECK(expr::print_python(g->x) == "-((xnumel) // -(1024))");
  CHECK(g->y == ctx.integer(1));
  CHECK(g->z == ctx.integer(1));
  // Block 1: the numel itself, no division.
  const std::vector<BlockSize> one{{"XBLOCK", 1}};
  CHECK(grid_exprs(ctx, GridType::grid_1d, numels, one)->x == xnumel);
  // Literal numels fold.
  const std::vector<NamedExpr> literal{{"xnumel", ctx.integer(1000)}};
  const std::vector<BlockSize> b128{{"XBLOCK", 128}};
  CHECK(grid_exprs(ctx, GridType::grid_1d, literal, b128)->x == ctx.integer(8));
}

// ---------------------------------------------------------------------------
// Bad numels and block configurations
// ---------------------------------------------------------------------------

TEST_CASE("grid: a missing, repeated or bad numel or block size is a diagnostic naming it") {
  CHECK(config_error({GridType::grid_2d, {{"xnumel", 10}}, {{"XBLOCK", 8}, {"YBLOCK", 8}}}) ==
        "Grid2D: missing numel 'ynumel'");
  CHECK(config_error({GridType::grid_1d, {{"xnumel", 10}}, {}}) ==
        "Grid1D: missing block size 'XBLOCK' (where Inductor's config has none, write XBLOCK 1)");
  CHECK(config_error({GridType::grid_3d, {{"xnumel", 1}, {"ynumel", 1}, {"znumel", 1}}, {{"XBLOCK", 1}, {"YBLOCK", 1}}}) ==
        "Grid3D: missing block size 'ZBLOCK' (where Inductor's config has none, write ZBLOCK 1)");
  CHECK(config_error({GridType::grid_1d, {{"xnumel", 10}}, {{"XBLOCK", 0}}}) ==
        "Grid1D: block size 'XBLOCK' is 0; it must be positive");
  CHECK(config_error({GridType::grid_1d, {{"xnumel", 10}}, {{"XBLOCK", -128}}}) ==
        "Grid1D: block size 'XBLOCK' is -128; it must be positive");
  CHECK(config_error({GridType::grid_1d, {{"xnumel", 10}}, {{"XBLOCK", 8}, {"XBLOCK", 16}}}) ==
        "Grid1D: block size 'XBLOCK' is given more than once");
  CHECK(config_error({GridType::grid_2d_with_yz_overflow,
                      {{"xnumel", 10}, {"ynumel", 10}},
                      {{"XBLOCK", 8}, {"YBLOCK", 8}, {"max_y_grid", 0}}}) ==
        "Grid2DWithYZOverflow: block size 'max_y_grid' is 0; it must be positive");
  CHECK(config_error({static_cast<GridType>(200), {}, {}}) == "grid type 200 is not a GridType");

  // Names that can only be wrong on one path.
  CHECK(grid_dims(GridType::grid_1d, std::vector<NamedInt>{{"xnumel", 1}, {"xnumel", 2}},
                  std::vector<NamedInt>{{"XBLOCK", 1}})
            .error()
            .message == "Grid1D: numel 'xnumel' is given more than once");
  expr::Context ctx;
  expr::Context other;
  const std::vector<BlockSize> block{{"XBLOCK", 8}};
  CHECK(grid_exprs(ctx, GridType::grid_1d, std::vector<NamedExpr>{{"xnumel", expr::Expr{}}}, block).error().message ==
        "Grid1D: numel 'xnumel' is a null expression");
  CHECK(grid_exprs(ctx, GridType::grid_1d, std::vector<NamedExpr>{{"xnumel", other.symbol("s0")}}, block)
            .error()
            .message == "Grid1D: numel 'xnumel' belongs to another expression context than the grid's");
}

TEST_CASE("grid: combo grids check their sub-kernels") {
  CHECK(config_error({GridType::sequential_combo, {{"xnumel", 10}}, {{"XBLOCK", 8}}}) ==
        "SequentialComboKernelGrid: no sub-kernel numels; expected xnumel_0, xnumel_1, ...");
  CHECK(config_error({GridType::round_robin_combo, {{"xnumel_0", 10}, {"xnumel_2", 10}}, {{"XBLOCK", 8}}}) ==
        "RoundRobinComboKernelGrid: missing numel 'xnumel_1'");
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_0", 10}, {"ynumel_3", 10}}, {{"XBLOCK", 8}}}) ==
        "SequentialComboKernelGrid: numel 'ynumel_3' names sub-kernel 3, but the grid has 1 (xnumel_0 to xnumel_0)");
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_0", 10}, {"znumel_0", 10}}, {{"XBLOCK", 8}}}) ==
        "SequentialComboKernelGrid: numel 'znumel_0': combo grids with a z dimension are not supported (z carries "
        "the y overflow); give the call an ExplicitGrid");
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_0", 10}}, {{"XBLOCK", 8}, {"no_x_dim_0", 2}}}) ==
        "SequentialComboKernelGrid: 'no_x_dim_0' is 2; it must be 0 or 1");
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_0", 10}}, {{"XBLOCK", 8}, {"min_blocks", -1}}}) ==
        "SequentialComboKernelGrid: 'min_blocks' is -1; it must not be negative");
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_0", 10}, {"ynumel_0", 10}}, {{"XBLOCK", 8}}}) ==
        "SequentialComboKernelGrid: missing block size 'YBLOCK' (where Inductor's config has none, write YBLOCK 1)");
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_0", 10}, {"xnumel_0", 10}}, {{"XBLOCK", 8}}}) ==
        "SequentialComboKernelGrid: numel 'xnumel_0' is given more than once");
  // Names that only look indexed are not sub-kernels.
  CHECK(config_error({GridType::sequential_combo, {{"xnumel_01", 10}, {"xnumel_x", 1}}, {{"XBLOCK", 8}}}) ==
        "SequentialComboKernelGrid: no sub-kernel numels; expected xnumel_0, xnumel_1, ...");
}

// ---------------------------------------------------------------------------
// Limits and overflow
// ---------------------------------------------------------------------------

TEST_CASE("grid: a grid over the device's limits is a diagnostic, never a truncated launch") {
  // 2^31 - 1 blocks in x is the limit; one more is refused.
  CHECK(grid_of({GridType::grid_1d, {{"xnumel", 2147483647LL * 128}}, {{"XBLOCK", 128}}}) ==
        Dim3{2147483647U, 1, 1});
  auto [direct, compiled] = launch_error({GridType::grid_1d, {{"xnumel", 2147483648LL * 128}}, {{"XBLOCK", 128}}});
  CHECK(direct ==
        "Grid1D: grid x is 2147483648, above the limit of 2147483647 blocks; the launch cannot run as one grid");
  CHECK(compiled == "grid x is 2147483648, above the limit of 2147483647 blocks; the launch cannot run as one grid");

  CHECK(grid_of({GridType::grid_2d, {{"xnumel", 1}, {"ynumel", 65535}}, {{"XBLOCK", 1}, {"YBLOCK", 1}}}) ==
        Dim3{1, 65535, 1});
  std::tie(direct, compiled) =
      launch_error({GridType::grid_2d, {{"xnumel", 1}, {"ynumel", 65536}}, {{"XBLOCK", 1}, {"YBLOCK", 1}}});
  CHECK(direct == "Grid2D: grid y is 65536, above the limit of 65535 blocks; the launch cannot run as one grid");
  CHECK(compiled == "grid y is 65536, above the limit of 65535 blocks; the launch cannot run as one grid");

  // Splitting y into z only helps up to 65535 * 65535 blocks.
  std::tie(direct, compiled) = launch_error({GridType::grid_2d_with_yz_overflow,
                                             {{"xnumel", 1}, {"ynumel", 65535LL * 65536}},
                                             {{"XBLOCK", 1}, {"YBLOCK", 1}}});
  CHECK(direct ==
        "Grid2DWithYZOverflow: grid z is 65536, above the limit of 65535 blocks; the launch cannot run as one grid");

  // SplitScanGrid puts xnumel itself in y.
  std::tie(direct, compiled) =
      launch_error({GridType::split_scan, {{"xnumel", 70000}, {"r0_numel", 10}}, {{"R0_BLOCK", 16}}});
  CHECK(compiled == "grid y is 70000, above the limit of 65535 blocks; the launch cannot run as one grid");
}

TEST_CASE("grid: negative dimensions and overflow are diagnostics naming the dimension") {
  // A numel of unknown sign (an integer symbol) can make a negative grid.
  expr::Context ctx;
  const std::vector<NamedExpr> numels{{"xnumel", ctx.symbol("n", expr::Assumption::integer)}};
  const std::vector<BlockSize> block{{"XBLOCK", 4}};
  const Result<CompiledGrid> g = compile_grid(ctx, TypedGrid{GridType::grid_1d, numels, block});
  REQUIRE(g.ok());
  const std::array<std::int64_t, 1> negative{-9};
  CHECK(g->eval(negative).error().message == "grid x is -2, which is negative");
  CHECK(grid_dims(GridType::grid_1d, std::vector<NamedInt>{{"xnumel", -9}}, block).error().message ==
        "Grid1D: grid x is -2, which is negative");

  // (numel + XBLOCK - 1) leaves int64 on both paths, as Inductor's C++ would.
  auto [direct, compiled] = launch_error({GridType::grid_1d, {{"xnumel", int64_max}}, {{"XBLOCK", 2}}});
  CHECK(direct == "Grid1D: integer overflow while computing grid x");
  CHECK(compiled == "grid x: integer overflow: the value of `xnumel + 1` does not fit in int64");
  std::tie(direct, compiled) = launch_error({GridType::sequential_flatten_combo,
                                             {{"xnumel_0", std::int64_t{1} << 40}, {"ynumel_0", std::int64_t{1} << 40}},
                                             {{"XBLOCK", 1}, {"YBLOCK", 1}}});
  CHECK(direct == "SequentialFlattenComboKernelGrid: integer overflow while computing grid x");
}

TEST_CASE("grid: other limits can be given, and must be valid") {
  const GridLimits small{1000, 10, 10};
  const std::vector<NamedInt> numels{{"xnumel", 100}, {"ynumel", 11}};
  const std::vector<NamedInt> block{{"XBLOCK", 1}, {"YBLOCK", 1}};
  CHECK(grid_dims(GridType::grid_2d, numels, block, small).error().message ==
        "Grid2D: grid y is 11, above the limit of 10 blocks; the launch cannot run as one grid");
  CHECK(grid_dims(GridType::grid_2d, numels, block, GridLimits{1000, 0, 10}).error().message ==
        "Grid2D: the grid limit for y is 0; limits must lie in [1, 4294967295]");
  expr::Context ctx;
  const GridExprs g{ctx.symbol("s0"), ctx.integer(1), ctx.integer(1)};
  CHECK(compile_grid(g, GridLimits{std::int64_t{1} << 32, 1, 1}).error().message ==
        "the grid limit for x is 4294967296; limits must lie in [1, 4294967295]");
  const Result<CompiledGrid> c = compile_grid(g, small);
  REQUIRE(c.ok());
  CHECK(c->limits() == small);
  CHECK(*c->eval(std::array<std::int64_t, 1>{1000}) == Dim3{1000, 1, 1});
  CHECK(c->eval(std::array<std::int64_t, 1>{1001}).error().message ==
        "grid x is 1001, above the limit of 1000 blocks; the launch cannot run as one grid");
}

// ---------------------------------------------------------------------------
// Compiled grids
// ---------------------------------------------------------------------------

TEST_CASE("grid: a compiled grid reads the union of its dimensions' symbols in name order") {
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0");
  const expr::Expr s1 = ctx.symbol("s1");
  const expr::Expr s10 = ctx.symbol("s10");
  const expr::Expr s2 = ctx.symbol("s2");
  // x reads s0 and s10; y reads s2 and s1; z none.
  const std::vector<NamedExpr> numels{{"xnumel", s10 * s0}, {"ynumel", s2 + s1}};
  const std::vector<BlockSize> block{{"XBLOCK", 64}, {"YBLOCK", 2}};
  const Result<CompiledGrid> g = compile_grid(ctx, TypedGrid{GridType::grid_2d, numels, block});
  REQUIRE(g.ok());
  REQUIRE(g->symbols().size() == 4);
  CHECK(g->symbols()[0] == s0);
  CHECK(g->symbols()[1] == s1);
  CHECK(g->symbols()[2] == s2);
  CHECK(g->symbols()[3] == s10);
  CHECK(g->symbol_index("s10") == 3);
  CHECK(g->symbol_index("s3") == std::nullopt);
  // s0 = 10, s1 = 3, s2 = 4, s10 = 100: x = ceil(1000 / 64) = 16, y = ceil(7 / 2) = 4.
  const std::array<std::int64_t, 4> values{10, 3, 4, 100};
  CHECK(*g->eval(values) == Dim3{16, 4, 1});
  Dim3 fast;
  CHECK(g->try_eval(values, fast));
  CHECK(fast == Dim3{16, 4, 1});

  // Wrong number of values.
  const std::array<std::int64_t, 3> short_values{1, 2, 3};
  CHECK(g->eval(short_values).error().message == "the grid reads 4 symbol values (s0, s1, s2, s10), got 3");
  CHECK_FALSE(g->try_eval(short_values, fast));
  // A positive symbol bound to 0 breaks its assumption.
  const std::array<std::int64_t, 4> zero{0, 3, 4, 100};
  const Result<Dim3> broken = g->eval(zero);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message.starts_with("grid x: "));
  CHECK_FALSE(g->try_eval(zero, fast));
}

TEST_CASE("grid: explicit grids compile, and must be whole") {
  expr::Context ctx;
  const expr::Expr s0 = ctx.symbol("s0");
  const Result<CompiledGrid> g = compile_grid(ExplicitGrid{s0 + 1, ctx.integer(2), expr::ceil_div(s0, 8)});
  REQUIRE(g.ok());
  CHECK(*g->eval(std::array<std::int64_t, 1>{17}) == Dim3{18, 2, 3});
  CHECK(compile_grid(ExplicitGrid{s0, expr::Expr{}, s0}).error().message == "grid y is a null expression");
  expr::Context other;
  CHECK(compile_grid(ExplicitGrid{s0, other.integer(1), s0}).error().message ==
        "the grid's dimensions belong to different expression contexts");
  // A constant grid reads nothing.
  const Result<CompiledGrid> constant = compile_grid(ExplicitGrid{ctx.integer(4), ctx.integer(5), ctx.integer(6)});
  REQUIRE(constant.ok());
  CHECK(constant->symbols().empty());
  CHECK(*constant->eval({}) == Dim3{4, 5, 6});
}

// ---------------------------------------------------------------------------
// constexpr
// ---------------------------------------------------------------------------

constexpr std::array<NamedInt, 2> static_numels{{{"xnumel", 1000}, {"ynumel", 200000}}};
constexpr std::array<NamedInt, 2> static_block{{{"XBLOCK", 128}, {"YBLOCK", 1}}};
static_assert(compute_grid_dims(GridType::grid_1d, static_numels, static_block).dims == Dim3{8, 1, 1});
static_assert(compute_grid_dims(GridType::grid_2d_with_yz_overflow, static_numels, static_block).dims ==
              Dim3{8, 50000, 4});
static_assert(compute_grid_dims(GridType::grid_2d, static_numels, static_block).error.kind ==
              GridErrorKind::dimension_over_limit);
static_assert(compute_grid_dims(GridType::grid_3d, static_numels, static_block).error.kind ==
              GridErrorKind::missing_numel);

TEST_CASE("grid: the integer core is constexpr and reports errors as data") {
  constexpr GridOutcome r = compute_grid_dims(GridType::grid_2d, static_numels, static_block);
  static_assert(!r.ok());
  CHECK(r.error.dimension == 'y');
  CHECK(r.error.value == 200000);
  CHECK(r.error.other == 65535);
  CHECK(describe(GridType::grid_2d, r.error) ==
        "Grid2D: grid y is 200000, above the limit of 65535 blocks; the launch cannot run as one grid");
  CHECK(error_subject(GridError{.kind = GridErrorKind::missing_numel, .name = "xnumel", .index = 3}) == "xnumel_3");
}

// ---------------------------------------------------------------------------
// Property: both paths agree
// ---------------------------------------------------------------------------

/// Random numels and block configurations for one grid type, mostly valid,
/// sometimes missing or bad, with numels from 0 to near 2^62.
class CaseGenerator {
 public:
  explicit CaseGenerator(std::uint64_t seed) : rng_(seed) {}

  Case make(GridType type) {
    Case c{type, {}, {}};
    using G = GridType;
    switch (type) {
      case G::grid_1d: numels(c, {"xnumel"});
        blocks(c, {"XBLOCK"}); break;
      case G::grid_2d: numels(c, {"xnumel", "ynumel"});
        blocks(c, {"XBLOCK", "YBLOCK"}); break;
      case G::grid_3d:
      case G::batch_matmul_grid_3d:
        numels(c, {"xnumel", "ynumel", "znumel"});
        blocks(c, {"XBLOCK", "YBLOCK", "ZBLOCK"});
        break;
      case G::grid_2d_with_yz_overflow:
        numels(c, {"xnumel", "ynumel"});
        blocks(c, {"XBLOCK", "YBLOCK"});
        if (chance(4)) c.block.push_back({"max_y_grid", pick({1, 2, 7, 100, 1000, 65535})});
        break;
      case G::mix_order_reduction: {
        numels(c, {"xnumel"});
        const std::int64_t xblock = block_size();
        c.block.push_back({"XBLOCK", xblock});
        c.block.push_back({"RSPLIT_SIZE", chance(8) ? block_size() : xblock * pick({1, 2, 3, 8})});
        break;
      }
      case G::cooperative_reduction:
        numels(c, {"xnumel"});
        blocks(c, {"XBLOCK"});
        if (!chance(20)) c.block.push_back({"RSPLIT", pick({1, 2, 4, 8, 16, 64})});
        break;
      case G::split_scan:
        numels(c, {"xnumel", "r0_numel"});
        blocks(c, {"R0_BLOCK"});
        if (chance(3)) c.block.push_back({"XBLOCK", chance(4) ? 2 : 1});
        break;
      case G::sequential_combo:
      case G::round_robin_combo:
      case G::sequential_flatten_combo: combo(c); break;
      case G::fixed:
      case G::precomputed: break;
    }
    return c;
  }

 private:
  bool chance(int one_in) { return std::uniform_int_distribution<int>(0, one_in - 1)(rng_) == 0; }
  std::int64_t pick(std::initializer_list<std::int64_t> options) {
    const auto i = std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(rng_);
    return *(options.begin() + static_cast<std::ptrdiff_t>(i));
  }
  std::int64_t up_to(std::int64_t max) { return std::uniform_int_distribution<std::int64_t>(0, max)(rng_); }

  std::int64_t numel_value() {
    switch (up_to(9)) {
      case 0: return pick({0, 1, 2});
      case 1: return up_to(std::int64_t{1} << 40);
      case 2: return up_to(std::int64_t{1} << 62);
      case 3: return int64_max - up_to(4096);
      default: return up_to(std::int64_t{1} << up_to(24));
    }
  }
  std::int64_t block_size() {
    if (chance(30)) return pick({0, -1, -64});
    return chance(4) ? up_to(5000) + 1 : pick({1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048});
  }

  void numels(Case& c, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (!chance(40)) c.numels.emplace_back(n, numel_value());
  }
  void blocks(Case& c, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (!chance(40)) c.block.push_back({n, block_size()});
  }

  void combo(Case& c) {
    const std::int64_t count = up_to(3) + 1;
    for (std::int64_t i = 0; i < count; ++i) {
      const std::string k = std::to_string(i);
      if (!chance(50)) c.numels.emplace_back("xnumel_" + k, numel_value());
      if (chance(2)) c.numels.emplace_back("ynumel_" + k, numel_value());
      if (chance(3)) c.block.push_back({"no_x_dim_" + k, chance(20) ? 2 : up_to(1)});
      if (chance(3)) c.block.push_back({"XBLOCK_" + k, block_size()});
      if (chance(3)) c.block.push_back({"YBLOCK_" + k, block_size()});
    }
    blocks(c, {"XBLOCK", "YBLOCK"});
    if (chance(4)) c.block.push_back({"min_blocks", chance(10) ? -1 : up_to(100000)});
    if (chance(6)) c.block.push_back({"max_y_grid", pick({1, 3, 100, 65535})});
  }

  std::mt19937_64 rng_;
};

/// Laws the grids must satisfy whatever the definitions' code: every
/// element is covered by a block, and no block is wholly past the end.
void check_covering(const Case& c, Dim3 g) {
  auto value = [&](std::string_view name) {
    for (const auto& [n, v] : c.numels)
      if (n == name) return v;
    return std::int64_t{-1};
  };
  auto block = [&](std::string_view name) {
    for (const BlockSize& b : c.block)
      if (b.name.text == name) return b.value;
    return std::int64_t{-1};
  };
  // blocks * per_block >= numel > (blocks - 1) * per_block, in 128 bits.
  auto covers = [](std::int64_t blocks, std::int64_t numel, std::int64_t per_block) {
    __extension__ typedef __int128 wide;
    const wide b = blocks;
    return b * per_block >= numel && (b == 0 || (b - 1) * per_block < numel);
  };
  if (c.type == GridType::grid_1d || c.type == GridType::grid_2d || c.type == GridType::grid_3d) {
    CHECK(covers(g.x, value("xnumel"), block("XBLOCK")));
  }
  if (c.type == GridType::grid_2d_with_yz_overflow) {
    CHECK(covers(g.x, value("xnumel"), block("XBLOCK")));
    const std::int64_t max_y = block("max_y_grid") > 0 ? block("max_y_grid") : default_max_y_grid;
    const std::int64_t raw = wrapir::ceil_div(value("ynumel"), block("YBLOCK"));
    CHECK(g.y <= max_y);
    CHECK(covers(g.y, raw, g.z));
    CHECK(covers(g.z, raw, max_y));
  }
}

TEST_CASE("grid: property: expressions and integers agree on every grid type") {
  CaseGenerator generate(0x9e3779b97f4a7c15ULL);
  std::size_t agreed_ok = 0;
  std::size_t agreed_error = 0;
  for (std::size_t t = 0; t < wrapir::ir::grid_type_count; ++t) {
    const auto type = static_cast<GridType>(t);
    expr::Context ctx;
    for (int round = 0; round < 400; ++round) {
      const Case c = generate.make(type);
      std::string shown;
      for (const auto& [n, v] : c.numels) shown += n + "=" + std::to_string(v) + " ";
      for (const BlockSize& b : c.block) shown += b.name.text + "=" + std::to_string(b.value) + " ";
      CAPTURE(shown);
      const Paths p = run_both(ctx, c);
      const GridOutcome outcome = [&] {
        std::vector<NamedInt> values;
        for (const auto& [n, v] : c.numels) values.push_back({n, v});
        return compute_grid_dims(type, values, c.block);
      }();
      REQUIRE(outcome.ok() == p.direct.ok());
      if (!p.exprs) {
        // A configuration error: the same text on both paths.
        REQUIRE_FALSE(p.direct.ok());
        CHECK(p.exprs.error().message == p.direct.error().message);
        ++agreed_error;
        continue;
      }
      const Result<Dim3>& compiled = *p.compiled;
      REQUIRE_MESSAGE(compiled.ok() == p.direct.ok(), "integers: ",
                      p.direct.ok() ? to_string(*p.direct) : p.direct.error().message,
                      "  expressions: ", compiled.ok() ? to_string(*compiled) : compiled.error().message);
      CHECK(*p.fast_ok == compiled.ok());
      if (!compiled.ok()) {
        // The same dimension is out of limits on both paths.
        if (outcome.error.kind == GridErrorKind::dimension_over_limit ||
            outcome.error.kind == GridErrorKind::negative_dimension) {
          CHECK(p.direct.error().message ==
                std::string(wrapir::ir::grid_type_name(type)) + ": " + compiled.error().message);
        } else {
          CHECK(outcome.error.kind == GridErrorKind::overflow);
          CHECK(compiled.error().message.find("overflow") != std::string::npos);
        }
        ++agreed_error;
        continue;
      }
      CHECK(*compiled == *p.direct);
      CHECK(p.fast == *p.direct);
      check_covering(c, *p.direct);
      ++agreed_ok;
    }
  }
  // The generator must exercise both outcomes, or the test proves little.
  CHECK(agreed_ok > 1500);
  CHECK(agreed_error > 500);
}

}  // namespace
