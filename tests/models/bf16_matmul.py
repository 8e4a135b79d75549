"""A bfloat16 matmul with a bias and an activation (an extern GEMM in bf16)."""
import torch


def model():
    def matmul(a, b, bias):
        return torch.relu(a @ b + bias)

    return matmul, (torch.randn(32, 64, dtype=torch.bfloat16), torch.randn(64, 48, dtype=torch.bfloat16),
                    torch.randn(48, dtype=torch.bfloat16))
