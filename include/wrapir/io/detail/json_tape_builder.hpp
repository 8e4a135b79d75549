#pragma once
/// \file
/// `TapeBuilder`: the Boost.JSON parser handler that builds the tape and
/// hands table entries and lines to the decoder as they complete.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_decoder.hpp>

namespace wrapir::io::detail::json {

/// Builds the tape of a document from the events of Boost.JSON's
/// conforming parser (`boost::json::basic_parser`), which checks the syntax,
/// the UTF-8, the escapes and the nesting depth. Two checks are added:
/// duplicate keys in an object are an error, and floating-point numbers are
/// read again from their text with `std::from_chars`, which rounds
/// correctly (Boost 1.81's own conversion is off by one unit in the last
/// place for many inputs).
///
/// A tape is about 16 bytes per value, several times smaller and faster
/// to build than a `boost::json::value` tree. Most of a document is table
/// entries and lines, though, and they do not stay: in a program whose
/// tables come in their reading order, symbols first (as `to_json` writes
/// them), the decoder takes each entry and each line as soon as its object
/// is complete, while it is still in cache, and its nodes are dropped. The
/// tape then holds little more than one entry or line at a time, instead of
/// some 20 nodes for each, memory that would be fresh pages on every load.
class TapeBuilder {
 public:
  static constexpr std::size_t max_object_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_array_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_key_size = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t max_string_size = std::numeric_limits<std::uint32_t>::max();

  // About one value per 7 bytes of JSON as wrapir writes it. Reserved, not
  // touched: when entries and lines are read ahead, only the first pages are.
  /// For a document of `document_bytes` bytes. With `copy_strings`, the
  /// document comes in chunks (`next_chunk`) whose text does not outlive
  /// the parser's call, and every string is copied onto `strings`; without,
  /// it comes whole and strings view it where they can.
  TapeBuilder(std::size_t document_bytes, bool copy_strings, Decoder& decoder)
      : nodes(document_bytes / 7 + 16), document_bytes_(document_bytes), copy_strings_(copy_strings),
        decoder_(&decoder) {}

  /// The text the parser is given next starts at byte `offset` of the
  /// document.
  void next_chunk(std::string_view chunk, std::size_t offset) noexcept {
    chunk_ = chunk;
    chunk_offset_ = offset;
  }

  Tape nodes;
  /// The strings of the nodes on the tape that the input does not hold
  /// (see `StringStack`): truncated with the tape.
  StringStack strings;
  /// Set when parsing stopped at a duplicate key.
  std::optional<std::string> duplicate_key{};

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }
  bool on_object_begin(bj::error_code&) { return open(NodeKind::object); }
  bool on_object_end(std::size_t n, bj::error_code& ec) {
    const Open object = close(n);
    if (const auto dup = find_duplicate(nodes[object.index])) {
      duplicate_key = std::string(*dup);
      ec = bj::error::syntax;
      return false;
    }
    if (object.role == Role::entry) {
      Open& table = open_.back();
      if (decoder_->stream_entry(*table.ahead, table.table, nodes[object.index])) drop_from(object);
      else table.active = top_active_ = false;  // this entry and the rest stay
    } else if (object.role == Role::line) {
      Open& body = open_.back();
      if (decoder_->stream_line(*body.ahead, nodes[object.index], position_)) drop_from(object);
      else body.active = top_active_ = false;  // this line and the rest stay
    }
    return true;
  }
  bool on_array_begin(bj::error_code&) { return open(NodeKind::array); }
  bool on_array_end(std::size_t n, bj::error_code&) {
    const Open array = close(n);
    // The array keeps the elements left for the final pass.
    if (array.role == Role::table && array.ahead)
      nodes[array.index].size = static_cast<std::uint32_t>(decoder_->end_table(*array.ahead, array.table, n));
    else if (array.role == Role::body && array.ahead)
      nodes[array.index].size = static_cast<std::uint32_t>(Decoder::end_body(*array.ahead, n));
    return true;
  }
  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) { return part(s); }
  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    text(NodeKind::key, s);
    after_key(nodes.back().text());
    return true;
  }
  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) { return part(s); }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) { return text(NodeKind::string, s); }
  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_parts_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
    number_parts_.clear();
    Node& n = push(NodeKind::int64);
    n.int64 = i;
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
    number_parts_.clear();
    Node& n = push(NodeKind::uint64);
    n.uint64 = u;
    return true;
  }
  bool on_double(double d, bj::string_view s, bj::error_code&) {
    number_parts_.append(s.data(), s.size());
    double exact = 0;
    const char* first = number_parts_.data();
    const char* last = first + number_parts_.size();
    const auto r = std::from_chars(first, last, exact);
    // Out of range (1e400) keeps Boost's value: an infinity or zero.
    if (r.ec == std::errc{} && r.ptr == last) d = exact;
    number_parts_.clear();
    Node& n = push(NodeKind::number);
    n.number = d;
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    Node& n = push(NodeKind::boolean);
    n.boolean = b;
    return true;
  }
  bool on_null(bj::error_code&) {
    push(NodeKind::null);
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  /// What an open container is to reading ahead.
  enum class Role : std::uint8_t {
    other,
    document,   // the root object
    program,    // its "program", or an element of a program's "subgraphs"
    subgraphs,  // a program's "subgraphs"
    table,      // one of a program's `line_tables`
    entry,      // an object in a table read ahead
    body,       // a program's "body"
    line,       // an object in a body read ahead
  };
  struct Open {
    std::size_t index = 0;  // of the container's node
    Role role = Role::other;
    std::uint8_t table = 0;     // a table: its place in `line_tables`
    bool active = false;        // a table or body: its elements are read ahead
    std::size_t ordinal = 0;    // a program: its place among the programs, in document order
    ReadAhead* ahead = nullptr;  // a program: what of it is read ahead; a table or body: the same, once read ahead
    StringStack::Mark strings{};  // `strings` before the container's own
  };

  /// Drops `container` and what it holds from the tape.
  void drop_from(const Open& container) noexcept {
    nodes.truncate(container.index);
    strings.truncate(container.strings);
  }

  Node& push(NodeKind kind) {
    if (kind != NodeKind::key) {
      next_role_ = Role::other;
      if (top_active_ && kind != NodeKind::object) not_an_object();
    }
    return nodes.push(kind);
  }
  /// A value that is not an object in a table or body read ahead: the final
  /// pass refuses it. Reading ahead stops here.
  void not_an_object() { open_.back().active = top_active_ = false; }
  bool open(NodeKind kind) {
    const Role role = role_of(kind);
    const auto table = static_cast<std::uint8_t>(next_table_);
    const std::size_t index = nodes.size();
    push(kind);
    // Made in place: a copy of a record built field by field stalls on
    // store forwarding, once per container.
    Open& container = open_.emplace_back();
    container.index = index;
    container.role = role;
    container.strings = strings.mark();
    if (role == Role::program) {
      container.ordinal = programs_++;
      if (open_.size() == 2 && open_[0].role == Role::document) may_read_ahead_ = document_is_wrapir(index);
    } else if (role == Role::table) {
      Open& program = open_[open_.size() - 2];
      container.table = table;
      container.ahead =
          may_read_ahead_ ? decoder_->begin_table(program.ahead, table, program.index, program.ordinal) : nullptr;
      container.active = container.ahead != nullptr;
      if (container.ahead) program.ahead = container.ahead;
    } else if (role == Role::body) {
      container.ahead = Decoder::begin_body(open_[open_.size() - 2].ahead, position_, document_bytes_);
      container.active = container.ahead != nullptr;
    }
    top_active_ = container.active;
    return true;
  }
  /// Whether the root object's members before the program, whose object
  /// begins at `tape[program_node]`, hold the right "format" and "version".
  /// Reading ahead makes symbols, and should they be made in a context
  /// that the caller gave, the document had better be a wrapir program.
  [[nodiscard]] bool document_is_wrapir(std::size_t program_node) noexcept {
    bool format = false, version = false;
    // Key, value, key, value, ..., then the key "program".
    for (std::size_t k = 1; k + 1 < program_node;) {
      const Node& key = nodes[k];
      const Node& value = nodes[k + 1];
      if (same_text(key.text(), "format"))
        format = value.is(NodeKind::string) && same_text(value.text(), json_format_name);
      else if (same_text(key.text(), "version"))
        version = value.is(NodeKind::int64) && value.int64 == json_format_version;
      k = static_cast<std::size_t>(value.next() - nodes.data());
    }
    return format && version;
  }
  /// Completes the innermost open container.
  Open close(std::size_t count) {
    const Open container = open_.back();
    open_.pop_back();
    top_active_ = !open_.empty() && open_.back().active;
    nodes[container.index].span = nodes.size() - container.index - 1;
    nodes[container.index].size = static_cast<std::uint32_t>(count);
    return container;
  }
  /// The role of a container that opens now.
  [[nodiscard]] Role role_of(NodeKind kind) const noexcept {
    if (open_.empty()) return kind == NodeKind::object ? Role::document : Role::other;
    const Open& parent = open_.back();
    if (kind == NodeKind::object) {
      if (next_role_ == Role::program || parent.role == Role::subgraphs) return Role::program;
      if (parent.active) return parent.role == Role::table ? Role::entry : Role::line;
      return Role::other;
    }
    return next_role_ == Role::table || next_role_ == Role::body || next_role_ == Role::subgraphs ? next_role_
                                                                                                 : Role::other;
  }
  /// Notes the role of the value of member `key` of the innermost open object.
  void after_key(std::string_view key) noexcept {
    next_role_ = Role::other;
    switch (open_.back().role) {
      case Role::document:
        if (same_text(key, "program")) next_role_ = Role::program;
        return;
      case Role::program:
        if (same_text(key, "body")) {
          next_role_ = Role::body;
        } else if (same_text(key, "subgraphs")) {
          next_role_ = Role::subgraphs;
        } else {
          for (std::size_t i = 0; i < line_tables.size(); ++i)
            if (same_text(key, line_tables[i].key)) {
              next_role_ = Role::table;
              next_table_ = i;
            }
        }
        return;
      default: return;
    }
  }
  bool part(bj::string_view s) {
    parts_.append(s.data(), s.size());
    in_parts_ = true;
    return true;
  }
  bool text(NodeKind kind, bj::string_view s) {
    std::string_view piece(s.data(), s.size());
    const bool in_chunk = !in_parts_ && within_chunk(piece);
    if (in_parts_) {
      parts_.append(piece);
      piece = parts_;
    }
    if (in_chunk) {
      position_ = chunk_offset_ + static_cast<std::size_t>(piece.data() + piece.size() - chunk_.data());
    } else {
      // Unescaped into the parser's scratch space, or delivered in parts:
      // somewhere after the last position known, and at least as long as
      // its text unescaped, with its quotes (and a key its colon).
      const std::size_t least = piece.size() + (kind == NodeKind::key ? 3 : 2);
      position_ += std::min(least, document_bytes_ - std::min(position_, document_bytes_));
    }
    // Kept for the life of its node when the input will not hold it.
    if (!in_chunk || copy_strings_) piece = strings.push(piece);
    if (in_parts_) {
      parts_.clear();
      in_parts_ = false;
    }
    Node& n = push(kind);
    n.chars = piece.data();
    n.size = static_cast<std::uint32_t>(piece.size());
    return true;
  }
  [[nodiscard]] bool within_chunk(std::string_view s) const noexcept {
    const auto lo = reinterpret_cast<std::uintptr_t>(chunk_.data());
    const auto p = reinterpret_cast<std::uintptr_t>(s.data());
    return p >= lo && p + s.size() <= lo + chunk_.size();
  }

  static std::optional<std::string_view> find_duplicate(const Node& object) {
    if (object.size < 2) return std::nullopt;
    if (object.size <= 16) {  // every object wrapir writes: compare pairs
      std::array<const Node*, 16> keys;
      const Node* k = object.first();
      for (std::size_t i = 0; i < object.size; ++i, k = k->first()->next()) {
        keys[i] = k;
        for (std::size_t j = 0; j < i; ++j)
          if (same_text(keys[j]->text(), k->text())) return k->text();
      }
      return std::nullopt;
    }
    std::vector<std::string_view> keys;
    keys.reserve(object.size);
    for (const Node* k = object.first(); keys.size() < object.size; k = k->first()->next()) keys.push_back(k->text());
    std::sort(keys.begin(), keys.end());
    const auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end()) return *dup;
    return std::nullopt;
  }

  std::size_t document_bytes_;
  bool copy_strings_;
  std::string_view chunk_{};     // the text the parser reads now
  std::size_t chunk_offset_ = 0;  // its offset in the document
  Decoder* decoder_;
  std::vector<Open> open_;
  bool top_active_ = false;       // `open_.back().active`
  Role next_role_ = Role::other;  // of the value after the last key
  std::size_t next_table_ = 0;    // when that is a table
  std::size_t programs_ = 0;      // program objects begun
  // Where the input was parsed to, at least (a byte offset): the end of the
  // last string read from it, or past that by the strings with escapes or
  // in pieces read since.
  std::size_t position_ = 0;
  bool may_read_ahead_ = false;  // the document's format and version came first, and were right
  std::string parts_;
  bool in_parts_ = false;
  std::string number_parts_;
};

}  // namespace wrapir::io::detail::json
