#pragma once
/// \file
/// Which blocks an arena should leave to the allocator, so that the arena
/// plus the storage it cannot hold peaks no higher than the max-live bound.
///
/// An arena is one allocation held for the whole call, so the memory a
/// program holds at step `t` is the arena's size plus `U(t)`: the storage
/// that is not the arena's to place — extern results (a fallback allocates
/// its own outputs), control-flow results, workspaces, existing pools. When
/// `U` peaks while the arena's own blocks are few and the arena peaks while
/// `U` is small, arena + max U exceeds the bound max(A(t) + U(t)). Example
/// (the transformer block of the corpus): SDPA's 8 KiB result lives beside a
/// 40 KiB peak of arena blocks, and a later 8 KiB block raises the arena to
/// 48 KiB after SDPA's result is gone: arena 48 + 8 = 56 KiB against a bound
/// of 48.
///
/// The remedy: choose a capacity `C = bound - max U` and, at each step where
/// the arena's blocks need more than `C`, leave some of them to the
/// allocator (`Allocate` stays `Allocate`), so they hold memory only while
/// they live. A block may go only where it fits under the bound at every
/// step of its life: `U(t) + spilled(t) + its bytes <= max U`. Steps are
/// visited in order and the largest block that fits goes first. Where no
/// block fits, the device keeps every block (the caller keeps the plain
/// plan when spilling does not pay). Work is bounded by `work_limit` step
/// visits; past it nothing is spilled.
#include <wrapir/pass/detail/arena_blocks.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace wrapir::pass::detail {

/// `true` for each block of `placed` to leave out of the arena, over a
/// program of `steps` steps. `others` are the spans of the storage the
/// arena does not hold (their `fixed_size` is not read); sizes in `placed`
/// are rounded up to `alignment`: blocks under it take less in the arena
/// (`block_alignment`), but estimating with their smaller sizes judged the
/// arena to meet the bound where mixing alignments leaves gaps
/// (`cond_branch_layouts` of the corpus peaked at 740 bytes instead of 705),
/// so the estimate stays at the whole alignment.
[[nodiscard]] inline std::vector<bool> blocks_to_spill(std::span<const ArenaBlock> placed,
                                                       std::span<const ArenaBlock> others, std::size_t steps,
                                                       std::int64_t alignment, std::size_t work_limit = 1u << 24) {
  std::vector<bool> spill(placed.size(), false);
  if (others.empty() || steps == 0) return spill;
  std::vector<std::int32_t> devices;
  for (const ArenaBlock& s : others)
    if (s.bytes > 0 && s.end > s.begin && std::find(devices.begin(), devices.end(), s.device) == devices.end())
      devices.push_back(s.device);
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max() / 4;  // sums below stay exact
  const auto aligned = [&](std::int64_t b) { return b > max ? max : (b + alignment - 1) / alignment * alignment; };
  std::size_t work = 0;
  for (const std::int32_t device : devices) {
    // U(t) and A(t) by difference arrays over the steps.
    std::vector<std::int64_t> u(steps + 1, 0), a(steps + 1, 0);
    for (const ArenaBlock& s : others)
      if (s.device == device && s.bytes > 0 && s.end > s.begin && s.begin < steps) {
        u[s.begin] += std::min(s.bytes, max);
        u[std::min<std::size_t>(s.end, steps)] -= std::min(s.bytes, max);
      }
    std::vector<std::size_t> mine;
    for (std::size_t i = 0; i < placed.size(); ++i) {
      const ArenaBlock& b = placed[i];
      if (b.device != device || b.bytes <= 0 || b.end <= b.begin || b.begin >= steps) continue;
      mine.push_back(i);
      a[b.begin] += aligned(b.bytes);
      a[std::min<std::size_t>(b.end, steps)] -= aligned(b.bytes);
    }
    if (mine.empty()) continue;
    std::int64_t max_u = 0, max_a = 0, bound = 0;
    for (std::size_t t = 0; t < steps; ++t) {
      if (t > 0) {
        u[t] += u[t - 1];
        a[t] += a[t - 1];
      }
      max_u = std::max(max_u, u[t]);
      max_a = std::max(max_a, a[t]);
      bound = std::max(bound, a[t] + u[t]);
    }
    if (max_u == 0 || max_a + max_u <= bound) continue;  // the plain arena meets the bound
    const std::int64_t capacity = bound - max_u;
    // Blocks live at each step where the arena would exceed its capacity,
    // visited in step order; spilled(t) as a plain array (steps are few
    // where this runs: it is bounded by `work_limit`).
    std::vector<std::int64_t> spilled(steps, 0);
    std::vector<bool> device_spill(placed.size(), false);
    bool failed = false;
    for (std::size_t t = 0; t < steps && !failed; ++t) {
      std::int64_t excess = a[t] - capacity;
      while (excess > 0) {
        std::size_t best = placed.size();
        for (const std::size_t i : mine) {
          const ArenaBlock& b = placed[i];
          if (++work > work_limit) return std::vector<bool>(placed.size(), false);
          if (device_spill[i] || b.begin > t || b.end <= t) continue;
          if (best < placed.size() && placed[best].bytes >= b.bytes) continue;
          // It fits under the bound at every step of its life.
          bool fits = true;
          for (std::size_t s = b.begin; s < std::min<std::size_t>(b.end, steps) && fits; ++s) {
            fits = u[s] + spilled[s] + b.bytes <= max_u;
            if (++work > work_limit) return std::vector<bool>(placed.size(), false);
          }
          if (fits) best = i;
        }
        if (best == placed.size()) {
          failed = true;
          break;
        }
        const ArenaBlock& b = placed[best];
        device_spill[best] = true;
        for (std::size_t s = b.begin; s < std::min<std::size_t>(b.end, steps); ++s) {
          spilled[s] += b.bytes;
          a[s] -= aligned(b.bytes);
        }
        excess = a[t] - capacity;
      }
    }
    if (failed) continue;
    for (const std::size_t i : mine)
      if (device_spill[i]) spill[i] = true;
  }
  return spill;
}

}  // namespace wrapir::pass::detail
