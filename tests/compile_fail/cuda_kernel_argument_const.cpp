// expect-error: kernel_argument<0, wrapir::cuda::DevicePtr<float>, wrapir::cuda::DevicePtr<const float>
// A read-only pointer passed where the kernel writes: the typed kernel
// refuses to drop const, naming argument 0.
#include <wrapir/cuda/launch.hpp>

namespace cuda = wrapir::cuda;

cuda::Status scale(const cuda::Kernel<cuda::DevicePtr<float>, float>& k, cuda::DevicePtr<const float> data) {
  return k({}, data, 2.0f);
}
