"""`check`: export, verify, emit Python with wrapir, run it under torch on
fresh inputs and compare with eager; then the same after each of wrapir's
memory plans. One line per path: `PATH: ok|FAIL max_abs_err=... peak_bytes=...`."""

from __future__ import annotations

import importlib.util
import json
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


def _run_tool(wrapir: str, *args: str) -> tuple[bool, str, str]:
    """Runs the wrapir tool; (succeeded, first line of its message, whole stderr)."""
    try:
        done = subprocess.run([wrapir, *args], capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        raise CheckError(f"no wrapir tool at {wrapir!r} (pass --wrapir PATH)")
    except subprocess.TimeoutExpired:
        return False, f"wrapir {args[0]} timed out", ""
    message = (done.stderr or done.stdout).strip().splitlines()
    return done.returncode == 0, message[0] if message else "", done.stderr


def _fields(text: str) -> dict[str, str]:
    """`key=value` words of a wrapir summary line."""
    return dict(w.split("=", 1) for w in text.split() if "=" in w)


def _planned_peak(wrapir: str, program: Path) -> str:
    """The program's peak at its size hints, from `wrapir stats`."""
    try:
        done = subprocess.run([wrapir, "stats", str(program)], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return "n/a"
    return _fields(done.stdout).get("peak_at_hints", "n/a")


# ---- inputs -------------------------------------------------------------------


def _is_symbolic(size: str) -> bool:
    return not size.lstrip("-").isdigit()


def _fresh_tensor(x: torch.Tensor, sizes: list[int] | None, generator: torch.Generator) -> torch.Tensor:
    """A new tensor like `x` (same strides where the sizes are x's, contiguous
    otherwise) with fresh random values."""
    if sizes is None or list(sizes) == list(x.shape):
        fresh = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=x.device)
    else:
        fresh = torch.empty(sizes, dtype=x.dtype, device=x.device)
    if x.is_floating_point():
        fresh.copy_(torch.randn(fresh.shape, generator=generator, dtype=torch.float32).to(x.dtype))
    elif x.dtype == torch.bool:
        fresh.copy_(torch.randint(0, 2, fresh.shape, generator=generator).bool())
    elif fresh.shape == x.shape:
        fresh.copy_(x)  # integer inputs are often indices or counts: keep their values
    else:
        raise CheckError("cannot make a resized integer input")
    return fresh


def _user_sizes(exported: Exported, scale: int) -> dict[int, list[int]] | None:
    """Sizes of the model's own tensor inputs at `scale` times each symbolic
    dimension of their declared layout (scale 1: the example's sizes). A
    multiple keeps the divisibility and equality guards dynamo put on the
    example's sizes. None when no input has a symbolic dimension."""
    declared = {b["name"]: b for b in exported.translation.program["buffers"]}
    sizes: dict[int, list[int]] = {}
    any_symbolic = False
    for graph_index, user_index in exported.user_input_positions.items():
        name = exported.translation.graph_input_names[graph_index]
        value = exported.spec.inputs[user_index]
        if not isinstance(value, torch.Tensor) or name not in declared:
            continue
        dims = []
        for size, hint in zip(declared[name]["sizes"], value.shape):
            symbolic = _is_symbolic(size)
            any_symbolic |= symbolic
            dims.append(hint * scale if symbolic else hint)
        sizes[user_index] = dims
    return sizes if any_symbolic else None


class Inputs:
    """One set of call arguments for eager and for a compiled module. The
    model's own inputs are fresh; every other graph input (parameters,
    buffers, captured tensors) keeps its value but is snapshotted, so that a
    model that mutates it starts from the same state in every run."""

    def __init__(self, exported: Exported, generator: torch.Generator, sizes: dict[int, list[int]] | None):
        self.exported = exported
        self.user = []
        for j, x in enumerate(exported.spec.inputs):
            if isinstance(x, torch.Tensor):
                self.user.append(_fresh_tensor(x, (sizes or {}).get(j), generator))
            else:
                self.user.append(x)
        self.state = {i: v.detach().clone() for i, v in enumerate(exported.graph_inputs)
                      if isinstance(v, torch.Tensor) and i not in exported.user_input_positions}

    def restore(self) -> None:
        with torch.no_grad():
            for i, saved in self.state.items():
                self.exported.graph_inputs[i].copy_(saved)

    def for_eager(self) -> tuple[list, list]:
        """(the model's arguments, the graph inputs they stand for)."""
        self.restore()
        user = [x.clone() if isinstance(x, torch.Tensor) else x for x in self.user]
        return user, self._graph(user)

    def for_module(self) -> list:
        self.restore()
        user = [x.clone() if isinstance(x, torch.Tensor) else x for x in self.user]
        return self._graph(user)

    def _graph(self, user: list) -> list:
        exported = self.exported
        graph = []
        for i, value in enumerate(exported.graph_inputs):
            j = exported.user_input_positions.get(i)
            graph.append(user[j] if j is not None else value)
        # Symbolic inputs (dynamic shapes) take their values from the tensors
        # of this run, never from dynamo's SymInts.
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
        return graph


def _load_module(path: Path):
    name = "wrapir_emitted_" + path.stem.replace("-", "_").replace("+", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- comparison ---------------------------------------------------------------


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    if dtype in (torch.bfloat16, torch.float16):
        return 1.6e-2, 1e-2  # one bf16 ulp of relative error, as torch.testing does
    return 1e-4, 1e-5


def _storage(t: torch.Tensor) -> int | None:
    if not isinstance(t, torch.Tensor) or t.untyped_storage().nbytes() == 0:
        return None
    return t.untyped_storage().data_ptr()


def _byte_range(t: torch.Tensor) -> tuple[int, int]:
    """[first, last) bytes of its storage that `t` can address."""
    if t.numel() == 0:
        return 0, 0
    extent = 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride()))
    first = t.storage_offset() * t.element_size()
    return first, first + extent * t.element_size()


def _bytes_overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    (a0, a1), (b0, b1) = _byte_range(a), _byte_range(b)
    return a0 < b1 and b0 < a1


def _aliases(outputs: list, graph_inputs: list) -> list[str | None]:
    """For each output, what it shares storage with: `input k` (a graph
    input), `output j` (an earlier output), or None (its own storage)."""
    result = []
    for i, out in enumerate(outputs):
        ptr = _storage(out)
        found = None
        if ptr is not None:
            for k, x in enumerate(graph_inputs):
                if isinstance(x, torch.Tensor) and _storage(x) == ptr:
                    found = f"input {k}"
                    break
            if found is None:
                for j in range(i):
                    if isinstance(outputs[j], torch.Tensor) and _storage(outputs[j]) == ptr:
                        found = f"output {j}"
                        break
        result.append(found)
    return result


def _significant_strides(t: torch.Tensor) -> list[int | None]:
    """Strides of the dimensions longer than 1 (the others never move an index)."""
    return [s if n > 1 else None for s, n in zip(t.stride(), t.shape)]


def _compare_tensor(what: str, g, w) -> tuple[bool, float, str]:
    if not isinstance(g, torch.Tensor):
        return False, float("inf"), f"{what} is a {type(g).__name__}, eager's a tensor"
    if g.dtype != w.dtype or g.shape != w.shape:
        return False, float("inf"), f"{what}: {g.dtype}{list(g.shape)} vs eager {w.dtype}{list(w.shape)}"
    if _significant_strides(g) != _significant_strides(w):
        return False, float("inf"), f"{what}: strides {g.stride()} vs eager {w.stride()}"
    diff = 0.0
    if w.numel():
        if w.is_floating_point() or w.is_complex():
            diff = (g.double() - w.double()).abs().max().item()
        else:
            diff = float((g != w).any())
    rtol, atol = _tolerance(w.dtype)
    if not torch.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
        return False, diff, f"{what} differs"
    return True, diff, ""


def _compare(got: list, want: list, got_inputs_after: list, want_inputs_after: list,
             got_aliases: list, want_aliases: list) -> tuple[bool, float, str]:
    if len(got) != len(want):
        return False, float("inf"), f"{len(got)} outputs, eager has {len(want)}"
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):
            if g != w:
                return False, float("inf"), f"output {i}: {g!r} != eager {w!r}"
            continue
        ok, diff, why = _compare_tensor(f"output {i}", g, w)
        worst = max(worst, diff)
        if not ok:
            return False, worst, why
    for i, (g, w) in enumerate(zip(got_aliases, want_aliases)):
        if g == w:
            continue
        if w is None and g is not None and g.startswith("output "):
            # Two results carved from one pool or arena share its storage
            # (Inductor's own pool policies `outputs` and `combined` do the
            # same); that is no alias as long as their bytes are disjoint.
            j = int(g.split()[1])
            if not _bytes_overlap(got[i], got[j]):
                continue
            return False, worst, f"output {i} overlaps output {j} in their shared storage"
        return False, worst, f"output {i} aliases {g or 'nothing'}, eager's {w or 'nothing'}"
    for k, (g, w) in enumerate(zip(got_inputs_after, want_inputs_after)):
        if isinstance(w, torch.Tensor):
            ok, diff, why = _compare_tensor(f"input {k} after the call", g, w)
            worst = max(worst, diff)
            if not ok:
                return False, worst, why
    return True, worst, ""


def _snapshot(values: list) -> list:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


# ---- paths --------------------------------------------------------------------


class Result:
    def __init__(self, path: str):
        self.path = path
        self.ok = False
        self.err = float("nan")
        self.peak = "n/a"
        self.lower_bound = None
        self.plan_peak = None
        self.why = ""

    def line(self) -> str:
        text = f"{self.path}: {'ok' if self.ok else 'FAIL'} max_abs_err={self.err:.3g} peak_bytes={self.peak}"
        if self.plan_peak is not None:
            text += f" plan_peak_bytes={self.plan_peak}"
        if self.lower_bound is not None:
            text += f" lower_bound_bytes={self.lower_bound}"
        return text + (f" ({self.why})" if self.why else "")

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "ok": self.ok, "max_abs_err": self.err, "peak_bytes": self.peak,
                "plan_peak_bytes": self.plan_peak, "lower_bound_bytes": self.lower_bound, "why": self.why}


def _run_module(call, exported: Exported, inputs: Inputs) -> tuple[list, list, list]:
    graph = inputs.for_module()
    with torch.no_grad():
        got = list(call(list(graph)))
    return got, _snapshot(graph), _aliases(got, graph)


def _run_eager(exported: Exported, inputs: Inputs) -> tuple[list, list, list]:
    user, graph = inputs.for_eager()
    with torch.no_grad():
        want = torch.utils._pytree.tree_flatten(exported.spec.fn(*user))[0]
    return want, _snapshot(graph), _aliases(want, graph)


def _run_path(label: str, program: Path, exported: Exported, wrapir: str, work: Path,
              size_scales: list[int]) -> Result:
    result = Result(label)
    ok, message, _ = _run_tool(wrapir, "verify", str(program))
    if not ok:
        result.why = f"verify: {message}"
        return result
    module_path = work / f"{label.replace('+', '.')}.py"
    ok, message, _ = _run_tool(wrapir, "emit", "--target", "python", str(program), "-o", str(module_path))
    if not ok:
        result.why = f"emit: {message}"
        return result
    result.peak = _planned_peak(wrapir, program)
    try:
        module = _load_module(module_path)
    except Exception as e:
        result.why = f"load: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
        return result
    return _compare_at_scales(result, exported, size_scales, lambda inputs: _run_module(module.call, exported, inputs))


def _compare_at_scales(result: Result, exported: Exported, size_scales: list[int], run) -> Result:
    """Runs `run(inputs)` -> (outputs, inputs after, aliases) on fresh inputs at
    each size scale and compares it with eager on the same inputs; the first
    failure or difference is the result's `why`."""
    worst = 0.0
    for scale in size_scales:
        where = "" if scale == 1 else f" at {scale}x the symbolic sizes"
        try:
            inputs = Inputs(exported, torch.Generator().manual_seed(1234 + scale), _user_sizes(exported, scale))
            want, want_after, want_alias = _run_eager(exported, inputs)
            got, got_after, got_alias = run(inputs)
            inputs.restore()
        except Exception as e:  # the module under test failed to run
            result.why = f"run{where}: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
            return result
        ok, err, why = _compare(got, want, got_after, want_after, got_alias, want_alias)
        worst = max(worst, err)
        result.err = worst
        if not ok:
            result.why = why + where
            return result
    result.ok = True
    return result


def _cublas_path() -> str | None:
    """The cuBLAS this torch loads (`wrapir run --device cuda` dlopens it)."""
    import glob
    import os

    for root in [os.path.dirname(torch.__file__) + "/..", os.path.dirname(torch.__file__) + "/lib"]:
        found = sorted(glob.glob(f"{root}/nvidia/**/libcublas.so*", recursive=True) + glob.glob(f"{root}/libcublas.so*"))
        if found:
            return found[-1]
    return None


def _run_executor(label: str, program: Path, exported: Exported, wrapir: str, work: Path,
                  size_scales: list[int], peak: str, device: str = "cpu") -> Result:
    """The program run by wrapir's C++ executor (`wrapir run`, no Python):
    the same fresh inputs as eager, written as safetensors; its outputs
    compared with eager's by value, dtype and shape. (Tensor files are dense:
    strides and aliasing of outputs are the executor's unit tests' to check.)"""
    import os

    from torch.utils.cpp_extension import include_paths

    # Inductor's kernels include <torch/csrc/inductor/cpp_prefix.h>: the
    # executor's compiler needs this torch's headers.
    os.environ.setdefault("WRAPIR_TORCH_INCLUDE", include_paths()[0])
    if device == "cuda" and "WRAPIR_CUBLAS" not in os.environ and (cublas := _cublas_path()):
        os.environ["WRAPIR_CUBLAS"] = cublas
    result = Result(label)
    result.peak = peak  # the Python path of the same program measured it
    stem = label.replace("+", ".")
    return _run_native(result, exported, work, size_scales, stem, "wrapir run", lambda inputs, outputs: (
        wrapir, "run", str(program), "--inputs", str(inputs), "--device", device, "-o", str(outputs)))


def _run_native(result: Result, exported: Exported, work: Path, size_scales: list[int], stem: str, what: str,
                command) -> Result:
    """Runs a native path (`wrapir run`, `wrapir run-cpp`) at each size
    scale on the same fresh inputs as eager, written as safetensors
    (`command(inputs_file, outputs_file)` is its argv), and compares its
    outputs with eager's by value, dtype and shape."""
    from safetensors.torch import load_file, save_file

    names = exported.translation.graph_input_names
    worst = 0.0
    for scale in size_scales:
        sizes = _user_sizes(exported, scale)
        where = "" if scale == 1 else f" at {scale}x the symbolic sizes"
        files = f"{stem}.{scale}x"
        try:
            inputs = Inputs(exported, torch.Generator().manual_seed(1234 + scale), sizes)
            graph = inputs.for_module()
            # Dense, as safetensors stores tensors: the tool lays each input out
            # as the program declares it (strides, offset) before running.
            tensors = {n: v.detach().cpu().contiguous() for n, v in zip(names, graph) if isinstance(v, torch.Tensor)}
            scalars = {n: int(v) for n, v in zip(names, graph) if not isinstance(v, torch.Tensor)}
            save_file(tensors, str(work / f"{files}.inputs.safetensors"), metadata={"scalars": json.dumps(scalars)})
            want, _, _ = _run_eager(exported, inputs)
            inputs.restore()
        except Exception as e:
            result.why = f"inputs{where}: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
            return result
        outputs = work / f"{files}.outputs.safetensors"
        ok, message, _ = _run_tool(*command(work / f"{files}.inputs.safetensors", outputs))
        if not ok:
            result.why = f"run{where}: {message}"
            return result
        got_file = load_file(str(outputs))
        for i, w in enumerate(want):
            if not isinstance(w, torch.Tensor):
                continue
            g = got_file.get(f"out{i}")
            if g is None:
                result.why = f"output {i}: `{what}` wrote no out{i}{where}"
                return result
            ok, diff, why = _compare_tensor(f"output {i}", g, w.detach().cpu().contiguous())
            worst = max(worst, diff)
            result.err = worst
            if not ok:
                result.why = why + where
                return result
    result.ok = True
    return result


_CPP_FLAGS: tuple[list[str], list[str]] | None = None


def _cpp_flags(wrapir: str) -> tuple[list[str], list[str]]:
    """The flags that compile and link an emitted C++ unit, from the tool
    (Inductor's kernel flags, torch's headers as -isystem), asked once."""
    global _CPP_FLAGS
    if _CPP_FLAGS is None:
        done = subprocess.run([wrapir, "emit-cpp", "--print-flags"], capture_output=True, text=True, timeout=60)
        lines = done.stdout.splitlines()
        if done.returncode != 0 or len(lines) != 2:
            raise CheckError(f"wrapir emit-cpp --print-flags: {(done.stderr or done.stdout).strip()[:300]}")
        _CPP_FLAGS = (lines[0].split(), lines[1].split())
    return _CPP_FLAGS


def _cuda_cpp_flags() -> tuple[list[str], list[str]]:
    """The flags that compile and link an emitted CUDA unit: the CUDA
    Toolkit's cuda.h (as -isystem) and the driver (-lcuda, through the
    toolkit's link stub where there is one). The toolkit is $CUDA_HOME, else
    nvcc's, else /usr/local/cuda."""
    import os
    import shutil

    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if not home and (nvcc := shutil.which("nvcc")):
        home = str(Path(nvcc).resolve().parent.parent)
    home = Path(home or "/usr/local/cuda")
    if not (home / "include" / "cuda.h").is_file():
        raise CheckError(f"no cuda.h under {home}/include (set CUDA_HOME)")
    link = ["-lcuda"]
    for stubs in (home / "lib64" / "stubs", home / "lib" / "stubs", home / "targets" / "x86_64-linux" / "lib" / "stubs"):
        if (stubs / "libcuda.so").is_file():
            link = [f"-L{stubs}", "-lcuda"]
            break
    return ["-std=c++17", "-O2", "-isystem", str(home / "include")], link


def _has_cpp_kernels(program: Path) -> bool:
    """Whether the program (JSON) declares a C++ kernel in any graph."""
    import re

    return re.search(r'"language"\s*:\s*"cpp"', program.read_text()) is not None


def _run_cpp(label: str, program: Path, exported: Exported, wrapir: str, work: Path,
             size_scales: list[int], peak: str, device: str = "cpu") -> Result:
    """The program as a standalone C++ unit (`wrapir emit-cpp`), compiled by
    g++ with `-Wall -Wextra -Werror` and the kernels' flags into a shared
    object, run by `wrapir run-cpp` (the C entry point, the reference externs
    through the C table) on the same fresh inputs as eager; its outputs
    compared with eager's by value, dtype and shape, as the executor path's.
    On CUDA: the unit launches the export's cubins (kernels.json beside the
    program), is compiled against cuda.h and linked with -lcuda, and
    `run-cpp --device cuda` serves it the executor's cuBLAS externs."""
    import os

    from torch.utils.cpp_extension import include_paths

    os.environ.setdefault("WRAPIR_TORCH_INCLUDE", include_paths()[0])
    if device == "cuda" and "WRAPIR_CUBLAS" not in os.environ and (cublas := _cublas_path()):
        os.environ["WRAPIR_CUBLAS"] = cublas
    result = Result(label)
    result.peak = peak
    stem = label.replace("+", ".")
    unit = work / f"{stem}.cpp"
    ok, message, _ = _run_tool(wrapir, "emit-cpp", str(program), "-o", str(unit))
    if not ok:
        result.why = f"emit: {message}"
        return result
    try:
        compile_flags, link_flags = _cuda_cpp_flags() if device == "cuda" else _cpp_flags(wrapir)
        if device == "cuda" and _has_cpp_kernels(program):
            # Host work in a CUDA program (index_put's int64 histogram): its
            # C++ kernels include Inductor's prefix header and need the CPU
            # kernels' flags (torch's headers, OpenMP, the vector ISA) too.
            cpu_compile, cpu_link = _cpp_flags(wrapir)
            compile_flags, link_flags = [*compile_flags, *cpu_compile], [*cpu_link, *link_flags]
    except (CheckError, OSError, subprocess.TimeoutExpired) as e:
        result.why = f"flags: {e}"
        return result
    library = work / f"{stem}.so"
    command = [os.environ.get("WRAPIR_CXX", "g++"), *compile_flags, "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
               str(unit), "-o", str(library), *link_flags]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        result.why = "compile: timed out"
        return result
    if done.returncode != 0:
        (work / f"{stem}.compile.log").write_text(done.stderr)
        first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip()[:300])
        result.why = f"compile: {' '.join(first.split())[:300]}"
        return result
    return _run_native(result, exported, work, size_scales, stem, "wrapir run-cpp", lambda inputs, outputs: (
        wrapir, "run-cpp", str(program), "--library", str(library), "--inputs", str(inputs), "--device", device,
        "-o", str(outputs)))


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
    summary: dict[str, Any] = {"model": spec.text, "paths": [], "unsupported": []}
    if exported.translation.findings:
        for f in exported.translation.findings:
            where = f"line {f.line}" if f.line is not None else "graph"
            print(f"wrapir_inductor: unsupported: {spec.model_name}: {where}: {f.cls}: {f.why}: {f.text}",
                  file=sys.stderr)
            summary["unsupported"].append(f.as_dict())
        print("export: FAIL unsupported constructs")
        (work / "check.json").write_text(json.dumps(summary, indent=1) + "\n")
        return 2
    program = work / "program.json"
    # Dynamic programs also run at other sizes: 2x and 3x every symbolic dimension.
    scales = [1, 2, 3] if _user_sizes(exported, 1) is not None else [1]
    if len(scales) > 1:
        print(f"sizes: each path also runs at 2x and 3x the example's symbolic sizes")
    results = [_run_path("python", program, exported, wrapir, work, scales)]
    print(results[0].line())
    if (work / "python.py").is_file() and (work / "inductor_module.py").is_file():
        count, diff = fidelity(work / "python.py", work / "inductor_module.py")
        (work / "fidelity.diff").write_text("\n".join(diff) + "\n")
        summary["fidelity_differing_lines"] = count
        print(f"fidelity: {count} differing lines in call() against Inductor's module (fidelity.diff)")
    for strategy in PLANS:
        planned = work / f"program.{strategy}.json"
        ok, message, stderr = _run_tool(wrapir, "plan", "--strategy", strategy, str(program), "-o", str(planned))
        if not ok:
            result = Result(f"python+{strategy}")
            result.why = f"plan: {message}"
        else:
            result = _run_path(f"python+{strategy}", planned, exported, wrapir, work, scales)
            stats = _fields(stderr)
            # The planner's own accounting, which (unlike `wrapir stats`)
            # counts the tensors behind multi-output results.
            result.plan_peak = stats.get("peak_bytes")
            result.lower_bound = stats.get("lower_bound_bytes")
        print(result.line())
        results.append(result)
    if device in ("cpu", "cuda"):
        # The C++ executor, on the program as exported and as arena-planned.
        peaks = {r.path: r.peak for r in results}
        for label, path, python_path in (("executor", program, "python"),
                                         ("executor+arena", work / "program.arena.json", "python+arena")):
            result = (_run_executor(label, path, exported, wrapir, work, scales, peaks.get(python_path, "n/a"), device)
                      if path.is_file() else Result(label))
            if not path.is_file():
                result.why = f"no {path.name}"
            print(result.line())
            results.append(result)
    if device in ("cpu", "cuda"):
        # The program as a standalone C++ unit (emit::cpp), as exported and as arena-planned.
        peaks = {r.path: r.peak for r in results}
        for label, path, python_path in (("cpp", program, "python"),
                                         ("cpp+arena", work / "program.arena.json", "python+arena")):
            result = (_run_cpp(label, path, exported, wrapir, work, scales, peaks.get(python_path, "n/a"), device)
                      if path.is_file() else Result(label))
            if not path.is_file():
                result.why = f"no {path.name}"
            print(result.line())
            results.append(result)
    if device in ("cpu", "cuda"):
        from .fx_path import run_fx  # the program as an FX graph (emit::fx)

        results.append(run_fx(program, exported, wrapir, work, scales, device))
        print(results[-1].line())
    summary["paths"] = [r.as_dict() for r in results]
    (work / "check.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if all(r.ok for r in results) else 1
