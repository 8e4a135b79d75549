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
[[nodiscard]] bool is_valid_symbol_name(std::string_view name) noexcept;

/// Owns and uniques expression nodes. Not copyable or movable: handles point
/// into it.
class Context {
 public:
  Context() = default;
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
  [[nodiscard]] Expr find_symbol(std::string_view name) const noexcept {
    auto it = symbols_.find(name);
    return it == symbols_.end() ? Expr{} : Expr{it->second};
  }

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
// Implementation

namespace detail {

/// Throws the `Error` for a null `Expr` given to `what`.
[[noreturn]] inline void null_expression(std::string_view what) {
  throw Error(std::string(what) + ": an operand is a null expression (a default-constructed Expr, which denotes no expression)");
}

/// `e`, checked not to be null.
inline Expr non_null(Expr e, std::string_view what) {
  if (!e) null_expression(what);
  return e;
}

using wrapir::detail::hash_mix;

inline std::size_t node_hash(Kind kind, std::span<const Expr> operands, std::int64_t value,
                             std::string_view name) noexcept {
  std::size_t h = hash_mix(static_cast<std::size_t>(kind) * 0x100000001b3ULL, static_cast<std::size_t>(value));
  // Symbols are unique by name; integers by value.
  for (char c : name) h = hash_mix(h, static_cast<unsigned char>(c));
  for (Expr e : operands) h = hash_mix(h, e.hash());
  return h;
}

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

inline bool is_keyword(std::string_view name) noexcept {
  // Python keywords and soft keywords, C++ keywords, and the names that
  // printed code calls: a symbol with one of these names would change the
  // meaning of printed text.
  static constexpr std::string_view reserved[] = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
      "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
      "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
      "yield", "match", "case", "alignas", "alignof", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "char", "char8_t", "char16_t", "char32_t", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype",
      "default", "delete", "do", "double", "dynamic_cast", "enum", "explicit", "export", "extern",
      "false", "float", "friend", "goto", "inline", "int", "long", "mutable", "namespace", "new",
      "noexcept", "not_eq", "nullptr", "operator", "or_eq", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "xor", "xor_eq", "min", "max", "align", "floor", "ceiling",
      "Min", "Max", "FloorDiv", "CeilDiv", "CleanDiv", "ModularIndexing", "PythonMod", "Mod",
      "PowByNatural", "Where", "Identity", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "std", "wrapir",
      "c10", "int64_t", "math", "torch"};
  // Hashed: names are checked for every buffer and symbol a program loads.
  static const std::unordered_set<std::string_view> set(std::begin(reserved), std::end(reserved));
  return set.contains(name);
}

}  // namespace detail

inline bool is_valid_symbol_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 256) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(name.front())) return false;
  for (char c : name)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  // Names starting with two underscores are reserved in C++.
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_') return false;
  return !detail::is_keyword(name);
}

inline Expr Context::symbol(std::string_view name, Assumption assumption, bool unbacked) {
  if (auto it = symbols_.find(name); it != symbols_.end()) {
    const Node* n = it->second;
    if (n->assumption != assumption || n->unbacked != unbacked)
      throw Error("symbol '" + std::string(name) + "' already exists as " +
                  std::string(assumption_name(n->assumption)) + (n->unbacked ? " unbacked" : "") +
                  ", cannot redeclare it as " + std::string(assumption_name(assumption)) +
                  (unbacked ? " unbacked" : ""));
    return Expr{n};
  }
  if (!is_valid_symbol_name(name))
    throw Error("invalid symbol name '" + std::string(name.substr(0, 64)) +
                "': expected an identifier [A-Za-z_][A-Za-z0-9_]* that is not a keyword or a reserved function name");
  auto* chars = static_cast<char*>(arena_.allocate(name.size(), 1));
  std::copy(name.begin(), name.end(), chars);
  std::string_view owned{chars, name.size()};
  Expr e = intern(Kind::symbol, {}, 0, owned, assumption, unbacked);
  symbols_.emplace(owned, e.node());
  return e;
}

inline Expr Context::make_raw(Kind kind, std::span<const Expr> operands, std::int64_t value) {
  if (kind == Kind::integer) return integer(value);
  if (kind == Kind::symbol) throw Error("make_raw cannot make a symbol; use Context::symbol");
  const auto n = static_cast<std::int64_t>(operands.size());
  if (n < detail::arity_min(kind) || n > detail::arity_max(kind))
    throw Error(std::string(kind_name(kind)) + " takes " + std::to_string(detail::arity_min(kind)) +
                (detail::arity_max(kind) > detail::arity_min(kind) ? " or more" : "") + " operands, got " +
                std::to_string(n));
  for (Expr e : operands) {
    if (!e) detail::null_expression(kind_name(kind));
    if (&e.context() != this) throw Error(std::string(kind_name(kind)) + ": operand belongs to another context");
  }
  if (kind == Kind::align) {
    if (value <= 0 || (value & (value - 1)) != 0)
      throw Error("align: alignment " + std::to_string(value) + " is not a positive power of two");
  } else {
    value = 0;
  }
  return intern(kind, operands, value, {}, Assumption::integer, false);
}

inline Expr Context::intern(Kind kind, std::span<const Expr> operands, std::int64_t value, std::string_view name,
                            Assumption assumption, bool unbacked) {
  ++lookups_;
  const std::size_t h = detail::node_hash(kind, operands, value, name);
  const std::size_t mask = table_.size() - 1;
  std::size_t slot = slot_of(h, name, operands) & mask;
  for (; table_[slot] != nullptr; slot = (slot + 1) & mask) {
    const Node* n = table_[slot];
    if (n->hash != h || n->kind != kind || n->value != value || n->name != name ||
        n->operand_count != operands.size())
      continue;
    bool same = true;
    for (std::size_t i = 0; i < operands.size() && same; ++i) same = n->operands[i] == operands[i];
    if (same) return Expr{n};
  }
  Expr* ops = nullptr;
  std::uint64_t size = 1;
  if (!operands.empty()) {
    ops = static_cast<Expr*>(arena_.allocate(sizeof(Expr) * operands.size(), alignof(Expr)));
    for (std::size_t i = 0; i < operands.size(); ++i) {
      ops[i] = operands[i];
      size += operands[i].tree_size();
    }
  }
  auto* node = static_cast<Node*>(arena_.allocate(sizeof(Node), alignof(Node)));
  *node = Node{this, h, value, name, ops, static_cast<std::uint32_t>(operands.size()),
               static_cast<std::uint32_t>(size > 0xffffffffULL ? 0xffffffffULL : size), kind, assumption,
               unbacked};
  table_[slot] = node;
  if (++count_ * 2 > table_.size()) grow();
  return Expr{node};
}

/// The structural hash is the same in every run (compare's fallback orders
/// by it), so input can be crafted to make many nodes share its low bits or
/// all of it, and linear probing would then cost quadratic time. A node's
/// slot therefore mixes in a per-context secret, the operands' addresses and
/// (for symbols) the name under that secret.
inline std::size_t Context::slot_of(std::size_t hash, std::string_view name,
                                    std::span<const Expr> operands) const noexcept {
  std::uint64_t k = detail::mix64(seed_ ^ hash);
  for (std::size_t i = 0; i < name.size(); i += 8) {
    std::uint64_t chunk = 0;
    for (std::size_t j = i; j < name.size() && j < i + 8; ++j)
      chunk = (chunk << 8) | static_cast<unsigned char>(name[j]);
    k = detail::mix64(k ^ chunk ^ seed_);
  }
  for (Expr o : operands) k = detail::mix64(k ^ reinterpret_cast<std::uintptr_t>(o.node()));
  return static_cast<std::size_t>(k);
}

inline void Context::grow() {
  std::vector<const Node*> bigger(table_.size() * 2, nullptr);
  const std::size_t mask = bigger.size() - 1;
  for (const Node* n : table_) {
    if (n == nullptr) continue;
    std::size_t slot = slot_of(n->hash, n->name, {n->operands, n->operand_count}) & mask;
    while (bigger[slot] != nullptr) slot = (slot + 1) & mask;
    bigger[slot] = n;
  }
  table_.swap(bigger);
}

namespace detail {

/// Natural order of names: digit runs compare by value, so `s2 < s10`.
inline std::strong_ordering natural_compare(std::string_view a, std::string_view b) noexcept {
  std::size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;
      while (j0 < b.size() && b[j0] == '0') ++j0;
      std::size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && digit(a[i1])) ++i1;
      while (j1 < b.size() && digit(b[j1])) ++j1;
      if (auto c = (i1 - i0) <=> (j1 - j0); c != 0) return c;
      if (auto c = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0)); c != 0)
        return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
      if (auto c = (i1 - i) <=> (j1 - j); c != 0) return c;  // more leading zeros sorts later
      i = i1;
      j = j1;
    } else {
      if (a[i] != b[j]) return a[i] <=> b[j];
      ++i;
      ++j;
    }
  }
  return (a.size() - i) <=> (b.size() - j);
}

}  // namespace detail

namespace detail {

inline std::strong_ordering compare_at(Expr a, Expr b, int depth) noexcept {
  if (a == b) return std::strong_ordering::equal;
  if (!a || !b) return a ? std::strong_ordering::greater : std::strong_ordering::less;  // null first
  // Past this depth, order by the structural hash: still the same in every
  // run, and it keeps the recursion (and the stack) bounded.
  if (depth > 256) {
    if (auto c = a.hash() <=> b.hash(); c != 0) return c;
    if (auto c = a.tree_size() <=> b.tree_size(); c != 0) return c;
    return a.node() < b.node() ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  if (auto c = a.kind() <=> b.kind(); c != 0) return c;
  switch (a.kind()) {
    case Kind::integer: return a.value() <=> b.value();
    case Kind::symbol: return detail::natural_compare(a.name(), b.name());
    default: break;
  }
  auto ao = a.operands();
  auto bo = b.operands();
  const std::size_t n = std::min(ao.size(), bo.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = compare_at(ao[i], bo[i], depth + 1); c != 0) return c;
  }
  if (auto c = ao.size() <=> bo.size(); c != 0) return c;
  return a.value() <=> b.value();
}

}  // namespace detail

inline std::strong_ordering compare(Expr a, Expr b) noexcept { return detail::compare_at(a, b, 0); }

}  // namespace wrapir::expr

template <>
struct std::hash<wrapir::expr::Expr> {
  std::size_t operator()(wrapir::expr::Expr e) const noexcept { return e.hash(); }
};
