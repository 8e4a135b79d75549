"""Triton kernels of CUDA programs: definitions, launches and multi-kernels.

Inductor 2.11 writes a Triton kernel as a `KernelDefinitionLine` whose body
is `async_compile.triton('NAME', '''SOURCE''', device_str='cuda')`, and a
launch as a `KernelCallLine` with `triton=True` whose `triton_meta` carries the
signature. A multi-kernel (`triton.multi_kernel=1`) has no line of its own:
its candidates are ordinary definitions, its call is a `KernelCallLine` to
`multi_kernel_N`, and the choice between candidates is written as text into
the multi-kernel state's `kernel_defs` (later spliced into the module header): `arg_index = {...}` and
`multi_kernel_N = async_compile.multi_kernel('multi_kernel_N', [...], arg_index=arg_index)`;
that header text is read back here (its only form), each part checked.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import sympy

from .translate import Unsupported, _IDENT, definition_provenance, device_name, short_text

_TRITON_DEFINITION = re.compile(
    r"\s*async_compile\.triton\('(\w+)', '''(.*)''', device_str='(\w+)'\)\s*\Z", re.S)
_SIGNATURE = re.compile(r"'signature': (\{[^{}]*\})")
_MULTI_KERNEL = re.compile(
    r"arg_index = \{\n(?P<index>(?:\s+\d+: \[[^\]]*\],\n)*)\}\n"
    r"(?P<name>\w+) = async_compile\.multi_kernel\('(?P=name)', \[\n(?P<candidates>(?:\s+\w+,\n)+)\], "
    r"arg_index=arg_index\)")
_SLICE = re.compile(r"slice\((\d+), (\d+), None\)")


def _launch_parameters(source: str, name: str) -> list[str] | None:
    """The parameters of the kernel's `def` that a launch passes: those not
    annotated `tl.constexpr` (None when the `def` is not found)."""
    m = re.search(rf"^def {re.escape(name)}\(([^)]*)\):", source, re.M)
    if not m:
        return None
    passed = []
    for part in m.group(1).split(","):
        param, _, annotation = part.partition(":")
        if param.strip() and "constexpr" not in annotation:
            passed.append(param.strip())
    return passed


def triton_signature(source: str, name: str) -> list[dict[str, str]]:
    """The launch parameters of a Triton kernel, from the `triton_meta=
    {'signature': {...}}` of its decorator: block sizes and other
    `tl.constexpr` parameters are dropped; a parameter that Triton specialised
    to a constant (`'xnumel': 'constexpr'` with `'constants': {'xnumel': 1}`
    when the numel is 1) is still passed by every launch, so it stays, as
    `i32` (the launcher drops it)."""
    launched = _launch_parameters(source, name)
    m = _SIGNATURE.search(source)
    if not m:
        raise Unsupported(f"Triton kernel {name}: no `'signature': {{...}}` in its triton_meta")
    try:
        signature = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError) as e:
        raise Unsupported(f"Triton kernel {name}: its signature is not a literal dict ({e})")
    params = []
    for param, kind in signature.items():
        if not isinstance(param, str) or not _IDENT.match(param) or not isinstance(kind, str):
            raise Unsupported(f"Triton kernel {name}: signature entry {param!r}: {kind!r}")
        if kind == "constexpr":
            if launched is not None and param in launched:
                params.append({"name": param, "type": "i32"})
            continue
        if not re.fullmatch(r"\*?(fp|bf|i|u)\d+", kind):
            raise Unsupported(f"Triton kernel {name}: parameter {param} of type {kind!r}")
        params.append({"name": param, "type": kind})
    return params


# Inductor's GridExpr classes (include/wrapir/ir/kernel.hpp, grid_type_names).
GRID_TYPES = frozenset({
    "Grid1D", "Grid2D", "Grid3D", "BatchMatmulGrid3D", "Grid2DWithYZOverflow", "MixOrderReductionGrid",
    "CooperativeReductionGrid", "SplitScanGrid", "FixedGrid", "PrecomputedGrid", "SequentialComboKernelGrid",
    "RoundRobinComboKernelGrid", "SequentialFlattenComboKernelGrid"})
# Inductor's AutotuneHint members (kernel.hpp, autotune_hint_names).
AUTOTUNE_HINTS = frozenset({"ONE_ELEMENT_PER_THREAD"})


class _NotLiteral(Exception):
    pass


class _Call:
    """`DeviceProperties(type='cuda', index=0, ...)` in a decorator: its keywords."""

    def __init__(self, name: str, kwargs: dict[str, Any]):
        self.name, self.kwargs = name, kwargs


def _literal(node: ast.AST) -> Any:
    """The value of a decorator argument written as literals, with the few
    names Inductor writes there (`set()`, `DeviceProperties(...)`,
    `AutotuneHint.X`, as the string "AutotuneHint.X"); nothing is evaluated."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral("a ** in a dict")
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Set):
        return {_literal(e) for e in node.elts}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "DeviceProperties"):
        if node.func.id == "set" and not node.args and not node.keywords:
            return set()
        if node.func.id == "DeviceProperties" and not node.args and all(k.arg for k in node.keywords):
            return _Call(node.func.id, {k.arg: _literal(k.value) for k in node.keywords})
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "AutotuneHint":
        return f"AutotuneHint.{node.attr}"
    raise _NotLiteral(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')}")


def decorator_meta(source: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `triton_meta` and `inductor_meta` of the heuristics decorator of
    kernel `name`, read as literals."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise Unsupported(f"Triton kernel {name}: its source does not parse ({e.msg})")
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name != name:
            continue
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            keywords = {k.arg: k.value for k in decorator.keywords if k.arg}
            if "triton_meta" not in keywords:
                continue
            try:
                triton_meta = _literal(keywords["triton_meta"])
                inductor_meta = _literal(keywords["inductor_meta"]) if "inductor_meta" in keywords else {}
            except _NotLiteral as e:
                raise Unsupported(f"Triton kernel {name}: its decorator's metadata is not literal ({e})")
            if not isinstance(triton_meta, dict) or not isinstance(inductor_meta, dict):
                raise Unsupported(f"Triton kernel {name}: triton_meta or inductor_meta is not a dict")
            return triton_meta, inductor_meta
    raise Unsupported(f"Triton kernel {name}: no function {name} with a decorator that passes triton_meta")


def _constant_arg(value: Any) -> dict[str, Any] | None:
    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": value if value == value and abs(value) != float("inf") else str(value)}
    if isinstance(value, str):
        return {"string": value}
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def triton_metadata(source: str, name: str) -> tuple[dict[str, Any], list[str]]:
    """The KernelDefinition metadata of a Triton kernel from its decorator's
    triton_meta and inductor_meta (docs/ir-reference.md, "Kernel metadata"),
    and what of them it could not keep, by name."""
    triton_meta, inductor_meta = decorator_meta(source, name)
    lost: list[str] = []
    metadata: dict[str, Any] = {}
    signature = triton_meta.get("signature")
    if not isinstance(signature, dict):
        raise Unsupported(f"Triton kernel {name}: triton_meta has no signature dict")
    params = list(signature)

    constants = []
    for key, value in (triton_meta.get("constants") or {}).items():
        arg = _constant_arg(value)
        if not isinstance(key, str) or not _IDENT.match(key) or arg is None:
            lost.append(f"triton_meta constant {key!r}: {short_text(value)}")
            continue
        constants.append({"name": key, "value": arg})
    if constants:
        metadata["constants"] = constants

    meta: dict[str, Any] = {}
    device = triton_meta.get("device")
    if isinstance(device, _Call):
        kind, index = device.kwargs.get("type"), device.kwargs.get("index")
        if isinstance(kind, str) and _IDENT.match(kind):
            meta["device"] = kind if index is None or kind == "cpu" else f"{kind}:{index}"
        for key, field in (("cc", "compute_capability"), ("warp_size", "warp_size")):
            if _is_int(device.kwargs.get(key)):
                meta[field] = device.kwargs[key]
    elif device is not None:
        lost.append(f"triton_meta device {short_text(device)}")
    # A parameter Triton specialised to a constant (xnumel 1) is still
    # launched, so it is a signature parameter (`triton_signature`), not a
    # constexpr; its value stays in `constants`.
    launched = _launch_parameters(source, name) or []
    constexprs = [p for p, kind in signature.items() if kind == "constexpr" and p not in launched]
    if constexprs:
        meta["constexprs"] = constexprs
    attributes = []
    configs = triton_meta.get("configs") or []
    if len(configs) > 1:
        lost.append(f"triton_meta configs beyond the first ({len(configs)} configs)")
    for config in configs[:1]:
        for key, facts in (config.items() if isinstance(config, dict) else []):
            if not (isinstance(key, tuple) and len(key) == 1 and _is_int(key[0]) and 0 <= key[0] < len(params)):
                lost.append(f"triton_meta configs entry for {key!r}")
                continue
            for fact in facts:
                if isinstance(fact, (list, tuple)) and len(fact) == 2 and isinstance(fact[0], str) and _is_int(fact[1]):
                    attributes.append({"param": params[key[0]], "name": fact[0], "value": fact[1]})
                else:
                    lost.append(f"triton_meta configs fact {short_text(fact)} of {params[key[0]]}")
    if attributes:
        meta["attributes"] = attributes
    if isinstance(triton_meta.get("launch_pdl"), bool):
        meta["launch_pdl"] = triton_meta["launch_pdl"]
    if meta:
        metadata["triton_meta"] = meta

    grid_type = inductor_meta.get("grid_type")
    if grid_type in GRID_TYPES:
        metadata["grid_type"] = grid_type
    elif grid_type is not None:
        lost.append(f"inductor_meta grid_type {grid_type!r}")
    meta = {}
    if isinstance(inductor_meta.get("kernel_name"), str) and _IDENT.match(inductor_meta["kernel_name"]):
        meta["kernel_name"] = inductor_meta["kernel_name"]
    mutated = inductor_meta.get("mutated_arg_names") or []
    if all(isinstance(m, str) and _IDENT.match(m) for m in mutated):
        if mutated:
            meta["mutated_arg_names"] = list(mutated)
    else:
        lost.append(f"inductor_meta mutated_arg_names {short_text(mutated)}")
    hints = []
    for hint in sorted(str(h) for h in (inductor_meta.get("autotune_hints") or ())):
        member = hint.removeprefix("AutotuneHint.")
        if member in AUTOTUNE_HINTS:
            hints.append(member)
        else:
            lost.append(f"inductor_meta autotune hint {hint!r}")
    if hints:
        meta["autotune_hints"] = hints
    for key in ("num_load", "num_store", "num_reduction"):
        if _is_int(inductor_meta.get(key)) and inductor_meta[key] >= 0:
            meta[key] = inductor_meta[key]
    backend_hash = inductor_meta.get("backend_hash")
    if isinstance(backend_hash, str) and backend_hash and backend_hash.isprintable():
        meta["backend_hash"] = backend_hash
    if meta:
        metadata["inductor_meta"] = meta
    return metadata, lost


def triton_definition(t, line) -> None:
    m = _TRITON_DEFINITION.match(line.kernel_body)
    if not m:
        raise Unsupported("the Triton kernel body is not `async_compile.triton('NAME', '''source''', device_str=...)`")
    name, source, device_type = m.group(1), m.group(2), m.group(3)
    if name != line.kernel_name:
        raise Unsupported(f"the Triton definition of {line.kernel_name} names {name}")
    if name in t.kernels:
        raise Unsupported(f"kernel {name} is defined twice")
    if device_type != "cuda":
        raise Unsupported(f"Triton kernel {name} for device {device_type!r}")
    t.kernels[name] = {"name": name, "language": "triton", "signature": triton_signature(source, name)}
    try:
        metadata, lost = triton_metadata(source, name)
    except Unsupported as e:  # the kernel still runs from its source; its metadata stays in it
        metadata, lost = {}, [str(e)]
    for what in lost:
        t.lossy.append({"line": t.line_index, "class": "KernelDefinitionLine", "what": f"{name}: {what}"})
    definition = {"kind": "KernelDefinition", "kernel": name, "source": {"kind": "text", "text": source},
                  "metadata": metadata}
    provenance = definition_provenance(line.metadata)
    if provenance is not None:
        definition["provenance"] = provenance
    t.emit(definition)


def _call_arg(t, value: Any) -> dict[str, Any]:
    from torch._inductor.codegen.wrapper import SymbolicCallArg

    if isinstance(value, SymbolicCallArg):
        return t.arg(t.symbol_named(str(value.inner)))
    if isinstance(value, str) and t.is_buffer_name(value):
        return {"buffer": t.buffer_by_name(value)}
    if isinstance(value, str) and _IDENT.match(value):
        return t.arg(t.symbol_named(value))
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return {"int": int(value)}
    if isinstance(value, str):
        # Never eval text: an expression string would need Inductor's printer inverted.
        raise Unsupported(f"kernel argument {value!r} is neither a buffer, a symbol nor an integer")
    if isinstance(value, (int, sympy.Expr)):
        return t.arg(value)
    raise Unsupported(f"Triton kernel argument of type {type(value).__name__}: {short_text(value)}")


def triton_call(t, line) -> None:
    name = line.kernel_name
    args = [_call_arg(t, v) for v in line.call_args]
    if name in t.multi_kernels or name not in t.kernels:
        multi = t.multi_kernels.get(name) or _define_multi_kernel(t, name, len(args))
        if len(multi["signature"]) != len(args):
            raise Unsupported(f"the call of {name} passes {len(args)} arguments, an earlier one {len(multi['signature'])}")
        t.emit({"kind": "MultiKernelCall", "kernel": name, "args": args,
                "arg_types": [p["type"] for p in multi["signature"]], "device": device_name(line.device), "stream": 0})
        return
    kernel = t.kernels[name]
    if kernel["language"] != "triton":
        raise Unsupported(f"a Triton launch of the {kernel['language']} kernel {name}")
    signature = kernel["signature"]
    if len(signature) != len(args):
        raise Unsupported(f"the launch of {name} passes {len(args)} arguments but its signature has {len(signature)}")
    t.emit({"kind": "KernelCall", "kernel": name, "args": args, "arg_types": [p["type"] for p in signature],
            "grid": {"kind": "launcher"}, "device": device_name(line.device), "stream": 0})


def _define_multi_kernel(t, name: str, count: int) -> dict[str, Any]:
    # Written into the multi-kernel state's `kernel_defs` while kernels were
    # generated; the wrapper splices it into the module header later.
    from torch._inductor.utils import IndentedBuffer

    state = getattr(t.wrapper, "multi_kernel_state", None)
    buffers = [getattr(state, "kernel_defs", None), *vars(t.wrapper).values()]
    texts = [v.getvalue() for v in buffers if isinstance(v, IndentedBuffer)]
    for m in (m for text in texts for m in _MULTI_KERNEL.finditer(text)):
        if m.group("name") != name:
            continue
        candidates = [c.strip().rstrip(",") for c in m.group("candidates").splitlines() if c.strip()]
        index_rows = [r.strip() for r in m.group("index").splitlines() if r.strip()]
        arg_index = []
        for i, row in enumerate(index_rows):
            key, _, rest = row.partition(": ")
            if int(key) != i:
                raise Unsupported(f"{name}: arg_index row {row!r} out of order")
            arg_index.append([{"start": int(a), "stop": int(b)} for a, b in _SLICE.findall(rest)])
        if len(arg_index) != len(candidates):
            raise Unsupported(f"{name}: {len(candidates)} candidates but {len(arg_index)} arg_index rows")
        for c in candidates:
            if t.kernels.get(c, {}).get("language") != "triton":
                raise Unsupported(f"{name}: candidate {c} is no Triton kernel defined before the call")
        multi = {"kernel": name, "candidates": candidates, "arg_index": arg_index}
        multi["signature"] = multi_signature(t, multi, count)
        t.multi_kernels[name] = multi
        t.kernels[name] = {"name": name, "language": "triton", "signature": multi["signature"]}
        t.emit({"kind": "MultiKernelDefinition", "kernel": name, "candidates": candidates, "arg_index": arg_index,
                "shape_keys": []})  # keyed by size hints only for `size_hint_multi_kernel`
        return multi
    raise Unsupported(f"call of {name}, which no definition and no `async_compile.multi_kernel` in the "
                      "multi-kernel state's text defines")


def multi_signature(t, multi: dict[str, Any], count: int) -> list[dict[str, str]]:
    """The name and type of each call argument, from the candidates that receive it."""
    types: list[str | None] = [None] * count
    names: list[str | None] = [None] * count
    for candidate, slices in zip(multi["candidates"], multi["arg_index"]):
        params = t.kernels[candidate]["signature"]
        positions = [i for s in slices for i in range(s["start"], s["stop"])]
        if len(positions) != len(params):
            raise Unsupported(f"{multi['kernel']}: candidate {candidate} takes {len(params)} arguments "
                              f"but arg_index gives it {len(positions)}")
        for position, param in zip(positions, params):
            if position >= count:
                raise Unsupported(f"{multi['kernel']}: arg_index reaches argument {position} of {count}")
            if types[position] not in (None, param["type"]):
                raise Unsupported(f"{multi['kernel']}: argument {position} is {types[position]} for one candidate "
                                  f"and {param['type']} for {candidate}")
            types[position] = param["type"]
            names[position] = names[position] or param["name"]
    if any(x is None for x in types):
        raise Unsupported(f"{multi['kernel']}: no candidate takes argument {types.index(None)}")
    seen: set[str] = set()
    signature = []
    for position, (n, ty) in enumerate(zip(names, types)):
        unique = n if n not in seen else f"{n}_{position}"
        seen.add(unique)
        signature.append({"name": unique, "type": ty})
    return signature
