"""torch.cond on a tensor predicate (two subgraphs)."""
import torch

# Subgraphs (Inductor's EnterSubgraphLine and the text it writes around them)
# are not translated yet: export must exit 2 and name them.
expect_unsupported = ["EnterSubgraphLine"]


def model():
    def branchy(x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    return branchy, (torch.randn(8, 16),)
