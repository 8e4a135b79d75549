"""while_loop with two carried tensors and a counter, a weight passed to the
body as an additional (not carried) input; then a loop whose condition is
false at the start, whose results must be new tensors (eager copies; the
carried input itself must not come back)."""
import torch
from torch._higher_order_ops import while_loop


def model():
    def looped(x, w):
        def cond_fn(i, a, b):
            return i < 3

        def body_fn(i, a, b):
            return i + 1, torch.tanh(a @ w), b + a.sum(0)

        i, a, b = while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64, device=x.device), x,
                                                      torch.zeros(16, device=x.device)))
        j, y = while_loop(lambda j, y: j > 100, lambda j, y: (j + 1, y * 2.0),
                          (torch.zeros((), dtype=torch.int64, device=x.device), x))
        return i, a, b, j, y

    return looped, (torch.randn(8, 16), torch.randn(16, 16) * 0.25)
