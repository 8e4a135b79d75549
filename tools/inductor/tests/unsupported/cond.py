"""torch.cond on a tensor predicate: subgraphs are not exported yet, so the
export must exit 2 and name the lines (tools/dev.sh bridge-test checks it)."""
import torch


def model():
    def branchy(x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    return branchy, (torch.randn(8, 16),)
