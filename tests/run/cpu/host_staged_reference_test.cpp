// The CPU reference externs on device tensors through host copies
// (run/host_staged_externs.hpp), as `wrapir run --device cuda` registers
// them: topk (a multi-output alloc), index_put_ (in place, indices in a
// list) and efficient attention give what the same calls give on the CPU,
// with their results on the device. The device is tagged host memory.
#include "extern_test_support.hpp"

#include <wrapir/run/host_staged_externs.hpp>

#include "support/tagged_host_backend.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>

using namespace cpu_test;

namespace {

constexpr wrapir::ir::Device gpu = wrapir::cuda_device(0);

/// `t`'s bytes in a new storage on the (tagged) device.
Tensor to_device(const wrapir_test::TaggedHostBackend& backend, const Tensor& t) {
  Tensor d = t;
  d.storage = backend.allocate(gpu, t.storage->nbytes).value();
  std::memcpy(d.storage->data, t.storage->data, static_cast<std::size_t>(t.storage->nbytes));
  return d;
}

}  // namespace

TEST_CASE("host-staged reference externs: topk, index_put_ and efficient attention on device tensors") {
  auto backend = std::make_shared<wrapir_test::TaggedHostBackend>();
  Caller host;
  wrapir::run::ExternRegistry device;
  std::vector<std::string> notices;
  const auto added = wrapir::run::add_host_staged_externs(
      device, host.registry, backend, {[&](std::string_view op) { notices.emplace_back(op); }});
  CHECK(added.size() == host.registry.names().size());
  auto on_device = [&](std::string_view op, const std::vector<Value>& args) {
    return (*device.find(op))(ExternCall{op, args, {}});
  };

  SUBCASE("topk") {
    const Tensor x = make({3, 5}, random_values(15, 7));
    auto want = host("aten.topk.default", {v(x), v(std::int64_t{2})});
    auto got = on_device("aten.topk.default", {v(to_device(*backend, x)), v(std::int64_t{2})});
    REQUIRE_MESSAGE(got, got.error().message);
    const auto& w = want->get_if<ValueList>()->items;
    const auto& g = got->get_if<ValueList>()->items;
    REQUIRE(g.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      const Tensor& t = *g[i].get_if<Tensor>();
      CHECK(t.device() == gpu);
      CHECK(values_of(t) == values_of(*w[i].get_if<Tensor>()));  // tagged memory reads as host memory
    }
    CHECK(notices == std::vector<std::string>{"aten.topk.default"});
  }
  SUBCASE("index_put_ accumulates into the device tensor") {
    const Tensor x = to_device(*backend, make({4}, {10, 10, 10, 10}));
    const ValueList idx{{v(to_device(*backend, make({3}, {0, 2, 0}, DType::int64)))}};
    auto r = on_device("aten.index_put_", {v(x), Value{idx}, v(to_device(*backend, make({3}, {1, 2, 3}))), v(true)});
    REQUIRE_MESSAGE(r, r.error().message);
    CHECK(values_of(x) == std::vector<double>{14, 10, 12, 10});
  }
  SUBCASE("efficient attention") {
    const Tensor q = make({1, 2, 5, 4}, random_values(40, 1)), k = make({1, 2, 5, 4}, random_values(40, 2)),
                 vt = make({1, 2, 5, 4}, random_values(40, 3));
    const char* op = "aten._scaled_dot_product_efficient_attention.default";
    auto want = host(op, {v(q), v(k), v(vt), Value{wrapir::ir::None{}}, v(false), v(0.0), v(true)});
    auto got = on_device(op, {v(to_device(*backend, q)), v(to_device(*backend, k)), v(to_device(*backend, vt)),
                              Value{wrapir::ir::None{}}, v(false), v(0.0), v(true)});
    REQUIRE_MESSAGE(got, got.error().message);
    const Tensor& out = *got->get_if<ValueList>()->items[0].get_if<Tensor>();
    CHECK(out.device() == gpu);
    CHECK(out.strides == want->get_if<ValueList>()->items[0].get_if<Tensor>()->strides);
    CHECK(values_of(out) == values_of(*want->get_if<ValueList>()->items[0].get_if<Tensor>()));
  }
}
