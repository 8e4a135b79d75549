#pragma once
/// \file
/// `SmallVector<T, N>`: a vector of trivially copyable values that holds up
/// to `N` of them in place and moves to the heap past that.
///
/// A layout's sizes and strides are its one use: a buffer table holds a
/// layout per buffer, and a `std::vector` of one expression costs 24 bytes
/// in place and a 32-byte heap block (the malloc minimum) for 8 bytes of
/// data, twice per buffer. Held in place, a 1-D or 2-D layout allocates
/// nothing (docs/performance.md, "Layouts with their dimensions in place").
///
/// It reads and grows like the vector (`for (Expr e : l.sizes)`,
/// `l.sizes.size()`, `l.sizes[i]`, `push_back`, `==`), converts to
/// `std::span<const T>`, is built and assigned from a `std::vector<T>` or a
/// braced list, and gives a vector copy with `to_vector()`. Iterators are
/// pointers; growing past the capacity moves the values (as a vector's
/// reallocation does), so pointers into it are invalidated by growth.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace wrapir::ir {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "SmallVector copies its values as bytes: T must be trivially copyable");
  static_assert(N >= 1 && N <= 0xffff, "SmallVector holds 1 to 65535 values in place");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() noexcept {}
  SmallVector(std::span<const T> items) { assign(items); }                   // NOLINT: implicit like a vector
  SmallVector(const std::vector<T>& items) : SmallVector(std::span<const T>(items)) {}  // NOLINT
  SmallVector(std::initializer_list<T> items) : SmallVector(std::span<const T>(items.begin(), items.size())) {}
  /// `count` copies of `value`.
  explicit SmallVector(std::size_t count, const T& value = T{}) { resize(count, value); }
  SmallVector(const SmallVector& o) : SmallVector(std::span<const T>(o.data(), o.size())) {}
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(std::span<const T>(o.data(), o.size()));
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(const std::vector<T>& items) {
    assign(std::span<const T>(items));
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> items) {
    assign(std::span<const T>(items.begin(), items.size()));
    return *this;
  }
  ~SmallVector() { release(); }

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// Whether the values are held in place (no heap block).
  [[nodiscard]] bool is_inline() const noexcept { return capacity_ == N; }
  [[nodiscard]] T* data() noexcept { return is_inline() ? in_place_ : heap_; }
  [[nodiscard]] const T* data() const noexcept { return is_inline() ? in_place_ : heap_; }
  [[nodiscard]] T* begin() noexcept { return data(); }
  [[nodiscard]] T* end() noexcept { return data() + size_; }
  [[nodiscard]] const T* begin() const noexcept { return data(); }
  [[nodiscard]] const T* end() const noexcept { return data() + size_; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data()[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  [[nodiscard]] T& front() noexcept { return data()[0]; }
  [[nodiscard]] const T& front() const noexcept { return data()[0]; }
  [[nodiscard]] T& back() noexcept { return data()[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return data()[size_ - 1]; }

  void push_back(const T& x) {
    const T copy = x;  // `x` may be one of this vector's values, which growing moves
    if (size_ == capacity_) grow(capacity_ * 2);
    data()[size_++] = copy;
  }
  template <class... A>
  T& emplace_back(A&&... args) {
    push_back(T(std::forward<A>(args)...));
    return back();
  }
  void pop_back() noexcept { --size_; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  void resize(std::size_t n, const T& value = T{}) {
    const T fill = value;  // as in push_back
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data()[i] = fill;
    size_ = static_cast<std::uint32_t>(n);
  }
  void clear() noexcept { size_ = 0; }
  void assign(std::span<const T> items) {
    if (items.size() > capacity_) {
      // The values may be this vector's own (an alias through a span): copy first.
      SmallVector fresh;
      fresh.grow(items.size());
      copy_values(fresh.data(), items.data(), items.size());
      fresh.size_ = static_cast<std::uint32_t>(items.size());
      *this = std::move(fresh);
      return;
    }
    copy_values(data(), items.data(), items.size());
    size_ = static_cast<std::uint32_t>(items.size());
  }

  operator std::span<const T>() const noexcept { return {data(), size_}; }  // NOLINT: reads like the vector
  [[nodiscard]] std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) { return equal(a, b); }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) { return equal(a, b); }

 private:
  // Trivially copyable values are copied as bytes (memmove: `from` may
  // overlap `to` when a vector is assigned a span of its own values).
  static void copy_values(T* to, const T* from, std::size_t n) noexcept {
    if (n != 0) std::memmove(static_cast<void*>(to), static_cast<const void*>(from), n * sizeof(T));
  }
  static bool equal(std::span<const T> a, std::span<const T> b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(a[i] == b[i])) return false;
    return true;
  }

  // Moves the values into a heap block of `n` (> N) values.
  void grow(std::size_t n) {
    if (n > UINT32_MAX) throw std::length_error("SmallVector: more than 2^32 - 1 values");
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
    copy_values(fresh, data(), size_);
    release();
    heap_ = fresh;
    capacity_ = static_cast<std::uint32_t>(n);
  }
  void release() noexcept {
    if (!is_inline()) ::operator delete(heap_);
  }
  // Takes `o`'s values (its block, or a copy of its in-place values) and
  // leaves it empty and in place.
  void take(SmallVector& o) noexcept {
    if (o.is_inline()) {
      copy_values(in_place_, o.in_place_, o.size_);
    } else {
      heap_ = o.heap_;
    }
    size_ = o.size_;
    capacity_ = o.capacity_;
    o.size_ = 0;
    o.capacity_ = N;
  }

  union {
    T in_place_[N];  // while capacity_ == N
    T* heap_;        // owned, while capacity_ > N
  };
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
};

}  // namespace wrapir::ir
