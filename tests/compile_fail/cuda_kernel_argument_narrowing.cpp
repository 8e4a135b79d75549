// expect-error: kernel_argument<3, int, long
// expect-error: does not convert to the declared parameter implicitly and without narrowing
// A 64-bit count passed where the kernel declares a 32-bit one would be cut
// silently by a packed launch; a typed kernel refuses it at compile time and
// names the argument's position (3, 0-based) and both types.
#include <wrapir/cuda/launch.hpp>

#include <cstdint>

namespace cuda = wrapir::cuda;

cuda::Status launch_add(const cuda::Kernel<cuda::DevicePtr<float>, cuda::DevicePtr<const float>,
                                           cuda::DevicePtr<const float>, std::int32_t>& add,
                        cuda::DevicePtr<float> out, cuda::DevicePtr<const float> a, cuda::DevicePtr<const float> b,
                        std::int64_t n) {
  return add({}, out, a, b, n);
}
