// aten._scaled_dot_product_flash_attention_for_cpu against a naive
// attention in the test (the formula, in double), for causal masks, additive
// masks that broadcast, grouped-query heads, transposed layouts, every
// floating dtype, the edge cases torch defines, and the refusals.
#include "extern_test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace cpu_test;

namespace {

constexpr const char* sdpa = "aten._scaled_dot_product_flash_attention_for_cpu.default";

struct Expected {
  std::vector<double> out;  // [B, Hq, L, E], row-major
  std::vector<double> lse;  // [B, Hq, L]
};

/// The formula, one score at a time. `mask(b, h, i, j)` is added to the score.
template <class Mask>
Expected naive_attention(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                         std::int64_t B, std::int64_t Hq, std::int64_t Hkv, std::int64_t L, std::int64_t S,
                         std::int64_t E, double scale, bool causal, Mask mask) {
  Expected r{std::vector<double>(static_cast<std::size_t>(B * Hq * L * E), 0.0),
             std::vector<double>(static_cast<std::size_t>(B * Hq * L), 0.0)};
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < Hq; ++h) {
      const std::int64_t hk = h / (Hq / Hkv);
      for (std::int64_t i = 0; i < L; ++i) {
        std::vector<double> s(static_cast<std::size_t>(S));
        double max = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < E; ++e)
            dot += q[((b * Hq + h) * L + i) * E + e] * k[((b * Hkv + hk) * S + j) * E + e];
          s[j] = dot * scale + mask(b, h, i, j);
          if (causal && j > i) s[j] = -std::numeric_limits<double>::infinity();
          max = std::max(max, s[j]);
        }
        if (max == -std::numeric_limits<double>::infinity()) continue;  // zeros, logsumexp 0
        double sum = 0;
        for (auto& x : s) sum += x = std::exp(x - max);
        r.lse[(b * Hq + h) * L + i] = max + std::log(sum);
        for (std::int64_t e = 0; e < E; ++e) {
          double acc = 0;
          for (std::int64_t j = 0; j < S; ++j) acc += s[j] / sum * v[((b * Hkv + hk) * S + j) * E + e];
          r.out[((b * Hq + h) * L + i) * E + e] = acc;
        }
      }
    }
  return r;
}

const auto no_mask = [](std::int64_t, std::int64_t, std::int64_t, std::int64_t) { return 0.0; };

/// The (output, logsumexp) pair of a successful call.
std::pair<Tensor, Tensor> results(const wrapir::Result<Value>& r) {
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  const auto* list = r->get_if<ValueList>();
  REQUIRE(list != nullptr);
  REQUIRE(list->items.size() == 2);
  return {*list->items[0].get_if<Tensor>(), *list->items[1].get_if<Tensor>()};
}

}  // namespace

TEST_CASE("cpu externs: flash attention for cpu equals the formula") {
  Caller call;
  const std::int64_t B = 2, H = 3, L = 70, S = 70, E = 8;  // L > one row block
  const auto qv = random_values(static_cast<std::size_t>(B * H * L * E), 11);
  const auto kv = random_values(static_cast<std::size_t>(B * H * S * E), 12);
  const auto vv = random_values(static_cast<std::size_t>(B * H * S * E), 13);
  for (const bool causal : {false, true}) {
    for (const DType dtype : {DType::float32, DType::float64}) {
      CAPTURE(causal);
      CAPTURE(wrapir::ir::name(dtype));
      const Tensor q = make({B, H, L, E}, qv, dtype), k = make({B, H, S, E}, kv, dtype), vt = make({B, H, S, E}, vv, dtype);
      const auto [out, lse] = results(call(sdpa, {v(q), v(k), v(vt), v(0.0), v(causal)}));
      const auto want = naive_attention(qv, kv, vv, B, H, H, L, S, E, 1.0 / std::sqrt(8.0), causal, no_mask);
      CHECK(out.dtype == dtype);
      CHECK(out.strides == std::vector<std::int64_t>{H * L * E, L * E, E, 1});
      CHECK(lse.dtype == dtype);
      CHECK(lse.sizes == std::vector<std::int64_t>{B, H, L});
      CHECK(lse.strides == std::vector<std::int64_t>{L * H, 1, H});  // [B, L, H] in memory
      check_close(values_of(out), want.out, dtype == DType::float64 ? 1e-12 : 1e-5);
      check_close(values_of(lse), want.lse, dtype == DType::float64 ? 1e-12 : 1e-5);
    }
  }
}

TEST_CASE("cpu externs: flash attention takes scale, causal with L != S, grouped heads and broadcast masks") {
  Caller call;
  const std::int64_t B = 2, Hq = 4, Hkv = 2, E = 5;
  for (const auto& lengths : {std::pair<std::int64_t, std::int64_t>{7, 4}, {4, 9}}) {
    const std::int64_t L = lengths.first, S = lengths.second;
    CAPTURE(L);
    CAPTURE(S);
    const auto qv = random_values(static_cast<std::size_t>(B * Hq * L * E), 21);
    const auto kv = random_values(static_cast<std::size_t>(B * Hkv * S * E), 22);
    const auto vv = random_values(static_cast<std::size_t>(B * Hkv * S * E), 23);
    // A [B, 1, L, S] additive mask (broadcast over heads) and a [L, 1] one (over keys).
    const auto m4 = random_values(static_cast<std::size_t>(B * L * S), 24);
    const auto m2 = random_values(static_cast<std::size_t>(L), 25);
    const Tensor q = make({B, Hq, L, E}, qv), k = make({B, Hkv, S, E}, kv), vt = make({B, Hkv, S, E}, vv);
    auto r4 = call(sdpa, {v(q), v(k), v(vt), v(0.0), v(true)},
                   {{"attn_mask", v(make({B, 1, L, S}, m4))}, {"scale", v(0.7)}});
    const auto [out4, lse4] = results(r4);
    auto want4 = naive_attention(qv, kv, vv, B, Hq, Hkv, L, S, E, 0.7, true,
                                 [&](std::int64_t b, std::int64_t, std::int64_t i, std::int64_t j) { return m4[(b * L + i) * S + j]; });
    check_close(values_of(out4), want4.out);
    check_close(values_of(lse4), want4.lse);
    auto r2 = call(sdpa, {v(q), v(k), v(vt)}, {{"attn_mask", v(make({L, 1}, m2))}, {"scale", Value{wrapir::ir::None{}}}});
    const auto [out2, lse2] = results(r2);
    auto want2 = naive_attention(qv, kv, vv, B, Hq, Hkv, L, S, E, 1.0 / std::sqrt(5.0), false,
                                 [&](std::int64_t, std::int64_t, std::int64_t i, std::int64_t) { return m2[i]; });
    check_close(values_of(out2), want2.out);
    check_close(values_of(lse2), want2.lse);
  }
}

TEST_CASE("cpu externs: flash attention output follows the query's layout") {
  Caller call;
  // q, k, v as the transformer block has them: a [B, L, 3*H*E] projection,
  // split and viewed [B, L, H, E], transposed to [B, H, L, E].
  const std::int64_t B = 2, L = 6, H = 2, E = 4, W = H * E;
  const auto proj = random_values(static_cast<std::size_t>(B * L * 3 * W), 31);
  const Tensor base = make({B, L, 3 * W}, proj);
  auto view = [&](std::int64_t part) {
    Tensor t = base;
    t.sizes = {B, H, L, E};
    t.strides = {L * 3 * W, E, 3 * W, 1};
    t.offset = part * W;
    return t;
  };
  const auto [out, lse] = results(call(sdpa, {v(view(0)), v(view(1)), v(view(2)), v(0.0), v(true)}));
  // Dense in [B, L, H, E] order, as eager gives it (the program asserts these strides).
  CHECK(out.strides == std::vector<std::int64_t>{L * H * E, E, H * E, 1});
  auto unpack = [&](std::int64_t part) {
    std::vector<double> x(static_cast<std::size_t>(B * H * L * E));
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < L; ++i)
          for (std::int64_t e = 0; e < E; ++e)
            x[((b * H + h) * L + i) * E + e] = proj[(b * L + i) * 3 * W + part * W + h * E + e];
    return x;
  };
  const auto want = naive_attention(unpack(0), unpack(1), unpack(2), B, H, H, L, L, E, 0.5, true, no_mask);
  check_close(values_of(out), want.out);
  check_close(values_of(lse), want.lse);
}

TEST_CASE("cpu externs: flash attention's dense output layouts") {
  using wrapir::run::cpu::detail::dense_strides_like;
  using S = std::vector<std::int64_t>;
  CHECK(dense_strides_like(S{2, 4, 16, 32}, S{2048, 512, 32, 1}) == S{2048, 512, 32, 1});
  CHECK(dense_strides_like(S{2, 4, 16, 32}, S{4096, 1024, 64, 1}) == S{2048, 512, 32, 1});  // a slice: compacted
  CHECK(dense_strides_like(S{2, 4, 16, 32}, S{512, 1024, 32, 1}) == S{512, 1024, 32, 1});   // dense, permuted: kept
  CHECK(dense_strides_like(S{2, 4, 16, 16}, S{3072, 16, 192, 1}) == S{1024, 16, 64, 1});
  // Equal strides: the smaller size goes inner; zero strides keep row-major order.
  CHECK(dense_strides_like(S{2, 1, 16, 32}, S{1024, 64, 64, 1}) == S{512, 32, 32, 1});
  CHECK(dense_strides_like(S{2, 4, 16, 32}, S{0, 512, 32, 1}) == S{2048, 512, 32, 1});
  CHECK(dense_strides_like(S{2, 4, 16, 32}, S{128, 32, 0, 1}) == S{2048, 512, 32, 1});
}

TEST_CASE("cpu externs: flash attention in 16-bit floats accumulates in float32") {
  Caller call;
  const std::int64_t B = 1, H = 2, L = 9, E = 6;
  const auto qv = random_values(static_cast<std::size_t>(B * H * L * E), 41);
  const auto kv = random_values(static_cast<std::size_t>(B * H * L * E), 42);
  const auto vv = random_values(static_cast<std::size_t>(B * H * L * E), 43);
  for (const DType dtype : {DType::bfloat16, DType::float16}) {
    CAPTURE(wrapir::ir::name(dtype));
    const Tensor q = make({B, H, L, E}, qv, dtype), k = make({B, H, L, E}, kv, dtype), vt = make({B, H, L, E}, vv, dtype);
    // The oracle sees the same rounded inputs.
    const auto want = naive_attention(values_of(q), values_of(k), values_of(vt), B, H, H, L, L, E, 1.0 / std::sqrt(6.0),
                                      false, no_mask);
    // A float32 mask is allowed with 16-bit queries.
    const auto [out, lse] = results(call(sdpa, {v(q), v(k), v(vt)}, {{"attn_mask", v(make({L, L}, std::vector<double>(L * L, 0.0)))}}));
    CHECK(out.dtype == dtype);
    CHECK(lse.dtype == DType::float32);
    check_close(values_of(out), want.out, dtype == DType::bfloat16 ? 1e-2 : 1e-3);
    check_close(values_of(lse), want.lse, 1e-5);
  }
}

TEST_CASE("cpu externs: flash attention's edge cases are torch's") {
  Caller call;
  const double inf = std::numeric_limits<double>::infinity();
  const auto qv = random_values(16, 51), kv = random_values(16, 52), vv = random_values(16, 53);
  const Tensor q = make({1, 1, 4, 4}, qv), k = make({1, 1, 4, 4}, kv), vt = make({1, 1, 4, 4}, vv);
  SUBCASE("a query that sees no key: zero output, logsumexp 0") {
    std::vector<double> m(16, 0.0);
    for (int j = 0; j < 4; ++j) m[2 * 4 + j] = -inf;
    const auto [out, lse] = results(call(sdpa, {v(q), v(k), v(vt)}, {{"attn_mask", v(make({4, 4}, m))}}));
    const auto o = values_of(out), l = values_of(lse);
    for (int e = 0; e < 4; ++e) CHECK(o[2 * 4 + e] == 0.0);
    CHECK(l[2] == 0.0);
    CHECK(std::isfinite(l[1]));
  }
  SUBCASE("NaN in a score makes its row NaN, only that row") {
    std::vector<double> m(16, 0.0);
    m[1] = std::numeric_limits<double>::quiet_NaN();
    const auto [out, lse] = results(call(sdpa, {v(q), v(k), v(vt)}, {{"attn_mask", v(make({4, 4}, m))}}));
    const auto o = values_of(out), l = values_of(lse);
    CHECK(std::isnan(o[0]));
    CHECK(std::isnan(l[0]));
    CHECK(std::isfinite(o[4]));
  }
  SUBCASE("no keys: zero outputs") {
    const auto [out, lse] = results(call(sdpa, {v(q), v(make({1, 1, 0, 4}, {})), v(make({1, 1, 0, 4}, {}))}));
    CHECK(values_of(out) == std::vector<double>(16, 0.0));
    CHECK(values_of(lse) == std::vector<double>(4, 0.0));
  }
  SUBCASE("head size 0: every score is scale * 0") {
    const std::vector<Value> empty_heads{v(make({1, 1, 4, 0}, {})), v(make({1, 1, 3, 0}, {})), v(make({1, 1, 3, 0}, {}))};
    const auto [out, lse] = results(call(sdpa, empty_heads, {{"scale", v(1.0)}}));
    CHECK(out.numel() == 0);
    check_close(values_of(lse), std::vector<double>(4, std::log(3.0)));
    const auto [out_default, lse_default] = results(call(sdpa, empty_heads));  // scale 1/sqrt(0): NaN, as torch
    for (const double x : values_of(lse_default)) CHECK(std::isnan(x));
  }
  SUBCASE("no queries: empty outputs") {
    const auto [out, lse] = results(call(sdpa, {v(make({1, 1, 0, 4}, {})), v(k), v(vt)}));
    CHECK(out.sizes == std::vector<std::int64_t>{1, 1, 0, 4});
    CHECK(lse.sizes == std::vector<std::int64_t>{1, 1, 0});
  }
}

TEST_CASE("cpu externs: flash attention refuses what it does not define") {
  Caller call;
  const Tensor q = make({1, 2, 3, 4}, random_values(24, 61));
  auto refused = [&](const std::vector<Value>& args, const std::vector<wrapir::run::KeywordArg>& kwargs,
                     const std::string& needle) {
    auto r = call(sdpa, args, kwargs);
    REQUIRE_FALSE(r.has_value());
    CHECK_MESSAGE(r.error().message.find(needle) != std::string::npos, r.error().message);
    CHECK(r.error().message.find("_scaled_dot_product_flash_attention_for_cpu") != std::string::npos);
  };
  refused({v(q), v(q), v(q), v(0.1)}, {}, "dropout_p=0.1");
  refused({v(q), v(q)}, {}, "'value' is missing");
  refused({v(make({2, 3, 4}, random_values(24, 62))), v(q), v(q)}, {}, "4-D");
  refused({v(q), v(make({1, 2, 3, 4}, random_values(24, 62), DType::float64)), v(q)}, {}, "different dtypes");
  refused({v(make({1, 2, 3, 4}, random_values(24, 63), DType::int64)), v(q), v(q)}, {}, "not a floating type");
  refused({v(q), v(make({1, 2, 3, 5}, random_values(30, 64))), v(q)}, {}, "head sizes");
  refused({v(q), v(q), v(make({1, 2, 5, 4}, random_values(40, 65)))}, {}, "different lengths");
  refused({v(q), v(make({2, 2, 3, 4}, random_values(48, 66))), v(q)}, {}, "batch sizes");
  refused({v(make({1, 3, 3, 4}, random_values(36, 67))), v(q), v(q)}, {}, "not a multiple");
  refused({v(q), v(q), v(q)}, {{"attn_mask", v(make({3, 3}, std::vector<double>(9, 1.0), DType::bool_))}}, "bool");
  refused({v(q), v(q), v(q)}, {{"attn_mask", v(make({2, 3}, std::vector<double>(6, 0.0)))}}, "does not broadcast");
  refused({v(q), v(q), v(q)}, {{"attn_mask", v(make({2, 3, 3}, std::vector<double>(18, 0.0)))}}, "neither 2-D nor 4-D");
  refused({v(q), v(q), v(q)}, {{"scale", v(std::string("big"))}}, "'scale' is not a number");
}

TEST_CASE("cpu externs: efficient attention equals the formula, with PyTorch's CUDA layouts") {
  // aten._scaled_dot_product_efficient_attention, what CUDA programs call:
  // (output [B, H, L, E] dense as [B, L, H, E], log_sumexp [B, H, 32*ceil(L/32)]
  // with +inf padding, philox seed and offset as 0-d int64 zeros).
  Caller call;
  constexpr const char* efficient = "aten._scaled_dot_product_efficient_attention.default";
  const std::int64_t B = 2, H = 2, L = 40, S = 40, E = 8;
  const auto qv = random_values(static_cast<std::size_t>(B * H * L * E), 41);
  const auto kv = random_values(static_cast<std::size_t>(B * H * S * E), 42);
  const auto vv = random_values(static_cast<std::size_t>(B * H * S * E), 43);
  const Tensor q = make({B, H, L, E}, qv), k = make({B, H, S, E}, kv), vt = make({B, H, S, E}, vv);
  for (const bool with_lse : {false, true}) {
    CAPTURE(with_lse);
    auto r = call(efficient, {v(q), v(k), v(vt), Value{wrapir::ir::None{}}, v(with_lse)}, {{"is_causal", v(true)}});
    REQUIRE_MESSAGE(r.has_value(), r.error().message);
    const auto* list = r->get_if<ValueList>();
    REQUIRE(list != nullptr);
    REQUIRE(list->items.size() == 4);
    const Tensor& out = *list->items[0].get_if<Tensor>();
    const Tensor& lse = *list->items[1].get_if<Tensor>();
    const auto want = naive_attention(qv, kv, vv, B, H, H, L, S, E, 1.0 / std::sqrt(8.0), true, no_mask);
    CHECK(out.sizes == std::vector<std::int64_t>{B, H, L, E});
    CHECK(out.strides == std::vector<std::int64_t>{L * H * E, E, H * E, 1});
    check_close(values_of(out), want.out);
    CHECK(lse.dtype == DType::float32);
    const std::int64_t padded = with_lse ? 64 : 0;
    CHECK(lse.sizes == std::vector<std::int64_t>{B, H, padded});
    if (with_lse) {
      const auto got = values_of(lse);
      for (std::int64_t bh = 0; bh < B * H; ++bh)
        for (std::int64_t i = 0; i < padded; ++i) {
          const double g = got[static_cast<std::size_t>(bh * padded + i)];
          if (i < L) CHECK(std::abs(g - want.lse[static_cast<std::size_t>(bh * L + i)]) <= 1e-5 * std::max(1.0, std::abs(g)));
          else CHECK(std::isinf(g));
        }
    }
    for (const std::size_t i : {std::size_t{2}, std::size_t{3}}) {
      const Tensor& t = *list->items[i].get_if<Tensor>();
      CHECK(t.dim() == 0);
      CHECK(t.dtype == DType::int64);
      CHECK(*static_cast<const std::int64_t*>(t.data()) == 0);
    }
  }
  // An additive bias and a scale, by keyword; dropout refused.
  const auto bias = random_values(static_cast<std::size_t>(L * S), 44);
  auto r = call(efficient, {v(q), v(k), v(vt)},
                {{"attn_bias", v(make({L, S}, bias))}, {"compute_log_sumexp", v(false)}, {"scale", v(0.5)}});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  const auto want = naive_attention(qv, kv, vv, B, H, H, L, S, E, 0.5, false,
                                    [&](std::int64_t, std::int64_t, std::int64_t i, std::int64_t j) { return bias[i * S + j]; });
  check_close(values_of(*r->get_if<ValueList>()->items[0].get_if<Tensor>()), want.out);
  auto dropped = call(efficient, {v(q), v(k), v(vt), Value{wrapir::ir::None{}}, v(false), v(0.1)});
  REQUIRE_FALSE(dropped.has_value());
  CHECK(dropped.error().message.find("dropout_p") != std::string::npos);
}
