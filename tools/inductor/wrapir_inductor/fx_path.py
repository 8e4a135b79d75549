"""The `fx` path of `check`: the program as an FX graph (wrapir's emit::fx).

`wrapir emit --target fx` prints the graph text, `--target fx-python` a
module whose `build()` makes the GraphModule with real torch.fx. On every
device the module's graph, printed by torch (`graph_text`), must equal the
emitted text; then the GraphModule runs on the same fresh inputs as eager and
its outputs are compared with eager's: by default on CUDA (WRAPIR_FX_RUN=0
turns it off), on the CPU with WRAPIR_FX_RUN=1 (docs/emitters.md)."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from .check import Result, _aliases, _compare_at_scales, _load_module, _run_tool, _snapshot

# Constructs the FX emitter reports as having no FX form (docs/emitters.md,
# "FX"): a program holding one is not a failure of this path, but skipped
# with the emitter's reason.
UNSUPPORTED = ("multi-kernels have no FX form",)


def _runs(device: str) -> bool:
    """Whether the GraphModule runs after its graph is compared: on CUDA
    unless WRAPIR_FX_RUN=0 (on an H100, 2026-11-27, every corpus model with
    Triton kernels ran equal to eager once the side table held launchable
    functions); on the CPU only with WRAPIR_FX_RUN=1, as the C++ kernels'
    wrapper has been checked on part of the corpus only."""
    setting = os.environ.get("WRAPIR_FX_RUN", "")
    if setting in ("0", "1"):
        return setting == "1"
    return device == "cuda"


def _graph_text_matches(module, text: str) -> tuple[bool, str]:
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    # The emitted text numbers the side table from 0, as a fresh process does.
    kernel_side_table.reset_table()
    gm = module.build()
    got = module.graph_text(gm)
    if got == text:
        return True, ""
    for i, (a, b) in enumerate(zip(got.splitlines(), text.splitlines())):
        if a != b:
            return False, f"graph line {i + 1}: torch.fx prints {a.strip()[:160]!r}, wrapir {b.strip()[:160]!r}"
    return False, f"graph: torch.fx prints {len(got.splitlines())} lines, wrapir {len(text.splitlines())}"


def run_fx(program: Path, exported, wrapir: str, work: Path, size_scales: list[int], device: str,
           peak: str = "n/a") -> Result:
    result = Result("fx")
    result.peak = peak
    text_path, module_path = work / "fx.txt", work / "fx_module.py"
    for target, path in (("fx", text_path), ("fx-python", module_path)):
        ok, message, _ = _run_tool(wrapir, "emit", "--target", target, str(program), "-o", str(path))
        if not ok:
            if any(u in message for u in UNSUPPORTED):
                result.ok = True
                result.why = f"skipped, no FX form: {message}"
                return result
            result.why = f"emit {target}: {message}"
            return result
    try:
        module = _load_module(module_path)
        same, why = _graph_text_matches(module, text_path.read_text())
    except Exception as e:
        result.why = f"build: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
        return result
    if not same:
        result.why = why
        return result
    if not _runs(device):
        result.ok = True
        result.why = ("graph only (WRAPIR_FX_RUN=1 runs the GraphModule)" if device != "cuda"
                      else "graph only (WRAPIR_FX_RUN=0)")
        return result

    def run(inputs):
        from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

        kernel_side_table.reset_table()
        gm = module.build()
        graph = inputs.for_module()
        with torch.no_grad():
            out = gm(*graph)
        got = list(out) if isinstance(out, (list, tuple)) else [out]
        return got, _snapshot(graph), _aliases(got, graph)

    return _compare_at_scales(result, exported, size_scales, run)
