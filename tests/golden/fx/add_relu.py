# The FX graph of wrapir program 'add_relu', built with the torch.fx API (wrapir fx-python).
import operator

import torch
import torch.fx
from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table


def _load_triton(name, source, device, repeat):
    # The @triton.jit function the kernel side table holds, taken as
    # Inductor's FX backend takes it: the kernel's module loaded in this
    # process, its CachingAutotuner unwrapped. (AsyncCompile is no way to
    # get it: a kernel compiled in a worker comes back with the function's
    # code dropped for pickling, and the launch through the side table
    # needs that code.) Triton compiles the function on its first launch.
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    # One side-table entry per kernel of the program, as the graph numbers
    # them: the code cache gives one module per source and the table one
    # index per function, so a source the program holds again (a kernel in
    # both branches of a cond) is loaded as a module of its own. (A copy of
    # the function shares Triton's per-device caches with the original,
    # which then misses what its first launch sets up.)
    if repeat:
        source = f"{source}\n# wrapir: entry {repeat + 1} of this kernel in the side table\n"
    kernel = getattr(PyCodeCache.load(source), name)
    if isinstance(kernel, CachingAutotuner):
        kernel = kernel.fn
    inner = kernel
    while inner is not None and not hasattr(inner, "__code__"):
        inner = getattr(inner, "fn", None)
    if inner is None:
        raise RuntimeError(f"Triton kernel {name!r} ({device}): no function code to launch")
    return kernel


class _CppKernel:
    """A C++ kernel, compiled by Inductor's cpp_pybinding on its first call."""

    def __init__(self, name, argtypes, source):
        self.name, self.argtypes, self.source, self.fn = name, argtypes, source, None

    def __call__(self, *args):
        if self.fn is None:
            from torch._inductor.async_compile import AsyncCompile

            fn = AsyncCompile().cpp_pybinding(self.argtypes, self.source)
            self.fn = fn.result() if hasattr(fn, "result") else fn
        self.fn(*args)


def cpp_kernel_mutation(kernel_idx, kwargs):
    """Launches C++ kernel `kernel_idx` of this module with the arguments in
    signature order (FX's kernel side table holds Triton kernels only)."""
    _CPP_KERNELS[kernel_idx](*kwargs.values())


cpp_kernel_mutation.__module__ = "wrapir.fx"


_TRITON_SOURCES = [
    ('triton_poi_fused_add_relu_0', '''@triton.jit
def triton_poi_fused_add_relu_0():
    pass
''', 'cuda'),
]
_CPP_KERNELS = []


def _build_0(_triton_kernels, _cpp_kernels):
    root = torch.nn.Module()
    g = torch.fx.Graph()
    n0 = g.placeholder('arg0_1')
    n1 = g.placeholder('arg1_1')
    n2 = g.call_function(torch.empty_strided, ([64, 128], [128, 1]), {'dtype': torch.float32, 'device': 'cuda'})
    n2.name = 'buf0'
    n3 = g.call_function(torch.ops.higher_order.triton_kernel_wrapper_mutation, (), {'kernel_idx': _triton_kernels[0], 'constant_args_idx': kernel_side_table.add_constant_args({}), 'grid': [(32, 1, 1)], 'tma_descriptor_metadata': {}, 'kwargs': {'in_ptr0': n0, 'in_ptr1': n1, 'out_ptr0': n2, 'xnumel': 8192, 'XBLOCK': 256}})
    g.output(n2)
    return torch.fx.GraphModule(root, g)


_build_root = _build_0


def build():
    """The program as a torch.fx.GraphModule. Its Triton kernels are added to
    torch's kernel side table (kernel_idx); each launch adds its constant
    arguments (constant_args_idx)."""
    triton_kernels, repeats = [], {}
    for name, source, device in _TRITON_SOURCES:
        repeats[source] = repeats.get(source, -1) + 1
        triton_kernels.append(kernel_side_table.add_kernel(_load_triton(name, source, device, repeats[source])))
    return _build_root(triton_kernels, list(range(len(_CPP_KERNELS))))


def graph_text(gm, path=""):
    """The graphs of `gm` as wrapir's `fx` target prints them: submodules
    first, each under `# <path>`, then the graph."""
    text = ""
    for name, child in gm.named_children():
        if isinstance(child, torch.fx.GraphModule):
            text += graph_text(child, f"{path}.{name}" if path else name)
    if path:
        return text + f"# {path}\n{gm.graph}\n\n"
    return text + f"{gm.graph}\n"
