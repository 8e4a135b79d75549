#pragma once
/// \file
/// The two plain types that multi-kernels share between the IR and the
/// dispatcher: argument slices and shape keys.
///
/// `ir/kernel.hpp` (the IR's multi-kernel lines) and `run/multi_kernel.hpp`
/// (the dispatcher, which stays free of the IR and expression headers) both
/// use them, so they live in this header of standard types only.

#include <cstdint>
#include <vector>

namespace wrapir::ir {

/// A slice `[start, stop)` of a multi-kernel's combined argument list
/// (Python's `slice(start, stop, None)`).
struct ArgSlice {
  std::int64_t start = 0;
  std::int64_t stop = 0;
  friend constexpr bool operator==(ArgSlice, ArgSlice) = default;
};

/// The shapes of a call or of a size hint a multi-kernel candidate was
/// tuned for: one tuple of dimensions per tensor argument.
using ShapeKey = std::vector<std::vector<std::int64_t>>;

}  // namespace wrapir::ir
