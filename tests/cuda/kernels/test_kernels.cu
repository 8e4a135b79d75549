// Kernels for the wrapir::cuda tests and benchmarks, loaded through the
// driver API from the cubin, PTX and fatbin the build makes of this file
// (tests/cuda/CMakeLists.txt). extern "C": looked up by plain name.

#include <cstdint>

extern "C" {

__global__ void add_f32(float* out, const float* a, const float* b, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = a[i] + b[i];
}

// y[i] = alpha * x[i] + y[i] over a 64-bit count: checks an 8-byte scalar
// after a 4-byte one (the driver packs parameters at their alignment).
__global__ void axpy_f32(float* y, const float* x, float alpha, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

// Adds `amount` to each element: not idempotent, so a benchmark that does
// not restore its inputs is caught by the result.
__global__ void add_in_place_i32(int* data, int amount, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] += amount;
}

// Writes each block's (x, y, z) index: checks 3-D grids.
__global__ void block_ids(int* out) {
  const unsigned linear = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) {
    out[3 * linear + 0] = static_cast<int>(blockIdx.x);
    out[3 * linear + 1] = static_cast<int>(blockIdx.y);
    out[3 * linear + 2] = static_cast<int>(blockIdx.z);
  }
}

// Uses all of its dynamic shared memory (more than 48 KB in the tests):
// each thread writes its slot, then reads its neighbour's.
__global__ void shared_rotate(int* out, int words) {
  extern __shared__ int slots[];
  for (int i = static_cast<int>(threadIdx.x); i < words; i += static_cast<int>(blockDim.x)) slots[i] = i * 3;
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < words; i += static_cast<int>(blockDim.x))
    out[i] = slots[(i + 1) % words];
}

// Does nothing: the launch-overhead benchmarks time the host side.
__global__ void empty_kernel() {}

// One parameter of each common width, for the launch benchmarks.
__global__ void empty_with_args(float*, const float*, int, std::int64_t) {}

}  // extern "C"
