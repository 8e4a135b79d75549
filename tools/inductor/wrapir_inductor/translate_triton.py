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

from .translate import Unsupported, _IDENT, device_name, short_text

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
    t.emit({"kind": "KernelDefinition", "kernel": name, "source": {"kind": "text", "text": source}, "metadata": {}})


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
