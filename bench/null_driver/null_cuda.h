// The null CUDA driver's counters (bench/null_driver/null_cuda.cpp).
#pragma once

#include <cstdint>

#define WRAPIR_NULL_CUDA_EXPORT __attribute__((visibility("default")))

/// More than the driver table's entries (checked in null_cuda.cpp).
inline constexpr int wrapir_null_cuda_function_count = 96;

extern "C" {
/// The counter index of driver function `name` (`cuMemAlloc`), or -1.
WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_count_of(const char* name);
/// Calls per function so far, by counter index, into out[0..n).
WRAPIR_NULL_CUDA_EXPORT void wrapir_null_cuda_counts(std::uint64_t* out, int n);
/// The name of counter `i`.
WRAPIR_NULL_CUDA_EXPORT const char* wrapir_null_cuda_name(int i);
/// How many counters there are.
WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_functions();
/// Empties the log and starts logging the calls that take a stream or an
/// event (launches, copies, fills, event records, waits, synchronisations)
/// and allocations, in order.
WRAPIR_NULL_CUDA_EXPORT void wrapir_null_cuda_log_start();
/// Stops logging; the number of entries kept (at most 4096).
WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_log_stop();
/// Entry `i`: its function's counter index (-1 past the end), the stream
/// and event it named (0 where none).
WRAPIR_NULL_CUDA_EXPORT int wrapir_null_cuda_log_entry(int i, std::uintptr_t* stream, std::uintptr_t* event);
}
