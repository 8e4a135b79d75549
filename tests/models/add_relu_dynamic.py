"""relu(x + y) compiled with dynamic=True: symbolic sizes as call() inputs."""
import torch


def model():
    def add_relu(x, y):
        return torch.relu(x + y)

    return add_relu, (torch.randn(48, 96), torch.randn(48, 96)), {"dynamic": True}
