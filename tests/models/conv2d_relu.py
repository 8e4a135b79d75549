"""Conv2d + ReLU (the convolution is an extern kernel on the CPU)."""
import torch


def model():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU()).eval()
    return net, (torch.randn(2, 3, 16, 16),)
