"""Conv2d + ReLU (the convolution is an extern kernel on the CPU)."""
import torch


# On CUDA the C++ executor stops at an extern it has no CUDA implementation of.
expect_failing_paths = {
    "executor@cuda": "the executor has no CUDA extern for extern_kernels.convolution yet (issue 14)",
    "executor+arena@cuda": "the executor has no CUDA extern for extern_kernels.convolution yet (issue 14)",
    "cpp@cuda": "the executor has no CUDA extern for extern_kernels.convolution yet (issue 14)",
    "cpp+arena@cuda": "the executor has no CUDA extern for extern_kernels.convolution yet (issue 14)",
}


def model():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU()).eval()
    return net, (torch.randn(2, 3, 16, 16),)
