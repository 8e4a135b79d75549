#pragma once
/// \file
/// What Inductor's pool planner (pass/pools.hpp) places: its policies and
/// its blocks.

#include <cstdint>
#include <string_view>

namespace wrapir::pass {

/// Inductor's `config.memory_pool`.
enum class PoolPolicy : std::uint8_t { none, intermediates, outputs, combined };

[[nodiscard]] constexpr std::string_view pool_policy_name(PoolPolicy p) noexcept {
  switch (p) {
    case PoolPolicy::none:
      return "none";
    case PoolPolicy::intermediates:
      return "intermediates";
    case PoolPolicy::outputs:
      return "outputs";
    case PoolPolicy::combined:
      return "combined";
  }
  return "<invalid pool policy>";
}

/// A block for the pool tree: Inductor's `Allocation`.
struct PoolBlock {
  std::int64_t size_hint = 0;
  /// Inductor's PoolLiveRange: see the file comment.
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int32_t device = 0;
  bool is_output = false;
};

}  // namespace wrapir::pass
