// mm / addmm / bmm through CBLAS against naive loops in the test, for
// contiguous, transposed and sliced operands and every floating dtype.
#include "extern_test_support.hpp"

#include <doctest/doctest.h>

using namespace cpu_test;

namespace {

/// Naive a @ b for row-major values.
std::vector<double> naive_mm(const std::vector<double>& a, const std::vector<double>& b, std::int64_t m, std::int64_t k,
                             std::int64_t n) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

}  // namespace

TEST_CASE("cpu externs: mm by hand values") {
  Caller call;
  const Tensor a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = make({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor out = make({2, 2}, {0, 0, 0, 0});
  auto r = call("extern_kernels.mm", {v(a), v(b)}, {{"out", v(out)}});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->holds<wrapir::ir::None>());
  CHECK(values_of(out) == std::vector<double>{58, 64, 139, 154});
  // The allocating aten form returns a new tensor.
  auto alloc = call("aten.mm.default", {v(a), v(b)});
  REQUIRE(alloc.has_value());
  REQUIRE(alloc->holds<Tensor>());
  CHECK(values_of(*alloc->get_if<Tensor>()) == std::vector<double>{58, 64, 139, 154});
}

TEST_CASE("cpu externs: mm honours transposed, sliced and strided-out layouts") {
  Caller call;
  const std::int64_t m = 5, k = 7, n = 4;
  const auto av = random_values(static_cast<std::size_t>(m * k), 1);
  const auto bv = random_values(static_cast<std::size_t>(k * n), 2);
  const auto expected = naive_mm(av, bv, m, k, n);
  for (const DType dtype : {DType::float32, DType::float64}) {
    CAPTURE(wrapir::ir::name(dtype));
    // a stored transposed: a = at.t() with at [k, m] contiguous.
    std::vector<double> at_values(static_cast<std::size_t>(k * m));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p) at_values[p * m + i] = av[i * k + p];
    const Tensor a_t = transposed(make({k, m}, at_values, dtype));
    // b as every other column of a [k, 2n] tensor (non-unit column stride: copied).
    std::vector<double> wide(static_cast<std::size_t>(k * 2 * n), 99.0);
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) wide[p * 2 * n + 2 * j] = bv[p * n + j];
    Tensor b_sliced = make({k, 2 * n}, wide, dtype);
    b_sliced.sizes = {k, n};
    b_sliced.strides = {2 * n, 2};
    // out transposed (column-major).
    Tensor out_t = transposed(make({n, m}, std::vector<double>(static_cast<std::size_t>(m * n), 0.0), dtype));
    auto r = call("extern_kernels.mm", {v(a_t), v(b_sliced)}, {{"out", v(out_t)}});
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    check_close(values_of(out_t), expected, dtype == DType::float32 ? 1e-5 : 1e-12);
  }
}

TEST_CASE("cpu externs: addmm with alpha and beta, bias broadcast, and 16-bit floats") {
  Caller call;
  const std::int64_t m = 3, k = 4, n = 5;
  const auto av = random_values(static_cast<std::size_t>(m * k), 3);
  const auto bv = random_values(static_cast<std::size_t>(k * n), 4);
  const auto biasv = random_values(static_cast<std::size_t>(n), 5);
  const auto prod = naive_mm(av, bv, m, k, n);
  const double alpha = 0.5, beta = 2.0;
  std::vector<double> expected(prod.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) expected[i * n + j] = beta * biasv[j] + alpha * prod[i * n + j];
  for (const DType dtype : {DType::float32, DType::float64, DType::bfloat16, DType::float16}) {
    CAPTURE(wrapir::ir::name(dtype));
    // Inputs rounded to the dtype first, so the expected values use what the extern sees.
    const Tensor a = make({m, k}, av, dtype), b = make({k, n}, bv, dtype), bias = make({n}, biasv, dtype);
    const auto ar = values_of(a), br = values_of(b), biasr = values_of(bias);
    const auto pr = naive_mm(ar, br, m, k, n);
    std::vector<double> exp_r(pr.size());
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) exp_r[i * n + j] = beta * biasr[j] + alpha * pr[i * n + j];
    Tensor out = make({m, n}, std::vector<double>(static_cast<std::size_t>(m * n), 0.0), dtype);
    auto r = call("extern_kernels.addmm", {v(bias), v(a), v(b)}, {{"beta", v(beta)}, {"alpha", v(alpha)}, {"out", v(out)}});
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    const double tol = dtype == DType::bfloat16 ? 1e-2 : dtype == DType::float16 ? 2e-3 : dtype == DType::float32 ? 1e-5 : 1e-12;
    check_close(values_of(out), exp_r, tol);
  }
  // Integer alpha/beta, as programs pass them (alpha=1, beta=1), and a [m, n] bias.
  const Tensor a = make({m, k}, av), b = make({k, n}, bv);
  const Tensor bias2 = make({m, n}, expected);
  Tensor out = make({m, n}, std::vector<double>(static_cast<std::size_t>(m * n), 0.0));
  auto r = call("extern_kernels.addmm", {v(bias2), v(a), v(b)},
                {{"alpha", v(std::int64_t{1})}, {"beta", v(std::int64_t{1})}, {"out", v(out)}});
  REQUIRE(r.has_value());
  std::vector<double> e2(expected.size());
  for (std::size_t i = 0; i < e2.size(); ++i) e2[i] = expected[i] + prod[i];
  check_close(values_of(out), e2);
}

TEST_CASE("cpu externs: bmm against a naive loop per batch") {
  Caller call;
  const std::int64_t batch = 3, m = 2, k = 3, n = 4;
  const auto av = random_values(static_cast<std::size_t>(batch * m * k), 6);
  const auto bv = random_values(static_cast<std::size_t>(batch * k * n), 7);
  std::vector<double> expected;
  for (std::int64_t i = 0; i < batch; ++i) {
    const std::vector<double> a1(av.begin() + i * m * k, av.begin() + (i + 1) * m * k);
    const std::vector<double> b1(bv.begin() + i * k * n, bv.begin() + (i + 1) * k * n);
    const auto c = naive_mm(a1, b1, m, k, n);
    expected.insert(expected.end(), c.begin(), c.end());
  }
  Tensor out = make({batch, m, n}, std::vector<double>(static_cast<std::size_t>(batch * m * n), 0.0));
  auto r = call("extern_kernels.bmm", {v(make({batch, m, k}, av)), v(make({batch, k, n}, bv))}, {{"out", v(out)}});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  check_close(values_of(out), expected);
}

TEST_CASE("cpu externs: GEMM edge cases — empty inner dimension, empty output") {
  Caller call;
  Tensor out = make({2, 2}, {5, 5, 5, 5});
  auto r = call("extern_kernels.mm", {v(make({2, 0}, {})), v(make({0, 2}, {}))}, {{"out", v(out)}});
  REQUIRE(r.has_value());
  CHECK(values_of(out) == std::vector<double>{0, 0, 0, 0});
  Tensor none = make({0, 2}, {});
  CHECK(call("extern_kernels.mm", {v(make({0, 3}, {})), v(make({3, 2}, {1, 2, 3, 4, 5, 6}))}, {{"out", v(none)}}).has_value());
}

TEST_CASE("cpu externs: GEMM argument errors are diagnostics") {
  Caller call;
  const Tensor a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor out = make({2, 2}, {0, 0, 0, 0});
  auto inner = call("extern_kernels.mm", {v(a), v(a)}, {{"out", v(out)}});
  REQUIRE_FALSE(inner.has_value());
  CHECK(inner.error().message.find("inner sizes differ") != std::string::npos);
  auto dtype = call("extern_kernels.mm", {v(a), v(make({3, 2}, {1, 2, 3, 4, 5, 6}, DType::float64))}, {{"out", v(out)}});
  REQUIRE_FALSE(dtype.has_value());
  CHECK(dtype.error().message.find("different dtypes") != std::string::npos);
  auto ints = call("extern_kernels.mm", {v(make({1, 1}, {1}, DType::int64)), v(make({1, 1}, {1}, DType::int64))},
                   {{"out", v(make({1, 1}, {0}, DType::int64))}});
  REQUIRE_FALSE(ints.has_value());
  CHECK(ints.error().message.find("not a floating type") != std::string::npos);
  auto rank = call("extern_kernels.bmm", {v(a), v(a)}, {{"out", v(out)}});
  REQUIRE_FALSE(rank.has_value());
  CHECK(rank.error().message.find("3-D") != std::string::npos);
  auto missing = call("extern_kernels.mm", {v(a)}, {{"out", v(out)}});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("'mat2' is missing") != std::string::npos);
  auto shape = call("extern_kernels.mm", {v(a), v(make({3, 3}, std::vector<double>(9, 1.0)))}, {{"out", v(out)}});
  REQUIRE_FALSE(shape.has_value());
  CHECK(shape.error().message.find("out has shape") != std::string::npos);
  auto bias = call("extern_kernels.addmm", {v(make({3}, {1, 2, 3})), v(a), v(make({3, 2}, {1, 2, 3, 4, 5, 6}))},
                   {{"out", v(out)}});
  REQUIRE_FALSE(bias.has_value());
  CHECK(bias.error().message.find("does not broadcast") != std::string::npos);
}

TEST_CASE("cpu externs: registering twice keeps the user's extern and says so") {
  wrapir::run::ExternRegistry registry;
  bool called = false;
  REQUIRE(registry.add("extern_kernels.mm", [&](const ExternCall&) -> wrapir::Result<Value> {
    called = true;
    return Value{};
  }).has_value());
  auto r = wrapir::run::cpu::register_reference_externs(registry);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("extern_kernels.mm") != std::string::npos);
  REQUIRE(registry.find("extern_kernels.addmm") != nullptr);
  REQUIRE(registry.find("torch.ops.aten.bucketize.Tensor") != nullptr);
  const auto* mm = registry.find("extern_kernels.mm");
  (void)(*mm)(ExternCall{"extern_kernels.mm", {}, {}});
  CHECK(called);
}

TEST_CASE("cpu externs: addmm reads a broadcast column bias and a transposed bias through their strides") {
  Caller call;
  const std::int64_t m = 4, k = 3, n = 5;
  const auto av = random_values(static_cast<std::size_t>(m * k), 81);
  const auto bv = random_values(static_cast<std::size_t>(k * n), 82);
  const auto prod = naive_mm(av, bv, m, k, n);
  for (const DType dtype : {DType::float32, DType::float64, DType::bfloat16}) {
    CAPTURE(wrapir::ir::name(dtype));
    const double tolerance = dtype == DType::bfloat16 ? 2e-2 : 1e-5;
    const Tensor a = make({m, k}, av, dtype), b = make({k, n}, bv, dtype);
    // [m, 1]: one value per row, broadcast along the columns.
    const auto colv = random_values(static_cast<std::size_t>(m), 83);
    const Tensor column = make({m, 1}, colv, dtype);
    std::vector<double> want(static_cast<std::size_t>(m * n));
    const auto colr = values_of(column);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) want[i * n + j] = colr[i] + prod[i * n + j];
    auto r = call("aten.addmm.default", {v(column), v(a), v(b)});
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    check_close(values_of(*r->get_if<Tensor>()), want, tolerance);
    // [m, n] stored transposed (strides (1, m)).
    const auto fullv = random_values(static_cast<std::size_t>(m * n), 84);
    const Tensor full_t = transposed(make({n, m}, fullv, dtype));
    const auto fullr = values_of(full_t);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) want[i * n + j] = fullr[i * n + j] + prod[i * n + j];
    r = call("aten.addmm.default", {v(full_t), v(a), v(b)});
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    check_close(values_of(*r->get_if<Tensor>()), want, tolerance);
  }
}
