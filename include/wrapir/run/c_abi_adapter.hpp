#pragma once
/// \file
/// wrapir's run-time values through the C interface of wrapir/run/c_abi.h:
/// `CExternTable` serves an `ExternRegistry` (the CPU backend's reference
/// externs, the CUDA backend's cuBLAS ones, a user's own) as the `wrapir_extern_table` a program emitted by
/// `emit::cpp` calls, and `borrow` / `adopt` convert tensors for a host that
/// runs such a program.
///
/// ```
/// auto registry = std::make_shared<wrapir::run::ExternRegistry>();
/// (void)wrapir::run::cpu::register_reference_externs(*registry);
/// wrapir::run::c_abi::CExternTable externs(registry);
/// wrapir_extern_table table = externs.table();
/// char message[1024];
/// int rc = wrapir_model_run(&table, inputs, n, outputs, m, nullptr, message, sizeof message);
/// ```
///
/// A `CExternTable` keeps the externs it resolved; one table may serve many
/// runs, one at a time (lookups append to it). Results it hands back own
/// what they point at (a `run::Storage`) until the program releases them.
/// Every failure of an extern becomes a non-zero return and a message;
/// nothing throws across the C boundary.

#include <wrapir/diagnostic.hpp>
#include <wrapir/ir/dtype.hpp>
#include <wrapir/run/c_abi.h>
#include <wrapir/run/extern.hpp>
#include <wrapir/run/tensor.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace wrapir::run::c_abi {

static_assert(static_cast<int>(ir::DType::bool_) == WRAPIR_DTYPE_BOOL && static_cast<int>(ir::DType::int64) == WRAPIR_DTYPE_INT64 &&
                  static_cast<int>(ir::DType::bfloat16) == WRAPIR_DTYPE_BFLOAT16 &&
                  static_cast<int>(ir::DType::float32) == WRAPIR_DTYPE_FLOAT32 &&
                  static_cast<int>(ir::DType::float64) == WRAPIR_DTYPE_FLOAT64 &&
                  static_cast<int>(ir::DType::float4_e2m1fn_x2) == WRAPIR_DTYPE_FLOAT4_E2M1FN_X2 &&
                  ir::dtype_count == 22,
              "c_abi.h's dtype numbers must follow wrapir's DType order");

/// Writes `text` (cut to fit, NUL-terminated) into a caller's buffer.
inline void write_message(std::string_view text, char* message, std::size_t size) noexcept {
  if (message == nullptr || size == 0) return;
  const std::size_t n = std::min(text.size(), size - 1);
  std::memcpy(message, text.data(), n);
  message[n] = '\0';
}

/// A C tensor describing `t` (borrowed: valid while `t`'s storage is).
[[nodiscard]] inline Result<wrapir_tensor> describe(const Tensor& t) {
  if (t.dim() > WRAPIR_MAX_DIMS)
    return Diagnostic{"a tensor of " + std::to_string(t.dim()) + " dimensions exceeds WRAPIR_MAX_DIMS"};
  wrapir_tensor out{};
  out.data = t.data();
  out.storage = t.storage ? t.storage->data : nullptr;
  out.storage_nbytes = t.storage ? t.storage->nbytes : 0;
  out.dtype = static_cast<std::int32_t>(t.dtype);
  out.ndim = static_cast<std::int32_t>(t.dim());
  for (std::size_t i = 0; i < t.dim(); ++i) {
    out.sizes[i] = t.sizes[i];
    out.strides[i] = t.strides[i];
  }
  return out;
}

/// Where a C value's tensor lives (c_abi.h: `device_type` of a tensor
/// value). wrapir's CUDA backend runs on one device: CUDA tensors are on
/// device 0.
[[nodiscard]] inline Result<ir::Device> device_of(std::int32_t device_type) {
  if (device_type == WRAPIR_DEVICE_CPU) return ir::Device{ir::DeviceType::cpu, std::nullopt};
  if (device_type == WRAPIR_DEVICE_CUDA) return ir::Device{ir::DeviceType::cuda, 0};
  return Diagnostic{"a tensor is on the unknown device type " + std::to_string(device_type)};
}

/// The wrapir_device_type of a tensor's storage.
[[nodiscard]] inline std::int32_t device_type_of(const Tensor& t) noexcept {
  return t.device().type == ir::DeviceType::cuda ? WRAPIR_DEVICE_CUDA : WRAPIR_DEVICE_CPU;
}

/// The tensor a C tensor describes, its storage kept alive by `owner` (null
/// for borrowed memory) on `device`. Checked: dtype, rank, and that the
/// layout stays inside the storage.
[[nodiscard]] inline Result<Tensor> import_tensor(const wrapir_tensor& in, std::shared_ptr<void> owner,
                                                  ir::Device device = ir::Device{ir::DeviceType::cpu, std::nullopt}) {
  if (in.ndim < 0 || in.ndim > WRAPIR_MAX_DIMS) return Diagnostic{"a tensor has " + std::to_string(in.ndim) + " dimensions"};
  if (in.dtype < 0 || static_cast<std::size_t>(in.dtype) >= ir::dtype_count)
    return Diagnostic{"a tensor has the unknown dtype number " + std::to_string(in.dtype)};
  const auto dtype = static_cast<ir::DType>(in.dtype);
  auto storage = std::make_shared<Storage>();
  storage->data = static_cast<std::byte*>(in.storage);
  storage->nbytes = in.storage ? in.storage_nbytes : 0;
  storage->device = device;
  storage->owner = std::move(owner);
  Tensor t{std::move(storage), dtype, std::vector<std::int64_t>(in.sizes, in.sizes + in.ndim),
           std::vector<std::int64_t>(in.strides, in.strides + in.ndim), 0};
  if (in.data != nullptr && in.storage != nullptr) {
    const auto delta = static_cast<const std::byte*>(in.data) - static_cast<const std::byte*>(in.storage);
    const std::int64_t item = ir::itemsize(dtype);
    if (delta < 0 || delta % item != 0) return Diagnostic{"a tensor's data does not start at an element of its storage"};
    t.offset = delta / item;
  }
  auto reach = bytes_spanned(t.sizes, t.strides, t.offset, dtype);
  if (!reach) return std::move(reach).error();
  if (*reach > t.storage->nbytes)
    return Diagnostic{"a tensor reaches " + std::to_string(*reach) + " bytes past a storage of " +
                      std::to_string(t.storage->nbytes)};
  return t;
}

/// Takes ownership of a value a program handed back (its outputs): the
/// tensor keeps the program's storage alive and releases it when the last
/// copy goes.
[[nodiscard]] inline Result<Value> adopt(wrapir_value& v) {
  void (*release)(void*) = v.release;
  void* owner = v.owner;
  v.release = nullptr;
  std::shared_ptr<void> keep(static_cast<void*>(nullptr), [release, owner](void*) {
    if (release != nullptr) release(owner);
  });
  switch (v.kind) {
    case WRAPIR_VALUE_NONE: return Value{};
    case WRAPIR_VALUE_INT: return Value{v.integer};
    case WRAPIR_VALUE_TENSOR: {
      auto device = device_of(v.device_type);
      if (!device) return std::move(device).error();
      auto t = import_tensor(v.tensor, std::move(keep), *device);
      if (!t) return std::move(t).error();
      return Value{*std::move(t)};
    }
    default: return Diagnostic{"an output of kind " + std::to_string(v.kind) + " is not a tensor, an integer or None"};
  }
}

namespace detail {

/// A C value's contents as a run-time value (borrowed: tensors do not own
/// their storage). Throws `Failure` on what cannot be converted.
inline Value from_c(const wrapir_value& v, std::size_t depth = 0) {
  if (depth > 32) wrapir::detail::fail("a list nests more than 32 deep");
  switch (v.kind) {
    case WRAPIR_VALUE_NONE: return Value{};
    case WRAPIR_VALUE_TENSOR: {
      auto device = device_of(v.device_type);
      if (!device) wrapir::detail::fail(device.error());
      auto t = import_tensor(v.tensor, nullptr, *device);
      if (!t) wrapir::detail::fail(t.error());
      return Value{*std::move(t)};
    }
    case WRAPIR_VALUE_INT: return Value{v.integer};
    case WRAPIR_VALUE_FLOAT: return Value{v.real};
    case WRAPIR_VALUE_BOOL: return Value{v.integer != 0};
    case WRAPIR_VALUE_STRING:
      if (v.string == nullptr) wrapir::detail::fail("a string argument is null");
      return Value{std::string(v.string)};
    case WRAPIR_VALUE_DEVICE: {
      ir::Device d{v.device_type == WRAPIR_DEVICE_CUDA ? ir::DeviceType::cuda : ir::DeviceType::cpu, std::nullopt};
      if (v.integer >= 0) d.index = static_cast<int>(v.integer);
      return Value{d};
    }
    case WRAPIR_VALUE_DTYPE:
      if (v.integer < 0 || static_cast<std::size_t>(v.integer) >= ir::dtype_count)
        wrapir::detail::fail("the dtype number " + std::to_string(v.integer) + " is unknown");
      return Value{static_cast<ir::DType>(v.integer)};
    case WRAPIR_VALUE_LIST: {
      if (v.items == nullptr && v.count != 0) wrapir::detail::fail("a list argument has no items");
      ValueList list;
      for (std::size_t i = 0; i < v.count; ++i) list.items.push_back(from_c(v.items[i], depth + 1));
      return Value{std::move(list)};
    }
    default: wrapir::detail::fail("an argument of unknown kind " + std::to_string(v.kind));
  }
}

inline void release_storage(void* owner) { delete static_cast<std::shared_ptr<Storage>*>(owner); }
inline void release_items(void* owner) { delete[] static_cast<wrapir_value*>(owner); }

/// An extern's result as an owned C value (see c_abi.h on ownership).
inline wrapir_value to_c_result(const Value& v) {
  wrapir_value out{};
  if (v.holds<ir::None>()) return out;
  if (const Tensor* t = v.get_if<Tensor>()) {
    auto d = describe(*t);
    if (!d) wrapir::detail::fail(d.error());
    out.kind = WRAPIR_VALUE_TENSOR;
    out.tensor = *d;
    out.device_type = device_type_of(*t);
    out.owner = new std::shared_ptr<Storage>(t->storage);
    out.release = release_storage;
    return out;
  }
  if (const std::int64_t* i = v.get_if<std::int64_t>()) {
    out.kind = WRAPIR_VALUE_INT;
    out.integer = *i;
    return out;
  }
  if (const double* x = v.get_if<double>()) {
    out.kind = WRAPIR_VALUE_FLOAT;
    out.real = *x;
    return out;
  }
  if (const bool* b = v.get_if<bool>()) {
    out.kind = WRAPIR_VALUE_BOOL;
    out.integer = *b ? 1 : 0;
    return out;
  }
  if (const ValueList* list = v.get_if<ValueList>()) {
    auto items = std::make_unique<wrapir_value[]>(list->items.size());
    std::size_t done = 0;
    try {
      for (; done < list->items.size(); ++done) items[done] = to_c_result(list->items[done]);
    } catch (...) {
      for (std::size_t i = 0; i < done; ++i)
        if (items[i].release != nullptr) items[i].release(items[i].owner);
      throw;
    }
    out.kind = WRAPIR_VALUE_LIST;
    out.count = list->items.size();
    out.items = items.release();
    out.owner = out.items;
    out.release = release_items;
    return out;
  }
  wrapir::detail::fail("an extern returned a string, device or dtype, which the C interface does not return");
}

}  // namespace detail

/// An `ExternRegistry` as a `wrapir_extern_table`.
class CExternTable {
 public:
  explicit CExternTable(std::shared_ptr<const ExternRegistry> registry) : registry_(std::move(registry)) {}

  /// The table; valid while this object lives (it is `host`).
  [[nodiscard]] wrapir_extern_table table() noexcept {
    wrapir_extern_table t{};
    t.abi_version = WRAPIR_C_ABI_VERSION;
    t.host = this;
    t.lookup = &CExternTable::lookup;
    t.call = &CExternTable::call;
    return t;
  }

 private:
  static int64_t lookup(void* host, const char* name) noexcept {
    auto* self = static_cast<CExternTable*>(host);
    if (self == nullptr || name == nullptr || !self->registry_) return -1;
    try {
      for (std::size_t i = 0; i < self->resolved_.size(); ++i)
        if (self->resolved_[i].name == name) return static_cast<int64_t>(i);
      const ExternFn* fn = self->registry_->find(name);
      if (fn == nullptr) return -1;
      self->resolved_.push_back(Resolved{name, fn});
      return static_cast<int64_t>(self->resolved_.size() - 1);
    } catch (...) {
      return -1;
    }
  }

  static int call(void* host, int64_t handle, const wrapir_value* args, size_t arg_count, const wrapir_kwarg* kwargs,
                  size_t kwarg_count, wrapir_value* result, char* message, size_t message_size) noexcept {
    auto* self = static_cast<CExternTable*>(host);
    if (result != nullptr) *result = wrapir_value{};
    if (self == nullptr || result == nullptr || handle < 0 || static_cast<std::size_t>(handle) >= self->resolved_.size()) {
      write_message("the extern table was called with a bad handle or no result", message, message_size);
      return 1;
    }
    try {
      auto r = wrapir::detail::catch_failure([&] {
        std::vector<Value> a;
        a.reserve(arg_count);
        for (std::size_t i = 0; i < arg_count; ++i) a.push_back(detail::from_c(args[i]));
        std::vector<KeywordArg> k;
        k.reserve(kwarg_count);
        for (std::size_t i = 0; i < kwarg_count; ++i) {
          if (kwargs[i].name == nullptr) wrapir::detail::fail("a keyword argument has no name");
          k.push_back(KeywordArg{kwargs[i].name, detail::from_c(kwargs[i].value)});
        }
        const Resolved& fn = self->resolved_[static_cast<std::size_t>(handle)];
        Result<Value> value = (*fn.fn)(ExternCall{fn.name, a, k});
        if (!value) wrapir::detail::fail(value.error());
        return detail::to_c_result(*value);
      });
      if (!r) {
        write_message(r.error().message, message, message_size);
        return 1;
      }
      *result = *r;
      return 0;
    } catch (const std::bad_alloc&) {
      write_message("out of memory", message, message_size);
    } catch (const std::exception& e) {
      write_message(e.what(), message, message_size);
    } catch (...) {
      write_message("an unknown exception", message, message_size);
    }
    return 1;
  }

  struct Resolved {
    std::string name;
    const ExternFn* fn;
  };
  std::shared_ptr<const ExternRegistry> registry_;
  std::vector<Resolved> resolved_;
};

/// Borrows run-time values as C inputs of an emitted program: the tensors
/// and integers of `values`, described in `out` (valid while `values` are).
[[nodiscard]] inline Result<std::vector<wrapir_value>> borrow(std::span<const Value> values) {
  std::vector<wrapir_value> out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    wrapir_value v{};
    if (const Tensor* t = values[i].get_if<Tensor>()) {
      auto d = describe(*t);
      if (!d) return Diagnostic{"input " + std::to_string(i) + ": " + d.error().message};
      v.kind = WRAPIR_VALUE_TENSOR;
      v.tensor = *d;
      v.device_type = device_type_of(*t);
    } else if (const std::int64_t* n = values[i].get_if<std::int64_t>()) {
      v.kind = WRAPIR_VALUE_INT;
      v.integer = *n;
    } else {
      return Diagnostic{"input " + std::to_string(i) + " is neither a tensor nor an integer"};
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace wrapir::run::c_abi
