"""index_put with accumulate=True (repeated indices) on a copy of the input."""
import torch


def model():
    index = torch.randint(0, 32, (16,), generator=torch.Generator().manual_seed(0))

    def put(x, values):
        return x.clone().index_put_((index,), values, accumulate=True) + 1.0

    return put, (torch.randn(32), torch.randn(16))
