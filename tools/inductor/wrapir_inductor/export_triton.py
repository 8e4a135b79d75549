"""The compiled form of a CUDA program's Triton kernels, for C++ consumers.

After the compiled model has run once, each Triton kernel of the wrapper
module is a `CachingAutotuner` that has settled on one configuration. With
Inductor's `triton.store_cubin` set (export sets it for CUDA), its launcher
keeps Triton's `CompiledKernel`, whose cubin and metadata are written beside
the source:

    kernels/NAME.py     the Triton source, as program.json holds it
    kernels/NAME.cubin  the binary the driver loads (cuModuleLoadData)
    kernels/NAME.json   Triton's metadata, as include/wrapir/cuda/triton_json.hpp reads it

and described in kernels.json with the launch configuration the grid needs
(the constexpr block sizes such as XBLOCK, num_warps, the grid type). A
kernel whose binary cannot be found is listed with `"cubin": null` and why:
the program still runs through its Python form.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

from .translate_triton import _launch_parameters


def _autotuners(names: set[str]) -> dict[str, Any]:
    """The loaded autotuner objects named `names`, from Inductor's module cache."""
    found: dict[str, Any] = {}
    candidates = list(sys.modules.values())
    try:
        from torch._inductor.codecache import PyCodeCache

        candidates += list(getattr(PyCodeCache, "modules", []) or [])
    except ImportError:  # pragma: no cover
        pass
    for module in candidates:
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for name in names - found.keys():
            value = namespace.get(name)
            if value is not None and hasattr(value, "launchers") and hasattr(value, "inductor_meta"):
                found[name] = value
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


_CONSTANTS = re.compile(r"'constants': (\{[^{}]*\})")


def launch_constants(source: str, name: str) -> dict[str, int]:
    """Launch arguments Triton specialised to a constant (`xnumel` when it is
    1): the launch passes them, the compiled kernel takes none of them, so the
    executor must leave them out of `cuLaunchKernel`'s parameters. From the
    kernel's `triton_meta` (its `constants`) and its `def` (what a launch passes)."""
    launched = _launch_parameters(source, name) or []
    m = _CONSTANTS.search(source)
    if not m:
        return {}
    try:
        constants = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return {}
    return {k: int(v) for k, v in constants.items()
            if k in launched and isinstance(v, int) and not isinstance(v, bool)}


def triton_sources(program: dict[str, Any]) -> dict[str, str]:
    """The source text of every Triton kernel the program defines, its
    subgraphs' (cond branches, loop bodies) included, by kernel name."""
    sources: dict[str, str] = {}
    triton: set[str] = set()
    graphs = [program]
    while graphs:
        graph = graphs.pop()
        sources.update({line["kernel"]: line["source"]["text"] for line in graph["body"]
                        if line.get("kind") == "KernelDefinition" and line.get("source", {}).get("kind") == "text"})
        triton.update(k["name"] for k in graph["kernels"] if k.get("language") == "triton")
        graphs.extend(graph.get("subgraphs") or [])
    return {name: text for name, text in sources.items() if name in triton}


def save_triton_kernels(program: dict[str, Any], kernels_dir: Path) -> list[dict[str, Any]]:
    sources = triton_sources(program)
    names = set(sources)
    tuners = _autotuners(names)
    entries = []
    for name in sorted(names):
        (kernels_dir / f"{name}.py").write_text(sources[name])
        entry: dict[str, Any] = {"name": name, "language": "triton", "source": f"kernels/{name}.py", "cubin": None}
        entries.append(entry)
        tuner = tuners.get(name)
        if tuner is None:
            entry["why"] = "no loaded autotuner of this name (the compiled module was not found)"
            continue
        launchers = list(tuner.launchers or [])
        if len(launchers) != 1:
            entry["why"] = f"the autotuner kept {len(launchers)} launchers, not one chosen configuration"
            continue
        launcher = launchers[0]
        binary = getattr(launcher, "bin", None)
        asm = getattr(binary, "asm", None) or {}
        if "cubin" not in asm:
            entry["why"] = "the launcher kept no cubin (triton.store_cubin was off?)"
            continue
        metadata = binary.metadata
        metadata = metadata._asdict() if hasattr(metadata, "_asdict") else dict(vars(metadata))
        (kernels_dir / f"{name}.cubin").write_bytes(asm["cubin"])
        (kernels_dir / f"{name}.json").write_text(json.dumps(_plain(metadata), indent=1) + "\n")
        config = launcher.config
        entry.update({
            "cubin": f"kernels/{name}.cubin",
            "metadata": f"kernels/{name}.json",
            "symbol": metadata.get("name"),
            "constants": _plain(dict(config.kwargs)),
            "num_warps": int(config.num_warps),
            "num_stages": int(config.num_stages),
            "shared_memory_bytes": int(metadata.get("shared", 0)),
            "grid_type": tuner.inductor_meta.get("grid_type"),
        })
        specialised = launch_constants(sources[name], name)
        if specialised:
            entry["launch_constants"] = specialised
    return entries


def fill_launch_config(program: dict[str, Any], entries: list[dict[str, Any]]) -> int:
    """Writes the configuration each Triton kernel's autotuner settled on
    (num_warps, num_stages, its shared memory and the block sizes such as
    XBLOCK) into the metadata of its KernelDefinition lines, in the program
    and its subgraphs: what a launcher needs beside the grid type. Returns how
    many definitions it filled."""
    chosen = {e["name"]: e for e in entries if e.get("cubin")}
    filled = 0

    def visit(p: dict[str, Any]) -> None:
        nonlocal filled
        for line in p.get("body", []):
            entry = chosen.get(line.get("kernel")) if line.get("kind") == "KernelDefinition" else None
            if entry is None:
                continue
            metadata = line.setdefault("metadata", {})
            for key in ("num_warps", "num_stages", "shared_memory_bytes"):
                if isinstance(entry.get(key), int):
                    metadata[key] = entry[key]
            block = [{"name": k, "value": v} for k, v in (entry.get("constants") or {}).items()
                     if isinstance(v, int) and not isinstance(v, bool)]
            if block:
                metadata["block"] = block
            filled += 1
        for sub in p.get("subgraphs", []):
            visit(sub)

    visit(program)
    return filled
