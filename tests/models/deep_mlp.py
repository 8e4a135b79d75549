"""A deep residual MLP: 32 pre-norm blocks (LayerNorm, Linear, GELU, Linear,
residual add). Well over a hundred launches per call, for the host-overhead
benchmarks of the executor (issue 14 §5) and as the corpus's longest program."""
import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class Deep(torch.nn.Module):
    def __init__(self, depth=32, width=32):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(width) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(x)


def model():
    torch.manual_seed(0)
    return Deep().eval(), (torch.randn(8, 32),)
