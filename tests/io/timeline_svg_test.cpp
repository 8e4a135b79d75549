// Tests of include/wrapir/io/timeline_svg.hpp: one rectangle per placed
// block where the placement puts it, colours by role, escaped names.

#include <wrapir/io/timeline_svg.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace {

using wrapir::pass::AllocationTrace;
using wrapir::pass::Placement;

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

AllocationTrace two_blocks() {
  AllocationTrace t;
  t.allocations = {{"buf0", 256, 0, 2}, {"buf1", 128, 1, 4, 0, true}};
  t.steps = 4;
  return t;
}

}  // namespace

TEST_CASE("io/timeline_svg: a rectangle per block, scaled by time and offset") {
  const AllocationTrace t = two_blocks();
  const Placement p{{{0, 0}, {0, 256}}, {{0, 384}}};
  const std::string svg = wrapir::io::timeline_svg(t, p, {}, {.width = 400, .height = 384, .title = "plan"});
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.ends_with("</svg>\n"));
  CHECK(count(svg, "<title>") == 2);
  // 400 units for 4 steps, 384 units for 384 bytes: buf1 spans steps 1..4
  // at bytes 256..384, i.e. x 190..490 (left margin 90), y 50..178.
  CHECK(svg.find("<rect x=\"190.00\" y=\"50.00\" width=\"300.00\" height=\"128.00\" fill=\"#E69F00\"") !=
        std::string::npos);
  CHECK(svg.find("buf1 (output): 128 bytes, steps [1, 4), arena 0 offset 256") != std::string::npos);
  CHECK(svg.find("max-live lower bound 384 bytes") != std::string::npos);
  CHECK(svg.find(">plan</text>") != std::string::npos);
}

TEST_CASE("io/timeline_svg: roles pick colours and names are escaped") {
  AllocationTrace t = two_blocks();
  t.allocations[0].name = "a<b>&\"c\"\x01";
  const Placement p{{{0, 0}, {0, 256}}, {{0, 384}}};
  const std::vector<std::string_view> roles{"workspace", "comm"};
  const std::string svg = wrapir::io::timeline_svg(t, p, roles);
  CHECK(svg.find("a&lt;b&gt;&amp;&quot;c&quot;? (workspace)") != std::string::npos);
  CHECK(svg.find("fill=\"#009E73\" stroke") != std::string::npos);
  CHECK(svg.find("fill=\"#CC79A7\" stroke") != std::string::npos);
  CHECK(svg.find('\x01') == std::string::npos);
}

TEST_CASE("io/timeline_svg: arenas stack and out-of-range placements are skipped, not drawn wrong") {
  AllocationTrace t = two_blocks();
  const Placement p{{{0, 0}, {7, 0}}, {{0, 256}, {1, 128}}};  // block 1 names a missing arena
  const std::string svg = wrapir::io::timeline_svg(t, p);
  CHECK(count(svg, "<title>") == 1);
  CHECK(svg.find(">arena 1</text>") != std::string::npos);
  CHECK(wrapir::io::timeline_svg(AllocationTrace{}, Placement{}).find("0 blocks, 0 arena(s)") != std::string::npos);
}
