// Tests of include/wrapir/pass/plan_stats.hpp: the max-live sum without a
// sort against the event sweep of pass/trace.hpp (dense and sparse time,
// several devices, sizes that overflow), the held trace of a program with
// pools, and the per-buffer sizes it reads (pass/liveness.hpp).

#include <wrapir/ir/builder.hpp>
#include <wrapir/pass/arena.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/plan_stats.hpp>
#include <wrapir/pass/trace.hpp>
#include <wrapir/pass/traces.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace wrapir::ir;
namespace pass = wrapir::pass;
using pass::detail::LiveSpan;

/// The trace `max_live_bytes` takes for `spans`.
pass::AllocationTrace as_trace(const std::vector<LiveSpan>& spans) {
  pass::AllocationTrace t;
  for (const LiveSpan& s : spans) t.allocations.push_back({"b", s.bytes, s.begin, s.end, s.device, s.is_output});
  return t;
}

}  // namespace

TEST_CASE("plan_stats: the max-live sum without a sort is the event sweep's") {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::mt19937_64 rng(5);
  for (int round = 0; round < 400; ++round) {
    CAPTURE(round);
    const std::size_t n = rng() % 60;
    // Dense steps, then steps far apart (the sweep), a few devices, empty
    // and negative entries, and now and then sizes whose sum overflows.
    const std::size_t stretch = round % 4 == 3 ? 1'000'000 : 1;
    const bool huge = round % 10 == 9;
    std::vector<LiveSpan> spans;
    for (std::size_t i = 0; i < n; ++i) {
      LiveSpan s;
      s.begin = rng() % 40 * stretch;
      s.end = s.begin + (rng() % 8) * stretch;  // sometimes empty
      s.bytes = huge ? max / 3 + static_cast<std::int64_t>(rng() % 1000)
                     : static_cast<std::int64_t>(rng() % 5000) - 200;  // sometimes <= 0
      s.device = static_cast<std::int32_t>(rng() % 3) * 256;
      spans.push_back(s);
    }
    CHECK(pass::detail::max_live_of(spans) == pass::max_live_bytes(as_trace(spans)));
  }
  CHECK(pass::detail::max_live_of({}) == 0);
}

TEST_CASE("plan_stats: the held trace names its buffers and pools, with carved regions as zero bytes") {
  const pass::AllocationTrace t = pass::random_trace({.blocks = 40, .devices = 2}, 3);
  const auto planned = pass::plan_arena(pass::program_from_trace(t));
  REQUIRE(planned);
  const Program& q = planned.value().program;
  const auto held = pass::held_trace(q);
  REQUIRE(held);
  const pass::HeldTrace& h = held.value();
  REQUIRE(h.trace.allocations.size() == h.owners.size());
  std::size_t pools = 0;
  for (std::size_t i = 0; i < h.owners.size(); ++i) {
    const pass::TracedAllocation& a = h.trace.allocations[i];
    if (h.owners[i].pool) {
      ++pools;
      CHECK(a.name == q.pool(*h.owners[i].pool).name);
      CHECK(a.bytes > 0);
    } else {
      REQUIRE(h.owners[i].buffer);
      CHECK(a.name == q.buffer(*h.owners[i].buffer).name);
      CHECK(a.bytes == 0);  // every buffer is carved from an arena
    }
  }
  CHECK(pools == 2);
  // The planned program's peak is its held trace's, measured either way.
  CHECK(planned.value().stats.peak_bytes == pass::max_live_bytes(h.trace));
}

TEST_CASE("plan_stats: a buffer's size is the same every time it is asked, and an error is reported every time") {
  Program p{"graph"};
  Builder b{p};
  const auto s0 = b.size_symbol("s0", 16);
  const auto big = b.size_symbol("s1", std::int64_t{1} << 62);
  const BufferId small = b.empty({s0}, DType::float32);
  const BufferId huge = b.empty({big}, DType::float32);
  pass::HintEvaluator hints{p, {}};
  for (int ask = 0; ask < 2; ++ask) {
    CAPTURE(ask);
    const auto bytes = hints.buffer_bytes(p, small);
    REQUIRE(bytes);
    CHECK(bytes.value() == 64);
    const auto overflow = hints.buffer_bytes(p, huge);
    REQUIRE_FALSE(overflow);
    CHECK(overflow.error().message.find("overflows") != std::string::npos);
  }
}

TEST_CASE("plan_stats: known block sizes must be one per block of the liveness") {
  const pass::AllocationTrace t = pass::random_trace({.blocks = 12}, 4);
  const Program p = pass::program_from_trace(t);
  const auto live = pass::liveness_of(p);
  REQUIRE(live);
  pass::HintEvaluator hints{p, {}};
  const auto known = pass::detail::spans_from(p, live.value(), hints);
  REQUIRE(known);
  REQUIRE(known.value().size() == live.value().lifetimes.size());
  // The known sizes give the held trace the table gives.
  const auto from_table = pass::detail::held_spans_from(p, live.value(), hints);
  const auto from_known = pass::detail::held_spans_from(p, live.value(), hints, known.value());
  REQUIRE(from_table);
  REQUIRE(from_known);
  REQUIRE(from_known.value().spans.size() == from_table.value().spans.size());
  for (std::size_t u = 0; u < from_table.value().spans.size(); ++u) {
    CAPTURE(u);
    const LiveSpan &a = from_table.value().spans[u], &b = from_known.value().spans[u];
    CHECK(a.begin == b.begin);
    CHECK(a.end == b.end);
    CHECK(a.bytes == b.bytes);
    CHECK(a.device == b.device);
    CHECK(a.is_output == b.is_output);
  }
  // One short: a diagnostic, not a read past the end.
  const std::vector<LiveSpan> short_by_one(known.value().begin(), known.value().end() - 1);
  const auto bad = pass::detail::held_spans_from(p, live.value(), hints, short_by_one);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("11 known block sizes were given for a liveness of 12 blocks") != std::string::npos);
}

TEST_CASE("plan_stats: peaks and bounds past int64 saturate at INT64_MAX, never wrap") {
  // Two blocks of 2^62 bytes live together: 2^63 does not fit.
  wrapir::Program p;
  wrapir::Builder b{p};
  const auto huge = p.ctx().integer(std::int64_t{1} << 60);
  auto x = b.empty({huge}, wrapir::f32);
  auto y = b.empty({huge}, wrapir::f32);
  auto k = b.triton_kernel("k", "src", "a: *fp32, b: *fp32");
  b.call(k, {x, y});
  auto s = pass::measure_plan(p, p);
  REQUIRE(s.ok());
  CHECK(s.value().lower_bound_bytes == std::numeric_limits<std::int64_t>::max());
  CHECK(s.value().peak_bytes == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("plan_stats: a block whose bytes do not fit int64 is a diagnostic, not 0 bytes") {
  wrapir::Program p;
  wrapir::Builder b{p};
  const auto big = p.ctx().integer(std::int64_t{1} << 40);
  p.buffers.push_back(BufferDecl{"buf0", Layout{{big, big}, {big, p.ctx().integer(1)}, p.ctx().integer(0),
                                                wrapir::f32, wrapir::cuda_device(0)}});
  b.append(Allocate{BufferId{0}});
  auto s = pass::measure_plan(p, p);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("buf0") != std::string::npos);
}
