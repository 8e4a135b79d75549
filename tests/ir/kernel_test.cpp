// Tests of include/wrapir/ir/kernel.hpp: parameter types, signatures and
// the name tables of languages and grid types.

#include <wrapir/ir/enum_names.hpp>
#include <wrapir/ir/kernel.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace wrapir::ir;
using wrapir::DType;

TEST_CASE("ir/kernel: parameter types print and parse as Triton writes them") {
  CHECK(to_string(ParamType{true, DType::float32}) == "*fp32");
  CHECK(to_string(ParamType{false, DType::int32}) == "i32");
  CHECK(to_string(ParamType{false, DType::bool_}) == "i1");
  CHECK(to_string(ParamType{true, DType::complex64}) == "*complex64");
  for (std::size_t i = 0; i < wrapir::ir::dtype_count; ++i)
    for (bool pointer : {false, true}) {
      const ParamType t{pointer, static_cast<DType>(i)};
      CHECK(parse_param_type(to_string(t)) == t);
    }
  CHECK(parse_param_type("*float32") == ParamType{true, DType::float32});
  CHECK_FALSE(parse_param_type("**fp32"));
  CHECK_FALSE(parse_param_type("fp33"));
  CHECK_FALSE(parse_param_type(""));
}

TEST_CASE("ir/kernel: signatures parse with positions in their diagnostics") {
  auto sig = parse_signature("in_ptr0: *fp32,out_ptr0 : *fp32,  xnumel: i32");
  REQUIRE(sig.ok());
  REQUIRE(sig->size() == 3);
  CHECK((*sig)[1].name == "out_ptr0");
  CHECK((*sig)[2].type == ParamType{false, DType::int32});
  CHECK(parse_signature("")->empty());

  auto bad_type = parse_signature("a: *fp32, b: float33");
  REQUIRE_FALSE(bad_type.ok());
  CHECK(bad_type.error().column == 13);
  CHECK(bad_type.error().message.find("unknown parameter type 'float33'") != std::string::npos);

  auto bad_name = parse_signature("a: i32, x;os: i32");
  REQUIRE_FALSE(bad_name.ok());
  CHECK(bad_name.error().message.find("invalid kernel parameter name") != std::string::npos);

  CHECK_FALSE(parse_signature("a i32").ok());
  CHECK_FALSE(parse_signature("a: i32,").ok());
  CHECK_FALSE(parse_signature("a: i32 b: i32").ok());
}

TEST_CASE("ir/kernel: language and grid type names round trip") {
  // One table per enumeration: the name functions, the counts and the
  // codecs' EnumNames all read it.
  static_assert(kernel_language_count == kernel_language_names.size());
  static_assert(EnumNames<KernelLanguage>::count == kernel_language_count);
  static_assert(EnumNames<GridType>::count == grid_type_count);
  for (std::size_t i = 0; i < kernel_language_count; ++i) {
    const auto l = static_cast<KernelLanguage>(i);
    CHECK(kernel_language_name(l) == kernel_language_names[i]);
    CHECK(enum_from_name<KernelLanguage>(kernel_language_name(l)) == l);
  }
  for (std::size_t i = 0; i < grid_type_count; ++i) {
    const auto g = static_cast<GridType>(i);
    CHECK(enum_from_name<GridType>(grid_type_name(g)) == g);
  }
  CHECK(grid_type_name(GridType::batch_matmul_grid_3d) == "BatchMatmulGrid3D");
  CHECK(grid_type_name(static_cast<GridType>(200)) == "<invalid grid type>");
  CHECK(kernel_language_name(static_cast<KernelLanguage>(5)) == "<invalid kernel language>");
  CHECK_FALSE(enum_from_name<KernelLanguage>("python"));
  CHECK(enum_choices<KernelLanguage>() == "triton, cuda, cpp, ptx, cubin");
}
