#pragma once
/// \file
/// A growable buffer of text whose appends are inline: a capacity check
/// and a `memcpy`, which for a literal piece (`", "`, `"], ["`) the
/// compiler turns into a few moves.
///
/// Why not `std::string`: its `append` is an out-of-line call (length
/// check, capacity check, then a call of `memcpy` for every piece, a
/// `strlen` for a `const char*`), and the FX emitter appends a dozen small
/// pieces per node; on the 1M-line program those calls were a third of the
/// emission's instructions (docs/performance.md, helper `fx2m`). The
/// buffers that hold a node's arguments are reused from node to node, so
/// they stop growing after the first few nodes and the slow path is cold.

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace wrapir::detail {

class TextBuffer {
 public:
  // Always inline: out of line (as g++ -O2 leaves it at most call sites)
  // a literal piece is a call and a `memcpy` call again, which is what
  // this class is for avoiding.
  [[gnu::always_inline]] TextBuffer& operator+=(std::string_view s) {
    if (s.size() > capacity_ - size_) grow(s.size());
    if (!s.empty()) std::memcpy(data_.get() + size_, s.data(), s.size());  // an empty view's data may be null
    size_ += s.size();
    return *this;
  }
  [[gnu::always_inline]] TextBuffer& operator+=(char c) {
    if (size_ == capacity_) grow(1);
    data_[size_++] = c;
    return *this;
  }
  void append(const char* begin, const char* end) { *this += std::string_view(begin, static_cast<std::size_t>(end - begin)); }

  void clear() noexcept { size_ = 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::string_view view() const noexcept { return {data_.get(), size_}; }
  operator std::string_view() const noexcept { return view(); }

 private:
  /// Room for `more` bytes past the end, at least doubling.
  [[gnu::noinline]] void grow(std::size_t more) {
    std::size_t capacity = capacity_ == 0 ? 256 : capacity_ * 2;
    while (capacity - size_ < more) capacity *= 2;
    auto data = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ != 0) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace wrapir::detail
