"""An MLP block: LayerNorm, Linear, GELU, Linear (extern GEMMs and fused kernels)."""
import torch


class Mlp(torch.nn.Module):
    def __init__(self, width=64, hidden=256):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, hidden)
        self.down = torch.nn.Linear(hidden, width)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def model():
    torch.manual_seed(0)
    return Mlp().eval(), (torch.randn(32, 64),)
