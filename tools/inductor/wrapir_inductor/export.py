"""`export`: compile a model with Inductor, capture its Wrapper IR, write it
in wrapir's form with its kernels and example tensors."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch


class ExportError(Exception):
    """Any failure that is not an unsupported construct (exit 1)."""


@dataclass
class Spec:
    text: str
    fn: Any
    inputs: tuple
    dynamic: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    dynamo_config: dict[str, Any] = field(default_factory=dict)
    # Constructs export must report (exit 2) for this model; module-level
    # `expect_unsupported` of its file. Empty: every path must pass.
    expect_unsupported: list[str] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        path, _, name = self.text.rpartition(":")
        return f"{Path(path).stem}:{name}"


def load_spec(text: str) -> Spec:
    path, sep, name = text.rpartition(":")
    if not sep or not path or not name:
        raise ExportError(f"SPEC {text!r} is not FILE.py:NAME")
    if not os.path.isfile(path):
        raise ExportError(f"SPEC {text!r}: no file {path}")
    module_name = "wrapir_model_" + "".join(c if c.isalnum() else "_" for c in Path(path).stem)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    # Registered, because dynamo imports a function's module by name when it
    # traces its globals (eager while_loop compiles its body).
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ExportError(f"SPEC {text!r}: {path} has no callable {name}")
    made = factory()
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise ExportError(f"SPEC {text!r}: {name}() must return (fn, inputs) or (fn, inputs, options)")
    fn, inputs = made[0], tuple(made[1])
    options = made[2] if len(made) == 3 else {}
    unknown = set(options) - {"dynamic", "config", "dynamo_config"}
    if unknown:
        raise ExportError(f"SPEC {text!r}: unknown options {sorted(unknown)} (expected dynamic, config, dynamo_config)")
    expected = getattr(module, "expect_unsupported", [])
    if isinstance(expected, str) or not all(isinstance(e, str) for e in expected):
        raise ExportError(f"SPEC {text!r}: expect_unsupported must be a list of strings")
    return Spec(text, fn, inputs, bool(options.get("dynamic", False)), dict(options.get("config", {})),
                dict(options.get("dynamo_config", {})), list(expected))


@dataclass
class Exported:
    spec: Spec
    out: Path
    translation: Any
    graph_inputs: list  # the values Inductor's graph takes, in its input order
    user_input_positions: dict[int, int]  # graph input index -> index into spec.inputs
    eager_outputs: list


def _flatten_outputs(value) -> list:
    leaves, _ = torch.utils._pytree.tree_flatten(value)
    return leaves


def _save_tensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> None:
    from safetensors.torch import save_file

    # safetensors stores dense tensors without shared storage; layouts live in program.json.
    save_file({k: v.detach().clone().contiguous() for k, v in tensors.items()}, str(path), metadata=metadata)


def _on_device(spec: Spec, device: str) -> Spec:
    """The model and its example inputs moved to `device` (factories build
    them on the CPU; a model must create its own tensors on its inputs'
    device)."""
    import dataclasses

    fn = spec.fn.to(device) if isinstance(spec.fn, torch.nn.Module) else spec.fn
    inputs = tuple(torch.utils._pytree.tree_map(
        lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, list(spec.inputs)))
    return dataclasses.replace(spec, fn=fn, inputs=inputs)


def export(spec: Spec, device: str, out: Path, dynamic: bool | None = None,
           config: dict[str, Any] | None = None) -> Exported:
    from torch._inductor import config as inductor_config
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.utils import run_and_get_code

    from .capture import capturing
    from .translate import translate
    from .translate_subgraph import attach_subgraphs

    if device not in ("cpu", "cuda"):
        raise ExportError(f"device {device!r}: wrapir exports CPU and CUDA programs")
    if device == "cuda":
        if not torch.cuda.is_available():
            raise ExportError("device 'cuda': torch sees no CUDA device here")
        spec = _on_device(spec, device)
    dynamic = spec.dynamic if dynamic is None else dynamic
    patches = {"force_disable_caches": True, **spec.config, **(config or {})}
    if device == "cuda":
        patches.setdefault("triton.store_cubin", True)  # keeps each kernel's cubin for kernels.json

    recorded: list[list] = []

    def recording_backend(gm, example_inputs):
        recorded.append(list(example_inputs))
        return compile_fx(gm, example_inputs)

    torch._dynamo.reset()
    with torch.no_grad():
        compiled = torch.compile(spec.fn, backend=recording_backend, dynamic=dynamic, fullgraph=True)
        try:
            with inductor_config.patch(patches), torch._dynamo.config.patch(spec.dynamo_config), \
                    capturing(device, translate) as session:
                _, codes = run_and_get_code(compiled, *spec.inputs)
        except Exception as e:  # compilation failed: Inductor's own error
            raise ExportError(f"torch.compile failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    top = [g for g in session.graphs if not g.is_subgraph]
    if len(recorded) != 1 or len(top) != 1:
        raise ExportError(f"expected one compiled graph, Inductor compiled {len(top)} (dynamo made {len(recorded)})")
    if top[0].error:
        sys.stderr.write(top[0].error)
        raise ExportError("the translator failed (traceback above)")
    translation = top[0].result
    try:
        attach_subgraphs(translation, top[0], session.graphs)
    except RuntimeError as e:
        sys.stderr.write(str(e) + "\n")
        raise ExportError("the translator failed on a subgraph (traceback above)")

    graph_inputs = recorded[0]
    if len(graph_inputs) != len(translation.graph_input_names):
        raise ExportError(f"dynamo passed {len(graph_inputs)} inputs but Inductor's graph takes "
                          f"{len(translation.graph_input_names)}")
    positions = {}
    for i, value in enumerate(graph_inputs):
        for j, user in enumerate(spec.inputs):
            if value is user:
                positions[i] = j

    out.mkdir(parents=True, exist_ok=True)
    kernels_dir = out / "kernels"
    kernels_dir.mkdir(exist_ok=True)
    manifest = []
    if device == "cuda":
        from .export_triton import fill_launch_config, save_triton_kernels

        # The configurations the autotuners chose go into the definitions' metadata too.
        triton_manifest = save_triton_kernels(translation.program, kernels_dir)
        fill_launch_config(translation.program, triton_manifest)
    (out / "program.json").write_text(json.dumps({"format": "wrapir", "version": 1, "program": translation.program},
                                                 indent=1) + "\n")
    written: dict[str, str] = {}
    for k in translation.kernels:
        if k.name in written:  # a subgraph's copy of a definition (translate_subgraph)
            if written[k.name] != k.source:
                raise ExportError(f"kernel {k.name} is defined twice with different sources")
            continue
        written[k.name] = k.source
        (kernels_dir / f"{k.name}.cpp").write_text(k.source)
        entry = {"name": k.name, "source": f"kernels/{k.name}.cpp", "language": "cpp", "entry": "kernel",
                 "arg_types": k.arg_types, "prefix_header": None}
        if k.prefix_header:
            entry["prefix_header"] = _prefix_header(k.prefix_header, kernels_dir)
        manifest.append(entry)
    if device == "cuda":
        manifest += triton_manifest
    (out / "kernels.json").write_text(json.dumps({"kernels": manifest, "compile": _compile_info()}, indent=1) + "\n")
    if codes:
        (out / "inductor_module.py").write_text(codes[0])

    # Eager's outputs for exactly the values saved as inputs: compiling ran the
    # model once, and a model that updates a buffer in place (or its
    # inputs) changed them; eager runs on that state, which is then put back.
    saved = [v.detach().clone() if isinstance(v, torch.Tensor) else None for v in graph_inputs]
    with torch.no_grad():
        eager = spec.fn(*[x.clone() if isinstance(x, torch.Tensor) else x for x in spec.inputs])
        eager = torch.utils._pytree.tree_map(lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v, eager)
        for value, before in zip(graph_inputs, saved):
            if before is not None:
                value.copy_(before)
    tensors = {n: v for n, v in zip(translation.graph_input_names, graph_inputs) if isinstance(v, torch.Tensor)}
    scalars = {n: v for n, v in zip(translation.graph_input_names, graph_inputs) if not isinstance(v, torch.Tensor)}
    _save_tensors(out / "inputs.safetensors", tensors, {"scalars": json.dumps({k: int(v) for k, v in scalars.items()})})
    eager_leaves = _flatten_outputs(eager)
    _save_tensors(out / "outputs.safetensors",
                  {f"out{i}": v for i, v in enumerate(eager_leaves) if isinstance(v, torch.Tensor)}, {})

    report = {
        "model": spec.text,
        "torch": torch.__version__,
        "line_classes": translation.class_counts,
        "findings": [f.as_dict() for f in translation.findings],
        "lossy": translation.lossy,
        "provenance": translation.provenance,
        "graph_inputs": [
            {"name": n, "user_input": positions.get(i),
             "parameter": isinstance(graph_inputs[i], torch.nn.Parameter)}
            for i, n in enumerate(translation.graph_input_names)
        ],
    }
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return Exported(spec, out, translation, graph_inputs, positions, eager_leaves)


def _prefix_header(included: str, kernels_dir: Path) -> dict[str, Any]:
    """Where the kernel's first #include lives; a copy travels with the kernels."""
    from torch.utils.cpp_extension import include_paths

    candidates = [included] if os.path.isabs(included) else [os.path.join(d, included) for d in include_paths()]
    for path in candidates:
        if os.path.isfile(path):
            copy = kernels_dir / os.path.basename(path)
            shutil.copyfile(path, copy)
            return {"included_as": included, "resolved": path, "copy": f"kernels/{copy.name}"}
    return {"included_as": included, "resolved": None, "copy": None}


def _compile_info() -> dict[str, Any]:
    """How Inductor itself compiles one CPU kernel on this machine: the
    compiler command (include paths for `<torch/csrc/inductor/cpp_prefix.h>`,
    flags, OpenMP, the vector ISA it picked), for C++ consumers."""
    try:
        from torch._inductor.cpp_builder import CppBuilder, CppTorchOptions
        from torch._inductor.cpu_vec_isa import pick_vec_isa

        isa = pick_vec_isa()
        options = CppTorchOptions(vec_isa=isa, include_pytorch=True)
        builder = CppBuilder(name="kernel", sources=["kernel.cpp"], BuildOption=options, output_dir=".")
        return {"command": builder.get_command_line(), "vec_isa": str(isa),
                "note": "Inductor's command for one kernel file kernel.cpp (the pybinding wrapper adds Python's includes)"}
    except Exception as e:  # informational only
        return {"command": None, "note": f"not available: {type(e).__name__}: {e}"}
