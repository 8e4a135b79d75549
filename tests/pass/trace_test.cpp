// Tests of include/wrapir/pass/trace.hpp (placements and their checker) and
// include/wrapir/pass/traces.hpp (the synthetic trace corpus).

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <wrapir/ir/verify.hpp>
#include <wrapir/pass/liveness.hpp>
#include <wrapir/pass/trace.hpp>
#include <wrapir/pass/traces.hpp>

namespace {

using namespace wrapir::pass;

TracedAllocation block(std::string name, std::int64_t bytes, std::size_t begin, std::size_t end,
                       std::int32_t device = 0) {
  return TracedAllocation{std::move(name), bytes, begin, end, device, false};
}

AllocationTrace two_blocks(std::size_t b_begin) {
  return AllocationTrace{{block("a", 128, 0, 4), block("b", 64, b_begin, 6)}, 6};
}

}  // namespace

TEST_CASE("check_placement accepts blocks apart in time or in memory") {
  // Live at different times: the same bytes are fine (half-open intervals).
  CHECK_FALSE(check_placement(two_blocks(4), Placement{{{0, 0}, {0, 0}}, {{0, 128}}}));
  // Live at the same time, side by side.
  CHECK_FALSE(check_placement(two_blocks(2), Placement{{{0, 0}, {0, 128}}, {{0, 192}}}));
  // Zero-byte blocks take no bytes.
  const AllocationTrace with_empty{{block("a", 128, 0, 4), block("z", 0, 0, 4)}, 4};
  CHECK_FALSE(check_placement(with_empty, Placement{{{0, 0}, {0, 64}}, {{0, 128}}}));
  CHECK(Placement{{{0, 0}, {0, 64}}, {{0, 128}, {1, 64}}}.total_bytes() == 192);
}

TEST_CASE("check_placement names the first violation") {
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}, {0, 64}}, {{0, 192}}}) ==
        std::optional<std::string>{"block 0 (a) (bytes [0, 128), live [0, 4)) and block 1 (b) (bytes [64, 128), live "
                                   "[2, 6)) overlap in arena 0 at time step 2, when both are live"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}, {0, 96}}, {{0, 192}}}) ==
        std::optional<std::string>{"block 1 (b) has the offset 96, which is not a multiple of 64"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}, {0, 128}}, {{0, 160}}}) ==
        std::optional<std::string>{"block 1 (b) occupies bytes [128, 128 + 64) but arena 0 has only 160 bytes"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}, {1, 0}}, {{0, 128}, {1, 64}}}) ==
        std::optional<std::string>{"block 1 (b) of device 0 is placed on arena 1 of device 1"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}, {2, 0}}, {{0, 128}}}) ==
        std::optional<std::string>{"block 1 (b) is placed on arena 2, but there are 1 arenas"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}}, {{0, 128}}}) ==
        std::optional<std::string>{"the placement places 1 blocks but the trace has 2"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, -64}, {0, 0}}, {{0, 128}}}) ==
        std::optional<std::string>{"block 0 (a) has the negative offset -64"});
  CHECK(check_placement(two_blocks(2), Placement{{{0, 0}, {0, 128}}, {{0, 192}}}, 0) ==
        std::optional<std::string>{"the alignment 0 is not positive"});
  // The overlap is found however far apart in the trace the two blocks are.
  AllocationTrace many{{}, 100};
  for (std::size_t i = 0; i < 50; ++i) many.allocations.push_back(block("x" + std::to_string(i), 64, 2 * i, 2 * i + 2));
  many.allocations.push_back(block("long", 64, 0, 100));
  Placement at{std::vector<BlockPlacement>(51, BlockPlacement{0, 0}), {{0, 128}}};
  at.blocks.back().offset = 64;
  CHECK_FALSE(check_placement(many, at));
  at.blocks[30].offset = 64;
  const auto bad = check_placement(many, at);
  REQUIRE(bad);
  CHECK(bad->find("block 30 (x30)") != std::string::npos);
  CHECK(bad->find("time step 60") != std::string::npos);
}

TEST_CASE("validate_trace rejects empty live ranges and negative sizes") {
  CHECK(validate_trace(AllocationTrace{{block("a", 64, 3, 3)}, 4}) ==
        std::optional<std::string>{
            "block 0 (a) has the empty live range [3, 3); a block must live for at least one time step"});
  CHECK(validate_trace(AllocationTrace{{block("a", -1, 0, 1)}, 4}) ==
        std::optional<std::string>{"block 0 (a) has a negative size of -1 bytes"});
  CHECK(check_placement(AllocationTrace{{block("a", -1, 0, 1)}, 4}, Placement{{{0, 0}}, {{0, 0}}}) ==
        std::optional<std::string>{"the trace is invalid: block 0 (a) has a negative size of -1 bytes"});
}

TEST_CASE("the corpus is deterministic and valid") {
  const auto a = trace_corpus(7), b = trace_corpus(7), c = trace_corpus(8);
  REQUIRE(a.size() == b.size());
  bool some_differ = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i].name);
    CHECK(a[i].trace == b[i].trace);
    CHECK_FALSE(validate_trace(a[i].trace));
    CHECK(a[i].trace.allocations.size() > 10);
    CHECK(max_live_bytes(a[i].trace) > 0);
    some_differ = some_differ || !(a[i].trace == c[i].trace);
  }
  CHECK(some_differ);
}

TEST_CASE("the generators have the structure they promise") {
  const AllocationTrace t = transformer_trace({.layers = 2, .training = true}, 1);
  std::size_t outputs = 0;
  for (const TracedAllocation& x : t.allocations) {
    if (!x.is_output) continue;
    ++outputs;
    CHECK(x.end == t.steps);
  }
  CHECK(outputs == 2 * 2 + 2 + 1);  // keys and values, weight grads, input grad
  const AllocationTrace r = random_trace({.blocks = 500, .devices = 3}, 5);
  CHECK(r.allocations.size() == 500);
  for (const TracedAllocation& x : r.allocations) {
    CHECK(x.device >= 0);
    CHECK(x.device < 3);
    CHECK(x.end <= r.steps);
  }
}

TEST_CASE("chain and fan-out traces overlap only as promised") {
  const AllocationTrace c = chain_trace({.blocks = 200}, 3);
  REQUIRE(c.allocations.size() == 200);
  CHECK(!validate_trace(c));
  for (std::size_t i = 0; i + 1 < c.allocations.size(); ++i) {
    CHECK(c.allocations[i].begin == i);
    CHECK(c.allocations[i].end == i + 2);  // made at i, read by the next kernel
    CHECK(!c.allocations[i].is_output);
  }
  CHECK(c.allocations.back().is_output);
  CHECK(c.allocations.back().end == c.steps);
  const AllocationTrace same = chain_trace({.blocks = 10, .min_bytes = 4096, .max_bytes = 4096}, 1);
  for (const TracedAllocation& a : same.allocations) CHECK(a.bytes == 4096);
  CHECK(chain_trace({.blocks = 0}).allocations.empty());

  const AllocationTrace f = fan_out_trace({.blocks = 1 + 9 * 20, .fan = 8}, 4);
  REQUIRE(f.allocations.size() == 1 + 9 * 20);
  CHECK(!validate_trace(f));
  // A branch overlaps its source, the other branches and the join; a
  // source (a join) overlaps the branches before and after it.
  for (std::size_t i = 0; i < f.allocations.size(); ++i) {
    std::size_t overlapping = 0;
    for (std::size_t j = 0; j < f.allocations.size(); ++j)
      if (j != i && f.allocations[i].begin < f.allocations[j].end && f.allocations[j].begin < f.allocations[i].end)
        ++overlapping;
    CHECK(overlapping <= 2 * 8);
  }
  CHECK(f.allocations.back().is_output);
  CHECK(fan_out_trace({.blocks = 0}).allocations.empty());
}

TEST_CASE("program_from_trace keeps the shape of the lifetimes") {
  const AllocationTrace t = random_trace({.blocks = 200, .devices = 2}, 3);
  for (const bool symbolic : {false, true}) {
    const wrapir::ir::Program p = program_from_trace(t, {.symbolic = symbolic});
    CHECK(wrapir::ir::verify(p).empty());
    const auto traced = trace_of(p);
    REQUIRE(traced);
    CHECK(traced.value().allocations.size() == t.allocations.size());
    // Lines spread the steps out, but the lower bound is the same at the
    // hints (each block is live where the trace says, and a little longer
    // only into steps where it overlaps the same blocks).
    if (!symbolic) CHECK(max_live_bytes(traced.value()) >= max_live_bytes(t));
  }
}

TEST_CASE("max_live_bytes saturates at INT64_MAX and stays exact on the other devices") {
  // Three blocks of INT64_MAX bytes on device 0: their sum passes INT64_MAX
  // at the second. A running sum clamped there and then reduced by each
  // end would be 0 after two ends and overflow at the third.
  constexpr std::int64_t max = INT64_MAX;
  AllocationTrace t;
  for (int k = 0; k < 3; ++k) t.allocations.push_back({"huge", max, 0, 1, 0, false});
  t.allocations.push_back({"after", 64, 1, 2, 0, false});
  t.allocations.push_back({"a", 100, 0, 3, 1, false});
  t.allocations.push_back({"b", 28, 2, 5, 1, false});
  t.steps = 5;
  const auto per_device = max_live_bytes_per_device(t);
  REQUIRE(per_device.size() == 2);
  CHECK(per_device.at(0) == max);
  CHECK(per_device.at(1) == 128);
  CHECK(max_live_bytes(t) == max);
  // Below the limit the sum is exact.
  AllocationTrace fits;
  fits.allocations = {{"x", max / 2, 0, 2, 0, false}, {"y", max / 2, 1, 3, 0, false}, {"z", 1, 2, 3, 0, false}};
  fits.steps = 3;
  CHECK(max_live_bytes(fits) == max - 1);
}
