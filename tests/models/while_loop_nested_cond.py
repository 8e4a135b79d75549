"""A torch.cond inside a while_loop body: control flow nested in a subgraph
(the branches are subgraphs of the body, captured from the body's wrapper
and attached under it)."""
import torch
from torch._higher_order_ops import while_loop


def model():
    def looped(x):
        def cond_fn(i, a):
            return i < 4

        def body_fn(i, a):
            b = torch.cond(a.sum() > 0, lambda t: t - 1.0, lambda t: t * -0.5 + 0.25, (a,))
            return i + 1, b

        return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64, device=x.device), x))

    return looped, (torch.randn(8, 16),)
