#pragma once
/// \file
/// A move-only owner of one driver handle, released by a given function.

#include <utility>

namespace wrapir::cuda::detail {

/// Owns `handle` (null: owns nothing) and calls `Release{}(handle)` once.
/// Release errors are ignored: a destructor cannot report them, and the
/// driver's only failures there (a destroyed context, a sticky error) leave
/// nothing to free.
template <class Handle, class Release>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle h) noexcept : handle_(h) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  [[nodiscard]] Handle get() const noexcept { return handle_; }
  [[nodiscard]] explicit operator bool() const noexcept { return handle_ != Handle{}; }
  void reset() noexcept {
    if (handle_ != Handle{}) Release{}(std::exchange(handle_, Handle{}));
  }

 private:
  Handle handle_{};
};

}  // namespace wrapir::cuda::detail
