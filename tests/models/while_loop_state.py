"""torch._higher_order_ops.while_loop with a tensor state (a counter and an
accumulator): a wrapir WhileLoop with cond and body subgraphs."""
import torch
from torch._higher_order_ops import while_loop


def model():
    def looped(x):
        def cond_fn(i, acc):
            return i < 5

        def body_fn(i, acc):
            return i + 1, acc * 0.5 + 1.0

        return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64, device=x.device), x))

    return looped, (torch.randn(8, 16),)
