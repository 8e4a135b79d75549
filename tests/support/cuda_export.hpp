#pragma once
// What the GPU tests of a real CUDA export share (tests/cuda/executor_test.cpp,
// tests/cuda/cpp_emit_run_test.cpp): the export in
// tests/cuda/data/mlp_layernorm_gelu, its program, its inputs and eager's
// outputs, and tensors moved between the host and the CUDA backend's device.
// Include after gpu_test_main.hpp (it uses `must`).

#include <wrapir/io/json.hpp>
#include <wrapir/io/safetensors.hpp>
#include <wrapir/ir/program.hpp>
#include <wrapir/run/cuda/backend.hpp>
#include <wrapir/run/tensor.hpp>

#include <boost/variant2/variant.hpp>
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace wrapir_test {

/// The export: program.json, kernels.json and the cubins, inputs.safetensors
/// and eager's outputs.safetensors.
inline std::filesystem::path mlp_export_dir() {
  return std::filesystem::path(WRAPIR_SOURCE_DIR) / "tests" / "cuda" / "data" / "mlp_layernorm_gelu";
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The export's program (DIR/program.json).
inline wrapir::ir::Program load_export_program(const std::filesystem::path& dir = mlp_export_dir()) {
  return must(wrapir::io::program_from_json(read_text(dir / "program.json")));
}

/// The export's inputs (DIR/inputs.safetensors), or eager's outputs.
inline wrapir::io::TensorFile load_export_tensors(const std::string& file, const std::filesystem::path& dir = mlp_export_dir()) {
  return must(wrapir::io::read_safetensors(dir / file));
}

/// A device copy of host tensor `t` (queued on the backend's stream).
inline wrapir::run::Tensor to_device(const wrapir::run::cuda::CudaBackend& backend, const wrapir::run::Tensor& t) {
  auto storage = must(backend.allocate(wrapir::cuda_device(0), t.storage->nbytes));
  must(backend.copy(storage->data, storage->device, t.storage->data, t.device(), t.storage->nbytes));
  return wrapir::run::Tensor{storage, t.dtype, t.sizes, t.strides, t.offset};
}

/// Device copies of `program`'s inputs, found by name in `inputs`, in the
/// program's input order.
inline std::vector<wrapir::run::Tensor> inputs_on_device(const wrapir::ir::Program& program,
                                                         const wrapir::io::TensorFile& inputs,
                                                         const wrapir::run::cuda::CudaBackend& backend) {
  std::vector<wrapir::run::Tensor> out;
  for (const wrapir::ir::ProgramInput& in : program.inputs) {
    const std::string& name = program.buffer(boost::variant2::get<wrapir::ir::BufferId>(in)).name;
    const wrapir::run::Tensor* t = inputs.find(name);
    REQUIRE_MESSAGE(t != nullptr, name);
    out.push_back(to_device(backend, *t));
  }
  return out;
}

/// The elements of a contiguous float32 device tensor, on the host.
inline std::vector<float> to_host(const wrapir::run::cuda::CudaBackend& backend, const wrapir::run::Tensor& t) {
  REQUIRE(t.is_contiguous());
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  must(backend.copy(reinterpret_cast<std::byte*>(out.data()), wrapir::ir::Device{}, static_cast<const std::byte*>(t.data()),
                    t.device(), static_cast<std::int64_t>(out.size() * sizeof(float))));
  must(backend.synchronize());
  return out;
}

}  // namespace wrapir_test
