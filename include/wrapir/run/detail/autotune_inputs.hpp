#pragma once
/// \file
/// The inputs `run::autotune` (run/autotune.hpp) measures with when the
/// caller gives none: one tensor per tensor input, with the layout its
/// buffer declaration gives at the measured symbol values, on the device
/// it declares; floating-point elements uniform in [-1, 1) from a fixed
/// seed (fp16/bf16 from a few exact small values), integers and booleans
/// zero (so an index input stays in range). Also copies of given tensors,
/// placed on the device the program wants them on.
#include <wrapir/diagnostic.hpp>
#include <wrapir/expr/eval.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/detail/executor_values.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/tensor.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace wrapir::run::autotune_detail {

/// splitmix64: a small, fast, well-mixed generator; fixed so that the same
/// seed gives the same inputs on every machine.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0; }
};

/// Fills every element of `storage` (host memory) for `dtype` (see the
/// file comment).
inline void fill(Storage& storage, ir::DType dtype, SplitMix64& random) {
  const std::int64_t itemsize = ir::itemsize(dtype);
  if (storage.data == nullptr || storage.nbytes <= 0) return;
  std::memset(storage.data, 0, static_cast<std::size_t>(storage.nbytes));
  const std::int64_t count = itemsize > 0 ? storage.nbytes / itemsize : 0;
  // fp16 and bf16 bit patterns of 0, +-0.25, +-0.5, +-1.
  static constexpr std::uint16_t half[] = {0x0000, 0x3400, 0xb400, 0x3800, 0xb800, 0x3c00, 0xbc00};
  static constexpr std::uint16_t bf16[] = {0x0000, 0x3e80, 0xbe80, 0x3f00, 0xbf00, 0x3f80, 0xbf80};
  for (std::int64_t i = 0; i < count; ++i) {
    std::byte* at = storage.data + i * itemsize;
    switch (dtype) {
      case ir::DType::float32: {
        const auto v = static_cast<float>(random.unit());
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case ir::DType::float64: {
        const double v = random.unit();
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case ir::DType::float16: std::memcpy(at, &half[random.next() % 7], 2); break;
      case ir::DType::bfloat16: std::memcpy(at, &bf16[random.next() % 7], 2); break;
      default: return;  // zero
    }
  }
}

/// The value of a layout expression at `at`, or why it has none.
inline std::int64_t value_of(expr::Expr e, const expr::Bindings& at, const std::string& who) {
  if (!e) return 0;
  Result<std::int64_t> v = expr::eval(e, at);
  if (!v)
    wrapir::detail::fail(who + ": " + v.error().message +
                         " (give the symbol's value: AutotuneOptions::symbols, or `wrapir autotune --symbols NAME=VALUE`)");
  return *v;
}

/// A synthesised tensor for input buffer `decl` at `at`, on its device.
/// `budget` is what synthesised inputs may still take, in bytes.
inline Tensor synthesise(const ir::BufferDecl& decl, const expr::Bindings& at, const DeviceBackend* backend,
                         SplitMix64& random, std::int64_t& budget) {
  const std::string who = "input " + ir::quote_for_diagnostic(decl.name);
  std::vector<std::int64_t> sizes, strides;
  for (expr::Expr s : decl.layout.sizes) sizes.push_back(value_of(s, at, who + " size"));
  for (expr::Expr s : decl.layout.strides) strides.push_back(value_of(s, at, who + " stride"));
  const std::int64_t offset = value_of(decl.layout.storage_offset, at, who + " storage offset");
  Result<std::int64_t> bytes = bytes_spanned(sizes, strides, offset, decl.layout.dtype);
  if (!bytes) wrapir::detail::fail(who + ": " + bytes.error().message);
  if (*bytes > budget)
    wrapir::detail::fail(who + " needs " + std::to_string(*bytes) + " bytes, more than the " + std::to_string(budget) +
                         " bytes left for synthesised inputs (AutotuneOptions::max_synthesised_bytes)");
  budget -= *bytes;
  Tensor host = executor_detail::allocate_cpu(sizes, strides, offset, decl.layout.dtype);
  fill(*host.storage, decl.layout.dtype, random);
  if (decl.layout.device.type == ir::DeviceType::cpu) return host;
  Tensor device = executor_detail::allocate_on(backend, decl.layout.device, std::move(sizes), std::move(strides), offset,
                                               decl.layout.dtype);
  if (host.storage->nbytes > 0)
    if (Result<void> r = backend->copy(device.storage->data, device.storage->device, host.storage->data,
                                       host.storage->device, host.storage->nbytes);
        !r)
      wrapir::detail::fail(who + ": copying to the device: " + r.error().message);
  return device;
}

/// A copy of `given` where the program wants input `decl` (a host tensor
/// for a device input goes to the device), so that the measuring run
/// leaves the caller's tensors as they were. The executor checks dtypes,
/// sizes and strides.
inline Tensor place(const Tensor& given, const ir::BufferDecl& decl, const DeviceBackend* backend) {
  Tensor copy = executor_detail::allocate_on(backend, decl.layout.device, given.sizes, given.strides, given.offset, given.dtype);
  executor_detail::copy_tensor(backend, copy, given);
  return copy;
}

}  // namespace wrapir::run::autotune_detail
