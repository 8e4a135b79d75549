#pragma once
/// \file
/// `check_pool_slice`'s verdicts remembered by what they depend on, for a
/// consumer that checks every pool slice of a program (the verifier, the
/// Python emitter).
///
/// A planned program carves each of its buffers from an arena, and the
/// check builds and bounds symbolic sums for each (`offset + extent` and
/// `pool size - offset - extent`): on a 1M-line chain program that was two
/// thirds of emitting it. The verdict depends only on the buffer's layout
/// (its sizes, strides, storage offset and dtype), the byte offset and the
/// pool's size. Expressions are hash-consed, so equal ones are the same
/// node and a key compares pointers; planners give many buffers the same
/// layout and few distinct offsets, so most slices are answered from the
/// table. The table holds at most `capacity` verdicts and starts over when
/// full, so a program whose slices are all different costs a bounded
/// amount of memory and the check's own time, no more.

#include <wrapir/detail/hash.hpp>
#include <wrapir/expr/expr.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/layout.hpp>
#include <wrapir/ir/view_extent.hpp>

#include <algorithm>
#include <cstddef>
#include <unordered_map>
#include <vector>

namespace wrapir::ir {

class PoolSliceVerdicts {
 public:
  /// The most verdicts kept at once.
  static constexpr std::size_t capacity = 4096;

  /// `check_pool_slice(buffer, offset_bytes, pool_bytes)`, from the table
  /// when the same question was asked before. The reference is valid until
  /// the next call.
  [[nodiscard]] const ViewExtent& check(const Layout& buffer, expr::Expr offset_bytes, expr::Expr pool_bytes) {
    const std::size_t h = key_hash(buffer, offset_bytes, pool_bytes);
    const auto [first, last] = table_.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (it->second.same_question(buffer, offset_bytes, pool_bytes)) return it->second.verdict;
    if (table_.size() >= capacity) table_.clear();
    Entry e{buffer.sizes, buffer.strides, buffer.storage_offset, buffer.dtype, offset_bytes, pool_bytes,
            check_pool_slice(buffer, offset_bytes, pool_bytes)};
    return table_.emplace(h, std::move(e))->second.verdict;
  }

  /// Verdicts held now.
  [[nodiscard]] std::size_t size() const noexcept { return table_.size(); }

 private:
  struct Entry {
    LayoutDims sizes;
    LayoutDims strides;
    expr::Expr storage_offset;
    DType dtype;
    expr::Expr offset_bytes;
    expr::Expr pool_bytes;
    ViewExtent verdict;

    [[nodiscard]] bool same_question(const Layout& l, expr::Expr offset, expr::Expr pool) const noexcept {
      return offset == offset_bytes && pool == pool_bytes && l.storage_offset == storage_offset &&
             l.dtype == dtype && std::ranges::equal(l.sizes, sizes) && std::ranges::equal(l.strides, strides);
    }
  };

  [[nodiscard]] static std::size_t key_hash(const Layout& l, expr::Expr offset, expr::Expr pool) noexcept {
    using wrapir::detail::hash_mix;
    std::size_t h = hash_mix(offset.hash(), pool.hash());
    h = hash_mix(h, l.storage_offset.hash());
    h = hash_mix(h, static_cast<std::size_t>(l.dtype));
    h = hash_mix(h, l.sizes.size());
    for (const expr::Expr& e : l.sizes) h = hash_mix(h, e.hash());
    for (const expr::Expr& e : l.strides) h = hash_mix(h, e.hash());
    return h;
  }

  std::unordered_multimap<std::size_t, Entry> table_;
};

}  // namespace wrapir::ir
