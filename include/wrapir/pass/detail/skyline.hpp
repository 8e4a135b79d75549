#pragma once
/// \file
/// Which block is on top at each time step, as blocks are stacked one after
/// another: `symbolic_placement` (pass/arena.hpp) places blocks in order of
/// their offsets and needs, for each one, the blocks below it that no later
/// block covers; those are among the blocks that were last placed somewhere
/// in its lifetime. A "paint" over a map of disjoint time segments answers
/// that and makes the new block the top of its lifetime; each segment it
/// reads is one it removes (but for the two it cuts at its ends), so n
/// paints cost O(n log n) however the lifetimes nest.
///
/// The map's nodes come from a pool of 48-byte blocks, not one malloc each
/// (a node of 44 bytes took a 64-byte chunk there): at a million lines
/// they were a quarter of the plan stage's peak. Steps are 32-bit, as in
/// the arena path's trace (pass/detail/arena_blocks.hpp).

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory_resource>
#include <vector>

namespace wrapir::pass::detail {

class Skyline {
 public:
  Skyline() = default;
  // The map's nodes live in the pool the object owns.
  Skyline(const Skyline&) = delete;
  Skyline& operator=(const Skyline&) = delete;

  /// Appends to `under` the blocks on top somewhere in `[begin, end)`, in
  /// time order (a block may appear more than once), then puts `block` on
  /// top of all of `[begin, end)`. `begin < end`.
  void paint(std::uint32_t begin, std::uint32_t end, std::uint32_t block, std::vector<std::uint32_t>& under) {
    auto first = segments_.lower_bound(begin);
    if (first != segments_.begin()) {
      const auto before = std::prev(first);
      if (before->second.end > begin) {  // starts before `begin` and reaches into it: keep its head
        const Segment cut = before->second;
        under.push_back(cut.block);
        before->second.end = begin;
        if (cut.end > end) {  // and its tail: no other segment starts in [begin, end)
          const auto tail = segments_.emplace_hint(first, end, cut);
          segments_.emplace_hint(tail, begin, Segment{end, block});
          return;
        }
      }
    }
    auto last = first;
    for (; last != segments_.end() && last->first < end; ++last) {
      under.push_back(last->second.block);
      if (last->second.end > end) {  // reaches past `end`: keep its tail
        const Segment cut = last->second;
        const auto next = segments_.erase(first, std::next(last));
        const auto tail = segments_.emplace_hint(next, end, cut);
        segments_.emplace_hint(tail, begin, Segment{end, block});
        return;
      }
    }
    const auto next = segments_.erase(first, last);
    segments_.emplace_hint(next, begin, Segment{end, block});
  }

  /// The segments, for tests: `{begin, {end, block}}` in time order.
  struct Segment {
    std::uint32_t end;
    std::uint32_t block;
  };
  [[nodiscard]] const std::pmr::map<std::uint32_t, Segment>& segments() const noexcept { return segments_; }

 private:
  // Chunks of at most 4,096 nodes: a pool that doubled its chunks without
  // bound could leave most of the last one unused.
  std::pmr::unsynchronized_pool_resource pool_{std::pmr::pool_options{4096, 64}};
  std::pmr::map<std::uint32_t, Segment> segments_{&pool_};
};

}  // namespace wrapir::pass::detail
