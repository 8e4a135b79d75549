#include <doctest/doctest.h>

#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/pool_slice_verdicts.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace ex = wrapir::expr;
namespace ir = wrapir::ir;

namespace {

void check_same(const ir::ViewExtent& remembered, const ir::ViewExtent& direct) {
  CHECK(remembered.fit == direct.fit);
  CHECK(remembered.needed_bytes == direct.needed_bytes);
  CHECK(remembered.available_bytes == direct.available_bytes);
  CHECK(remembered.open_conditions == direct.open_conditions);
  CHECK(remembered.problem == direct.problem);
}

}  // namespace

TEST_CASE("pool slice verdicts: remembered verdicts equal check_pool_slice's on random questions") {
  ex::Context ctx;
  const ex::Expr s0 = ctx.symbol("s0");
  const ex::Expr s1 = ctx.symbol("s1");
  const std::vector<ex::Expr> atoms{ctx.integer(0), ctx.integer(1), ctx.integer(4), ctx.integer(-2),
                                    s0, s1, ex::mul(s0, s1), ex::add(s0, ctx.integer(8))};
  std::mt19937 rng(20261127);
  const auto pick = [&] { return atoms[rng() % atoms.size()]; };
  const auto random_layout = [&] {
    const std::size_t rank = rng() % 3;
    ir::Layout l;
    for (std::size_t i = 0; i < rank; ++i) {
      l.sizes.push_back(pick());
      l.strides.push_back(pick());
    }
    l.storage_offset = pick();
    l.dtype = rng() % 2 ? ir::DType::float32 : ir::DType::float16;
    return l;
  };
  // Few distinct questions asked many times: most answers come from the
  // table, and every one must be what the check itself says.
  std::vector<ir::Layout> layouts;
  for (int i = 0; i < 12; ++i) layouts.push_back(random_layout());
  ir::PoolSliceVerdicts verdicts;
  for (int i = 0; i < 600; ++i) {
    const ir::Layout& l = layouts[rng() % layouts.size()];
    const ex::Expr offset = pick();
    const ex::Expr pool = ex::add(pick(), ctx.integer(256));
    check_same(verdicts.check(l, offset, pool), ir::check_pool_slice(l, offset, pool));
  }
  CHECK(verdicts.size() < 600);  // questions were asked again
}

TEST_CASE("pool slice verdicts: a question differing in any part is asked anew") {
  ex::Context ctx;
  const ex::Expr n = ctx.symbol("n");
  ir::Layout l = ir::Layout::contiguous(ctx, {ctx.integer(16)}, ir::DType::float32, ir::Device{});
  ir::PoolSliceVerdicts verdicts;
  // 16 floats at 0 fit in 64 bytes; each change below makes them not fit.
  CHECK(verdicts.check(l, ctx.integer(0), ctx.integer(64)).fit == ir::ViewFit::fits);
  CHECK(verdicts.check(l, ctx.integer(4), ctx.integer(64)).fit == ir::ViewFit::exceeds);   // the offset
  CHECK(verdicts.check(l, ctx.integer(0), ctx.integer(60)).fit == ir::ViewFit::exceeds);   // the pool's size
  ir::Layout wider = l;
  wider.dtype = ir::DType::float64;
  CHECK(verdicts.check(wider, ctx.integer(0), ctx.integer(64)).fit == ir::ViewFit::exceeds);  // the dtype
  ir::Layout moved = l;
  moved.storage_offset = ctx.integer(1);
  CHECK(verdicts.check(moved, ctx.integer(0), ctx.integer(64)).fit == ir::ViewFit::exceeds);  // the storage offset
  ir::Layout longer = l;
  longer.sizes[0] = ctx.integer(17);
  CHECK(verdicts.check(longer, ctx.integer(0), ctx.integer(64)).fit == ir::ViewFit::exceeds);  // a size
  ir::Layout two_d = ir::Layout::contiguous(ctx, {ctx.integer(2), ctx.integer(8)}, ir::DType::float32, ir::Device{});
  two_d.strides[0] = ctx.integer(9);
  CHECK(verdicts.check(two_d, ctx.integer(0), ctx.integer(64)).fit == ir::ViewFit::exceeds);  // a stride
  // A symbolic size is left to a run-time check, and asked again it is the same verdict.
  ir::Layout symbolic = ir::Layout::contiguous(ctx, {n}, ir::DType::float32, ir::Device{});
  const ir::ViewExtent first = verdicts.check(symbolic, ctx.integer(0), ctx.integer(64));
  CHECK(first.fit == ir::ViewFit::unknown);
  check_same(verdicts.check(symbolic, ctx.integer(0), ctx.integer(64)), first);
  // The first question, asked again after all the others, still fits.
  CHECK(verdicts.check(l, ctx.integer(0), ctx.integer(64)).fit == ir::ViewFit::fits);
}

TEST_CASE("pool slice verdicts: the table never holds more than its capacity") {
  ex::Context ctx;
  const ir::Layout l = ir::Layout::contiguous(ctx, {ctx.integer(4)}, ir::DType::float32, ir::Device{});
  ir::PoolSliceVerdicts verdicts;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(3 * ir::PoolSliceVerdicts::capacity); ++i) {
    const ir::ViewExtent& v = verdicts.check(l, ctx.integer(i * 16), ctx.integer(i * 16 + 16));
    REQUIRE(v.fit == ir::ViewFit::fits);
    REQUIRE(verdicts.size() <= ir::PoolSliceVerdicts::capacity);
  }
  CHECK(verdicts.size() > 0);
}
