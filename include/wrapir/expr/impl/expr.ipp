#pragma once
/// \file
/// Definitions of <wrapir/expr/expr.hpp> (see <wrapir/detail/config.hpp>).

#include <wrapir/expr/expr.hpp>

#include <algorithm>
#include <compare>
#include <string>
#include <string_view>
#include <unordered_set>

namespace wrapir::expr {

namespace detail {

/// Throws the `Error` for a null `Expr` given to `what`.
[[noreturn]] WRAPIR_DECL void null_expression(std::string_view what) {
  throw Error(std::string(what) + ": an operand is a null expression (a default-constructed Expr, which denotes no expression)");
}

/// `e`, checked not to be null.
WRAPIR_DECL Expr non_null(Expr e, std::string_view what) {
  if (!e) null_expression(what);
  return e;
}

using wrapir::detail::hash_mix;

WRAPIR_DECL std::size_t node_hash(Kind kind, std::span<const Expr> operands, std::int64_t value,
                             std::string_view name) noexcept {
  std::size_t h = hash_mix(static_cast<std::size_t>(kind) * 0x100000001b3ULL, static_cast<std::size_t>(value));
  // Symbols are unique by name; integers by value.
  for (char c : name) h = hash_mix(h, static_cast<unsigned char>(c));
  for (Expr e : operands) h = hash_mix(h, e.hash());
  return h;
}


WRAPIR_DECL bool is_keyword(std::string_view name) noexcept {
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

WRAPIR_DECL bool is_valid_symbol_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 256) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(name.front())) return false;
  for (char c : name)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  // Names starting with two underscores are reserved in C++.
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_') return false;
  return !detail::is_keyword(name);
}

WRAPIR_DECL Context::Context() = default;

WRAPIR_DECL Context::~Context() = default;

WRAPIR_DECL Expr Context::find_symbol(std::string_view name) const noexcept {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? Expr{} : Expr{it->second};
}

WRAPIR_DECL Expr Context::symbol(std::string_view name, Assumption assumption, bool unbacked) {
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

WRAPIR_DECL Expr Context::make_raw(Kind kind, std::span<const Expr> operands, std::int64_t value) {
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

WRAPIR_DECL Expr Context::intern(Kind kind, std::span<const Expr> operands, std::int64_t value, std::string_view name,
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
WRAPIR_DECL std::size_t Context::slot_of(std::size_t hash, std::string_view name,
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

WRAPIR_DECL void Context::grow() {
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
WRAPIR_DECL std::strong_ordering natural_compare(std::string_view a, std::string_view b) noexcept {
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

WRAPIR_DECL std::strong_ordering compare_at(Expr a, Expr b, int depth) noexcept {
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

WRAPIR_DECL std::strong_ordering compare(Expr a, Expr b) noexcept { return detail::compare_at(a, b, 0); }

}  // namespace wrapir::expr
