from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
from torch._inductor.codegen.multi_kernel import MultiKernelCall
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()


triton_red_fused_sum_0 = async_compile.triton('triton_red_fused_sum_0', '''@triton.jit
def red(): pass
''', device_str='cuda')


triton_per_fused_sum_1 = async_compile.triton('triton_per_fused_sum_1', '''@triton.jit
def per(): pass
''', device_str='cuda')


triton_mm_2 = async_compile.triton('triton_mm_2', '''@triton.jit
def mm0(): pass
''', device_str='cuda')


triton_mm_3 = async_compile.triton('triton_mm_3', '''@triton.jit
def mm1(): pass
''', device_str='cuda')


arg_index = {
    0: [slice(0, 4, None)],
    1: [slice(0, 4, None)],
}
multi_kernel_0 = async_compile.multi_kernel('multi_kernel_0', [
    triton_red_fused_sum_0,
    triton_per_fused_sum_1,
], arg_index=arg_index)


arg_index = {
    0: [slice(0, 3, None)],
    1: [slice(0, 2, None), slice(3, 4, None)],
}
multi_kernel_1 = async_compile.size_hint_multi_kernel('multi_kernel_1', {((64, 1024), (64,)): triton_mm_2, None: triton_mm_3}, arg_index=arg_index)


async_compile.wait(globals())
del async_compile


def call(args):
    arg0_1, = args
    args.clear()
    assert_size_stride(arg0_1, (64, 1024), (1024, 1))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((64, ), (1, ), torch.float32)
        stream0 = get_raw_stream(0)
        multi_kernel_0.run(arg0_1, buf0, 64, 1024, stream=stream0)
        multi_kernel_1.run(arg0_1, buf0, 64, 1024, stream=stream0)
        del arg0_1
    return (buf0, )


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((64, 1024), (1024, 1), device='cuda:0', dtype=torch.float32)
    return [arg0_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('multi', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
