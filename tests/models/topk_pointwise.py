"""topk (a multi-output fallback on the CPU) followed by pointwise work on both results."""
import torch


# On CUDA the C++ executor stops at an extern it has no CUDA implementation of.
expect_failing_paths = {
    "executor@cuda": "the executor has no CUDA extern for aten.topk yet (issue 14)",
    "executor+arena@cuda": "the executor has no CUDA extern for aten.topk yet (issue 14)",
    "cpp@cuda": "the executor has no CUDA extern for aten.topk yet (issue 14)",
    "cpp+arena@cuda": "the executor has no CUDA extern for aten.topk yet (issue 14)",
}


def model():
    def topk_pointwise(x):
        values, indices = torch.topk(x, 4, dim=-1)
        return values.sigmoid() * 2.0, indices + 1

    return topk_pointwise, (torch.randn(16, 100),)
