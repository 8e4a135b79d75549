"""Host time per kernel launch on one GPU, side by side (issue 14 §5):

* Inductor's own generated `call()` (the export's inductor_module.py, its
  Triton kernels compiled by this torch);
* wrapir's executor on the CUDA backend, the same in CUDA Graph mode
  (`--graph`), and a raw cuLaunchKernel loop over the same program's
  Triton launches (executor_overhead_bench, C++);
* torch.compile(mode="reduce-overhead") of the model (CUDA graphs), whose
  cost is fixed per call.

    python3 bench/gpu/executor_overhead.py --exports DIR --bench BUILD/bench/executor_overhead_bench \
        --models deep_mlp,mlp_layernorm_gelu --out RESULTS.md

DIR/NAME holds each model's export from `wrapir_inductor check --device
cuda` (program.json, kernels.json, kernels/, inputs.safetensors,
inductor_module.py); tests/models/NAME.py is the model. Every figure is host
time: the GPU is waited for before each timed call, never inside it. Prints
and writes one markdown table; the per-launch columns divide a call's host
time by the program's launches (Triton kernels and extern calls). Rows of
programs with extern calls (cuBLAS GEMMs, their allocations) are marked:
their executor / raw ratio compares the executor's Triton launches *and*
GEMMs with the raw loop's Triton launches alone, so only the Triton-only
rows measure the launch path itself.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]


def launches(program: Path) -> int:
    body = json.loads(program.read_text())["program"]["body"]
    kinds = {"KernelCall", "MultiKernelCall", "ExternKernelOut", "ExternKernelAlloc", "ExternKernelMultiOut",
             "ScatterFallback", "IndexPutFallback"}
    return sum(1 for line in body if line["kind"] in kinds)


def host_times(fn, iterations: int, warmup: int) -> list[float]:
    """Microseconds of host time per call of `fn`, the GPU idle at each start."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iterations):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    torch.cuda.synchronize()
    return samples


def inductor_call(export: Path, iterations: int) -> list[float]:
    spec = importlib.util.spec_from_file_location(f"inductor_{export.name}", export / "inductor_module.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = module.get_args()
    return host_times(lambda: module.call(list(args)), iterations, 50)


def reduce_overhead(name: str, iterations: int) -> list[float]:
    sys.path.insert(0, str(ROOT / "tools" / "inductor"))
    from wrapir_inductor.export import load_spec

    spec = load_spec(f"{ROOT / 'tests' / 'models' / name}.py:model")
    fn = spec.fn.to("cuda") if isinstance(spec.fn, torch.nn.Module) else spec.fn
    inputs = [x.to("cuda") if isinstance(x, torch.Tensor) else x for x in spec.inputs]
    torch._dynamo.reset()
    compiled = torch.compile(fn, mode="reduce-overhead", dynamic=False)
    with torch.no_grad():
        return host_times(lambda: compiled(*inputs), iterations, 20)


def cpp_bench(binary: str, exports: list[Path]) -> dict[str, dict]:
    env = dict(os.environ, WRAPIR_BENCH_EXPORTS=":".join(str(e) for e in exports))
    done = subprocess.run([binary, "--benchmark_format=json", "--benchmark_repetitions=5",
                           "--benchmark_report_aggregates_only=true"], env=env, capture_output=True, text=True,
                          timeout=900)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{binary} failed ({done.returncode})")
    out: dict[str, dict] = {}
    for b in json.loads(done.stdout)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        # "Executor/deep_mlp/iterations:2000/manual_time": the kind, then the model.
        kind, name = b["run_name"].split("/")[:2]
        if kind == "Paired":  # stubbed/raw per Triton launch, taken call by call: a ratio, not a time
            out.setdefault(name, {})[kind] = b.get("stubbed_over_raw")
            continue
        out.setdefault(name, {})[kind] = b["real_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[b["time_unit"]]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exports", required=True, type=Path)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--models", default="deep_mlp,mlp_layernorm_gelu,softmax_attention,rnn_unrolled,add_relu")
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    names = [n for n in a.models.split(",") if (a.exports / n / "program.json").is_file()]
    exports = [a.exports / n for n in names]
    cpp = cpp_bench(a.bench, exports)
    rows = []
    for name, export in zip(names, exports):
        n = launches(export / "program.json")
        row = {"model": name, "launches": n}
        try:
            row["inductor"] = statistics.median(inductor_call(export, a.iterations))
        except Exception as e:  # report, keep the other columns
            row["inductor_error"] = f"{type(e).__name__}: {e}"[:200]
        try:
            row["reduce_overhead"] = statistics.median(reduce_overhead(name, a.iterations))
        except Exception as e:
            row["reduce_overhead_error"] = f"{type(e).__name__}: {e}"[:200]
        row["executor"] = cpp.get(name, {}).get("Executor")
        row["graph"] = cpp.get(name, {}).get("Graph")
        row["stubbed"] = cpp.get(name, {}).get("Stubbed")
        row["raw"] = cpp.get(name, {}).get("RawLaunch")
        row["paired"] = cpp.get(name, {}).get("Paired")
        row["raw_launches"] = sum(1 for line in json.loads((export / "program.json").read_text())["program"]["body"]
                                  if line["kind"] == "KernelCall")
        rows.append(row)
        print(json.dumps(row), flush=True)

    def us(v):
        return "—" if v is None else f"{v:.1f}"

    gpu = torch.cuda.get_device_name(0)
    lines = [f"GPU: {gpu}; torch {torch.__version__}; {datetime.date.today()}; median host µs, GPU idle at each call's start",
             "",
             "| model | launches (Triton + extern) | Inductor `call()` µs/call | µs/launch | executor µs/call | µs/launch "
             "| executor / Inductor | raw cuLaunchKernel µs/launch (Triton launches) | executor / raw per launch "
             "| executor, externs stubbed, µs/Triton launch | stubbed / raw | graph mode µs/call | reduce-overhead µs/call |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["launches"]
        ind, exe, raw, graph = r.get("inductor"), r.get("executor"), r.get("raw"), r.get("graph")
        raw_per = raw / r["raw_launches"] if raw and r["raw_launches"] else None
        externs = n - r["raw_launches"]
        ratio = f"{(exe / n) / raw_per:.2f}" if exe and raw_per else "—"
        if externs:
            ratio += " (with externs)"
        stub = r.get("stubbed")
        stub_per = stub / r["raw_launches"] if stub and r["raw_launches"] else None
        # The paired figure (Paired/: raw loop and stubbed executor alternated
        # call by call) where the benchmark has it; the separate runs drift.
        if r.get("paired"):
            stub_ratio = f"{r['paired']:.2f} (paired)"
        else:
            stub_ratio = f"{stub_per / raw_per:.2f}" if stub_per and raw_per else "—"
        lines.append(
            f"| `{r['model']}` | {n} ({r['raw_launches']} + {externs}) | {us(ind)} | {us(ind / n if ind else None)} | "
            f"{us(exe)} | {us(exe / n if exe else None)} | {f'{exe / ind:.2f}' if exe and ind else '—'} | "
            f"{us(raw_per)} | {ratio} | {us(stub_per)} | {stub_ratio} | {us(graph)} | {us(r.get('reduce_overhead'))} |")
    for r in rows:
        for k in ("inductor_error", "reduce_overhead_error"):
            if k in r:
                lines.append(f"\n{r['model']}: {k}: {r[k]}")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
