#pragma once
/// \file
/// The orders in which the arena planner (pass/arena.hpp) places blocks.

#include <cstdint>
#include <string_view>

namespace wrapir::pass {

/// The orders in which `place_in_arenas` may place blocks (each breaks ties
/// by size, then by index, so every order is deterministic).
enum class ArenaOrder : std::uint8_t {
  /// Largest first, then longest-lived (TFLite's greedy by size; XLA's
  /// spatial order).
  size,
  /// The largest peak of live bytes during the block's lifetime first:
  /// blocks in the tightest region, which decides the lower bound, go in
  /// first, while there is room to pack them.
  pressure,
  /// Largest size times lifetime first (XLA's "area").
  area,
  /// Longest-lived first (XLA's temporal order).
  lifetime,
  /// Most bytes of time-overlapping blocks first: the most constrained.
  conflict,
  /// Earliest begin first: what an online allocator would see.
  begin,
};

/// Every order, in the sequence `place_in_arenas` tries them by default.
/// `conflict` goes first: it packs the most constrained blocks while there
/// is room, leaves few fragments behind (so its packing visits few ranges:
/// on 100k random blocks 16 times fewer than `size`), and is often at the
/// lower bound already, when the adaptive stop skips the others
/// (`ArenaOptions::stop_within`).
inline constexpr ArenaOrder all_arena_orders[] = {ArenaOrder::conflict, ArenaOrder::size,     ArenaOrder::pressure,
                                                  ArenaOrder::area,     ArenaOrder::lifetime, ArenaOrder::begin};

[[nodiscard]] constexpr std::string_view arena_order_name(ArenaOrder o) noexcept {
  switch (o) {
    case ArenaOrder::size:
      return "size";
    case ArenaOrder::pressure:
      return "pressure";
    case ArenaOrder::area:
      return "area";
    case ArenaOrder::lifetime:
      return "lifetime";
    case ArenaOrder::conflict:
      return "conflict";
    case ArenaOrder::begin:
      return "begin";
  }
  return "<invalid arena order>";
}

}  // namespace wrapir::pass
