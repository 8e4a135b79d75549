#pragma once
/// \file
/// A stable LSD radix sort of (key, index) pairs by key: the planners sort
/// hundreds of thousands of blocks by an integer (an offset, a begin), and
/// a comparison sort that read the key through the index missed the cache
/// on both sides of every comparison. Bytes that every key shares are
/// skipped, so keys spanning a small range cost one or two passes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace wrapir::pass::detail {

struct KeyedIndex {
  std::uint64_t key;
  std::uint32_t index;
};

/// Sorts `items` by key, keeping the order of equal keys; `scratch` is
/// reused storage.
inline void radix_sort(std::vector<KeyedIndex>& items, std::vector<KeyedIndex>& scratch) {
  if (items.size() < 2) return;
  std::uint64_t all_or = 0, all_and = ~std::uint64_t{0};
  for (const KeyedIndex& k : items) {
    all_or |= k.key;
    all_and &= k.key;
  }
  const std::uint64_t varying = all_or ^ all_and;  // the bits that differ somewhere
  scratch.resize(items.size());
  for (unsigned shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xff) == 0) continue;
    std::array<std::size_t, 257> start{};
    for (const KeyedIndex& k : items) ++start[((k.key >> shift) & 0xff) + 1];
    for (std::size_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
    for (const KeyedIndex& k : items) scratch[start[(k.key >> shift) & 0xff]++] = k;
    items.swap(scratch);
  }
}

}  // namespace wrapir::pass::detail
