#pragma once
/// \file
/// Doubles as the shortest text that reads back to the same value, in the
/// spelling Python and wrapir's text form share; used by both emitters.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>

namespace wrapir::detail {

/// Appends `v` in the shortest form that reads back to the same double, with
/// a `.` or an exponent so that it never reads as an int: `1.0`, `-0.0`,
/// `1e+300`, `inf`, `-inf`, `nan` (`-nan` for a NaN with the sign bit; other
/// NaN payload bits are not kept).
inline void append_shortest_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += std::signbit(v) ? "-nan" : "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v < 0 ? "-inf" : "inf";
    return;
  }
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  const std::string_view text(buffer, ec == std::errc{} ? static_cast<std::size_t>(end - buffer) : 0);
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

}  // namespace wrapir::detail
