// Tests of include/wrapir/ir/device.hpp: printing (plain and as Inductor's
// layouts show it), parsing with its diagnostics, and validation.

#include <wrapir/ir/device.hpp>
#include <wrapir/ir/enum_names.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using namespace wrapir::ir;

std::string error_of(std::string_view text) {
  auto r = parse_device(text);
  REQUIRE_MESSAGE(!r.ok(), "expected an error for '", std::string(text), "'");
  return r.error().to_string();
}

static_assert(wrapir::cuda_device(3) == Device{DeviceType::cuda, 3});
static_assert(wrapir::cpu_device() == Device{DeviceType::cpu, std::nullopt});
static_assert(device_type_from_name("mps") == DeviceType::mps);

}  // namespace

TEST_CASE("ir/device: names of the device types") {
  CHECK(device_type_name(DeviceType::cpu) == "cpu");
  CHECK(device_type_name(DeviceType::cuda) == "cuda");
  CHECK(device_type_name(DeviceType::xpu) == "xpu");
  CHECK(device_type_name(DeviceType::mps) == "mps");
  CHECK(device_type_name(DeviceType::meta) == "meta");
  CHECK(device_type_name(static_cast<DeviceType>(99)) == "<invalid device type>");
  for (std::size_t i = 0; i < device_type_count; ++i) {
    const auto t = static_cast<DeviceType>(i);
    CHECK(device_type_from_name(device_type_name(t)) == t);
  }
  CHECK_FALSE(device_type_from_name("gpu").has_value());
  CHECK_FALSE(device_type_from_name("CUDA").has_value());
  // One table: the names, the count, parse_device's diagnostic and the
  // codecs' EnumNames agree.
  static_assert(device_type_count == device_type_names.size());
  static_assert(EnumNames<DeviceType>::count == device_type_count);
  CHECK(EnumNames<DeviceType>::name(DeviceType::mps) == "mps");
  const auto bad = parse_device("gpu:0");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("expected one of " + enum_choices<DeviceType>()) != std::string::npos);
}

TEST_CASE("ir/device: printing") {
  CHECK(to_string(wrapir::cuda_device()) == "cuda:0");
  CHECK(to_string(wrapir::cuda_device(1)) == "cuda:1");
  CHECK(to_string(wrapir::cpu_device()) == "cpu");
  CHECK(to_string(Device{DeviceType::cuda, std::nullopt}) == "cuda");
  // As in Inductor's layout dumps (reference samples f_cond, i2_item_size).
  CHECK(python_repr(wrapir::cuda_device(0)) == "device(type='cuda', index=0)");
  CHECK(python_repr(wrapir::cpu_device()) == "device(type='cpu')");
  CHECK(python_repr(Device{DeviceType::xpu, 2}) == "device(type='xpu', index=2)");
}

TEST_CASE("ir/device: parsing good text") {
  CHECK(parse_device("cuda") == Device{DeviceType::cuda, std::nullopt});
  CHECK(parse_device("cuda:0") == wrapir::cuda_device(0));
  CHECK(parse_device("cuda:1") == wrapir::cuda_device(1));
  CHECK(parse_device("cuda:127") == wrapir::cuda_device(127));
  CHECK(parse_device("cpu") == wrapir::cpu_device());
  CHECK(parse_device("cpu:0") == Device{DeviceType::cpu, 0});
  CHECK(parse_device("xpu:3") == Device{DeviceType::xpu, 3});
  CHECK(parse_device("mps") == Device{DeviceType::mps, std::nullopt});
  CHECK(parse_device("meta") == Device{DeviceType::meta, std::nullopt});
  for (auto d : {wrapir::cuda_device(0), wrapir::cuda_device(7), wrapir::cpu_device(), Device{DeviceType::meta, 1}})
    CHECK(parse_device(to_string(d)) == d);
}

TEST_CASE("ir/device: parsing bad text gives one-line diagnostics") {
  CHECK(error_of("cuda:-1") == "column 6: invalid device 'cuda:-1': device index must be a non-negative decimal integer");
  CHECK(error_of("cuda:x") == "column 6: invalid device 'cuda:x': device index must be a non-negative decimal integer");
  CHECK(error_of("gpu:0") ==
        "column 1: invalid device 'gpu:0': unknown device type 'gpu', expected one of cpu, cuda, xpu, mps, meta");
  CHECK(error_of("cuda:") == "column 6: invalid device 'cuda:': missing device index after ':'");
  CHECK(error_of("cuda:01") == "column 6: invalid device 'cuda:01': device index must not have leading zeros");
  CHECK(error_of("cuda:128") == "column 6: invalid device 'cuda:128': device index is larger than 127");
  CHECK(error_of("cuda:99999999999999999999999").find("larger than 127") != std::string::npos);
  CHECK(error_of("cuda:1:2").find("column 7:") == 0);
  CHECK(error_of("cuda:+1").find("non-negative decimal") != std::string::npos);
  CHECK(error_of(" cuda").find("unknown device type") != std::string::npos);
  CHECK(error_of("").find("unknown device type ''") != std::string::npos);
  CHECK(error_of("CUDA:0").find("unknown device type 'CUDA'") != std::string::npos);
  // Long input is cut in the message, which stays one line.
  const std::string long_text(1000, 'a');
  const std::string e = error_of(long_text);
  CHECK(e.size() < 300);
  CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("ir/device: validation and the checked constructors") {
  CHECK(validate(wrapir::cuda_device(0)).has_value());
  CHECK(validate(wrapir::cpu_device()).has_value());
  auto neg = validate(Device{DeviceType::cuda, -1});
  REQUIRE_FALSE(neg.has_value());
  CHECK(neg.error().message == "device index -1 of cuda is out of range [0, 127]");
  CHECK_FALSE(validate(Device{DeviceType::cuda, 128}).has_value());
  auto bad_type = validate(Device{static_cast<DeviceType>(9), 0});
  REQUIRE_FALSE(bad_type.has_value());
  CHECK(bad_type.error().message == "device type 9 is not a DeviceType");

  CHECK(make_device(DeviceType::xpu, 1) == Device{DeviceType::xpu, 1});
  auto r = make_device(DeviceType::cuda, -2);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "device index -2 of cuda is out of range [0, 127]");

  CHECK_THROWS_AS((void)wrapir::cuda_device(-1), std::invalid_argument);
  CHECK_THROWS_AS((void)wrapir::cuda_device(128), std::invalid_argument);
}
