#pragma once
/// \file
/// Value helpers of the CPU executor: scalars in a parameter's dtype, one
/// element read from a tensor, strided copies, key paths into results.
/// Every failure throws `wrapir::detail::Failure`; the executor adds the line.
#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/ir/kernel.hpp>
#include <wrapir/ir/names.hpp>
#include <wrapir/ir/symbol.hpp>
#include <wrapir/run/executor_backend.hpp>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace wrapir::run::executor_detail {

using wrapir::detail::fail;

/// One packed kernel argument: 8 bytes hold any scalar or a pointer.
struct alignas(8) ArgSlot {
  std::byte bytes[8];
};

template <class T>
void store(ArgSlot& slot, T v) noexcept {
  static_assert(sizeof(T) <= sizeof(ArgSlot));
  std::memcpy(slot.bytes, &v, sizeof v);
}

/// The text of a diagnostic's subject: a string, or a callable that makes
/// it (built only when a diagnostic is).
template <class What>
std::string text_of(const What& what) {
  if constexpr (std::is_invocable_v<const What&>) return std::string(what());
  else return std::string(what);
}

template <class T, class What>
T checked_integer(std::int64_t v, const What& what) {
  if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
      (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
    [[unlikely]]
    fail(text_of(what) + " " + std::to_string(v) + " does not fit the parameter's type");
  return static_cast<T>(v);
}

/// Writes integer `v` as a scalar of `dtype` (range-checked). `what` names
/// the value in a diagnostic: a string, or a callable returning one.
template <class What>
void store_integer(ArgSlot& slot, std::int64_t v, ir::DType dtype, const What& what) {
  switch (dtype) {
    case ir::DType::bool_: store(slot, v != 0); return;
    case ir::DType::uint8: store(slot, checked_integer<std::uint8_t>(v, what)); return;
    case ir::DType::int8: store(slot, checked_integer<std::int8_t>(v, what)); return;
    case ir::DType::int16: store(slot, checked_integer<std::int16_t>(v, what)); return;
    case ir::DType::int32: store(slot, checked_integer<std::int32_t>(v, what)); return;
    case ir::DType::int64: store(slot, v); return;
    case ir::DType::uint16: store(slot, checked_integer<std::uint16_t>(v, what)); return;
    case ir::DType::uint32: store(slot, checked_integer<std::uint32_t>(v, what)); return;
    case ir::DType::uint64:
      if (v < 0) fail(text_of(what) + " " + std::to_string(v) + " does not fit the parameter's type");
      store(slot, static_cast<std::uint64_t>(v));
      return;
    case ir::DType::float32: store(slot, static_cast<float>(v)); return;
    case ir::DType::float64: store(slot, static_cast<double>(v)); return;
    default: fail("a scalar parameter of type " + std::string(ir::name(dtype)) + " is not supported on the CPU");
  }
}

/// Writes float `v` as a scalar of `dtype` (floating types only).
inline void store_float(ArgSlot& slot, double v, ir::DType dtype) {
  switch (dtype) {
    case ir::DType::float32: store(slot, static_cast<float>(v)); return;
    case ir::DType::float64: store(slot, v); return;
    default:
      fail("a float argument cannot be passed as a " + std::string(ir::name(dtype)) + " parameter");
  }
}

/// The one element of a one-element tensor, as a number.
struct Scalar {
  bool floating = false;
  std::int64_t integer = 0;
  double real = 0;
  [[nodiscard]] bool truth() const noexcept { return floating ? real != 0 : integer != 0; }
};

template <class T>
T load_at(const Tensor& t) noexcept {
  T v{};
  std::memcpy(&v, t.data(), sizeof v);
  return v;
}

inline Scalar read_scalar(const Tensor& t, const char* what) {
  // Device memory is never dereferenced here: the frame copies one-element
  // device tensors to the host first (`host_scalars`).
  if (t.device().type != ir::DeviceType::cpu)
    fail(std::string(what) + " is on " + ir::to_string(t.device()) + ", not on the host");
  if (t.numel() != 1) fail(std::string(what) + " must hold one element, it has " + std::to_string(t.numel()));
  if (t.data() == nullptr) fail(std::string(what) + " has no storage");
  switch (t.dtype) {
    case ir::DType::bool_: return {false, load_at<std::uint8_t>(t) != 0 ? 1 : 0, 0};
    case ir::DType::uint8: return {false, load_at<std::uint8_t>(t), 0};
    case ir::DType::int8: return {false, load_at<std::int8_t>(t), 0};
    case ir::DType::int16: return {false, load_at<std::int16_t>(t), 0};
    case ir::DType::int32: return {false, load_at<std::int32_t>(t), 0};
    case ir::DType::int64: return {false, load_at<std::int64_t>(t), 0};
    case ir::DType::uint16: return {false, load_at<std::uint16_t>(t), 0};
    case ir::DType::uint32: return {false, load_at<std::uint32_t>(t), 0};
    case ir::DType::uint64: {
      const auto v = load_at<std::uint64_t>(t);
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(std::string(what) + " holds " + std::to_string(v) + ", more than int64 holds");
      return {false, static_cast<std::int64_t>(v), 0};
    }
    case ir::DType::float32: return {true, 0, load_at<float>(t)};
    case ir::DType::float64: return {true, 0, load_at<double>(t)};
    default: fail(std::string(what) + " has dtype " + std::string(ir::name(t.dtype)) + ", which the CPU executor cannot read");
  }
}

/// `dst.copy_(src)` for equal dtypes and sizes, any strides (element by
/// element; overlapping storages copy as if through a temporary only when
/// they do not overlap, as torch's copy_ requires).
inline void copy_elements(const Tensor& dst, const Tensor& src) {
  if (dst.device().type != ir::DeviceType::cpu || src.device().type != ir::DeviceType::cpu)
    fail("an element-wise copy on the host needs both tensors on the CPU");
  if (dst.dtype != src.dtype)
    fail("copying " + std::string(ir::name(src.dtype)) + " into " + std::string(ir::name(dst.dtype)) +
         " is not supported on the CPU");
  if (dst.sizes != src.sizes) fail("the copy's source and destination have different sizes");
  const std::int64_t n = dst.numel();
  if (n == 0) return;
  const auto item = static_cast<std::size_t>(ir::itemsize(dst.dtype));
  auto* d = static_cast<std::byte*>(dst.data());
  const auto* s = static_cast<const std::byte*>(src.data());
  if (d == nullptr || s == nullptr) fail("the copy's source or destination has no storage");
  if (dst.is_contiguous() && src.is_contiguous()) {
    std::memmove(d, s, static_cast<std::size_t>(n) * item);
    return;
  }
  const std::size_t rank = dst.sizes.size();
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t od = 0, os = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      od += index[k] * dst.strides[k];
      os += index[k] * src.strides[k];
    }
    std::memcpy(d + od * static_cast<std::int64_t>(item), s + os * static_cast<std::int64_t>(item), item);
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < dst.sizes[k]) break;
      index[k] = 0;
    }
  }
}

/// A new CPU tensor with `sizes`, `strides` and storage offset `offset`
/// (elements), its storage reaching exactly the layout's extent.
inline Tensor allocate_cpu(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t offset,
                           ir::DType dtype) {
  Result<std::int64_t> bytes = bytes_spanned(sizes, strides, offset, dtype);
  if (!bytes) fail(bytes.error().message);
  const std::int64_t item = ir::itemsize(dtype);
  Result<Tensor> t = empty_strided_cpu({*bytes / (item == 0 ? 1 : item)}, {1}, dtype);
  if (!t) fail(t.error().message);
  t->sizes = std::move(sizes);
  t->strides = std::move(strides);
  t->offset = offset;
  return *std::move(t);
}

/// A new tensor on `device` (the CPU, or the backend's device) with the
/// layout, its storage reaching exactly the layout's extent.
inline Tensor allocate_on(const DeviceBackend* backend, const ir::Device& device, std::vector<std::int64_t> sizes,
                          std::vector<std::int64_t> strides, std::int64_t offset, ir::DType dtype) {
  if (device.type == ir::DeviceType::cpu) return allocate_cpu(std::move(sizes), std::move(strides), offset, dtype);
  if (backend == nullptr || backend->device_type() != device.type)
    fail("no backend for " + ir::to_string(device) + " (ExecutorOptions::device)");
  Result<std::int64_t> bytes = bytes_spanned(sizes, strides, offset, dtype);
  if (!bytes) fail(bytes.error().message);
  Result<std::shared_ptr<Storage>> storage = backend->allocate(device, *bytes);
  if (!storage) fail(storage.error().message);
  return Tensor{*std::move(storage), dtype, std::move(sizes), std::move(strides), offset};
}

/// The bytes of `t`'s storage from its first element to the end of its
/// layout: [first, first + count).
struct ByteSpan {
  std::byte* first = nullptr;
  std::int64_t count = 0;
};
inline ByteSpan layout_bytes(const Tensor& t) {
  Result<std::int64_t> end = bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
  if (!end) fail(end.error().message);
  const std::int64_t start = t.offset * ir::itemsize(t.dtype);
  if (*end == 0 || t.storage == nullptr || t.storage->data == nullptr) return {};
  return {t.storage->data + start, *end - start};
}

/// `dst.copy_(src)` across devices: equal dtypes and sizes, any strides.
/// Dense same-layout copies are one backend copy; others go through the
/// host (copy both spans out, copy element-wise, copy the destination back).
inline void copy_tensor(const DeviceBackend* backend, const Tensor& dst, const Tensor& src) {
  const bool dst_host = dst.device().type == ir::DeviceType::cpu, src_host = src.device().type == ir::DeviceType::cpu;
  if (dst_host && src_host) return copy_elements(dst, src);
  if (backend == nullptr) fail("a copy between " + ir::to_string(src.device()) + " and " + ir::to_string(dst.device()) +
                               " needs a device backend (ExecutorOptions::device)");
  if (dst.dtype != src.dtype)
    fail("copying " + std::string(ir::name(src.dtype)) + " into " + std::string(ir::name(dst.dtype)) +
         " is not supported");
  if (dst.sizes != src.sizes) fail("the copy's source and destination have different sizes");
  if (dst.numel() == 0) return;
  auto check = [](Result<void> r) {
    if (!r) fail(r.error().message);
  };
  const ByteSpan d = layout_bytes(dst), s = layout_bytes(src);
  if (dst.is_contiguous() && src.is_contiguous()) {
    check(backend->copy(d.first, dst.device(), s.first, src.device(), dst.numel() * ir::itemsize(dst.dtype)));
    return;
  }
  auto staged = [&](const Tensor& t, const ByteSpan& span) {
    const std::int64_t item = ir::itemsize(t.dtype);
    Tensor host = allocate_cpu({(span.count + item - 1) / item}, {1}, 0, t.dtype);
    check(backend->copy(host.storage->data, host.device(), span.first, t.device(), span.count));
    host.sizes = t.sizes;
    host.strides = t.strides;
    host.offset = 0;
    return host;
  };
  const Tensor host_src = src_host ? src : staged(src, s);
  const Tensor host_dst = dst_host ? dst : staged(dst, d);
  copy_elements(host_dst, host_src);
  if (!dst_host) check(backend->copy(d.first, dst.device(), host_dst.storage->data, host_dst.device(), d.count));
}

/// `v` with every one-element device tensor in it copied to the host, so
/// that key paths can read its value (an `item()`, a predicate).
inline Value host_scalars(const DeviceBackend* backend, const Value& v) {
  if (const Tensor* t = v.get_if<Tensor>()) {
    if (t->device().type == ir::DeviceType::cpu || t->numel() != 1) return v;
    Tensor host = allocate_cpu(std::vector<std::int64_t>(t->sizes.size(), 1),
                               std::vector<std::int64_t>(t->sizes.size(), 1), 0, t->dtype);
    copy_tensor(backend, host, *t);
    return Value{std::move(host)};
  }
  if (const ValueList* l = v.get_if<ValueList>()) {
    ValueList out;
    for (const Value& x : l->items) out.items.push_back(host_scalars(backend, x));
    return Value{std::move(out)};
  }
  return v;
}

/// Follows `path` from `v`: index steps into lists; size, stride and
/// storage_offset steps of a tensor end the path with an integer.
inline Value follow_path(const Value& v, const ir::KeyPath& path, const char* what) {
  const Value* at = &v;
  Value integer;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const ir::KeyStep& step = path[i];
    const std::string where = std::string(what) + ", key step " + std::to_string(i) + " (" +
                              std::string(ir::key_step_kind_name(step.kind)) + ")";
    switch (step.kind) {
      case ir::KeyStepKind::index: {
        const ValueList* list = at->get_if<ValueList>();
        if (!list) fail(where + ": not a list or tuple");
        if (step.value < 0 || static_cast<std::size_t>(step.value) >= list->items.size())
          fail(where + ": index " + std::to_string(step.value) + " is out of range for " +
               std::to_string(list->items.size()) + " elements");
        at = &list->items[static_cast<std::size_t>(step.value)];
        break;
      }
      case ir::KeyStepKind::key: fail(where + ": dict results are not supported by the CPU executor");
      case ir::KeyStepKind::size:
      case ir::KeyStepKind::stride:
      case ir::KeyStepKind::storage_offset: {
        const Tensor* t = at->get_if<Tensor>();
        if (!t) fail(where + ": not a tensor");
        if (step.kind == ir::KeyStepKind::storage_offset) {
          integer.value = t->offset;
        } else {
          if (step.value < 0 || static_cast<std::size_t>(step.value) >= t->dim())
            fail(where + ": dimension " + std::to_string(step.value) + " of a " + std::to_string(t->dim()) +
                 "-dimensional tensor");
          const auto d = static_cast<std::size_t>(step.value);
          integer.value = step.kind == ir::KeyStepKind::size ? t->sizes[d] : t->strides[d];
        }
        at = &integer;
        break;
      }
      case ir::KeyStepKind::convert_to_int:
      case ir::KeyStepKind::divide_by: {
        std::int64_t n = 0;
        if (const Tensor* t = at->get_if<Tensor>()) {
          const Scalar s = read_scalar(*t, where.c_str());
          if (s.floating) {
            if (!(std::isfinite(s.real) && s.real == std::floor(s.real) && std::fabs(s.real) < 9.2e18))
              fail(where + ": " + std::to_string(s.real) + " is not an integer");
            n = static_cast<std::int64_t>(s.real);
          } else {
            n = s.integer;
          }
        } else if (const std::int64_t* p = at->get_if<std::int64_t>()) {
          n = *p;
        } else if (const bool* b = at->get_if<bool>()) {
          n = *b ? 1 : 0;
        } else {
          fail(where + ": not a number");
        }
        if (step.kind == ir::KeyStepKind::convert_to_int) {
          integer.value = std::int64_t{n != 0 ? 1 : 0};
        } else {
          if (step.value <= 0) fail(where + ": divisor " + std::to_string(step.value) + " is not positive");
          if (n % step.value != 0)
            fail(where + ": " + std::to_string(n) + " is not divisible by " + std::to_string(step.value));
          integer.value = n / step.value;
        }
        at = &integer;
        break;
      }
    }
  }
  return *at;
}

/// The integer a value holds after a key path (a scalar tensor's element
/// included), for symbol definitions.
inline std::int64_t integer_of(const Value& v, const char* what) {
  if (const std::int64_t* p = v.get_if<std::int64_t>()) return *p;
  if (const bool* b = v.get_if<bool>()) return *b ? 1 : 0;
  if (const Tensor* t = v.get_if<Tensor>()) {
    const Scalar s = read_scalar(*t, what);
    if (s.floating) fail(std::string(what) + " is a floating-point value, not an integer");
    return s.integer;
  }
  fail(std::string(what) + " is not an integer");
}

}  // namespace wrapir::run::executor_detail
