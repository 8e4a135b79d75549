"""Capturing Inductor's Wrapper IR after Inductor's own passes.

The hook is the supported extension point out-of-tree backends use:
``torch._inductor.codegen.common.register_backend_for_device``. For the
duration of one compilation the CPU device is registered with Inductor's own
scheduling and C++/FX wrapper classes but with a Python wrapper codegen of
ours, a subclass of ``PythonWrapperCodegen`` that changes nothing in the code
Inductor generates: after ``run_wrapper_ir_passes`` (reuse or pool planning)
it hands ``self.lines`` to a translator while ``V.graph`` is still the graph
being generated, then lets Inductor render the lines as usual.
"""

from __future__ import annotations

import contextlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from torch._inductor.codegen import common
from torch._inductor.codegen.wrapper import (
    PythonWrapperCodegen,
    SubgraphPythonWrapperCodegen,
)
from torch._inductor.virtualized import V


@dataclass
class CapturedGraph:
    """What one wrapper produced: the translator's result for its lines."""

    is_subgraph: bool
    name: str | None
    result: Any = None
    error: str | None = None
    # Which wrapper produced it, and (subgraphs) the wrapper of the graph that
    # calls it: subgraph names repeat at different nesting levels. Held (not
    # their id()s) so that no address is reused while the session lives.
    wrapper: Any = None
    parent: Any = None


@dataclass
class CaptureSession:
    translate: Callable[[PythonWrapperCodegen, Any, bool], Any]
    graphs: list[CapturedGraph] = field(default_factory=list)


_session: CaptureSession | None = None


def _capture(wrapper: PythonWrapperCodegen, is_subgraph: bool, name: str | None) -> None:
    if _session is None:
        return
    parent = getattr(wrapper, "parent_wrapper", None) if is_subgraph else None
    entry = CapturedGraph(is_subgraph=is_subgraph, name=name, wrapper=wrapper, parent=parent)
    try:
        entry.result = _session.translate(wrapper, V.graph, is_subgraph)
    except Exception:  # the translator's bug must not break Inductor's own compilation
        entry.error = traceback.format_exc()
    _session.graphs.append(entry)


class CapturingWrapperCodegen(PythonWrapperCodegen):
    """Inductor's Python wrapper codegen, observed after its Wrapper-IR passes."""

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return CapturingSubgraphWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return CapturingWrapperCodegen()

    def run_wrapper_ir_passes(self, is_inference: bool):
        result = super().run_wrapper_ir_passes(is_inference)
        _capture(self, False, None)
        return result


class CapturingSubgraphWrapperCodegen(SubgraphPythonWrapperCodegen):
    def run_wrapper_ir_passes(self, is_inference: bool):
        result = super().run_wrapper_ir_passes(is_inference)
        _capture(self, True, self.subgraph_name)
        return result


@contextlib.contextmanager
def capturing(device: str, translate) -> CaptureSession:
    """Registers the capturing wrapper for `device` while the block runs."""
    global _session
    if _session is not None:
        raise RuntimeError("wrapir_inductor: captures cannot nest")
    common.init_backend_registration()
    original = common.device_codegens.get(device)
    if original is None:
        raise RuntimeError(f"Inductor has no backend registered for device {device!r}")
    saved_pass = common.custom_backend_passes.get(device)
    saved_config = common.custom_backend_codegen_configs.get(device)
    common.register_backend_for_device(
        device,
        original.scheduling,
        CapturingWrapperCodegen,
        original.cpp_wrapper_codegen,
        original.fx_wrapper_codegen,
        saved_pass,
        saved_config,
    )
    _session = CaptureSession(translate=translate)
    try:
        yield _session
    finally:
        _session = None
        common.device_codegens[device] = original
        common.custom_backend_passes[device] = saved_pass
        common.custom_backend_codegen_configs[device] = saved_config
