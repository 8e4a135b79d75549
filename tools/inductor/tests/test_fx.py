"""The FX emitter's renderings against real torch.fx (no GPU, no wrapir tool):
every fx-python golden of the C++ tests (tests/golden/fx/NAME.py) builds its
GraphModule with torch.fx, and torch's printed graph must equal wrapir's
text (NAME.txt) byte for byte. Triton kernels cannot load without a GPU, so
a stand-in @triton.jit function takes each one's place in the side table: the
graph does not depend on which function it is."""

import contextlib
import importlib.util
import unittest
from pathlib import Path
from unittest import mock

GOLDEN = Path(__file__).resolve().parents[3] / "tests" / "golden" / "fx"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("wrapir_fx_" + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GraphText(unittest.TestCase):
    def test_every_golden_module_prints_its_golden_text(self):
        import triton
        from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

        def stand_in(name, source, device, repeat):
            # One function per kernel: the side table numbers distinct kernels.
            @triton.jit
            def kernel(x):
                pass

            return kernel

        modules = sorted(GOLDEN.glob("*.py"))
        self.assertGreater(len(modules), 5)
        for path in modules:
            with self.subTest(golden=path.name):
                module = _load(path)
                module._load_triton = stand_in
                kernel_side_table.reset_table()
                gm = module.build()
                self.assertEqual(module.graph_text(gm), path.with_suffix(".txt").read_text())

    def test_fx_path_skips_only_what_the_emitter_names_unsupported(self):
        from wrapir_inductor.fx_path import UNSUPPORTED

        self.assertTrue(all(isinstance(u, str) and u for u in UNSUPPORTED))

    def test_graph_module_runs_by_default_on_cuda_only(self):
        from wrapir_inductor.fx_path import _runs

        for setting, cuda, cpu in ((None, True, False), ("0", False, False), ("1", True, True)):
            env = {} if setting is None else {"WRAPIR_FX_RUN": setting}
            with self.subTest(setting=setting), mock.patch.dict("os.environ", env):
                if setting is None:
                    import os

                    os.environ.pop("WRAPIR_FX_RUN", None)
                self.assertEqual((_runs("cuda"), _runs("cpu")), (cuda, cpu))


# A Triton kernel as Inductor writes it (the format of the corpus exports):
# a module whose pointwise heuristic wraps the @triton.jit function in a
# CachingAutotuner. `NAME` is replaced per test, so that each test loads a
# module of its own from Inductor's code cache.
INDUCTOR_KERNEL = """
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 8192},
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'NAME', 'mutated_arg_names': [], 'no_x_dim': False, 'num_load': 2, 'num_store': 1, 'num_reduction': 0},
    min_elem_per_thread=0
)
@triton.jit
def NAME(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 8192
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None)
    tmp1 = tl.load(in_ptr1 + (x0), None)
    tl.store(out_ptr0 + (x0), triton_helpers.maximum(tl.full([1], 0, tl.int32), tmp0 + tmp1), None)
"""


def _without_gpu_driver():
    """Inductor's kernel modules select the GPU driver when loaded; with no
    GPU (CI) that step is skipped, the rest of the module loads as on one."""
    import torch

    if torch.cuda.is_available():
        return contextlib.nullcontext()
    return mock.patch("torch._inductor.runtime.triton_helpers.set_driver_to_gpu", lambda: None)


@unittest.skipIf(importlib.util.find_spec("triton") is None, "needs triton")
class SideTable(unittest.TestCase):
    """What the fx-python module registers in the kernel side table must be
    what `triton_kernel_wrapper_mutation` can launch: a @triton.jit function
    that still has its code. (An H100 run, 2026-11-26, failed in every model
    with a Triton kernel: the kernels came from AsyncCompile's worker
    processes, which drop the function's code for pickling, and the launch
    raised AttributeError: 'NoneType' object has no attribute '__code__'.)"""

    def _golden(self):
        return _load(GOLDEN / "add_relu.py")

    def test_registered_kernel_is_a_launchable_jit_function(self):
        import triton
        from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table
        from triton.runtime.jit import get_jit_fn_file_line

        module = self._golden()
        name = "triton_poi_fused_add_relu_side_table_0"
        with _without_gpu_driver():
            kernel = module._load_triton(name, INDUCTOR_KERNEL.replace("NAME", name), "cuda", 0)
        self.assertIsInstance(kernel, triton.JITFunction)
        kernel_side_table.reset_table()
        idx = kernel_side_table.add_kernel(kernel)
        # The first thing Triton's compiler asks of a launched kernel, and
        # the call that raised on the H100.
        filename, _ = get_jit_fn_file_line(kernel_side_table.get_kernel(idx))
        self.assertTrue(filename.endswith(".py"))
        self.assertEqual(kernel_side_table.get_kernel(idx).fn.__name__, name)

    def test_built_graph_module_holds_launchable_kernels(self):
        import torch
        from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table
        from triton.runtime.jit import get_jit_fn_file_line

        module = self._golden()
        name = "triton_poi_fused_add_relu_0"
        (golden_name, _, device), = module._TRITON_SOURCES
        self.assertEqual(golden_name, name)
        # The golden's source is a stand-in; an Inductor module in its place.
        module._TRITON_SOURCES = [(name, INDUCTOR_KERNEL.replace("NAME", name), device)]
        kernel_side_table.reset_table()
        with _without_gpu_driver():
            gm = module.build()
        launches = [n for n in gm.graph.nodes if n.target is torch.ops.higher_order.triton_kernel_wrapper_mutation]
        self.assertEqual(len(launches), 1)
        kernel = kernel_side_table.get_kernel(launches[0].kwargs["kernel_idx"])
        get_jit_fn_file_line(kernel)
        self.assertEqual(kernel.fn.__name__, name)

    def test_same_kernel_twice_takes_two_entries(self):
        # The graph numbers the program's kernels one entry each; the code
        # cache returns one module for one source (a kernel in both branches
        # of a cond), which the side table would merge into one index
        # (cond_branch_layouts on an H100, 2026-11-27).
        from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

        module = self._golden()
        name = "triton_poi_fused_add_relu_twice_0"
        source = INDUCTOR_KERNEL.replace("NAME", name)
        kernel_side_table.reset_table()
        with _without_gpu_driver():
            one, two = (module._load_triton(name, source, "cuda", repeat) for repeat in (0, 1))
            first = kernel_side_table.add_kernel(one)
            second = kernel_side_table.add_kernel(two)
        self.assertEqual((first, second), (0, 1))
        # Two functions, not a copy of one: a copy shares Triton's per-device
        # caches with the original, whose binder then sets itself up and not
        # the copy, which failed at launch with "'JITFunction' object has no
        # attribute 'ASTSource'" (every CUDA model on an H100, 2026-11-27).
        self.assertIsNot(one.device_caches, two.device_caches)
        self.assertIsNot(one.fn, two.fn)

    def test_kernel_without_code_is_refused_by_name(self):
        from torch._inductor.codecache import PyCodeCache

        module = self._golden()
        name = "triton_poi_fused_add_relu_dropped_0"
        source = INDUCTOR_KERNEL.replace("NAME", name)
        with _without_gpu_driver():
            autotuner = getattr(PyCodeCache.load(source), name)
        # What a worker's pickling leaves of the kernel.
        autotuner.prepare_for_pickle()
        with _without_gpu_driver(), self.assertRaisesRegex(RuntimeError, name + ".*no function code"):
            module._load_triton(name, source, "cuda", 0)


if __name__ == "__main__":
    unittest.main()
