"""An Elman RNN cell unrolled over 32 time steps (64 GEMMs, a long chain of
short-lived intermediates)."""
import torch


class Unrolled(torch.nn.Module):
    def __init__(self, width=32, hidden=32):
        super().__init__()
        self.cell = torch.nn.RNNCell(width, hidden)

    def forward(self, xs):
        h = torch.zeros(xs.size(1), self.cell.hidden_size, device=xs.device)
        for t in range(xs.size(0)):
            h = self.cell(xs[t], h)
        return h


def model():
    torch.manual_seed(0)
    return Unrolled().eval(), (torch.randn(32, 4, 32),)
