// Tests of include/wrapir/run/tensor.hpp: strides, extents, views checked
// against their storage, overflow and negative layouts refused, aliasing.

#include <wrapir/run/tensor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace {
namespace run = wrapir::run;
namespace ir = wrapir::ir;
}  // namespace

TEST_CASE("tensor: contiguous strides and their overflow") {
  CHECK(run::contiguous_strides(std::vector<std::int64_t>{4, 5, 6}).value() == std::vector<std::int64_t>{30, 6, 1});
  CHECK(run::contiguous_strides(std::vector<std::int64_t>{}).value().empty());
  CHECK_FALSE(run::contiguous_strides(std::vector<std::int64_t>{-1}));
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK_FALSE(run::contiguous_strides(std::vector<std::int64_t>{big, big, 4}));
}

TEST_CASE("tensor: bytes spanned") {
  using V = std::vector<std::int64_t>;
  CHECK(run::bytes_spanned(V{2, 3}, V{3, 1}, 0, ir::DType::float32).value() == 24);
  CHECK(run::bytes_spanned(V{3, 2}, V{1, 3}, 1, ir::DType::float32).value() == 28);
  CHECK(run::bytes_spanned(V{0, 3}, V{3, 1}, 5, ir::DType::float32).value() == 0);
  CHECK(run::bytes_spanned(V{}, V{}, 2, ir::DType::int64).value() == 24);
  CHECK_FALSE(run::bytes_spanned(V{2}, V{}, 0, ir::DType::float32));
  CHECK_FALSE(run::bytes_spanned(V{2}, V{-1}, 0, ir::DType::float32));
  CHECK_FALSE(run::bytes_spanned(V{2}, V{1}, -1, ir::DType::float32));
  CHECK_FALSE(run::bytes_spanned(V{std::numeric_limits<std::int64_t>::max()}, V{2}, 0, ir::DType::float32));
}

TEST_CASE("tensor: views share storage and are refused past it") {
  run::Tensor t = run::empty_cpu({2, 3}, ir::DType::float32).value();
  CHECK(t.is_contiguous());
  CHECK(t.numel() == 6);
  CHECK(reinterpret_cast<std::uintptr_t>(t.data()) % 64 == 0);
  auto v = run::as_strided(t, {3, 2}, {1, 3}, 0);
  REQUIRE(v);
  CHECK(v->storage == t.storage);
  CHECK_FALSE(v->is_contiguous());
  static_cast<float*>(t.data())[3] = 42;
  CHECK(static_cast<float*>(v->data())[3] == 42);
  CHECK_FALSE(run::as_strided(t, {7}, {1}, 0));
  CHECK_FALSE(run::as_strided(t, {2}, {1}, 5));
  auto shifted = run::as_strided(t, {1}, {1}, 5);
  REQUIRE(shifted);
  CHECK(static_cast<float*>(shifted->data()) == static_cast<float*>(t.data()) + 5);
  // Reinterpreting as another dtype counts bytes of the new one.
  auto bytes = run::as_strided(t, {24}, {1}, 0, ir::DType::uint8);
  REQUIRE(bytes);
  CHECK_FALSE(run::as_strided(t, {25}, {1}, 0, ir::DType::uint8));
  run::Tensor none;
  CHECK(none.data() == nullptr);
  CHECK(none.device() == ir::Device{});
  CHECK_FALSE(run::empty_cpu({-2}, ir::DType::float32));
}
