// Convolution against a direct seven-loop convolution in the test.
#include "extern_test_support.hpp"

#include <doctest/doctest.h>

using namespace cpu_test;

namespace {

/// Direct 2-D convolution of row-major values, [n, c, h, w] by [o, c/g, kh, kw].
std::vector<double> direct_conv2d(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>* bias,
                                  std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t wd, std::int64_t o,
                                  std::int64_t kh, std::int64_t kw, std::int64_t s, std::int64_t p, std::int64_t d,
                                  std::int64_t g, std::int64_t& oh, std::int64_t& ow) {
  oh = (h + 2 * p - d * (kh - 1) - 1) / s + 1;
  ow = (wd + 2 * p - d * (kw - 1) - 1) / s + 1;
  const std::int64_t cg = c / g, og = o / g;
  std::vector<double> out(static_cast<std::size_t>(n * o * oh * ow), 0.0);
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t oc = 0; oc < o; ++oc)
      for (std::int64_t y = 0; y < oh; ++y)
        for (std::int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias ? (*bias)[oc] : 0.0;
          const std::int64_t gi = oc / og;
          for (std::int64_t ci = 0; ci < cg; ++ci)
            for (std::int64_t i = 0; i < kh; ++i)
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t iy = y * s - p + i * d, ix = xx * s - p + j * d;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += x[((b * c + gi * cg + ci) * h + iy) * wd + ix] * w[((oc * cg + ci) * kh + i) * kw + j];
              }
          out[((b * o + oc) * oh + y) * ow + xx] = acc;
        }
  return out;
}

}  // namespace

TEST_CASE("cpu externs: 2-D convolution with stride, padding, dilation and groups") {
  Caller call;
  struct Case {
    std::int64_t n, c, h, w, o, kh, kw, s, p, d, g;
    bool bias;
  };
  for (const Case& k : {Case{2, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, true}, Case{1, 4, 7, 9, 6, 3, 2, 2, 0, 1, 2, false},
                       Case{1, 2, 10, 10, 2, 3, 3, 1, 2, 2, 2, true}, Case{3, 1, 5, 5, 1, 1, 1, 1, 0, 1, 1, false}}) {
    CAPTURE(k.c);
    CAPTURE(k.g);
    const auto xv = random_values(static_cast<std::size_t>(k.n * k.c * k.h * k.w), 11);
    const auto wv = random_values(static_cast<std::size_t>(k.o * (k.c / k.g) * k.kh * k.kw), 12);
    const auto bv = random_values(static_cast<std::size_t>(k.o), 13);
    std::int64_t oh = 0, ow = 0;
    const auto expected = direct_conv2d(xv, wv, k.bias ? &bv : nullptr, k.n, k.c, k.h, k.w, k.o, k.kh, k.kw, k.s, k.p,
                                        k.d, k.g, oh, ow);
    std::vector<Value> args{v(make({k.n, k.c, k.h, k.w}, xv)), v(make({k.o, k.c / k.g, k.kh, k.kw}, wv)),
                            k.bias ? v(make({k.o}, bv)) : Value{wrapir::ir::None{}}};
    auto r = call("extern_kernels.convolution", args,
                  {{"stride", ints({k.s, k.s})}, {"padding", ints({k.p, k.p})}, {"dilation", ints({k.d, k.d})},
                   {"transposed", v(false)}, {"output_padding", ints({0, 0})}, {"groups", v(k.g)}});
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    const Tensor& out = *r->get_if<Tensor>();
    CHECK(out.sizes == std::vector<std::int64_t>{k.n, k.o, oh, ow});
    check_close(values_of(out), expected, 1e-5);
  }
}

TEST_CASE("cpu externs: aten.convolution.default takes the same arguments positionally; 1-D works") {
  Caller call;
  // 1-D: x [1, 1, 5] = 1..5, w [1, 1, 3] = (1, 0, -1), padding 1: out[i] = x[i-1] - x[i+1].
  auto r = call("aten.convolution.default",
                {v(make({1, 1, 5}, {1, 2, 3, 4, 5})), v(make({1, 1, 3}, {1, 0, -1})), Value{wrapir::ir::None{}},
                 ints({1}), ints({1}), ints({1}), v(false), ints({0}), v(std::int64_t{1})});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(values_of(*r->get_if<Tensor>()) == std::vector<double>{-2, -2, -2, -2, 4});
}

TEST_CASE("cpu externs: convolution argument errors are diagnostics") {
  Caller call;
  const Tensor x = make({1, 2, 4, 4}, std::vector<double>(32, 1.0));
  const Tensor w = make({2, 2, 3, 3}, std::vector<double>(36, 1.0));
  auto transposed_conv = call("extern_kernels.convolution", {v(x), v(w), Value{}}, {{"transposed", v(true)}});
  REQUIRE_FALSE(transposed_conv.has_value());
  CHECK(transposed_conv.error().message.find("transposed") != std::string::npos);
  auto groups = call("extern_kernels.convolution", {v(x), v(w), Value{}}, {{"groups", v(std::int64_t{2})}});
  REQUIRE_FALSE(groups.has_value());
  CHECK(groups.error().message.find("groups=2") != std::string::npos);
  auto big = call("extern_kernels.convolution", {v(make({1, 2, 2, 2}, std::vector<double>(8, 1.0))), v(w), Value{}});
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().message.find("larger than the padded input") != std::string::npos);
  auto huge = call("extern_kernels.convolution", {v(x), v(w), Value{}},
                   {{"padding", ints({std::int64_t{1} << 62, 0})}});
  REQUIRE_FALSE(huge.has_value());
  auto three_d = call("extern_kernels.convolution", {v(make({1, 1, 1, 1, 1}, {1})), v(make({1, 1, 1, 1, 1}, {1})), Value{}});
  REQUIRE_FALSE(three_d.has_value());
  CHECK(three_d.error().message.find("rank 3 or 4") != std::string::npos);
}

TEST_CASE("cpu externs: a channels-last input gives a channels-last result, as conv2d_relu's program asserts") {
  Caller call;
  // conv2d_relu: input [2, 3, 16, 16] and weight [8, 3, 3, 3] channels-last,
  // result asserted as (2, 8, 16, 16) with strides (2048, 1, 128, 8).
  const auto xv = random_values(2 * 3 * 16 * 16, 31);
  const auto wv = random_values(8 * 3 * 3 * 3, 32);
  const auto bv = random_values(8, 33);
  std::int64_t oh = 0, ow = 0;
  const auto expected = direct_conv2d(xv, wv, &bv, 2, 3, 16, 16, 8, 3, 3, 1, 1, 1, 1, oh, ow);
  auto channels_last = [](const std::vector<double>& nchw, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    auto t = wrapir::run::empty_strided_cpu({n, c, h, w}, {h * w * c, 1, w * c, c}, DType::float32);
    REQUIRE(t.has_value());
    wrapir::run::cpu::detail::from_contiguous<double>(*t, nchw);
    return *t;
  };
  auto r = call("extern_kernels.convolution",
                {v(channels_last(xv, 2, 3, 16, 16)), v(channels_last(wv, 8, 3, 3, 3)), v(make({8}, bv))},
                {{"stride", ints({1, 1})}, {"padding", ints({1, 1})}, {"dilation", ints({1, 1})},
                 {"transposed", v(false)}, {"output_padding", ints({0, 0})}, {"groups", v(std::int64_t{1})}});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  const Tensor& out = *r->get_if<Tensor>();
  CHECK(out.sizes == std::vector<std::int64_t>{2, 8, 16, 16});
  CHECK(out.strides == std::vector<std::int64_t>{2048, 1, 128, 8});
  check_close(values_of(out), expected, 1e-5);
  // A contiguous input stays contiguous.
  auto c = call("extern_kernels.convolution", {v(make({2, 3, 16, 16}, xv)), v(make({8, 3, 3, 3}, wv)), v(make({8}, bv))},
                {{"padding", ints({1, 1})}});
  REQUIRE(c.has_value());
  CHECK(c->get_if<Tensor>()->strides == std::vector<std::int64_t>{2048, 256, 16, 1});
  check_close(values_of(*c->get_if<Tensor>()), expected, 1e-5);
}
