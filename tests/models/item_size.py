"""`.item()` used as a size (capture_scalar_outputs): an unbacked symbol u0
read from a tensor, checked 1 <= u0 <= 16, then the size of a slice."""
import torch

# Inductor writes `u0 = arg0_1.item()` (DynamicScalarLine) and the checks as
# text (`if not (u0 >= 1): raise RuntimeError(...)`): wrapir's AssertScalar
# lines.


def model():
    def sliced(count, x):
        n = count.item()
        torch._check(n >= 1)
        torch._check(n <= x.size(0))
        return x[:n] * 2.0

    return sliced, (torch.tensor(5), torch.randn(16, 8)), {"dynamo_config": {"capture_scalar_outputs": True}}
