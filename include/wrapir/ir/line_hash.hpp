#pragma once
/// \file
/// Hashing a whole `Line`: `hash_value(const Line&)` and `std::hash<Line>`,
/// so that lines can key unordered containers. Consistent with `==`: equal
/// lines hash equal; it depends on expression identities, so it is stable
/// within one process only.
///
/// A header of its own because hashing a `Line` visits all of its kinds:
/// a translation unit that includes ir/reflect.hpp for the per-kind
/// `hash_value` or the field machinery does not compile that visit unless
/// it includes this header.

#include <wrapir/ir/line.hpp>
#include <wrapir/ir/reflect.hpp>

#include <cstddef>
#include <functional>
#include <variant>

namespace wrapir::ir {

[[nodiscard]] inline std::size_t hash_value(const Line& line) noexcept {
  return std::visit([](const auto& l) { return hash_value(l); }, line);
}

}  // namespace wrapir::ir

template <>
struct std::hash<wrapir::ir::Line> {
  std::size_t operator()(const wrapir::ir::Line& l) const noexcept { return wrapir::ir::hash_value(l); }
};
