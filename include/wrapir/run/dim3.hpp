#pragma once
/// \file
/// `Dim3`: a launch grid or block, as the hardware counts it.

#include <cstdint>
#include <string>

namespace wrapir::run {

/// Three extents, each at least 0; 1 where a dimension is unused. A grid
/// with any extent 0 is empty: launching it does nothing, so launchers
/// return without calling the driver (a zero-sized tensor is ordinary in a
/// wrapper; the driver rejects a zero grid).
struct Dim3 {
  std::uint32_t x = 1;
  std::uint32_t y = 1;
  std::uint32_t z = 1;

  [[nodiscard]] constexpr bool empty() const noexcept { return x == 0 || y == 0 || z == 0; }
  /// x·y·z; exact for every grid within CUDA's limits (x < 2^31, y and z
  /// at most 65535), whose volume is below 2^63.
  [[nodiscard]] constexpr std::uint64_t volume() const noexcept {
    return static_cast<std::uint64_t>(x) * y * static_cast<std::uint64_t>(z);
  }
  friend constexpr bool operator==(Dim3, Dim3) = default;
};

/// `(8, 1, 1)`: how diagnostics and tests show a grid.
[[nodiscard]] inline std::string to_string(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace wrapir::run
