#pragma once
/// \file
/// The runtime every C++ program `emit::cpp` writes carries in its prelude:
/// tensors over shared storages, checked layouts, the Python-semantics
/// integer helpers `expr::print_cpp` calls, kernel argument conversion and
/// extern calls through the C table of wrapir/run/c_abi.h. C++17, no
/// libtorch; it compiles without warnings under g++ 12 `-Wall -Wextra`.
///
/// Everything lives in namespace `wrapir_rt_v2` as inline functions: unused
/// ones cost nothing and warn about nothing, and two emitted programs linked
/// into one binary share identical definitions (the version in the name
/// changes whenever this text does in a way that matters to linking).

#include <string_view>

namespace wrapir::cpp::detail {

inline constexpr std::string_view runtime_text = R"WRAPIR_RT(
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace wrapir_rt_v2 {

// Python-semantics integer helpers, as expr::print_cpp's standalone style
// calls them (`wrapir::floor_div`): found from the generated functions, which
// live in this namespace.
namespace wrapir {
inline constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline constexpr std::int64_t python_mod(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept { return -floor_div(-a, b); }
inline constexpr std::int64_t align_up(std::int64_t x, std::int64_t alignment = 64) noexcept {
  return floor_div(x + alignment - 1, alignment) * alignment;
}
inline constexpr std::int64_t ipow(std::int64_t base, std::int64_t exponent) noexcept {
  std::int64_t r = 1;
  for (std::int64_t i = 0; i < exponent; ++i) r *= base;
  return r;
}
}  // namespace wrapir

/// A failure of a line; the entry point turns it into an error code.
struct Error {
  std::string message;
  int code;
};

[[noreturn]] inline void fail(std::string message, int code = WRAPIR_ERROR_RUNTIME) {
  throw Error{std::move(message), code};
}

inline std::string quoted(const char* name) { return std::string("'") + name + "'"; }

inline std::string list_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline std::int64_t itemsize_of(std::int32_t dtype) noexcept {
  static const std::int64_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 4, 8, 2, 2, 4, 8, 4, 8, 16, 1, 1, 1, 1, 1, 1};
  return dtype >= 0 && dtype < 22 ? sizes[dtype] : 0;
}

/// Bytes on the CPU or a CUDA device (`device_type`, wrapir_device_type);
/// `owner` keeps them alive (an allocation, a pool, an extern's result,
/// nothing for a caller's input).
struct Storage {
  std::byte* data = nullptr;
  std::int64_t nbytes = 0;
  std::shared_ptr<void> owner{};
  std::int32_t device_type = WRAPIR_DEVICE_CPU;
};

/// What the host side needs of device memory: copies (`host`: one end is
/// host memory, so the copy completes before it returns) and zero fills.
/// A CUDA program's prelude installs them for the run (`device_ops()`); a
/// CPU program never has device storages.
struct DeviceOps {
  void (*copy)(void* dst, const void* src, std::size_t n, bool host);
  void (*zero)(void* dst, std::size_t n);
};

inline const DeviceOps*& device_ops() noexcept {
  static const DeviceOps* ops = nullptr;
  return ops;
}

inline const DeviceOps& require_device_ops() {
  const DeviceOps* ops = device_ops();
  if (ops == nullptr) fail("a tensor is in device memory, which this program cannot reach (it is a CPU program)");
  return *ops;
}

inline bool on_device(const Storage* s) noexcept { return s != nullptr && s->device_type != WRAPIR_DEVICE_CPU; }

/// A strided view of a storage; `offset` counts elements of `dtype`.
struct Tensor {
  std::shared_ptr<Storage> storage{};
  std::int32_t dtype = WRAPIR_DTYPE_FLOAT32;
  std::vector<std::int64_t> sizes{};
  std::vector<std::int64_t> strides{};
  std::int64_t offset = 0;

  void* data() const noexcept {
    if (!storage || storage->data == nullptr) return nullptr;
    return storage->data + offset * itemsize_of(dtype);
  }
  std::int64_t numel() const noexcept {
    std::int64_t n = 1;
    for (const std::int64_t s : sizes) n *= s;
    return n;
  }
  bool live() const noexcept { return static_cast<bool>(storage); }
};

/// A value a program passes around: call arguments, extern results, the
/// inputs and outputs of subgraphs.
struct Value {
  enum Kind : std::int32_t { none, tensor, integer, real, boolean, string, device, dtype, list };
  Kind kind = none;
  Tensor t{};
  std::int64_t i = 0;
  double d = 0;
  std::string s{};
  std::int32_t device_type = 0;
  std::vector<Value> items{};

  static Value of(Tensor x) { Value v; v.kind = tensor; v.t = std::move(x); return v; }
  static Value of_int(std::int64_t x) { Value v; v.kind = integer; v.i = x; return v; }
  static Value of_real(double x) { Value v; v.kind = real; v.d = x; return v; }
  static Value of_bool(bool x) { Value v; v.kind = boolean; v.i = x ? 1 : 0; return v; }
  static Value of_string(const char* x) { Value v; v.kind = string; v.s = x; return v; }
  static Value of_device(std::int32_t type, std::int64_t index) { Value v; v.kind = device; v.device_type = type; v.i = index; return v; }
  static Value of_dtype(std::int32_t x) { Value v; v.kind = dtype; v.i = x; return v; }
  static Value of_list(std::vector<Value> x) { Value v; v.kind = list; v.items = std::move(x); return v; }
};

/// The bytes `(offset + largest index + 1) * itemsize` a layout reaches
/// (0 when empty); negative values and overflow fail.
inline std::int64_t bytes_spanned(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                                  std::int64_t offset, std::int32_t dtype) {
  if (sizes.size() != strides.size()) fail(std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) + " strides");
  if (offset < 0) fail("negative storage offset " + std::to_string(offset));
  std::int64_t last = offset;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) fail("negative size " + std::to_string(sizes[i]) + " in dimension " + std::to_string(i));
    if (sizes[i] == 0) return 0;
    if (strides[i] < 0) fail("negative stride " + std::to_string(strides[i]) + " in dimension " + std::to_string(i));
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &reach) || __builtin_add_overflow(last, reach, &last))
      fail("the layout's extent overflows 64 bits");
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, itemsize_of(dtype), &bytes))
    fail("the layout's extent in bytes overflows 64 bits");
  return bytes;
}

/// New CPU storage of `nbytes`, 64-byte aligned (what vectorised kernels
/// and BLAS prefer).
inline std::shared_ptr<Storage> allocate(std::int64_t nbytes) {
  if (nbytes < 0) fail("cannot allocate " + std::to_string(nbytes) + " bytes");
  constexpr std::size_t alignment = 64;
  const auto rounded = (static_cast<std::size_t>(nbytes) + alignment - 1) / alignment * alignment;
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(alignment, rounded);
  if (rounded != 0 && p == nullptr) fail("cannot allocate " + std::to_string(nbytes) + " bytes", WRAPIR_ERROR_OUT_OF_MEMORY);
  auto s = std::make_shared<Storage>();
  s->data = static_cast<std::byte*>(p);
  s->nbytes = nbytes;
  s->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return s;
}

/// `empty_strided`: a new tensor whose storage holds exactly its layout.
inline Tensor empty_strided(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t offset,
                            std::int32_t dtype) {
  const std::int64_t bytes = bytes_spanned(sizes, strides, offset, dtype);
  return Tensor{allocate(bytes), dtype, std::move(sizes), std::move(strides), offset};
}

/// A view of `storage` with a layout, refused when it reaches past it.
inline Tensor view_of(const std::shared_ptr<Storage>& storage, std::vector<std::int64_t> sizes,
                      std::vector<std::int64_t> strides, std::int64_t offset, std::int32_t dtype) {
  if (!storage) fail("the view's base is not live");
  const std::int64_t bytes = bytes_spanned(sizes, strides, offset, dtype);
  if (bytes > storage->nbytes)
    fail("the view reaches " + std::to_string(bytes) + " bytes but its storage has " + std::to_string(storage->nbytes));
  return Tensor{storage, dtype, std::move(sizes), std::move(strides), offset};
}

/// `reinterpret_tensor(base, sizes, strides, offset)`: the offset counts
/// elements of the base's dtype.
inline Tensor reinterpret(const Tensor& base, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides,
                          std::int64_t offset, std::int32_t dtype) {
  if (!base.live()) fail("the base of the view is not live");
  if (dtype != base.dtype) {
    const std::int64_t bytes = offset * itemsize_of(base.dtype);
    if (bytes % itemsize_of(dtype) != 0) fail("the view's offset of " + std::to_string(bytes) + " bytes is not a whole number of elements");
    offset = bytes / itemsize_of(dtype);
  }
  return view_of(base.storage, std::move(sizes), std::move(strides), offset, dtype);
}

/// A region of `pool` starting `offset_bytes` in, viewed with a layout.
inline Tensor alloc_from_pool(const std::shared_ptr<Storage>& pool, const char* pool_name, std::int64_t offset_bytes,
                              std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t offset,
                              std::int32_t dtype) {
  if (!pool) fail(std::string("pool ") + quoted(pool_name) + " is not live");
  if (offset_bytes < 0 || offset_bytes > pool->nbytes)
    fail("the region starts at byte " + std::to_string(offset_bytes) + " of pool " + quoted(pool_name) + ", which has " +
         std::to_string(pool->nbytes) + " bytes");
  auto region = std::make_shared<Storage>();
  region->data = pool->data == nullptr ? nullptr : pool->data + offset_bytes;
  region->nbytes = pool->nbytes - offset_bytes;
  region->owner = pool;  // the region keeps the whole pool alive
  region->device_type = pool->device_type;
  return view_of(region, std::move(sizes), std::move(strides), offset, dtype);
}

/// Sizes must match; strides too where the size exceeds 1, as torch's
/// assert_size_stride.
inline void check_layout(const Tensor& t, const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                         const std::string& who, int code = WRAPIR_ERROR_RUNTIME) {
  if (!t.live()) fail(who + " is not live", code);
  if (t.sizes != sizes) fail(who + " has sizes " + list_text(t.sizes) + ", the program expects " + list_text(sizes), code);
  for (const std::int64_t s : sizes)
    if (s == 0) return;
  for (std::size_t i = 0; i < strides.size() && i < t.strides.size(); ++i)
    if (sizes[i] > 1 && t.strides[i] != strides[i])
      fail(who + " has strides " + list_text(t.strides) + ", the program expects " + list_text(strides), code);
}

inline void check_alignment(const Tensor& t, std::int64_t alignment, const char* who, const char* op) {
  if (!t.live()) fail(std::string(who) + " is not live");
  if (alignment <= 0) fail("alignment " + std::to_string(alignment) + " is not positive");
  if (reinterpret_cast<std::uintptr_t>(t.data()) % static_cast<std::uintptr_t>(alignment) != 0)
    fail(std::string(who) + " is not aligned to " + std::to_string(alignment) + " bytes" +
         (op[0] != '\0' ? std::string(" (the result of ") + op + ")" : std::string()));
}

/// Assumptions: 0 positive, 1 nonnegative, 2 any integer.
inline std::int64_t bind_symbol(const char* name, std::int64_t v, int assumption, int code = WRAPIR_ERROR_RUNTIME) {
  if ((assumption == 0 && v <= 0) || (assumption == 1 && v < 0))
    fail(std::string("symbol ") + quoted(name) + " would be " + std::to_string(v) + ", which breaks its assumption (" +
         (assumption == 0 ? "positive" : "nonnegative") + ")", code);
  return v;
}

template <class T>
T load_element(const Tensor& t) {
  T v{};
  if (on_device(t.storage.get())) require_device_ops().copy(&v, t.data(), sizeof v, true);
  else std::memcpy(&v, t.data(), sizeof v);
  return v;
}

/// The one element of a one-element tensor as a number: `integer` set, or
/// `floating` and `real`.
struct Scalar {
  bool floating = false;
  std::int64_t integer = 0;
  double real = 0;
  bool truth() const noexcept { return floating ? real != 0 : integer != 0; }
};

inline Scalar read_scalar(const Tensor& t, const std::string& what) {
  if (!t.live()) fail(what + " is not live");
  if (t.numel() != 1) fail(what + " must hold one element, it has " + std::to_string(t.numel()));
  switch (t.dtype) {
    case WRAPIR_DTYPE_BOOL: return {false, load_element<std::uint8_t>(t) != 0 ? 1 : 0, 0};
    case WRAPIR_DTYPE_UINT8: return {false, load_element<std::uint8_t>(t), 0};
    case WRAPIR_DTYPE_INT8: return {false, load_element<std::int8_t>(t), 0};
    case WRAPIR_DTYPE_INT16: return {false, load_element<std::int16_t>(t), 0};
    case WRAPIR_DTYPE_INT32: return {false, load_element<std::int32_t>(t), 0};
    case WRAPIR_DTYPE_INT64: return {false, load_element<std::int64_t>(t), 0};
    case WRAPIR_DTYPE_UINT16: return {false, load_element<std::uint16_t>(t), 0};
    case WRAPIR_DTYPE_UINT32: return {false, load_element<std::uint32_t>(t), 0};
    case WRAPIR_DTYPE_UINT64: {
      const auto v = load_element<std::uint64_t>(t);
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) fail(what + " holds more than int64 holds");
      return {false, static_cast<std::int64_t>(v), 0};
    }
    case WRAPIR_DTYPE_FLOAT32: return {true, 0, load_element<float>(t)};
    case WRAPIR_DTYPE_FLOAT64: return {true, 0, load_element<double>(t)};
    default: fail(what + " has a dtype (" + std::to_string(t.dtype) + ") whose element cannot be read on the host");
  }
}

/// One step of a key path: 0 index, 2 size, 3 stride, 4 storage_offset,
/// 5 convert_to_int, 6 divide_by (wrapir's KeyStepKind numbers).
struct Step {
  int kind;
  std::int64_t value;
};

inline Value follow_path(const Value& v, std::initializer_list<Step> path, const std::string& what) {
  Value at = v;
  std::size_t n = 0;
  for (const Step& step : path) {
    const std::string where = what + ", key step " + std::to_string(n++);
    if (step.kind == 0) {
      if (at.kind != Value::list) fail(where + ": not a list or tuple");
      if (step.value < 0 || static_cast<std::size_t>(step.value) >= at.items.size())
        fail(where + ": index " + std::to_string(step.value) + " is out of range for " + std::to_string(at.items.size()) + " elements");
      Value next = at.items[static_cast<std::size_t>(step.value)];
      at = std::move(next);
    } else if (step.kind == 2 || step.kind == 3 || step.kind == 4) {
      if (at.kind != Value::tensor) fail(where + ": not a tensor");
      std::int64_t x = at.t.offset;
      if (step.kind != 4) {
        if (step.value < 0 || static_cast<std::size_t>(step.value) >= at.t.sizes.size())
          fail(where + ": dimension " + std::to_string(step.value) + " of a " + std::to_string(at.t.sizes.size()) + "-dimensional tensor");
        x = step.kind == 2 ? at.t.sizes[static_cast<std::size_t>(step.value)] : at.t.strides[static_cast<std::size_t>(step.value)];
      }
      at = Value::of_int(x);
    } else if (step.kind == 5 || step.kind == 6) {
      std::int64_t x = 0;
      if (at.kind == Value::tensor) {
        const Scalar s = read_scalar(at.t, where);
        if (s.floating) {
          if (!(std::isfinite(s.real) && s.real == std::floor(s.real) && std::fabs(s.real) < 9.2e18))
            fail(where + ": " + std::to_string(s.real) + " is not an integer");
          x = static_cast<std::int64_t>(s.real);
        } else {
          x = s.integer;
        }
      } else if (at.kind == Value::integer || at.kind == Value::boolean) {
        x = at.i;
      } else {
        fail(where + ": not a number");
      }
      if (step.kind == 5) {
        x = x != 0 ? 1 : 0;
      } else {
        if (step.value <= 0) fail(where + ": divisor " + std::to_string(step.value) + " is not positive");
        if (x % step.value != 0) fail(where + ": " + std::to_string(x) + " is not divisible by " + std::to_string(step.value));
        x /= step.value;
      }
      at = Value::of_int(x);
    } else {
      fail(where + ": dict results are not supported");
    }
  }
  return at;
}

inline std::int64_t integer_of(const Value& v, const std::string& what) {
  if (v.kind == Value::integer || v.kind == Value::boolean) return v.i;
  if (v.kind == Value::tensor) {
    const Scalar s = read_scalar(v.t, what);
    if (s.floating) fail(what + " is a floating-point value, not an integer");
    return s.integer;
  }
  fail(what + " is not an integer");
}

inline bool truth_of(const Value& v, const std::string& what) {
  if (v.kind == Value::tensor) return read_scalar(v.t, what).truth();
  if (v.kind == Value::integer || v.kind == Value::boolean) return v.i != 0;
  fail(what + " is neither a tensor nor an integer");
}

/// `dst.copy_(src)` for equal dtypes and sizes, any strides.
inline void copy_elements(const Tensor& dst, const Tensor& src) {
  if (!dst.live() || !src.live()) fail("the copy's source or destination is not live");
  if (dst.dtype != src.dtype) fail("the copy's source and destination have different dtypes");
  if (dst.sizes != src.sizes) fail("the copy's source has sizes " + list_text(src.sizes) + ", its destination " + list_text(dst.sizes));
  const std::int64_t n = dst.numel();
  if (n == 0) return;
  const std::int64_t item = itemsize_of(dst.dtype);
  if (on_device(dst.storage.get()) || on_device(src.storage.get())) {
    // One copy of the span both cover; only for one dense row-major layout,
    // where that span holds exactly the elements.
    std::int64_t expected = 1;
    for (std::size_t k = dst.sizes.size(); k-- > 0;) {
      if (dst.sizes[k] != 1 && (dst.strides[k] != expected || src.strides[k] != expected))
        fail("a copy to or from the device needs both tensors dense and row-major; strides " + list_text(src.strides) +
             " and " + list_text(dst.strides));
      expected *= dst.sizes[k];
    }
    require_device_ops().copy(dst.data(), src.data(), static_cast<std::size_t>(n * item),
                              !on_device(dst.storage.get()) || !on_device(src.storage.get()));
    return;
  }
  auto* d = static_cast<std::byte*>(dst.data());
  const auto* s = static_cast<const std::byte*>(src.data());
  const std::size_t rank = dst.sizes.size();
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t od = 0, os = 0;
    for (std::size_t k = 0; k < rank; ++k) {
      od += index[k] * dst.strides[k];
      os += index[k] * src.strides[k];
    }
    std::memmove(d + od * item, s + os * item, static_cast<std::size_t>(item));
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < dst.sizes[k]) break;
      index[k] = 0;
    }
  }
}

/// A result a subgraph or an extern gave for buffer `who`: a tensor of the
/// program's dtype and sizes.
inline Tensor tensor_result(const Value& v, std::int32_t dtype, const std::vector<std::int64_t>& sizes, const char* who) {
  if (v.kind != Value::tensor) fail(std::string(who) + " must be a tensor, the call returned something else");
  if (v.t.dtype != dtype)
    fail(std::string(who) + " has dtype " + std::to_string(v.t.dtype) + ", the program expects " + std::to_string(dtype));
  if (v.t.sizes != sizes) fail(std::string(who) + " has sizes " + list_text(v.t.sizes) + ", the program expects " + list_text(sizes));
  return v.t;
}

/// Zeroes the whole storage of `t` (a workspace).
inline void zero_storage(const Tensor& t) {
  if (!t.live() || t.storage->data == nullptr || t.storage->nbytes == 0) return;
  if (on_device(t.storage.get())) require_device_ops().zero(t.storage->data, static_cast<std::size_t>(t.storage->nbytes));
  else std::memset(t.storage->data, 0, static_cast<std::size_t>(t.storage->nbytes));
}

inline const Tensor& live(const Tensor& t, const char* who) {
  if (!t.live()) fail(std::string(who) + " is used but is not live");
  return t;
}

// ---- kernel arguments --------------------------------------------------------

/// A pointer argument whose elements are `Size` bytes.
template <std::size_t Size>
struct PtrArg {
  void* p;
};
struct IntArg {
  std::int64_t v;
};
struct RealArg {
  double v;
};

template <std::size_t Size>
PtrArg<Size> ptr(const Tensor& t, const char* who) {
  if (!t.live()) fail(std::string(who) + " is passed to a kernel but is not live");
  // C++ kernels run on the host, also in a CUDA program (host work beside
  // the device's): device memory there would be a wild pointer.
  if (on_device(t.storage.get()) && t.numel() != 0)
    fail(std::string(who) + " is in device memory but is passed to a C++ kernel, which runs on the host");
  return PtrArg<Size>{t.data()};
}

template <class P, std::size_t Size>
P to_param(PtrArg<Size> a, std::size_t) {
  static_assert(std::is_pointer<P>::value, "wrapir: the kernel takes a scalar where the program passes a pointer");
  using E = typename std::remove_cv<typename std::remove_pointer<P>::type>::type;
  static_assert(std::is_void<E>::value || sizeof(typename std::conditional<std::is_void<E>::value, char, E>::type) == Size,
                "wrapir: the kernel's element size differs from the program's dtype");
  return static_cast<P>(a.p);
}

template <class P>
P to_param(IntArg a, std::size_t index) {
  static_assert(std::is_arithmetic<P>::value, "wrapir: the kernel takes a pointer where the program passes an integer");
  if (std::is_integral<P>::value && !std::is_same<P, bool>::value) {
    const bool fits = std::is_signed<P>::value
                          ? (a.v >= static_cast<std::int64_t>(std::numeric_limits<P>::min()) &&
                             a.v <= static_cast<std::int64_t>(std::numeric_limits<P>::max()))
                          : (a.v >= 0 && static_cast<std::uint64_t>(a.v) <= static_cast<std::uint64_t>(std::numeric_limits<P>::max()));
    if (!fits) fail("argument " + std::to_string(index) + " = " + std::to_string(a.v) + " does not fit the parameter's type");
  }
  return static_cast<P>(a.v);
}

template <class P>
P to_param(RealArg a, std::size_t) {
  static_assert(std::is_floating_point<P>::value, "wrapir: the kernel takes no floating-point value here");
  return static_cast<P>(a.v);
}

template <class... P, class... A, std::size_t... I>
void call_with(void (*fn)(P...), std::index_sequence<I...>, A... args) {
  fn(to_param<typename std::remove_cv<P>::type>(args, I)...);
}

/// Calls an Inductor C++ kernel: each argument converted to the kernel's
/// own parameter type, checked at compile time (count, pointer or scalar,
/// element size) and at run time (integer range).
template <class... P, class... A>
void call_kernel(void (*fn)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "wrapir: the kernel's parameter count differs from its signature's");
  call_with(fn, std::index_sequence_for<A...>{}, args...);
}

// ---- externs -----------------------------------------------------------------

/// What every line of one run shares: the extern table and the handles of
/// the externs the program calls, resolved once.
struct Context {
  const wrapir_extern_table* table = nullptr;
  std::vector<std::int64_t> handles{};
};

/// Values converted for the C table; owns what the borrowed views point at.
class Borrowed {
 public:
  wrapir_value convert(const Value& v) {
    wrapir_value out{};
    out.kind = v.kind;
    switch (v.kind) {
      case Value::none: break;
      case Value::tensor:
        export_tensor(v.t, out.tensor, "an extern's argument");
        out.device_type = v.t.storage ? v.t.storage->device_type : WRAPIR_DEVICE_CPU;
        break;
      case Value::integer:
      case Value::boolean:
      case Value::dtype: out.integer = v.i; break;
      case Value::real: out.real = v.d; break;
      case Value::string: out.string = v.s.c_str(); break;
      case Value::device: out.device_type = v.device_type; out.integer = v.i; break;
      case Value::list: {
        lists_.emplace_back();
        std::vector<wrapir_value>& items = lists_.back();
        items.reserve(v.items.size());
        for (const Value& x : v.items) items.push_back(convert(x));
        out.items = items.data();
        out.count = items.size();
        break;
      }
    }
    return out;
  }

  static void export_tensor(const Tensor& t, wrapir_tensor& out, const char* what) {
    if (t.sizes.size() > WRAPIR_MAX_DIMS) fail(std::string(what) + " has more than " + std::to_string(WRAPIR_MAX_DIMS) + " dimensions");
    out.data = t.data();
    out.storage = t.storage ? t.storage->data : nullptr;
    out.storage_nbytes = t.storage ? t.storage->nbytes : 0;
    out.dtype = t.dtype;
    out.ndim = static_cast<std::int32_t>(t.sizes.size());
    for (std::size_t i = 0; i < t.sizes.size(); ++i) {
      out.sizes[i] = t.sizes[i];
      out.strides[i] = t.strides[i];
    }
  }

 private:
  std::vector<std::vector<wrapir_value>> lists_;
};

/// A tensor the caller or a callee describes, as a Tensor over a storage
/// kept alive by `owner`. Its layout is checked against its storage.
inline Tensor import_tensor(const wrapir_tensor& in, std::int32_t device_type, std::shared_ptr<void> owner,
                            const std::string& what) {
  if (in.ndim < 0 || in.ndim > WRAPIR_MAX_DIMS) fail(what + " has " + std::to_string(in.ndim) + " dimensions");
  if (device_type != WRAPIR_DEVICE_CPU && device_type != WRAPIR_DEVICE_CUDA)
    fail(what + " is on an unknown device type " + std::to_string(device_type));
  if (itemsize_of(in.dtype) == 0) fail(what + " has an unknown dtype " + std::to_string(in.dtype));
  auto storage = std::make_shared<Storage>();
  storage->data = static_cast<std::byte*>(in.storage);
  storage->nbytes = in.storage_nbytes;
  storage->owner = std::move(owner);
  storage->device_type = device_type;
  Tensor t;
  t.storage = std::move(storage);
  t.dtype = in.dtype;
  t.sizes.assign(in.sizes, in.sizes + in.ndim);
  t.strides.assign(in.strides, in.strides + in.ndim);
  const std::int64_t item = itemsize_of(in.dtype);
  const auto delta = static_cast<std::byte*>(in.data) - static_cast<std::byte*>(in.storage);
  if (in.data == nullptr || in.storage == nullptr) {
    if (bytes_spanned(t.sizes, t.strides, 0, t.dtype) != 0) fail(what + " has no storage");
    t.offset = 0;
    return t;
  }
  if (delta < 0 || delta % item != 0) fail(what + ": its data does not start at an element of its storage");
  t.offset = delta / item;
  const std::int64_t reach = bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
  if (reach > in.storage_nbytes)
    fail(what + " reaches " + std::to_string(reach) + " bytes past a storage of " + std::to_string(in.storage_nbytes));
  return t;
}

/// Takes ownership of a result a callee handed back (see c_abi.h).
inline Value adopt(wrapir_value& r, const std::string& what) {
  auto release_of = [](wrapir_value& x) {
    void (*release)(void*) = x.release;
    void* owner = x.owner;
    x.release = nullptr;
    return std::shared_ptr<void>(static_cast<void*>(nullptr), [release, owner](void*) {
      if (release != nullptr) release(owner);
    });
  };
  switch (r.kind) {
    case WRAPIR_VALUE_NONE: { (void)release_of(r); return Value{}; }
    case WRAPIR_VALUE_TENSOR: {
      const std::int32_t device_type = r.device_type;
      return Value::of(import_tensor(r.tensor, device_type, release_of(r), what));
    }
    case WRAPIR_VALUE_INT: { (void)release_of(r); return Value::of_int(r.integer); }
    case WRAPIR_VALUE_BOOL: { (void)release_of(r); return Value::of_bool(r.integer != 0); }
    case WRAPIR_VALUE_FLOAT: { (void)release_of(r); return Value::of_real(r.real); }
    case WRAPIR_VALUE_LIST: {
      std::shared_ptr<void> array = release_of(r);
      std::vector<Value> items;
      // Every item is adopted (so released) even when one of them fails.
      std::string error;
      for (std::size_t i = 0; i < r.count; ++i) {
        try {
          items.push_back(adopt(r.items[i], what + "[" + std::to_string(i) + "]"));
        } catch (Error& e) {
          if (error.empty()) error = e.message;
        }
      }
      if (!error.empty()) fail(error);
      return Value::of_list(std::move(items));
    }
    default: { (void)release_of(r); fail(what + " is of a kind (" + std::to_string(r.kind) + ") an extern may not return"); }
  }
}

/// Calls extern number `index` (resolved at the start of the run).
inline Value call_extern(Context& ctx, std::size_t index, const char* op, const std::vector<Value>& args,
                         const std::vector<std::pair<const char*, Value>>& kwargs) {
  Borrowed borrowed;
  std::vector<wrapir_value> a;
  a.reserve(args.size());
  for (const Value& v : args) a.push_back(borrowed.convert(v));
  std::vector<wrapir_kwarg> k;
  k.reserve(kwargs.size());
  for (const auto& kw : kwargs) k.push_back(wrapir_kwarg{kw.first, borrowed.convert(kw.second)});
  wrapir_value result{};
  char message[1024] = {0};
  const int rc = ctx.table->call(ctx.table->host, ctx.handles.at(index), a.data(), a.size(), k.data(), k.size(), &result,
                                 message, sizeof message);
  message[sizeof message - 1] = '\0';
  if (rc != 0) fail(std::string("extern ") + quoted(op) + ": " + (message[0] != '\0' ? message : "failed"));
  return adopt(result, std::string("the result of extern ") + quoted(op));
}

/// Resolves the externs a program calls, once per run.
inline void resolve_externs(Context& ctx, const wrapir_extern_table* table, std::initializer_list<const char*> names) {
  ctx.table = table;
  if (names.size() == 0) return;
  if (table == nullptr || table->lookup == nullptr || table->call == nullptr)
    fail("the program calls externs but no extern table was given", WRAPIR_ERROR_INVALID_ARGUMENT);
  if (table->abi_version != WRAPIR_C_ABI_VERSION)
    fail("the extern table is of C ABI version " + std::to_string(table->abi_version) + ", the program of " +
         std::to_string(WRAPIR_C_ABI_VERSION), WRAPIR_ERROR_INVALID_ARGUMENT);
  for (const char* name : names) {
    const std::int64_t h = table->lookup(table->host, name);
    if (h < 0) fail(std::string("extern ") + quoted(name) + " is not in the host's extern table", WRAPIR_ERROR_INVALID_ARGUMENT);
    ctx.handles.push_back(h);
  }
}

// ---- the entry point ---------------------------------------------------------

/// Input `i` of a graph as a tensor of `dtype` and `rank` dimensions on
/// `device_type`.
inline Tensor input_tensor(const std::vector<Value>& inputs, std::size_t i, std::int32_t dtype, std::size_t rank,
                           std::int32_t device_type, const char* name, int code) {
  const std::string who = "input " + std::to_string(i) + " (" + quoted(name) + ")";
  if (inputs[i].kind != Value::tensor) fail(who + " must be a tensor", code);
  const Tensor& t = inputs[i].t;
  const std::int32_t actual = t.storage ? t.storage->device_type : WRAPIR_DEVICE_CPU;
  if (actual != device_type && bytes_spanned(t.sizes, t.strides, t.offset, t.dtype) != 0)
    fail(who + " is in " + (actual == WRAPIR_DEVICE_CPU ? "host" : "device") + " memory, the program expects it in " +
         (device_type == WRAPIR_DEVICE_CPU ? "host" : "device") + " memory", code);
  if (t.dtype != dtype) fail(who + " has dtype " + std::to_string(t.dtype) + ", the program expects " + std::to_string(dtype), code);
  if (t.sizes.size() != rank)
    fail(who + " has " + std::to_string(t.sizes.size()) + " dimensions, the program expects " + std::to_string(rank), code);
  return t;
}

inline std::int64_t input_integer(const std::vector<Value>& inputs, std::size_t i, const char* name, int code) {
  if (inputs[i].kind != Value::integer) fail("input " + std::to_string(i) + " (symbol " + quoted(name) + ") must be an integer", code);
  return inputs[i].i;
}

/// The caller's inputs as values; tensors are borrowed (checked against
/// their storages), integers copied.
inline std::vector<Value> import_inputs(const wrapir_value* inputs, std::size_t count) {
  std::vector<Value> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string who = "input " + std::to_string(i);
    if (inputs[i].kind == WRAPIR_VALUE_TENSOR) {
      try {
        out.push_back(Value::of(import_tensor(inputs[i].tensor, inputs[i].device_type, nullptr, who)));
      } catch (Error& e) {
        e.code = WRAPIR_ERROR_INVALID_ARGUMENT;
        throw;
      }
    } else if (inputs[i].kind == WRAPIR_VALUE_INT) {
      out.push_back(Value::of_int(inputs[i].integer));
    } else {
      fail(who + " is neither a tensor nor an integer", WRAPIR_ERROR_INVALID_ARGUMENT);
    }
  }
  return out;
}

inline void release_output(void* owner) { delete static_cast<std::shared_ptr<Storage>*>(owner); }

/// Hands the outputs to the caller: all or nothing.
inline void export_outputs(const std::vector<Value>& values, wrapir_value* outputs) {
  for (const Value& v : values)
    if (v.kind == Value::tensor && v.t.sizes.size() > WRAPIR_MAX_DIMS) fail("an output has more than WRAPIR_MAX_DIMS dimensions");
  std::vector<std::unique_ptr<std::shared_ptr<Storage>>> owners;
  for (const Value& v : values)
    owners.emplace_back(v.kind == Value::tensor ? new std::shared_ptr<Storage>(v.t.storage) : nullptr);
  for (std::size_t i = 0; i < values.size(); ++i) {
    wrapir_value out{};
    out.kind = values[i].kind == Value::tensor ? WRAPIR_VALUE_TENSOR
               : values[i].kind == Value::integer ? WRAPIR_VALUE_INT : WRAPIR_VALUE_NONE;
    if (values[i].kind == Value::tensor) {
      Borrowed::export_tensor(values[i].t, out.tensor, "an output");
      out.device_type = values[i].t.storage ? values[i].t.storage->device_type : WRAPIR_DEVICE_CPU;
      out.owner = owners[i].release();
      out.release = release_output;
    } else {
      out.integer = values[i].i;
    }
    outputs[i] = out;
  }
}

inline int report(const char* text, char* message, std::size_t size) {
  if (message != nullptr && size > 0) {
    std::size_t n = std::strlen(text);
    if (n >= size) n = size - 1;
    std::memcpy(message, text, n);
    message[n] = '\0';
  }
  return 0;
}

}  // namespace wrapir_rt_v2
)WRAPIR_RT";

/// The intermediate-value debug printer's runtime (CppOptions::debug_level),
/// written after `runtime_text` only into units that print: a unit without
/// the printer is byte for byte what it was before it existed. Its own
/// versioned namespace, so that units with and without it link together.
inline constexpr std::string_view debug_runtime_text = R"WRAPIR_DEBUG(
#include <cstdio>
#include <filesystem>
#include <mutex>

namespace wrapir_rt_debug_v1 {

namespace rt = wrapir_rt_v2;

/// Where the printer's lines go: the host's callback (each line without
/// its newline), or stderr when the host gave none.
struct Sink {
  std::mutex mutex{};
  void (*write)(void* host, const char* line) = nullptr;
  void* host = nullptr;
};

inline void print_line(Sink& sink, const std::string& line) {
  std::lock_guard<std::mutex> lock(sink.mutex);
  if (sink.write != nullptr) {
    sink.write(sink.host, line.c_str());
    return;
  }
  std::fputs(line.c_str(), stderr);
  std::fputc('\n', stderr);
}

inline std::string number_text(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

/// The tensor's elements in row-major order of its sizes, on the host (a
/// device tensor's span is copied first, after the run's stream).
inline std::vector<unsigned char> host_elements(const rt::Tensor& t) {
  const std::int64_t item = rt::itemsize_of(t.dtype);
  const std::int64_t span = rt::bytes_spanned(t.sizes, t.strides, t.offset, t.dtype);
  std::vector<unsigned char> out(static_cast<std::size_t>(t.numel() * item));
  if (out.empty() || span == 0) return out;
  const unsigned char* base = nullptr;
  std::vector<unsigned char> copy;
  if (rt::on_device(t.storage.get())) {
    const std::int64_t start = t.offset * item;
    copy.resize(static_cast<std::size_t>(span - start));
    rt::require_device_ops().copy(copy.data(), t.storage->data + start, copy.size(), true);
    base = copy.data();
  } else {
    base = reinterpret_cast<const unsigned char*>(t.data());
  }
  const std::size_t rank = t.sizes.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t at = 0;  // element offset of `index` from the first element
  for (std::size_t n = 0; n * static_cast<std::size_t>(item) < out.size(); ++n) {
    std::memcpy(out.data() + n * static_cast<std::size_t>(item), base + at * item, static_cast<std::size_t>(item));
    for (std::size_t d = rank; d-- > 0;) {
      at += t.strides[d];
      if (++index[d] < t.sizes[d]) break;
      at -= t.strides[d] * t.sizes[d];
      index[d] = 0;
    }
  }
  return out;
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h >> 15) << 31;
  const std::uint32_t exponent = (h >> 10) & 0x1f;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -v : v;
  }
  const std::uint32_t bits = exponent == 0x1f ? (sign | 0x7f800000u | (mantissa << 13))
                                              : (sign | ((exponent + 112u) << 23) | (mantissa << 13));
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Element `i` of a host copy as a double; false for dtypes without an
/// ordering (complex, float8, float4).
inline bool element_value(const unsigned char* p, std::int32_t dtype, double& v) {
  switch (dtype) {
    case WRAPIR_DTYPE_BOOL: v = *p != 0 ? 1 : 0; return true;
    case WRAPIR_DTYPE_UINT8: v = *p; return true;
    case WRAPIR_DTYPE_INT8: { std::int8_t x; std::memcpy(&x, p, 1); v = x; return true; }
    case WRAPIR_DTYPE_INT16: { std::int16_t x; std::memcpy(&x, p, 2); v = x; return true; }
    case WRAPIR_DTYPE_INT32: { std::int32_t x; std::memcpy(&x, p, 4); v = x; return true; }
    case WRAPIR_DTYPE_INT64: { std::int64_t x; std::memcpy(&x, p, 8); v = static_cast<double>(x); return true; }
    case WRAPIR_DTYPE_UINT16: { std::uint16_t x; std::memcpy(&x, p, 2); v = x; return true; }
    case WRAPIR_DTYPE_UINT32: { std::uint32_t x; std::memcpy(&x, p, 4); v = x; return true; }
    case WRAPIR_DTYPE_UINT64: { std::uint64_t x; std::memcpy(&x, p, 8); v = static_cast<double>(x); return true; }
    case WRAPIR_DTYPE_FLOAT16: { std::uint16_t x; std::memcpy(&x, p, 2); v = half_to_float(x); return true; }
    case WRAPIR_DTYPE_BFLOAT16: {
      std::uint16_t x;
      std::memcpy(&x, p, 2);
      const std::uint32_t bits = static_cast<std::uint32_t>(x) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      v = f;
      return true;
    }
    case WRAPIR_DTYPE_FLOAT32: { float x; std::memcpy(&x, p, 4); v = x; return true; }
    case WRAPIR_DTYPE_FLOAT64: std::memcpy(&v, p, 8); return true;
    default: return false;
  }
}

inline const char* dtype_name(std::int32_t dtype) {
  static const char* const names[] = {"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
                                      "uint64", "float16", "bfloat16", "float32", "float64", "complex32",
                                      "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                      "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2"};
  return dtype >= 0 && dtype < 22 ? names[dtype] : "unknown";
}

inline std::string shape_text(const std::vector<std::int64_t>& v) { return rt::list_text(v); }

/// `[  <message>: float32 cpu sizes=[..] strides=[..] offset=0 numel=N min=.. max=.. mean=..  ]`
/// (no statistics for an empty tensor or a dtype without an ordering; NaN
/// when an element is NaN).
inline void print_tensor(Sink& sink, const char* message, const rt::Tensor& t) {
  std::string line = std::string("[  ") + message + ": " + dtype_name(t.dtype) +
                     (rt::on_device(t.storage.get()) ? " cuda" : " cpu") + " sizes=" + shape_text(t.sizes) +
                     " strides=" + shape_text(t.strides) + " offset=" + std::to_string(t.offset) +
                     " numel=" + std::to_string(t.numel());
  const std::vector<unsigned char> bytes = host_elements(t);
  const auto item = static_cast<std::size_t>(rt::itemsize_of(t.dtype));
  double v = 0;
  if (!bytes.empty() && element_value(bytes.data(), t.dtype, v)) {
    double low = v, high = v, sum = 0;
    bool nan = false;
    for (std::size_t i = 0; i < bytes.size(); i += item) {
      (void)element_value(bytes.data() + i, t.dtype, v);
      if (std::isnan(v)) nan = true;
      low = std::min(low, v);
      high = std::max(high, v);
      sum += v;
    }
    const double count = static_cast<double>(bytes.size() / item);
    const double q = std::numeric_limits<double>::quiet_NaN();
    line += " min=" + number_text(nan ? q : low) + " max=" + number_text(nan ? q : high) +
            " mean=" + number_text(nan ? q : sum / count);
  }
  print_line(sink, line + "  ]");
}

/// `[  <message>: <value>  ]`, as Inductor's C++ printer prints scalars.
inline void print_integer(Sink& sink, const char* message, std::int64_t v) {
  print_line(sink, std::string("[  ") + message + ": " + std::to_string(v) + "  ]");
}
inline void print_real(Sink& sink, const char* message, double v) {
  print_line(sink, std::string("[  ") + message + ": " + number_text(v) + "  ]");
}

/// The .npy type of a dtype: numpy's own, or the raw bits as unsigned
/// integers of the element's size where numpy has none (bfloat16,
/// complex32, float8, float4).
inline std::string npy_descr(std::int32_t dtype) {
  const std::uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  const char order = first == 1 ? '<' : '>';
  switch (dtype) {
    case WRAPIR_DTYPE_BOOL: return "|b1";
    case WRAPIR_DTYPE_UINT8: return "|u1";
    case WRAPIR_DTYPE_INT8: return "|i1";
    case WRAPIR_DTYPE_INT16: return std::string(1, order) + "i2";
    case WRAPIR_DTYPE_INT32: return std::string(1, order) + "i4";
    case WRAPIR_DTYPE_INT64: return std::string(1, order) + "i8";
    case WRAPIR_DTYPE_UINT16: return std::string(1, order) + "u2";
    case WRAPIR_DTYPE_UINT32: return std::string(1, order) + "u4";
    case WRAPIR_DTYPE_UINT64: return std::string(1, order) + "u8";
    case WRAPIR_DTYPE_FLOAT16: return std::string(1, order) + "f2";
    case WRAPIR_DTYPE_FLOAT32: return std::string(1, order) + "f4";
    case WRAPIR_DTYPE_FLOAT64: return std::string(1, order) + "f8";
    case WRAPIR_DTYPE_COMPLEX64: return std::string(1, order) + "c8";
    case WRAPIR_DTYPE_COMPLEX128: return std::string(1, order) + "c16";
    case WRAPIR_DTYPE_BFLOAT16: return std::string(1, order) + "u2";
    case WRAPIR_DTYPE_COMPLEX32: return std::string(1, order) + "u4";
    default: return "|u1";
  }
}

/// Writes `t` to `path` as a .npy file (format 1.0, C order), creating its
/// directory; a file that cannot be written fails the run.
inline void save_tensor(const char* path, const rt::Tensor& t) {
  std::string header = "{'descr': '" + npy_descr(t.dtype) + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < t.sizes.size(); ++i)
    header += std::to_string(t.sizes[i]) + (t.sizes.size() == 1 ? ",)" : i + 1 < t.sizes.size() ? ", " : ")");
  if (t.sizes.empty()) header += ")";
  header += ", }";
  // Magic (6), version (2), length (2), then the header padded with spaces
  // and ended by a newline to a multiple of 64 bytes.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const std::vector<unsigned char> bytes = host_elements(t);
  std::error_code error;
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), error);
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) rt::fail(std::string("the debug printer cannot write ") + rt::quoted(path));
  const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(header.size() & 0xff),
                                      static_cast<unsigned char>(header.size() >> 8)};
  bool ok = std::fwrite(preamble, 1, sizeof preamble, f) == sizeof preamble &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  ok = std::fclose(f) == 0 && ok;
  if (!ok) rt::fail(std::string("the debug printer cannot write ") + rt::quoted(path));
}

}  // namespace wrapir_rt_debug_v1
)WRAPIR_DEBUG";

}  // namespace wrapir::cpp::detail
