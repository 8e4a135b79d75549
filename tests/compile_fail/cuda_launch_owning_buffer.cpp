// expect-error: pass a buffer's address \(buffer.address\(\) or buffer.as<T>\(\)\), not the buffer
// Passing the owning buffer object instead of its address is caught at
// compile time.
#include <wrapir/cuda/launch.hpp>

namespace cuda = wrapir::cuda;

cuda::Status run(const cuda::Function& f, const cuda::DeviceBuffer& data) { return cuda::launch(f, {}, data); }
