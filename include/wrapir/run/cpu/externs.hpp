#pragma once
/// \file
/// The reference externs of the CPU backend, registered by the names
/// Inductor CPU programs spell: `register_reference_externs(registry)`.
///
/// | names | implementation |
/// |---|---|
/// | `extern_kernels.mm`, `extern_kernels.addmm`, `extern_kernels.bmm` (out=), `aten.mm.default`, `aten.addmm.default`, `aten.bmm.default` | run/cpu/blas_externs.hpp (CBLAS) |
/// | `extern_kernels.convolution`, `aten.convolution.default` | run/cpu/conv_externs.hpp |
/// | `aten.topk.default` | run/cpu/index_externs.hpp |
/// | `aten.scatter_`, `.src`, `.value`, `.reduce`, `.value_reduce`; `aten.scatter_add_`; `aten.scatter_reduce_.two` (in place, ScatterFallback); `aten.scatter.*`, `aten.scatter_add.default`, `aten.scatter_reduce.two` (functional) | run/cpu/index_externs.hpp |
/// | `aten.index_put_`, `aten.index_put_.default` (in place, IndexPutFallback); `aten.index_put.default` (functional) | run/cpu/index_externs.hpp |
/// | `aten.bucketize.Tensor` | run/cpu/index_externs.hpp |
/// | `aten._scaled_dot_product_flash_attention_for_cpu.default` | run/cpu/attention_externs.hpp (CBLAS) |
/// | `aten._scaled_dot_product_efficient_attention.default` (what CUDA programs call; on CUDA through run/host_staged_externs.hpp) | run/cpu/attention_externs.hpp (CBLAS) |
///
/// Every `aten.X` name is also registered as `torch.ops.aten.X`, the other
/// spelling programs use. Link `wrapir::cpu` (OpenBLAS).

#include <wrapir/diagnostic.hpp>
#include <wrapir/run/cpu/attention_externs.hpp>
#include <wrapir/run/cpu/blas_externs.hpp>
#include <wrapir/run/cpu/conv_externs.hpp>
#include <wrapir/run/cpu/index_externs.hpp>
#include <wrapir/run/extern.hpp>

#include <string>
#include <utility>
#include <vector>

namespace wrapir::run::cpu {

/// The (name, function) pairs `register_reference_externs` adds.
[[nodiscard]] inline std::vector<std::pair<std::string, ExternFn>> reference_externs() {
  std::vector<std::pair<std::string, ExternFn>> out;
  auto aten = [&](const std::string& name, ExternFn fn) {
    out.emplace_back("aten." + name, fn);
    out.emplace_back("torch.ops.aten." + name, std::move(fn));
  };
  out.emplace_back("extern_kernels.mm", mm_extern);
  out.emplace_back("extern_kernels.addmm", addmm_extern);
  out.emplace_back("extern_kernels.bmm", bmm_extern);
  out.emplace_back("extern_kernels.convolution", convolution_extern);
  aten("mm.default", mm_extern);
  aten("addmm.default", addmm_extern);
  aten("bmm.default", bmm_extern);
  aten("convolution.default", convolution_extern);
  aten("topk.default", topk_extern);
  for (const char* overload : {"scatter_", "scatter_.src", "scatter_.value", "scatter_.reduce", "scatter_.value_reduce"})
    aten(overload, scatter_extern);
  for (const char* overload : {"scatter.src", "scatter.value", "scatter.reduce", "scatter.value_reduce"})
    aten(overload, scatter_functional_extern);
  aten("scatter_add_", scatter_add_extern);
  aten("scatter_add_.default", scatter_add_extern);
  aten("scatter_add.default", scatter_add_functional_extern);
  aten("scatter_reduce_.two", scatter_reduce_extern);
  aten("scatter_reduce.two", scatter_reduce_functional_extern);
  aten("index_put_", index_put_extern);
  aten("index_put_.default", index_put_extern);
  aten("index_put.default", index_put_functional_extern);
  aten("bucketize.Tensor", bucketize_extern);
  aten("_scaled_dot_product_flash_attention_for_cpu.default", flash_attention_for_cpu_extern);
  aten("_scaled_dot_product_efficient_attention.default", efficient_attention_extern);
  return out;
}

/// Adds every reference extern to `registry`; a name already registered
/// (a user's own implementation) is kept and reported in the diagnostic,
/// after all the others were added.
[[nodiscard]] inline Result<void> register_reference_externs(ExternRegistry& registry) {
  std::string clashes;
  for (auto& [name, fn] : reference_externs()) {
    if (registry.find(name) != nullptr) {
      clashes += (clashes.empty() ? "" : ", ") + name;
      continue;
    }
    if (auto added = registry.add(name, std::move(fn)); !added) return added;
  }
  if (!clashes.empty()) return Diagnostic{"externs already registered, kept as they were: " + clashes};
  return {};
}

}  // namespace wrapir::run::cpu
