#pragma once
/// \file
/// The top of a generated Python module (emit/python.hpp): the imports,
/// only those the rendered functions used, and the header — the aliases
/// Inductor's wrappers bind, constants, kernel and multi-kernel
/// definitions.

#include <wrapir/emit/detail/python_literals.hpp>
#include <wrapir/emit/detail/python_module.hpp>
#include <wrapir/emit/python.hpp>

#include <string>

namespace wrapir::python::detail {

inline void write_imports(std::string& out, const ModuleState& m, const PythonOptions& options) {
  out +=
      "from ctypes import c_void_p, c_long, c_int\n"
      "import torch\n"
      "import math\n"
      "import random\n"
      "import os\n"
      "import tempfile\n"
      "from math import inf, nan\n"
      "from cmath import nanj\n"
      "from torch._inductor.hooks import run_intermediate_hooks\n"
      "from torch._inductor.utils import maybe_profile\n"
      "from torch._inductor.codegen.memory_planning import _align as align\n"
      "from torch import device, empty_strided\n"
      "from torch._inductor.async_compile import AsyncCompile\n"
      "from torch._inductor.select_algorithm import extern_kernels\n";
  if (m.uses_ctypes_floats) out += "from ctypes import c_float, c_double, c_bool\n";
  if (m.uses_side_streams) out += "import collections\n";
  if (options.debug_level > 0)
    out += "from torch._inductor.codegen.debug_utils import _print_debugging_tensor_value_info\n";
  if (m.uses_multi_kernel) out += "from torch._inductor.codegen.multi_kernel import MultiKernelCall\n";
  if (m.uses_triton)
    out +=
        "import triton\n"
        "import triton.language as tl\n"
        "from torch._inductor.runtime.triton_heuristics import start_graph, end_graph\n";
  if (m.uses_raw_stream) out += "from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n";
}

inline void write_header(std::string& out, const ModuleState& m, const PythonOptions& options) {
  out +=
      "\n"
      "aten = torch.ops.aten\n"
      "inductor_ops = torch.ops.inductor\n"
      "_quantized = torch.ops._quantized\n"
      "assert_size_stride = torch._C._dynamo.guards.assert_size_stride\n"
      "assert_alignment = torch._C._dynamo.guards.assert_alignment\n"
      "empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu\n"
      "empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned\n"
      "empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda\n"
      "empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu\n"
      "empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia\n"
      "reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor\n"
      "alloc_from_pool = torch.ops.inductor._alloc_from_pool\n"
      "async_compile = AsyncCompile()\n";
  if (m.uses_p2p) out += "empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p\n";
  // Created lazily on the device current at first use (inside the call).
  if (m.uses_side_streams) out += "side_streams = collections.defaultdict(torch.cuda.Stream)\n";
  out += m.constant_placeholders;
  if (options.debug_level == 1) {
    out += "os.makedirs(";
    (void)append_string_literal(out, options.debug_save_directory);  // checked before rendering
    out += ", exist_ok=True)\n";
  }
  out += m.kernel_definitions;
  out += m.multi_kernel_definitions;
}

}  // namespace wrapir::python::detail
