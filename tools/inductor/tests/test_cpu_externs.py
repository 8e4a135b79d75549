"""The CPU backend's reference externs (include/wrapir/run/cpu) against
eager PyTorch on random cases, through the C++ driver
tests/run/cpu/extern_driver.cpp (target wrapir_cpu_extern_driver).

The driver is found at $WRAPIR_CPU_EXTERN_DRIVER or in build/dev (then
build/release); without it the tests are skipped, saying so.

    python -m unittest discover -s tools/inductor/tests -p test_cpu_externs.py
"""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
import torch

_ROOT = Path(__file__).resolve().parents[3]


def _driver():
    env = os.environ.get("WRAPIR_CPU_EXTERN_DRIVER")
    candidates = [Path(env)] if env else []
    candidates += [_ROOT / "build" / p / "tests/run/cpu/wrapir_cpu_extern_driver" for p in ("dev", "release")]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


class _Run:
    """One driver call: tensors go to .npy files, results come back as torch tensors."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.count = 0

    def tensor(self, t):
        self.count += 1
        path = self.dir / f"in{self.count}.npy"
        if t.dtype == torch.bfloat16:
            np.save(path, t.contiguous().view(torch.int16).numpy().view(np.uint16))
            return f"bf16:{path}"
        np.save(path, t.contiguous().numpy())
        return f"t:{path}"

    def tensor_list(self, items):
        paths = []
        for t in items:
            if t is None:
                paths.append("none")
            else:
                self.count += 1
                path = self.dir / f"in{self.count}.npy"
                np.save(path, t.contiguous().numpy())
                paths.append(str(path))
        return "lt:" + ",".join(paths)

    def __call__(self, op, *args):
        out = self.dir / "out"
        out.mkdir(exist_ok=True)
        for f in out.iterdir():
            f.unlink()
        done = subprocess.run([str(_driver()), str(out), op, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f"{op}: {done.stderr.strip()}")
        return {f.stem: self._load(f) for f in out.iterdir() if f.suffix == ".npy"}

    def strides(self, name):
        """The strides the extern gave its result `name` (last call)."""
        text = (self.dir / "out" / f"{name}.strides").read_text()
        return tuple(int(s) for s in text.split(",")) if text else ()

    @staticmethod
    def _load(path):
        a = np.load(path)
        if a.dtype == np.uint16:
            return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
        return torch.from_numpy(a.copy())


@unittest.skipIf(_driver() is None, "wrapir_cpu_extern_driver is not built (build the dev preset, or set WRAPIR_CPU_EXTERN_DRIVER)")
class CpuExternsAgainstTorch(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.run_ = _Run(self._tmp.name)
        self.gen = torch.Generator().manual_seed(1234)

    def tearDown(self):
        self._tmp.cleanup()

    def randn(self, *shape, dtype=torch.float32):
        return torch.randn(*shape, generator=self.gen).to(dtype)

    def test_mm_addmm_bmm(self):
        r = self.run_
        for dtype, tol in ((torch.float32, 1e-5), (torch.float64, 1e-12), (torch.bfloat16, 2e-2), (torch.float16, 2e-3)):
            for m, k, n in ((1, 1, 1), (7, 5, 3), (33, 64, 17)):
                a, b = self.randn(m, k, dtype=dtype), self.randn(k, n, dtype=dtype)
                got = r("extern_kernels.mm", r.tensor(a), r.tensor(b), "out=" + r.tensor(torch.zeros(m, n, dtype=dtype)))
                torch.testing.assert_close(got["kw_out"], torch.mm(a, b), rtol=tol, atol=tol)
                bias = self.randn(n, dtype=dtype)
                got = r("extern_kernels.addmm", r.tensor(bias), r.tensor(a), r.tensor(b), "beta=f:0.5", "alpha=f:2.0",
                        "out=" + r.tensor(torch.zeros(m, n, dtype=dtype)))
                torch.testing.assert_close(got["kw_out"], torch.addmm(bias, a, b, beta=0.5, alpha=2.0), rtol=tol, atol=tol * 4)
            a, b = self.randn(4, 6, 5, dtype=dtype), self.randn(4, 5, 3, dtype=dtype)
            got = r("extern_kernels.bmm", r.tensor(a), r.tensor(b), "out=" + r.tensor(torch.zeros(4, 6, 3, dtype=dtype)))
            torch.testing.assert_close(got["kw_out"], torch.bmm(a, b), rtol=tol, atol=tol)

    def test_convolution(self):
        r = self.run_
        cases = [
            ((2, 3, 9, 9), (4, 3, 3, 3), True, [1, 1], [1, 1], [1, 1], 1),
            ((1, 4, 8, 11), (6, 2, 3, 2), False, [2, 1], [0, 1], [1, 2], 2),
            ((1, 6, 7, 7), (6, 1, 3, 3), True, [1, 1], [2, 2], [2, 2], 6),
            ((3, 2, 10), (4, 2, 3), True, [2], [1], [1], 1),
        ]
        for x_shape, w_shape, with_bias, stride, padding, dilation, groups in cases:
            x, w = self.randn(*x_shape), self.randn(*w_shape)
            bias = self.randn(w_shape[0]) if with_bias else None
            args = [r.tensor(x), r.tensor(w), r.tensor(bias) if with_bias else "n:"]
            got = r("extern_kernels.convolution", *args, "stride=li:" + ",".join(map(str, stride)),
                    "padding=li:" + ",".join(map(str, padding)), "dilation=li:" + ",".join(map(str, dilation)),
                    "transposed=b:false", "output_padding=li:" + ",".join("0" * len(stride)), f"groups=i:{groups}")
            want = torch.convolution(x, w, bias, stride, padding, dilation, False, [0] * len(stride), groups)
            torch.testing.assert_close(got["result0"], want, rtol=1e-4, atol=1e-4)

    def test_topk(self):
        r = self.run_
        x = self.randn(5, 40)
        for k, dim, largest in ((3, -1, True), (5, 1, False), (2, 0, True)):
            got = r("aten.topk.default", r.tensor(x), f"i:{k}", f"i:{dim}", f"b:{str(largest).lower()}")
            values, indices = torch.topk(x, k, dim, largest)
            torch.testing.assert_close(got["result0"], values)
            torch.testing.assert_close(got["result1"], indices)

    def test_scatter_reduce(self):
        r = self.run_
        self_ = self.randn(6, 5)
        index = torch.randint(0, 6, (8, 5), generator=self.gen)
        src = self.randn(8, 5)
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                got = r("aten.scatter_reduce_.two", r.tensor(self_), "i:0", r.tensor(index), r.tensor(src),
                        f"reduce=s:{reduce}", f"include_self=b:{str(include_self).lower()}")
                want = self_.clone().scatter_reduce_(0, index, src, reduce, include_self=include_self)
                torch.testing.assert_close(got["arg0"], want, rtol=1e-5, atol=1e-5, msg=f"{reduce} {include_self}")
        got = r("aten.scatter_add_", r.tensor(self_), "i:0", r.tensor(index), r.tensor(src))
        torch.testing.assert_close(got["arg0"], self_.clone().scatter_add_(0, index, src))

    def test_index_put(self):
        r = self.run_
        x = self.randn(7, 4)
        rows = torch.randint(-7, 7, (10,), generator=self.gen)
        cols = torch.randint(0, 4, (10,), generator=self.gen)
        values = self.randn(10)
        got = r("aten.index_put_", r.tensor(x), r.tensor_list([rows, cols]), r.tensor(values), "b:true")
        torch.testing.assert_close(got["arg0"], x.clone().index_put_((rows, cols), values, accumulate=True))
        v2 = self.randn(3, 4)
        picked = torch.tensor([0, 3, 5])
        got = r("aten.index_put_", r.tensor(x), r.tensor_list([picked]), r.tensor(v2), "b:false")
        torch.testing.assert_close(got["arg0"], x.clone().index_put_((picked,), v2))
        v3 = self.randn(7, 2)
        got = r("aten.index_put_", r.tensor(x), r.tensor_list([None, torch.tensor([1, 2])]), r.tensor(v3), "b:true")
        torch.testing.assert_close(got["arg0"], _index_put_slice(x, v3))

    def test_bucketize(self):
        r = self.run_
        boundaries = torch.sort(self.randn(9)).values
        x = self.randn(4, 13)
        for right in (False, True):
            for out_int32 in (False, True):
                got = r("torch.ops.aten.bucketize.Tensor", r.tensor(x), r.tensor(boundaries),
                        f"out_int32=b:{str(out_int32).lower()}", f"right=b:{str(right).lower()}")
                torch.testing.assert_close(got["result0"], torch.bucketize(x, boundaries, out_int32=out_int32, right=right))

    def test_flash_attention_for_cpu(self):
        r = self.run_
        op = "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"
        sdpa = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
        tolerances = {torch.float32: 1e-5, torch.float64: 1e-12, torch.bfloat16: 2e-2, torch.float16: 2e-3}
        for dtype, tol in tolerances.items():
            # (batch, q heads, kv heads, q length, kv length, head size): L > 64 crosses a row block;
            # L != S with causal checks its top-left alignment; 4 vs 2 heads is grouped-query attention.
            for b, hq, hkv, length, kv_length, e in ((2, 4, 4, 16, 16, 32), (1, 4, 2, 70, 70, 8), (2, 2, 1, 7, 4, 5),
                                                     (1, 2, 2, 4, 9, 3)):
                q = self.randn(b, hq, length, e, dtype=dtype)
                k = self.randn(b, hkv, kv_length, e, dtype=dtype)
                v = self.randn(b, hkv, kv_length, e, dtype=dtype)
                for causal in (False, True):
                    with self.subTest(dtype=dtype, shape=(b, hq, hkv, length, kv_length, e), causal=causal):
                        got = r(op, r.tensor(q), r.tensor(k), r.tensor(v), "f:0.0", f"b:{str(causal).lower()}")
                        out, lse = sdpa(q, k, v, 0.0, causal)
                        torch.testing.assert_close(got["result0"], out, rtol=tol, atol=tol)
                        # logsumexp is float32 for 16-bit inputs, whose products torch sums in another order.
                        lse_tol = {torch.float64: tol, torch.float32: 1e-5}.get(dtype, 1e-4)
                        torch.testing.assert_close(got["result1"], lse, rtol=lse_tol, atol=lse_tol)
                        self.assertEqual(r.strides("result0"), out.stride())
                        self.assertEqual(r.strides("result1"), lse.stride())
        # Scale, and additive masks that broadcast (2-D over batch and heads, 4-D over heads / keys).
        q, k, v = self.randn(2, 4, 6, 8), self.randn(2, 4, 5, 8), self.randn(2, 4, 5, 8)
        for mask in (self.randn(6, 5), self.randn(6, 1), self.randn(2, 1, 6, 5), self.randn(1, 4, 1, 5)):
            for causal in (False, True):
                with self.subTest(mask=tuple(mask.shape), causal=causal):
                    got = r(op, r.tensor(q), r.tensor(k), r.tensor(v), "dropout_p=f:0.0", f"is_causal=b:{str(causal).lower()}",
                            "attn_mask=" + r.tensor(mask), "scale=f:0.3")
                    out, lse = sdpa(q, k, v, 0.0, causal, attn_mask=mask, scale=0.3)
                    torch.testing.assert_close(got["result0"], out, rtol=1e-5, atol=1e-5)
                    torch.testing.assert_close(got["result1"], lse, rtol=1e-5, atol=1e-5)
        # A row that sees no key: torch writes zeros and a logsumexp of 0.
        mask = torch.zeros(6, 5)
        mask[2] = float("-inf")
        got = r(op, r.tensor(q), r.tensor(k), r.tensor(v), "attn_mask=" + r.tensor(mask))
        out, lse = sdpa(q, k, v, attn_mask=mask)
        torch.testing.assert_close(got["result0"], out, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got["result1"], lse, rtol=1e-5, atol=1e-5)
        # Layouts: the output follows the query's strides, as the transformer block's program asserts.
        proj = self.randn(2, 16, 3 * 64)
        qkv = [proj[..., i * 64:(i + 1) * 64].view(2, 16, 4, 16).transpose(1, 2) for i in range(3)]
        for query in (qkv[0], self.randn(2, 16, 4, 16).transpose(1, 2), self.randn(2, 4, 16, 32)[..., :16],
                      self.randn(2, 16, 1, 64)[..., :16].transpose(1, 2)):
            with self.subTest(query_strides=query.stride()):
                key = torch.randn(query.shape[0], query.shape[1], 16, 16, generator=self.gen)
                driver_query = _strided_file(r, query)
                got = r(op, driver_query, r.tensor(key), r.tensor(key), "f:0.0", "b:true")
                out, lse = sdpa(query, key, key, 0.0, True)
                torch.testing.assert_close(got["result0"], out, rtol=1e-5, atol=1e-5)
                self.assertEqual(r.strides("result0"), out.stride())
        # Refusals name the extern: dropout, bool masks.
        with self.assertRaisesRegex(AssertionError, "dropout_p"):
            r(op, r.tensor(q), r.tensor(k), r.tensor(v), "f:0.5")
        with self.assertRaisesRegex(AssertionError, "bool"):
            r(op, r.tensor(q), r.tensor(k), r.tensor(v), "attn_mask=" + r.tensor(torch.ones(6, 5, dtype=torch.bool)))

    def test_efficient_attention(self):
        # What CUDA programs call (CUDA only in torch): values against eager SDPA's math on the CPU,
        # layouts against the op's meta function (what Inductor asserts), on real torch.
        r = self.run_
        op = "torch.ops.aten._scaled_dot_product_efficient_attention.default"
        efficient = torch.ops.aten._scaled_dot_product_efficient_attention.default
        for b, h, length, e in ((2, 4, 16, 16), (1, 2, 40, 8)):
            q, k, v = (self.randn(b, h, length, e) for _ in range(3))
            bias = self.randn(length, length)
            for causal, with_bias, with_lse in ((True, False, False), (False, True, True), (True, False, True)):
                with self.subTest(shape=(b, h, length, e), causal=causal, bias=with_bias, lse=with_lse):
                    args = [r.tensor(q), r.tensor(k), r.tensor(v), r.tensor(bias) if with_bias else "n:",
                            f"b:{str(with_lse).lower()}", "f:0.0", f"b:{str(causal).lower()}"]
                    got = r(op, *args)
                    want = torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, attn_mask=bias if with_bias else None, is_causal=causal)
                    torch.testing.assert_close(got["result0"], want, rtol=1e-5, atol=1e-5)
                    meta = efficient(q.to("meta"), k.to("meta"), v.to("meta"), bias.to("meta") if with_bias else None,
                                     with_lse, 0.0, causal)
                    for i in range(4):
                        self.assertEqual(tuple(got[f"result{i}"].shape), tuple(meta[i].shape), f"result {i}")
                        self.assertEqual(got[f"result{i}"].dtype, meta[i].dtype, f"result {i}")
                    self.assertEqual(r.strides("result0"), meta[0].stride())
                    if with_lse:
                        lse = got["result1"]
                        scores = (q @ k.transpose(-1, -2)) / e ** 0.5 + (bias if with_bias else 0)
                        if causal:
                            scores = scores.masked_fill(torch.ones(length, length, dtype=torch.bool).triu(1), float("-inf"))
                        torch.testing.assert_close(lse[..., :length], torch.logsumexp(scores, -1), rtol=1e-5, atol=1e-5)
                        self.assertTrue(torch.isinf(lse[..., length:]).all())



def _strided_file(r, t):
    """A driver argument for `t` with its own strides: the .npy holds its
    whole storage, and `@` carries sizes, strides and the offset."""
    storage = torch.as_strided(t, (t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
    path = r.tensor(storage)
    return f"{path}@{','.join(map(str, t.shape))}@{','.join(map(str, t.stride()))}@{t.storage_offset()}"


def _index_put_slice(x, values):
    """x[:, [1, 2]] += values, in eager."""
    y = x.clone()
    y[:, [1, 2]] += values
    return y


if __name__ == "__main__":
    unittest.main()
