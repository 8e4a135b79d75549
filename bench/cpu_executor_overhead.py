"""Host time per program line: wrapir's C++ executor against Inductor's own
Python wrapper, on the CPU corpus (issue 14 §5, CPU part).

For every model directory an export wrote (`wrapir_inductor corpus --out
DIR` or `check --out DIR`, as `tools/dev.sh bridge-test` leaves them in
build/bridge/corpus), this times, on the same program and the same inputs
(`executor.1x.inputs.safetensors`, the file the check's executor path ran,
else the export's `inputs.safetensors`):

* Inductor's generated `call()` (`inductor_module.py`, its kernels loaded
  as Inductor loads them), called in this process under `torch.no_grad()`;
* `wrapir run program.json --repeat N`: the executor with the CPU backend
  (the same C++ kernels compiled with Inductor's flags, the reference
  externs), timing `Executor::run` only.

Both run in rounds, interleaved (Inductor N calls, then wrapir N calls, and
again), so both see the same load on a shared machine; each side's figure is
its best call (a mean is ruined by one preemption on a loaded machine; the
best call is what the code costs when it runs undisturbed). Lines are the program's `call()` lines (the
top-level body, comments left out); calls are its kernel, extern and
fallback calls. Both sides execute the same kernels, so per call the
difference is wrapper cost (plus extern implementations: OpenBLAS reference
externs against torch's own).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/cpu_executor_overhead.py \\
        --exports build/bridge/corpus --wrapir build/release/tools/wrapir/wrapir \\
        [--repeat 200] [--rounds 5] [--only NAME ...]

Use a release build of the tool (the dev preset's is unoptimised). One
thread per side keeps OpenMP's and OpenBLAS's worker threads from spinning
against each other and against other processes on a small shared machine,
and leaves what this measures: the cost around the kernels.

Prints a Markdown table (model, lines, calls, µs per call and per line for
each side, ratio executor / Inductor).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file

CALL_KINDS = {"KernelCall", "MultiKernelCall", "ExternKernelAlloc", "ExternKernelOut", "ExternKernelMultiOut",
              "ScatterFallback", "IndexPutFallback"}


def program_counts(program: Path) -> tuple[int, int, list[str]]:
    """(lines, calls, input names) of the program's top-level body."""
    p = json.loads(program.read_text())["program"]
    body = [line for line in p["body"] if line.get("kind") != "Comment"]
    calls = sum(1 for line in body if line.get("kind") in CALL_KINDS)
    names = []
    for entry in p["inputs"]:
        names.append(entry["buffer"] if "buffer" in entry else entry.get("symbol") or entry.get("expr") or str(entry))
    return len(body), calls, names


def load_inputs(path: Path, names: list[str]) -> list:
    """The call's arguments in program order: tensors by buffer name, scalars
    by symbol name, else by position among the scalars (as `wrapir run`)."""
    tensors = load_file(str(path))
    with safe_open(str(path), "pt") as f:
        scalars = json.loads((f.metadata() or {}).get("scalars", "{}"))
    scalar_values = list(scalars.values())
    args, used = [], 0
    for name in names:
        if name in tensors:
            args.append(tensors[name])
        elif name in scalars:
            args.append(int(scalars[name]))
            used += 1
        else:
            args.append(int(scalar_values[used]))
            used += 1
    return args


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location("inductor_" + re.sub(r"\W", "_", path.parent.name), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_inductor(call, args: list, repeat: int) -> float:
    """Best µs per call over `repeat` calls (a fresh argument list each: call() clears it)."""
    samples = []
    with torch.no_grad():
        for _ in range(repeat):
            a = list(args)
            start = time.perf_counter_ns()
            call(a)
            samples.append(time.perf_counter_ns() - start)
    return min(samples) / 1000.0


def time_wrapir(wrapir: str, program: Path, inputs: Path, repeat: int) -> float:
    done = subprocess.run([wrapir, "run", str(program), "--inputs", str(inputs), "--repeat", str(repeat)],
                          capture_output=True, text=True, check=False)
    m = re.search(r"best_us=([0-9.]+)", done.stdout)
    if done.returncode != 0 or m is None:
        raise RuntimeError(f"wrapir run failed: {(done.stderr or done.stdout).strip()[:300]}")
    return float(m.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", type=Path, required=True, help="directory of per-model export directories")
    parser.add_argument("--wrapir", required=True, help="the wrapir tool (built with the CPU backend)")
    parser.add_argument("--repeat", type=int, default=200, help="calls per round and side")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; the best round counts")
    parser.add_argument("--only", action="append", default=[], help="model name (repeatable)")
    args = parser.parse_args()

    from torch.utils.cpp_extension import include_paths
    os.environ.setdefault("WRAPIR_TORCH_INCLUDE", include_paths()[0])  # the executor compiles the same kernels

    rows = ["| model | lines | calls | Inductor µs/call | executor µs/call | Inductor µs/line | executor µs/line "
            "| executor / Inductor |", "|---|---|---|---|---|---|---|---|"]
    skipped = []
    ratios = []
    for work in sorted(p for p in args.exports.iterdir() if p.is_dir()):
        if args.only and work.name not in args.only:
            continue
        program, module_path = work / "program.json", work / "inductor_module.py"
        inputs = work / "executor.1x.inputs.safetensors"
        if not inputs.is_file():
            inputs = work / "inputs.safetensors"  # the export's own (the same format)
        if not (program.is_file() and module_path.is_file() and inputs.is_file()):
            skipped.append(f"{work.name}: no program.json, inductor_module.py and inputs (not exported: unsupported?)")
            continue
        try:
            lines, calls, names = program_counts(program)
            call = load_module(module_path).call
            call_args = load_inputs(inputs, names)
            time_inductor(call, call_args, 10)  # warm up both sides (the executor's kernel cache too)
            time_wrapir(args.wrapir, program, inputs, 1)
            ind, exe = [], []
            for _ in range(args.rounds):
                gc.collect()
                ind.append(time_inductor(call, call_args, args.repeat))
                exe.append(time_wrapir(args.wrapir, program, inputs, args.repeat))
        except Exception as e:  # a model this harness cannot run is listed, not fatal
            skipped.append(f"{work.name}: {type(e).__name__}: {' '.join(str(e).split())[:200]}")
            continue
        i, x = min(ind), min(exe)
        ratios.append(x / i)
        rows.append(f"| `{work.name}` | {lines} | {calls} | {i:.1f} | {x:.1f} | {i / max(lines, 1):.2f} "
                    f"| {x / max(lines, 1):.2f} | {x / i:.2f} |")
        print(rows[-1], file=sys.stderr, flush=True)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown CPU") if Path("/proc/cpuinfo").is_file() else "unknown CPU"
    print(f"{cpu}, {os.cpu_count()} logical CPUs; torch {torch.__version__}, torch threads {torch.get_num_threads()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("\n".join(rows))
    if ratios:
        print(f"\ngeometric mean executor / Inductor: {statistics.geometric_mean(ratios):.2f} "
              f"({len(ratios)} models; best call of {args.rounds} interleaved rounds of {args.repeat} calls each)")
    for s in skipped:
        print(f"skipped {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
