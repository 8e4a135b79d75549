#pragma once
/// \file
/// Call arguments: the closed set of values a kernel, extern kernel or
/// subgraph call can receive.
///
/// `Arg` is a Boost.Variant2 variant (never valueless, so a failed
/// assignment cannot leave an argument empty) over: a buffer, whole or
/// through a view; a symbolic integer; an int; a float; a bool; a string; none;
/// a device; a dtype; a list of arguments.
///
/// An `Arg` is 24 bytes: a kernel call holds one per parameter, and a
/// million-line program millions of them. Its two large alternatives live on
/// the heap (ir/box.hpp): a string as a `Box<std::string>` and a list's
/// items as a `VectorBox<Arg>` (strings and lists are rare: extern calls'
/// `reduce='sum'` and `aten.cat`'s tensors), so the common ones (a buffer,
/// an expression, an int) are held in place. Read an argument through
/// `holds<T>()`, `get_if<T>()` and `visit(f)`, which see a string as a
/// `std::string`; `value` is the variant itself, boxes included.

#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/ids.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/box.hpp>

#include <wrapir/ir/detail/reflection.hpp>
#include <boost/variant2/variant.hpp>

#include <bit>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace wrapir::ir {

/// A strided view of a buffer's storage, as `reinterpret_tensor(buf, sizes,
/// strides, offset)` takes it: the offset is in elements of the buffer's
/// dtype and counts from the start of the buffer's storage (not from the
/// buffer's own storage offset).
struct View {
  std::vector<expr::Expr> sizes{};
  std::vector<expr::Expr> strides{};
  expr::Expr offset{};

  friend bool operator==(const View&, const View&) = default;
};

/// A buffer passed to a call: the buffer itself, or a view of its storage.
struct BufferArg {
  BufferId buffer{};
  OptionalBox<View> view{};  // boxed: most arguments have no view

  friend bool operator==(const BufferArg&, const BufferArg&) = default;
};

/// Python's `None` / an absent optional argument.
struct None {
  friend constexpr bool operator==(None, None) noexcept { return true; }
};

struct Arg;

/// A list (or tuple) of arguments, e.g. the tensors of `aten.cat`. The
/// items read and grow like a `std::vector<Arg>` (`for (const Arg& x :
/// l.items)`, `l.items[i]`, `push_back`) and convert to
/// `const std::vector<Arg>&`; boxed, one pointer, null while empty.
struct ArgList {
  VectorBox<Arg> items;  // no default member initializer: Arg is incomplete here

  friend bool operator==(const ArgList&, const ArgList&);
};

/// One call argument. The alternatives, in index order: None, BufferArg,
/// Expr (a symbolic integer), std::int64_t, double, bool, a string (held as
/// `Box<std::string>`), Device, DType, ArgList. A null Expr is not a valid
/// argument (the verifier reports it).
struct Arg {
  using Value = boost::variant2::variant<None, BufferArg, expr::Expr, std::int64_t, double, bool,
                                         Box<std::string>, Device, DType, ArgList>;
  Value value{};

  /// The alternative of `value` that holds a `T`: a string is boxed.
  template <class T>
  using stored_t = std::conditional_t<std::is_same_v<T, std::string>, Box<std::string>, T>;

  Arg() = default;
  Arg(None) {}                                                            // NOLINT: implicit by design
  Arg(BufferId b) : value(BufferArg{b, std::nullopt}) {}                  // NOLINT
  Arg(BufferArg b) : value(std::move(b)) {}                               // NOLINT
  Arg(expr::Expr e) : value(e) {}                                         // NOLINT
  template <std::integral I>
    requires(!std::same_as<I, bool> && !std::same_as<I, char>)
  Arg(I i) : value(static_cast<std::int64_t>(i)) {}                       // NOLINT
  template <std::floating_point F>
  Arg(F f) : value(static_cast<double>(f)) {}                             // NOLINT
  template <class B>
    requires std::same_as<B, bool>
  Arg(B b) : value(b) {}                                                  // NOLINT
  Arg(std::string s) : value(Box<std::string>(std::move(s))) {}           // NOLINT
  Arg(const char* s) : value(Box<std::string>(std::string(s))) {}         // NOLINT
  Arg(Device d) : value(d) {}                                             // NOLINT
  Arg(DType d) : value(d) {}                                              // NOLINT
  Arg(ArgList l) : value(std::move(l)) {}                                 // NOLINT

  /// Whether the argument is a `T` (`holds<std::string>()` for a string).
  template <class T>
  [[nodiscard]] bool holds() const noexcept {
    return boost::variant2::holds_alternative<stored_t<T>>(value);
  }
  /// The `T` the argument holds, or null (`get_if<std::string>()` gives
  /// the string inside its box).
  template <class T>
  [[nodiscard]] const T* get_if() const noexcept {
    if constexpr (std::is_same_v<T, std::string>) {
      const Box<std::string>* s = boost::variant2::get_if<Box<std::string>>(&value);
      return s ? &**s : nullptr;
    } else {
      return boost::variant2::get_if<T>(&value);
    }
  }
  /// `f(x)` with the value `x` the argument holds, a string as
  /// `const std::string&` (where `boost::variant2::visit(f, a.value)`
  /// would pass its box).
  template <class F>
  decltype(auto) visit(F&& f) const {
    return boost::variant2::visit([&f](const auto& v) -> decltype(auto) { return f(unbox(v)); }, value);
  }

  /// Equality of data, not of numbers: floats compare by their bits, so
  /// that a program holding NaN equals its copy and -0.0 differs from 0.0
  /// (both matter to what generated code prints).
  friend bool operator==(const Arg& a, const Arg& b) {
    if (a.value.index() != b.value.index()) return false;
    if (const double* x = a.get_if<double>())
      return std::bit_cast<std::uint64_t>(*x) == std::bit_cast<std::uint64_t>(*b.get_if<double>());
    return a.value == b.value;
  }
};

inline bool operator==(const ArgList& a, const ArgList& b) { return a.items == b.items; }

// Where an argument's bytes go: a buffer argument (a 4-byte id and a view's
// pointer) is the largest alternative held in place, and the index takes the
// rest. A larger alternative makes every kernel call's argument vector grow.
static_assert(sizeof(void*) != 8 || sizeof(Arg) == 24, "an Arg is 24 bytes on 64-bit targets: box large alternatives");

/// A keyword argument of an extern kernel call (`out=buf0`, `reduce='add'`).
/// The name is printed into generated code and must be a valid name.
struct NamedArg {
  Name name{};
  Arg value{};

  friend bool operator==(const NamedArg&, const NamedArg&) = default;
};

/// The name of an argument's alternative, for diagnostics: "buffer",
/// "symbolic integer", "int", "float", "bool", "string", "none", "device",
/// "dtype", "list".
[[nodiscard]] inline const char* arg_kind_name(const Arg& a) noexcept {
  constexpr const char* names[] = {"none", "buffer", "symbolic integer", "int",    "float",
                                   "bool", "string", "device",           "dtype",  "list"};
  return names[a.value.index()];
}

}  // namespace wrapir::ir

// Reflection of the records that codecs walk field by field (see
// ir/reflect.hpp). NamedArg is adapted with the other value records at the
// end of ir/lines.hpp; Arg, ArgList and None are variant plumbing that each
// codec spells per alternative.
WRAPIR_REFLECT(wrapir::ir::View, sizes, strides, offset);
WRAPIR_REFLECT(wrapir::ir::BufferArg, buffer, view);
