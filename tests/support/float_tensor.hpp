#pragma once
// A float32 CPU tensor of given sizes and values, for the executor's tests.

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>
#include <wrapir/run/tensor.hpp>

namespace wrapir_test {

inline wrapir::run::Tensor float_tensor(std::vector<std::int64_t> sizes, std::vector<float> values) {
  wrapir::run::Tensor t = wrapir::run::empty_cpu(std::move(sizes), wrapir::ir::DType::float32).value();
  REQUIRE(static_cast<std::size_t>(t.numel()) == values.size());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

}  // namespace wrapir::test
