"""Translating Inductor's Wrapper IR (``wrapper.lines`` after its passes) into
wrapir's program JSON (schema version 1, docs/json-schema.md).

Every element of the line list is either translated into typed wrapir lines,
kept as data beside the program (provenance), or reported as a finding that
names its class and shows the line: nothing is dropped silently.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
from torch._inductor import ir
from torch._inductor.codegen import wrapper as wrapper_mod
from torch._inductor.codegen.cpp_utils import DTYPE_TO_CPP
from torch._inductor.codegen.common import DeferredLine
from torch._inductor.codegen.wrapper import pexpr

try:  # pool lines (memory_planning=True)
    from torch._inductor.codegen import memory_planning as _memory_planning
except ImportError:  # pragma: no cover
    _memory_planning = None
from torch._inductor.utils import LineContext

from .translate_subgraph import ControlFlow

_CPP_TO_DTYPE = {cpp: dtype for dtype, cpp in DTYPE_TO_CPP.items()}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CPP_PYBINDING = re.compile(r"\s*async_compile\.cpp_pybinding\((\[.*?\]), r'''\n?(.*)'''\)\s*\Z", re.S)
# `codegen_device_copy`: a copy between devices (a CPU constant moved to the GPU), written as text.
_DEVICE_COPY = re.compile(r"\s*(\w+)\.copy_\((\w+), (True|False)\)\s*\Z")
_ASSERT_SIZE_STRIDE = re.compile(
    r"\s*assert_size_stride\((\w+), \(([^()]*)\), \(([^()]*)\)(?:, ('[^']*'|\"[^\"]*\"))?\)\s*\Z"
)
_ASSERT_ALIGNMENT = re.compile(r"\s*assert_alignment\((\w+), ([0-9]+)(?:, ('[^']*'|\"[^\"]*\"))?\)\s*\Z")
# ir.AssertScalar, written as three text lines: `if not (COND):`,
# `    raise RuntimeError(MSG)`, `bufN = None`.
_SCALAR_ASSERT_IF = re.compile(r"\s*if not \((.*)\):\s*\Z")
_SCALAR_ASSERT_RAISE = re.compile(r"\s*raise RuntimeError\((.*)\)\s*\Z")
_BOUND_TO_NONE = re.compile(r"\s*(\w+) = None\s*\Z")
# The provenance comment Inductor writes before a kernel's definition and call
# (`codegen_comment`); kept as a line's `provenance`, which the emitter writes back.
_PROVENANCE = re.compile(
    r"\s*#\s*Topologically Sorted Source Nodes: \[(?P<nodes>[^\[\]\n]*)\], "
    r"Original ATen: \[(?P<aten>[^\[\]\n]*)\]\s*\Z")
# The line kinds that carry a `provenance` (docs/ir-reference.md); a comment
# followed by another kind stays a Comment line.
PROVENANCE_KINDS = frozenset({"KernelCall", "SymbolicCallArg", "MultiKernelCall", "ExternKernelAlloc",
                              "ExternKernelOut", "ExternKernelMultiOut", "ScatterFallback", "IndexPutFallback"})


def parse_provenance(text: str) -> dict[str, Any] | None:
    """`# Topologically Sorted Source Nodes: [a, b], Original ATen: [x]` as
    {"source_nodes": [...], "aten": [...]}; None for any other text, or for
    lists that would not print back the same (an empty entry, both empty)."""
    m = _PROVENANCE.match(text)
    if not m:
        return None
    lists = {}
    for key, group in (("source_nodes", "nodes"), ("aten", "aten")):
        body = m.group(group)
        items = body.split(", ") if body else []
        if any(not item or item != item.strip() or "," in item or not item.isprintable() for item in items):
            return None
        lists[key] = items
    if not lists["source_nodes"] and not lists["aten"]:
        return None
    return lists


def definition_provenance(metadata: Any) -> dict[str, Any] | None:
    """The provenance in the comment block Inductor writes above a kernel's
    definition (`KernelDefinitionLine.metadata`), if it has one."""
    if not isinstance(metadata, str):
        return None
    for text in metadata.splitlines():
        found = parse_provenance(text)
        if found is not None:
            return found
    return None


def _string_literal(text: str) -> str:
    """The value of a Python string literal Inductor wrote with repr();
    literal_eval reads literals only, never evaluates code."""
    value = ast.literal_eval(text)
    if not isinstance(value, str):
        raise Unsupported(f"{short_text(text)!r} is not a string literal")
    return value


def _backed_values(shape_env) -> dict:
    """The size hints of backed symbols (2.11 renamed `var_to_val`)."""
    values = getattr(shape_env, "backed_var_to_val", None)
    return values if values is not None else shape_env.var_to_val


class Unsupported(Exception):
    """A construct the translator cannot express in wrapir yet."""


@dataclass
class Finding:
    line: int | None
    cls: str
    text: str
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "class": self.cls, "text": self.text, "why": self.why}


@dataclass
class Kernel:
    name: str
    source: str
    arg_types: list[str]  # Inductor's C++ spelling, `const` included
    prefix_header: str | None


@dataclass
class Translation:
    program: dict[str, Any]
    findings: list[Finding]
    kernels: list[Kernel]
    provenance: list[dict[str, Any]]
    lossy: list[dict[str, Any]]
    class_counts: dict[str, int]
    graph_input_names: list[str]
    # symbol name -> (input tensor name, "size" or "stride", dim) for symbols readable from an input
    symbol_sources: dict[str, tuple[str, str, int]] = field(default_factory=dict)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def device_name(device: torch.device | None) -> str:
    if device is None:
        raise Unsupported("a buffer without a device")
    device = torch.device(device)
    return device.type if device.index is None or device.type == "cpu" else f"{device.type}:{device.index}"


def short_text(value: Any, limit: int = 160) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit] + "..."


def cpp_param_type(cpp: str) -> str:
    """`const float*` -> `*float32`, `const int64_t` -> `int64` (wrapir's spelling)."""
    text = cpp.strip()
    pointer = text.endswith("*")
    base = text.rstrip("*").strip()
    base = base.removeprefix("const ").strip()
    dtype = _CPP_TO_DTYPE.get(base)
    if dtype is None:
        raise Unsupported(f"C++ parameter type {cpp!r} has no torch dtype")
    return ("*" if pointer else "") + dtype_name(dtype)


def split_cpp_params(definition: str) -> list[tuple[str, str]]:
    """The (type, name) pairs of `extern "C" void kernel(const float* in_ptr0, ...);`."""
    open_paren, close_paren = definition.find("("), definition.rfind(")")
    if open_paren < 0 or close_paren < open_paren:
        raise Unsupported(f"cannot read the parameters of {short_text(definition)!r}")
    inner = definition[open_paren + 1 : close_paren].strip()
    params = []
    for part in filter(None, (p.strip() for p in inner.split(","))):
        m = re.match(r"(.*?)([A-Za-z_][A-Za-z0-9_]*)\Z", part, re.S)
        if not m or not m.group(1).strip():
            raise Unsupported(f"cannot read the C++ parameter {part!r}")
        params.append((m.group(1).strip(), m.group(2)))
    return params


def cpp_const_params(params: list[tuple[str, str]]) -> list[str]:
    """The parameters a C++ kernel's definition declares `const`
    (`const float* in_ptr0`, `const int64_t ks0`)."""
    return [name for cpp, name in params if re.match(r"const\b", cpp)]


def operator_name(python_name: str) -> str:
    """Inductor's python kernel name, kept verbatim (`torch.ops.aten.topk.default`,
    `extern_kernels.addmm`): wrapir prints operators inside `torch` as they are."""
    name = python_name
    if not all(_IDENT.match(part) for part in name.split(".")):
        raise Unsupported(f"operator {python_name!r} is not a dotted path of identifiers")
    return name


class Translator:
    def __init__(self, wrapper, graph, is_subgraph: bool):
        self.wrapper = wrapper
        self.graph = graph
        self.is_subgraph = is_subgraph
        self.findings: list[Finding] = []
        self.provenance: list[dict[str, Any]] = []
        self.lossy: list[dict[str, Any]] = []
        self.buffers: dict[str, dict[str, Any]] = {}
        self.symbols: dict[str, dict[str, Any]] = {}
        self.computed_symbols: set[str] = set()
        self.kernels: dict[str, dict[str, Any]] = {}
        self.multi_kernels: dict[str, dict[str, Any]] = {}  # multi_kernel_N -> candidates, arg_index
        self.pools: dict[str, dict[str, Any]] = {}
        self.kernel_sources: list[Kernel] = []
        self.donated: set[str] = set()
        self.body: list[dict[str, Any]] = []
        self.class_counts: dict[str, int] = {}
        self.line_index: int | None = None
        # A provenance comment waiting for the line it annotates ({"text", "provenance"}),
        # and the LineContext in force (its node, for every line that carries provenance).
        self.pending_comment: dict[str, Any] | None = None
        self.line_context: str | None = None
        # A scalar runtime assert being read: its `if not (...)` text, then its message.
        self.pending_assert: dict[str, Any] | None = None
        # Symbols that scalar asserts check: their ranges hold only once the asserts ran.
        self.asserted_symbols = {
            str(s) for op in getattr(graph, "operations", ()) if isinstance(op, ir.AssertScalar)
            for s in getattr(op.scalar, "free_symbols", ())
        }
        self.input_shape_symbols: dict[str, tuple[str, str, int]] = {}
        # Symbols passed to call() themselves (graph inputs named arg0_1 whose value is s0).
        self.input_symbols = {str(v) for v in graph.graph_inputs.values() if isinstance(v, sympy.Symbol)}
        # torch.cond / while_loop: their text and subgraph lines (translate_subgraph.py)
        self.control_flow = ControlFlow(self)

    # ---- expressions and symbols -------------------------------------------

    def expr(self, value: Any) -> str:
        e = sympy.Integer(value) if isinstance(value, int) else value
        if not isinstance(e, sympy.Expr):
            raise Unsupported(f"{short_text(value)!r} is not a symbolic expression")
        try:
            e = self.graph.sizevars.simplify(e)
        except Exception:
            pass
        for sym in sorted(e.free_symbols, key=str):
            self.note_symbol(sym)
        if e.is_Integer:
            return str(int(e))
        return pexpr(e)

    def text_expr(self, text: str) -> str:
        """An integer or a symbol written in a text line; anything else is
        reported rather than evaluated."""
        if re.fullmatch(r"-?[0-9]+", text):
            return str(int(text))
        if _IDENT.match(text):
            return self.expr(self.symbol_named(text))
        raise Unsupported(f"expression {text!r} in a text line")

    def symbol_named(self, name: str) -> sympy.Symbol:
        """The shape environment's symbol of that name (its assumptions and hint)."""
        shape_env = self.graph.sizevars.shape_env
        if shape_env is not None:
            for sym in (*_backed_values(shape_env), *shape_env.var_to_range):
                if str(sym) == name:
                    return sym
        return sympy.Symbol(name, integer=True)

    def note_symbol(self, sym: sympy.Symbol) -> None:
        name = str(sym)
        if name in self.symbols or name in self.computed_symbols:
            return
        if name in self.input_symbols:
            # Passed to call() itself (Inductor's `s0` inputs), though also an input's size.
            entry = {"name": name}
        elif name in self.input_shape_symbols:
            source, kind, dim = self.input_shape_symbols[name]
            entry = {"name": name, "origin": "input_shape", "source": source, "path": [{"kind": kind, "value": dim}]}
        else:
            raise Unsupported(f"symbol {name} is neither an input, read from an input's shape, nor computed")
        shape_env = self.graph.sizevars.shape_env
        hint = _backed_values(shape_env).get(sym) if shape_env is not None else None
        if isinstance(hint, (int, sympy.Integer)):
            entry["hint"] = int(hint)
        self.symbols[name] = entry

    # ---- buffers -------------------------------------------------------------

    def buffer(self, node: Any, role: str = "intermediate") -> str:
        """Declares `node` (an IR buffer) in the table once; returns its name."""
        name = node.get_name()
        if name in self.buffers:
            return name
        # Buffer.get_layout() refuses a MultiOutputLayout; the field has it.
        layout = node.layout if isinstance(node, ir.Buffer) else node.get_layout()
        if isinstance(layout, ir.MultiOutputLayout):
            entry = {"name": name, "role": role, "dtype": "uint8", "device": device_name(layout.device),
                     "sizes": [], "strides": [], "multi_output": True}
        elif isinstance(layout, ir.NoneLayout):
            raise Unsupported(f"buffer {name} has no layout (NoneLayout)")
        else:
            entry = {
                "name": name,
                "role": role,
                "dtype": dtype_name(layout.dtype),
                "device": device_name(layout.device),
                "sizes": [self.expr(s) for s in layout.size],
                "strides": [self.expr(s) for s in layout.stride],
            }
            offset = self.expr(layout.offset)
            if offset != "0":
                entry["offset"] = offset
        if not _IDENT.match(name):
            raise Unsupported(f"buffer name {name!r} is not an identifier")
        self.buffers[name] = entry
        return name

    def buffer_by_name(self, name: str) -> str:
        if name in self.buffers:
            return name
        node = self.graph.try_get_buffer(name) if hasattr(self.graph, "try_get_buffer") else None
        if node is None:
            raise Unsupported(f"{name!r} names no buffer of the graph")
        return self.buffer(node)

    def is_buffer_name(self, name: str) -> bool:
        if name in self.buffers:
            return True
        return self.graph.try_get_buffer(name) is not None

    # ---- arguments -----------------------------------------------------------

    def view_arg(self, view: ir.ReinterpretView) -> dict[str, Any]:
        base = self.buffer(view.data)
        layout = view.layout
        return {"buffer": base, "view": {"sizes": [self.expr(s) for s in layout.size],
                                         "strides": [self.expr(s) for s in layout.stride],
                                         "offset": self.expr(layout.offset)}}

    def arg(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {"none": None}
        if isinstance(value, bool):
            return {"bool": value}
        if isinstance(value, int):
            return {"int": value}
        if isinstance(value, float):
            if math.isnan(value):
                return {"float": "nan"}
            if math.isinf(value):
                return {"float": "inf" if value > 0 else "-inf"}
            return {"float": value}
        if isinstance(value, sympy.Expr):
            if value.is_Integer:
                return {"int": int(value)}
            return {"expr": self.expr(value)}
        if isinstance(value, (list, tuple)):
            return {"list": [self.arg(v) for v in value]}
        if isinstance(value, torch.dtype):
            return {"dtype": dtype_name(value)}
        if isinstance(value, torch.device):
            return {"device": device_name(value)}
        if isinstance(value, str):
            return {"string": value}
        if isinstance(value, ir.ReinterpretView):
            return self.view_arg(value)
        if isinstance(value, (ir.TensorBox, ir.StorageBox)):
            return self.arg(value.data)
        if isinstance(value, ir.Buffer):
            return {"buffer": self.buffer(value)}
        raise Unsupported(f"argument of type {type(value).__name__}: {short_text(value)}")

    def out_arg(self, node: Any) -> dict[str, Any]:
        view = getattr(node, "output_view", None)
        if view is not None:
            return self.view_arg(view)
        return {"buffer": self.buffer(node)}

    # ---- lines ---------------------------------------------------------------

    def emit(self, line: dict[str, Any]) -> None:
        kind = line.get("kind")
        if kind in PROVENANCE_KINDS:
            provenance = dict(self.pending_comment["provenance"]) if self.pending_comment else {}
            self.pending_comment = None
            if self.line_context is not None:
                provenance["context"] = self.line_context
            if provenance:
                line["provenance"] = provenance
        elif kind != "KernelDefinition":
            # A definition goes to the module's header: the comment waits for its call.
            self.flush_comment()
        self.body.append(line)

    def flush_comment(self) -> None:
        """A provenance comment no line took stays the Comment it was."""
        pending, self.pending_comment = self.pending_comment, None
        if pending is not None:
            self.body.append({"kind": "Comment", "text": pending["text"]})

    def translate_line(self, line: Any) -> None:
        W = wrapper_mod
        if isinstance(line, LineContext):
            # Provenance only: Inductor renders no code for it. The lines that
            # carry provenance after it record it as their context.
            context = short_text(line.context, 400)
            self.provenance.append({"line": self.line_index, "context": context})
            self.line_context = context if context and context.isprintable() else None
        elif isinstance(line, DeferredLine):
            raise Unsupported("deferred raw text line (not a WrapperLine)")
        elif isinstance(line, W.AllocateLine):
            self.emit({"kind": "Allocate", "buffer": self.buffer(line.node)})
        elif isinstance(line, W.FreeIfNotReusedLine):
            self.emit({"kind": "FreeIfNotReused", "buffer": self.buffer(line.node), "reused": bool(line.is_reused)})
        elif isinstance(line, W.ReuseLine):
            self.emit({"kind": "Reuse", "old_buffer": self.buffer(line.node),
                       "new_buffer": self.buffer(line.reused_as), "delete_old": bool(line.delete_old)})
        elif isinstance(line, W.ReinterpretLine):
            self.emit({"kind": "Reinterpret", "view": self.buffer(line.reused_as), "base": self.buffer(line.node)})
        elif isinstance(line, W.NullLine):
            self.emit({"kind": "Null"})
        elif isinstance(line, W.FreeLine):
            name = self.buffer(line.node)
            self.donated.add(name)
            self.emit({"kind": "Free", "buffer": name})
        elif isinstance(line, W.CommentLine):
            provenance = parse_provenance(str(line.line))
            if provenance is not None:
                self.flush_comment()
                text = str(line.line).strip()
                self.pending_comment = {"text": text[1:].lstrip(" "), "provenance": provenance}
                return
            for text in str(line.line).splitlines() or [""]:
                text = text.strip()
                text = text[1:].lstrip(" ") if text.startswith("#") else text
                text = "".join(c if c == "\t" or c >= " " else " " for c in text)
                self.emit({"kind": "Comment", "text": text})
        elif isinstance(line, W.KernelDefinitionLine):
            self.kernel_definition(line)
        elif isinstance(line, W.KernelCallLine):
            self.kernel_call(line)
        elif isinstance(line, W.SymbolicCallArgLine):
            name = str(line.arg.inner)
            value = self.expr(line.arg.inner_expr)
            self.computed_symbols.add(name)
            self.symbols[name] = {"name": name, "origin": "computed"}
            self.emit({"kind": "SymbolicCallArg", "symbol": name, "value": value})
        elif isinstance(line, W.ExternKernelOutLine):
            self.extern_out(line.node)
        elif isinstance(line, W.ExternKernelAllocLine):
            self.extern_alloc(line.node)
        elif isinstance(line, W.MultiOutputLine):
            self.multi_output(line)
        elif _memory_planning is not None and isinstance(line, _memory_planning.AllocFromPoolLine):
            self.alloc_from_pool(line)
        elif _memory_planning is not None and isinstance(line, _memory_planning.DeallocFromPoolLine):
            self.dealloc_from_pool(line)
        elif isinstance(line, W.UnbackedSymbolDefsLine):
            self.unbacked_symbol_defs(line)
        elif isinstance(line, W.DynamicScalarLine):
            self.dynamic_scalar(line.node)
        elif isinstance(line, W.ScatterFallbackLine):
            self.scatter_fallback(line.node)
        elif isinstance(line, W.IndexPutFallbackLine):
            self.index_put_fallback(line)
        elif isinstance(line, W.EnterDeviceContextManagerLine):
            self.emit({"kind": "EnterDeviceContext", "device": f"{self.graph.device_type}:{line.device_idx}"})
        elif isinstance(line, W.ExitDeviceContextManagerLine):
            self.emit({"kind": "ExitDeviceContext"})
        elif isinstance(line, str):
            self.raw_text(line)
        else:
            raise Unsupported("no translation for this line class yet")

    def kernel_definition(self, line) -> None:
        if line.gpu:
            from .translate_triton import triton_definition

            return triton_definition(self, line)
        m = _CPP_PYBINDING.match(line.kernel_body)
        if not m:
            raise Unsupported("the C++ kernel body is not `async_compile.cpp_pybinding([types], r'''source''')`")
        arg_types = ast.literal_eval(m.group(1))
        source = m.group(2)
        params = split_cpp_params(line.cpp_definition or "")
        if len(params) != len(arg_types):
            raise Unsupported(f"{len(arg_types)} binding types but {len(params)} parameters in the C++ definition")
        name = line.kernel_name
        if name in self.kernels:
            raise Unsupported(f"kernel {name} is defined twice")
        self.kernels[name] = {
            "name": name,
            "language": "cpp",
            "signature": [{"name": p, "type": cpp_param_type(t)} for t, p in params],
        }
        header = re.search(r'#include ["<]([^">]*)[">]', source)
        self.kernel_sources.append(Kernel(name, source, list(arg_types), header.group(1) if header else None))
        metadata = {"const_params": cpp_const_params(params)}
        for (cpp, param), binding in zip(params, arg_types):
            if cpp.replace(" ", "") != str(binding).replace(" ", ""):
                self.lossy.append({"line": self.line_index, "class": "KernelDefinitionLine",
                                   "what": f"{name}: parameter {param} is `{cpp}` in the definition but `{binding}` "
                                           "in its cpp_pybinding (the definition's type is kept)"})
        definition = {"kind": "KernelDefinition", "kernel": name,
                      "source": {"kind": "text", "text": source}, "metadata": metadata}
        provenance = definition_provenance(line.metadata)
        if provenance is not None:
            definition["provenance"] = provenance
        self.emit(definition)

    def kernel_call(self, line) -> None:
        if line.triton:
            from .translate_triton import triton_call

            return triton_call(self, line)
        if line.kernel_name not in self.kernels:
            raise Unsupported(f"call of {line.kernel_name}, which no C++ KernelDefinitionLine defined")
        args, types = [], []
        for value, cpp in zip(line.call_args, line.arg_types, strict=True):
            if isinstance(value, str) and self.is_buffer_name(value):
                args.append({"buffer": self.buffer_by_name(value)})
            elif isinstance(value, str) and _IDENT.match(value):
                # A size argument: Inductor passes the symbol's name.
                args.append(self.arg(self.symbol_named(value)))
            elif isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
                args.append({"int": int(value)})
            elif isinstance(value, str):
                # Never eval text; an expression string would need Inductor's printer inverted.
                raise Unsupported(f"kernel argument {value!r} is neither a buffer, a symbol nor an integer")
            else:
                args.append(self.arg(value))
            types.append(cpp_param_type(cpp))
        self.emit({"kind": "KernelCall", "kernel": line.kernel_name, "args": args, "arg_types": types,
                   "grid": {"kind": "launcher"}, "device": device_name(line.device), "stream": 0})

    def extern_out(self, node) -> None:
        if not isinstance(node, ir.ExternKernelOut):
            raise Unsupported(f"ExternKernelOutLine of a {type(node).__name__}")
        args = [self.arg(x) for x in node.inputs] + [self.arg(c) for c in node.constant_args]
        kwargs = [{"name": k, "value": self.arg(v)} for k, v in node.kwargs.items()]
        self.emit({"kind": "ExternKernelOut", "kernel": operator_name(node.get_kernel_name()),
                   "args": args, "kwargs": kwargs, "out": self.out_arg(node)})

    def extern_alloc(self, node) -> None:
        if isinstance(node, ir.FallbackKernel):
            args, kwargs = node.unflatten_args(node.inputs, node.constant_args)
            kwargs = {**kwargs, **(node.kwargs or {})}
            kernel = node.python_kernel_name or str(node.op_overload)
        elif type(node) is ir.ExternKernelAlloc:
            args = [*node.inputs, *node.constant_args]
            kwargs = dict(node.kwargs or {})
            kernel = node.get_kernel_name()
        else:
            raise Unsupported(f"ExternKernelAllocLine of a {type(node).__name__}")
        result = None if isinstance(node.layout, ir.NoneLayout) else self.buffer(node)
        self.emit({"kind": "ExternKernelAlloc", "result": result, "kernel": operator_name(kernel),
                   "args": [self.arg(a) for a in args],
                   "kwargs": [{"name": k, "value": self.arg(v)} for k, v in kwargs.items()]})

    def multi_output(self, line) -> None:
        path = []
        for kind, index in line.indices:
            if kind in (list, tuple):
                path.append({"kind": "index", "value": int(index)})
            elif kind is dict:
                path.append({"kind": "key", "key": str(index)})
            else:
                raise Unsupported(f"multi-output index of kind {kind!r}")
        result = self.buffer_by_name(line.result_name)
        source = self.buffer_by_name(line.arg_name)
        self.emit({"kind": "MultiOutput", "result": result, "source": source, "path": path})

    def pool_of(self, line) -> tuple[Any, Any]:
        allocation = line.group.allocation
        if allocation is None or allocation.pool is None or not allocation.pool.name:
            raise Unsupported("a pool line whose group has no allocated pool")
        return allocation, allocation.pool

    def alloc_from_pool(self, line) -> None:
        allocation, pool = self.pool_of(line)
        if pool.name not in self.pools:
            nbytes = pool.root.get_symbolic_size()
            self.pools[pool.name] = {"name": pool.name, "device": device_name(pool.device),
                                     "size_bytes": self.expr(nbytes)}
            for block in pool.root.allocations:
                if isinstance(block, _memory_planning.Allocation) and block.get_symbolic_size() == nbytes:
                    # Inductor then creates the pool as that buffer (its dtype, sizes and strides).
                    node = block.node
                    self.pools[pool.name]["tensor"] = {"dtype": dtype_name(node.get_dtype()),
                                                       "sizes": [self.expr(s) for s in node.get_size()],
                                                       "strides": [self.expr(s) for s in node.get_stride()]}
                    break
        if line.is_first_pool_usage:
            self.emit({"kind": "PoolCreate", "pool": pool.name})
        self.emit({"kind": "AllocFromPool", "buffer": self.buffer(line.node), "pool": pool.name,
                   "offset_bytes": self.expr(allocation.offset)})

    def dealloc_from_pool(self, line) -> None:
        _, pool = self.pool_of(line)
        # A group is one storage under several names (in-place reuse: buf4, then
        # buf5 = buf4); the storage dies under the last of them.
        holder = self.buffer_by_name(line.group.names[-1])
        self.emit({"kind": "DeallocFromPool", "buffer": holder, "pool": pool.name,
                   "releases_pool": bool(line.is_last_pool_usage)})

    def unbacked_symbol_defs(self, line) -> None:
        if not line.unbacked_bindings:
            # Inductor renders nothing for it; kept in the report as such.
            self.provenance.append({"line": self.line_index, "empty": "UnbackedSymbolDefsLine",
                                    "source": line.output_name})
            return
        from torch.fx.experimental.symbolic_shapes import CallMethodKey, DivideByKey
        from torch.utils._pytree import SequenceKey

        bindings = []
        for sym, keypath in line.unbacked_bindings.items():
            path, rest = [], tuple(keypath)
            while rest:
                step = rest[0]
                if isinstance(step, CallMethodKey) and len(rest) >= 2 and isinstance(rest[1], SequenceKey) \
                        and step.name in ("size", "stride"):
                    path.append({"kind": step.name, "value": int(rest[1].idx)})
                    rest = rest[2:]
                elif isinstance(step, CallMethodKey) and step.name == "storage_offset":
                    path.append({"kind": "storage_offset"})
                    rest = rest[1:]
                elif isinstance(step, SequenceKey):
                    path.append({"kind": "index", "value": int(step.idx)})
                    rest = rest[1:]
                elif isinstance(step, DivideByKey):
                    path.append({"kind": "divide_by", "value": int(step.divisor)})
                    rest = rest[1:]
                else:
                    raise Unsupported(f"key path step {step!r} of {sym}")
            self.declare_unbacked(sym)
            bindings.append({"symbol": str(sym), "path": path})
        self.emit({"kind": "UnbackedSymbolDefs", "source": self.buffer_by_name(line.output_name),
                   "bindings": bindings})

    def dynamic_scalar(self, node) -> None:
        """`u0 = buf.item()` (with `1 if ... else 0` or an exact division on its key path)."""
        from torch.fx.experimental.symbolic_shapes import ConvertIntKey, DivideByKey

        (data,) = node.inputs
        path = []
        for step in node.keypath:
            if isinstance(step, ConvertIntKey):
                path.append({"kind": "convert_to_int"})
            elif isinstance(step, DivideByKey):
                path.append({"kind": "divide_by", "value": int(step.divisor)})
            else:
                raise Unsupported(f"key path step {step!r} of {node.sym}")
        if len(path) > 1:
            raise Unsupported(f"key path {node.keypath!r} of {node.sym} has more than one step")
        self.declare_unbacked(node.sym)
        source = self.arg(data)
        if "view" in source:
            raise Unsupported(f"{node.sym} is read from a view of {source['buffer']}")
        # Inductor also binds the node's own name to None (`buf0 = None`); it
        # names no storage, so wrapir declares no buffer for it.
        self.emit({"kind": "DynamicScalar", "symbol": str(node.sym), "source": source["buffer"], "path": path})

    def scatter_fallback(self, node) -> None:
        """`aten.scatter_(x,dim,index,src[, reduce=...])` on a live buffer."""
        if node.src_is_tensor:
            x, index, src = node.inputs
            src_arg = self.arg(src)
        else:
            x, index = node.inputs
            src_arg = self.arg(node.constant_args[1])
        self_arg = self.arg(x)
        if "view" in self_arg:
            raise Unsupported(f"scatter into a view of {self_arg['buffer']}")
        kernel = node.python_kernel_name or ""
        kwargs = []
        if kernel.startswith("aten.scatter_reduce"):
            kwargs = [{"name": k, "value": self.arg(v)} for k, v in node.kwargs.items()]
        elif node.kwargs.get("reduce"):
            kwargs = [{"name": "reduce", "value": self.arg(node.kwargs["reduce"])}]
        self.emit({"kind": "ScatterFallback", "kernel": operator_name(kernel), "self": self_arg["buffer"],
                   "dim": int(node.constant_args[0]), "index": self.arg(index), "src": src_arg, "kwargs": kwargs})

    def index_put_fallback(self, line) -> None:
        """`aten.index_put_(x, [indices], values, accumulate)` on a live buffer."""
        node = line.node
        x, values = node.inputs[:2]
        self_arg = self.arg(x)
        if "view" in self_arg:
            raise Unsupported(f"index_put into a view of {self_arg['buffer']}")
        (accumulate,) = node.constant_args
        self.emit({"kind": "IndexPutFallback", "kernel": operator_name(node.get_kernel_name()),
                   "self": self_arg["buffer"], "indices": [None if i is None else self.arg(i) for i in line.indices],
                   "values": self.arg(values), "accumulate": bool(accumulate)})

    def declare_unbacked(self, sym) -> None:
        name = str(sym)
        if name in self.symbols:
            return
        entry = {"name": name, "origin": "unbacked", "unbacked": True, "assumption": "integer"}
        shape_env = self.graph.sizevars.shape_env
        vr = shape_env.var_to_range.get(sym) if shape_env is not None else None
        if name in self.asserted_symbols:
            # The range comes from the program's own scalar asserts: declaring
            # it would fold those asserts to true (wrapir decides comparisons
            # from assumptions), so the value read is only an integer here.
            vr = None
        if vr is not None and vr.lower >= 1:
            entry["assumption"] = "positive"
        elif vr is not None and vr.lower >= 0:
            entry["assumption"] = "nonnegative"
        self.symbols[name] = entry

    def raw_text(self, text: str) -> None:
        if not text.strip():
            self.provenance.append({"line": self.line_index, "blank": True})
            return
        if text.lstrip().startswith("#") and "\n" not in text.strip():
            # A comment written as text (e.g. "# buffer buf1 (op: ...) is assumed to be not aligned").
            self.emit({"kind": "Comment", "text": text.strip()[1:].lstrip(" ")})
            return
        m = _ASSERT_SIZE_STRIDE.match(text)
        if m and self.is_buffer_name(m.group(1)):
            name = self.buffer_by_name(m.group(1))
            sizes = [self.text_expr(s) for s in filter(None, (p.strip() for p in m.group(2).split(",")))]
            strides = [self.text_expr(s) for s in filter(None, (p.strip() for p in m.group(3).split(",")))]
            line = {"kind": "AssertSizeStride", "buffer": name, "sizes": sizes, "strides": strides}
            if m.group(4):
                line["op_name"] = _string_literal(m.group(4))
            self.emit(line)
            return
        m = _ASSERT_ALIGNMENT.match(text)
        if m and self.is_buffer_name(m.group(1)):
            line = {"kind": "AssertAlignment", "buffer": self.buffer_by_name(m.group(1)),
                    "alignment": int(m.group(2))}
            if m.group(3):
                line["op_name"] = _string_literal(m.group(3))
            self.emit(line)
            return
        if self.scalar_assert_text(text):
            return
        m = _DEVICE_COPY.match(text)
        if m and self.is_buffer_name(m.group(1)) and self.is_buffer_name(m.group(2)):
            self.emit({"kind": "DeviceCopy", "destination": {"buffer": self.buffer_by_name(m.group(1))},
                       "source": {"buffer": self.buffer_by_name(m.group(2))}, "non_blocking": m.group(3) == "True"})
            return
        raise Unsupported("raw text line (not a WrapperLine)")

    def scalar_assert_text(self, text: str) -> bool:
        """Reads ir.AssertScalar's three text lines into one AssertScalar line.
        The condition is taken from the graph's AssertScalar node whose
        rendering and message match the text, never parsed from the text."""
        pending, self.pending_assert = self.pending_assert, None
        m = _SCALAR_ASSERT_IF.match(text)
        if m and pending is None:
            self.pending_assert = {"condition": m.group(1), "line": self.line_index}
            return True
        m = _SCALAR_ASSERT_RAISE.match(text)
        if m and pending is not None and "message" not in pending:
            message = _string_literal(m.group(1))
            node = next((op for op in getattr(self.graph, "operations", ())
                         if isinstance(op, ir.AssertScalar) and op.msg == message
                         and pexpr(op.scalar) == pending["condition"]), None)
            if node is None:
                raise Unsupported(f"scalar runtime assert `{pending['condition']}`: no ir.AssertScalar of the graph "
                                  "renders as this condition with this message")
            self.emit({"kind": "AssertScalar", "condition": self.condition(node.scalar), "message": message})
            self.pending_assert = {**pending, "message": message}
            return True
        m = _BOUND_TO_NONE.match(text)
        if m and pending is not None and "message" in pending:
            node = self.graph.try_get_buffer(m.group(1)) if hasattr(self.graph, "try_get_buffer") else None
            if isinstance(node, ir.AssertScalar):
                # Inductor binds the assert node's name to None; it names no
                # storage, so wrapir declares no buffer for it.
                self.provenance.append({"line": self.line_index, "bound_to_none": m.group(1),
                                        "of": "AssertScalar"})
                return True
        if pending is not None and "message" not in pending:
            raise Unsupported(f"scalar runtime assert `{pending['condition']}` is not followed by its raise")
        if m is None and (_SCALAR_ASSERT_IF.match(text) or _SCALAR_ASSERT_RAISE.match(text)):
            raise Unsupported("a scalar runtime assert's text out of its order")
        return False

    def end_scalar_assert(self) -> None:
        """A scalar assert's text ends at the first line that is not text."""
        pending, self.pending_assert = self.pending_assert, None
        if pending is not None and "message" not in pending:
            self.findings.append(Finding(pending["line"], "str", f"if not ({pending['condition']}):",
                                         "scalar runtime assert without its raise"))

    def condition(self, scalar: Any) -> str:
        """A scalar assert's condition, unsimplified (simplifying it under the
        runtime asserts would make it true) in wrapir's expression syntax:
        comparisons of integer expressions; no boolean connectives."""
        if scalar is sympy.true:
            return "1"
        if not isinstance(scalar, sympy.core.relational.Relational):
            raise Unsupported(f"scalar assert condition {short_text(scalar)!r} is not one comparison "
                              "(wrapir's expressions have comparisons, not and/or/not)")
        for sym in sorted(scalar.free_symbols, key=str):
            self.note_symbol(sym)
        return pexpr(scalar)

    # ---- the graph -----------------------------------------------------------

    def run(self) -> Translation:
        graph = self.graph
        input_names = list(graph.graph_input_names) if hasattr(graph, "graph_input_names") else list(graph.graph_inputs)
        inputs = []
        # Input tensors first: their shapes define the input_shape symbols.
        for name in input_names:
            value = graph.graph_inputs[name]
            if isinstance(value, sympy.Expr):
                continue
            if isinstance(value, ir.TensorBox):
                for kind, exprs in (("size", value.get_size()), ("stride", value.get_stride())):
                    for dim, e in enumerate(exprs):
                        if isinstance(e, sympy.Symbol) and str(e) not in self.input_shape_symbols:
                            self.input_shape_symbols[str(e)] = (name, kind, dim)
        for name in input_names:
            value = graph.graph_inputs[name]
            try:
                if isinstance(value, sympy.Expr):
                    inputs.append({"expr": self.expr(value)})
                elif isinstance(value, ir.TensorBox):
                    self.buffer(value.data.data if isinstance(value.data, ir.StorageBox) else value.data, "input")
                    inputs.append({"buffer": name})
                else:
                    raise Unsupported(f"graph input {name} of type {type(value).__name__}")
            except Unsupported as e:
                self.findings.append(Finding(None, "graph input", name, str(e)))

        for index, line in enumerate(self.wrapper.lines):
            self.line_index = index
            cls = type(line).__name__
            self.class_counts[cls] = self.class_counts.get(cls, 0) + 1
            if not isinstance(line, str):
                self.end_scalar_assert()
            try:
                if not self.control_flow.take(line):
                    self.translate_line(line)
            except Unsupported as e:
                self.findings.append(Finding(index, cls, short_text(line), str(e)))
            except Exception as e:  # a translator bug: say where it happened
                raise RuntimeError(f"line {index} ({cls}): {short_text(line)}") from e
        self.end_scalar_assert()
        self.flush_comment()
        try:
            self.control_flow.end_of_lines()
        except Unsupported as e:
            self.findings.append(Finding(None, "end of lines", "", str(e)))
        self.line_index = None

        outputs = []
        for i, node in enumerate(graph.graph_outputs):
            try:
                outputs.append(self.output(node))
            except Unsupported as e:
                self.findings.append(Finding(None, "graph output", f"output {i}", str(e)))
        for name in self.donated:
            if name in self.buffers:
                self.buffers[name]["donated"] = True

        ordered = [self.buffers[n] for n in input_names if n in self.buffers]
        ordered += [b for n, b in self.buffers.items() if n not in input_names]
        program = {
            "name": getattr(self.wrapper, "subgraph_name", None) or "call",
            "symbols": list(self.symbols.values()),
            "buffers": ordered,
            "kernels": list(self.kernels.values()),
            "pools": list(self.pools.values()),
            "inputs": inputs,
            "body": self.body,
            "outputs": outputs,
            "subgraphs": [],
        }
        return Translation(program, self.findings, self.kernel_sources, self.provenance, self.lossy,
                           self.class_counts, input_names, dict(self.input_shape_symbols))

    def output(self, node: Any) -> dict[str, Any]:
        if isinstance(node, ir.NoneAsConstantBuffer):
            return {"none": None}
        if isinstance(node, ir.ShapeAsConstantBuffer):
            return {"expr": self.expr(node.expr)}
        if isinstance(node, ir.ReinterpretView):
            return self.view_arg(node)
        if isinstance(node, (ir.TensorBox, ir.StorageBox)):
            return self.output(node.data)
        if isinstance(node, ir.Buffer):
            name = self.buffer(node)
            if self.buffers[name]["role"] == "intermediate":
                self.buffers[name]["role"] = "output"
            return {"buffer": name}
        raise Unsupported(f"graph output of type {type(node).__name__}")


def translate(wrapper, graph, is_subgraph: bool) -> Translation:
    return Translator(wrapper, graph, is_subgraph).run()
