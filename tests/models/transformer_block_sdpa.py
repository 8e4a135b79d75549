"""A pre-norm transformer block: LayerNorm, QKV projection,
F.scaled_dot_product_attention (a multi-output fallback on the CPU),
output projection, residual, LayerNorm, GELU MLP, residual."""
import torch
import torch.nn.functional as F

# SDPA's result (a fallback kernel's output) is checked with
# `assert_alignment(buf6, 16, ...)`: wrapir's AssertAlignment line.


class Block(torch.nn.Module):
    def __init__(self, width=64, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        batch, seq, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(batch, seq, width))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


# On CUDA the C++ executor stops at an extern it has no CUDA implementation of.
expect_failing_paths = {
    "executor@cuda": "the executor has no CUDA extern for CUDA scaled-dot-product attention yet (issue 14)",
    "executor+arena@cuda": "the executor has no CUDA extern for CUDA scaled-dot-product attention yet (issue 14)",
    "cpp@cuda": "the executor has no CUDA extern for CUDA scaled-dot-product attention yet (issue 14)",
    "cpp+arena@cuda": "the executor has no CUDA extern for CUDA scaled-dot-product attention yet (issue 14)",
}


def model():
    torch.manual_seed(0)
    return Block().eval(), (torch.randn(2, 16, 64),)
