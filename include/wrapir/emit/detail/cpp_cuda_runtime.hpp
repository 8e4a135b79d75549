#pragma once
/// \file
/// The part of the emitted runtime only CUDA programs carry (emit/cpp.hpp):
/// the CUDA driver API (`cuda.h`, linked: `-lcuda`), error checks that name
/// the failing call and kernel, the run's stream and context, stream-ordered
/// device allocation, Triton kernels loaded once and lazily from their
/// cubins (files beside the program, or embedded) and launched with
/// Triton's scratch pointers appended. C++17; compiles without warnings
/// under g++ 12 and nvcc 13 `-Wall -Wextra` against the CUDA Toolkit's
/// `cuda.h` (no runtime API, no libtorch).
///
/// Like the common runtime (cpp_runtime.hpp) everything is inline in
/// namespace `wrapir_rt_v2`: new names only, so CPU and CUDA programs linked
/// into one binary share identical definitions.

#include <string_view>

namespace wrapir::cpp::detail {

inline constexpr std::string_view cuda_runtime_text = R"WRAPIR_RT(
#include <cuda.h>

#include <mutex>

namespace wrapir_rt_v2 {

inline std::string cuda_error_text(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) name = "an unknown CUDA error";
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS || text == nullptr) text = "";
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + (text[0] != '\0' ? std::string(": ") + text : std::string()) + ")";
}

/// Fails the run unless `r` is CUDA_SUCCESS, naming the driver call and,
/// for launches, the kernel.
inline void cuda_check(CUresult r, const char* call, const char* kernel = nullptr) {
  if (r == CUDA_SUCCESS) return;
  fail(std::string(call) + (kernel != nullptr ? std::string(" of kernel ") + quoted(kernel) : std::string()) + " failed: " +
           cuda_error_text(r),
       r == CUDA_ERROR_OUT_OF_MEMORY ? WRAPIR_ERROR_OUT_OF_MEMORY : WRAPIR_ERROR_RUNTIME);
}

/// The stream of the run in progress on this thread (null: the legacy
/// default stream).
inline CUstream& cuda_stream() noexcept {
  static thread_local CUstream stream = nullptr;
  return stream;
}

inline CUdeviceptr device_address(const void* p) noexcept { return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p)); }

/// Copies on the run's stream (unified addressing: either end may be host
/// memory). Reads for the host wait for the stream first, then copy.
inline void cuda_copy(void* dst, const void* src, std::size_t n, bool host) {
  if (n == 0) return;
  if (host) {
    cuda_check(cuStreamSynchronize(cuda_stream()), "cuStreamSynchronize");
    cuda_check(cuMemcpy(device_address(dst), device_address(src), n), "cuMemcpy");
    return;
  }
  cuda_check(cuMemcpyAsync(device_address(dst), device_address(src), n, cuda_stream()), "cuMemcpyAsync");
}

inline void cuda_zero(void* dst, std::size_t n) {
  cuda_check(cuMemsetD8Async(device_address(dst), 0, n, cuda_stream()), "cuMemsetD8Async");
}

inline const DeviceOps cuda_ops{&cuda_copy, &cuda_zero};

/// `nbytes` of device memory from the stream-ordered allocator, freed with
/// cuMemFreeAsync on the same stream when the last tensor of it goes (the
/// caller's release of an output included: release outputs before that
/// stream is destroyed).
inline std::shared_ptr<Storage> cuda_allocate(std::int64_t nbytes) {
  if (nbytes < 0) fail("cannot allocate " + std::to_string(nbytes) + " bytes");
  const CUstream stream = cuda_stream();
  CUdeviceptr p = 0;
  if (nbytes > 0) cuda_check(cuMemAllocAsync(&p, static_cast<std::size_t>(nbytes), stream), "cuMemAllocAsync");
  std::shared_ptr<void> owner(reinterpret_cast<void*>(static_cast<std::uintptr_t>(p)), [stream](void* q) {
    if (q != nullptr) (void)cuMemFreeAsync(device_address(q), stream);
  });
  auto s = std::make_shared<Storage>();
  s->data = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(p));
  s->nbytes = nbytes;
  s->owner = std::move(owner);
  s->device_type = WRAPIR_DEVICE_CUDA;
  return s;
}

inline Tensor cuda_empty_strided(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t offset,
                                 std::int32_t dtype) {
  const std::int64_t bytes = bytes_spanned(sizes, strides, offset, dtype);
  return Tensor{cuda_allocate(bytes), dtype, std::move(sizes), std::move(strides), offset};
}

/// Where a program's kernels come from: the directory `P_init` names (the
/// cubins' paths are relative to it). Kernels are loaded once, lazily, on
/// their first launch, into the context current then, and stay loaded.
struct CudaKernelSet {
  std::mutex mutex{};
  std::string directory{};
  bool initialised = false;
};

/// One Triton kernel (what kernels.json and Triton's metadata say) or PTX
/// or cubin kernel (what its definition says), and the loaded function.
struct CudaKernel {
  const char* name;
  const char* cubin;   // relative to the kernel directory
  const char* symbol;  // the function in the cubin
  unsigned num_warps;
  unsigned shared_bytes;
  std::int64_t global_scratch_bytes;  // per program (CTA)
  std::int64_t profile_scratch_bytes;
  const unsigned char* image;  // the embedded cubin, or null
  CUcontext context;
  CUmodule module;
  CUfunction function;
};

inline CUfunction cuda_function(CudaKernel& k, CudaKernelSet& set) {
  CUcontext context = nullptr;
  cuda_check(cuCtxGetCurrent(&context), "cuCtxGetCurrent", k.name);
  if (context == nullptr) fail(std::string("kernel ") + quoted(k.name) + ": no CUDA context is current");
  std::lock_guard<std::mutex> lock(set.mutex);
  if (k.function != nullptr) {
    if (k.context == context) return k.function;
    fail(std::string("kernel ") + quoted(k.name) + " was loaded in another CUDA context; one process runs a program in one context");
  }
  CUmodule module = nullptr;
  if (k.image != nullptr) {
    cuda_check(cuModuleLoadData(&module, k.image), "cuModuleLoadData", k.name);
  } else {
    // An absolute path (a PTX or cubin kernel's definition may give one)
    // needs no directory.
    const bool absolute = k.cubin[0] == '/';
    if (!set.initialised && !absolute)
      fail(std::string("kernel ") + quoted(k.name) + ": the program was not given the directory of its cubins (call its _init first)",
           WRAPIR_ERROR_INVALID_ARGUMENT);
    const std::string path = set.directory.empty() || absolute ? std::string(k.cubin) : set.directory + "/" + k.cubin;
    const CUresult r = cuModuleLoad(&module, path.c_str());
    if (r != CUDA_SUCCESS) fail("cuModuleLoad of " + quoted(path.c_str()) + " for kernel " + quoted(k.name) + " failed: " + cuda_error_text(r));
  }
  CUfunction function = nullptr;
  CUresult r = cuModuleGetFunction(&function, module, k.symbol);
  if (r == CUDA_SUCCESS && k.shared_bytes > 48u * 1024u)
    r = cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(k.shared_bytes));
  if (r != CUDA_SUCCESS) {
    (void)cuModuleUnload(module);
    cuda_check(r, "cuModuleGetFunction", k.name);
  }
  k.context = context;
  k.module = module;
  k.function = function;
  return function;
}

/// Launches `k` over grid (x, y, z) on the run's stream: nothing when a
/// dimension is 0 (the early return of Inductor's launchers), a failure
/// beyond CUDA's limits. `args` holds `count` argument pointers and two
/// free slots, where Triton's global and profile scratch pointers go (null
/// unless the metadata asks for scratch: then grid volume x bytes per
/// program of stream-ordered memory, freed after the launch).
inline void launch_triton(CudaKernel& k, CudaKernelSet& set, std::int64_t x, std::int64_t y, std::int64_t z, void** args,
                          std::size_t count) {
  if (x < 0 || y < 0 || z < 0)
    fail("the grid of kernel " + quoted(k.name) + " is (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + "): a dimension is negative");
  if (x == 0 || y == 0 || z == 0) return;
  if (x > 2147483647 || y > 65535 || z > 65535)
    fail("the grid of kernel " + quoted(k.name) + " is (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
         "), beyond CUDA's limits (2147483647, 65535, 65535)");
  const CUfunction f = cuda_function(k, set);
  CUdeviceptr scratch[2] = {0, 0};
  std::shared_ptr<Storage> scratch_storage;
  if (k.global_scratch_bytes > 0 || k.profile_scratch_bytes > 0) {
    const std::int64_t programs = x * y * z;  // < 2^63 within the limits above
    std::int64_t global = 0, profile = 0;
    if (__builtin_mul_overflow(programs, k.global_scratch_bytes, &global) ||
        __builtin_mul_overflow(programs, k.profile_scratch_bytes, &profile) || global > (std::int64_t{1} << 50) ||
        profile > (std::int64_t{1} << 50))
      fail("the scratch memory of kernel " + quoted(k.name) + " for " + std::to_string(programs) + " programs is too large");
    const std::int64_t profile_at = (global + 255) / 256 * 256;
    scratch_storage = cuda_allocate(profile_at + profile);
    if (global > 0) scratch[0] = device_address(scratch_storage->data);
    if (profile > 0) scratch[1] = device_address(scratch_storage->data + profile_at);
  }
  // The driver reads as many entries as the kernel has parameters: the
  // scratch slots it does not have are never looked at.
  args[count] = &scratch[0];
  args[count + 1] = &scratch[1];
  cuda_check(cuLaunchKernel(f, static_cast<unsigned>(x), static_cast<unsigned>(y), static_cast<unsigned>(z), 32u * k.num_warps, 1, 1,
                            k.shared_bytes, cuda_stream(), args, nullptr),
             "cuLaunchKernel", k.name);
}

/// A CUDA C++ kernel's host function (the companion .cu) returned `status`:
/// 0 is success (as Inductor's CUDA templates return), anything else fails
/// the run naming the kernel.
inline void check_cuda_cpp_kernel(int status, const char* kernel) {
  if (status != 0) fail(std::string("CUDA C++ kernel ") + quoted(kernel) + " returned " + std::to_string(status));
}

/// The device pointer a Triton kernel takes for tensor `t`.
inline void* device_pointer(const Tensor& t, const char* who) {
  if (!t.live()) fail(std::string(who) + " is passed to a kernel but is not live");
  if (!on_device(t.storage.get()) && t.numel() != 0) fail(std::string(who) + " is in host memory but is passed to a CUDA kernel");
  return t.data();
}

/// The run's stream and context for the duration of one entry-point call:
/// the stream's context is made current (and the previous one restored);
/// with a null stream the caller's current context is used. Device storages
/// are reachable (`device_ops`) from here on.
class CudaRun {
 public:
  explicit CudaRun(void* stream) : previous_(cuda_stream()) {
    const CUstream s = static_cast<CUstream>(stream);
    CUcontext context = nullptr;
    if (s != nullptr) {
      cuda_check(cuStreamGetCtx(s, &context), "cuStreamGetCtx");
      cuda_check(cuCtxPushCurrent(context), "cuCtxPushCurrent");
      pushed_ = true;
    } else {
      cuda_check(cuCtxGetCurrent(&context), "cuCtxGetCurrent");
      if (context == nullptr) fail("no stream was given and no CUDA context is current", WRAPIR_ERROR_INVALID_ARGUMENT);
    }
    cuda_stream() = s;
    device_ops() = &cuda_ops;
  }
  ~CudaRun() {
    cuda_stream() = previous_;
    CUcontext popped = nullptr;
    if (pushed_) (void)cuCtxPopCurrent(&popped);
  }
  CudaRun(const CudaRun&) = delete;
  CudaRun& operator=(const CudaRun&) = delete;

 private:
  CUstream previous_;
  bool pushed_ = false;
};

}  // namespace wrapir_rt_v2
)WRAPIR_RT";

}  // namespace wrapir::cpp::detail
