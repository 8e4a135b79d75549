// Args::read, the one argument reader of the reference externs: positions
// and keywords, fallbacks and None, and the first failure naming the extern
// and the argument.
#include "extern_test_support.hpp"

#include <wrapir/run/cpu/detail/extern_args.hpp>

#include <doctest/doctest.h>

using namespace cpu_test;
namespace cd = wrapir::run::cpu::detail;

TEST_CASE("cpu externs: Args::read takes positions, then keywords, then fallbacks") {
  const Tensor t = make({2}, {1, 2});
  const std::vector<Value> args{v(t), v(std::int64_t{3})};
  const std::vector<KeywordArg> kwargs{{"alpha", v(0.5)}, {"dims", ints({4, 5})}, {"scale", Value{wrapir::ir::None{}}},
                                       {"mode", v(std::string("sum"))}};
  const ExternCall call{"aten.example.default", args, kwargs};
  const cd::Args reader(call);
  auto read = reader.read(cd::tensor_arg(0, "self"), cd::integer_arg(1, "k"), cd::number_arg(2, "alpha"),
                          cd::bool_arg(3, "flag", true), cd::integers_arg(4, "dims", 2, std::nullopt),
                          cd::optional_number_arg(5, "scale"), cd::optional_tensor_arg(6, "mask"),
                          cd::string_arg(7, "mode"), cd::integer_arg(8, "absent", -1));
  REQUIRE_MESSAGE(read.has_value(), read.error().message);
  const auto& [self, k, alpha, flag, dims, scale, mask, mode, absent] = *read;
  CHECK(self == args[0].get_if<Tensor>());
  CHECK(k == 3);
  CHECK(alpha == 0.5);
  CHECK(flag);
  CHECK(dims == std::vector<std::int64_t>{4, 5});
  CHECK_FALSE(scale.has_value());  // None: the op's own default
  CHECK(mask == nullptr);
  CHECK(mode == std::optional<std::string>{"sum"});
  CHECK(absent == -1);
}

TEST_CASE("cpu externs: Args::read reports the first bad argument, by extern and name") {
  const std::vector<Value> args{v(std::int64_t{1}), v(std::string("x"))};
  const ExternCall call{"aten.example.default", args, {}};
  const cd::Args reader(call);
  auto read = reader.read(cd::integer_arg(0, "dim"), cd::tensor_arg(1, "index"), cd::tensor_arg(2, "src"));
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().message == "aten.example.default: argument 'index' is not a tensor");
  auto missing = reader.read(cd::integer_arg(0, "dim"), cd::number_arg(5, "beta"));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message == "aten.example.default: argument 'beta' is missing");
}
