#pragma once
/// \file
/// What `run::autotune` (run/autotune.hpp) leaves in the program for each
/// call it rewrote: one `Comment` line just before the `KernelCall` of the
/// chosen kernel, in a documented key=value form that a consumer reads back
/// with `parse_autotune_comment`:
///
/// ```
/// autotune: multi_kernel=multi_kernel_0 chose=triton_per_fused_sum_1 ms=0.0123
///   candidates=triton_red_fused_sum_0:0.0345,triton_per_fused_sum_1:0.0123
///   device=cpu warmup=3 repetitions=25 at=s0:64,s1:128
/// ```
///
/// (one line). `ms` is the chosen candidate's median over `repetitions`
/// timed runs after `warmup` untimed ones; `candidates` lists every
/// candidate in the multi-kernel's order with its median (`-` when it was
/// not timed: a single candidate, or one that failed); `at` the symbol
/// values measured at (empty for a static program). Times are written as
/// the shortest text that reads back to the same double. Every field is one
/// token without spaces: kernel names are identifiers, and a device
/// description is reduced to `[A-Za-z0-9_.:-]` (others become `_`).
///
/// Comments change nothing a program does: every emitter renders them as
/// comments (`# autotune: ...` in Python, `// autotune: ...` in C++), so the
/// generated code says which kernel was chosen and what it cost.
#include <wrapir/emit/detail/shortest_double.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace wrapir::run {

/// One multi-kernel's choice and its measurements (see the file comment).
struct AutotuneRecord {
  struct Timing {
    std::string name;
    std::optional<double> median_ms{};  // nullopt: not timed
    friend bool operator==(const Timing&, const Timing&) = default;
  };
  std::string multi_kernel;
  std::string chosen;
  std::optional<double> median_ms{};  // nullopt: not timed (a single candidate)
  std::vector<Timing> candidates{};
  std::string device;
  std::size_t warmup = 0;
  std::size_t repetitions = 0;
  std::vector<std::pair<std::string, std::int64_t>> at{};
  friend bool operator==(const AutotuneRecord&, const AutotuneRecord&) = default;
};

/// The prefix every autotune comment starts with.
inline constexpr std::string_view autotune_comment_prefix = "autotune: ";

namespace detail {

inline void append_time(std::string& out, const std::optional<double>& ms) {
  if (ms) wrapir::detail::append_shortest_double(out, *ms);
  else out += '-';
}

/// One token: what is not `[A-Za-z0-9_.:-]` becomes `_` (device
/// descriptions have spaces and parentheses).
inline std::string token(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == ':' || c == '-';
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("-") : out;
}

inline std::optional<double> parse_time(std::string_view text) {
  if (text == "-") return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

/// Splits `text` at `sep`; an empty text gives no parts.
inline std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const std::size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
    if (text.empty()) parts.emplace_back();  // a trailing separator: an empty last part
  }
  return parts;
}

}  // namespace detail

/// The comment text for `record` (without the emitter's `#` or `//`).
[[nodiscard]] inline std::string autotune_comment(const AutotuneRecord& record) {
  std::string out(autotune_comment_prefix);
  out += "multi_kernel=" + detail::token(record.multi_kernel) + " chose=" + detail::token(record.chosen) + " ms=";
  detail::append_time(out, record.median_ms);
  out += " candidates=";
  for (std::size_t i = 0; i < record.candidates.size(); ++i) {
    if (i) out += ',';
    out += detail::token(record.candidates[i].name) + ':';
    detail::append_time(out, record.candidates[i].median_ms);
  }
  out += " device=" + detail::token(record.device) + " warmup=" + std::to_string(record.warmup) +
         " repetitions=" + std::to_string(record.repetitions) + " at=";
  for (std::size_t i = 0; i < record.at.size(); ++i)
    out += (i ? "," : "") + detail::token(record.at[i].first) + ':' + std::to_string(record.at[i].second);
  return out;
}

/// Reads back a comment written by `autotune_comment`; nullopt for any
/// other text (another comment, or a malformed or truncated record).
[[nodiscard]] inline std::optional<AutotuneRecord> parse_autotune_comment(std::string_view text) {
  if (!text.starts_with(autotune_comment_prefix)) return std::nullopt;
  text.remove_prefix(autotune_comment_prefix.size());
  AutotuneRecord r;
  constexpr std::string_view keys[] = {"multi_kernel", "chose", "ms", "candidates", "device", "warmup", "repetitions",
                                       "at"};
  const std::vector<std::string_view> fields = detail::split(text, ' ');
  if (fields.size() != std::size(keys)) return std::nullopt;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const std::size_t eq = fields[f].find('=');
    if (eq == std::string_view::npos || fields[f].substr(0, eq) != keys[f]) return std::nullopt;
    const std::string_view value = fields[f].substr(eq + 1);
    switch (f) {
      case 0: r.multi_kernel = value; break;
      case 1: r.chosen = value; break;
      case 2:
        r.median_ms = detail::parse_time(value);
        if (!r.median_ms && value != "-") return std::nullopt;
        break;
      case 3:
        for (const std::string_view c : detail::split(value, ',')) {
          const std::size_t colon = c.rfind(':');
          if (colon == std::string_view::npos || colon == 0) return std::nullopt;
          AutotuneRecord::Timing t{std::string(c.substr(0, colon)), detail::parse_time(c.substr(colon + 1))};
          if (!t.median_ms && c.substr(colon + 1) != "-") return std::nullopt;
          r.candidates.push_back(std::move(t));
        }
        break;
      case 4: r.device = value; break;
      case 5:
        if (!detail::parse_int(value, r.warmup)) return std::nullopt;
        break;
      case 6:
        if (!detail::parse_int(value, r.repetitions)) return std::nullopt;
        break;
      default:
        for (const std::string_view s : detail::split(value, ',')) {
          const std::size_t colon = s.rfind(':');
          std::int64_t v = 0;
          if (colon == std::string_view::npos || colon == 0 || !detail::parse_int(s.substr(colon + 1), v))
            return std::nullopt;
          r.at.emplace_back(std::string(s.substr(0, colon)), v);
        }
        break;
    }
  }
  if (r.multi_kernel.empty() || r.chosen.empty()) return std::nullopt;
  return r;
}

}  // namespace wrapir::run
