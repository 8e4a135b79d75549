// wrapir::cuda checks that need no device: Triton metadata, the typed-kernel
// conversion rule, and error values where there is no driver.

#include <wrapir/cuda/context.hpp>
#include <wrapir/cuda/launch.hpp>
#include <wrapir/cuda/stream.hpp>
#include <wrapir/cuda/triton.hpp>
#include <wrapir/cuda/triton_json.hpp>
#if defined(WRAPIR_TEST_BOOST_JSON_HEADER_ONLY)
#include <boost/json/src.hpp>  // Boost.JSON compiled into this test (no libboost_json here)
#endif

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

namespace cuda = wrapir::cuda;

namespace {

std::string error_of(const wrapir::Result<cuda::TritonMetadata>& r) { return r ? std::string("<ok>") : r.error().message; }

}  // namespace

TEST_CASE("Triton metadata JSON: the keys launching needs") {
  // Shaped like Triton 3.6's metadata: extra keys are ignored.
  auto m = cuda::triton_metadata_from_json(R"({"hash": "ab12", "target": {"backend": "cuda", "arch": 90},
      "num_warps": 8, "num_ctas": 1, "num_stages": 4, "shared": 131072, "name": "matmul_kernel",
      "global_scratch_size": 0, "global_scratch_align": 1, "profile_scratch_size": 0, "profile_scratch_align": 1,
      "cluster_dims": [1, 1, 1]})");
  REQUIRE(m.ok());
  CHECK(m->name == "matmul_kernel");
  CHECK(m->num_warps == 8);
  CHECK(m->shared_bytes == 131072);
  CHECK(m->global_scratch_bytes == 0);

  auto minimal = cuda::triton_metadata_from_json(R"({"name": "k", "num_warps": 4, "shared": 0})");
  REQUIRE(minimal.ok());
  CHECK(minimal->num_ctas == 1);
  CHECK(minimal->hidden_parameters == 2);

  auto scratch = cuda::triton_metadata_from_json(
      R"({"name": "k", "num_warps": 4, "shared": 0, "global_scratch_size": 256, "global_scratch_align": 128})");
  REQUIRE(scratch.ok());
  CHECK(scratch->global_scratch_bytes == 256);
  CHECK(scratch->global_scratch_align == 128);
}

TEST_CASE("Triton metadata JSON: each bad input names its key") {
  CHECK(error_of(cuda::triton_metadata_from_json("{")).starts_with("Triton metadata: not JSON: "));
  CHECK(error_of(cuda::triton_metadata_from_json("[1]")) == "Triton metadata: the document is not a JSON object");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"num_warps": 4, "shared": 0})")) ==
        "Triton metadata: 'name' is missing");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"name": 3, "num_warps": 4, "shared": 0})")) ==
        "Triton metadata: 'name' is not a string");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"name": "k", "shared": 0})")) ==
        "Triton metadata: 'num_warps' is missing");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"name": "k", "num_warps": 64, "shared": 0})")) ==
        "Triton metadata: 'num_warps' is 64, not in 1..32");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"name": "k", "num_warps": 4.5, "shared": 0})")) ==
        "Triton metadata: 'num_warps' is not an integer in 1..32");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"name": "k", "num_warps": 4, "shared": -1})")) ==
        "Triton metadata: 'shared' is -1, not in 0..2147483647");
  CHECK(error_of(cuda::triton_metadata_from_json(
            R"({"name": "k", "num_warps": 4, "shared": 0, "global_scratch_size": 18446744073709551615})")) ==
        "Triton metadata: 'global_scratch_size' is not an integer in 0..9223372036854775807");
  CHECK(error_of(cuda::triton_metadata_from_json(R"({"name": "k", "num_warps": 4, "shared": 0, "num_ctas": 2})")) ==
        "Triton kernel 'k': num_ctas 2 needs thread-block clusters, which wrapir does not launch (Inductor compiles "
        "num_ctas=1)");
  CHECK(error_of(cuda::triton_metadata_from_json(
            R"({"name": "k", "num_warps": 4, "shared": 0, "global_scratch_align": 48})")) ==
        "Triton kernel 'k': global scratch alignment 48 is not a power of two up to 256");
}

TEST_CASE("validate(TritonMetadata) checks hand-filled metadata") {
  cuda::TritonMetadata m;
  CHECK(validate(m).error().message == "Triton metadata: the kernel name is empty");
  m.name = "k";
  CHECK(validate(m).ok());
  m.hidden_parameters = 3;
  CHECK(validate(m).error().message == "Triton kernel 'k': hidden_parameters 3 is not 0, 1 or 2");
  m.hidden_parameters = 2;
  m.profile_scratch_bytes = -8;
  CHECK(validate(m).error().message == "Triton kernel 'k': profile scratch size -8 is negative");
}

// The typed-kernel rule, checked at compile time: implicit and not narrowing.
namespace {
using cuda::DevicePtr;
using cuda::detail::passes_as;
static_assert(passes_as<DevicePtr<const float>, DevicePtr<float>>);
static_assert(passes_as<DevicePtr<float>, DevicePtr<float>>);
static_assert(!passes_as<DevicePtr<float>, DevicePtr<const float>>, "const is never dropped");
static_assert(!passes_as<DevicePtr<float>, DevicePtr<int>>, "element types never change silently");
static_assert(!passes_as<DevicePtr<float>, CUdeviceptr>, "a raw address is not a typed pointer");
static_assert(passes_as<std::int64_t, std::int32_t>, "widening is fine");
static_assert(!passes_as<std::int32_t, std::int64_t>, "narrowing is not");
static_assert(!passes_as<std::int32_t, std::uint32_t>, "nor a change of signedness");
static_assert(!passes_as<float, double>);
static_assert(!passes_as<float, int>, "int to float can lose precision");
static_assert(sizeof(DevicePtr<float>) == sizeof(CUdeviceptr));
static_assert(std::is_trivially_copyable_v<DevicePtr<float>>);
}  // namespace

TEST_CASE("without a driver or device, every entry point answers with an error value") {
  auto n = cuda::device_count();
  if (n.ok()) {
    MESSAGE("this machine has a CUDA device; the no-driver path is checked on machines without one");
    return;
  }
  const std::string why = n.error().message;
  CHECK((why.starts_with("the CUDA driver is not available") || why.starts_with("no CUDA device")));
  CHECK(cuda::no_device_reason() == why);
  CHECK(cuda::device_info(0).error().message == why);
  CHECK(cuda::Context::primary(0).error().message == why);
  CHECK(cuda::use_device(0).error().message == why);
  CHECK(cuda::DeviceBuffer::allocate(16).error().message == why);
  CHECK(cuda::DeviceBuffer::allocate(0).ok());  // zero bytes need no driver
  CHECK(cuda::PinnedBuffer::allocate(16).error().message == why);
  CHECK(cuda::Stream::create().error().message == why);
  CHECK(cuda::Event::create().error().message == why);
  const char ptx[] = ".version 8.0";
  CHECK(cuda::Module::load(std::as_bytes(std::span(ptx)), "probe").error().message == why);
}
