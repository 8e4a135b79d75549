#pragma once
/// \file
/// UTF-8 well-formedness (RFC 3629), shared by the writers that must not
/// pass malformed text on: the JSON codec and the Python emitter.

#include <cstddef>
#include <string_view>

namespace wrapir::detail {

/// The length of the well-formed UTF-8 sequence at `s[i]` (1 for ASCII), or
/// 0 when the bytes there are not one: overlong forms, surrogates and code
/// points above U+10FFFF are not well-formed. `i < s.size()`.
[[nodiscard]] constexpr std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto continuation = [&](std::size_t k) { return i + k < s.size() && (byte(k) & 0xc0) == 0x80; };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xc2 && b0 <= 0xdf) return continuation(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b0 == 0xe0 && byte(1) < 0xa0) return 0;   // overlong
    if (b0 == 0xed && byte(1) >= 0xa0) return 0;  // surrogates
    return 3;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b0 == 0xf0 && byte(1) < 0x90) return 0;   // overlong
    if (b0 == 0xf4 && byte(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

[[nodiscard]] constexpr bool is_valid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace wrapir::detail
