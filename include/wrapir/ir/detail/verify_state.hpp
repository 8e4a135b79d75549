#pragma once
/// \file
/// The verifier's state (an internal of ir/verify.hpp): what it tracks per
/// buffer, symbol, kernel and pool while it walks a body, the cache of free
/// symbols, and small helpers for the findings' text. Kept compact: one
/// BufferTrack per buffer is most of the verifier's memory on large programs.

#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/buffer.hpp>
#include <wrapir/ir/detail/effect_decls.hpp>
#include <wrapir/ir/lines.hpp>
#include <wrapir/ir/names.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace wrapir::ir::detail::verifier {

inline constexpr std::size_t no_line = static_cast<std::size_t>(-1);
/// `defined_at` of what exists when the program starts.
inline constexpr std::size_t at_start = static_cast<std::size_t>(-2);
inline constexpr std::uint32_t no_id = static_cast<std::uint32_t>(-1);
/// Deeper lists of arguments and subgraphs are reported, not walked, so
/// that hostile input cannot exhaust the stack.
inline constexpr int max_arg_depth = 64;
inline constexpr int max_graph_depth = 256;
/// A view's room derives from its base's (ir/view_extent.hpp), so a chain
/// of views at distinct symbolic offsets grows one expression per level:
/// views of views deeper than this are reported and their bounds not
/// checked, so that a hostile chain cannot make verification quadratic.
inline constexpr std::uint16_t max_view_depth = 256;

/// A name as findings show it: bare when it is a valid name, else quoted
/// and escaped so that it cannot break the finding's line.
[[nodiscard]] inline std::string shown(std::string_view name) {
  return is_valid_name(name) ? std::string(name) : quote_for_diagnostic(name);
}

[[nodiscard]] inline std::string printed(expr::Expr e) {
  if (!e) return "<null>";
  try {
    return expr::print_python(e);
  } catch (const expr::Error&) {
    return "<an expression too large to print>";
  }
}

/// "a" or "an" before a word as it is pronounced (`an int32`, `a uint8`).
[[nodiscard]] inline std::string with_article(std::string_view word) {
  const bool vowel = !word.empty() && (word[0] == 'a' || word[0] == 'e' || word[0] == 'i' || word[0] == 'o');
  return (vowel ? "an " : "a ") + std::string(word);
}

template <class E>
[[nodiscard]] std::string enum_value(E e) {
  return std::to_string(static_cast<unsigned>(e));
}

/// The symbols of compound expressions, computed once per node for the
/// whole verification (free symbols depend only on the expression).
class FreeSymbolCache {
 public:
  [[nodiscard]] std::span<const expr::Expr> of(expr::Expr e) {
    auto [it, inserted] = spans_.try_emplace(e.node(), std::pair<std::size_t, std::size_t>{flat_.size(), 0});
    if (inserted) {
      // Iterative and deduplicated: a DAG with shared sub-trees is walked
      // in time linear in its distinct nodes, at any depth.
      seen_.clear();
      stack_.assign(1, e);
      while (!stack_.empty()) {
        const expr::Expr x = stack_.back();
        stack_.pop_back();
        if (!seen_.insert(x.node()).second) continue;
        if (x.is_symbol()) flat_.push_back(x);
        for (const expr::Expr o : x.operands()) stack_.push_back(o);
      }
      it->second.second = flat_.size() - it->second.first;
      // Natural name order, so that findings come in a stable order.
      std::sort(flat_.begin() + static_cast<std::ptrdiff_t>(it->second.first), flat_.end(), expr::ExprLess{});
    }
    return {flat_.data() + it->second.first, it->second.second};
  }

 private:
  std::unordered_map<const expr::Node*, std::pair<std::size_t, std::size_t>> spans_;
  std::vector<expr::Expr> flat_;
  std::vector<expr::Expr> stack_;
  std::unordered_set<const expr::Node*> seen_;
};

enum class Life : std::uint8_t {
  undefined,  // no line defined it yet
  live,
  freed,    // Free, FreeIfNotReused without reuse, CommBufferFree, WorkspaceFree, DeallocFromPool
  offered,  // FreeIfNotReused with reused = true: a Reuse may take the storage
  taken,    // a Reuse took the storage
};

struct BufferTrack {
  Life life = Life::undefined;
  bool view = false;
  bool layout_ok = false;
  bool kept_bound = false;  // taken by a Reuse with delete_old = false
  std::size_t defined_at = no_line;
  std::size_t ended_at = no_line;
  std::uint32_t taken_by = no_id;
  std::uint32_t base = no_id;  // views: the buffer whose storage they alias
  std::uint32_t pool = no_id;  // carved from this pool
  WorkspaceZeroMode zero_mode = WorkspaceZeroMode::uninitialized;
  std::uint16_t view_depth = 0;  // views: 1 for a view of a buffer, its base's + 1 for a view of a view
  expr::Expr room{};  // views: the bytes from their first element to the end of the storage; null if unknown
};

struct SymbolTrack {
  bool defined = false;
  std::size_t defined_at = no_line;
  std::size_t reported_site = no_line;  // one finding per symbol and site
};

enum class PoolLife : std::uint8_t { not_created, live, released };

struct PoolTrack {
  PoolLife life = PoolLife::not_created;
  std::size_t created_at = no_line;
  std::size_t released_at = no_line;
};

enum class KernelDef : std::uint8_t { none, plain, multi };

struct KernelTrack {
  KernelDef def = KernelDef::none;
  std::size_t defined_at = no_line;
};

struct OpenScope {
  ScopeKind scope;
  std::size_t line;
};

[[nodiscard]] constexpr std::string_view enter_name(ScopeKind s) noexcept {
  return s == ScopeKind::subgraph ? EnterSubgraph::kind
                                  : (s == ScopeKind::device ? EnterDeviceContext::kind : EnterStreamContext::kind);
}
[[nodiscard]] constexpr std::string_view exit_name(ScopeKind s) noexcept {
  return s == ScopeKind::subgraph ? ExitSubgraph::kind
                                  : (s == ScopeKind::device ? ExitDeviceContext::kind : ExitStreamContext::kind);
}

/// Where an expression or argument is used, for messages: `text`, then
/// ` <index>` when there is one, then ` of <buffer>` when there is one
/// (`argument 3`, `the layout of buf2`). Rendered only for findings.
struct Where {
  const char* text;
  std::size_t index = no_line;
  std::uint32_t buffer = no_id;
};

/// How a line defines a buffer, as its effect in the table says
/// (ir/effects.hpp): the role rules key off it, never off line kinds.
struct Definition {
  enum class By : std::uint8_t { storage, reuse, view, element, pool_region };
  By by;
  /// For `By::storage` (effect::Allocated): the kind of new storage.
  Storage storage = Storage::allocate;
  /// For `By::reuse` (effect::Reused): the storage is a comm buffer's.
  bool of_comm = false;

  [[nodiscard]] static constexpr Definition allocated(Storage s) noexcept { return {By::storage, s, false}; }
  [[nodiscard]] constexpr bool creates(Storage s) const noexcept { return by == By::storage && storage == s; }
  [[nodiscard]] constexpr bool reuses_comm() const noexcept { return by == By::reuse && of_comm; }
  /// An extern operator's result or an element of one: what may hold a
  /// multi-output result.
  [[nodiscard]] constexpr bool is_result() const noexcept {
    return creates(Storage::extern_result) || by == By::element;
  }
};

/// Why a buffer is not usable: what happened (`life`), at which line, to
/// which buffer (itself or a view's base), and who took the storage or
/// which pool was released.
struct Death {
  Life life;
  std::size_t line;
  std::uint32_t buffer;
  std::uint32_t other;
  bool pool_released;
};

}  // namespace wrapir::ir::detail::verifier
