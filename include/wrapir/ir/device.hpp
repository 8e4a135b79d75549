#pragma once
/// \file
/// Devices: a device type and an optional index, as `torch.device` has.
///
/// `Device{cuda, 0}` prints as `cuda:0` (`to_string`) and as Inductor prints
/// it inside layouts, `device(type='cuda', index=0)` (`python_repr`); a
/// device without an index prints as `cpu` / `device(type='cpu')`.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/names.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wrapir::ir {

enum class DeviceType : std::uint8_t { cpu, cuda, xpu, mps, meta };

/// The names of the device types as torch spells them, by enumerator: the
/// one table of device type names.
inline constexpr auto device_type_names = std::to_array<std::string_view>({"cpu", "cuda", "xpu", "mps", "meta"});
inline constexpr std::size_t device_type_count = device_type_names.size();
static_assert(device_type_count == static_cast<std::size_t>(DeviceType::meta) + 1,
              "device_type_names needs one name per DeviceType");

/// `cuda`, `cpu`, ... as torch spells the type; `<invalid device type>` for
/// a value outside the enumeration.
[[nodiscard]] constexpr std::string_view device_type_name(DeviceType t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < device_type_count ? device_type_names[i] : std::string_view{"<invalid device type>"};
}

[[nodiscard]] constexpr std::optional<DeviceType> device_type_from_name(std::string_view text) noexcept {
  for (std::size_t i = 0; i < device_type_count; ++i)
    if (device_type_names[i] == text) return static_cast<DeviceType>(i);
  return std::nullopt;
}

/// Largest device index: c10::DeviceIndex is an int8_t.
inline constexpr int max_device_index = 127;

/// A device. `index` is empty for "the current device of this type" (torch's
/// `device('cuda')`, and how Inductor's CPU layouts hold `device(type='cpu')`);
/// otherwise it lies in [0, max_device_index]. The fields are public so
/// that a Device is a plain value; `cuda_device()`, `cpu_device()`, `make_device()` and
/// `parse_device()` only produce valid ones, and `validate()` checks one
/// built by hand.
struct Device {
  DeviceType type = DeviceType::cpu;
  std::optional<int> index{};

  friend constexpr bool operator==(const Device&, const Device&) = default;
};

/// Success, or why `d` is not a valid device.
[[nodiscard]] inline Result<void> validate(const Device& d) {
  if (static_cast<std::size_t>(d.type) >= device_type_count)
    return Diagnostic{"device type " + std::to_string(static_cast<unsigned>(d.type)) + " is not a DeviceType"};
  if (d.index && (*d.index < 0 || *d.index > max_device_index))
    return Diagnostic{"device index " + std::to_string(*d.index) + " of " + std::string(device_type_name(d.type)) +
                      " is out of range [0, " + std::to_string(max_device_index) + "]"};
  return {};
}

/// A device with an index, checked: a bad index is a diagnostic.
[[nodiscard]] inline Result<Device> make_device(DeviceType type, int index) {
  Device d{type, index};
  if (Result<void> valid = validate(d); !valid) return std::move(valid).error();
  return d;
}

/// `cuda:0`, `cpu`.
[[nodiscard]] inline std::string to_string(const Device& d) {
  std::string s(device_type_name(d.type));
  if (d.index) s += ":" + std::to_string(*d.index);
  return s;
}

/// The repr Python prints for a torch.device, as in Inductor's layout
/// dumps: `device(type='cuda', index=0)`, `device(type='cpu')`.
[[nodiscard]] inline std::string python_repr(const Device& d) {
  std::string s = "device(type='" + std::string(device_type_name(d.type)) + "'";
  if (d.index) s += ", index=" + std::to_string(*d.index);
  return s + ")";
}

/// Parses `cuda`, `cuda:1`, `cpu`, `xpu:0`, ... as torch.device does: a
/// known type, then optionally `:` and a decimal index without sign or
/// leading zeros, at most max_device_index. Anything else is a one-line
/// diagnostic whose column points at the offending character.
[[nodiscard]] inline Result<Device> parse_device(std::string_view text) {
  auto shown = [&] { return quote_for_diagnostic(text); };
  const std::size_t colon = text.find(':');
  const std::string_view type_text = text.substr(0, colon);
  const auto type = device_type_from_name(type_text);
  if (!type)
    return Diagnostic{"invalid device " + shown() + ": unknown device type '" +
                          std::string(type_text.substr(0, 32)) + "', expected one of cpu, cuda, xpu, mps, meta",
                      0};
  if (colon == std::string_view::npos) return Device{*type, std::nullopt};
  const std::string_view digits = text.substr(colon + 1);
  if (digits.empty()) return Diagnostic{"invalid device " + shown() + ": missing device index after ':'", colon + 1};
  int index = 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const char c = digits[i];
    if (c < '0' || c > '9')
      return Diagnostic{"invalid device " + shown() + ": device index must be a non-negative decimal integer",
                        colon + 1 + i};
    if (i == 1 && digits[0] == '0')
      return Diagnostic{"invalid device " + shown() + ": device index must not have leading zeros", colon + 1};
    index = index * 10 + (c - '0');
    if (index > max_device_index)
      return Diagnostic{"invalid device " + shown() + ": device index is larger than " +
                            std::to_string(max_device_index),
                        colon + 1};
  }
  return Device{*type, index};
}

}  // namespace wrapir::ir

namespace wrapir {

using ir::Device;
using ir::DeviceType;

// Not `wrapir::cuda(0)` as DESIGN.md's sketch spells it: `wrapir::cuda` is
// the namespace of the CUDA helpers (include/wrapir/cuda/), and a function
// of that name would make every file that includes both fail to compile.

/// `cuda:index`. A negative or too large index throws std::invalid_argument
/// (a programming error; in a constant expression it fails to compile).
/// Use `ir::make_device` or `ir::parse_device` for indices from user input.
[[nodiscard]] constexpr Device cuda_device(int index = 0) {
  if (index < 0 || index > ir::max_device_index)
    throw std::invalid_argument("wrapir::cuda_device: device index out of range [0, 127]");
  return Device{DeviceType::cuda, index};
}

/// The CPU, without an index, as Inductor's layouts hold it.
[[nodiscard]] constexpr Device cpu_device() noexcept { return Device{DeviceType::cpu, std::nullopt}; }

}  // namespace wrapir
