#pragma once
/// \file
/// What decoding is made of: JSON paths and failures, typed access to
/// nodes, object readers, the name tables of a program being loaded and
/// what reading ahead keeps.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_schema.hpp>
#include <wrapir/io/detail/json_tape.hpp>
#include <wrapir/io/detail/expression_budget.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace wrapir::io::detail::json {

// ===========================================================================
// Reading
// ===========================================================================

/// A JSON path (`$.program.body[3].buffer`) as a chain of stack objects, so
/// that descending costs nothing and text is made only for a diagnostic.
struct Path {
  const Path* parent = nullptr;
  std::string_view key{};  // this file's own keys only, never input text
  std::size_t index = 0;
  bool is_index = false;

  [[nodiscard]] Path operator/(std::string_view k) const { return Path{this, k, 0, false}; }
  [[nodiscard]] Path operator[](std::size_t i) const { return Path{this, {}, i, true}; }

  [[nodiscard]] std::string text() const {
    std::vector<const Path*> chain;
    for (const Path* p = this; p; p = p->parent) chain.push_back(p);
    std::string out = "$";
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Path* p = *it;
      if (!p->parent) continue;  // the root
      // Appended piecewise: `"." + std::string(...)` trips g++ 12's
      // -Wrestrict false positive at -O3.
      if (p->is_index) {
        out += '[';
        out += std::to_string(p->index);
        out += ']';
      } else {
        out += '.';
        out += p->key;
      }
    }
    return out;
  }
};

/// Fails the load (`wrapir::detail::fail`, caught by `program_from_json`)
/// with a diagnostic that starts with the JSON path `where`.
[[noreturn]] inline void fail(const Path& where, std::string why) {
  wrapir::detail::fail(where.text() + ": " + std::move(why));
}

inline const char* describe(const Node& v) noexcept {
  switch (v.kind) {
    case NodeKind::null: return "null";
    case NodeKind::boolean: return "a boolean";
    case NodeKind::int64:
    case NodeKind::uint64:
    case NodeKind::number: return "a number";
    case NodeKind::string:
    case NodeKind::key: return "a string";
    case NodeKind::array: return "an array";
    case NodeKind::object: return "an object";
  }
  return "a value";
}

inline const Node& as_object(const Node& v, const Path& p) {
  if (v.is(NodeKind::object)) return v;
  fail(p, std::string("expected an object, got ") + describe(v));
}
inline const Node& as_array(const Node& v, const Path& p) {
  if (v.is(NodeKind::array)) return v;
  fail(p, std::string("expected an array, got ") + describe(v));
}
inline std::string_view as_string(const Node& v, const Path& p) {
  if (v.is(NodeKind::string)) return v.text();
  fail(p, std::string("expected a string, got ") + describe(v));
}
inline std::int64_t as_int64(const Node& v, const Path& p) {
  if (v.is(NodeKind::int64)) return v.int64;
  if (v.is(NodeKind::uint64)) fail(p, "integer " + std::to_string(v.uint64) + " is out of range (more than 2^63 - 1)");
  if (v.is(NodeKind::number)) fail(p, "expected an integer, got a number with a fraction or exponent");
  fail(p, std::string("expected an integer, got ") + describe(v));
}

/// Calls `f(index, element)` for each element of an array.
template <class F>
void for_each_element(const Node& array, F&& f) {
  const Node* e = array.first();
  for (std::size_t i = 0; i < array.size; ++i, e = e->next()) f(i, *e);
}

/// Reads the members of one JSON object: each lookup records the key, and
/// `finish` refuses any member that was not looked up (a typo, or a field
/// this version does not know).
class ObjectReader {
 public:
  ObjectReader(const Node& v, const Path& path) : object_(as_object(v, path)), path_(path), next_(v.first()) {}

  [[nodiscard]] const Path& path() const noexcept { return path_; }
  [[nodiscard]] std::size_t size() const noexcept { return object_.size; }

  /// The member `key`, or null when it is absent.
  const Node* optional(std::string_view key) {
    if (known_count_ < max_known) known_[known_count_++] = Key{key.data(), key.size()};
    // Every member taken (keys are unique): the rest are absent. Defaults are
    // not written, so most optional lookups of a table entry end here.
    if (used_ == object_.size) return nullptr;
    // Members usually come in the order this file writes and reads them:
    // try the one after the last found before searching.
    if (next_ != end() && same_text(next_->text(), key)) return take(next_);
    const Node* k = object_.first();
    for (std::size_t i = 0; i < object_.size; ++i, k = k->first()->next())
      if (same_text(k->text(), key)) return take(k);
    return nullptr;
  }
  /// The member `key`; absent is an error.
  const Node& required(std::string_view key) {
    if (const Node* v = optional(key)) return *v;
    fail(path_, "missing field '" + std::string(key) + "'");
  }

  /// Refuses members that no lookup asked for.
  void finish() const {
    if (object_.size == used_) return;
    const Node* k = object_.first();
    for (std::size_t m = 0; m < object_.size; ++m, k = k->first()->next()) {
      bool known = false;
      for (std::size_t i = 0; i < known_count_ && !known; ++i) known = known_[i].text() == k->text();
      if (known) continue;
      std::string expected;
      for (std::size_t i = 0; i < known_count_; ++i) expected += (i ? ", " : "") + std::string(known_[i].text());
      fail(path_, "unknown field " + ir::quote_for_diagnostic(k->text()) + " (expected: " + expected + ")");
    }
  }

 private:
  [[nodiscard]] const Node* end() const noexcept { return object_.next(); }
  const Node* take(const Node* key) {
    ++used_;
    const Node* value = key->first();
    next_ = value->next();
    return value;
  }

  // The keys looked up, for the message about an unknown one. Trivial and
  // left uninitialised: a reader is made for every object of a document.
  struct Key {
    const char* chars;
    std::size_t size;
    [[nodiscard]] std::string_view text() const noexcept { return {chars, size}; }
  };
  static constexpr std::size_t max_known = 24;

  const Node& object_;
  const Path& path_;
  const Node* next_;  // the key expected next
  Key known_[max_known];
  std::size_t known_count_ = 0;
  std::size_t used_ = 0;
};

/// Reads `n` bytes (1 to 8) at `p` as one word.
inline std::uint64_t load_word(const char* p, std::size_t n) noexcept {
  std::uint64_t w = 0;
  if (n >= 8) std::memcpy(&w, p, 8);
  else if (n >= 4) {
    std::uint32_t lo = 0, hi = 0;  // two loads that overlap cover every byte
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    w = lo | std::uint64_t{hi} << 32;
  } else {
    w = static_cast<unsigned char>(p[0]) | std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
        std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
  }
  return w;
}

/// The high and low halves of the 128-bit product of `a` and `b`, added
/// up bitwise: a multiplication that, unlike a 64-bit one, loses bits, so
/// that no word of input can be chosen to undo what came before it.
inline std::uint64_t folded_product(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ typedef unsigned __int128 wide;
  const wide product = static_cast<wide>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

/// The secret of `StringHash`: the addresses of a global and of a stack
/// variable, which address-space layout randomisation moves from run to
/// run, so that a document cannot be written whose names all collide.
struct StringHashSeed {
  std::uint64_t first;
  std::uint64_t second;
};
inline const StringHashSeed string_hash_seed = [] {
  const int on_the_stack = 0;
  const std::uint64_t addresses = reinterpret_cast<std::uintptr_t>(&string_hash_seed) ^
                                  (std::uint64_t{reinterpret_cast<std::uintptr_t>(&on_the_stack)} << 17);
  const std::uint64_t first = folded_product(addresses ^ 0xa0761d6478bd642fULL, 0xe7037ed1a0b428dbULL);
  return StringHashSeed{first | 1, folded_product(first ^ 0x8ebc6af09c88c6e3ULL, 0x589965cc75374cc3ULL) | 1};
}();

/// Hash of the short strings the loader looks up (names, expressions,
/// dtypes), inline and sixteen bytes at a time (wyhash's scheme): most of
/// those strings take one multiplication.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    const char* p = s.data();
    std::size_t n = s.size();
    const StringHashSeed& seed = string_hash_seed;
    // The length times a secret: xored in plainly, it would undo a change
    // in the last byte of a string one byte longer.
    std::uint64_t state = seed.first ^ (n * seed.second);
    std::uint64_t a = 0, b = 0;
    if (n <= 8) {
      if (n) a = load_word(p, n);
    } else if (n <= 16) {
      a = load_word(p, 8);
      b = load_word(p + n - 8, 8);  // overlapping the first word
    } else {
      for (; n > 16; p += 16, n -= 16)
        state = folded_product(load_word(p, 8) ^ seed.second, load_word(p + 8, 8) ^ state);
      a = load_word(p + n - 16, 8);  // the last sixteen bytes, overlapping those before
      b = load_word(p + n - 8, 8);
    }
    // One product mixes the last (or only) sixteen bytes; the table mixes
    // the hash further (it does not claim to avalanche).
    return folded_product(a ^ seed.second, b ^ state);
  }
};

/// Equality of those strings, inline: they are mostly shorter than 16 bytes.
struct StringEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    std::size_t n = a.size();
    if (n != b.size()) return false;
    if (n == 0) return true;
    const char* p = a.data();
    const char* q = b.data();
    for (; n > 8; p += 8, q += 8, n -= 8)
      if (load_word(p, 8) != load_word(q, 8)) return false;
    return load_word(p, n) == load_word(q, n);
  }
};

/// A name with its hash, as the names table keeps it: growing the table
/// rehashes without reading the names again from all over the input.
struct HashedName {
  std::string_view text;
  std::uint64_t hash;
  explicit HashedName(std::string_view name) noexcept : text(name), hash(StringHash{}(name)) {}
  HashedName(std::string_view name, std::uint64_t h) noexcept : text(name), hash(h) {}
};
struct HashedNameHash {
  using is_transparent = void;
  std::size_t operator()(const HashedName& n) const noexcept { return n.hash; }
};
struct HashedNameEqual {
  using is_transparent = void;
  bool operator()(const HashedName& a, const HashedName& b) const noexcept {
    return a.hash == b.hash && StringEqual{}(a.text, b.text);
  }
};

enum class Table : std::uint8_t { symbol, buffer, kernel, pool, subgraph };

inline const char* table_entry_name(Table t) noexcept {
  constexpr const char* names[] = {"symbol", "buffer", "kernel", "pool", "subgraph"};
  return names[static_cast<std::size_t>(t)];
}

/// One program being loaded: its names (all tables share one namespace, as
/// they do in generated code) and its parsed expressions. Keys view strings
/// of the document, which outlives the load.
struct Scope {
  struct Entry {
    Table table;
    std::uint32_t index;
  };
  /// For diagnostics.
  std::string_view program_name{};
  /// Unique among the scopes of a load, from 1.
  std::size_t serial = 0;
  /// The buffer table as read so far, and the entry after the last one that
  /// a lookup found: programs mostly name buffers for the first time in the
  /// order of their table.
  const std::vector<ir::BufferDecl>* buffers = nullptr;
  std::size_t next_buffer = 0;
  boost::unordered_flat_map<HashedName, Entry, HashedNameHash, HashedNameEqual> names;
  boost::unordered_flat_map<std::string_view, expr::Expr, StringHash, StringEqual> expressions;
};

/// A table of a program that its lines refer to: its key in the program
/// object and what its entries are.
struct LineTable {
  std::string_view key;
  Table table;
};
/// Those tables, in the order they are read: a program's names are
/// registered in this order, then the subgraphs' names, then the entries are
/// read in this order.
inline constexpr std::array<LineTable, 4> line_tables{{
    {"symbols", Table::symbol},
    {"buffers", Table::buffer},
    {"kernels", Table::kernel},
    {"pools", Table::pool},
}};

/// The shortest line, `{"kind":"X"}`, and the comma before the next one:
/// no more lines than a thirteenth of the input left can follow.
inline constexpr std::size_t min_line_bytes = 13;
/// How many lines of a streamed body are read before its length is
/// estimated (`body_capacity`).
inline constexpr std::size_t body_sample = 1024;

/// The capacity to give a streamed body that is full at `lines` lines.
/// Those lines took at least `read` bytes of input, the lines after the
/// first `body_sample / 2` of them at least `read_later` (0 when not known
/// yet), and at most `left` bytes follow them.
///
/// Doubling while small, then the count that the bytes per line so far
/// suggest for the rest of the input, plus an eighth. The body is usually
/// most of the document, so that one estimate fits it: growing by doubling
/// would touch twice its size in fresh memory and move it all. The bytes
/// per line are the least of those of all lines and of the later ones, as
/// the first lines of a program are often longer (kernel definitions). Never
/// more than the input left can hold, however little of it the positions
/// accounted for.
inline std::size_t body_capacity(std::size_t lines, std::size_t read, std::size_t read_later,
                                 std::size_t left) noexcept {
  const std::size_t most = lines + 1 + left / min_line_bytes;
  if (lines < body_sample) return std::min(std::max<std::size_t>(2 * lines, 16), most);
  double per_line = static_cast<double>(read) / static_cast<double>(lines);
  if (read_later != 0)
    per_line = std::min(per_line, static_cast<double>(read_later) / static_cast<double>(lines - body_sample / 2));
  per_line = std::max(per_line, static_cast<double>(min_line_bytes));
  const double estimate =
      (static_cast<double>(lines) + static_cast<double>(left) / per_line) * (1.0 + 1.0 / 8) + 64;
  // At most (lines + left / 13) * 9 / 8 + 64: no overflow.
  const auto estimated = static_cast<std::size_t>(estimate);
  return std::min(std::max(estimated, lines + lines / 8), most);
}

/// What reading ahead did in one load, for tests of it.
struct LoadStatistics {
  /// Table entries read while parsing.
  std::size_t entries_read_ahead = 0;
  /// Lines read while parsing.
  std::size_t lines_read_ahead = 0;
  /// The largest capacity given to a body read while parsing, before any
  /// capacity left unused was given back.
  std::size_t largest_body_capacity = 0;
};

/// A name that something read ahead refers to before its table: a line
/// naming a subgraph (subgraphs come after the body as `to_json` writes
/// them) or a symbol read from an input buffer (buffers come after symbols).
/// The final pass looks the name up, where it would have read it.
struct LaterName {
  std::size_t item;     // the line's index in the body, or the symbol's in its table
  std::size_t ordinal;  // which of the line's subgraph ids, in reading order
  std::string_view name;
};

/// A table of a program read ahead, whose length is not known until its
/// array ends: its entries are made in chunks (16 entries, then twice as
/// many each time, up to `max_chunk`) and moved once, when the table ends
/// (`finish`), into a vector of exactly their number. One vector grown by
/// doubling keeps up to half its capacity unused for good (the 1M-line
/// chain's 333,313 buffers in 524,288 entries: 26 of the loaded program's
/// 229.7 B/line) and holds the old and the new block, one and a half times
/// the capacity, while it grows; chunks leave less than one chunk unused,
/// and hold the entries twice at most, while they are moved.
template <class T>
class StagedTable {
 public:
  static constexpr std::size_t first_chunk = 16;
  static constexpr std::size_t max_chunk = 4096;

  /// A new last entry, default-made.
  T& emplace_back() {
    if (chunks_.empty() || chunks_.back().size() == chunks_.back().capacity()) {
      const std::size_t shift = std::min<std::size_t>(chunks_.size(), 8);
      chunks_.emplace_back().reserve(std::min(first_chunk << shift, max_chunk));
    }
    ++staged_;
    return chunks_.back().emplace_back();
  }
  /// Drops the last entry (there is one).
  void pop_back() {
    if (staged_ == 0) {
      table_.pop_back();
      return;
    }
    while (chunks_.back().empty()) chunks_.pop_back();
    chunks_.back().pop_back();
    --staged_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return table_.size() + staged_; }

  /// The entries finished so far (none before `finish`).
  [[nodiscard]] const std::vector<T>& table() const noexcept { return table_; }

  /// Moves the entries into `table()`, which then has exactly their number
  /// of elements of capacity (or what it had, when it already held some).
  void finish() {
    if (staged_ == 0) return;
    table_.reserve(table_.size() + staged_);
    for (std::vector<T>& chunk : chunks_) {
      std::move(chunk.begin(), chunk.end(), std::back_inserter(table_));
      std::vector<T>().swap(chunk);  // each chunk goes as soon as it is moved
    }
    chunks_.clear();
    staged_ = 0;
  }
  /// `finish`, then the entries.
  [[nodiscard]] std::vector<T> take() {
    finish();
    return std::move(table_);
  }

 private:
  std::vector<T> table_;
  std::vector<std::vector<T>> chunks_;  // all full but the last
  std::size_t staged_ = 0;              // entries in the chunks
};

/// What of a program was read while its document was still being parsed
/// (see `TapeBuilder` and `Decoder`): the first entries of its tables, in
/// the reading order, and the first lines of its body.
struct ReadAhead {
  Scope scope;
  /// How many tables of `line_tables`, from the first, were read whole.
  /// Of table `i`, the first `entries_read[i]` entries were read; the others
  /// stay on the tape for the final pass.
  std::size_t tables_read = 0;
  std::array<std::size_t, line_tables.size()> entries_read{};
  /// Which tables began: a table read ahead once is not read ahead again
  /// when its key repeats (the document is refused for that anyway).
  std::array<bool, line_tables.size()> tables_begun{};
  StagedTable<ir::SymbolDecl> symbols;
  StagedTable<ir::BufferDecl> buffers;
  StagedTable<ir::KernelDecl> kernels;
  StagedTable<ir::PoolDecl> pools;
  /// The buffers that symbols read ahead are read from (`SymbolDecl::source`).
  std::vector<LaterName> symbol_sources;
  /// The first lines of the body. Reading ahead stops at the first line
  /// that does not read (a name that comes later, or an error): that line
  /// and those after it stay on the tape, and the final pass reads them,
  /// reporting any error.
  bool body_begun = false;
  std::vector<ir::Line> body;
  std::vector<LaterName> graph_references;
  /// The input from the body's key to the end, and where the first
  /// `body_sample / 2` lines ended (`unknown_offset` until then), as byte
  /// offsets in the document, for `body_capacity`.
  static constexpr std::size_t unknown_offset = std::numeric_limits<std::size_t>::max();
  std::size_t start = 0;
  std::size_t end = 0;
  std::size_t half = unknown_offset;
};

template <class T>
struct IdTable;
template <>
struct IdTable<ir::BufferId> {
  static constexpr Table table = Table::buffer;
};
template <>
struct IdTable<ir::KernelId> {
  static constexpr Table table = Table::kernel;
};
template <>
struct IdTable<ir::PoolId> {
  static constexpr Table table = Table::pool;
};
template <>
struct IdTable<ir::GraphId> {
  static constexpr Table table = Table::subgraph;
};

}  // namespace wrapir::io::detail::json
