"""index_put with accumulate=True (repeated indices): into a float copy of
the input (on the CPU a C++ kernel with atomic adds) and into an int64
histogram (int64 accumulation is an `aten.index_put_` fallback:
IndexPutFallbackLine)."""
import torch


def model():
    index = torch.randint(0, 32, (16,), generator=torch.Generator().manual_seed(0))

    def put(x, values):
        histogram = torch.zeros(32, dtype=torch.int64).index_put_((index,), torch.ones(16, dtype=torch.int64),
                                                                  accumulate=True)
        return x.clone().index_put_((index,), values, accumulate=True) + 1.0, histogram * 2

    return put, (torch.randn(32), torch.randn(16))
