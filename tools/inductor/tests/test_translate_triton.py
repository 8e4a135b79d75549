"""Unit tests of the Triton (CUDA) translation's pure pieces (no GPU, no compilation)."""

import unittest
from pathlib import Path

from wrapir_inductor.translate import _DEVICE_COPY, Unsupported
from wrapir_inductor.export_triton import fill_launch_config
from wrapir_inductor.translate_triton import (
    _MULTI_KERNEL,
    _SLICE,
    _TRITON_DEFINITION,
    multi_signature,
    triton_metadata,
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

    def test_kernels_of_subgraphs_are_exported_too(self):
        from wrapir_inductor.export_triton import triton_sources

        def graph(kernels, subgraphs=()):
            return {"kernels": [{"name": k, "language": lang} for k, lang in kernels],
                    "body": [{"kind": "KernelDefinition", "kernel": k, "source": {"kind": "text", "text": f"src {k}"}}
                             for k, _ in kernels],
                    "subgraphs": list(subgraphs)}
        program = graph([("k0", "triton"), ("c0", "cpp")],
                        [graph([("k1", "triton")], [graph([("k2", "triton")])])])
        self.assertEqual(triton_sources(program), {"k0": "src k0", "k1": "src k1", "k2": "src k2"})

    def test_unknown_types_and_missing_signatures_are_unsupported(self):
        with self.assertRaises(Unsupported):
            triton_signature(SOURCE.replace("'i32'", "'nvTmaDesc'"), "k")
        with self.assertRaises(Unsupported):
            triton_signature("def k(): pass", "k")
        with self.assertRaises(Unsupported):  # never evaluated: not a literal
            triton_signature("'signature': {'a': __import__('os')}", "k")


# The decorator of a kernel Inductor 2.11 generated for CUDA (add + relu,
# ../shared/reference/inductor-samples/a_add_relu), its body cut.
RECORDED = """
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties

@triton_heuristics.pointwise(
    size_hints={'x': 8192}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_add_relu_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'tiling_scores': {'x': 131072}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 8192
"""


class Metadata(unittest.TestCase):
    def test_the_recorded_kernels_metadata(self):
        metadata, lost = triton_metadata(RECORDED, "triton_poi_fused_add_relu_0")
        self.assertEqual(lost, [])
        self.assertEqual(metadata, {
            "grid_type": "Grid1D",
            "triton_meta": {
                "device": "cuda:0", "compute_capability": 90, "warp_size": 32, "constexprs": ["XBLOCK"],
                "attributes": [{"param": p, "name": "tt.divisibility", "value": 16}
                               for p in ("in_ptr0", "in_ptr1", "out_ptr0", "xnumel")],
                "launch_pdl": False},
            "inductor_meta": {"kernel_name": "triton_poi_fused_add_relu_0", "num_load": 2, "num_store": 1,
                              "num_reduction": 0,
                              "backend_hash": "91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336"}})

    def test_constants_hints_and_mutations(self):
        source = RECORDED.replace("'constants': {}", "'constants': {'xnumel': 1}").replace(
            "set()", "{AutotuneHint.ONE_ELEMENT_PER_THREAD}").replace(
            "'mutated_arg_names': []", "'mutated_arg_names': ['in_ptr0']")
        metadata, lost = triton_metadata(source, "triton_poi_fused_add_relu_0")
        self.assertEqual(lost, [])
        self.assertEqual(metadata["constants"], [{"name": "xnumel", "value": {"int": 1}}])
        self.assertEqual(metadata["inductor_meta"]["autotune_hints"], ["ONE_ELEMENT_PER_THREAD"])
        self.assertEqual(metadata["inductor_meta"]["mutated_arg_names"], ["in_ptr0"])

    def test_a_specialised_launch_argument_is_no_constexpr(self):
        # xnumel 1 on CUDA: typed constexpr and given in constants, yet launched;
        # the verifier refuses a constexpr that is also a signature parameter.
        source = RECORDED.replace("'constants': {}", "'constants': {'xnumel': 1}").replace(
            "'xnumel': 'i32'", "'xnumel': 'constexpr'")
        metadata, lost = triton_metadata(source, "triton_poi_fused_add_relu_0")
        self.assertEqual(lost, [])
        self.assertEqual(metadata["triton_meta"]["constexprs"], ["XBLOCK"])
        self.assertEqual(metadata["constants"], [{"name": "xnumel", "value": {"int": 1}}])
        self.assertIn({"name": "xnumel", "type": "i32"}, triton_signature(source, "triton_poi_fused_add_relu_0"))

    def test_what_it_cannot_keep_is_named(self):
        source = RECORDED.replace("'Grid1D'", "'Grid9D'").replace("set()", "{AutotuneHint.NEW_HINT}").replace(
            "(3,): [['tt.divisibility', 16]]", "(3, 1): [['tt.divisibility', 16]]")
        metadata, lost = triton_metadata(source, "triton_poi_fused_add_relu_0")
        self.assertNotIn("grid_type", metadata)
        self.assertEqual(len(lost), 3, lost)
        self.assertEqual(len(metadata["triton_meta"]["attributes"]), 3)

    def test_code_in_the_decorator_is_never_run(self):
        for evil in ("__import__('os').system('true')", "open('x')", "[x for x in ()]"):
            with self.assertRaises(Unsupported):
                triton_metadata(RECORDED.replace("set()", evil), "triton_poi_fused_add_relu_0")
        with self.assertRaises(Unsupported):
            triton_metadata(RECORDED, "another_kernel")


class LaunchConfig(unittest.TestCase):
    def test_the_chosen_configuration_fills_the_definitions(self):
        program = {"body": [{"kind": "KernelDefinition", "kernel": "k", "metadata": {"grid_type": "Grid1D"}}],
                   "subgraphs": [{"body": [{"kind": "KernelDefinition", "kernel": "k"}], "subgraphs": []}]}
        entries = [{"name": "k", "cubin": "kernels/k.cubin", "num_warps": 4, "num_stages": 1,
                    "shared_memory_bytes": 0, "constants": {"XBLOCK": 1024}},
                   {"name": "other", "cubin": None}]
        self.assertEqual(fill_launch_config(program, entries), 2)
        self.assertEqual(program["body"][0]["metadata"], {"grid_type": "Grid1D", "num_warps": 4, "num_stages": 1,
                                                          "shared_memory_bytes": 0,
                                                          "block": [{"name": "XBLOCK", "value": 1024}]})
        self.assertEqual(program["subgraphs"][0]["body"][0]["metadata"]["num_warps"], 4)


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
