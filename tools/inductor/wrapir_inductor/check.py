"""`check`: export, verify, emit Python with wrapir, run it under torch on
fresh inputs and compare with eager; then the same after each of wrapir's
memory plans. One line per path: `PATH: ok|FAIL max_abs_err=... peak_bytes=...`."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

from .export import Exported, Spec, export

PLANS = ("reuse", "pools", "arena")


class CheckError(Exception):
    pass


def _run_tool(wrapir: str, *args: str) -> tuple[bool, str]:
    try:
        done = subprocess.run([wrapir, *args], capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        raise CheckError(f"no wrapir tool at {wrapir!r} (pass --wrapir PATH)")
    except subprocess.TimeoutExpired:
        return False, f"wrapir {args[0]} timed out"
    message = (done.stderr or done.stdout).strip().splitlines()
    return done.returncode == 0, message[0] if message else ""


def _planned_peak(wrapir: str, program: Path) -> str:
    """The program's planned peak at its size hints, from `wrapir stats`."""
    try:
        done = subprocess.run([wrapir, "stats", str(program)], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return "n/a"
    for field in done.stdout.split():
        if field.startswith("peak_at_hints="):
            return field.partition("=")[2]
    return "n/a"


def _fresh_inputs(exported: Exported, generator: torch.Generator) -> tuple[list, list]:
    """New values for the model's own tensor inputs (parameters and other
    captured tensors keep theirs); returns (graph inputs, model inputs)."""
    user = []
    for x in exported.spec.inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            fresh = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=x.device)
            fresh.copy_(torch.randn(x.shape, generator=generator, dtype=x.dtype))
            user.append(fresh)
        elif isinstance(x, torch.Tensor):
            user.append(x.clone())
        else:
            user.append(x)
    graph = []
    for i, value in enumerate(exported.graph_inputs):
        j = exported.user_input_positions.get(i)
        graph.append(user[j] if j is not None else value)
    # Symbolic inputs (dynamic shapes) take their values from the fresh tensors,
    # never from dynamo's SymInts.
    translation = exported.translation
    by_name = dict(zip(translation.graph_input_names, graph))
    for i, program_input in enumerate(translation.program["inputs"]):
        if "expr" not in program_input:
            continue
        source = translation.symbol_sources.get(program_input["expr"])
        if source is not None and isinstance(by_name.get(source[0]), torch.Tensor):
            tensor = by_name[source[0]]
            graph[i] = tensor.size(source[2]) if source[1] == "size" else tensor.stride(source[2])
        else:
            graph[i] = int(graph[i])
    return graph, user


def _load_module(path: Path):
    name = "wrapir_emitted_" + path.stem.replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compare(got: list, want: list) -> tuple[bool, float, str]:
    if len(got) != len(want):
        return False, float("inf"), f"{len(got)} outputs, eager has {len(want)}"
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):
            if g != w:
                return False, float("inf"), f"output {i}: {g!r} != eager {w!r}"
            continue
        if not isinstance(g, torch.Tensor):
            return False, float("inf"), f"output {i} is a {type(g).__name__}, eager a tensor"
        if g.dtype != w.dtype or g.shape != w.shape:
            return False, float("inf"), f"output {i}: {g.dtype}{list(g.shape)} vs eager {w.dtype}{list(w.shape)}"
        if g.stride() != w.stride():
            return False, float("inf"), f"output {i}: strides {g.stride()} vs eager {w.stride()}"
        if w.numel():
            diff = (g.double() - w.double()).abs().max().item() if w.is_floating_point() else float((g != w).any())
            worst = max(worst, diff)
        if not torch.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True):
            return False, worst, f"output {i} differs"
    return True, worst, ""


def _run_path(label: str, program: Path, exported: Exported, wrapir: str, work: Path) -> bool:
    ok, message = _run_tool(wrapir, "verify", str(program))
    if not ok:
        print(f"{label}: FAIL verify: {message}")
        return False
    module_path = work / f"{label}.py"
    ok, message = _run_tool(wrapir, "emit", "--target", "python", str(program), "-o", str(module_path))
    if not ok:
        print(f"{label}: FAIL emit: {message}")
        return False
    try:
        module = _load_module(module_path)
        generator = torch.Generator().manual_seed(1234)
        graph_inputs, user_inputs = _fresh_inputs(exported, generator)
        with torch.no_grad():
            want = torch.utils._pytree.tree_flatten(exported.spec.fn(*user_inputs))[0]
            got = list(module.call(list(graph_inputs)))
    except Exception as e:  # the emitted module failed to load or run
        print(f"{label}: FAIL run: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
        return False
    passed, err, why = _compare(got, want)
    peak = _planned_peak(wrapir, program)
    print(f"{label}: {'ok' if passed else 'FAIL'} max_abs_err={err:.3g} peak_bytes={peak}" + (f" ({why})" if why else ""))
    return passed


def _call_body(text: str) -> list[str]:
    """The statements of the module's `call` (Inductor: `Runner.call`), unindented."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("def call(") and ("args" in stripped):
            indent = len(line) - len(line.lstrip())
            body = []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                if nxt.strip():
                    body.append(nxt.strip())
            return body
    return []


def fidelity(emitted: Path, inductor: Path) -> tuple[int, list[str]]:
    """Lines of `call` that differ between wrapir's module and Inductor's own."""
    import difflib

    ours = _call_body(emitted.read_text())
    theirs = _call_body(inductor.read_text())
    diff = [d for d in difflib.unified_diff(theirs, ours, lineterm="", n=0)
            if d[:1] in "+-" and not d.startswith(("+++", "---"))]
    return len(diff), diff


def check(spec: Spec, device: str, wrapir: str, out: Path | None, dynamic, config: dict[str, Any]) -> int:
    work = Path(out) if out else Path(tempfile.mkdtemp(prefix="wrapir_check_"))
    exported = export(spec, device, work, dynamic, config)
    if exported.translation.findings:
        for f in exported.translation.findings:
            where = f"line {f.line}" if f.line is not None else "graph"
            print(f"wrapir_inductor: unsupported: {spec.model_name}: {where}: {f.cls}: {f.why}: {f.text}",
                  file=sys.stderr)
        print("export: FAIL unsupported constructs")
        return 2
    program = work / "program.json"
    results = [_run_path("python", program, exported, wrapir, work)]
    if (work / "python.py").is_file() and (work / "inductor_module.py").is_file():
        count, diff = fidelity(work / "python.py", work / "inductor_module.py")
        (work / "fidelity.diff").write_text("\n".join(diff) + "\n")
        print(f"fidelity: {count} differing lines in call() against Inductor's module (fidelity.diff)")
    for strategy in PLANS:
        planned = work / f"program.{strategy}.json"
        ok, message = _run_tool(wrapir, "plan", "--strategy", strategy, str(program), "-o", str(planned))
        if not ok:
            print(f"python+{strategy}: FAIL plan: {message}")
            results.append(False)
            continue
        results.append(_run_path(f"python+{strategy}", planned, exported, wrapir, work))
    return 0 if all(results) else 1
