#pragma once
/// \file
/// Whether a view stays inside the storage it views: the one rule the
/// verifier, the emitters and the executors share for Reinterpret lines,
/// buffer-argument views and buffers carved from a pool.
///
/// Neither `reinterpret_tensor` nor `alloc_from_pool` checks bounds, so a
/// view that reaches past its storage reads and writes memory it does not
/// own. The rule, in bytes (so that a pool slice, counted in bytes, and a
/// view, counted in elements, compare alike; a Reinterpret never changes
/// its base's dtype — the verifier and the Python emitter refuse one that
/// does):
///
/// - A view's *extent* is the storage its elements reach from its first
///   element's base position: `storage_elements(view)` elements
///   (`storage_offset + 1 + sum((size_i - 1) * stride_i)`, 0 when a size is
///   0) of the view's dtype. Its offset is relative to the start of its
///   base, as `reinterpret_tensor` adds it to the base's own offset.
/// - The *room* of a buffer is what is known to lie from its first element
///   to the end of its storage: for a buffer that owns its storage (or is a
///   graph input of its declared layout) its span, `storage_elements` of
///   its layout at offset 0, of its dtype; for a view, the room of its base
///   less the view's offset.
/// - A view fits when `0 <= offset`, every stride is `>= 0` and
///   `extent <= room(base)`; a buffer carved from a pool fits when
///   `0 <= offset_bytes` and `offset_bytes + extent <= pool size`.
///
/// Each condition is decided with expression bounds (`expr/bounds.hpp`):
/// all provably true, the view `fits`; one provably false, it `exceeds`
/// (the verifier reports it, emitters refuse it); otherwise it is `unknown`
/// and the conditions left open must be checked at run time, before the
/// view is taken (the Python emitter writes a guard that raises; see
/// docs/ir-reference.md). All arithmetic is in checked expressions: an
/// extent whose constants overflow 64 bits cannot fit anywhere and
/// `exceeds`.

#include <wrapir/expr/bounds.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/expr/ops.hpp>
#include <wrapir/expr/print_python.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/layout.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::ir {

enum class ViewFit : std::uint8_t {
  fits,     // every condition holds for every value of the symbols
  exceeds,  // some condition fails for every value of the symbols
  unknown,  // it depends on the symbols' values: check at run time
};

/// `lhs <= rhs` must hold.
struct ExtentCondition {
  expr::Expr lhs;
  expr::Expr rhs;
  friend bool operator==(const ExtentCondition&, const ExtentCondition&) = default;
};

/// The verdict on one view.
struct ViewExtent {
  ViewFit fit = ViewFit::fits;
  /// Bytes the view reaches from the start of what it views (for a pool
  /// slice, from the start of the pool); null when it could not be built.
  expr::Expr needed_bytes{};
  /// Bytes that are there (the base's room, the pool's size).
  expr::Expr available_bytes{};
  /// For `unknown`: the conditions the bounds could not decide, which a
  /// run-time check must test (all must hold).
  std::vector<ExtentCondition> open_conditions{};
  /// For `exceeds`: why, as a clause ("its extent of 48 bytes exceeds the
  /// 32 bytes of its base").
  std::string problem{};
};

namespace detail::extent {

/// `e * itemsize(dtype)`, checked.
[[nodiscard]] inline expr::Expr bytes(expr::Expr elements, DType dtype) {
  return expr::mul(elements, elements.context().integer(static_cast<std::int64_t>(itemsize(dtype))));
}

[[nodiscard]] inline std::string printed(expr::Expr e) {
  try {
    return expr::print_python(e);
  } catch (const expr::Error&) {
    return "<an expression too large to print>";
  }
}

/// Decides `lhs <= rhs` by the bounds of `rhs - lhs`; adds it to `out`'s
/// open conditions when undecided; returns false when it provably fails.
[[nodiscard]] inline bool decide(ViewExtent& out, expr::Expr lhs, expr::Expr rhs) {
  const expr::Interval room = expr::bounds(expr::sub(rhs, lhs));
  if (room.known_nonnegative()) return true;
  if (room.known_negative()) return false;
  out.open_conditions.push_back(ExtentCondition{lhs, rhs});
  return true;
}

/// The verdict once every condition was decided.
inline void finish(ViewExtent& out) {
  if (out.fit == ViewFit::exceeds) {
    out.open_conditions.clear();
    return;
  }
  out.fit = out.open_conditions.empty() ? ViewFit::fits : ViewFit::unknown;
}

[[nodiscard]] inline ViewExtent overflowed(const expr::Error& e) {
  ViewExtent out;
  out.fit = ViewFit::exceeds;
  out.problem = std::string("its extent cannot be computed: ") + e.what();
  return out;
}

}  // namespace detail::extent

/// The room of a buffer that owns its storage: its span from its first
/// element, in bytes. Throws expr::Error for a malformed layout.
[[nodiscard]] inline expr::Expr room_bytes(const Layout& l) {
  Layout from_first = l;
  from_first.storage_offset = l.storage_offset.context().integer(0);
  return detail::extent::bytes(storage_elements(from_first), l.dtype);
}

namespace detail::extent {

/// Records in `out` a storage offset or a used stride (of a dimension whose
/// size is not 1) that may be negative: `storage_elements` then
/// under-counts how far the layout reaches, so no extent bound is sound.
inline void require_forward(ViewExtent& out, std::span<const expr::Expr> sizes, std::span<const expr::Expr> strides,
                            expr::Expr offset) {
  const expr::Expr zero = offset.context().integer(0);
  if (!decide(out, zero, offset)) {
    out.fit = ViewFit::exceeds;
    out.problem = "its storage offset " + printed(offset) + " is negative";
  }
  for (std::size_t i = 0; i < strides.size() && out.fit != ViewFit::exceeds; ++i) {
    if (sizes[i].is_integer(1)) continue;  // the stride of a size-1 dimension is never used
    if (!decide(out, zero, strides[i])) {
      out.fit = ViewFit::exceeds;
      out.problem = "its stride " + std::to_string(i) + " (" + printed(strides[i]) + ") is negative";
    }
  }
}

}  // namespace detail::extent

/// The room of view `v` whose base has `base_room` bytes of room.
[[nodiscard]] inline expr::Expr view_room_bytes(const Layout& v, expr::Expr base_room) {
  return expr::sub(base_room, detail::extent::bytes(v.storage_offset, v.dtype));
}

/// Whether a view with `sizes`, `strides` and `offset` (in elements of
/// `dtype`) fits in `base_room` bytes. Never throws for a well-formed
/// layout (`validate`) of the context `base_room` belongs to.
[[nodiscard]] inline ViewExtent check_view_extent(std::span<const expr::Expr> sizes,
                                                  std::span<const expr::Expr> strides, expr::Expr offset,
                                                  DType dtype, expr::Expr base_room) {
  try {
    using detail::extent::printed;
    ViewExtent out;
    Layout l{std::vector<expr::Expr>(sizes.begin(), sizes.end()), std::vector<expr::Expr>(strides.begin(), strides.end()),
             offset, dtype, Device{}};
    out.needed_bytes = detail::extent::bytes(storage_elements(l), dtype);
    out.available_bytes = base_room;
    detail::extent::require_forward(out, sizes, strides, offset);
    if (out.fit != ViewFit::exceeds && !detail::extent::decide(out, out.needed_bytes, base_room)) {
      out.fit = ViewFit::exceeds;
      out.problem = "its extent of " + printed(out.needed_bytes) + " bytes exceeds the " + printed(base_room) +
                    " bytes of storage it views";
    }
    detail::extent::finish(out);
    return out;
  } catch (const expr::Error& e) {
    return detail::extent::overflowed(e);
  }
}

/// `check_view_extent` for a view declared as a layout.
[[nodiscard]] inline ViewExtent check_view_extent(const Layout& view, expr::Expr base_room) {
  return check_view_extent(view.sizes, view.strides, view.storage_offset, view.dtype, base_room);
}

/// Whether `buffer`, carved from a pool of `pool_bytes` bytes at
/// `offset_bytes` (its layout's storage offset moving it further, as
/// `alloc_from_pool` does), fits in the pool.
[[nodiscard]] inline ViewExtent check_pool_slice(const Layout& buffer, expr::Expr offset_bytes,
                                                 expr::Expr pool_bytes) {
  try {
    using detail::extent::printed;
    ViewExtent out;
    const expr::Expr zero = pool_bytes.context().integer(0);
    const expr::Expr extent = storage_elements(buffer);
    out.needed_bytes = extent.is_integer(0) ? zero : expr::add(offset_bytes, detail::extent::bytes(extent, buffer.dtype));
    out.available_bytes = pool_bytes;
    if (!detail::extent::decide(out, zero, offset_bytes)) {
      out.fit = ViewFit::exceeds;
      out.problem = "its byte offset " + printed(offset_bytes) + " is negative";
    } else {
      detail::extent::require_forward(out, buffer.sizes, buffer.strides, buffer.storage_offset);
    }
    if (out.fit != ViewFit::exceeds && !detail::extent::decide(out, out.needed_bytes, pool_bytes)) {
      out.fit = ViewFit::exceeds;
      out.problem = "it reaches " + printed(out.needed_bytes) + " bytes into a pool of " + printed(pool_bytes) +
                    " bytes";
    }
    detail::extent::finish(out);
    return out;
  } catch (const expr::Error& e) {
    return detail::extent::overflowed(e);
  }
}

}  // namespace wrapir::ir
