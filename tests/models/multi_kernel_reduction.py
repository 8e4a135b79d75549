"""A row reduction under triton.multi_kernel=1. The setting concerns Triton
kernels: on the CPU (C++ kernels) Inductor ignores it and the program is the
same as without it (no MultiKernel lines)."""
import torch


def model():
    def reduce(x):
        return (x - x.amax(-1, keepdim=True)).exp().sum(-1)

    return reduce, (torch.randn(64, 512),), {"config": {"triton.multi_kernel": 1}}
