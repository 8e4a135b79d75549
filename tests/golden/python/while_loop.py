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


triton_poi_fused_sub_0 = async_compile.triton('triton_poi_fused_sub_0', '''@triton.jit
def triton_poi_fused_sub_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    pass
''', device_str='cuda')


def cond_fn_0(args):
    arg0_1, s0 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = torch.ops.aten.any.default(arg0_1)
    return (buf0, )


def body_fn_0(args):
    arg0_1, s0 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((s0, ), (1, ), torch.float32)
        stream0 = get_raw_stream(0)
        triton_poi_fused_sub_0.run(arg0_1, buf0, s0, stream=stream0)
    return (buf0, )


async_compile.wait(globals())
del async_compile


def call(args):
    s0, arg0_1 = args
    args.clear()
    assert_size_stride(arg0_1, (s0, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = arg0_1
        cond_fn_0_args = [buf0, s0]
        (cond_fn_0_result,) = cond_fn_0(cond_fn_0_args)
        if not cond_fn_0_result.item():
            buf0 = arg0_1.clone()
        while cond_fn_0_result.item():
            body_fn_0_args = [buf0, s0]
            (buf0,) = body_fn_0(body_fn_0_args)
            cond_fn_0_args = [buf0, s0]
            (cond_fn_0_result,) = cond_fn_0(cond_fn_0_args)
    return (buf0, )


def get_args():
    from torch._dynamo.testing import rand_strided
    s0 = 16
    arg0_1 = rand_strided((16, ), (1, ), device='cuda:0', dtype=torch.float32)
    return [s0, arg0_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('loop', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
