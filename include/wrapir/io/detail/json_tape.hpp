#pragma once
/// \file
/// The parsed form of a document: a tape of `Node`s in document order.
///
/// Part of the JSON codec (io/json.hpp says what it does and how);
/// include <wrapir/io/json.hpp>, not this.

#include <wrapir/io/json.hpp>
#include <wrapir/io/detail/json_writer.hpp>

namespace wrapir::io::detail::json {

// ===========================================================================
// Parsing JSON text
// ===========================================================================

/// The kinds of JSON values on a tape.
enum class NodeKind : std::uint8_t { null, boolean, int64, uint64, number, string, array, object, key };

/// One JSON value (or object key) of a parsed document. A document is a
/// tape of nodes in document order: a container is followed by its
/// contents (an object by key, value, key, value, ...), and `span` says
/// how many nodes those take, so that its next sibling is `this + 1 + span`.
/// Strings view the input text, or the tape's own storage when they had
/// escapes.
struct Node {
  union {
    const char* chars;
    std::int64_t int64;
    std::uint64_t uint64;
    double number;
    std::uint64_t span;  // array, object: the nodes of the contents
    bool boolean;
  };
  /// string, key: the length in bytes; array: the element count; object:
  /// the member count.
  std::uint32_t size;
  NodeKind kind;

  [[nodiscard]] bool is(NodeKind k) const noexcept { return kind == k; }
  [[nodiscard]] std::string_view text() const noexcept { return {chars, size}; }
  [[nodiscard]] const Node* first() const noexcept { return this + 1; }
  [[nodiscard]] const Node* next() const noexcept {
    return this + 1 + (kind == NodeKind::array || kind == NodeKind::object ? span : 0);
  }
};

/// `a == b` for the short strings of keys and names, without a library call.
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

/// 1-based line and column (in bytes) of byte `offset` of `text`.
inline std::string text_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) + " (byte " +
         std::to_string(offset) + ")";
}

/// Text the tape's strings point to when the input does not hold them: a
/// string unescaped, or delivered in pieces, or any string of a document
/// read in chunks (`program_from_json(document_bytes, read_at)`), whose
/// buffer is overwritten by the next chunk. Blocks that never move, used as
/// a stack: `mark` before a container's nodes, `truncate` with the tape when
/// they are dropped, so that it holds the strings of the nodes on the tape
/// and no more.
class StringStack {
 public:
  struct Mark {
    std::size_t block = 0;  // blocks in use: those before it are full
    std::size_t used = 0;   // bytes used in the last of them
  };

  /// A copy of `s` that lives until a `truncate` to a mark made before it.
  std::string_view push(std::string_view s) {
    if (s.empty()) return {};
    if (in_use_ == 0 || used_ + s.size() > blocks_[in_use_ - 1].size) next_block(s.size());
    char* at = blocks_[in_use_ - 1].chars.get() + used_;
    std::memcpy(at, s.data(), s.size());
    used_ += s.size();
    return {at, s.size()};
  }
  [[nodiscard]] Mark mark() const noexcept { return Mark{in_use_, used_}; }
  /// Drops the strings pushed since `m`. One block beyond keeps its memory,
  /// so that a line's strings pushed and dropped again and again at a block's
  /// end do not allocate each time.
  void truncate(Mark m) noexcept {
    in_use_ = m.block;
    used_ = m.used;
    if (blocks_.size() > in_use_ + 1) blocks_.resize(in_use_ + 1);
  }
  /// Bytes held (for tests).
  [[nodiscard]] std::size_t capacity() const noexcept {
    std::size_t n = 0;
    for (const Block& b : blocks_) n += b.size;
    return n;
  }

 private:
  static constexpr std::size_t block_bytes = std::size_t{1} << 16;
  struct Block {
    std::unique_ptr<char[]> chars;
    std::size_t size;
  };
  void next_block(std::size_t least) {
    // A spare block beyond the mark is reused when the string fits it.
    if (in_use_ < blocks_.size() && blocks_[in_use_].size >= least) {
      ++in_use_;
      used_ = 0;
      return;
    }
    blocks_.resize(in_use_);
    const std::size_t size = std::max(block_bytes, least);
    blocks_.push_back(Block{std::make_unique_for_overwrite<char[]>(size), size});
    ++in_use_;
    used_ = 0;
  }

  std::vector<Block> blocks_;
  std::size_t in_use_ = 0;
  std::size_t used_ = 0;
};

/// Copies of strings that must outlive the tape's nodes they came from: the
/// names, expressions and other keys the decoder remembers for the rest of
/// a load. Blocks that never move and are never freed before the load ends.
class StringArena {
 public:
  std::string_view keep(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > left_) {
      const std::size_t size = std::max(block_bytes, s.size());
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
      next_ = blocks_.back().get();
      left_ = size;
    }
    char* at = next_;
    std::memcpy(at, s.data(), s.size());
    next_ += s.size();
    left_ -= s.size();
    return {at, s.size()};
  }

 private:
  static constexpr std::size_t block_bytes = std::size_t{1} << 16;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;
  std::size_t left_ = 0;
};

/// The nodes of a document in document order: an array that doubles when
/// full, so that adding a node, once per JSON value, is a few instructions.
class Tape {
 public:
  explicit Tape(std::size_t capacity)
      : nodes_(std::make_unique_for_overwrite<Node[]>(capacity)), capacity_(capacity) {}

  /// A new node at the end, kind and contents zero.
  Node& push(NodeKind kind) {
    if (size_ == capacity_) [[unlikely]]
      grow();
    Node& n = nodes_[size_++];
    n.uint64 = 0;
    n.size = 0;
    n.kind = kind;
    return n;
  }
  /// Drops the nodes from `size` on.
  void truncate(std::size_t size) noexcept { size_ = size; }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const Node* data() const noexcept { return nodes_.get(); }
  Node& operator[](std::size_t i) noexcept { return nodes_[i]; }
  Node& back() noexcept { return nodes_[size_ - 1]; }

 private:
  [[gnu::noinline]] void grow() {
    const std::size_t capacity = std::max<std::size_t>(2 * capacity_, 16);
    auto grown = std::make_unique_for_overwrite<Node[]>(capacity);
    std::copy(nodes_.get(), nodes_.get() + size_, grown.get());
    nodes_ = std::move(grown);
    capacity_ = capacity;
  }

  std::unique_ptr<Node[]> nodes_;
  std::size_t size_ = 0;
  std::size_t capacity_;
};

}  // namespace wrapir::io::detail::json
