// Tests of include/wrapir/ir/small_vector.hpp: SmallVector holds up to N
// values in place, moves to the heap past that, and keeps the value
// semantics of the std::vector it replaces in Layout.

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/small_vector.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

using wrapir::ir::SmallVector;

namespace {
std::vector<int> values(std::span<const int> s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE("SmallVector: in place up to N, on the heap past it, values kept across the move") {
  SmallVector<int, 2> v;
  CHECK(v.empty());
  CHECK(v.is_inline());
  v.push_back(1);
  v.push_back(2);
  CHECK(v.is_inline());
  CHECK(v.capacity() == 2);
  v.push_back(3);  // grows: the two in-place values move with it
  CHECK_FALSE(v.is_inline());
  CHECK(v.capacity() >= 3);
  CHECK(values(v) == std::vector<int>{1, 2, 3});
  v.push_back(v[0]);  // a value of its own, read before growing moves it
  v.push_back(v[0]);
  CHECK(values(v) == std::vector<int>{1, 2, 3, 1, 1});
  v.pop_back();
  CHECK(v.size() == 4);
  CHECK(v.back() == 1);
  CHECK(v.front() == 1);
  v.clear();
  CHECK(v.empty());

  SmallVector<int, 1> r(3, 7);
  CHECK(values(r) == std::vector<int>{7, 7, 7});
  r.resize(1);
  CHECK(values(r) == std::vector<int>{7});
  r.resize(2, r[0]);
  CHECK(values(r) == std::vector<int>{7, 7});
}

TEST_CASE("SmallVector: copies are deep, moves take the block or the values, == compares values") {
  for (const std::vector<int>& items : {std::vector<int>{}, std::vector<int>{4}, std::vector<int>{4, 5, 6}}) {
    CAPTURE(items.size());
    SmallVector<int, 2> a = items;
    CHECK(a == items);
    CHECK(a.to_vector() == items);
    SmallVector<int, 2> b = a;
    CHECK(b == a);
    if (!b.empty()) {
      b[0] = 9;  // the copy owns its values
      CHECK(a[0] == 4);
      CHECK(b != a);
    }
    SmallVector<int, 2> c = std::move(a);
    CHECK(c == items);
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty and in place
    CHECK(a.is_inline());
    a = {1, 2, 3, 4};
    CHECK(values(a) == std::vector<int>{1, 2, 3, 4});
    a = c;  // from the heap back to fewer values (or the same)
    CHECK(a == c);
    a = std::move(c);
    CHECK(a == items);
    const SmallVector<int, 2>& self = a;
    a = self;  // self-assignment keeps the values
    CHECK(a == items);
  }
  CHECK(SmallVector<int, 2>{1, 2} != SmallVector<int, 2>{1, 2, 3});
  CHECK(SmallVector<int, 2>{} == SmallVector<int, 2>{});
}

TEST_CASE("SmallVector: a layout's sizes and strides are in place up to two dimensions, in 24 bytes each") {
  static_assert(sizeof(wrapir::ir::LayoutDims) == sizeof(std::vector<wrapir::expr::Expr>),
                "LayoutDims is no larger than the vector it replaces");
  wrapir::expr::Context ctx;
  const wrapir::expr::Expr s0 = ctx.symbol("s0");
  const wrapir::ir::Layout l1 = wrapir::ir::Layout::contiguous(ctx, {s0}, wrapir::ir::DType::float32, {});
  CHECK(l1.sizes.is_inline());
  CHECK(l1.strides == std::vector<wrapir::expr::Expr>{ctx.integer(1)});
  const wrapir::ir::Layout l2 = wrapir::ir::Layout::contiguous(ctx, {s0, ctx.integer(4)}, wrapir::ir::DType::float32, {});
  CHECK(l2.sizes.is_inline());
  CHECK(l2.strides.is_inline());
  const wrapir::ir::Layout l4 =
      wrapir::ir::Layout::contiguous(ctx, {s0, ctx.integer(2), ctx.integer(3), ctx.integer(4)}, wrapir::ir::DType::float32, {});
  CHECK_FALSE(l4.sizes.is_inline());
  CHECK(l4.strides == std::vector<wrapir::expr::Expr>{ctx.integer(24), ctx.integer(12), ctx.integer(4), ctx.integer(1)});
  CHECK(l4 == l4);
  CHECK(l4 != l2);
}
