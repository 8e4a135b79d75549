// A CUDA driver that does nothing: built as a shared library whose soname
// is libcuda.so.1, so that a benchmark linked against it finds it when
// wrapir::cuda::driver() opens "libcuda.so.1" (the loader hands back the
// library already loaded under that soname). Every entry point wrapir
// loads returns CUDA_SUCCESS at once; the ones that hand something back
// (handles, device addresses, attributes) write plausible values. Each call
// is counted per function, so a benchmark can say how many driver calls of
// each kind a program call makes (bench/null_driver/executor_host_bench.cpp).
//
// Device addresses are fake (never dereferenced): the executor only offsets
// and packs them. Copies and fills do nothing. Streams and events get
// distinct handles, and between wrapir_null_cuda_log_start and _stop the
// calls that take a stream (launches, copies, fills, event records and
// waits, synchronisations) and allocations are logged in order with their
// stream and event: what a host test of stream ordering reads
// (tests/cuda/null_driver/). The log costs a relaxed load when off.

#include <wrapir/cuda/driver.hpp>

#include "null_cuda.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace {

std::atomic<std::uint64_t> counts[wrapir_null_cuda_function_count];
std::atomic<std::uint64_t> next_address{0x7f0000000000ull};
std::atomic<std::uintptr_t> next_stream{0x4000}, next_event{0x5000};

struct LogEntry {
  int function;
  std::uintptr_t stream, event;
};
constexpr int log_capacity = 4096;
LogEntry log_entries[log_capacity];
std::atomic<int> log_size{0};
std::atomic<bool> logging{false};

enum Index : int {
#define WRAPIR_NULL_INDEX(name, version) i_##name,
  WRAPIR_CUDA_DRIVER_FUNCTIONS(WRAPIR_NULL_INDEX) WRAPIR_CUDA_OPTIONAL_DRIVER_FUNCTIONS(WRAPIR_NULL_INDEX)
#undef WRAPIR_NULL_INDEX
      index_count
};
static_assert(index_count <= wrapir_null_cuda_function_count);

constexpr const char* names[] = {
#define WRAPIR_NULL_NAME(name, version) #name,
    WRAPIR_CUDA_DRIVER_FUNCTIONS(WRAPIR_NULL_NAME) WRAPIR_CUDA_OPTIONAL_DRIVER_FUNCTIONS(WRAPIR_NULL_NAME)
#undef WRAPIR_NULL_NAME
};

void count(int i) noexcept { counts[i].fetch_add(1, std::memory_order_relaxed); }

/// Counts, and logs when the log is on (entries past its capacity are lost).
void count(int i, CUstream stream, CUevent event = nullptr) noexcept {
  count(i);
  if (!logging.load(std::memory_order_relaxed)) return;
  const int at = log_size.fetch_add(1, std::memory_order_relaxed);
  if (at < log_capacity)
    log_entries[at] = LogEntry{i, reinterpret_cast<std::uintptr_t>(stream), reinterpret_cast<std::uintptr_t>(event)};
}

/// The default: count, succeed, write nothing.
template <int I, class F>
struct Stub;
template <int I, class... A>
struct Stub<I, CUresult(CUDAAPI*)(A...)> {
  static CUresult CUDAAPI call(A...) {
    count(I);
    return CUDA_SUCCESS;
  }
};

// ---- the entry points that hand something back ---------------------------
CUresult CUDAAPI driver_version(int* v) {
  count(i_cuDriverGetVersion);
  *v = 12080;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI error_text(CUresult, const char** s) {
  *s = "null driver";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_count(int* n) {
  count(i_cuDeviceGetCount);
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_get(CUdevice* d, int ordinal) {
  count(i_cuDeviceGet);
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_name(char* name, int len, CUdevice) {
  count(i_cuDeviceGetName);
  std::strncpy(name, "null driver", static_cast<std::size_t>(len));
  if (len > 0) name[len - 1] = '\0';
  return CUDA_SUCCESS;
}
CUresult CUDAAPI device_attribute(int* v, CUdevice_attribute a, CUdevice) {
  count(i_cuDeviceGetAttribute);
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    default: *v = 1; break;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI total_mem(std::size_t* bytes, CUdevice) {
  count(i_cuDeviceTotalMem);
  *bytes = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ctx_retain(CUcontext* c, CUdevice) {
  count(i_cuDevicePrimaryCtxRetain);
  *c = reinterpret_cast<CUcontext>(std::uintptr_t{0x1000});
  return CUDA_SUCCESS;
}
CUresult CUDAAPI ctx_current(CUcontext* c) {
  count(i_cuCtxGetCurrent);
  *c = reinterpret_cast<CUcontext>(std::uintptr_t{0x1000});
  return CUDA_SUCCESS;
}
CUresult CUDAAPI module_load(CUmodule* m, const void*, unsigned, CUjit_option*, void**) {
  count(i_cuModuleLoadDataEx);
  *m = reinterpret_cast<CUmodule>(std::uintptr_t{0x2000});
  return CUDA_SUCCESS;
}
CUresult CUDAAPI module_function(CUfunction* f, CUmodule, const char*) {
  count(i_cuModuleGetFunction);
  *f = reinterpret_cast<CUfunction>(std::uintptr_t{0x3000});
  return CUDA_SUCCESS;
}
CUresult CUDAAPI function_attribute(int* v, CUfunction_attribute a, CUfunction) {
  count(i_cuFuncGetAttribute);
  switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = 49152; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
    default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_create(CUstream* s, unsigned) {
  *s = reinterpret_cast<CUstream>(next_stream.fetch_add(0x10, std::memory_order_relaxed));
  count(i_cuStreamCreate, *s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_capturing(CUstream, CUstreamCaptureStatus* s) {
  count(i_cuStreamIsCapturing);
  *s = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_create(CUevent* e, unsigned) {
  *e = reinterpret_cast<CUevent>(next_event.fetch_add(0x10, std::memory_order_relaxed));
  count(i_cuEventCreate, nullptr, *e);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_record(CUevent e, CUstream s) {
  count(i_cuEventRecord, s, e);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_wait(CUstream s, CUevent e, unsigned) {
  count(i_cuStreamWaitEvent, s, e);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI stream_synchronize(CUstream s) {
  count(i_cuStreamSynchronize, s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI launch_kernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream s, void**, void**) {
  count(i_cuLaunchKernel, s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI fill_async(CUdeviceptr, unsigned char, std::size_t, CUstream s) {
  count(i_cuMemsetD8Async, s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI copy_to_device_async(CUdeviceptr, const void*, std::size_t, CUstream s) {
  count(i_cuMemcpyHtoDAsync, s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI copy_to_host_async(void*, CUdeviceptr, std::size_t, CUstream s) {
  count(i_cuMemcpyDtoHAsync, s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI copy_async(CUdeviceptr, CUdeviceptr, std::size_t, CUstream s) {
  count(i_cuMemcpyDtoDAsync, s);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI event_elapsed(float* ms, CUevent, CUevent) {
  count(i_cuEventElapsedTime);
  *ms = 0.001f;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI mem_info(std::size_t* free, std::size_t* total) {
  count(i_cuMemGetInfo);
  *free = *total = std::size_t{80} << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI mem_alloc(CUdeviceptr* p, std::size_t bytes) {
  count(i_cuMemAlloc, nullptr);
  // 512-byte aligned, never reused: a fresh fake address each time.
  *p = next_address.fetch_add((bytes + 511) / 512 * 512 + 512, std::memory_order_relaxed);
  return CUDA_SUCCESS;
}

void* lookup(std::string_view name) {
#define WRAPIR_NULL_DEFAULT(fn, version) \
  if (name == #fn) return reinterpret_cast<void*>(&Stub<i_##fn, PFN_##fn##_v##version>::call);
  if (name == "cuDriverGetVersion") return reinterpret_cast<void*>(&driver_version);
  if (name == "cuGetErrorName" || name == "cuGetErrorString") return reinterpret_cast<void*>(&error_text);
  if (name == "cuDeviceGetCount") return reinterpret_cast<void*>(&device_count);
  if (name == "cuDeviceGet") return reinterpret_cast<void*>(&device_get);
  if (name == "cuDeviceGetName") return reinterpret_cast<void*>(&device_name);
  if (name == "cuDeviceGetAttribute") return reinterpret_cast<void*>(&device_attribute);
  if (name == "cuDeviceTotalMem") return reinterpret_cast<void*>(&total_mem);
  if (name == "cuDevicePrimaryCtxRetain") return reinterpret_cast<void*>(&ctx_retain);
  if (name == "cuCtxGetCurrent") return reinterpret_cast<void*>(&ctx_current);
  if (name == "cuModuleLoadDataEx") return reinterpret_cast<void*>(&module_load);
  if (name == "cuModuleGetFunction") return reinterpret_cast<void*>(&module_function);
  if (name == "cuFuncGetAttribute") return reinterpret_cast<void*>(&function_attribute);
  if (name == "cuStreamCreate") return reinterpret_cast<void*>(&stream_create);
  if (name == "cuStreamIsCapturing") return reinterpret_cast<void*>(&stream_capturing);
  if (name == "cuEventCreate") return reinterpret_cast<void*>(&event_create);
  if (name == "cuEventElapsedTime") return reinterpret_cast<void*>(&event_elapsed);
  if (name == "cuMemGetInfo") return reinterpret_cast<void*>(&mem_info);
  if (name == "cuMemAlloc") return reinterpret_cast<void*>(&mem_alloc);
  if (name == "cuEventRecord") return reinterpret_cast<void*>(&event_record);
  if (name == "cuStreamWaitEvent") return reinterpret_cast<void*>(&stream_wait);
  if (name == "cuStreamSynchronize") return reinterpret_cast<void*>(&stream_synchronize);
  if (name == "cuLaunchKernel") return reinterpret_cast<void*>(&launch_kernel);
  if (name == "cuMemsetD8Async") return reinterpret_cast<void*>(&fill_async);
  if (name == "cuMemcpyHtoDAsync") return reinterpret_cast<void*>(&copy_to_device_async);
  if (name == "cuMemcpyDtoHAsync") return reinterpret_cast<void*>(&copy_to_host_async);
  if (name == "cuMemcpyDtoDAsync") return reinterpret_cast<void*>(&copy_async);
  // Optional functions the null driver leaves out (wrapir does without):
  // parameter-size checks and in-place graph updates.
  if (name == "cuFuncGetParamInfo" || name == "cuGraphExecUpdate") return nullptr;
  WRAPIR_CUDA_DRIVER_FUNCTIONS(WRAPIR_NULL_DEFAULT)
#undef WRAPIR_NULL_DEFAULT
  return nullptr;
}

}  // namespace

extern "C" {

WRAPIR_NULL_CUDA_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t,
                                                             CUdriverProcAddressQueryResult* status) {
  *pfn = lookup(symbol);
  if (status != nullptr) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_count_of(const char* name) {
  for (int i = 0; i < index_count; ++i)
    if (std::string_view(names[i]) == name) return i;
  return -1;
}

WRAPIR_NULL_CUDA_EXPORT void wrapir_null_cuda_counts(std::uint64_t* out, int n) {
  for (int i = 0; i < n && i < index_count; ++i) out[i] = counts[i].load(std::memory_order_relaxed);
  for (int i = index_count; i < n; ++i) out[i] = 0;
}

WRAPIR_NULL_CUDA_EXPORT const char* wrapir_null_cuda_name(int i) { return i >= 0 && i < index_count ? names[i] : ""; }

WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_functions() { return index_count; }

WRAPIR_NULL_CUDA_EXPORT void wrapir_null_cuda_log_start() {
  log_size.store(0, std::memory_order_relaxed);
  logging.store(true, std::memory_order_relaxed);
}

WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_log_stop() {
  logging.store(false, std::memory_order_relaxed);
  return std::min(log_size.load(std::memory_order_relaxed), log_capacity);
}

WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_log_entry(int i, std::uintptr_t* stream, std::uintptr_t* event) {
  if (i < 0 || i >= std::min(log_size.load(std::memory_order_relaxed), log_capacity)) return -1;
  *stream = log_entries[i].stream;
  *event = log_entries[i].event;
  return log_entries[i].function;
}

}  // extern "C"
