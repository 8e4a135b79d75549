// Tests of include/wrapir/ir/dtype.hpp: every row of the dtype table, the
// name round trip, torch's aliases, and the refusal of unknown names.

#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/enum_names.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

namespace {

using namespace wrapir::ir;

struct Row {
  DType dtype;
  std::int64_t itemsize;
  std::string_view torch_name, name, cpp_type, scalar_type;
  bool floating, complex, integral;
};

// Written out independently of the header's table.
constexpr Row expected[] = {
    {DType::bool_, 1, "torch.bool", "bool", "bool", "at::kBool", false, false, false},
    {DType::uint8, 1, "torch.uint8", "uint8", "uint8_t", "at::kByte", false, false, true},
    {DType::int8, 1, "torch.int8", "int8", "int8_t", "at::kChar", false, false, true},
    {DType::int16, 2, "torch.int16", "int16", "int16_t", "at::kShort", false, false, true},
    {DType::int32, 4, "torch.int32", "int32", "int32_t", "at::kInt", false, false, true},
    {DType::int64, 8, "torch.int64", "int64", "int64_t", "at::kLong", false, false, true},
    {DType::uint16, 2, "torch.uint16", "uint16", "uint16_t", "at::kUInt16", false, false, true},
    {DType::uint32, 4, "torch.uint32", "uint32", "uint32_t", "at::kUInt32", false, false, true},
    {DType::uint64, 8, "torch.uint64", "uint64", "uint64_t", "at::kUInt64", false, false, true},
    {DType::float16, 2, "torch.float16", "float16", "c10::Half", "at::kHalf", true, false, false},
    {DType::bfloat16, 2, "torch.bfloat16", "bfloat16", "c10::BFloat16", "at::kBFloat16", true, false, false},
    {DType::float32, 4, "torch.float32", "float32", "float", "at::kFloat", true, false, false},
    {DType::float64, 8, "torch.float64", "float64", "double", "at::kDouble", true, false, false},
    {DType::complex32, 4, "torch.complex32", "complex32", "c10::complex<c10::Half>", "at::kComplexHalf", false, true,
     false},
    {DType::complex64, 8, "torch.complex64", "complex64", "c10::complex<float>", "at::kComplexFloat", false, true,
     false},
    {DType::complex128, 16, "torch.complex128", "complex128", "c10::complex<double>", "at::kComplexDouble", false,
     true, false},
    {DType::float8_e4m3fn, 1, "torch.float8_e4m3fn", "float8_e4m3fn", "c10::Float8_e4m3fn", "at::kFloat8_e4m3fn",
     true, false, false},
    {DType::float8_e5m2, 1, "torch.float8_e5m2", "float8_e5m2", "c10::Float8_e5m2", "at::kFloat8_e5m2", true, false,
     false},
    {DType::float8_e4m3fnuz, 1, "torch.float8_e4m3fnuz", "float8_e4m3fnuz", "c10::Float8_e4m3fnuz",
     "at::kFloat8_e4m3fnuz", true, false, false},
    {DType::float8_e5m2fnuz, 1, "torch.float8_e5m2fnuz", "float8_e5m2fnuz", "c10::Float8_e5m2fnuz",
     "at::kFloat8_e5m2fnuz", true, false, false},
    {DType::float8_e8m0fnu, 1, "torch.float8_e8m0fnu", "float8_e8m0fnu", "c10::Float8_e8m0fnu",
     "at::kFloat8_e8m0fnu", true, false, false},
    {DType::float4_e2m1fn_x2, 1, "torch.float4_e2m1fn_x2", "float4_e2m1fn_x2", "c10::Float4_e2m1fn_x2",
     "at::kFloat4_e2m1fn_x2", true, false, false},
};

static_assert(std::size(expected) == dtype_count);

// The accessors are usable in constant expressions.
static_assert(itemsize(DType::bfloat16) == 2);
static_assert(name(DType::float32) == "float32");
static_assert(dtype_from_name("torch.half") == DType::float16);
static_assert(!dtype_from_name("torch.float33"));
static_assert(wrapir::f32 == DType::float32 && wrapir::bf16 == DType::bfloat16 && wrapir::b8 == DType::bool_);

}  // namespace

TEST_CASE("ir/dtype: every row of the table") {
  // The codecs' names of dtypes come from the same table.
  static_assert(EnumNames<DType>::count == dtype_count);
  CHECK(EnumNames<DType>::name(static_cast<DType>(0xff)) == "<invalid dtype>");
  for (const Row& r : expected) {
    CAPTURE(r.torch_name);
    CHECK(EnumNames<DType>::name(r.dtype) == r.name);
    CHECK(enum_from_name<DType>(r.name) == r.dtype);
    CHECK(is_valid(r.dtype));
    CHECK(itemsize(r.dtype) == r.itemsize);
    CHECK(torch_name(r.dtype) == r.torch_name);
    CHECK(name(r.dtype) == r.name);
    CHECK(cpp_type(r.dtype) == r.cpp_type);
    CHECK(scalar_type(r.dtype) == r.scalar_type);
    CHECK(is_floating_point(r.dtype) == r.floating);
    CHECK(is_complex(r.dtype) == r.complex);
    CHECK(is_integral(r.dtype) == r.integral);
    CHECK(is_integral(r.dtype, true) == (r.integral || r.dtype == DType::bool_));
    CHECK(info(r.dtype).dtype == r.dtype);
  }
  CHECK(all_dtypes().size() == dtype_count);
}

TEST_CASE("ir/dtype: names round-trip") {
  for (std::size_t i = 0; i < dtype_count; ++i) {
    const auto d = static_cast<DType>(i);
    CAPTURE(torch_name(d));
    CHECK(dtype_from_name(torch_name(d)) == d);
    CHECK(dtype_from_name(name(d)) == d);
  }
}

TEST_CASE("ir/dtype: torch's aliases, with and without the module prefix") {
  const std::pair<std::string_view, DType> aliases[] = {
      {"float", DType::float32},    {"half", DType::float16},       {"double", DType::float64},
      {"long", DType::int64},       {"int", DType::int32},          {"short", DType::int16},
      {"cfloat", DType::complex64}, {"cdouble", DType::complex128}, {"chalf", DType::complex32},
  };
  for (const auto& entry : aliases) {
    const std::string_view alias = entry.first;  // not a structured binding: clang 14 cannot capture one
    CAPTURE(alias);
    CHECK(dtype_from_name(alias) == entry.second);
    CHECK(dtype_from_name("torch." + std::string(alias)) == entry.second);
  }
}

TEST_CASE("ir/dtype: unknown names are refused") {
  for (std::string_view bad : {"", "torch.", "torch", "Float32", "float32 ", " float32", "torch.torch.float32",
                               "f32", "fp8e4nv", "torch.float8", "bool_", "torch.complex", "c10::Half", "uint128"}) {
    CAPTURE(bad);
    CHECK_FALSE(dtype_from_name(bad).has_value());
  }
}

TEST_CASE("ir/dtype: a value outside the enumeration reads the sentinel row") {
  const auto bad = static_cast<DType>(200);
  CHECK_FALSE(is_valid(bad));
  CHECK(itemsize(bad) == 0);
  CHECK(name(bad) == "<invalid dtype>");
  CHECK(torch_name(bad) == "torch.<invalid dtype>");
  CHECK(cpp_type(bad) == "<invalid dtype>");
  CHECK_FALSE(is_floating_point(bad));
  CHECK_FALSE(is_complex(bad));
  CHECK_FALSE(is_integral(bad, true));
}

TEST_CASE("ir/dtype: the short constants") {
  CHECK(wrapir::b8 == DType::bool_);
  CHECK(wrapir::u8 == DType::uint8);
  CHECK(wrapir::i8 == DType::int8);
  CHECK(wrapir::i16 == DType::int16);
  CHECK(wrapir::i32 == DType::int32);
  CHECK(wrapir::i64 == DType::int64);
  CHECK(wrapir::f16 == DType::float16);
  CHECK(wrapir::bf16 == DType::bfloat16);
  CHECK(wrapir::f32 == DType::float32);
  CHECK(wrapir::f64 == DType::float64);
}
