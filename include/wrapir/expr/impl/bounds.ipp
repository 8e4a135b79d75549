#pragma once
/// \file
/// Definitions of <wrapir/expr/bounds.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/bounds.hpp>

#include <algorithm>
#include <cstdint>

namespace wrapir::expr {

namespace detail {

// Bounds are computed in 128-bit arithmetic with an "infinity" far outside
// int64, then clamped: a value that leaves int64 is as good as unbounded.
__extension__ typedef __int128 wide_int;
inline constexpr wide_int wide_inf = static_cast<wide_int>(1) << 100;

struct WideInterval {
  wide_int lo, hi;
};

/// Values past int64 become infinite: a node whose value leaves int64 never
/// evaluates, so any claim about it is vacuously sound. The extremes
/// themselves stay finite.
constexpr wide_int clamp_wide(wide_int v) noexcept {
  if (v > static_cast<wide_int>(INT64_MAX)) return wide_inf;
  if (v < static_cast<wide_int>(INT64_MIN)) return -wide_inf;
  return v;
}

constexpr wide_int wide_add(wide_int a, wide_int b) noexcept {
  if (a == wide_inf || b == wide_inf) return (a == -wide_inf || b == -wide_inf) ? 0 : wide_inf;
  if (a == -wide_inf || b == -wide_inf) return -wide_inf;
  return clamp_wide(a + b);
}

constexpr wide_int wide_mul(wide_int a, wide_int b) noexcept {
  if (a == 0 || b == 0) return 0;
  const bool infinite = a == wide_inf || a == -wide_inf || b == wide_inf || b == -wide_inf;
  if (infinite) return ((a < 0) != (b < 0)) ? -wide_inf : wide_inf;
  return clamp_wide(a * b);  // |a|, |b| < 2^63: the product fits
}

/// floor(a / b) for b > 0, with infinities.
constexpr wide_int wide_floor_div(wide_int a, wide_int b) noexcept {
  if (a == wide_inf || a == -wide_inf) return a;
  if (b == wide_inf) return a >= 0 ? 0 : -1;
  wide_int q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}

inline WideInterval to_wide(const Interval& i) noexcept {
  return {i.lo_unbounded ? -wide_inf : static_cast<wide_int>(i.lo), i.hi_unbounded ? wide_inf : static_cast<wide_int>(i.hi)};
}

/// A lower bound past INT64_MAX is reported as INT64_MAX (and an upper
/// bound below INT64_MIN as INT64_MIN): still true of every value that fits.
inline Interval from_wide(WideInterval w) noexcept {
  Interval r;
  r.lo_unbounded = w.lo <= -wide_inf;
  r.hi_unbounded = w.hi >= wide_inf;
  auto to64 = [](wide_int v) {
    return static_cast<std::int64_t>(std::clamp<wide_int>(v, INT64_MIN, INT64_MAX));
  };
  r.lo = r.lo_unbounded ? 0 : to64(w.lo);
  r.hi = r.hi_unbounded ? 0 : to64(w.hi);
  return r;
}

inline WideInterval wide_bounds(Expr e, int depth) noexcept;

inline WideInterval wide_mul_interval(WideInterval a, WideInterval b) noexcept {
  const wide_int c[4] = {wide_mul(a.lo, b.lo), wide_mul(a.lo, b.hi), wide_mul(a.hi, b.lo), wide_mul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

inline WideInterval wide_pow(WideInterval base, std::int64_t k) noexcept {
  WideInterval r{1, 1};
  for (std::int64_t i = 0; i < k && i < 128; ++i) r = wide_mul_interval(r, base);
  if (k >= 128) return {-wide_inf, wide_inf};
  if (k % 2 == 0) r.lo = std::max<wide_int>(r.lo, 0);
  return r;
}

inline WideInterval wide_bounds(Expr e, int depth) noexcept {
  constexpr WideInterval any{-wide_inf, wide_inf};
  if (depth > 64) return any;  // deep trees: give up rather than recurse without bound
  auto sub = [&](std::size_t i) { return wide_bounds(e.operand(i), depth + 1); };
  switch (e.kind()) {
    case Kind::integer: return {e.value(), e.value()};
    case Kind::symbol:
      switch (e.assumption()) {
        case Assumption::positive: return {1, wide_inf};
        case Assumption::nonnegative: return {0, wide_inf};
        case Assumption::integer: return any;
      }
      return any;
    case Kind::add: {
      WideInterval r{0, 0};
      for (std::size_t i = 0; i < e.operands().size(); ++i) {
        auto t = sub(i);
        r = {wide_add(r.lo, t.lo), wide_add(r.hi, t.hi)};
      }
      return r;
    }
    case Kind::mul: {
      WideInterval r{1, 1};
      for (std::size_t i = 0; i < e.operands().size(); ++i) r = wide_mul_interval(r, sub(i));
      return r;
    }
    case Kind::pow: {
      auto b = sub(0);
      if (e.operand(1).is_integer()) return wide_pow(b, e.operand(1).value());
      if (b.lo >= 1) return {1, b.hi == 1 ? 1 : wide_inf};
      if (b.lo >= 0) return {0, b.hi <= 1 ? 1 : wide_inf};
      return any;
    }
    case Kind::floor_div:
    case Kind::clean_div: {
      auto a = sub(0), b = sub(1);
      // floor is monotone in `a`, and `a / b` in `b` for `b` of one sign:
      // the extremes are at the corners. A negative divisor is the positive
      // case of `(-a) // (-b)` (negation is exact on these wide integers).
      if (b.hi <= -1) {
        a = {-a.hi, -a.lo};
        b = {-b.hi, -b.lo};
      }
      if (b.lo < 1) return any;
      const wide_int c[4] = {wide_floor_div(a.lo, b.lo), wide_floor_div(a.lo, b.hi), wide_floor_div(a.hi, b.lo),
                             wide_floor_div(a.hi, b.hi)};
      return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case Kind::modular_indexing:
    case Kind::python_mod:
    case Kind::mod: {
      const bool mi = e.is(Kind::modular_indexing);
      auto m = sub(mi ? 2 : 1);
      if (m.lo >= 1) {
        WideInterval r{0, m.hi == wide_inf ? wide_inf : m.hi - 1};
        if (!mi) {
          auto p = sub(0);
          if (p.lo >= 0) r.hi = std::min(r.hi, p.hi);  // p % q <= p for p >= 0
        }
        return r;
      }
      if (m.hi <= -1) return {m.lo == -wide_inf ? -wide_inf : m.lo + 1, 0};
      return any;
    }
    case Kind::min:
    case Kind::max: {
      WideInterval r = sub(0);
      for (std::size_t i = 1; i < e.operands().size(); ++i) {
        auto t = sub(i);
        if (e.is(Kind::min)) r = {std::min(r.lo, t.lo), std::min(r.hi, t.hi)};
        else r = {std::max(r.lo, t.lo), std::max(r.hi, t.hi)};
      }
      return r;
    }
    case Kind::eq:
    case Kind::ne:
    case Kind::lt:
    case Kind::le:
    case Kind::gt:
    case Kind::ge: return {0, 1};
    case Kind::where: {
      auto p = sub(1), q = sub(2);
      return {std::min(p.lo, q.lo), std::max(p.hi, q.hi)};
    }
    case Kind::align: {
      auto x = sub(0);
      const wide_int a = e.value();
      auto up = [&](wide_int v) { return (v == wide_inf || v == -wide_inf) ? v : clamp_wide(-wide_floor_div(-v, a) * a); };
      return {up(x.lo), up(x.hi)};
    }
    case Kind::identity: return sub(0);
  }
  return any;
}

}  // namespace detail

WRAPIR_DECL Interval bounds(Expr e) noexcept {
  if (!e) return Interval{};  // a null expression: nothing is known
  return detail::from_wide(detail::wide_bounds(e, 0));
}

}  // namespace wrapir::expr