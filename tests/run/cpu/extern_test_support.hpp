// Shared helpers of the CPU extern tests: tensors from vectors, calls from
// argument lists, reading results back.
#pragma once

#include <wrapir/run/cpu/detail/elements.hpp>
#include <wrapir/run/cpu/externs.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cpu_test {

using wrapir::ir::DType;
using wrapir::run::ExternCall;
using wrapir::run::KeywordArg;
using wrapir::run::Tensor;
using wrapir::run::Value;
using wrapir::run::ValueList;

/// A contiguous tensor of `sizes` holding `values` converted to `dtype`.
inline Tensor make(std::vector<std::int64_t> sizes, const std::vector<double>& values, DType dtype = DType::float32) {
  auto t = wrapir::run::empty_cpu(std::move(sizes), dtype);
  REQUIRE(t.has_value());
  REQUIRE(static_cast<std::size_t>(t->numel()) == values.size());
  wrapir::run::cpu::detail::from_contiguous<double>(*t, values);
  return *t;
}

/// The elements of `t` in row-major order, as double.
inline std::vector<double> values_of(const Tensor& t) { return wrapir::run::cpu::detail::to_contiguous<double>(t); }

/// The transposed view of a 2-D tensor (shares storage).
inline Tensor transposed(const Tensor& t) {
  Tensor v = t;
  std::swap(v.sizes[0], v.sizes[1]);
  std::swap(v.strides[0], v.strides[1]);
  return v;
}

/// Calls `op` from a fresh registry of the reference externs.
struct Caller {
  wrapir::run::ExternRegistry registry;
  Caller() { REQUIRE(wrapir::run::cpu::register_reference_externs(registry).has_value()); }
  wrapir::Result<Value> operator()(std::string_view op, const std::vector<Value>& args,
                                   const std::vector<KeywordArg>& kwargs = {}) const {
    const auto* fn = registry.find(op);
    REQUIRE_MESSAGE(fn != nullptr, std::string(op));
    return (*fn)(ExternCall{op, args, kwargs});
  }
};

inline Value v(Tensor t) { return Value{std::move(t)}; }
inline Value v(std::int64_t i) { return Value{i}; }
inline Value v(double d) { return Value{d}; }
inline Value v(bool b) { return Value{b}; }
inline Value v(std::string s) { return Value{std::move(s)}; }
inline Value ints(std::vector<std::int64_t> xs) {
  ValueList l;
  for (auto x : xs) l.items.push_back(Value{x});
  return Value{std::move(l)};
}

/// Checks two lists elementwise within `tolerance` (relative to max(1, |expected|)).
inline void check_close(const std::vector<double>& got, const std::vector<double>& expected, double tolerance = 1e-5) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double scale = std::max(1.0, std::abs(expected[i]));
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    CHECK(std::abs(got[i] - expected[i]) <= tolerance * scale);
  }
}

/// Deterministic pseudo-random values in [-1, 1).
inline std::vector<double> random_values(std::size_t n, std::uint64_t seed) {
  std::vector<double> out(n);
  for (auto& x : out) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(seed >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  }
  return out;
}

}  // namespace cpu_test
