// topk, the scatter family, index_put and bucketize against hand values and
// naive loops in the test.
#include "extern_test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace cpu_test;

TEST_CASE("cpu externs: topk by hand values, largest and smallest, along a dimension") {
  Caller call;
  const Tensor x = make({2, 4}, {3, 1, 4, 1, 5, 9, 2, 6});
  auto r = call("aten.topk.default", {v(x), v(std::int64_t{2})});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  const auto& list = *r->get_if<ValueList>();
  REQUIRE(list.items.size() == 2);
  CHECK(values_of(*list.items[0].get_if<Tensor>()) == std::vector<double>{4, 3, 9, 6});
  CHECK(values_of(*list.items[1].get_if<Tensor>()) == std::vector<double>{2, 0, 1, 3});
  CHECK(list.items[1].get_if<Tensor>()->dtype == DType::int64);
  // Smallest along dim 0, ties keep the lower index first.
  auto s = call("torch.ops.aten.topk.default", {v(x), v(std::int64_t{1}), v(std::int64_t{0}), v(false)});
  REQUIRE(s.has_value());
  const auto& sl = *s->get_if<ValueList>();
  CHECK(values_of(*sl.items[0].get_if<Tensor>()) == std::vector<double>{3, 1, 2, 1});
  CHECK(values_of(*sl.items[1].get_if<Tensor>()) == std::vector<double>{0, 0, 1, 0});
  // NaN is the largest.
  auto n = call("aten.topk.default", {v(make({3}, {1, std::nan(""), 2})), v(std::int64_t{1})});
  REQUIRE(n.has_value());
  CHECK(std::isnan(values_of(*n->get_if<ValueList>()->items[0].get_if<Tensor>())[0]));
  // k out of range, dim out of range.
  CHECK_FALSE(call("aten.topk.default", {v(x), v(std::int64_t{5})}).has_value());
  CHECK_FALSE(call("aten.topk.default", {v(x), v(std::int64_t{1}), v(std::int64_t{2})}).has_value());
}

TEST_CASE("cpu externs: topk agrees with a full sort on random rows") {
  Caller call;
  const auto xv = random_values(6 * 50, 21);
  auto r = call("aten.topk.default", {v(make({6, 50}, xv)), v(std::int64_t{7})});
  REQUIRE(r.has_value());
  const auto got = values_of(*r->get_if<ValueList>()->items[0].get_if<Tensor>());
  for (int row = 0; row < 6; ++row) {
    std::vector<double> line(xv.begin() + row * 50, xv.begin() + (row + 1) * 50);
    std::sort(line.begin(), line.end(), std::greater<>());
    for (int j = 0; j < 7; ++j) CHECK(got[row * 7 + j] == doctest::Approx(line[j]));
  }
}

TEST_CASE("cpu externs: scatter_reduce_.two sum as ScatterFallback calls it (the corpus's scatter_add)") {
  Caller call;
  Tensor self = make({4}, {0, 0, 0, 0});
  const Tensor index = make({5}, {0, 1, 0, 3, 3}, DType::int64);
  const Tensor src = make({5}, {1, 2, 3, 4, 5});
  auto r = call("aten.scatter_reduce_.two", {v(self), v(std::int64_t{0}), v(index), v(src)},
                {{"reduce", v(std::string("sum"))}, {"include_self", v(true)}});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->holds<wrapir::ir::None>());
  CHECK(values_of(self) == std::vector<double>{4, 2, 0, 9});
}

TEST_CASE("cpu externs: scatter reductions against a naive loop, 2-D, include_self both ways") {
  Caller call;
  const std::vector<double> base{1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<double> idx{1, 0, 1, 1};          // [2, 2] along dim 1
  const std::vector<double> srcv{10, 20, 30, 40};     // [2, 2]
  for (const std::string reduce : {"sum", "prod", "mean", "amax", "amin"}) {
    for (const bool include : {true, false}) {
      CAPTURE(reduce);
      CAPTURE(include);
      // Naive: per target, gather the contributions.
      std::vector<double> expected = base;
      for (int row = 0; row < 2; ++row)
        for (int col = 0; col < 3; ++col) {
          std::vector<double> contrib;
          for (int j = 0; j < 2; ++j)
            if (idx[row * 2 + j] == col) contrib.push_back(srcv[row * 2 + j]);
          if (contrib.empty()) continue;
          if (include) contrib.insert(contrib.begin(), base[row * 3 + col]);
          double r = contrib[0];
          for (std::size_t q = 1; q < contrib.size(); ++q) {
            if (reduce == "sum" || reduce == "mean") r += contrib[q];
            if (reduce == "prod") r *= contrib[q];
            if (reduce == "amax") r = std::max(r, contrib[q]);
            if (reduce == "amin") r = std::min(r, contrib[q]);
          }
          if (reduce == "mean") r /= static_cast<double>(contrib.size());
          expected[row * 3 + col] = r;
        }
      Tensor self = make({2, 3}, base);
      auto r = call("aten.scatter_reduce_.two",
                    {v(self), v(std::int64_t{1}), v(make({2, 2}, idx, DType::int64)), v(make({2, 2}, srcv)), v(reduce),
                     v(include)});
      REQUIRE_MESSAGE(r.has_value(), r.error().message);
      check_close(values_of(self), expected, 1e-6);
    }
  }
}

TEST_CASE("cpu externs: scatter_ with src, value and reduce; scatter_add_; functional forms leave self alone") {
  Caller call;
  Tensor self = make({3}, {1, 1, 1});
  REQUIRE(call("aten.scatter_.src", {v(self), v(std::int64_t{0}), v(make({2}, {2, 0}, DType::int64)), v(make({2}, {7, 8}))})
              .has_value());
  CHECK(values_of(self) == std::vector<double>{8, 1, 7});
  REQUIRE(call("aten.scatter_.value", {v(self), v(std::int64_t{0}), v(make({1}, {1}, DType::int64)), v(5.0)}).has_value());
  CHECK(values_of(self) == std::vector<double>{8, 5, 7});
  REQUIRE(call("aten.scatter_", {v(self), v(std::int64_t{0}), v(make({2}, {0, 0}, DType::int64)), v(make({2}, {2, 3}))},
               {{"reduce", v(std::string("multiply"))}})
              .has_value());
  CHECK(values_of(self) == std::vector<double>{48, 5, 7});
  REQUIRE(call("aten.scatter_add_", {v(self), v(std::int64_t{-1}), v(make({2}, {2, 2}, DType::int64)), v(make({2}, {1, 1}))})
              .has_value());
  CHECK(values_of(self) == std::vector<double>{48, 5, 9});
  auto f = call("aten.scatter_add.default", {v(self), v(std::int64_t{0}), v(make({1}, {0}, DType::int64)), v(make({1}, {2}))});
  REQUIRE(f.has_value());
  CHECK(values_of(*f->get_if<Tensor>()) == std::vector<double>{50, 5, 9});
  CHECK(values_of(self) == std::vector<double>{48, 5, 9});
  // Integer mean divides with floor.
  Tensor ints_self = make({1}, {0}, DType::int64);
  REQUIRE(call("aten.scatter_reduce_.two", {v(ints_self), v(std::int64_t{0}), v(make({2}, {0, 0}, DType::int64)),
                                            v(make({2}, {-3, -4}, DType::int64)), v(std::string("mean")), v(false)})
              .has_value());
  CHECK(values_of(ints_self) == std::vector<double>{-4});  // floor(-7 / 2)
}

TEST_CASE("cpu externs: scatter errors are diagnostics") {
  Caller call;
  Tensor self = make({3}, {0, 0, 0});
  auto oob = call("aten.scatter_add_", {v(self), v(std::int64_t{0}), v(make({1}, {3}, DType::int64)), v(make({1}, {1}))});
  REQUIRE_FALSE(oob.has_value());
  CHECK(oob.error().message.find("index 3 is out of bounds") != std::string::npos);
  auto neg = call("aten.scatter_add_", {v(self), v(std::int64_t{0}), v(make({1}, {-1}, DType::int64)), v(make({1}, {1}))});
  REQUIRE_FALSE(neg.has_value());
  auto dtype = call("aten.scatter_add_", {v(self), v(std::int64_t{0}), v(make({1}, {0}, DType::int32)), v(make({1}, {1}))});
  REQUIRE_FALSE(dtype.has_value());
  CHECK(dtype.error().message.find("int64") != std::string::npos);
  auto reduce = call("aten.scatter_reduce_.two", {v(self), v(std::int64_t{0}), v(make({1}, {0}, DType::int64)),
                                                  v(make({1}, {1})), v(std::string("median"))});
  REQUIRE_FALSE(reduce.has_value());
  CHECK(reduce.error().message.find("median") != std::string::npos);
  auto big = call("aten.scatter_add_", {v(self), v(std::int64_t{0}), v(make({2, 1}, {0, 0}, DType::int64)), v(make({2, 1}, {1, 1}))});
  REQUIRE_FALSE(big.has_value());
  CHECK(values_of(self) == std::vector<double>{0, 0, 0});
}

TEST_CASE("cpu externs: index_put_ with accumulate, duplicates, broadcasting, None and masks") {
  Caller call;
  // accumulate with duplicate indices: x[[0, 2, 0]] += [1, 2, 3].
  Tensor x = make({4}, {10, 10, 10, 10});
  ValueList idx{{v(make({3}, {0, 2, 0}, DType::int64))}};
  REQUIRE(call("aten.index_put_", {v(x), Value{idx}, v(make({3}, {1, 2, 3})), v(true)}).has_value());
  CHECK(values_of(x) == std::vector<double>{14, 10, 12, 10});
  // Without accumulate: overwrite; negative indices wrap; values broadcast.
  REQUIRE(call("aten.index_put_.default", {v(x), Value{ValueList{{v(make({2}, {-1, 1}, DType::int64))}}}, v(make({1}, {0}))})
              .has_value());
  CHECK(values_of(x) == std::vector<double>{14, 0, 12, 0});
  // 2-D: m[:, [0, 2]] = [[1, 2], [3, 4]] (None for the first dimension).
  Tensor m = make({2, 3}, {0, 0, 0, 0, 0, 0});
  REQUIRE(call("aten.index_put_", {v(m), Value{ValueList{{Value{wrapir::ir::None{}}, v(make({2}, {0, 2}, DType::int64))}}},
                                   v(make({2, 2}, {1, 2, 3, 4}))})
              .has_value());
  CHECK(values_of(m) == std::vector<double>{1, 0, 2, 3, 0, 4});
  // Two index tensors broadcast together: m[[0, 1], [1]] += 5.
  REQUIRE(call("aten.index_put_", {v(m), Value{ValueList{{v(make({2}, {0, 1}, DType::int64)), v(make({1}, {1}, DType::int64))}}},
                                   v(make({}, {5})), v(true)})
              .has_value());
  CHECK(values_of(m) == std::vector<double>{1, 5, 2, 3, 5, 4});
  // A bool mask.
  REQUIRE(call("aten.index_put_", {v(m), Value{ValueList{{v(make({2, 3}, {1, 0, 0, 0, 0, 1}, DType::bool_))}}}, v(make({}, {-1}))})
              .has_value());
  CHECK(values_of(m) == std::vector<double>{-1, 5, 2, 3, 5, -1});
  // The functional form returns a copy.
  auto f = call("aten.index_put.default", {v(m), Value{ValueList{{v(make({1}, {0}, DType::int64))}}}, v(make({1}, {9}))});
  REQUIRE(f.has_value());
  CHECK(values_of(*f->get_if<Tensor>()) == std::vector<double>{9, 9, 9, 3, 5, -1});
  CHECK(values_of(m)[0] == -1);
}

TEST_CASE("cpu externs: index_put errors are diagnostics") {
  Caller call;
  Tensor x = make({4}, {0, 0, 0, 0});
  auto oob = call("aten.index_put_", {v(x), Value{ValueList{{v(make({1}, {4}, DType::int64))}}}, v(make({1}, {1}))});
  REQUIRE_FALSE(oob.has_value());
  CHECK(oob.error().message.find("out of bounds") != std::string::npos);
  auto too_many = call("aten.index_put_", {v(x), Value{ValueList{{v(make({1}, {0}, DType::int64)), v(make({1}, {0}, DType::int64))}}},
                                           v(make({1}, {1}))});
  REQUIRE_FALSE(too_many.has_value());
  auto shape = call("aten.index_put_", {v(x), Value{ValueList{{v(make({2}, {0, 1}, DType::int64))}}}, v(make({3}, {1, 2, 3}))});
  REQUIRE_FALSE(shape.has_value());
  CHECK(shape.error().message.find("broadcast") != std::string::npos);
  auto not_list = call("aten.index_put_", {v(x), v(make({1}, {0}, DType::int64)), v(make({1}, {1}))});
  REQUIRE_FALSE(not_list.has_value());
  auto float_index = call("aten.index_put_", {v(x), Value{ValueList{{v(make({1}, {0}))}}}, v(make({1}, {1}))});
  REQUIRE_FALSE(float_index.has_value());
  CHECK(float_index.error().message.find("float32") != std::string::npos);
}

TEST_CASE("cpu externs: bucketize as the corpus calls it, right both ways, int32 output") {
  Caller call;
  const Tensor bounds = make({4}, {1, 3, 5, 7});
  const Tensor x = make({7}, {0, 1, 2, 3, 6, 7, 8});
  auto left = call("torch.ops.aten.bucketize.Tensor", {v(x), v(bounds)}, {{"out_int32", v(false)}, {"right", v(false)}});
  REQUIRE_MESSAGE(left.has_value(), left.error().message);
  const Tensor& l = *left->get_if<Tensor>();
  CHECK(l.dtype == DType::int64);
  CHECK(values_of(l) == std::vector<double>{0, 0, 1, 1, 3, 3, 4});
  auto right = call("aten.bucketize.Tensor", {v(x), v(bounds)}, {{"out_int32", v(true)}, {"right", v(true)}});
  REQUIRE(right.has_value());
  CHECK(right->get_if<Tensor>()->dtype == DType::int32);
  CHECK(values_of(*right->get_if<Tensor>()) == std::vector<double>{0, 1, 1, 2, 3, 4, 4});
  // Integer inputs against float boundaries, and a 2-D input keeps its shape.
  auto ints = call("aten.bucketize.Tensor", {v(make({2, 2}, {0, 4, 5, 9}, DType::int64)), v(bounds)});
  REQUIRE(ints.has_value());
  CHECK(ints->get_if<Tensor>()->sizes == std::vector<std::int64_t>{2, 2});
  CHECK(values_of(*ints->get_if<Tensor>()) == std::vector<double>{0, 2, 2, 4});
  auto bad = call("aten.bucketize.Tensor", {v(x), v(make({2, 2}, {1, 2, 3, 4}))});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("1-D") != std::string::npos);
}
