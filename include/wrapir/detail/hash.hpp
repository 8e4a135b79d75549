#pragma once
/// \file
/// The one in-process hash mix of wrapir: folds a value into a running hash.
///
/// Boost's `hash_combine` widened to 64 bits: cheap, and good enough for
/// hash tables whose entries are compared in full (expression uniquing,
/// line hashing, planner keys, graph caches). Values are stable within one
/// process only; anything written to disk uses `run/detail/stable_hash.hpp`
/// (FNV-1a over a fixed byte encoding) instead.

#include <cstddef>

namespace wrapir::detail {

/// `seed` with `value` folded in.
[[nodiscard]] constexpr std::size_t hash_mix(std::size_t seed, std::size_t value) noexcept {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

}  // namespace wrapir::detail
