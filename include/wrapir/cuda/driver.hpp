#pragma once
/// \file
/// The CUDA driver API, loaded at run time, and CUDA errors as diagnostics.
///
/// A program built with wrapir::cuda links no CUDA library. The first call
/// of `driver()` opens the driver (`libcuda.so.1`, `nvcuda.dll` on Windows),
/// asks it for every entry point wrapir uses through `cuGetProcAddress`, each
/// at the ABI version whose signature this header names, and initialises it.
/// So the same binary starts on a machine with no GPU or no driver at all,
/// and learns that as an error value — "the CUDA driver is not available:
/// libcuda.so.1: cannot open shared object file" or "no CUDA device" — that
/// it can print, skip on, or fall back from.
///
/// Why by version: the driver keeps several ABIs of one function
/// (`cuMemAlloc` and `cuMemAlloc_v2`, `cuEventElapsedTime` and its 12.8
/// form); naming the version pins the one whose signature we call, whatever
/// driver is installed, and a driver too old to have it is a diagnostic
/// naming the function, never a call through the wrong signature.
///
/// Every failing driver call becomes a `Diagnostic` naming the call, what it
/// acted on (a kernel, a module, a size) and the driver's own error name and
/// text: `cuModuleGetFunction(kernel 'triton_poi_0'): CUDA_ERROR_NOT_FOUND:
/// named symbol not found`.
///
/// Only <cuda.h> and <cudaTypedefs.h> are included, for types; nothing here
/// needs the CUDA runtime or nvcc.

#include <wrapir/diagnostic.hpp>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <mutex>
#include <string>
#include <string_view>

#if defined(_WIN32)
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace wrapir::cuda {

/// What an operation that yields no value returns: success, or the
/// diagnostic. The one `Result<void>` of the library, named for brevity.
using Status = Result<void>;

/// Every driver function wrapir calls, with the CUDA version of the ABI it
/// calls (the suffix of its `PFN_<name>_v<version>` type in
/// <cudaTypedefs.h>). One list, so that the table, the loader and the
/// messages cannot disagree.
#define WRAPIR_CUDA_DRIVER_FUNCTIONS(X)  \
  X(cuDriverGetVersion, 2020)            \
  X(cuInit, 2000)                        \
  X(cuGetErrorName, 6000)                \
  X(cuGetErrorString, 6000)              \
  X(cuDeviceGetCount, 2000)              \
  X(cuDeviceGet, 2000)                   \
  X(cuDeviceGetName, 2000)               \
  X(cuDeviceGetAttribute, 2000)          \
  X(cuDeviceTotalMem, 3020)              \
  X(cuDevicePrimaryCtxRetain, 7000)      \
  X(cuDevicePrimaryCtxRelease, 11000)    \
  X(cuCtxSetCurrent, 4000)               \
  X(cuCtxGetCurrent, 4000)               \
  X(cuCtxSynchronize, 2000)              \
  X(cuModuleLoadDataEx, 2010)            \
  X(cuModuleUnload, 2000)                \
  X(cuModuleGetFunction, 2000)           \
  X(cuFuncGetAttribute, 2020)            \
  X(cuFuncSetAttribute, 9000)            \
  X(cuLaunchKernel, 4000)                \
  X(cuStreamCreate, 2000)                \
  X(cuStreamDestroy, 4000)               \
  X(cuStreamSynchronize, 2000)           \
  X(cuStreamQuery, 2000)                 \
  X(cuStreamWaitEvent, 3020)             \
  X(cuStreamBeginCapture, 10010)         \
  X(cuStreamEndCapture, 10000)           \
  X(cuStreamIsCapturing, 10000)          \
  X(cuEventCreate, 2000)                 \
  X(cuEventDestroy, 4000)                \
  X(cuEventRecord, 2000)                 \
  X(cuEventSynchronize, 2000)            \
  X(cuEventElapsedTime, 2000)            \
  X(cuMemGetInfo, 3020)                  \
  X(cuMemAlloc, 3020)                    \
  X(cuMemFree, 3020)                     \
  X(cuMemAllocHost, 3020)                \
  X(cuMemFreeHost, 2000)                 \
  X(cuMemcpyHtoD, 3020)                  \
  X(cuMemcpyDtoH, 3020)                  \
  X(cuMemcpyHtoDAsync, 3020)             \
  X(cuMemcpyDtoHAsync, 3020)             \
  X(cuMemcpyDtoDAsync, 3020)             \
  X(cuMemsetD8Async, 3020)               \
  X(cuGraphGetNodes, 10000)              \
  X(cuGraphGetEdges, 10000)              \
  X(cuGraphNodeGetType, 10000)           \
  X(cuGraphKernelNodeGetParams, 12000)   \
  X(cuGraphInstantiateWithFlags, 11040)  \
  X(cuGraphExecKernelNodeSetParams, 12000) \
  X(cuGraphLaunch, 10000)                \
  X(cuGraphDestroy, 10000)               \
  X(cuGraphExecDestroy, 10000)

/// Functions wrapir uses when the driver has them, and does without on
/// older drivers (their pointer stays null): checking a kernel's parameter
/// sizes needs 12.4; updating a whole executable graph in place
/// (`cuGraphExecUpdate`'s 12.0 ABI) falls back to instantiating anew.
#define WRAPIR_CUDA_OPTIONAL_DRIVER_FUNCTIONS(X) \
  X(cuFuncGetParamInfo, 12040)                   \
  X(cuGraphExecUpdate, 12000)

/// The loaded driver: one function pointer per entry of
/// `WRAPIR_CUDA_DRIVER_FUNCTIONS`, plus the driver's CUDA version
/// (12080 for 12.8). Obtained from `driver()`; never null once loaded.
struct Driver {
#define WRAPIR_CUDA_DRIVER_MEMBER(name, version) PFN_##name##_v##version name = nullptr;
  WRAPIR_CUDA_DRIVER_FUNCTIONS(WRAPIR_CUDA_DRIVER_MEMBER)
  WRAPIR_CUDA_OPTIONAL_DRIVER_FUNCTIONS(WRAPIR_CUDA_DRIVER_MEMBER)
#undef WRAPIR_CUDA_DRIVER_MEMBER
  int version = 0;
};

namespace detail {

/// "CUDA_ERROR_NOT_FOUND: named symbol not found", or the number when the
/// driver does not know the code.
inline std::string error_text(const Driver& d, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  std::string out;
  if (d.cuGetErrorName(code, &name) == CUDA_SUCCESS && name) {
    out = name;
  } else {
    out = "CUDA error " + std::to_string(static_cast<int>(code));
  }
  if (d.cuGetErrorString(code, &text) == CUDA_SUCCESS && text) {
    out += ": ";
    out += text;
  }
  return out;
}

struct LoadedDriver {
  Driver table{};
  std::string error{};  // empty when loaded and initialised
};

inline LoadedDriver load_driver() {
  LoadedDriver out;
#if defined(_WIN32)
  constexpr const char* library = "nvcuda.dll";
  HMODULE handle = ::LoadLibraryA(library);
  if (!handle) {
    out.error = "the CUDA driver is not available: " + std::string(library) + " could not be loaded (error " +
                std::to_string(::GetLastError()) + "); is the NVIDIA driver installed?";
    return out;
  }
  auto* get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
      reinterpret_cast<void*>(::GetProcAddress(handle, "cuGetProcAddress_v2")));
#else
  constexpr const char* library = "libcuda.so.1";
  // Never closed: the driver's threads and atexit handlers outlive us.
  void* handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    out.error = "the CUDA driver is not available: " + std::string(why ? why : library) +
                " (is the NVIDIA driver installed?)";
    return out;
  }
  auto* get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(handle, "cuGetProcAddress_v2"));
#endif
  if (!get_proc) {
    out.error = std::string("the CUDA driver in ") + library +
                " is older than CUDA 12.0 (it has no cuGetProcAddress_v2); wrapir needs a 12.0 or newer driver";
    return out;
  }
  Driver& d = out.table;
  bool missing = false;
  auto lookup = [&](const char* name, int version, void** slot) {
    if (missing) return;
    CUdriverProcAddressQueryResult found{};
    const CUresult r = get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
      missing = true;
      *slot = nullptr;
      out.error = std::string("the CUDA driver has no ") + name + " of CUDA " + std::to_string(version / 1000) +
                  "." + std::to_string(version % 1000 / 10) + "'s ABI" +
                  (found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? " (the driver is too old)" : "");
    }
  };
#define WRAPIR_CUDA_DRIVER_LOOKUP(name, version) lookup(#name, version, reinterpret_cast<void**>(&d.name));
  WRAPIR_CUDA_DRIVER_FUNCTIONS(WRAPIR_CUDA_DRIVER_LOOKUP)
#undef WRAPIR_CUDA_DRIVER_LOOKUP
  if (missing) return out;
  auto lookup_optional = [&](const char* name, int version, void** slot) {
    CUdriverProcAddressQueryResult found{};
    if (get_proc(name, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS)
      *slot = nullptr;
  };
#define WRAPIR_CUDA_DRIVER_LOOKUP_OPTIONAL(name, version) \
  lookup_optional(#name, version, reinterpret_cast<void**>(&d.name));
  WRAPIR_CUDA_OPTIONAL_DRIVER_FUNCTIONS(WRAPIR_CUDA_DRIVER_LOOKUP_OPTIONAL)
#undef WRAPIR_CUDA_DRIVER_LOOKUP_OPTIONAL
  if (const CUresult r = d.cuDriverGetVersion(&d.version); r != CUDA_SUCCESS) {
    out.error = "cuDriverGetVersion: " + error_text(d, r);
    return out;
  }
  if (const CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    out.error = (r == CUDA_ERROR_NO_DEVICE ? "no CUDA device: cuInit: " : "cuInit: ") + error_text(d, r);
    return out;
  }
  return out;
}

}  // namespace detail

namespace detail {
/// The outcome of loading the driver, once per process (thread-safe).
[[nodiscard]] inline const LoadedDriver& loaded_once() {
  static const LoadedDriver loaded = load_driver();
  return loaded;
}
}  // namespace detail

/// The driver, loaded and initialised on first use (thread-safe; the outcome,
/// success or failure, is kept for the life of the process).
[[nodiscard]] inline Result<const Driver*> driver() {
  const detail::LoadedDriver& loaded = detail::loaded_once();
  if (!loaded.error.empty()) return Diagnostic{loaded.error};
  return &loaded.table;
}

/// The driver for code that already holds a live CUDA object (a context, a
/// module, a stream), which proves `driver()` succeeded: the table itself,
/// with no result to build (every launch reads it).
[[nodiscard]] inline const Driver& loaded_driver() noexcept { return detail::loaded_once().table; }

/// `what` failed with `code`: "cuMemAlloc(1048576 bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory".
[[nodiscard]] inline Diagnostic driver_error(std::string_view what, CUresult code) {
  std::string message(what);
  message += ": ";
  message += detail::error_text(loaded_driver(), code);
  return Diagnostic{std::move(message)};
}

/// Success when `code` is CUDA_SUCCESS, else `driver_error(what, code)`.
[[nodiscard]] inline Status check(CUresult code, std::string_view what) {
  if (code == CUDA_SUCCESS) return {};
  return driver_error(what, code);
}

}  // namespace wrapir::cuda
