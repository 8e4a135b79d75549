"""Compiles Triton kernels for tests/cuda/triton_test.cpp, on the GPU machine.

For each kernel it writes, into the output folder:
  <name>.cubin   Triton's cubin
  <name>.json    Triton's metadata (CompiledKernel.metadata as JSON)
  <name>.in<k>   raw input arrays, and <name>.expected, the output computed
                 by PyTorch, so the C++ test can check wrapir's launch of the
                 cubin against an independent result.
plus kernels.txt, one line per kernel: name grid_x grid_y grid_z.

The kernels are compiled by launching them once through Triton (the launch
returns the CompiledKernel); wrapir then launches the same cubin itself.

    python3 tests/cuda/triton/make_triton_kernels.py OUT_DIR
"""

import json
import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Row-major fp16 A (M×K), B (K×N), fp32 C (M×N); M, N, K multiples of the blocks.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def save(out_dir, name, compiled, inputs, expected, grid):
    with open(os.path.join(out_dir, name + ".cubin"), "wb") as f:
        f.write(compiled.asm["cubin"])
    meta = compiled.metadata
    meta = meta._asdict() if hasattr(meta, "_asdict") else dict(meta)
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(meta, f, default=str, indent=1)
    for k, t in enumerate(inputs):
        t.detach().cpu().contiguous().numpy().tofile(os.path.join(out_dir, f"{name}.in{k}"))
    expected.detach().cpu().contiguous().numpy().tofile(os.path.join(out_dir, name + ".expected"))
    with open(os.path.join(out_dir, "kernels.txt"), "a") as f:
        f.write(f"{name} {grid[0]} {grid[1]} {grid[2]}\n")
    print(f"{name}: symbol {meta['name']}, num_warps {meta['num_warps']}, shared {meta['shared']} bytes, "
          f"global scratch {meta.get('global_scratch_size')}, profile scratch {meta.get('profile_scratch_size')}")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    open(os.path.join(out_dir, "kernels.txt"), "w").close()
    torch.manual_seed(0)

    n = 100_000
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024), 1, 1)
    compiled = add_kernel[grid](x, y, out, n, BLOCK=1024)
    save(out_dir, "add", compiled, [x, y], x + y, grid)

    m, nn, k = 256, 256, 512
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, nn, device="cuda", dtype=torch.float16)
    c = torch.empty(m, nn, device="cuda", dtype=torch.float32)
    grid = (m // 128, nn // 128, 1)
    # Four stages of 128×64 and 64×128 fp16 tiles: well over 48 KB of shared memory.
    compiled = matmul_kernel[grid](a, b, c, m, nn, k, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=4)
    save(out_dir, "matmul", compiled, [a, b], a.float() @ b.float(), grid)


if __name__ == "__main__":
    main()
