#pragma once
/// \file
/// Layouts: the shape, strides, storage offset, dtype and device of a
/// buffer or view, with sizes and strides as symbolic expressions.
///
/// Semantics (PyTorch's strided model): element `(i_0, ..., i_{n-1})` of a
/// layout lives at storage element `storage_offset + sum(i_k * strides[k])`
/// of an untyped storage of `dtype` elements on `device`. A rank-0 layout
/// (no sizes) holds one element. Sizes and strides are non-negative (torch
/// rejects negative strides); `validate` reports those that are provably not.
///
/// A Layout is a plain aggregate. Its expressions must all belong to one
/// `expr::Context`; the helpers below take the context from the storage
/// offset, which is therefore never null in a valid layout.
///
/// Sizes and strides are `LayoutDims`: up to two expressions held in place
/// (ir/small_vector.hpp), more on the heap. A buffer table holds a layout
/// per buffer; as `std::vector`s, a 1-D or 2-D layout's two allocations
/// cost 64 bytes a buffer, as `LayoutDims` nothing, in the same 24 bytes
/// each (docs/performance.md, "Layouts with their dimensions in place").

#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/small_vector.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::ir {

/// Row-major strides for `sizes`: the last stride is 1 and
/// `strides[i] = sizes[i+1] * ... * sizes[n-1]`, built with the canonical
/// constructors, so `[s0, s1, 4]` gives `[4*s1, 4, 1]`. Throws expr::Error
/// for a null size or sizes from another context than `ctx`.
[[nodiscard]] inline std::vector<expr::Expr> contiguous_strides(expr::Context& ctx,
                                                                std::span<const expr::Expr> sizes) {
  std::vector<expr::Expr> strides(sizes.size());
  expr::Expr running = ctx.integer(1);
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (!sizes[i]) throw expr::Error("contiguous_strides: size " + std::to_string(i) + " is a null expression");
    if (&sizes[i].context() != &ctx)
      throw expr::Error("contiguous_strides: size " + std::to_string(i) + " belongs to another context");
    strides[i] = running;
    running = expr::mul(running, sizes[i]);
  }
  return strides;
}

/// How many sizes (and strides) a layout holds in place: 2 serves the
/// corpus's layouts (1-D and 2-D, 92% of its buffers) without growing a
/// `Layout` past two `std::vector`s' 48 bytes.
inline constexpr std::size_t layout_dims_in_place = 2;

/// A layout's sizes or strides.
using LayoutDims = SmallVector<expr::Expr, layout_dims_in_place>;

struct Layout {
  LayoutDims sizes;
  LayoutDims strides;
  /// In elements, not bytes.
  expr::Expr storage_offset;
  DType dtype = DType::float32;
  Device device{};

  /// A dense row-major layout at offset 0 (what `empty_strided` allocates).
  [[nodiscard]] static Layout contiguous(expr::Context& ctx, LayoutDims sizes, DType dtype,
                                         Device device) {
    LayoutDims strides = contiguous_strides(ctx, sizes);
    return Layout{std::move(sizes), std::move(strides), ctx.integer(0), dtype, device};
  }

  [[nodiscard]] std::size_t rank() const noexcept { return sizes.size(); }

  /// Structural equality: same expressions (canonical forms compare by
  /// identity), dtype and device.
  friend bool operator==(const Layout&, const Layout&) = default;
};

namespace detail {

inline std::string dim_text(const char* what, std::size_t i) { return std::string(what) + " " + std::to_string(i); }

/// The context of a layout's expressions; throws expr::Error when the layout
/// has none to give (null storage offset), so no helper dereferences null.
inline expr::Context& layout_context(const Layout& l, const char* who) {
  if (!l.storage_offset) throw expr::Error(std::string(who) + ": the layout's storage offset is a null expression");
  return l.storage_offset.context();
}

}  // namespace detail

/// Success, or why `l` is not a well-formed layout: sizes and strides of
/// different rank, a null expression, expressions from more than one
/// context, a size, stride or offset that is provably negative, or an
/// invalid dtype or device.
[[nodiscard]] inline Result<void> validate(const Layout& l) {
  if (l.sizes.size() != l.strides.size())
    return Diagnostic{"layout has " + std::to_string(l.sizes.size()) + " sizes but " +
                      std::to_string(l.strides.size()) + " strides"};
  if (!l.storage_offset) return Diagnostic{"layout storage offset is a null expression"};
  const expr::Context* ctx = &l.storage_offset.context();
  // The description of a dimension is only built for a finding: validate
  // runs on every buffer of every verified or loaded program.
  auto check = [&](expr::Expr e, const char* what, std::optional<std::size_t> dim) -> std::optional<Diagnostic> {
    auto name = [&] { return dim ? detail::dim_text(what, *dim) : std::string(what); };
    if (!e) return Diagnostic{"layout " + name() + " is a null expression"};
    if (&e.context() != ctx) return Diagnostic{"layout " + name() + " belongs to another expression context"};
    if (!e.is(expr::Kind::integer) && !e.is(expr::Kind::symbol) && expr::bounds(e).known_negative())
      return Diagnostic{"layout " + name() + " is negative"};
    if (e.is(expr::Kind::integer) && e.value() < 0) return Diagnostic{"layout " + name() + " is negative"};
    return std::nullopt;
  };
  for (std::size_t i = 0; i < l.sizes.size(); ++i) {
    if (auto d = check(l.sizes[i], "size", i)) return *d;
    if (auto d = check(l.strides[i], "stride", i)) return *d;
  }
  if (auto d = check(l.storage_offset, "storage offset", std::nullopt)) return *d;
  if (!is_valid(l.dtype))
    return Diagnostic{"layout dtype " + std::to_string(static_cast<unsigned>(l.dtype)) + " is not a DType"};
  if (Result<void> device = validate(l.device); !device) return Diagnostic{"layout " + device.error().message};
  return {};
}

/// Number of elements: the product of the sizes (1 for rank 0).
[[nodiscard]] inline expr::Expr numel(const Layout& l) {
  expr::Context& ctx = detail::layout_context(l, "numel");
  if (l.sizes.empty()) return ctx.integer(1);
  return expr::mul(l.sizes);
}

/// Whether the strides are those of a dense row-major tensor, by PyTorch's
/// definition (`is_contiguous_strides_for_shape`): dimensions of size 1 may
/// have any stride, and a layout with a size that is the literal 0 is
/// contiguous. The check is structural: a size counts as 1 or 0 only when
/// it is that literal, and a stride must be the very expression the
/// canonical constructors give for it. The storage offset is not looked at.
/// False for a malformed layout (see `validate`).
[[nodiscard]] inline bool has_contiguous_strides(const Layout& l) {
  if (!validate(l)) return false;
  for (expr::Expr s : l.sizes)
    if (s.is_integer(0)) return true;
  expr::Expr expected = l.storage_offset.context().integer(1);
  for (std::size_t i = l.sizes.size(); i-- > 0;) {
    if (l.sizes[i].is_integer(1)) continue;
    if (l.strides[i] != expected) return false;
    expected = expr::mul(expected, l.sizes[i]);
  }
  return true;
}

/// `has_contiguous_strides` and a storage offset that is the literal 0: the
/// layout is exactly what `empty_strided` would allocate for its sizes
/// (unlike torch's `is_contiguous`, which ignores the offset).
[[nodiscard]] inline bool is_contiguous(const Layout& l) {
  return has_contiguous_strides(l) && l.storage_offset.is_integer(0);
}

/// The number of storage elements the layout needs (Inductor's
/// `compute_required_storage_length`):
/// `storage_offset + 1 + sum((size_i - 1) * stride_i)`, or 0 when the
/// layout has no elements. Inductor returns the plain formula unless it
/// can prove a size is 0; here the result is exact for every binding: the
/// plain formula when every size is provably positive, 0 when a size is the
/// literal 0, and otherwise `Where(Eq(numel, 0), 0, formula)`.
/// Throws expr::Error for a malformed layout (see `validate`).
[[nodiscard]] inline expr::Expr storage_elements(const Layout& l) {
  expr::Context& ctx = detail::layout_context(l, "storage_elements");
  if (l.sizes.size() != l.strides.size())
    throw expr::Error("storage_elements: layout has " + std::to_string(l.sizes.size()) + " sizes but " +
                      std::to_string(l.strides.size()) + " strides");
  std::vector<expr::Expr> terms{l.storage_offset, ctx.integer(1)};
  bool all_positive = true;
  for (std::size_t i = 0; i < l.sizes.size(); ++i) {
    if (!l.sizes[i] || !l.strides[i])
      throw expr::Error("storage_elements: layout size or stride " + std::to_string(i) + " is a null expression");
    if (l.sizes[i].is_integer(0)) return ctx.integer(0);
    if (!expr::bounds(l.sizes[i]).known_positive()) all_positive = false;
    terms.push_back(expr::mul(expr::sub(l.sizes[i], ctx.integer(1)), l.strides[i]));
  }
  expr::Expr formula = expr::add(terms);
  if (all_positive) return formula;
  return expr::where(expr::eq(numel(l), ctx.integer(0)), ctx.integer(0), formula);
}

/// `storage_elements(l) * itemsize(l.dtype)`.
[[nodiscard]] inline expr::Expr storage_bytes(const Layout& l) {
  expr::Expr elements = storage_elements(l);
  return expr::mul(elements, elements.context().integer(itemsize(l.dtype)));
}

}  // namespace wrapir::ir
