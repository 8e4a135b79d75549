#pragma once
/// \file
/// Diagnostics and `Result<T>`: errors as values a user can read.
///
/// A diagnostic is one line of plain text that says what went wrong, where
/// (an expression, a column, a line index) and why. Functions that can fail on
/// user input return `Result<T>` (or `Result<void>` when there is no value);
/// they never throw for bad input and never invoke undefined behaviour.
///
/// `Result<T>` has the interface of C++23's `std::expected<T, Diagnostic>`
/// (`has_value`, `value`, `error`, `value_or`, `and_then`, `transform`,
/// `or_else`, `transform_error`) so that moving to `std::expected` later is
/// a rename. One difference is deliberate: `operator*` and `operator->` are
/// checked like `value()`. Reading the value of a result that holds a
/// diagnostic throws `BadResultAccess`, whose `what()` is the diagnostic —
/// the message is never lost.
///
/// Library code that finds a problem deep inside a recursive walk may
/// `detail::fail(...)` (throwing `detail::Failure`) and turn it back into a
/// value at its public boundary with `detail::catch_failure`. `Failure` never
/// escapes a public function.

#include <cstddef>
#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace wrapir {

/// One finding: a single line of text, plus the column (0-based) when the
/// finding points into a piece of source text.
struct Diagnostic {
  std::string message;
  std::optional<std::size_t> column{};

  /// "column 7: unexpected ')'" or just the message.
  [[nodiscard]] std::string to_string() const {
    if (!column) return message;
    return "column " + std::to_string(*column + 1) + ": " + message;
  }

  friend bool operator==(const Diagnostic&, const Diagnostic&) = default;
};

/// Thrown by `Result::value()` (and `*`, `->`) on a result that holds a
/// diagnostic; carries it, and `what()` says it.
class BadResultAccess : public std::exception {
 public:
  explicit BadResultAccess(Diagnostic d) : diagnostic_(std::move(d)), what_("bad Result access: " + diagnostic_.to_string()) {}
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }
  [[nodiscard]] const Diagnostic& error() const noexcept { return diagnostic_; }

 private:
  Diagnostic diagnostic_;
  std::string what_;
};

template <class T>
class Result;

namespace detail {

template <class R>
struct is_result : std::false_type {};
template <class T>
struct is_result<Result<T>> : std::true_type {};

template <class R>
inline constexpr bool is_result_v = is_result<std::remove_cvref_t<R>>::value;

/// What `transform_error`'s function returned, as a diagnostic: a
/// `Diagnostic` as it is; a message keeps the column of the one it replaces
/// (adding context must not lose where the problem is).
template <class M>
[[nodiscard]] Diagnostic rewrapped(const Diagnostic& old, M&& replacement) {
  if constexpr (std::is_same_v<std::remove_cvref_t<M>, Diagnostic>) {
    return std::forward<M>(replacement);
  } else {
    return Diagnostic{std::string(std::forward<M>(replacement)), old.column};
  }
}

}  // namespace detail

/// Either a value or a diagnostic, never neither: an assignment that throws
/// leaves the result as it was (the rules of `std::expected`'s assignment;
/// `Diagnostic` moves without throwing, so one of them always can). A tagged
/// union rather than a variant: every `Result<T>` a translation unit names is
/// instantiated there, and a variant type costs several times more to
/// instantiate (issue 12 §5).
// GCC with sanitizers reports the member a branch does not hold as "maybe
// uninitialized" on paths that `has_value_` rules out (a known false positive
// of tagged unions); users build with -Werror.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <class T>
class Result {
  static_assert(!std::is_reference_v<T>, "Result<T&> is not supported; return a pointer or a reference_wrapper");
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Diagnostic>, "Result<Diagnostic> is ambiguous");

 public:
  using value_type = T;
  using error_type = Diagnostic;
  template <class U>
  using rebind = Result<U>;

  Result(T value) : value_(std::move(value)), has_value_(true) {}           // NOLINT: implicit by design
  Result(Diagnostic error) : error_(std::move(error)), has_value_(false) {}  // NOLINT

  Result(const Result& other)
    requires std::is_copy_constructible_v<T>
      : has_value_(other.has_value_) {
    if (has_value_) make_value(other.value_);
    else make_error(other.error_);
  }
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
    requires std::is_move_constructible_v<T>
      : has_value_(other.has_value_) {
    if (has_value_) make_value(std::move(other.value_));
    else make_error(std::move(other.error_));
  }
  Result& operator=(const Result& other)
    requires std::is_copy_constructible_v<T> && std::is_copy_assignable_v<T>
  {
    if (this != &other) assign(other);
    return *this;
  }
  Result& operator=(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T> &&
                                             std::is_nothrow_move_assignable_v<T>)
    requires std::is_move_constructible_v<T> && std::is_move_assignable_v<T>
  {
    if (this != &other) assign(std::move(other));
    return *this;
  }
  ~Result() { destroy(); }

  [[nodiscard]] bool has_value() const noexcept { return has_value_; }
  /// Same as `has_value()`.
  [[nodiscard]] bool ok() const noexcept { return has_value(); }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; on a diagnostic, throws `BadResultAccess` carrying it.
  [[nodiscard]] const T& value() const& {
    check();
    return value_;
  }
  [[nodiscard]] T& value() & {
    check();
    return value_;
  }
  [[nodiscard]] T&& value() && {
    check();
    return std::move(value_);
  }
  [[nodiscard]] const T& operator*() const& { return value(); }
  [[nodiscard]] T& operator*() & { return value(); }
  [[nodiscard]] T&& operator*() && { return std::move(*this).value(); }
  [[nodiscard]] const T* operator->() const { return &value(); }
  [[nodiscard]] T* operator->() { return &value(); }

  /// The diagnostic; calling this on a value is a programming error (checked:
  /// it throws `std::logic_error`).
  [[nodiscard]] const Diagnostic& error() const& {
    check_error();
    return error_;
  }
  [[nodiscard]] Diagnostic&& error() && {
    check_error();
    return std::move(error_);
  }

  /// The value, or `fallback` converted to `T`.
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) const& {
    return has_value() ? value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  [[nodiscard]] T value_or(U&& fallback) && {
    return has_value() ? std::move(value_) : static_cast<T>(std::forward<U>(fallback));
  }

  /// `f(value)` (which returns a `Result<U>`), or this diagnostic.
  template <class F>
  auto and_then(F&& f) const& {
    using R = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
    static_assert(detail::is_result_v<R>, "and_then: the function must return a Result");
    if (!has_value()) return R(error());
    return std::invoke(std::forward<F>(f), value_);
  }
  template <class F>
  auto and_then(F&& f) && {
    using R = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
    static_assert(detail::is_result_v<R>, "and_then: the function must return a Result");
    if (!has_value()) return R(std::move(*this).error());
    return std::invoke(std::forward<F>(f), std::move(value_));
  }

  /// `Result<U>` holding `f(value)`, or this diagnostic.
  template <class F>
  auto transform(F&& f) const& {
    using U = std::remove_cv_t<std::invoke_result_t<F, const T&>>;
    if (!has_value()) return Result<U>(error());
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), value_);
      return Result<U>();
    } else {
      return Result<U>(std::invoke(std::forward<F>(f), value_));
    }
  }
  template <class F>
  auto transform(F&& f) && {
    using U = std::remove_cv_t<std::invoke_result_t<F, T&&>>;
    if (!has_value()) return Result<U>(std::move(*this).error());
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f), std::move(value_));
      return Result<U>();
    } else {
      return Result<U>(std::invoke(std::forward<F>(f), std::move(value_)));
    }
  }

  /// This value, or `f(diagnostic)` (which returns a `Result<T>`).
  template <class F>
  Result or_else(F&& f) const& {
    if (has_value()) return *this;
    return std::invoke(std::forward<F>(f), error());
  }
  template <class F>
  Result or_else(F&& f) && {
    if (has_value()) return std::move(*this);
    return std::invoke(std::forward<F>(f), std::move(*this).error());
  }

  /// This value, or the diagnostic `f(diagnostic)` returns (to add context):
  /// a `Diagnostic`, or a message that keeps the old diagnostic's column.
  template <class F>
  Result transform_error(F&& f) const& {
    if (has_value()) return *this;
    return Result(detail::rewrapped(error(), std::invoke(std::forward<F>(f), error())));
  }
  template <class F>
  Result transform_error(F&& f) && {
    if (has_value()) return std::move(*this);
    const Diagnostic& old = error();
    return Result(detail::rewrapped(old, std::invoke(std::forward<F>(f), old)));
  }

  /// True when this holds a value equal to `v` (an error equals nothing).
  friend bool operator==(const Result& r, const T& v) { return r.has_value() && r.value() == v; }

 private:
  void check() const {
    if (!has_value()) throw BadResultAccess(error_);
  }
  void check_error() const;

  // Placement new rather than std::construct_at: <memory> would cost every
  // translation unit that includes this header 0.2 s.
  template <class... A>
  void make_value(A&&... args) {
    ::new (static_cast<void*>(__builtin_addressof(value_))) T(std::forward<A>(args)...);
  }
  template <class... A>
  void make_error(A&&... args) {
    ::new (static_cast<void*>(__builtin_addressof(error_))) Diagnostic(std::forward<A>(args)...);
  }
  void destroy() noexcept {
    if (has_value_) value_.~T();
    else error_.~Diagnostic();
  }

  // `other` is a `const Result&` or a `Result&&`; its members are forwarded
  // as it is. Nothing changes unless the new content is fully built.
  template <class Other>
  void assign(Other&& other) {
    if (has_value_ && other.has_value_) {
      value_ = std::forward<Other>(other).value_;
    } else if (!has_value_ && !other.has_value_) {
      error_ = std::forward<Other>(other).error_;
    } else if (other.has_value_) {
      using Source = decltype((std::forward<Other>(other).value_));
      if constexpr (std::is_nothrow_constructible_v<T, Source>) {
        error_.~Diagnostic();
        make_value(std::forward<Other>(other).value_);
      } else if constexpr (std::is_nothrow_move_constructible_v<T>) {
        T fresh(std::forward<Other>(other).value_);
        error_.~Diagnostic();
        make_value(std::move(fresh));
      } else {
        Diagnostic saved(std::move(error_));
        error_.~Diagnostic();
        try {
          make_value(std::forward<Other>(other).value_);
        } catch (...) {
          make_error(std::move(saved));
          throw;
        }
      }
      has_value_ = true;
    } else {
      Diagnostic fresh(std::forward<Other>(other).error_);
      value_.~T();
      make_error(std::move(fresh));
      has_value_ = false;
    }
  }

  union {
    T value_;
    Diagnostic error_;
  };
  bool has_value_;
};

/// Success, or a diagnostic: for operations with nothing to return.
/// `Result<void>{}` is success (like `std::expected<void, E>`).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

template <>
class Result<void> {
 public:
  using value_type = void;
  using error_type = Diagnostic;
  template <class U>
  using rebind = Result<U>;

  Result() = default;
  Result(Diagnostic error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool has_value() const noexcept { return !error_.has_value(); }
  [[nodiscard]] bool ok() const noexcept { return has_value(); }
  explicit operator bool() const noexcept { return has_value(); }

  /// Throws `BadResultAccess` when this holds a diagnostic.
  void value() const {
    if (error_) throw BadResultAccess(*error_);
  }

  [[nodiscard]] const Diagnostic& error() const& {
    check_error();
    return *error_;
  }
  [[nodiscard]] Diagnostic&& error() && {
    check_error();
    return std::move(*error_);
  }

  template <class F>
  auto and_then(F&& f) const {
    using R = std::remove_cvref_t<std::invoke_result_t<F>>;
    static_assert(detail::is_result_v<R>, "and_then: the function must return a Result");
    if (error_) return R(*error_);
    return std::invoke(std::forward<F>(f));
  }

  template <class F>
  auto transform(F&& f) const {
    using U = std::remove_cv_t<std::invoke_result_t<F>>;
    if (error_) return Result<U>(*error_);
    if constexpr (std::is_void_v<U>) {
      std::invoke(std::forward<F>(f));
      return Result<U>();
    } else {
      return Result<U>(std::invoke(std::forward<F>(f)));
    }
  }

  template <class F>
  Result or_else(F&& f) const {
    if (!error_) return *this;
    return std::invoke(std::forward<F>(f), *error_);
  }

  template <class F>
  Result transform_error(F&& f) const {
    if (!error_) return *this;
    return Result(detail::rewrapped(*error_, std::invoke(std::forward<F>(f), *error_)));
  }

 private:
  void check_error() const;

  std::optional<Diagnostic> error_{};
};

namespace detail {

[[noreturn]] void throw_no_error();

/// A diagnostic on its way out of a deep walk (a parser, a decoder, an
/// emitter). Thrown only by library internals through `fail` and always
/// caught at the public function that started the walk, with
/// `catch_failure`: it never reaches a user.
struct Failure {
  Diagnostic diagnostic;
};

[[noreturn]] inline void fail(Diagnostic d) { throw Failure{std::move(d)}; }
[[noreturn]] inline void fail(std::string message) { throw Failure{Diagnostic{std::move(message)}}; }

/// Runs `body` (returning `T`, or `void`) and returns its value as a
/// `Result<T>`, or the diagnostic of a `Failure` it threw.
template <class F>
auto catch_failure(F&& body) -> Result<std::invoke_result_t<F>> {
  using T = std::invoke_result_t<F>;
  try {
    if constexpr (std::is_void_v<T>) {
      std::invoke(std::forward<F>(body));
      return Result<void>();
    } else {
      return Result<T>(std::invoke(std::forward<F>(body)));
    }
  } catch (Failure& f) {
    return Result<T>(std::move(f.diagnostic));
  }
}

}  // namespace detail

}  // namespace wrapir

namespace wrapir {

inline void detail::throw_no_error() {
  throw std::logic_error("wrapir::Result::error() called on a result that holds a value");
}

template <class T>
inline void Result<T>::check_error() const {
  if (has_value()) detail::throw_no_error();
}

inline void Result<void>::check_error() const {
  if (!error_) detail::throw_no_error();
}

}  // namespace wrapir
