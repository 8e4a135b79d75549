#pragma once
/// \file
/// Values on the heap, for the rare large members of the records a program
/// holds millions of, so that those records (and the variants `Arg` and
/// `Line` that hold them) are sized by their common small members.
///
/// - `OptionalBox<T>`: a `std::optional<T>` whose value lives on the heap,
///   one pointer where it is absent (the view of a buffer argument, the
///   group of a comm buffer): a `std::optional<View>` made every argument
///   80 bytes, an `OptionalBox` 40. It has the part of `std::optional`'s
///   interface that code reading and building those members uses, so that
///   `if (arg.view)`, `arg.view->sizes`, `*arg.view`, `arg.view =
///   std::nullopt` and `arg.view = View{...}` read as they did.
/// - `Box<T>`: always a `T`, on the heap (a kernel definition's metadata,
///   104 bytes, which made every line 232 bytes; the source of a scatter;
///   the explicit and typed forms of a launch grid, which made every line
///   152 bytes). Read it through `->` or `*`, or pass it where a `const T&`
///   is expected.
/// - `VectorBox<T>`: a `std::vector<T>` behind one pointer, null while
///   empty (an extern call's keyword arguments and outs: most calls have
///   none, and three inline vectors of 24 bytes made ExternKernelMultiOut
///   120 bytes). It reads and grows like the vector (`for (const NamedArg&
///   k : call.kwargs)`, `kwargs.size()`, `kwargs[i]`, `kwargs.push_back(..)`)
///   and converts to `const std::vector<T>&` and `std::span<const T>` where
///   one is expected.
///
/// All three have value semantics: copies copy the value, `==` compares
/// values. Code that walks fields generically (reflection, codecs, the
/// effects walker) reads a box as the value it holds (`unboxed_t`).

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace wrapir::ir {

template <class T>
class OptionalBox {
 public:
  using value_type = T;

  OptionalBox() noexcept = default;
  OptionalBox(std::nullopt_t) noexcept {}                                        // NOLINT: implicit like optional
  OptionalBox(T value) : value_(new T(std::move(value))) {}                      // NOLINT
  OptionalBox(std::optional<T> value) : value_(value ? new T(std::move(*value)) : nullptr) {}  // NOLINT
  OptionalBox(const OptionalBox& o) : value_(o.value_ ? new T(*o.value_) : nullptr) {}
  OptionalBox(OptionalBox&& o) noexcept : value_(std::exchange(o.value_, nullptr)) {}
  OptionalBox& operator=(const OptionalBox& o) {
    if (this != &o) replace(o.value_ ? new T(*o.value_) : nullptr);
    return *this;
  }
  OptionalBox& operator=(OptionalBox&& o) noexcept {
    if (this != &o) replace(std::exchange(o.value_, nullptr));
    return *this;
  }
  OptionalBox& operator=(std::nullopt_t) noexcept {
    reset();
    return *this;
  }
  ~OptionalBox() { delete value_; }

  [[nodiscard]] bool has_value() const noexcept { return value_ != nullptr; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& operator*() noexcept { return *value_; }
  [[nodiscard]] const T& operator*() const noexcept { return *value_; }
  [[nodiscard]] T* operator->() noexcept { return value_; }
  [[nodiscard]] const T* operator->() const noexcept { return value_; }

  /// The value; throws `std::bad_optional_access` when there is none.
  [[nodiscard]] T& value() {
    if (!value_) throw std::bad_optional_access{};
    return *value_;
  }
  [[nodiscard]] const T& value() const {
    if (!value_) throw std::bad_optional_access{};
    return *value_;
  }
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const {
    return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }

  void reset() noexcept { replace(nullptr); }
  template <class... A>
  T& emplace(A&&... args) {
    replace(new T(std::forward<A>(args)...));
    return *value_;
  }

  /// The value as a `std::optional` (a copy).
  [[nodiscard]] std::optional<T> to_optional() const { return value_ ? std::optional<T>(*value_) : std::nullopt; }

  friend bool operator==(const OptionalBox& a, const OptionalBox& b) {
    if (!a.value_ || !b.value_) return !a.value_ && !b.value_;
    return *a.value_ == *b.value_;
  }
  friend bool operator==(const OptionalBox& a, std::nullopt_t) noexcept { return !a.value_; }
  friend bool operator==(const OptionalBox& a, const T& b) { return a.value_ && *a.value_ == b; }

 private:
  // Takes ownership of `fresh` and deletes the old value. The new value is
  // made before the old one goes, so a throwing copy leaves the box as it was.
  void replace(T* fresh) noexcept { delete std::exchange(value_, fresh); }

  T* value_ = nullptr;  // owned (a raw pointer: std::unique_ptr costs every TU its instantiation per T)
};

/// Always a `T`, held on the heap. A moved-from `Box` holds nothing until
/// it is assigned to: reading its value is a bug (as for any moved-from
/// value, the value is unspecified), but it stays valid: it can be copied
/// (the copy is moved-from too), compared (equal only to another moved-from
/// box), assigned and destroyed, as the standard library expects of
/// moved-from objects.
template <class T>
class Box {
 public:
  using value_type = T;

  Box() : value_(new T()) {}
  Box(T value) : value_(new T(std::move(value))) {}  // NOLINT: implicit like the value
  /// From what converts to a `T`, as the `T` would be (`ScatterFallback{...,
  /// 1.5, ...}` boxes the `Arg` that 1.5 makes).
  template <class U>
    requires(!std::is_same_v<std::remove_cvref_t<U>, Box> && !std::is_same_v<std::remove_cvref_t<U>, T> &&
             std::is_convertible_v<U&&, T>)
  Box(U&& value) : value_(new T(std::forward<U>(value))) {}  // NOLINT: implicit like the value
  Box(const Box& o) : value_(o.value_ ? new T(*o.value_) : nullptr) {}
  Box(Box&& o) noexcept : value_(std::exchange(o.value_, nullptr)) {}
  Box& operator=(const Box& o) {
    if (this != &o) replace(o.value_ ? new T(*o.value_) : nullptr);
    return *this;
  }
  Box& operator=(Box&& o) noexcept {
    if (this != &o) replace(std::exchange(o.value_, nullptr));
    return *this;
  }
  template <class U>
    requires(!std::is_same_v<std::remove_cvref_t<U>, Box> && std::is_convertible_v<U&&, T>)
  Box& operator=(U&& value) {
    replace(new T(std::forward<U>(value)));
    return *this;
  }
  ~Box() { delete value_; }

  [[nodiscard]] T& operator*() noexcept { return *value_; }
  [[nodiscard]] const T& operator*() const noexcept { return *value_; }
  [[nodiscard]] T* operator->() noexcept { return value_; }
  [[nodiscard]] const T* operator->() const noexcept { return value_; }
  operator const T&() const noexcept { return *value_; }  // NOLINT: reads like the value

  friend bool operator==(const Box& a, const Box& b) {
    if (!a.value_ || !b.value_) return !a.value_ && !b.value_;
    return *a.value_ == *b.value_;
  }

 private:
  // As OptionalBox::replace: the new value exists before the old one goes.
  void replace(T* fresh) noexcept { delete std::exchange(value_, fresh); }

  T* value_;  // owned; null only when moved from
};

/// A `std::vector<T>` held through one pointer that is null while the
/// vector is empty, so that a field most values leave empty costs 8 bytes
/// and no allocation (see the file comment). Iterators are pointers.
template <class T>
class VectorBox {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  VectorBox() noexcept = default;
  VectorBox(std::vector<T> items)  // NOLINT: implicit like the vector
      : items_(items.empty() ? nullptr : new std::vector<T>(std::move(items))) {}
  VectorBox(std::initializer_list<T> items) : VectorBox(std::vector<T>(items)) {}
  VectorBox(const VectorBox& o) : items_(o.empty() ? nullptr : new std::vector<T>(*o.items_)) {}
  VectorBox(VectorBox&& o) noexcept : items_(std::exchange(o.items_, nullptr)) {}
  VectorBox& operator=(const VectorBox& o) {
    if (this != &o) replace(o.empty() ? nullptr : new std::vector<T>(*o.items_));
    return *this;
  }
  VectorBox& operator=(VectorBox&& o) noexcept {
    if (this != &o) replace(std::exchange(o.items_, nullptr));
    return *this;
  }
  VectorBox& operator=(std::vector<T> items) {
    replace(items.empty() ? nullptr : new std::vector<T>(std::move(items)));
    return *this;
  }
  VectorBox& operator=(std::initializer_list<T> items) { return *this = std::vector<T>(items); }
  ~VectorBox() { delete items_; }

  [[nodiscard]] bool empty() const noexcept { return !items_ || items_->empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return items_ ? items_->size() : 0; }
  [[nodiscard]] T* data() noexcept { return items_ ? items_->data() : nullptr; }
  [[nodiscard]] const T* data() const noexcept { return items_ ? items_->data() : nullptr; }
  [[nodiscard]] T* begin() noexcept { return data(); }
  [[nodiscard]] T* end() noexcept { return data() + size(); }
  [[nodiscard]] const T* begin() const noexcept { return data(); }
  [[nodiscard]] const T* end() const noexcept { return data() + size(); }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return (*items_)[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return (*items_)[i]; }
  [[nodiscard]] T& front() noexcept { return items_->front(); }
  [[nodiscard]] const T& front() const noexcept { return items_->front(); }
  [[nodiscard]] T& back() noexcept { return items_->back(); }
  [[nodiscard]] const T& back() const noexcept { return items_->back(); }

  void push_back(const T& x) { grown().push_back(x); }
  void push_back(T&& x) { grown().push_back(std::move(x)); }
  template <class... A>
  T& emplace_back(A&&... args) {
    return grown().emplace_back(std::forward<A>(args)...);
  }
  void reserve(std::size_t n) {
    if (n) grown().reserve(n);
  }
  void clear() noexcept { replace(nullptr); }

  /// The items as a vector (a shared empty one while there are none).
  [[nodiscard]] const std::vector<T>& vector() const noexcept { return items_ ? *items_ : empty_; }
  operator const std::vector<T>&() const noexcept { return vector(); }  // NOLINT: reads like the vector

  friend bool operator==(const VectorBox& a, const VectorBox& b) { return a.vector() == b.vector(); }
  friend bool operator==(const VectorBox& a, const std::vector<T>& b) { return a.vector() == b; }

 private:
  std::vector<T>& grown() {
    if (!items_) items_ = new std::vector<T>();
    return *items_;
  }
  void replace(std::vector<T>* fresh) noexcept { delete std::exchange(items_, fresh); }

  static inline const std::vector<T> empty_{};  // constant-initialised: no guard on reads
  std::vector<T>* items_ = nullptr;              // owned; null while empty (and when moved from)
};

template <class T>
inline constexpr bool is_optional_box_v = false;
template <class T>
inline constexpr bool is_optional_box_v<OptionalBox<T>> = true;
template <class T>
inline constexpr bool is_box_v = false;
template <class T>
inline constexpr bool is_box_v<Box<T>> = true;
template <class T>
inline constexpr bool is_vector_box_v = false;
template <class T>
inline constexpr bool is_vector_box_v<VectorBox<T>> = true;

/// `T`, or the type a `Box<T>` holds: what generic code (codecs, the
/// effects walker) sees of a variant's boxed alternative.
template <class T>
struct unboxed {
  using type = T;
};
template <class T>
struct unboxed<Box<T>> {
  using type = T;
};
template <class T>
using unboxed_t = typename unboxed<T>::type;

/// `v`, or the value the `Box` `v` holds.
template <class T>
[[nodiscard]] constexpr const T& unbox(const T& v) noexcept {
  return v;
}
template <class T>
[[nodiscard]] const T& unbox(const Box<T>& b) noexcept {
  return *b;
}

}  // namespace wrapir::ir
