"""`fidelity`: what the differing lines of `call()` are, per model.

`check` writes each model's `fidelity.diff`: the statements of `call()` in
Inductor's own module (`-`) and in wrapir's (`+`) that differ, kernel
sources and hashes aside. This sorts them into the known, documented kinds
of difference (each one either not semantic or an IR addition still open)
and shows every line no kind explains, so that a new difference is seen:

    python3 -m wrapir_inductor fidelity CORPUS_OUT_DIR [--device cpu|cuda]
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

# Each kind: a name (as the table prints it) and what it means, for the docs.
KINDS = {
    "raw stream": "Inductor fetches `stream0 = get_raw_stream(0)` before every launch; wrapir once per scope",
    "tuple as list": "tuples in extern-kernel arguments are printed as lists (`stride=(1, 1)` as `[1, 1]`)",
    "assert op name": "`assert_size_stride` without the op name Inductor adds",
    "symbol inputs": "symbols passed to `call()` bound by their own name instead of `argN_1` then `sN = argN_1`",
    "pool dtype": "pools allocated as uint8 bytes where Inductor allocates the first buffer's dtype and shape",
    "pool del": "the `del` of a pool naming other buffers than Inductor's",
    "store_cubin": "CUDA exports set Inductor's `triton.store_cubin`, which adds its kernel-saving loop to Inductor's "
                   "own `call()` (an artifact of exporting, not a difference of wrapir's)",
    "None binding": "Inductor's `bufN = None` after a DynamicScalar or a scalar assert (it names no storage)",
    "assert order": "a scalar assert's condition in wrapir's canonical order (`1 <= u1` for `u1 >= 1`)",
}

_STORE_CUBIN = (
    "for kernel in globals().values():",
    "if isinstance(kernel, torch._inductor.runtime.triton_heuristics.CachingAutotuner):",
    "kernel.cuda_kernel_saved = False",
    "if not kernel.cuda_kernel_saved:",
    "if len(kernel.launchers) == 0:",
    "kernel.precompile()",
    "kernel.save_gpu_kernel(",
    'stream="stream",  # use dummy stream',
    "launcher=kernel.launchers[0],",
    ")",
)
_FLIPPED = {">=": "<=", "<=": ">=", ">": "<", "<": ">", "==": "==", "!=": "!="}


def _flip_condition(line: str) -> str | None:
    """`if not (u0 >= 1):` as `if not (1 <= u0):`, or None."""
    m = re.fullmatch(r"if not \((\S+) (>=|<=|>|<|==|!=) (\S+)\):", line)
    return f"if not ({m.group(3)} {_FLIPPED[m.group(2)]} {m.group(1)}):" if m else None

_TUPLE = re.compile(r"(?<![\w\])])\(([^()]*)\)")  # not the parentheses of a call


def _as_lists(text: str) -> str:
    """Tuples written as lists, `(1,)` as `[1]`."""
    return _TUPLE.sub(lambda m: "[" + m.group(1).rstrip(", ").rstrip(",") + "]", text)


def _without_op_name(text: str) -> str:
    return re.sub(r", '[^']*'\)$", ")", text)


def classify(diff: list[str]) -> tuple[Counter, list[str]]:
    """(count per kind, lines no kind explains) of one model's fidelity.diff."""
    kinds: Counter = Counter()
    removed = [line[1:] for line in diff if line.startswith("-")]
    added = [line[1:] for line in diff if line.startswith("+")]
    unexplained: list[str] = []

    def take(kind: str, lines: list[str], predicate) -> None:
        keep = []
        for line in lines:
            if predicate(line):
                kinds[kind] += 1
            else:
                keep.append(line)
        lines[:] = keep

    take("store_cubin", removed, lambda s: s in _STORE_CUBIN)
    take("None binding", removed, lambda s: re.fullmatch(r"buf\d+ = None", s) is not None)
    for line in list(removed):
        flipped = _flip_condition(line)
        if flipped is not None and flipped in added:
            removed.remove(line)
            added.remove(flipped)
            kinds["assert order"] += 2
    take("raw stream", removed, lambda s: re.fullmatch(r"stream\d+ = get_raw_stream\(\d+\)", s) is not None)
    take("raw stream", added, lambda s: re.fullmatch(r"stream\d+ = get_raw_stream\(\d+\)", s) is not None)
    # Pairs that are equal up to a known difference.
    for kind, normal in (("tuple as list", _as_lists), ("assert op name", _without_op_name)):
        for line in list(removed):
            match = next((a for a in added if a != line and normal(a) == normal(line)), None)
            if match is not None:
                removed.remove(line)
                added.remove(match)
                kinds[kind] += 2
    # `arg0_1, arg1_1 = args` against `s77, arg1_1 = args`: equal but where a
    # symbol takes its argument's place; and Inductor's `s77 = arg0_1`.
    def unpacked(line: str) -> list[str] | None:
        m = re.fullmatch(r"((?:\w+, )*\w+),? = args", line)
        return m.group(1).split(", ") if m else None

    for line in list(removed):
        names = unpacked(line)
        for other in list(added) if names else []:
            theirs = unpacked(other)
            if theirs and len(theirs) == len(names) and all(
                    a == b or (re.fullmatch(r"arg\d+_\d+", a) and re.fullmatch(r"[su]\d+", b))
                    for a, b in zip(names, theirs)):
                removed.remove(line)
                added.remove(other)
                kinds["symbol inputs"] += 2
                break
    take("symbol inputs", removed, lambda s: re.fullmatch(r"[su]\d+ = arg\d+_\d+", s) is not None)
    take("pool dtype", removed, lambda s: re.match(r"pool\d+ = empty_strided_\w+\(", s) is not None)
    take("pool dtype", added, lambda s: re.match(r"pool\d+ = empty_strided_\w+\(", s) is not None)
    take("pool del", removed, lambda s: s.startswith("del pool"))
    take("pool del", added, lambda s: s.startswith("del pool"))
    unexplained = [f"-{s}" for s in removed] + [f"+{s}" for s in added]
    return kinds, unexplained


def table(out_dir: Path) -> tuple[str, int]:
    """A markdown table of every model under `out_dir` with a fidelity.diff;
    and how many lines no kind explains."""
    rows = ["| model | differing lines | of which | unexplained |", "|---|---|---|---|"]
    total_unexplained = 0
    for diff_file in sorted(out_dir.glob("*/fidelity.diff")):
        diff = [line for line in diff_file.read_text().splitlines() if line.strip()]
        kinds, unexplained = classify(diff)
        total_unexplained += len(unexplained)
        what = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "-"
        shown = "<br>".join(f"`{line[:100]}`" for line in unexplained[:6]) or "0"
        if len(unexplained) > 6:
            shown += f"<br>... {len(unexplained) - 6} more"
        rows.append(f"| `{diff_file.parent.name}` | {len(diff)} | {what} | {shown} |")
    return "\n".join(rows) + "\n", total_unexplained


def main(out_dir: Path) -> int:
    text, unexplained = table(out_dir)
    print(text, end="")
    print("\nkinds: " + "; ".join(f"{k}: {v}" for k, v in KINDS.items()))
    print(f"fidelity: {unexplained} lines no known kind explains")
    return 0
