"""Softmax attention written out: (q @ k^T) * scale, softmax, @ v (batched GEMMs
as extern kernels, the softmax as fused C++ reductions)."""
import math

import torch


def model():
    def attention(q, k, v):
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
        return torch.softmax(scores, dim=-1) @ v

    shape = (2, 4, 16, 32)  # batch, heads, sequence, head dim
    return attention, (torch.randn(shape), torch.randn(shape), torch.randn(shape))

# The C++ executor has no reference implementation of CPU SDPA yet (issue 14 §2).
expect_failing_paths = {
    "executor": "no reference extern for aten._scaled_dot_product_flash_attention_for_cpu",
    "executor+arena": "no reference extern for aten._scaled_dot_product_flash_attention_for_cpu",
    # The emitted C++ program calls its externs through the same registry (run/c_abi_adapter.hpp):
    # these pass together with the executor's once the reference extern exists.
    "cpp": "no reference extern for aten._scaled_dot_product_flash_attention_for_cpu",
    "cpp+arena": "no reference extern for aten._scaled_dot_product_flash_attention_for_cpu",
}
