"""Unit tests of the Triton (CUDA) translation's pure pieces (no GPU, no compilation)."""

import unittest
from pathlib import Path

from wrapir_inductor.translate import _DEVICE_COPY, Unsupported
from wrapir_inductor.translate_triton import (
    _MULTI_KERNEL,
    _SLICE,
    _TRITON_DEFINITION,
    multi_signature,
    triton_signature,
)

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "python" / "multi_kernel.py"

SOURCE = """
@triton_heuristics.pointwise(
    size_hints={'x': 8192},
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*bf16', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda')},
)
@triton.jit
def k(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
"""


class Signatures(unittest.TestCase):
    def test_constexprs_are_not_launch_parameters(self):
        self.assertEqual(triton_signature(SOURCE, "k"), [
            {"name": "in_ptr0", "type": "*fp32"}, {"name": "out_ptr0", "type": "*bf16"},
            {"name": "xnumel", "type": "i32"}])

    def test_a_numel_specialised_to_one_is_still_launched(self):
        # Inductor 2.11 on CUDA: `'xnumel': 'constexpr'` with `'constants': {'xnumel': 1}`,
        # and the launch still passes the 1 (tests/models/cond_* on an H100).
        specialised = SOURCE.replace("'xnumel': 'i32'", "'xnumel': 'constexpr'")
        self.assertEqual(triton_signature(specialised, "k"), [
            {"name": "in_ptr0", "type": "*fp32"}, {"name": "out_ptr0", "type": "*bf16"},
            {"name": "xnumel", "type": "i32"}])
        # XBLOCK, annotated tl.constexpr in the def, is never launched.
        self.assertNotIn("XBLOCK", [p["name"] for p in triton_signature(specialised, "k")])

    def test_launch_constants_are_what_the_cubin_does_not_take(self):
        from wrapir_inductor.export_triton import launch_constants
        specialised = SOURCE.replace("'xnumel': 'i32'", "'xnumel': 'constexpr'").replace(
            "'device': DeviceProperties(type='cuda')", "'device': DeviceProperties(type='cuda'), 'constants': {'xnumel': 1}")
        self.assertEqual(launch_constants(specialised, "k"), {"xnumel": 1})
        self.assertEqual(launch_constants(SOURCE, "k"), {})  # nothing specialised

    def test_unknown_types_and_missing_signatures_are_unsupported(self):
        with self.assertRaises(Unsupported):
            triton_signature(SOURCE.replace("'i32'", "'nvTmaDesc'"), "k")
        with self.assertRaises(Unsupported):
            triton_signature("def k(): pass", "k")
        with self.assertRaises(Unsupported):  # never evaluated: not a literal
            triton_signature("'signature': {'a': __import__('os')}", "k")


class Definitions(unittest.TestCase):
    def test_the_body_inductor_writes(self):
        m = _TRITON_DEFINITION.match("async_compile.triton('k', '''\nimport triton\n''', device_str='cuda')")
        self.assertEqual(m.groups(), ("k", "\nimport triton\n", "cuda"))

    def test_anything_after_the_call_is_refused(self):
        self.assertIsNone(_TRITON_DEFINITION.match("async_compile.triton('k', '''src''', device_str='cuda') + evil()"))


class MultiKernels(unittest.TestCase):
    def test_the_definition_text_of_the_golden_module(self):
        text = GOLDEN.read_text()
        found = list(_MULTI_KERNEL.finditer(text))
        # multi_kernel_1 is a size_hint_multi_kernel, which is not this form.
        self.assertEqual([m.group("name") for m in found], ["multi_kernel_0"])
        self.assertEqual(_SLICE.findall(found[0].group("index")), [("0", "4"), ("0", "4")])

    def test_signature_from_candidates(self):
        class T:
            kernels = {"a": {"signature": [{"name": "x", "type": "*fp32"}, {"name": "n", "type": "i32"}]},
                       "b": {"signature": [{"name": "x", "type": "*fp32"}, {"name": "y", "type": "*fp32"},
                                           {"name": "n", "type": "i32"}]}}
        multi = {"kernel": "m", "candidates": ["a", "b"],
                 "arg_index": [[{"start": 0, "stop": 1}, {"start": 2, "stop": 3}], [{"start": 0, "stop": 3}]]}
        self.assertEqual(multi_signature(T, multi, 3), [
            {"name": "x", "type": "*fp32"}, {"name": "y", "type": "*fp32"}, {"name": "n", "type": "i32"}])
        with self.assertRaises(Unsupported):  # candidates disagree on argument 1's type
            T.kernels["b"]["signature"][1]["type"] = "i64"
            multi["arg_index"][0] = [{"start": 0, "stop": 2}]
            multi_signature(T, multi, 3)


class DeviceCopies(unittest.TestCase):
    def test_copy_between_buffers(self):
        self.assertEqual(_DEVICE_COPY.match("buf0.copy_(arg1_1, False)").groups(), ("buf0", "arg1_1", "False"))
        self.assertIsNone(_DEVICE_COPY.match("buf0.copy_(arg1_1, False); evil()"))


if __name__ == "__main__":
    unittest.main()
