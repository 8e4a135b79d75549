"""Softmax attention written out: (q @ k^T) * scale, softmax, @ v. On the CPU
Inductor's pattern matcher makes it one call of
aten._scaled_dot_product_flash_attention_for_cpu (a multi-output extern); on
CUDA, batched GEMMs as extern kernels and the softmax as a fused reduction."""
import math

import torch


def model():
    def attention(q, k, v):
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
        return torch.softmax(scores, dim=-1) @ v

    shape = (2, 4, 16, 32)  # batch, heads, sequence, head dim
    return attention, (torch.randn(shape), torch.randn(shape), torch.randn(shape))
