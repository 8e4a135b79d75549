"""A three-layer MLP under Inductor's pool planner (memory_planning=True):
intermediates are allocated from pools."""
import torch


def model():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 128), torch.nn.Tanh(),
        torch.nn.Linear(128, 32), torch.nn.Sigmoid(),
    ).eval()
    return net, (torch.randn(16, 64),), {"config": {"memory_planning": True}}
