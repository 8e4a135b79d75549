"""`corpus`: `check` every model of a directory, each in its own process, and
hold each to its expectation: a model passes every path, or -- when its
file says `expect_unsupported = ["NAME", ...]` -- export exits 2 and names
each of those constructs. Anything else fails the run, so a model that
starts to pass, or fails differently, is noticed. Prints one table row per
model and ends with `corpus: P passed, F failed`."""

from __future__ import annotations

import ast
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

MODEL_TIMEOUT_S = 1200


def expected_unsupported(path: Path) -> list[str]:
    """The module-level `expect_unsupported` list of a model file, read
    without importing it (no torch needed here)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "expect_unsupported"
                                                for t in node.targets):
            value = ast.literal_eval(node.value)
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"{path}: expect_unsupported must be a list of non-empty strings")
            return value
    return []


def expected_path_failures(path: Path, device: str = "cpu") -> dict[str, str]:
    """The module-level `expect_failing_paths = {"PATH": "why", ...}` of a
    model file, for `device`: check paths known to fail on it, each with the
    reason (an extern the executor has no reference for, say). A key
    `PATH@DEVICE` (`executor@cuda`) holds on that device only, a plain
    `PATH` on every device. Read without importing."""
    tree = ast.parse(path.read_text(), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "expect_failing_paths"
                                                for t in node.targets):
            value = ast.literal_eval(node.value)
            if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                                      for k, v in value.items()):
                raise ValueError(f"{path}: expect_failing_paths must map path names to non-empty reasons")
            failures = {}
            for key, why in value.items():
                name, _, on = key.partition("@")
                if on and on not in ("cpu", "cuda"):
                    raise ValueError(f"{path}: expect_failing_paths key {key!r}: the device after @ must be cpu or cuda")
                if not on or on == device:
                    failures[name] = why
            return failures
    return {}


@dataclass
class Outcome:
    name: str
    passed: bool = False
    status: str = ""
    seconds: float = 0.0
    paths: list[dict] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    fidelity: int | None = None
    log: list[str] = field(default_factory=list)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


_PICK_ISA = "from torch._inductor.cpu_vec_isa import pick_vec_isa; print(pick_vec_isa())"


def vec_isa_env() -> dict[str, str]:
    """Inductor checks each vector ISA the CPU reports by compiling and
    loading a test library in a fresh Python (six such checks, 20-60 s of
    each model's CPU check, as exports disable Inductor's caches). The
    corpus checks once which ISA Inductor picks, and when trusting the CPU's
    flags (`TORCHINDUCTOR_VEC_ISA_OK=1`) picks the same, lets every model
    trust them. Nothing changes when the two disagree or the user set it."""
    if "TORCHINDUCTOR_VEC_ISA_OK" in os.environ:
        return {}
    try:
        checked = subprocess.run([sys.executable, "-c", _PICK_ISA], capture_output=True, text=True, timeout=600)
        trusted = subprocess.run([sys.executable, "-c", _PICK_ISA], capture_output=True, text=True, timeout=600,
                                 env=dict(os.environ, TORCHINDUCTOR_VEC_ISA_OK="1"))
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if checked.returncode or trusted.returncode or checked.stdout != trusted.stdout:
        return {}
    print(f"corpus: Inductor's vector ISA checked once ({checked.stdout.strip() or 'none'})", flush=True)
    return {"TORCHINDUCTOR_VEC_ISA_OK": "1"}


def run_model(path: Path, device: str, wrapir: str, out: Path, extra_env: dict[str, str] | None = None) -> Outcome:
    name = path.stem
    outcome = Outcome(name)
    try:
        expected = expected_unsupported(path)
        expected_failures = expected_path_failures(path, device)
    except (SyntaxError, ValueError) as e:
        outcome.status = f"FAIL: {_short(str(e))}"
        return outcome
    work = out / name
    work.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "wrapir_inductor", "check", f"{path}:model", "--device", device,
               "--wrapir", wrapir, "--out", str(work)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                                      os.environ.get("PYTHONPATH")])),
               **(extra_env or {}))
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=MODEL_TIMEOUT_S, env=env)
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout, stderr = None, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or ""), ""
    outcome.seconds = time.monotonic() - start
    (work / "check.log").write_text(stdout + "\n--- stderr ---\n" + stderr)
    outcome.log = [f"  {line}" for line in stdout.splitlines()]
    findings = [line for line in stderr.splitlines() if line.startswith("wrapir_inductor: unsupported:")]
    outcome.unsupported = findings
    summary = work / "check.json"
    if summary.is_file():
        data = json.loads(summary.read_text())
        outcome.paths = data.get("paths", [])
        outcome.fidelity = data.get("fidelity_differing_lines")

    if rc is None:
        outcome.status = f"FAIL: timed out after {MODEL_TIMEOUT_S} s"
    else:
        failed_paths = [p["path"] for p in outcome.paths if not p.get("ok")]
        errors = [line for line in stderr.splitlines() if line.startswith("wrapir_inductor: error:")]
        passed_paths = [p["path"] for p in outcome.paths if p.get("ok")]
        outcome.passed, outcome.status = classify(rc, expected, findings, failed_paths, errors,
                                                  expected_failures, passed_paths)
    outcome.log += [f"  {_short(line, 300)}" for line in findings[:20]]
    if not outcome.passed:
        noise = ("UserWarning", "warn_once(", "No CUDA runtime is found")
        tail = [line for line in stderr.splitlines() if line.strip() and not any(n in line for n in noise)][-5:]
        outcome.log += [f"  stderr: {_short(line, 300)}" for line in tail]
    return outcome


def classify(rc: int, expected: list[str], findings: list[str], failed_paths: list[str],
             errors: list[str], expected_failures: dict[str, str] | None = None,
             passed_paths: list[str] | None = None) -> tuple[bool, str]:
    """Whether a model's `check` exit code and findings meet its expectation."""
    expected_failures = expected_failures or {}
    now_passing = [p for p in (passed_paths or []) if p in expected_failures]
    if now_passing:
        return False, f"FAIL: {now_passing} expected to fail, but pass (update the model's expect_failing_paths)"
    if rc == 1 and failed_paths and all(p in expected_failures for p in failed_paths) and not errors:
        return True, "ok, expected failures: " + "; ".join(f"{p}: {expected_failures[p]}" for p in failed_paths)
    if expected:
        missing = [e for e in expected if not any(e in f for f in findings)]
        if rc == 2 and not missing:
            return True, "unsupported as expected: " + ", ".join(expected)
        if rc == 0:
            return False, f"FAIL: expected unsupported {expected}, but every path passes (update the model file)"
        if rc == 2:
            return False, f"FAIL: unsupported, but not naming {missing}"
        return False, f"FAIL: exit {rc}, expected exit 2 naming {expected}"
    if rc == 0:
        return True, "ok"
    if rc == 2:
        return False, "FAIL: unsupported constructs"
    return False, "FAIL: " + (", ".join(failed_paths) if failed_paths else _short(errors[-1] if errors else f"exit {rc}"))


def table(outcomes: list[Outcome]) -> str:
    """The corpus table: per model the result, each path's max error, the peak
    bytes (Inductor's own plan as exported, by `wrapir stats`; wrapir's
    reuse, pools and arena plans, by `wrapir plan`), the planner's max-live
    lower bound, and the number of `call()` lines that differ from
    Inductor's module."""
    rows = ["| model | result | python | +reuse | +pools | +arena | executor | executor+arena | cpp | cpp+arena "
            "| peak bytes: Inductor / reuse / pools / arena | max-live lower bound | differing call() lines | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        by_path = {p["path"]: p for p in o.paths}
        cells = []
        for path in ("python", "python+reuse", "python+pools", "python+arena", "executor", "executor+arena", "cpp",
                     "cpp+arena"):
            p = by_path.get(path)
            if p is None:
                cells.append("-")
            elif p["ok"]:
                cells.append(f"ok {p['max_abs_err']:.2g}")
            else:
                cells.append("FAIL")
        peaks = [str(by_path["python"]["peak_bytes"]) if "python" in by_path else "-"]
        for path in ("python+reuse", "python+pools", "python+arena"):
            p = by_path.get(path, {})
            peaks.append(str(p.get("plan_peak_bytes") or "-"))
        bound = next((str(p["lower_bound_bytes"]) for p in o.paths if p.get("lower_bound_bytes")), "-")
        result = ("ok" if o.status == "ok" else "ok (known failures)" if o.status.startswith("ok, expected failures")
                  else "unsupported" if o.passed else "**FAIL**")
        fidelity = "-" if o.fidelity is None else str(o.fidelity)
        rows.append(f"| `{o.name}` | {result} | {' | '.join(cells)} | {' / '.join(peaks)} | {bound} | {fidelity} "
                    f"| {o.seconds:.0f} |")
    return "\n".join(rows) + "\n"


def corpus(directory: Path, device: str, wrapir: str, out: Path, only: list[str] | None, jobs: int = 1) -> int:
    models = sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))
    if only:
        unknown = set(only) - {p.stem for p in models}
        if unknown:
            print(f"wrapir_inductor: error: no model {sorted(unknown)} in {directory}", file=sys.stderr)
            return 1
        models = [p for p in models if p.stem in only]
    if not models:
        print(f"wrapir_inductor: error: no models (*.py) in {directory}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    print(f"corpus: {len(models)} models, {jobs} at a time", flush=True)
    extra_env = vec_isa_env() if device == "cpu" else {}
    # Each model compiles in its own process; a thread per running model
    # waits for it. Output is printed per model as each finishes.
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_model, path, device, wrapir, out, extra_env): path for path in models}
        results = {}
        for future in concurrent.futures.as_completed(futures):
            outcome = future.result()
            done += 1
            print(f"\n========== model {outcome.name} ({done}/{len(models)}) ==========", flush=True)
            print("\n".join(outcome.log))
            print(f"{outcome.name}: {outcome.status} ({outcome.seconds:.0f} s)", flush=True)
            results[outcome.name] = outcome
    outcomes = [results[p.stem] for p in models]
    text = table(outcomes)
    (out / "corpus.md").write_text(text)
    (out / "corpus.json").write_text(json.dumps([{k: v for k, v in o.__dict__.items() if k != "log"}
                                                 for o in outcomes], indent=1) + "\n")
    passed = sum(o.passed for o in outcomes)
    print("\n" + text)
    for o in outcomes:
        if not o.passed:
            print(f"{o.name}: {o.status}")
    print(f"corpus: {passed} passed, {len(outcomes) - passed} failed ({time.monotonic() - start:.0f} s, "
          f"table in {out / 'corpus.md'})")
    return 0 if passed == len(outcomes) else 1
