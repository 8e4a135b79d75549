#pragma once
/// \file
/// A memory timeline as an SVG picture: time steps across, bytes up, one
/// rectangle per block of a planned trace, coloured by the role of its
/// buffer, for people who would rather look at a plan than read it.
/// `wrapir plan --timeline FILE.svg` writes one.
///
/// Arenas (pools) are drawn one above the other, each as a band as tall as
/// its size, so the picture's height is the placement's total memory; a
/// dashed line marks the max-live lower bound of the whole trace for
/// comparison. Every rectangle has a tooltip (`<title>`) with the buffer's
/// name, size, live range and offset. Names are XML-escaped.

#include <wrapir/pass/trace.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wrapir::io {

struct TimelineOptions {
  /// Size of the drawing area in SVG user units (pixels), without margins.
  int width = 1200;
  int height = 600;
  /// A heading above the picture; empty for none.
  std::string title{};
};

namespace detail::timeline {

inline void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += "?";
        else out += c;
    }
  }
}

inline std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", v);
  return buffer;
}

struct RoleColour {
  std::string_view role;
  std::string_view fill;
};

// Colour-blind-safe (Okabe-Ito) colours for the buffer roles.
inline constexpr std::array<RoleColour, 6> role_colours{{{"intermediate", "#56B4E9"},
                                                         {"output", "#E69F00"},
                                                         {"workspace", "#009E73"},
                                                         {"comm", "#CC79A7"},
                                                         {"input", "#999999"},
                                                         {"constant", "#F0E442"}}};
inline constexpr std::string_view other_colour = "#0072B2";

inline std::string_view colour_of(std::string_view role) {
  for (const RoleColour& rc : role_colours)
    if (rc.role == role) return rc.fill;
  return other_colour;
}

}  // namespace detail::timeline

/// The SVG text of `placement` of `trace`. `roles[i]`, when given, names the
/// role of block `i` (`intermediate`, `output`, `workspace`, `comm`, ...;
/// see `ir::BufferRole`) and picks its colour; blocks without one are
/// coloured as intermediates, or as outputs when `is_output`. The placement
/// is drawn as given; check it with `pass::check_placement` first, since
/// overlapping rectangles are exactly what a wrong plan looks like.
[[nodiscard]] inline std::string timeline_svg(const pass::AllocationTrace& trace, const pass::Placement& placement,
                                              std::span<const std::string_view> roles = {},
                                              const TimelineOptions& options = {}) {
  namespace tl = detail::timeline;
  constexpr double left = 90, right = 20, top = 50, bottom = 70;
  const double width = std::max(options.width, 100), height = std::max(options.height, 100);
  const std::size_t steps = std::max<std::size_t>(
      {trace.steps, std::size_t{1}, [&] {
         std::size_t end = 0;
         for (const pass::TracedAllocation& a : trace.allocations) end = std::max(end, a.end);
         return end;
       }()});

  // Arena i starts at base[i] bytes from the bottom of the picture.
  std::vector<double> base(placement.arenas.size(), 0.0);
  double total = 0;
  for (std::size_t i = 0; i < placement.arenas.size(); ++i) {
    base[i] = total;
    total += static_cast<double>(std::max<std::int64_t>(placement.arenas[i].bytes, 0));
  }
  const double bound = static_cast<double>(pass::max_live_bytes(trace));
  const double top_bytes = std::max({total, bound, 1.0});
  const double x_scale = width / static_cast<double>(steps);
  const double y_scale = height / top_bytes;
  auto x_of = [&](double step) { return left + step * x_scale; };
  auto y_of = [&](double bytes) { return top + height - bytes * y_scale; };

  std::string out;
  out.reserve(512 + trace.allocations.size() * 200);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + tl::number(left + width + right) + "\" height=\"" +
         tl::number(top + height + bottom) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!options.title.empty()) {
    out += "<text x=\"" + tl::number(left) + "\" y=\"20\" font-size=\"15\">";
    tl::append_escaped(out, options.title);
    out += "</text>\n";
  }
  out += "<text x=\"" + tl::number(left) + "\" y=\"38\">" + std::to_string(trace.allocations.size()) +
         " blocks, " + std::to_string(placement.arenas.size()) + " arena(s), " +
         std::to_string(placement.total_bytes()) + " bytes; max-live lower bound " +
         std::to_string(pass::max_live_bytes(trace)) + " bytes</text>\n";

  // Arena bands and their labels.
  for (std::size_t i = 0; i < placement.arenas.size(); ++i) {
    const double lo = y_of(base[i]), hi = y_of(base[i] + static_cast<double>(placement.arenas[i].bytes));
    out += "<rect x=\"" + tl::number(left) + "\" y=\"" + tl::number(hi) + "\" width=\"" + tl::number(width) +
           "\" height=\"" + tl::number(lo - hi) + "\" fill=\"#f4f4f4\" stroke=\"#bbbbbb\"/>\n";
    out += "<text x=\"" + tl::number(left - 6) + "\" y=\"" + tl::number((lo + hi) / 2 + 4) +
           "\" text-anchor=\"end\">arena " + std::to_string(i) + "</text>\n";
  }

  // One rectangle per placed block.
  for (std::size_t i = 0; i < trace.allocations.size() && i < placement.blocks.size(); ++i) {
    const pass::TracedAllocation& a = trace.allocations[i];
    const pass::BlockPlacement& b = placement.blocks[i];
    if (b.arena >= placement.arenas.size() || a.bytes <= 0) continue;
    const double lo = base[b.arena] + static_cast<double>(b.offset);
    const double y0 = y_of(lo + static_cast<double>(a.bytes)), y1 = y_of(lo);
    const std::string_view role = i < roles.size() ? roles[i] : (a.is_output ? "output" : "intermediate");
    out += "<rect x=\"" + tl::number(x_of(static_cast<double>(a.begin))) + "\" y=\"" + tl::number(y0) +
           "\" width=\"" + tl::number(static_cast<double>(a.end - a.begin) * x_scale) + "\" height=\"" +
           tl::number(std::max(y1 - y0, 0.5)) + "\" fill=\"" + std::string(tl::colour_of(role)) +
           "\" stroke=\"#333333\" stroke-width=\"0.3\"><title>";
    tl::append_escaped(out, a.name.empty() ? "block " + std::to_string(i) : a.name);
    out += " (";
    tl::append_escaped(out, role);
    out += "): " + std::to_string(a.bytes) + " bytes, steps [" + std::to_string(a.begin) + ", " +
           std::to_string(a.end) + "), arena " + std::to_string(b.arena) + " offset " + std::to_string(b.offset) +
           "</title></rect>\n";
  }

  // The lower bound, the axes, the legend.
  out += "<line x1=\"" + tl::number(left) + "\" x2=\"" + tl::number(left + width) + "\" y1=\"" +
         tl::number(y_of(bound)) + "\" y2=\"" + tl::number(y_of(bound)) +
         "\" stroke=\"#D55E00\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n";
  out += "<line x1=\"" + tl::number(left) + "\" x2=\"" + tl::number(left + width) + "\" y1=\"" +
         tl::number(top + height) + "\" y2=\"" + tl::number(top + height) + "\" stroke=\"black\"/>\n";
  out += "<line x1=\"" + tl::number(left) + "\" x2=\"" + tl::number(left) + "\" y1=\"" + tl::number(top) +
         "\" y2=\"" + tl::number(top + height) + "\" stroke=\"black\"/>\n";
  out += "<text x=\"" + tl::number(left + width / 2) + "\" y=\"" + tl::number(top + height + 18) +
         "\" text-anchor=\"middle\">time step (0 to " + std::to_string(steps) + ")</text>\n";
  double legend_x = left;
  const double legend_y = top + height + 40;
  for (const tl::RoleColour& rc : tl::role_colours) {
    out += "<rect x=\"" + tl::number(legend_x) + "\" y=\"" + tl::number(legend_y - 10) +
           "\" width=\"12\" height=\"12\" fill=\"" + std::string(rc.fill) + "\"/><text x=\"" +
           tl::number(legend_x + 16) + "\" y=\"" + tl::number(legend_y) + "\">" + std::string(rc.role) + "</text>\n";
    legend_x += 110;
  }
  out += "<line x1=\"" + tl::number(legend_x) + "\" x2=\"" + tl::number(legend_x + 24) + "\" y1=\"" +
         tl::number(legend_y - 4) + "\" y2=\"" + tl::number(legend_y - 4) +
         "\" stroke=\"#D55E00\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/><text x=\"" +
         tl::number(legend_x + 30) + "\" y=\"" + tl::number(legend_y) + "\">max-live lower bound</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace wrapir::io
