"""torch.cond under dynamic shapes: the subgraphs take the size symbols
(s27, s77) as operands beside the tensor; checked at 1x, 2x and 3x the
example's sizes."""
import torch


def model():
    def branchy(x):
        return torch.cond(x.mean() > 0, lambda t: t.sin() * 2.0, lambda t: t.cos() + 1.0, (x,))

    return branchy, (torch.randn(8, 16),), {"dynamic": True}
