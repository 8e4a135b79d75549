#pragma once
/// \file
/// The FX emitter's graph (emit/fx.hpp): nodes as torch.fx holds them, the
/// names torch.fx would give them, and the two renderings of a node's
/// arguments — as `str(gm.graph)` prints them and as Python that passes
/// them to `graph.call_function`.
///
/// Names. torch.fx names a node from its target through a namespace
/// (`empty_strided`, `empty_strided_1`, ...; `mm.out` becomes `mm_out`; a
/// builtin such as `pow` becomes `pow_1`), and Inductor then renames some
/// nodes by assigning `node.name`, which leaves the namespace's record of
/// the first name in place. `Namespace` follows torch.fx 2.11's rules
/// exactly (its `_Namespace.create_name`), so that the text printed here
/// equals what torch prints for the graph the Python rendering builds; the
/// bridge's `fx` check compares the two with real torch.fx.
///
/// Arguments are rendered once, when the node is made, in the one form the
/// emission prints (the text, or Python for `graph.call_function`), into
/// one arena (for the text, the node's whole line but its head
/// `%name : [num_users=N] = `, so that the arena becomes the output: the
/// heads are put in front of the lines in place, at the end); a node's name is final by the time anything refers to it
/// (Inductor renames a node right after making it), and the nodes each
/// argument list refers to are counted as it is stored, which gives
/// torch.fx's `num_users` without a second pass.

#include <wrapir/detail/escape.hpp>
#include <wrapir/diagnostic.hpp>
#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/detail/shortest_double.hpp>
#include <wrapir/emit/detail/text_buffer.hpp>

#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/unordered/unordered_flat_set.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <memory>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wrapir::fx::detail {

/// Python's keywords and builtins, and the names torch.fx reserves for its
/// generated code (`torch`, `device`, `inf`, ...): a node named after one of
/// these gets a numeric suffix (torch.fx's `_illegal_names`, Python 3.11).
[[nodiscard]] inline bool is_fx_illegal_name(std::string_view name) {
  static const boost::unordered_flat_set<std::string_view> names{
      "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
      "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
      "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
      "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
      "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
      "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
      "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
      "ModuleNotFoundError", "NameError", "None", "NoneType", "NotADirectoryError", "NotImplemented",
      "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError",
      "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError",
      "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
      "SystemExit", "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
      "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
      "ValueError", "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__",
      "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "and", "anext", "any", "as",
      "ascii", "assert", "async", "await", "bin", "bool", "break", "breakpoint", "bytearray", "bytes",
      "callable", "chr", "class", "classmethod", "compile", "complex", "continue", "copyright", "credits",
      "def", "del", "delattr", "device", "dict", "dir", "divmod", "elif", "else", "enumerate", "eval",
      "except", "exec", "exit", "filter", "finally", "float", "for", "format", "from", "frozenset",
      "fx_pytree", "getattr", "global", "globals", "hasattr", "hash", "help", "hex", "id", "if", "import",
      "in", "inf", "input", "int", "is", "isinstance", "issubclass", "iter", "lambda", "len", "license",
      "list", "locals", "map", "max", "memoryview", "min", "nan", "next", "nonlocal", "not", "object", "oct",
      "open", "or", "ord", "pass", "pow", "print", "property", "pytree", "quit", "raise", "range", "repr",
      "return", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum",
      "super", "torch", "try", "tuple", "type", "vars", "while", "with", "yield", "zip"};
  return names.contains(name);
}

/// Hashes strings and views alike, so that lookups build no string. Eight
/// bytes at a step with a multiply and a shift: names are short, and the
/// flat containers mix the result again (std::hash's byte loop was a
/// twentieth of the emission).
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
      h ^= h >> 31;
    }
    if (n != 0) {
      std::uint64_t w = 0;
      std::memcpy(&w, p, n);
      h = (h ^ w) * 0x94D049BB133111EBull;
      h ^= h >> 29;
    }
    return static_cast<std::size_t>(h);
  }
};
struct NameEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

/// torch.fx's `sanitize` step of `create_name`: `[^0-9a-zA-Z_]+` → `_`,
/// `_unnamed` for nothing, `_` before a leading digit.
[[nodiscard]] inline std::string sanitize_name(std::string_view raw) {
  std::string s;
  s.reserve(raw.size() + 1);
  bool in_run = false;
  for (char c : raw) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (ok) {
      s += c;
      in_run = false;
    } else if (!in_run) {
      s += '_';
      in_run = true;
    }
  }
  if (s.empty()) s = "_unnamed";
  if (s[0] >= '0' && s[0] <= '9') s.insert(s.begin(), '_');
  return s;
}

/// torch.fx's `_snake_case`: `_` before an upper-case letter that follows a
/// lower-case one, then everything lower-case.
[[nodiscard]] inline std::string snake_case(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 4);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool upper = c >= 'A' && c <= 'Z';
    if (upper && i > 0 && s[i - 1] >= 'a' && s[i - 1] <= 'z') out += '_';
    out += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

/// Stable storage for names: views into it stay valid while it lives.
class NameArena {
 public:
  std::string_view keep(std::string_view s) {
    if (chunks_.empty() || used_ + s.size() > chunk_size_) {
      chunk_size_ = std::max<std::size_t>(s.size(), 64 * 1024);
      chunks_.push_back(std::make_unique<char[]>(chunk_size_));
      used_ = 0;
    }
    char* at = chunks_.back().get() + used_;
    std::copy(s.begin(), s.end(), at);
    used_ += s.size();
    return {at, s.size()};
  }
  /// Gives back the last `n` bytes kept (a name that turned out taken).
  void drop(std::size_t n) noexcept { used_ -= n; }

 private:
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t chunk_size_ = 0;
  std::size_t used_ = 0;
};

/// torch.fx's `_Namespace`: unique names made from candidates.
///
/// The used names are kept in two places, chosen by the name alone: a
/// name of the form `base_N` (N in canonical decimal, below 2^32) is a bit
/// in its base's bitmap, any other name is in a hash set. A program names
/// nearly every node `empty_strided_N` or `triton_kernel_wrapper_mutation_N`;
/// in a hash set of a million such names each new one was a cache miss or
/// two (a fifth of the emission of a 1M-line program), in a bitmap it is a
/// bit next to the last one.
class Namespace {
 public:
  /// `create_name(candidate, None)`.
  std::string_view create_name(std::string_view raw) { return create_sanitized(sanitize_name(raw)); }

  /// `create_name` for a candidate that is sanitized already. The name
  /// lives as long as the namespace.
  std::string_view create_sanitized(std::string_view candidate) { return create(candidate, true); }

  /// `create_name` for a candidate that is sanitized already, for a node
  /// renamed right after (Inductor names a buffer's node after the buffer):
  /// the name is taken, but its text, which nothing prints, is not made
  /// when it is a bit of its base (the usual `empty_strided_N`).
  void take_sanitized(std::string_view candidate) { (void)create(candidate, false); }

 private:
  /// create_sanitized; with `text` false, the returned view may be empty.
  std::string_view create(std::string_view candidate, bool text) {
    // Split `base_N` (torch.fx: `^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$`).
    const Split split = split_name(candidate);
    const std::string_view base = split.base;
    std::uint64_t num = 0;
    // The common case, a target's name asked for again (`empty_strided`):
    // one lookup of its count, which also knows that the bare name is
    // taken (names are never given back), then the first free bit.
    std::uint32_t counted = no_entry;
    bool bare = false;  // the candidate, a base with no suffix, is tried as it is
    bool numbered = false;  // the name is `base_num` for some num past the count
    // A suffixed candidate is looked up once, here; a bare one below, and
    // only when it is not numbered anyway.
    const bool suffixed_and_used = !split.digits.empty() && is_used(candidate, split);
    if (split.digits.empty() || suffixed_and_used) {
      if (const auto it = count_.find(candidate); it != count_.end()) {
        counted = it->second;
        num = entries_[counted].num;
      }
      if (counted != no_entry && entries_[counted].bare_used) {
        numbered = true;  // known legal: bare_used is only set for legal names
      } else if (is_fx_illegal_name(candidate)) {
        numbered = true;
      } else {
        bare = split.digits.empty();
      }
    } else {
      num = parse_digits(split.digits);
    }
    const std::uint32_t entry = base == candidate && counted != no_entry ? counted : entry_of(base);
    std::string_view kept;
    if (!numbered && !(split.digits.empty() ? is_used(candidate, split) : suffixed_and_used)) {
      kept = bare ? entries_[entry].base : arena_.keep(candidate);
      mark_used(kept, split);
    } else {
      // torch.fx: `while candidate in used: num += 1; candidate = f"{base}_{num}"`.
      ++num;
      while (num <= max_numbered && test_bit(entry, num)) ++num;
      if (num <= max_numbered) {
        set_bit(entry, num);
        if (text) kept = arena_.keep(suffixed(base, num));
      } else {
        // Past the bitmaps' range (an explicit suffix near 2^32): the set.
        while (true) {
          kept = arena_.keep(suffixed(base, num));
          if (used_.insert(kept).second) break;
          arena_.drop(kept.size());
          ++num;
        }
      }
    }
    // torch.fx: `_base_count[base] = num`. A bare candidate is taken now,
    // whether it was free or not.
    entries_[entry].num = num;
    entries_[entry].bare_used = entries_[entry].bare_used || bare;
    return kept;
  }

 public:
  /// Room for about `n` names without rehashing (most of them are bits).
  void reserve(std::size_t n) { used_.reserve(n / 8); }

  /// A copy of `s` that lives as long as the namespace.
  std::string_view keep(std::string_view s) { return arena_.keep(s); }

 private:
  static constexpr std::uint32_t no_entry = UINT32_MAX;
  /// The largest N of a `base_N` kept as a bit.
  static constexpr std::uint64_t max_numbered = UINT32_MAX;
  static constexpr unsigned block_shift = 9;  // 512 numbers, 64 bytes a block

  struct Split {
    std::string_view base;
    std::string_view digits;  // empty when the name has no `_N` suffix
  };
  static Split split_name(std::string_view name) {
    if (const std::size_t us = name.rfind('_'); us != std::string_view::npos && us > 0 && us + 1 < name.size()) {
      const std::string_view tail = name.substr(us + 1);
      if (std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return {name.substr(0, us), tail};
    }
    return {name, {}};
  }
  /// N when `name` is kept as a bit of its base (canonical digits, no
  /// leading zero, at most max_numbered); 0 with false otherwise.
  static bool numbered_form(const Split& s, std::uint64_t& n) {
    if (s.digits.empty() || s.digits.size() > 10 || (s.digits.size() > 1 && s.digits[0] == '0')) return false;
    n = 0;
    for (const char c : s.digits) n = n * 10 + static_cast<std::uint64_t>(c - '0');
    return n <= max_numbered;
  }
  bool is_used(std::string_view name, const Split& s) const {
    std::uint64_t n = 0;
    if (!numbered_form(s, n)) return used_.contains(name);
    const auto it = count_.find(s.base);
    return it != count_.end() && test_bit(it->second, n);
  }
  /// `kept`: the name, kept by the arena; `s`: its split.
  void mark_used(std::string_view kept, const Split& s) {
    std::uint64_t n = 0;
    if (numbered_form(s, n)) set_bit(entry_of(s.base), n);
    else used_.insert(kept);
  }

  /// The entry of `base`, made (with a count of 0, torch.fx's default) if
  /// it has none.
  std::uint32_t entry_of(std::string_view base) {
    if (const auto it = count_.find(base); it != count_.end()) return it->second;
    if (entries_.size() >= no_entry) wrapir::detail::fail("the FX graph has too many distinct names");
    const auto id = static_cast<std::uint32_t>(entries_.size());
    const std::string_view kept = arena_.keep(base);
    entries_.push_back(Entry{kept, 0, false, UINT64_MAX, 0});
    count_.emplace(kept, id);
    return id;
  }
  [[nodiscard]] static std::uint64_t block_key(std::uint32_t entry, std::uint64_t n) noexcept {
    return (static_cast<std::uint64_t>(entry) << 32) | (n >> block_shift);
  }
  bool test_bit(std::uint32_t entry, std::uint64_t n) const {
    const Entry& e = entries_[entry];
    std::uint32_t block = 0;
    if (e.last_block == n >> block_shift) {
      block = e.last_block_index;
    } else {
      const auto it = block_of_.find(block_key(entry, n));
      if (it == block_of_.end()) return false;
      block = it->second;
    }
    const std::uint64_t bit = n & ((1u << block_shift) - 1);
    return (blocks_[block][bit / 64] >> (bit % 64) & 1u) != 0;
  }
  void set_bit(std::uint32_t entry, std::uint64_t n) {
    Entry& e = entries_[entry];
    if (e.last_block != n >> block_shift) {
      const auto [it, fresh] = block_of_.try_emplace(block_key(entry, n), static_cast<std::uint32_t>(blocks_.size()));
      if (fresh) blocks_.emplace_back();
      e.last_block = n >> block_shift;
      e.last_block_index = it->second;
    }
    const std::uint64_t bit = n & ((1u << block_shift) - 1);
    blocks_[e.last_block_index][bit / 64] |= std::uint64_t{1} << (bit % 64);
  }

  /// `base_num`, in a scratch buffer valid until the next call.
  std::string_view suffixed(std::string_view base, std::uint64_t num) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, num);
    (void)ec;
    scratch_.clear();
    scratch_ += base;
    scratch_ += '_';
    scratch_.append(digits, end);
    return scratch_.view();
  }
  static std::uint64_t parse_digits(std::string_view d) {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    (void)p;
    // Python's int() is unbounded; a suffix past 2^64 is not a name any
    // program here makes, and saturating keeps the loop finite.
    return ec == std::errc{} ? v : UINT64_MAX / 2;
  }

  /// What torch.fx's `_base_count` holds for a base, and the names
  /// `base_N` in use.
  struct Entry {
    std::string_view base;
    std::uint64_t num = 0;
    /// The base itself is a used name (and not one torch.fx suffixes).
    bool bare_used = false;
    /// The block of bits last set (N / 512) and its index in blocks_:
    /// a base's names are mostly made in order, so the next one is nearly
    /// always in the same block, found without the map.
    std::uint64_t last_block = UINT64_MAX;
    std::uint32_t last_block_index = 0;
  };

  NameArena arena_;
  wrapir::detail::TextBuffer scratch_;
  /// The used names that are not bits of a base.
  boost::unordered_flat_set<std::string_view, NameHash, NameEqual> used_;
  boost::unordered_flat_map<std::string_view, std::uint32_t, NameHash, NameEqual> count_;
  std::vector<Entry> entries_;
  /// (entry, N / 512) → its block of bits in blocks_.
  boost::unordered_flat_map<std::uint64_t, std::uint32_t> block_of_;
  std::vector<std::array<std::uint64_t, 8>> blocks_;
};

/// A callable a node calls: how `str(graph)` prints it, the Python
/// expression that names it, and the candidate torch.fx makes the node's
/// first name from (its `__name__`, snake-cased and sanitized).
struct Target {
  std::string printed;
  std::string python;
  std::string candidate;

  Target() = default;
  /// `name`: the callable's `__name__` (`mm.out`, `empty_strided`).
  Target(std::string printed_as, std::string python_as, std::string_view name)
      : printed(std::move(printed_as)), python(std::move(python_as)), candidate(sanitize_name(snake_case(name))) {}
};

enum class Op : std::uint8_t { placeholder, get_attr, call_function, output };

/// A piece of one of the graph's arenas.
struct Span {
  std::uint32_t begin = 0;
  std::uint32_t size = 0;
};

struct Node {
  Op op = Op::call_function;
  /// Inductor renamed the node (`node.name = ...`) after torch.fx named it.
  bool renamed = false;
  std::uint32_t users = 0;
  /// The last node counted as a user (see Graph::count_uses).
  std::uint32_t last_user = UINT32_MAX;
  /// call_function: what it calls (owned by the graph or static).
  const Target* target = nullptr;
  /// Views of the namespace's or the program's strings.
  std::string_view name;
  /// Placeholder / get_attr: the target string. call_function: set when
  /// the name was made by `create_name(label)` before the node (Inductor's
  /// `<buffer>_view` names); see reserved(). One field for both keeps a
  /// million nodes 16 MB smaller.
  std::string_view label;
  /// The node's line in the arena, but its head and tail (see Graph).
  Span args;

  [[nodiscard]] std::string_view reserved() const noexcept {
    return op == Op::call_function ? label : std::string_view();
  }
};

/// Counts what it is given instead of keeping it: the size of a rendering,
/// computed by the same code that writes it, so the output is allocated
/// once and exactly (growing a 16 MB module by doubling copied it).
struct SizeSink {
  std::size_t size = 0;
  SizeSink& operator+=(std::string_view s) noexcept {
    size += s.size();
    return *this;
  }
  SizeSink& operator+=(char) noexcept {
    ++size;
    return *this;
  }
};

/// Writes at a place known to have room (Graph::take_lines).
struct CharSink {
  char* at;
  CharSink& operator+=(std::string_view s) noexcept {
    if (s.empty()) return *this;  // an empty view's data may be null, which memcpy must not get
    std::memcpy(at, s.data(), s.size());
    at += s.size();
    return *this;
  }
  CharSink& operator+=(char c) noexcept {
    *at++ = c;
    return *this;
  }
};

/// A number in decimal: node `i`'s index, for `n<i>` in Python, or its
/// count of users.
struct IndexDigits {
  char digits[16];
  std::string_view view;
  explicit IndexDigits(std::uint32_t i) noexcept {
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, i);
    (void)ec;
    view = std::string_view(digits, static_cast<std::size_t>(end - digits));
  }
};

/// What `str(graph)` prints around a node's line:
/// `\n    %name : [num_users=N] = ` before it, nothing after.
///
/// Each `Lines` says which number its head and tail print (`number`); the
/// caller spells it once per node and passes the digits to both (spelling
/// it in each was a tenth of the builder module's instructions, as the
/// lines are sized before they are written).
struct TextLines {
  static std::uint32_t number(const Node& n, std::uint32_t) noexcept { return n.users; }
  template <class Sink>
  static void head(Sink& out, const Node& n, std::string_view users) {
    out += "\n    %";
    out += n.name;
    out += " : [num_users=";
    out += users;
    out += "] = ";
  }
  template <class Sink>
  static void tail(Sink&, const Node&, std::string_view) {}
};

/// What the builder module writes around a node's line (` = g.call_function(...)\n`):
/// the reserved name and `    n<i>` before it, the rename after it.
/// Names and labels are identifiers (checked or made by the namespace):
/// quoted as they are, with no escaping to do.
struct PythonLines {
  static std::uint32_t number(const Node&, std::uint32_t i) noexcept { return i; }
  template <class Sink>
  static void head(Sink& out, const Node& n, std::string_view index) {
    if (!n.reserved().empty()) {
      out += "    name = g._graph_namespace.create_name('";
      out += n.reserved();
      out += "', None)\n";
    }
    out += "    n";
    out += index;
  }
  template <class Sink>
  static void tail(Sink& out, const Node& n, std::string_view index) {
    if (!n.reserved().empty()) {
      out += "    n";
      out += index;
      out += ".name = name\n";
    } else if (n.renamed) {
      out += "    n";
      out += index;
      out += ".name = '";
      out += n.name;
      out += "'\n";
    }
  }
};

class Graph;

/// The storage an ArgWriter borrows from its graph.
struct ArgBuffer {
  wrapir::detail::TextBuffer out;
  std::vector<std::uint32_t> refs;
  /// For the few writers that append to a std::string (a float, a Python
  /// string literal).
  std::string scratch;
};

/// Writes one argument structure in the graph's rendering (the text
/// `str(graph)` prints, or Python for `graph.call_function`), into buffers
/// the graph lends and takes back (no allocation per node once they have
/// grown).
class ArgWriter {
 public:
  /// `bare`: references print without `%` (the output node's value).
  explicit ArgWriter(Graph& g, bool bare = false);
  ~ArgWriter();
  ArgWriter(const ArgWriter&) = delete;
  ArgWriter& operator=(const ArgWriter&) = delete;

  /// A reference to node `index`: `%name` printed (`name` in a
  /// `return`), `nINDEX` in Python. Recorded, so that the node's users are
  /// counted when the node that takes these arguments is made.
  void node(std::uint32_t index);
  void integer(std::int64_t v) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
    (void)ec;
    out_->append(digits, end);
  }
  void floating(double v) {
    if (std::isnan(v)) raw("nan", "float('nan')");
    else if (std::isinf(v)) raw(v < 0 ? "-inf" : "inf", v < 0 ? "float('-inf')" : "float('inf')");
    else {
      buffer_->scratch.clear();
      wrapir::detail::append_shortest_double(buffer_->scratch, v);
      *out_ += buffer_->scratch;
    }
  }
  void boolean(bool b) { both(b ? "True" : "False"); }
  void none() { both("None"); }
  /// A Python `str` value: printed bare by torch.fx, quoted in Python.
  /// Escaped in the text (control characters as `\xNN`) so that one
  /// printed node stays one line. False when `s` is not UTF-8.
  [[nodiscard]] bool string(std::string_view s) {
    if (python_) {
      buffer_->scratch.clear();
      if (!python::detail::append_string_literal(buffer_->scratch, s)) return false;
      *out_ += buffer_->scratch;
      return true;
    }
    for (char c : s) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        static constexpr char hex[] = "0123456789abcdef";
        *out_ += "\\x";
        *out_ += hex[(static_cast<unsigned char>(c) >> 4) & 0xF];
        *out_ += hex[static_cast<unsigned char>(c) & 0xF];
      } else {
        *out_ += c;
      }
    }
    return true;
  }
  /// A Python `str` value with nothing to escape in either rendering (no
  /// quote, backslash, control character or non-ASCII byte: a device
  /// type's name), written as `string` would write it without its
  /// checking pass (every allocation names its device).
  void plain_string(std::string_view s) {
    if (python_) {
      *out_ += '\'';
      *out_ += s;
      *out_ += '\'';
    } else {
      *out_ += s;
    }
  }
  /// The same text in both renderings (`torch.float32`, `[`, `, `).
  /// Always inline, as TextBuffer's appends are: out of line, a literal's
  /// length is lost and each piece costs two calls.
  [[gnu::always_inline]] void both(std::string_view s) { *out_ += s; }
  void raw(std::string_view text, std::string_view python) { *out_ += python_ ? python : text; }
  /// Appends what `other` wrote, and the nodes it refers to.
  void append(const ArgWriter& other) {
    *out_ += other.view();
    buffer_->refs.insert(buffer_->refs.end(), other.refs().begin(), other.refs().end());
  }
  /// A dict key: `k: ` printed, `'k': ` in Python.
  [[gnu::always_inline]] void key(std::string_view k) {
    if (python_) {
      *out_ += '\'';
      *out_ += k;
      *out_ += std::string_view("': ");
    } else {
      *out_ += k;
      *out_ += std::string_view(": ");
    }
  }
  [[nodiscard]] std::string_view view() const noexcept { return out_->view(); }
  [[nodiscard]] bool python() const noexcept { return python_; }
  [[nodiscard]] const std::vector<std::uint32_t>& refs() const noexcept { return buffer_->refs; }

 private:
  Graph& graph_;
  ArgBuffer* buffer_;
  wrapir::detail::TextBuffer* out_;
  bool python_;
  bool bare_;
};

/// One FX graph under construction.
class Graph {
 public:
  /// Which rendering the arguments are written in: Python (fx-python) or
  /// the printed text (fx).
  bool python = false;
  std::vector<Node> nodes;
  Namespace names;
  /// The rendered arguments of every node; for the text, each node's line
  /// after its head (`placeholder[target=x]`, `call_function[...](args =
  /// ..., kwargs = ...)`), in the order of the nodes, then the output's value.
  std::string arena;
  /// The output node's value (`return ...`), rendered like arguments; the
  /// text form as Python's `str` of a Node or list of Nodes (no `%`).
  Span output;
  bool has_output = false;

  std::uint32_t placeholder(std::string_view target) { return labelled(Op::placeholder, target); }
  std::uint32_t get_attr(std::string_view target) { return labelled(Op::get_attr, target); }

  /// A node calling `target`, which must outlive the graph (a static
  /// target or one from `intern`).
  std::uint32_t call_function(const Target& target, const ArgWriter& args, const ArgWriter& kwargs) {
    const std::string_view name = names.create_sanitized(target.candidate);
    const std::uint32_t index = call(target, args, kwargs);
    nodes[index].name = name;
    return index;
  }

  /// call_function, then rename(node, name) (Inductor names a buffer's
  /// node after the buffer), without making the text of the name torch.fx
  /// gave the node first: nothing prints it.
  std::uint32_t call_function_renamed(const Target& target, const ArgWriter& args, const ArgWriter& kwargs,
                                      std::string_view name) {
    names.take_sanitized(target.candidate);
    const std::uint32_t index = call(target, args, kwargs);
    rename(index, name);
    return index;
  }

  /// call_function with no keyword arguments.
  std::uint32_t call_function(const Target& target, const ArgWriter& args) {
    ArgWriter none(*this);
    none.both("{}");
    return call_function(target, args, none);
  }

  /// A graph-owned copy of `t` (one per distinct printed target).
  const Target& intern(Target t) {
    if (const auto it = interned_.find(t.printed); it != interned_.end()) return *it->second;
    owned_.push_back(std::make_unique<Target>(std::move(t)));
    const Target& stored = *owned_.back();
    interned_.emplace(stored.printed, &stored);
    return stored;
  }

  /// Call node `index` was named by `create_name(candidate)` before it was
  /// made (the Python rendering repeats that call).
  void set_reserved(std::uint32_t index, std::string_view candidate) {
    if (nodes[index].op != Op::call_function) wrapir::detail::fail("internal: a reserved name on a node that calls nothing");
    nodes[index].label = candidate;
  }

  /// `node.name = name`, as Inductor renames (the namespace keeps the old name).
  void rename(std::uint32_t index, std::string_view name) {
    nodes[index].name = name;
    nodes[index].renamed = true;
  }

  void set_output(const ArgWriter& value) {
    output = store(value.view());
    has_output = true;
    count_uses(value.refs(), output_user);
  }

  [[nodiscard]] std::string_view text(Span s) const noexcept { return std::string_view(arena).substr(s.begin, s.size); }

  /// The nodes' lines with their heads and tails (`Lines`: TextLines or
  /// PythonLines, as the rendering the arena holds), into `out` (a
  /// std::string or a SizeSink).
  template <class Lines, class Sink>
  void print_lines(Sink& out) const {
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      const IndexDigits digits(Lines::number(n, i));
      Lines::head(out, n, digits.view);
      out += text(n.args);
      Lines::tail(out, n, digits.view);
    }
  }

  /// The graph as `str(graph)` prints it, without a final newline (the
  /// text rendering).
  void print(std::string& out) const {
    out += print_head;
    print_lines<TextLines>(out);
    if (has_output) {
      out += print_return;
      out += text(output);
    }
  }

  /// The size of what `print` writes, exactly: the output is allocated
  /// once (growing it by doubling copied it and touched half as much
  /// memory again, which on a fresh page costs more than the copy).
  [[nodiscard]] std::size_t printed_size() const noexcept {
    SizeSink size;
    size += print_head;
    print_lines<TextLines>(size);
    if (has_output) size.size += print_return.size() + output.size;
    return size.size;
  }

  /// `prefix`, the nodes' lines as print_lines<Lines> writes them,
  /// `output_open`, the output's value, `output_close`, then `suffix`,
  /// made in place of the arena and moved out of the graph (which then
  /// prints nothing): the lines are moved towards the end, last first, and
  /// each head and tail written around its line, so the largest piece of
  /// the output is written once, and no second copy of it is ever touched.
  template <class Lines>
  [[nodiscard]] std::string take_lines(std::string_view prefix, std::string_view output_open,
                                       std::string_view output_close, std::string_view suffix) {
    // The lines lie in the arena in the order of the nodes, the output's
    // value last (the converter sets it after the last node): each moves to
    // a place at or after its own, so a move never overwrites a line not
    // yet moved.
    std::uint64_t expected = 0;
    for (const Node& n : nodes) {
      if (n.args.begin != expected) wrapir::detail::fail("internal: the FX graph's lines are out of order");
      expected += n.args.size;
    }
    const Span value = has_output ? output : Span{static_cast<std::uint32_t>(expected), 0};
    if (value.begin != expected || expected + value.size != arena.size())
      wrapir::detail::fail("internal: the FX graph's arena holds more than its lines");
    SizeSink size;
    print_lines<Lines>(size);
    const std::size_t total =
        prefix.size() + size.size + output_open.size() + value.size + output_close.size() + suffix.size();
    std::string out = std::move(arena);
    arena = std::string();
    out.reserve(total);
    out.resize(total);
    char* const data = out.data();
    std::size_t end = total - suffix.size();  // where the piece being placed ends
    CharSink{data + end} += suffix;
    end -= output_close.size();
    CharSink{data + end} += output_close;
    end -= value.size;
    std::memmove(data + end, data + value.begin, value.size);
    end -= output_open.size();
    CharSink{data + end} += output_open;
    for (std::uint32_t i = static_cast<std::uint32_t>(nodes.size()); i-- > 0;) {
      // The tail and the head land at or after the end of the lines not
      // yet moved (all that goes before a line is at least as long as the
      // lines before it).
      const Node& n = nodes[i];
      const IndexDigits digits(Lines::number(n, i));
      SizeSink tail;
      Lines::tail(tail, n, digits.view);
      end -= tail.size;
      CharSink at_tail{data + end};
      Lines::tail(at_tail, n, digits.view);
      end -= n.args.size;
      std::memmove(data + end, data + n.args.begin, n.args.size);
      SizeSink head;
      Lines::head(head, n, digits.view);
      end -= head.size;
      CharSink at_head{data + end};
      Lines::head(at_head, n, digits.view);
    }
    if (end != prefix.size()) wrapir::detail::fail("internal: the FX graph's text was sized wrongly");
    CharSink{data} += prefix;
    return out;
  }

  /// The text (prefix, `str(graph)`, suffix) made in place: see take_lines.
  [[nodiscard]] std::string take_text(std::string_view prefix, std::string_view suffix) {
    std::string head(prefix);
    head += print_head;
    return take_lines<TextLines>(head, has_output ? print_return : std::string_view(), {}, suffix);
  }

 private:
  friend class ArgWriter;

  static constexpr std::string_view print_head = "graph():";
  static constexpr std::string_view print_placeholder = "placeholder[target=";
  static constexpr std::string_view print_get_attr = "get_attr[target=";
  static constexpr std::string_view print_call = "call_function[target=";
  static constexpr std::string_view print_args = "](args = ";
  static constexpr std::string_view print_kwargs = ", kwargs = ";
  static constexpr std::string_view print_return = "\n    return ";

  static constexpr std::uint32_t output_user = UINT32_MAX - 1;

  /// The node of call_function, not yet named.
  std::uint32_t call(const Target& target, const ArgWriter& args, const ArgWriter& kwargs) {
    Node& n = push(Op::call_function);
    n.target = &target;
    const std::size_t begin = arena.size();
    if (python)
      put(" = g.call_function(", target.python, ", ", args.view(), ", ", kwargs.view(), ")\n");
    else
      put(print_call, target.printed, print_args, args.view(), print_kwargs, kwargs.view(), ")");
    n.args = span_from(begin);
    const auto index = static_cast<std::uint32_t>(nodes.size() - 1);
    count_uses(args.refs(), index);
    count_uses(kwargs.refs(), index);
    return index;
  }
  /// Each distinct node of `refs` gains `user` as a user (torch.fx's
  /// `len(node.users)` counts user nodes, not uses).
  void count_uses(const std::vector<std::uint32_t>& refs, std::uint32_t user) {
    for (const std::uint32_t r : refs) {
      Node& used = nodes[r];
      if (used.last_user == user) continue;
      used.last_user = user;
      ++used.users;
    }
  }

  Node& push(Op op) {
    nodes.emplace_back();
    nodes.back().op = op;
    return nodes.back();
  }
  /// `target` must outlive the graph (a program's or a module's name).
  std::uint32_t labelled(Op op, std::string_view target) {
    Node& n = push(op);
    n.label = target;
    n.name = names.create_name(snake_case(target));
    const std::size_t begin = arena.size();
    if (python) {
      arena += op == Op::placeholder ? " = g.placeholder('" : " = g.get_attr('";
      arena += target;  // an identifier (checked): quoted as it is
      arena += "')\n";
    } else {
      arena += op == Op::placeholder ? print_placeholder : print_get_attr;
      arena += target;
      arena += ']';
    }
    n.args = span_from(begin);
    return static_cast<std::uint32_t>(nodes.size() - 1);
  }
  /// Appends `pieces` to the arena with one call into std::string (whose
  /// appends are out-of-line calls, each with a `memcpy` call) and copies
  /// them in place: the literal pieces become a few moves.
  template <class... Pieces>
  void put(const Pieces&... pieces) {
    const std::size_t begin = arena.size();
    arena.resize(begin + (std::string_view(pieces).size() + ...));
    CharSink at{arena.data() + begin};
    ((at += std::string_view(pieces)), ...);
  }
  /// The arena from `begin` to its end.
  Span span_from(std::size_t begin) {
    if (arena.size() > UINT32_MAX) wrapir::detail::fail("the FX graph's text exceeds 4 GiB");
    return {static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(arena.size() - begin)};
  }
  Span store(std::string_view s) {
    if (arena.size() + s.size() > UINT32_MAX) wrapir::detail::fail("the FX graph's text exceeds 4 GiB");
    const Span span{static_cast<std::uint32_t>(arena.size()), static_cast<std::uint32_t>(s.size())};
    arena.append(s);
    return span;
  }
  ArgBuffer* lend() {
    if (free_.empty()) {
      buffers_.push_back(std::make_unique<ArgBuffer>());
      return buffers_.back().get();
    }
    ArgBuffer* b = free_.back();
    free_.pop_back();
    b->out.clear();
    b->refs.clear();
    return b;
  }
  void give_back(ArgBuffer* b) { free_.push_back(b); }

  std::vector<std::unique_ptr<ArgBuffer>> buffers_;
  std::vector<ArgBuffer*> free_;
  std::vector<std::unique_ptr<Target>> owned_;
  boost::unordered_flat_map<std::string_view, const Target*, NameHash, NameEqual> interned_;
};

inline ArgWriter::ArgWriter(Graph& g, bool bare)
    : graph_(g), buffer_(g.lend()), out_(&buffer_->out), python_(g.python), bare_(bare) {}
inline ArgWriter::~ArgWriter() { graph_.give_back(buffer_); }

inline void ArgWriter::node(std::uint32_t index) {
  buffer_->refs.push_back(index);
  if (python_) {
    char digits[16];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, index);
    (void)ec;
    *out_ += 'n';
    out_->append(digits, end);
  } else {
    if (!bare_) *out_ += '%';
    *out_ += graph_.nodes[index].name;
  }
}

}  // namespace wrapir::fx::detail
