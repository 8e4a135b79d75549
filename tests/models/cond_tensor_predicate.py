"""torch.cond on a tensor predicate (two subgraphs): a wrapir Conditional
whose branches are the subgraph programs true_graph_0 and false_graph_0."""
import torch


def model():
    def branchy(x):
        return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    return branchy, (torch.randn(8, 16),)
