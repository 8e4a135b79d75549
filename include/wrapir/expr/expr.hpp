#pragma once
/// \file
/// Symbolic integer expressions: node kinds, the uniquing `Context`, and the
/// `Expr` handle.
///
/// Every size, stride, offset and launch grid in wrapir is an `Expr`. Nodes
/// are immutable and hash-consed in a `Context` (as MLIR uniques types in an
/// `MLIRContext`): two structurally equal expressions built in one context are
/// the same node, so `==` on handles is a pointer compare, and an `Expr` is a
/// trivially copyable pointer-sized value.
///
/// Semantics (all values are mathematical integers; evaluation is checked
/// 64-bit arithmetic that reports overflow instead of wrapping):
///
/// | kind              | value                                                    |
/// |-------------------|----------------------------------------------------------|
/// | integer           | the literal                                              |
/// | symbol            | the bound value; assumption positive / non-negative / any|
/// | add, mul          | n-ary sum and product                                    |
/// | pow               | `a ** n`, n a natural number (PowByNatural)              |
/// | floor_div         | `a // b`, rounding toward negative infinity              |
/// | clean_div         | `a // b` where the division is claimed exact             |
/// | modular_indexing  | `(x // d) % m` with Python `//` and `%`                  |
/// | python_mod        | `p % q`, the result has the sign of `q`                  |
/// | mod               | `p % q`, defined only for `p >= 0`, `q > 0`              |
/// | min, max          | n-ary minimum and maximum                                |
/// | eq ne lt le gt ge | 1 when the comparison holds, else 0                      |
/// | where             | `c != 0 ? p : q`; only the chosen branch is evaluated    |
/// | align             | `x` rounded up to a multiple of a power-of-two alignment |
/// | identity          | `x`, opaque to simplification                            |
///
/// Thread safety: a `Context` is not synchronised. Building expressions
/// mutates it, so one thread at a time may build in a given context. Reading
/// existing expressions (printing, evaluating, comparing) never mutates it and
/// may run on any number of threads concurrently, also while no thread
/// builds. Distinct contexts are independent. Handles stay valid for the
/// lifetime of their context.

#include <wrapir/detail/config.hpp>
#include <wrapir/detail/hash.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/detail/bump_allocator.hpp>

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <iterator>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace wrapir::expr {

/// The node kinds. CeilDiv is not a kind: like Inductor's `CeilDiv`, its
/// constructor returns a CleanDiv or a FloorDiv (see `ceil_div`).
enum class Kind : std::uint8_t {
  integer,
  symbol,
  add,
  mul,
  pow,
  floor_div,
  clean_div,
  modular_indexing,
  python_mod,
  mod,
  min,
  max,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  where,
  align,
  identity,
};

inline constexpr std::size_t kind_count = static_cast<std::size_t>(Kind::identity) + 1;

/// The name of a kind as sympy/Inductor spell the function
/// (`FloorDiv`, `ModularIndexing`, `PowByNatural`, …).
constexpr std::string_view kind_name(Kind kind) noexcept {
  constexpr std::array<std::string_view, kind_count> names{
      "Integer", "Symbol", "Add", "Mul", "PowByNatural", "FloorDiv", "CleanDiv",
      "ModularIndexing", "PythonMod", "Mod", "Min", "Max", "Eq", "Ne", "Lt",
      "Le", "Gt", "Ge", "Where", "align", "Identity"};
  return names[static_cast<std::size_t>(kind)];
}

constexpr bool is_comparison(Kind kind) noexcept { return kind >= Kind::eq && kind <= Kind::ge; }

/// What is known about a symbol's value. Inductor's sizes are positive.
enum class Assumption : std::uint8_t { positive, nonnegative, integer };

constexpr std::string_view assumption_name(Assumption a) noexcept {
  switch (a) {
    case Assumption::positive: return "positive";
    case Assumption::nonnegative: return "nonnegative";
    case Assumption::integer: return "integer";
  }
  return "?";
}

/// Thrown by expression constructors when an expression is wrong whatever
/// the symbols are bound to: a literal division or modulo by zero, a literal
/// negative exponent, a constant that does not fit in int64, an invalid or
/// conflicting symbol name. Errors that depend on bindings are reported by
/// evaluation as values instead (see eval.hpp).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Context;
struct Node;

namespace detail {

/// splitmix64's finaliser: every input bit moves every output bit.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A per-context secret for placing nodes in the uniquing table: from the
/// context's address (randomised by ASLR) and the clock, so that input
/// crafted to collide in the table cannot be written in advance.
inline std::uint64_t table_seed(const void* context) noexcept {
  // <ctime> rather than <chrono>: a quarter of a second less to compile in
  // every translation unit, for the same nanoseconds.
  std::timespec now{};
  if (std::timespec_get(&now, TIME_UTC) == 0) now = {};
  const auto nanoseconds =
      static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
  return mix64(reinterpret_cast<std::uintptr_t>(context) ^ mix64(nanoseconds));
}

}  // namespace detail

/// A handle to a uniqued expression node. Trivially copyable; `==` compares
/// identity, which is structural equality within one context.
///
/// A default-constructed `Expr` is null: it denotes no expression. Only
/// `node()`, `operator bool`, `==` and `hash()` (0) may be asked of it; the
/// other accessors require a node. Every function that takes an `Expr`
/// (constructors and operators, simplify, printers, queries) throws `Error`
/// when given a null one, and those returning a `Result` (eval, compile,
/// solve) return a diagnostic instead; `bounds` says nothing is known,
/// `compare` orders null first, and `to_string`/`<<` print `<null>`.
class Expr {
 public:
  Expr() = default;
  explicit Expr(const Node* node) noexcept : node_(node) {}

  [[nodiscard]] const Node* node() const noexcept { return node_; }
  [[nodiscard]] explicit operator bool() const noexcept { return node_ != nullptr; }

  [[nodiscard]] Kind kind() const noexcept;
  [[nodiscard]] bool is(Kind k) const noexcept { return kind() == k; }
  [[nodiscard]] bool is_integer() const noexcept { return is(Kind::integer); }
  [[nodiscard]] bool is_integer(std::int64_t v) const noexcept;
  [[nodiscard]] bool is_symbol() const noexcept { return is(Kind::symbol); }

  /// The literal of an integer node; the alignment of an align node.
  [[nodiscard]] std::int64_t value() const noexcept;
  /// The name of a symbol node.
  [[nodiscard]] std::string_view name() const noexcept;
  [[nodiscard]] Assumption assumption() const noexcept;
  /// Unbacked (data-dependent) symbols have no size hint.
  [[nodiscard]] bool unbacked() const noexcept;

  [[nodiscard]] std::span<const Expr> operands() const noexcept;
  [[nodiscard]] Expr operand(std::size_t i) const noexcept { return operands()[i]; }
  [[nodiscard]] std::size_t hash() const noexcept;
  /// Number of nodes in the tree, counting shared sub-trees once per use
  /// (saturates at 2^32 - 1).
  [[nodiscard]] std::uint32_t tree_size() const noexcept;
  [[nodiscard]] Context& context() const noexcept;

  friend bool operator==(Expr a, Expr b) noexcept = default;

 private:
  const Node* node_ = nullptr;
};

/// The storage of one expression. Users read it through `Expr`.
struct Node {
  Context* context;
  std::size_t hash;
  std::int64_t value;     // integer: the literal; align: the alignment
  std::string_view name;  // symbol: the name (owned by the context)
  const Expr* operands;
  std::uint32_t operand_count;
  std::uint32_t tree_size;
  Kind kind;
  Assumption assumption;
  bool unbacked;
};

inline Kind Expr::kind() const noexcept { return node_->kind; }
inline bool Expr::is_integer(std::int64_t v) const noexcept { return node_->kind == Kind::integer && node_->value == v; }
inline std::int64_t Expr::value() const noexcept { return node_->value; }
inline std::string_view Expr::name() const noexcept { return node_->name; }
inline Assumption Expr::assumption() const noexcept { return node_->assumption; }
inline bool Expr::unbacked() const noexcept { return node_->unbacked; }
inline std::span<const Expr> Expr::operands() const noexcept { return {node_->operands, node_->operand_count}; }
inline std::size_t Expr::hash() const noexcept { return node_ != nullptr ? node_->hash : 0; }
inline std::uint32_t Expr::tree_size() const noexcept { return node_->tree_size; }
inline Context& Expr::context() const noexcept { return *node_->context; }

/// True when `name` may name a symbol: an ASCII identifier that is neither a
/// Python nor a C++ keyword nor one of the function names the printers and
/// the parser use (`min`, `FloorDiv`, …), so that printed code never changes
/// meaning.
[[nodiscard]] WRAPIR_DECL bool is_valid_symbol_name(std::string_view name) noexcept;

/// Owns and uniques expression nodes. Not copyable or movable: handles point
/// into it.
class Context {
 public:
  // Out of line (impl/expr.ipp), with the destructor: in separately compiled
  // mode a TU that makes a context then instantiates none of the tables.
  WRAPIR_DECL Context();
  WRAPIR_DECL ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// The integer literal `v`.
  [[nodiscard]] Expr integer(std::int64_t v) {
    return intern(Kind::integer, {}, v, {}, Assumption::integer, false);
  }

  /// The symbol called `name`. Asking again for the same name returns the
  /// same symbol; asking with other assumptions throws `Error`.
  [[nodiscard]] Expr symbol(std::string_view name, Assumption assumption = Assumption::positive,
                            bool unbacked = false);

  /// The symbol called `name`, if one was made.
  [[nodiscard]] WRAPIR_DECL Expr find_symbol(std::string_view name) const noexcept;

  /// A node exactly as given: no folding, no canonical ordering. Checks only
  /// arity (and, for align, the alignment). Most code wants the simplifying
  /// constructors of ops.hpp instead; raw nodes serve tests of the
  /// simplifier and printers that must show input as written.
  [[nodiscard]] Expr make_raw(Kind kind, std::span<const Expr> operands, std::int64_t value = 0);

  /// Number of distinct nodes made so far.
  [[nodiscard]] std::size_t size() const noexcept { return count_; }

  /// Number of times a node was looked up or made so far (every constructor
  /// call does at least one): the measure of work that `parse` budgets.
  [[nodiscard]] std::uint64_t lookups() const noexcept { return lookups_; }

 private:
  Expr intern(Kind kind, std::span<const Expr> operands, std::int64_t value, std::string_view name,
              Assumption assumption, bool unbacked);
  [[nodiscard]] std::size_t slot_of(std::size_t hash, std::string_view name, std::span<const Expr> operands) const noexcept;
  void grow();

  detail::BumpAllocator arena_{64 * 1024};
  std::vector<const Node*> table_ = std::vector<const Node*>(1024, nullptr);  // open addressing
  std::size_t count_ = 0;
  std::uint64_t lookups_ = 0;
  std::unordered_map<std::string_view, const Node*> symbols_;
  /// Keys where nodes go in `table_` (see `slot_of`).
  std::uint64_t seed_ = detail::table_seed(this);
};

/// A total order on expressions that depends only on their structure (never
/// on addresses), so canonical forms and printed text are the same in every
/// run and every context. Integers first, then symbols in natural name order
/// (`s2` before `s10`), then compound nodes.
[[nodiscard]] std::strong_ordering compare(Expr a, Expr b) noexcept;

struct ExprLess {
  bool operator()(Expr a, Expr b) const noexcept { return compare(a, b) < 0; }
};

// ---------------------------------------------------------------------------
// Implementation: impl/expr.ipp (included below in header-only mode).

namespace detail {

[[noreturn]] WRAPIR_DECL void null_expression(std::string_view what);
WRAPIR_DECL Expr non_null(Expr e, std::string_view what);
WRAPIR_DECL std::size_t node_hash(Kind kind, std::span<const Expr> operands, std::int64_t value,
                                  std::string_view name) noexcept;
WRAPIR_DECL bool is_keyword(std::string_view name) noexcept;
WRAPIR_DECL std::strong_ordering natural_compare(std::string_view a, std::string_view b) noexcept;
WRAPIR_DECL std::strong_ordering compare_at(Expr a, Expr b, int depth) noexcept;

constexpr int arity_min(Kind kind) noexcept {
  switch (kind) {
    case Kind::integer:
    case Kind::symbol: return 0;
    case Kind::align:
    case Kind::identity: return 1;
    case Kind::add:
    case Kind::mul:
    case Kind::min:
    case Kind::max: return 2;
    case Kind::where:
    case Kind::modular_indexing: return 3;
    default: return 2;
  }
}

constexpr int arity_max(Kind kind) noexcept {
  switch (kind) {
    case Kind::add:
    case Kind::mul:
    case Kind::min:
    case Kind::max: return 1 << 30;
    default: return arity_min(kind);
  }
}

}  // namespace detail

}  // namespace wrapir::expr

template <>
struct std::hash<wrapir::expr::Expr> {
  std::size_t operator()(wrapir::expr::Expr e) const noexcept { return e.hash(); }
};

#if !defined(WRAPIR_SEPARATE_COMPILATION)
#include <wrapir/expr/impl/expr.ipp>
#endif
