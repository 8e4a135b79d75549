"""scatter_add into zeros, then pointwise work on the result."""
import torch


def model():
    index = torch.randint(0, 64, (128,), generator=torch.Generator().manual_seed(0))

    def scattered(src):
        out = torch.zeros(64, device=src.device).scatter_add(0, index.to(src.device), src)
        return out * 2.0

    return scattered, (torch.randn(128),)
