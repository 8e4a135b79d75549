"""The FX emitter's renderings against real torch.fx (no GPU, no wrapir tool):
every fx-python golden of the C++ tests (tests/golden/fx/NAME.py) builds its
GraphModule with torch.fx, and torch's printed graph must equal wrapir's
text (NAME.txt) byte for byte. Triton kernels cannot load without a GPU, so
a stand-in @triton.jit function takes each one's place in the side table: the
graph does not depend on which function it is."""

import importlib.util
import unittest
from pathlib import Path

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

        def stand_in(name, source, device):
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


if __name__ == "__main__":
    unittest.main()
