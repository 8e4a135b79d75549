"""Outputs that are views: a transpose and a slice of one intermediate (two
outputs sharing one storage) and a reshaped view of an input (an output
aliasing the caller's tensor). check compares the aliasing with eager's."""
import torch


def model():
    def views(x):
        y = x * 2.0 + 1.0
        return y.t(), y[:, 4:], x.view(-1)

    return views, (torch.randn(16, 32),)
