#pragma once
/// \file
/// `is_memory_planning_line`: whether a line only manages storage, read
/// from the effect table (ir/effects.hpp). The reuse and pool planners ask
/// it; a header of its own because the question visits every line kind,
/// which a translation unit that only walks effects should not compile.

#include <wrapir/ir/effects.hpp>
#include <wrapir/ir/line.hpp>
#include <wrapir/ir/lines.hpp>

#include <variant>

namespace wrapir::ir {

/// Whether `line` only manages storage: one of Inductor's memory planning
/// lines, which the reuse planner drops at the end of a body and the pool
/// planner groups into one time step. It has at least one effect that
/// defines or ends storage (an allocation that is not an extern or control
/// result, a free, a reuse, a view, a pool's creation, region or return),
/// and its only other effects evaluate expressions (a region's offset). A
/// Null is a cancelled memory line. A Comment or a stream fetch has no
/// effect and is not one.
[[nodiscard]] inline bool is_memory_planning_line(const Line& line) {
  if (std::holds_alternative<Null>(line)) return true;
  namespace fx = effect;
  bool storage = false, other = false;
  for_each_effect(line, fx::Handlers{
                            [&](const fx::Allocated& e) {
                              const bool result = e.storage == Storage::extern_result ||
                                                  e.storage == Storage::control_result;
                              (result ? other : storage) = true;
                            },
                            [&](const fx::Released&) { storage = true; },
                            [&](const fx::Reused&) { storage = true; },
                            [&](const fx::Aliased&) { storage = true; },
                            [&](const fx::Carved&) { storage = true; },
                            [&](const fx::PoolCreated&) { storage = true; },
                            [&](const fx::PoolReturned&) { storage = true; },
                            [](const fx::SymbolsRead&) {},
                            [&](const auto&) { other = true; },
                        });
  return storage && !other;
}

}  // namespace wrapir::ir
