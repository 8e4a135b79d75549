// Tests of include/wrapir/ir/layout.hpp: contiguous strides, contiguity by
// PyTorch's rules, element counts and the storage a layout needs, checked
// by evaluating the symbolic results, and the diagnostics of validate().

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/layout.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace wrapir::ir;
using wrapir::expr::Assumption;
using wrapir::expr::Bindings;
using wrapir::expr::Context;
using wrapir::expr::Expr;
using wrapir::expr::eval;

struct Fixture {
  Context ctx;
  Expr s0 = ctx.symbol("s0");
  Expr s1 = ctx.symbol("s1");
  Expr z0 = ctx.symbol("z0", Assumption::nonnegative);  // may be 0
  Expr a = ctx.symbol("a", Assumption::integer);        // any sign

  Expr I(std::int64_t v) { return ctx.integer(v); }

  Layout strided(std::vector<Expr> sizes, std::vector<Expr> strides, std::int64_t offset = 0,
                 DType dtype = DType::float32) {
    return Layout{std::move(sizes), std::move(strides), I(offset), dtype, wrapir::cuda_device(0)};
  }

  std::int64_t value(Expr e, std::initializer_list<std::pair<Expr, std::int64_t>> binds) {
    Bindings b;
    for (auto [s, v] : binds) b.set(s, v);
    auto r = eval(e, b);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().to_string()));
    return r.value();
  }
};

std::string message(const Layout& l) {
  const wrapir::Result<void> valid = validate(l);
  REQUIRE_FALSE(valid.has_value());
  return valid.error().message;
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "ir/layout: contiguous strides are row-major products of the later sizes") {
  const std::vector<Expr> sizes{s0, s1, I(4)};
  const auto strides = contiguous_strides(ctx, sizes);
  REQUIRE(strides.size() == 3);
  CHECK(strides[0] == 4 * s1);
  CHECK(strides[1] == I(4));
  CHECK(strides[2] == I(1));
  CHECK(contiguous_strides(ctx, std::vector<Expr>{}).empty());
  CHECK(contiguous_strides(ctx, std::vector<Expr>{s0}) == std::vector<Expr>{I(1)});

  const Layout l = Layout::contiguous(ctx, {s0, s1, I(4)}, DType::bfloat16, wrapir::cuda_device(1));
  CHECK(l.sizes == sizes);
  CHECK(l.strides == strides);
  CHECK(l.storage_offset == I(0));
  CHECK(l.dtype == DType::bfloat16);
  CHECK(l.device == wrapir::cuda_device(1));
  CHECK(l.rank() == 3);
  CHECK(validate(l).has_value());
  CHECK(l == Layout::contiguous(ctx, {s0, s1, I(4)}, DType::bfloat16, wrapir::cuda_device(1)));
  CHECK_FALSE(l == Layout::contiguous(ctx, {s0, s1, I(4)}, DType::float16, wrapir::cuda_device(1)));

  Context other;
  CHECK_THROWS_AS((void)contiguous_strides(other, sizes), wrapir::expr::Error);
  CHECK_THROWS_AS((void)contiguous_strides(ctx, std::vector<Expr>{s0, Expr{}}), wrapir::expr::Error);
}

TEST_CASE_FIXTURE(Fixture, "ir/layout: contiguity") {
  CHECK(is_contiguous(Layout::contiguous(ctx, {s0, s1, I(4)}, DType::float32, wrapir::cuda_device())));
  CHECK(is_contiguous(Layout::contiguous(ctx, {}, DType::float32, wrapir::cpu_device())));  // rank 0
  // Written by hand in another order of construction: same canonical nodes.
  CHECK(is_contiguous(strided({s0, s1, I(4)}, {s1 * 4, I(4), I(1)})));

  // Transposed.
  const Layout t = strided({s1, s0}, {I(1), s1});
  CHECK_FALSE(has_contiguous_strides(t));
  CHECK_FALSE(is_contiguous(t));
  // An offset keeps the strides contiguous but not the layout.
  const Layout off = strided({I(4), I(2)}, {I(2), I(1)}, 4);
  CHECK(has_contiguous_strides(off));
  CHECK_FALSE(is_contiguous(off));
  // Symbolic offset.
  CHECK_FALSE(is_contiguous(Layout{{s0}, {I(1)}, s1, DType::float32, wrapir::cpu_device()}));
  // Size-1 dimensions may have any stride (PyTorch's definition).
  CHECK(is_contiguous(strided({I(1), s0, I(1), I(3)}, {I(77), I(3), s1, I(1)})));
  // A literal zero size makes any strides contiguous.
  CHECK(is_contiguous(strided({I(0), s0}, {I(5), I(9)})));
  // A padded row is not contiguous.
  CHECK_FALSE(is_contiguous(strided({s0, I(3)}, {I(4), I(1)})));
  // Malformed layouts are not contiguous (and do not crash).
  CHECK_FALSE(is_contiguous(strided({s0}, {})));
  CHECK_FALSE(is_contiguous(Layout{{s0}, {I(1)}, Expr{}, DType::float32, wrapir::cpu_device()}));
}

TEST_CASE_FIXTURE(Fixture, "ir/layout: numel") {
  const Layout l = Layout::contiguous(ctx, {s0, s1, I(4)}, DType::float32, wrapir::cuda_device());
  CHECK(numel(l) == 4 * s0 * s1);
  CHECK(value(numel(l), {{s0, 3}, {s1, 5}}) == 60);
  CHECK(numel(Layout::contiguous(ctx, {}, DType::float32, wrapir::cpu_device())) == I(1));
  CHECK(numel(strided({I(3), I(0)}, {I(0), I(1)})) == I(0));
  CHECK_THROWS_AS((void)numel(Layout{}), wrapir::expr::Error);
}

TEST_CASE_FIXTURE(Fixture, "ir/layout: storage elements and bytes") {
  // Contiguous: storage = numel.
  const Layout c = Layout::contiguous(ctx, {s0, s1, I(4)}, DType::float32, wrapir::cuda_device());
  const Expr ce = storage_elements(c);
  CHECK_FALSE(ce.is(wrapir::expr::Kind::where));  // all sizes positive: the plain formula
  CHECK(value(ce, {{s0, 3}, {s1, 5}}) == 60);
  CHECK(value(storage_bytes(c), {{s0, 3}, {s1, 5}}) == 240);
  CHECK(value(ce, {{s0, 1}, {s1, 1}}) == 4);

  // Transposed view of a [3, 5] buffer: same storage.
  const Layout t = strided({I(5), I(3)}, {I(1), I(5)});
  CHECK(storage_elements(t) == I(15));
  // With an offset and a gap (every other row of a [8, 4] buffer, from row 1).
  const Layout g = strided({I(4), I(4)}, {I(8), I(1)}, 4);
  CHECK(storage_elements(g) == I(4 + 1 + 3 * 8 + 3));
  // Symbolic strided: [s0, s1] with strides [1, s0] and offset s1.
  const Layout st{{s0, s1}, {I(1), s0}, s1, DType::float64, wrapir::cuda_device()};
  CHECK(value(storage_elements(st), {{s0, 3}, {s1, 5}}) == 5 + 1 + 2 * 1 + 4 * 3);
  CHECK(value(storage_bytes(st), {{s0, 3}, {s1, 5}}) == 8 * (5 + 1 + 2 + 12));
  // Broadcast (stride 0).
  CHECK(storage_elements(strided({I(7), I(3)}, {I(0), I(1)})) == I(3));
  // Rank 0: one element past the offset.
  CHECK(storage_elements(Layout::contiguous(ctx, {}, DType::int64, wrapir::cpu_device())) == I(1));
  CHECK(storage_bytes(Layout::contiguous(ctx, {}, DType::int64, wrapir::cpu_device())) == I(8));

  // A literal zero size: no storage at all, even with an offset.
  CHECK(storage_elements(strided({I(0), I(4)}, {I(4), I(1)}, 10)) == I(0));
  CHECK(storage_bytes(strided({I(0), I(4)}, {I(4), I(1)}, 10, DType::complex128)) == I(0));

  // A size that may be zero: exact for every binding.
  const Layout z = Layout::contiguous(ctx, {z0, I(4)}, DType::float16, wrapir::cuda_device());
  const Expr ze = storage_elements(z);
  CHECK(value(ze, {{z0, 0}}) == 0);  // the plain formula would say -3
  CHECK(value(ze, {{z0, 1}}) == 4);
  CHECK(value(ze, {{z0, 6}}) == 24);
  CHECK(value(storage_bytes(z), {{z0, 0}}) == 0);
  CHECK(value(storage_bytes(z), {{z0, 6}}) == 48);

  // Packed and 1-byte dtypes.
  CHECK(storage_bytes(strided({I(16)}, {I(1)}, 0, DType::float4_e2m1fn_x2)) == I(16));
  CHECK(storage_bytes(strided({I(16)}, {I(1)}, 0, DType::complex32)) == I(64));

  // Malformed layouts throw instead of crashing.
  CHECK_THROWS_AS((void)storage_elements(Layout{}), wrapir::expr::Error);
  CHECK_THROWS_AS((void)storage_elements(strided({s0}, {})), wrapir::expr::Error);
  CHECK_THROWS_AS((void)storage_elements(strided({s0}, {Expr{}})), wrapir::expr::Error);
}

TEST_CASE_FIXTURE(Fixture, "ir/layout: validate") {
  CHECK(validate(strided({s0, z0}, {z0, I(1)})).has_value());
  CHECK(validate(strided({a}, {I(1)})).has_value());  // unknown sign is not provably negative
  CHECK(message(strided({s0, s1}, {I(1)})) == "layout has 2 sizes but 1 strides");
  CHECK(message(Layout{{s0}, {I(1)}, Expr{}, DType::float32, wrapir::cpu_device()}) ==
        "layout storage offset is a null expression");
  CHECK(message(Layout{}) == "layout storage offset is a null expression");
  CHECK(message(strided({s0, Expr{}}, {I(1), I(1)})) == "layout size 1 is a null expression");
  CHECK(message(strided({s0}, {Expr{}})) == "layout stride 0 is a null expression");
  Context other;
  CHECK(message(strided({s0, other.symbol("s0")}, {I(1), I(1)})) ==
        "layout size 1 belongs to another expression context");
  CHECK(message(Layout{{s0}, {I(1)}, other.integer(0), DType::float32, wrapir::cpu_device()}) ==
        "layout size 0 belongs to another expression context");
  CHECK(message(strided({I(-1)}, {I(1)})) == "layout size 0 is negative");
  CHECK(message(strided({s0, -s1}, {I(1), I(1)})) == "layout size 1 is negative");
  CHECK(message(strided({s0}, {I(-2)})) == "layout stride 0 is negative");
  CHECK(message(strided({s0}, {I(1)}, -1)) == "layout storage offset is negative");
  CHECK(message(Layout{{s0}, {I(1)}, I(0), static_cast<DType>(77), wrapir::cpu_device()}) == "layout dtype 77 is not a DType");
  CHECK(message(Layout{{s0}, {I(1)}, I(0), DType::float32, Device{DeviceType::cuda, -1}}) ==
        "layout device index -1 of cuda is out of range [0, 127]");
}
