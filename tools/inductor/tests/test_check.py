"""Unit tests of check's comparison and the corpus runner's expectations
(no compilation): python -m unittest discover -s tools/inductor/tests."""

import tempfile
import unittest
from pathlib import Path

import torch

from wrapir_inductor.check import _aliases, _compare, _significant_strides
from wrapir_inductor.corpus import classify, expected_path_failures, expected_unsupported


class Aliasing(unittest.TestCase):
    def test_views_of_inputs_and_of_earlier_outputs_are_named(self):
        x = torch.randn(4, 6)
        y = torch.randn(4, 6)
        outputs = [y.t(), y[:, 2:], x.view(-1), torch.randn(3)]
        self.assertEqual(_aliases(outputs, [x]), [None, "output 0", "input 0", None])

    def test_a_copy_where_eager_returns_a_view_fails_the_comparison(self):
        x = torch.randn(4, 6)
        want = [x.view(-1)]
        got = [x.view(-1).clone()]
        ok, _, why = _compare(got, want, [x], [x], _aliases(got, [x]), _aliases(want, [x]))
        self.assertFalse(ok)
        self.assertIn("aliases nothing, eager's input 0", why)


    def test_results_carved_from_one_pool_may_share_it_without_overlapping(self):
        pool = torch.ones(64)
        want = [torch.ones(16), torch.ones(16)]
        disjoint = [pool[0:16], pool[32:48]]
        ok, _, why = _compare(disjoint, want, [], [], _aliases(disjoint, []), _aliases(want, []))
        self.assertTrue(ok, why)
        overlapping = [pool[0:16], pool[8:24]]
        ok, _, why = _compare(overlapping, want, [], [], _aliases(overlapping, []), _aliases(want, []))
        self.assertFalse(ok)
        self.assertIn("overlaps output 0", why)


class Values(unittest.TestCase):
    def test_a_mutated_input_must_end_equal_to_eager(self):
        out = torch.ones(3)
        ok, _, why = _compare([out], [out], [torch.zeros(3)], [torch.ones(3)], [None], [None])
        self.assertFalse(ok)
        self.assertIn("input 0 after the call", why)
        ok, _, _ = _compare([out], [out], [torch.ones(3)], [torch.ones(3)], [None], [None])
        self.assertTrue(ok)

    def test_strides_matter_except_on_dimensions_of_length_one(self):
        a = torch.randn(1, 5)
        b = torch.empty_strided((1, 5), (7, 1)).copy_(a)
        self.assertEqual(_significant_strides(a), _significant_strides(b))
        ok, _, why = _compare([torch.randn(5, 4).t().contiguous()], [torch.randn(5, 4).t()], [], [], [None], [None])
        self.assertFalse(ok)
        self.assertIn("strides", why)

    def test_bfloat16_tolerance_is_looser_than_float32(self):
        w = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
        g = torch.tensor([1.0, 2.015625], dtype=torch.bfloat16)  # one bf16 ulp at 2
        self.assertTrue(_compare([g], [w], [], [], [None], [None])[0])
        self.assertFalse(_compare([g.float()], [w.float()], [], [], [None], [None])[0])


class Expectations(unittest.TestCase):
    def test_expect_unsupported_is_read_without_importing(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "m.py"
            path.write_text('import not_a_module\nexpect_unsupported = ["EnterSubgraphLine"]\n')
            self.assertEqual(expected_unsupported(path), ["EnterSubgraphLine"])
            path.write_text("def model(): pass\n")
            self.assertEqual(expected_unsupported(path), [])
            path.write_text('expect_unsupported = "EnterSubgraphLine"\n')
            with self.assertRaises(ValueError):
                expected_unsupported(path)

    def test_expected_path_failures_per_device(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "m.py"
            path.write_text('expect_failing_paths = {"executor@cuda": "no CUDA topk", "python+pools": "why"}\n')
            self.assertEqual(expected_path_failures(path, "cuda"), {"executor": "no CUDA topk", "python+pools": "why"})
            self.assertEqual(expected_path_failures(path, "cpu"), {"python+pools": "why"})
            path.write_text('expect_failing_paths = {"executor@tpu": "why"}\n')
            with self.assertRaises(ValueError):
                expected_path_failures(path, "cpu")

    def test_a_model_is_held_to_its_expectation(self):
        finding = "wrapir_inductor: unsupported: m: line 3: EnterSubgraphLine: ..."
        self.assertEqual(classify(0, [], [], [], []), (True, "ok"))
        known = {"executor": "no reference extern for sdpa"}
        self.assertTrue(classify(1, [], [], ["executor"], [], known, ["python"])[0])
        self.assertFalse(classify(1, [], [], ["executor", "python"], [], known, [])[0])  # an unexpected failure
        passed, why = classify(0, [], [], [], [], known, ["python", "executor"])
        self.assertFalse(passed)  # a known failure that passes must be noticed
        self.assertIn("update the model", why)
        self.assertTrue(classify(2, ["EnterSubgraphLine"], [finding], [], [])[0])
        # Starts to pass, fails otherwise, or is unsupported for another reason: all failures.
        self.assertFalse(classify(0, ["EnterSubgraphLine"], [], [], [])[0])
        self.assertFalse(classify(1, ["EnterSubgraphLine"], [], [], [])[0])
        self.assertFalse(classify(2, ["DynamicScalarLine"], [finding], [], [])[0])
        self.assertFalse(classify(2, [], [finding], [], [])[0])
        self.assertEqual(classify(1, [], [], ["python+arena"], []), (False, "FAIL: python+arena"))


if __name__ == "__main__":
    unittest.main()
