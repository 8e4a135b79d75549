#pragma once
/// \file
/// The symbols of a program bound at their size hints: what statistics,
/// liveness traces and generated benchmark harnesses evaluate sizes with.
///
/// A hint is a typical value (`SymbolDecl::hint`), never a proof. Where a
/// symbol has none, each caller decides: a fallback value (liveness uses
/// Inductor's 8192, the Python harness 42), or leaving it unbound so that
/// what depends on it has no number (statistics).

#include <wrapir/expr/eval.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/ir/symbol.hpp>

#include <cstdint>
#include <optional>

namespace wrapir::ir {

/// Binds each symbol declared in `p`'s table (not its subgraphs') to its
/// hint in `into`, replacing a value bound there; a symbol without a hint
/// is bound to `fallback` when one is given and left as `into` has it
/// otherwise. Entries that are not symbols (a malformed table) are skipped.
inline void bind_hints(const Program& p, expr::Bindings& into, std::optional<std::int64_t> fallback = std::nullopt) {
  for (const SymbolDecl& s : p.symbols) {
    if (!s.symbol || !s.symbol.is_symbol()) continue;
    if (s.hint)
      into.set(s.symbol, *s.hint);
    else if (fallback)
      into.set(s.symbol, *fallback);
  }
}

/// `p`'s symbols at their hints (see `bind_hints`).
[[nodiscard]] inline expr::Bindings hint_bindings(const Program& p,
                                                  std::optional<std::int64_t> fallback = std::nullopt) {
  expr::Bindings b;
  bind_hints(p, b, fallback);
  return b;
}

}  // namespace wrapir::ir
