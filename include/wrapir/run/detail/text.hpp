#pragma once
/// \file
/// Small text helpers of the run/ layer: quoting names for diagnostics (the
/// library's one escaper, detail/escape.hpp) and fixed-width hexadecimal. The multi-kernel dispatcher and its cache stay
/// free of the IR headers (and so of the expression library), which is why
/// they do not use ir/names.hpp's quoting; run/grid.hpp, which computes
/// grids from IR types, does include them.

#include <wrapir/detail/escape.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace wrapir::run::detail {

/// `name` in single quotes as every diagnostic quotes it
/// (`wrapir::detail::diagnostic_style`), so that a hostile name cannot forge
/// or break a diagnostic line.
[[nodiscard]] inline std::string quoted(std::string_view name) {
  std::string out;
  wrapir::detail::append_escaped(out, name, wrapir::detail::diagnostic_style);
  return out;
}

/// `value` as exactly 16 lowercase hexadecimal digits.
[[nodiscard]] inline std::string hex16(std::uint64_t value) {
  static constexpr std::string_view digits = "0123456789abcdef";
  std::string out(16, '0');
  for (std::size_t i = 0; i < 16; ++i) out[15 - i] = digits[(value >> (4 * i)) & 0xf];
  return out;
}

/// The value of exactly 16 lowercase hexadecimal digits, or nullopt for
/// anything else (uppercase, a sign, another length).
[[nodiscard]] inline std::optional<std::uint64_t> parse_hex16(std::string_view text) noexcept {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    std::uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<std::uint64_t>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    value = (value << 4) | digit;
  }
  return value;
}

/// The value of a canonical decimal (digits only, no sign, no leading zero
/// unless the number is 0) that fits `std::uint64_t`, or nullopt.
[[nodiscard]] inline std::optional<std::uint64_t> parse_canonical_decimal(std::string_view text) noexcept {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text.front() == '0')) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace wrapir::run::detail
