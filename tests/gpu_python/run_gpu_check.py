#!/usr/bin/env python3
"""Runs wrapir's Python emitter end to end on a GPU and checks it against eager PyTorch.

For each fixture tests/gpu_python/programs/*.json (written by make_programs.cpp):

1. `wrapir emit --target python FIXTURE -o MODULE.py`;
2. `ast.parse` of the module, and `compile` of every Triton kernel source the
   fixture defines (with --dry-run this is all: no torch, no GPU needed);
3. import the module, call `module.call(args)` for each input case of the
   program (dynamic-shape programs run at several sizes), compute the same
   results with eager PyTorch and compare them with torch.testing.assert_close
   (values, shapes and strides; view outputs must alias their base).

Prints one table row per program, form and case, and exits with 1 if any
failed (2 for a usage error).

Without a wrapir build on the GPU machine: emit elsewhere with
`--dry-run --out DIR`, copy DIR over and run `--modules DIR` there.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_WRAPIR = REPO / "build" / "release" / "tools" / "wrapir" / "wrapir"


# ---------------------------------------------------------------------------
# What each program computes, and the inputs it is run on
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """One run of a program: a label and the sizes `make_inputs` receives."""

    label: str
    sizes: dict[str, Any]


@dataclasses.dataclass
class Spec:
    # (torch, sizes) -> the argument list of `call`, in the program's input order.
    make_inputs: Callable[[Any, dict[str, Any]], list[Any]]
    # (torch, *inputs) -> the expected outputs, in the program's output order.
    eager: Callable[..., tuple[Any, ...]]
    cases: list[Case]
    rtol: float | None = None
    atol: float | None = None
    # Extra checks on the outputs (aliasing of views): (outputs, inputs) -> None, raising on failure.
    check: Callable[[tuple[Any, ...], list[Any]], None] | None = None


def _randn(torch, *shape, dtype=None):
    return torch.randn(*shape, device="cuda:0", dtype=dtype or torch.float32)


def _topk_eager(torch, x):
    values, indices = torch.topk(x, 4)
    return values * 2 + indices.to(torch.float32), indices


def _while_loop_eager(torch, i, x, limit):
    while bool(i < limit):
        i, x = i + 1, x * 0.5 + 1
    return i, x


def _scalar(torch, value):
    return torch.tensor(value, device="cuda:0", dtype=torch.int64)


def _check_views(outputs, inputs):
    sliced, transposed, base = outputs
    for name, view, offset in (("y[:, 2:10]", sliced, 2), ("y.t()", transposed, 0)):
        if view.untyped_storage().data_ptr() != base.untyped_storage().data_ptr():
            raise AssertionError(f"output {name} does not alias the storage of output y")
        if view.storage_offset() != offset:
            raise AssertionError(f"output {name} has storage offset {view.storage_offset()}, expected {offset}")


SPECS: dict[str, Spec] = {
    "pointwise": Spec(
        make_inputs=lambda torch, s: [_randn(torch, 10000), _randn(torch, 10000)],
        eager=lambda torch, a, b: (torch.relu(a + b),),
        cases=[Case("n=10000", {})],
    ),
    "row_sum": Spec(
        make_inputs=lambda torch, s: [s["s0"], s["s1"], _randn(torch, s["s0"], s["s1"])],
        eager=lambda torch, s0, s1, x: (x.sum(1),),
        cases=[Case("64x1000", {"s0": 64, "s1": 1000}), Case("37x3001", {"s0": 37, "s1": 3001}),
               Case("3x7", {"s0": 3, "s1": 7})],
        rtol=1e-4,
        atol=1e-3,
    ),
    "softmax": Spec(
        make_inputs=lambda torch, s: [_randn(torch, 128, 1000)],
        eager=lambda torch, x: (torch.softmax(x, -1),),
        cases=[Case("128x1000", {})],
        rtol=1e-4,
        atol=1e-6,
    ),
    "mm_epilogue": Spec(
        make_inputs=lambda torch, s: [_randn(torch, 64, 128), _randn(torch, 256, 128), _randn(torch, 256)],
        eager=lambda torch, x, w, b: (torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b)),),
        cases=[Case("64x128@128x256", {})],
        rtol=1e-4,
        atol=1e-4,
    ),
    "topk": Spec(
        make_inputs=lambda torch, s: [_randn(torch, 16, 100)],
        eager=_topk_eager,
        cases=[Case("16x100,k=4", {})],
    ),
    "view_outputs": Spec(
        make_inputs=lambda torch, s: [_randn(torch, 32, 16)],
        eager=lambda torch, x: (lambda y: (y[:, 2:10], y.t(), y))(x * 2 + 1),
        cases=[Case("32x16", {})],
        check=_check_views,
    ),
    "conditional": Spec(
        make_inputs=lambda torch, s: [torch.tensor(s["pred"], device="cuda:0"), _randn(torch, 8, 16)],
        eager=lambda torch, pred, x: ((torch.sin(x) * 2 if bool(pred) else torch.cos(x) + 1) + 1,),
        cases=[Case("pred=True", {"pred": True}), Case("pred=False", {"pred": False})],
        rtol=1e-5,
        atol=1e-5,
    ),
    "conditional_symbolic": Spec(
        make_inputs=lambda torch, s: [_randn(torch, s["s0"])],
        eager=lambda torch, x: (x * 2 if x.shape[0] > 16 else x - 1,),
        cases=[Case("s0=100 (true)", {"s0": 100}), Case("s0=8 (false)", {"s0": 8}),
               Case("s0=17 (true)", {"s0": 17})],
    ),
    "dynamic_shapes": Spec(
        make_inputs=lambda torch, s: [_randn(torch, s["s0"], s["s1"]), _randn(torch, s["s1"])],
        eager=lambda torch, x, y: (x * 2 + y,),
        cases=[Case("32x100", {"s0": 32, "s1": 100}), Case("17x1000", {"s0": 17, "s1": 1000}),
               Case("5x3", {"s0": 5, "s1": 3})],
    ),
    "while_loop": Spec(
        make_inputs=lambda torch, s: [_scalar(torch, s["i0"]), _randn(torch, 64), _scalar(torch, s["limit"])],
        eager=_while_loop_eager,
        cases=[Case("0 to 5", {"i0": 0, "limit": 5}), Case("3 to 3 (no iteration)", {"i0": 3, "limit": 3})],
    ),
}


# ---------------------------------------------------------------------------
# Emitting and static checks
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Row:
    program: str
    form: str
    case: str
    status: str
    max_abs_error: str = ""
    time: str = ""
    detail: str = ""


def fixture_name(path: Path) -> tuple[str, str]:
    """(program, form) of `<program>.json` (launcher) or `<program>.explicit.json`."""
    stem = path.name[: -len(".json")]
    if stem.endswith(".explicit"):
        return stem[: -len(".explicit")], "explicit"
    return stem, "launcher"


def kernel_sources(program: dict) -> list[tuple[str, str]]:
    """(kernel name, source text) of every KernelDefinition, subgraphs included."""
    found = []
    for line in program.get("body", []):
        if line.get("kind") == "KernelDefinition" and line.get("source", {}).get("kind") == "text":
            found.append((line["kernel"], line["source"]["text"]))
    for sub in program.get("subgraphs", []):
        found.extend(kernel_sources(sub))
    return found


def check_kernel_sources(fixture: Path) -> None:
    """Every Triton source compiles as Python and defines its kernel with @triton.jit."""
    program = json.loads(fixture.read_text())["program"]
    for name, text in kernel_sources(program):
        tree = ast.parse(text, filename=f"{fixture.name}:{name}")
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
        if not defs:
            raise AssertionError(f"kernel {name}: the source defines no function '{name}'")
        decorators = [ast.unparse(d) for d in defs[0].decorator_list]
        if "triton.jit" not in decorators:
            raise AssertionError(f"kernel {name}: not decorated with @triton.jit (decorators: {decorators})")
        compile(tree, f"{fixture.name}:{name}", "exec")


def plan(wrapir: Path, fixture: Path, strategy: str, planned: Path) -> None:
    """`wrapir plan --strategy STRATEGY FIXTURE -o PLANNED`: the memory-planned program."""
    result = subprocess.run(
        [str(wrapir), "plan", "--strategy", strategy, str(fixture), "-o", str(planned)],
        capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        message = (result.stderr.strip() or result.stdout.strip() or "no message").splitlines()[0]
        raise RuntimeError(f"wrapir plan exited with {result.returncode}: {message}")


def emit(wrapir: Path, fixture: Path, module: Path) -> None:
    result = subprocess.run(
        [str(wrapir), "emit", "--target", "python", str(fixture), "-o", str(module)],
        capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        message = (result.stderr.strip() or result.stdout.strip() or "no message").splitlines()[0]
        raise RuntimeError(f"wrapir emit exited with {result.returncode}: {message}")
    if not module.is_file():
        raise RuntimeError(f"wrapir emit exited with 0 but wrote no {module}")
    ast.parse(module.read_text(), filename=str(module))


# ---------------------------------------------------------------------------
# Running on the GPU
# ---------------------------------------------------------------------------


def import_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Inductor's and Triton's machinery look modules up by name
    spec.loader.exec_module(module)
    if not callable(getattr(module, "call", None)):
        raise AttributeError(f"{path.name} defines no function 'call'")
    return module


def run_case(torch, module, spec: Spec, case: Case, repeats: int) -> tuple[float, float]:
    """Runs one case; returns (max abs error, milliseconds per call). Raises on a mismatch."""
    torch.manual_seed(0)
    inputs = spec.make_inputs(torch, case.sizes)

    def fresh_args():
        # `call` clears its list and may mutate or free what it receives:
        # it gets copies, the eager reference the originals.
        return [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs]

    outputs = module.call(fresh_args())
    torch.cuda.synchronize()
    outputs = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    expected = spec.eager(torch, *inputs)
    if len(outputs) != len(expected):
        raise AssertionError(f"call returned {len(outputs)} outputs, eager PyTorch {len(expected)}")
    error = 0.0
    for i, (got, want) in enumerate(zip(outputs, expected)):
        if not isinstance(got, torch.Tensor):
            raise AssertionError(f"output {i} is a {type(got).__name__}, not a tensor")
        if got.device != want.device or got.dtype != want.dtype:
            raise AssertionError(f"output {i}: {got.dtype} on {got.device}, expected {want.dtype} on {want.device}")
        if tuple(got.shape) != tuple(want.shape) or got.stride() != want.stride():
            raise AssertionError(f"output {i}: sizes {tuple(got.shape)} strides {got.stride()}, "
                                 f"expected {tuple(want.shape)} {want.stride()}")
        if got.numel():
            error = max(error, (got.double() - want.double()).abs().max().item())
        torch.testing.assert_close(got, want, rtol=spec.rtol, atol=spec.atol, msg=lambda m: f"output {i}: {m}")
    if spec.check:
        spec.check(outputs, inputs)

    module.call(fresh_args())  # warm (the first call may have autotuned)
    arg_lists = [fresh_args() for _ in range(repeats)]
    torch.cuda.synchronize()
    start = time.perf_counter()
    for arg_list in arg_lists:
        module.call(arg_list)
    torch.cuda.synchronize()
    return error, (time.perf_counter() - start) * 1e3 / repeats


# ---------------------------------------------------------------------------


def print_table(rows: list[Row]) -> None:
    headers = ("program", "form", "case", "status", "max abs err", "ms/call")
    table = [headers] + [(r.program, r.form, r.case, r.status, r.max_abs_error, r.time) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for n, row in enumerate(table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    for r in rows:
        if r.detail:
            print(f"\n{r.program} [{r.form}] {r.case}: {r.detail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wrapir", type=Path, default=DEFAULT_WRAPIR,
                        help=f"the wrapir executable (default: {DEFAULT_WRAPIR})")
    parser.add_argument("--programs", type=Path, default=HERE / "programs", help="the fixtures' directory")
    parser.add_argument("--out", type=Path, help="where to write the emitted modules (default: a temporary directory)")
    parser.add_argument("--modules", type=Path,
                        help="run the modules already emitted into this directory (by a --dry-run --out DIR elsewhere)"
                             " instead of emitting them: the GPU machine needs no wrapir build")
    parser.add_argument("--dry-run", action="store_true",
                        help="only emit and parse the modules and kernel sources (no torch, no GPU)")
    parser.add_argument("--form", choices=("launcher", "explicit", "both"), default="both",
                        help="which fixtures to run: Inductor launcher form, explicit-grid form, or both")
    parser.add_argument("--only", nargs="+", metavar="PROGRAM", help="run only these programs")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per case")
    parser.add_argument("--plan", choices=("none", "reuse", "pools", "arena"), default="none",
                        help="memory-plan each program with `wrapir plan --strategy PLAN` before emitting it, so"
                             " that the planned program is what runs (a plan must not change any result)")
    args = parser.parse_args()
    if args.modules and args.plan != "none":
        print("run_gpu_check: --plan applies when emitting; plan while emitting with --dry-run --out instead",
              file=sys.stderr)
        return 2

    if args.modules and args.out:
        print("run_gpu_check: --modules and --out exclude each other", file=sys.stderr)
        return 2
    if not args.modules and not args.wrapir.is_file():
        print(f"run_gpu_check: no wrapir executable at {args.wrapir} (build it, or pass --wrapir)", file=sys.stderr)
        return 2
    fixtures = sorted(args.programs.glob("*.json"))
    if not fixtures:
        print(f"run_gpu_check: no fixtures in {args.programs}", file=sys.stderr)
        return 2
    selected = []
    for fixture in fixtures:
        program, form = fixture_name(fixture)
        if program not in SPECS:
            print(f"run_gpu_check: fixture {fixture.name} has no spec in SPECS", file=sys.stderr)
            return 2
        if args.only and program not in args.only:
            continue
        if args.form != "both" and form != args.form:
            continue
        selected.append((fixture, program, form))
    if args.only and (unknown := set(args.only) - set(SPECS)):
        print(f"run_gpu_check: unknown program(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2

    torch = None
    if not args.dry_run:
        # Compile Triton kernels in this process: errors surface here, with
        # their traceback, instead of in a worker pool.
        os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        import torch  # noqa: PLC0415 (not needed for --dry-run)
        if not torch.cuda.is_available():
            print("run_gpu_check: torch sees no CUDA device (use --dry-run to only emit)", file=sys.stderr)
            return 2
        capability = torch.cuda.get_device_capability(0)
        print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0)} (sm_{capability[0]}{capability[1]})")
        try:
            import triton  # noqa: PLC0415
            print(f"triton {triton.__version__}")
        except ImportError:
            pass
        if capability != (9, 0):
            print("note: the launcher-form kernels carry Inductor's DeviceProperties of an sm_90 GPU (H100/H200);"
                  " on another GPU they may fail to load", file=sys.stderr)

    if args.modules:
        out_dir = args.modules
    else:
        out_dir = args.out or Path(tempfile.mkdtemp(prefix="wrapir_gpu_check_"))
        out_dir.mkdir(parents=True, exist_ok=True)
    print(f"modules in {out_dir}")

    rows: list[Row] = []
    for fixture, program, form in selected:
        spec = SPECS[program]
        module_path = out_dir / f"{program}_{form}.py"
        try:
            check_kernel_sources(fixture)
            if args.modules:
                ast.parse(module_path.read_text(), filename=str(module_path))
            elif args.plan != "none":
                planned = out_dir / f"{program}_{form}.{args.plan}.json"
                plan(args.wrapir, fixture, args.plan, planned)
                emit(args.wrapir, planned, module_path)
            else:
                emit(args.wrapir, fixture, module_path)
        except Exception as e:  # noqa: BLE001 (every failure becomes a table row)
            stage = "FAIL (module)" if args.modules else "FAIL (emit)"
            rows.append(Row(program, form, "-", stage, detail=f"{type(e).__name__}: {e}"))
            continue
        if args.dry_run:
            rows.append(Row(program, form, "-", "parsed" if args.modules else "emitted"))
            continue
        try:
            module = import_module(module_path, f"wrapir_gpu_check_{program}_{form}")
        except Exception as e:  # noqa: BLE001
            rows.append(Row(program, form, "-", "FAIL (import)", detail=f"{type(e).__name__}: {e}"))
            continue
        for case in spec.cases:
            try:
                error, ms = run_case(torch, module, spec, case, args.repeats)
                rows.append(Row(program, form, case.label, "ok", f"{error:.3g}", f"{ms:.3f}"))
            except Exception as e:  # noqa: BLE001
                rows.append(Row(program, form, case.label, "FAIL", detail=f"{type(e).__name__}: {e}"))

    print_table(rows)
    failed = [r for r in rows if r.status.startswith("FAIL")]
    note = " (dry run: no GPU)" if args.dry_run else ""
    print(f"\n{len(rows) - len(failed)} of {len(rows)} passed{note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
