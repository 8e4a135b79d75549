// 16-bit float conversions of the reference externs against hand values.
#include <wrapir/run/cpu/detail/elements.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace wrapir::run::cpu::detail;

TEST_CASE("cpu externs: bfloat16 rounds to nearest even") {
  CHECK(to_bfloat16(1.0F).bits == 0x3f80);
  CHECK(to_float(BFloat16{0x3f80}) == 1.0F);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  CHECK(to_bfloat16(1.0F + std::ldexp(1.0F, -8)).bits == 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: up to even.
  CHECK(to_bfloat16(1.0F + 3 * std::ldexp(1.0F, -8)).bits == 0x3f82);
  CHECK(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(to_float(to_bfloat16(-2.5F)) == -2.5F);
}

TEST_CASE("cpu externs: float16 conversions, normal, subnormal, overflow") {
  CHECK(to_half(1.0F).bits == 0x3c00);
  CHECK(to_half(-2.0F).bits == 0xc000);
  CHECK(to_half(65504.0F).bits == 0x7bff);
  CHECK(to_half(65520.0F).bits == 0x7c00);  // rounds to infinity
  CHECK(to_half(std::ldexp(1.0F, -24)).bits == 0x0001);  // smallest subnormal
  CHECK(to_half(std::ldexp(1.0F, -14)).bits == 0x0400);  // smallest normal
  CHECK(to_half(0.0F).bits == 0);
  CHECK(to_float(Half{0x3555}) == doctest::Approx(0.333251953125));
  CHECK(to_float(Half{0x0001}) == std::ldexp(1.0F, -24));
  CHECK(std::isinf(to_float(Half{0x7c00})));
  CHECK(std::isnan(to_float(to_half(std::numeric_limits<float>::quiet_NaN()))));
  // Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  CHECK(to_half(1.0F + std::ldexp(1.0F, -11)).bits == 0x3c00);
  CHECK(to_half(1.0F + 3 * std::ldexp(1.0F, -11)).bits == 0x3c02);
  // Round trip of every finite half.
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {
    const Half h{static_cast<std::uint16_t>(b)};
    REQUIRE(to_half(to_float(h)).bits == h.bits);
  }
}
