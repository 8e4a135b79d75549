"""torch.cond whose branches make their outputs differently (a transposed
view of a matmul's result in one, a kernel writing a column-major buffer in
the other; a float reduction and an int64 index beside it), taken twice with
complementary predicates so that every run executes both the true and the
false branch code."""
import torch


def model():
    def on_true(x, y):
        return (x @ y).t(), x.amax(1), x.argmax(1)

    def on_false(x, y):
        return ((x * 0.5) @ y).t() + 1.0, x.amin(1) + 1.0, x.argmin(1)

    def branchy(x, y):
        p = x.sum() > 0
        a = torch.cond(p, on_true, on_false, (x, y))
        b = torch.cond(p.logical_not(), on_true, on_false, (x, y))
        return (*a, *b)

    return branchy, (torch.randn(8, 16), torch.randn(16, 8))
