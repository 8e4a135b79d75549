#pragma once
/// \file
/// A hash whose value is the same on every platform, compiler and run:
/// 64-bit FNV-1a over an explicit little-endian byte encoding.
///
/// Keys of files on disk (the multi-kernel choice cache) outlive the process
/// that wrote them, so `std::hash` — whose values differ between standard
/// libraries and may be salted per run — cannot name them. FNV-1a is small,
/// has published test vectors (tests check them) and is good enough for a
/// cache whose entries are validated on load: a collision costs at worst a
/// wrong-but-valid choice among candidates that all compute the same result.

#include <cstdint>
#include <span>
#include <string_view>

namespace wrapir::run::detail {

inline constexpr std::uint64_t fnv1a_64_offset_basis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t fnv1a_64_prime = 0x100000001b3ULL;

/// FNV-1a of `bytes`, continuing from `state` (the offset basis for a fresh hash).
[[nodiscard]] constexpr std::uint64_t fnv1a_64(std::string_view bytes,
                                               std::uint64_t state = fnv1a_64_offset_basis) noexcept {
  for (const char c : bytes) {
    state ^= static_cast<std::uint8_t>(c);
    state *= fnv1a_64_prime;
  }
  return state;
}

/// Feeds typed fields into one FNV-1a state. Every field is length-prefixed
/// or fixed-width, so that field boundaries are part of the hash:
/// ("ab", "c") and ("a", "bc") hash differently.
class StableHasher {
 public:
  constexpr StableHasher& add_u64(std::uint64_t value) noexcept {
    for (int byte = 0; byte < 8; ++byte) {
      state_ ^= (value >> (8 * byte)) & 0xffU;
      state_ *= fnv1a_64_prime;
    }
    return *this;
  }
  constexpr StableHasher& add_i64(std::int64_t value) noexcept { return add_u64(static_cast<std::uint64_t>(value)); }
  constexpr StableHasher& add_string(std::string_view text) noexcept {
    add_u64(text.size());
    state_ = fnv1a_64(text, state_);
    return *this;
  }
  constexpr StableHasher& add_i64s(std::span<const std::int64_t> values) noexcept {
    add_u64(values.size());
    for (const std::int64_t v : values) add_i64(v);
    return *this;
  }
  [[nodiscard]] constexpr std::uint64_t digest() const noexcept { return state_; }

 private:
  std::uint64_t state_ = fnv1a_64_offset_basis;
};

}  // namespace wrapir::run::detail
