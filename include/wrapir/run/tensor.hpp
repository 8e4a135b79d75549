#pragma once
/// \file
/// Tensors at run time: bytes on a device (`Storage`) and a strided view of
/// them (`Tensor`), as eager PyTorch has them, without PyTorch.
///
/// The executor (`run/executor.hpp`), the CPU kernel loader and the extern
/// registry (`run/extern.hpp`) all pass these. A `Tensor` is a value: copying
/// one copies its layout and shares its storage, as `view` does in torch, so
/// that views returned by a program alias their bases as in eager.
///
/// Offsets and strides are in elements of the tensor's dtype; the storage's
/// size is in bytes. Every layout a tensor is given is checked against its
/// storage (`fits_in`), so no view reaches past its bytes.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/device.hpp>
#include <wrapir/ir/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wrapir::run {

/// Bytes on one device. `owner` keeps them alive (a CPU allocation, an
/// arena, a caching allocator's block, a caller's buffer); the storage never
/// frees `data` itself.
struct Storage {
  std::byte* data = nullptr;
  std::int64_t nbytes = 0;
  ir::Device device{};
  std::shared_ptr<void> owner{};
};

/// A strided view of a storage.
struct Tensor {
  std::shared_ptr<Storage> storage{};
  ir::DType dtype = ir::DType::float32;
  std::vector<std::int64_t> sizes{};
  std::vector<std::int64_t> strides{};
  std::int64_t offset = 0;  // elements of `dtype` from the storage's start

  /// The address of element 0 (null for a tensor without storage).
  [[nodiscard]] void* data() const noexcept {
    if (!storage || storage->data == nullptr) return nullptr;
    return storage->data + offset * ir::itemsize(dtype);
  }
  [[nodiscard]] ir::Device device() const noexcept { return storage ? storage->device : ir::Device{}; }
  [[nodiscard]] std::size_t dim() const noexcept { return sizes.size(); }
  /// The number of elements; layouts are checked on construction, so this
  /// cannot overflow for a tensor made by this header.
  [[nodiscard]] std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (const std::int64_t s : sizes) n *= s;
    return n;
  }
  /// Row-major and dense: what a kernel that indexes `i` as the flat
  /// element number expects.
  [[nodiscard]] bool is_contiguous() const noexcept {
    std::int64_t expected = 1;
    for (std::size_t i = sizes.size(); i-- > 0;) {
      if (sizes[i] == 1) continue;
      if (strides[i] != expected) return false;
      expected *= sizes[i];
    }
    return true;
  }
};

/// Row-major strides of `sizes` (`[4, 5, 6]` -> `[30, 6, 1]`), or an error
/// when the element count overflows.
[[nodiscard]] inline Result<std::vector<std::int64_t>> contiguous_strides(std::span<const std::int64_t> sizes) {
  std::vector<std::int64_t> strides(sizes.size(), 1);
  std::int64_t running = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] < 0) return Diagnostic{"negative size " + std::to_string(sizes[i]) + " in dimension " + std::to_string(i)};
    strides[i] = running;
    if (sizes[i] != 0 && __builtin_mul_overflow(running, sizes[i], &running))
      return Diagnostic{"the element count of the layout overflows 64 bits"};
  }
  return strides;
}

/// The bytes a strided layout reaches: `(offset + largest index + 1) *
/// itemsize`, or 0 for an empty tensor. Negative sizes, strides or offsets
/// and overflow are errors.
[[nodiscard]] inline Result<std::int64_t> bytes_spanned(std::span<const std::int64_t> sizes,
                                                        std::span<const std::int64_t> strides, std::int64_t offset,
                                                        ir::DType dtype) {
  if (sizes.size() != strides.size())
    return Diagnostic{std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) + " strides"};
  if (offset < 0) return Diagnostic{"negative storage offset " + std::to_string(offset)};
  std::int64_t last = offset;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) return Diagnostic{"negative size " + std::to_string(sizes[i]) + " in dimension " + std::to_string(i)};
    if (sizes[i] == 0) return std::int64_t{0};
    if (strides[i] < 0)
      return Diagnostic{"negative stride " + std::to_string(strides[i]) + " in dimension " + std::to_string(i)};
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &reach) || __builtin_add_overflow(last, reach, &last))
      return Diagnostic{"the layout's extent overflows 64 bits"};
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, ir::itemsize(dtype), &bytes))
    return Diagnostic{"the layout's extent in bytes overflows 64 bits"};
  return bytes;
}

/// A view of `base`'s storage with another layout (`reinterpret_tensor`,
/// `as_strided`): refused when it reaches past the storage.
[[nodiscard]] inline Result<Tensor> as_strided(const Tensor& base, std::vector<std::int64_t> sizes,
                                               std::vector<std::int64_t> strides, std::int64_t offset,
                                               std::optional<ir::DType> dtype = std::nullopt) {
  const ir::DType d = dtype.value_or(base.dtype);
  auto bytes = bytes_spanned(sizes, strides, offset, d);
  if (!bytes) return std::move(bytes).error();
  const std::int64_t available = base.storage ? base.storage->nbytes : 0;
  if (*bytes > available)
    return Diagnostic{"the view reaches " + std::to_string(*bytes) + " bytes but its storage has " +
                      std::to_string(available)};
  return Tensor{base.storage, d, std::move(sizes), std::move(strides), offset};
}

/// A new CPU tensor with the given layout, uninitialised, its storage
/// 64-byte aligned (what vectorised C++ kernels and BLAS prefer) and sized
/// for exactly the elements the layout reaches.
[[nodiscard]] inline Result<Tensor> empty_strided_cpu(std::vector<std::int64_t> sizes,
                                                      std::vector<std::int64_t> strides, ir::DType dtype) {
  auto bytes = bytes_spanned(sizes, strides, 0, dtype);
  if (!bytes) return std::move(bytes).error();
  constexpr std::size_t alignment = 64;
  const auto rounded = (static_cast<std::size_t>(*bytes) + alignment - 1) / alignment * alignment;
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(alignment, rounded);
  if (rounded != 0 && p == nullptr)
    return Diagnostic{"cannot allocate " + std::to_string(*bytes) + " bytes on the CPU"};
  auto storage = std::make_shared<Storage>();
  storage->data = static_cast<std::byte*>(p);
  storage->nbytes = *bytes;
  storage->device = ir::Device{ir::DeviceType::cpu, std::nullopt};
  storage->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return Tensor{std::move(storage), dtype, std::move(sizes), std::move(strides), 0};
}

/// A new contiguous CPU tensor.
[[nodiscard]] inline Result<Tensor> empty_cpu(std::vector<std::int64_t> sizes, ir::DType dtype) {
  auto strides = contiguous_strides(sizes);
  if (!strides) return std::move(strides).error();
  return empty_strided_cpu(std::move(sizes), *std::move(strides), dtype);
}

}  // namespace wrapir::run
