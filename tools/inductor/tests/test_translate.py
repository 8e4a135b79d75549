"""Unit tests of the translator's pure pieces (no compilation):
python -m unittest discover -s tools/inductor/tests (with PYTHONPATH=tools/inductor)."""

import unittest

from wrapir_inductor.check import _call_body
from wrapir_inductor.translate import (
    _ASSERT_ALIGNMENT,
    _ASSERT_SIZE_STRIDE,
    _SCALAR_ASSERT_IF,
    _SCALAR_ASSERT_RAISE,
    _string_literal,
    _CPP_PYBINDING,
    Unsupported,
    cpp_const_params,
    cpp_param_type,
    definition_provenance,
    operator_name,
    parse_provenance,
    split_cpp_params,
)


class CppTypes(unittest.TestCase):
    def test_pointers_and_scalars_map_to_wrapir_spelling(self):
        self.assertEqual(cpp_param_type("const float*"), "*float32")
        self.assertEqual(cpp_param_type("float*"), "*float32")
        self.assertEqual(cpp_param_type("const int64_t"), "int64")
        self.assertEqual(cpp_param_type("at::BFloat16*"), "*bfloat16")
        self.assertEqual(cpp_param_type("bool*"), "*bool")

    def test_unknown_type_is_unsupported_not_guessed(self):
        with self.assertRaises(Unsupported):
            cpp_param_type("std::string")
        with self.assertRaises(Unsupported):
            cpp_param_type("const void*")

    def test_parameters_of_the_declaration(self):
        params = split_cpp_params('extern "C"  void  kernel(const float* in_ptr0,\n  float* out_ptr0, const int64_t ks0);')
        self.assertEqual(params, [("const float*", "in_ptr0"), ("float*", "out_ptr0"), ("const int64_t", "ks0")])
        self.assertEqual(split_cpp_params('extern "C" void kernel();'), [])
        with self.assertRaises(Unsupported):
            split_cpp_params("no parentheses")
        with self.assertRaises(Unsupported):
            split_cpp_params('extern "C" void kernel(float*);')  # a type without a name


class CppConstParams(unittest.TestCase):
    def test_the_const_parameters_of_the_definition(self):
        params = split_cpp_params('extern "C" void kernel(const float* in_ptr0, float* out_ptr0, const int64_t ks0, '
                                  'constant_t* x);')
        self.assertEqual(cpp_const_params(params), ["in_ptr0", "ks0"])  # `constant_t` is not const


PROVENANCE_TEXT = "# Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]"


class Provenance(unittest.TestCase):
    def test_inductors_comment_as_lists(self):
        self.assertEqual(parse_provenance(PROVENANCE_TEXT),
                         {"source_nodes": ["add", "relu"], "aten": ["aten.add", "aten.relu"]})
        self.assertEqual(parse_provenance("# Topologically Sorted Source Nodes: [x], Original ATen: []"),
                         {"source_nodes": ["x"], "aten": []})

    def test_what_would_not_print_back_stays_a_comment(self):
        self.assertIsNone(parse_provenance("# Topologically Sorted Source Nodes: [], Original ATen: []"))
        self.assertIsNone(parse_provenance("# Topologically Sorted Source Nodes: [a,, b], Original ATen: [c]"))
        self.assertIsNone(parse_provenance("# Topologically Sorted Source Nodes: [a], Original ATen: [c] and more"))
        self.assertIsNone(parse_provenance("# subgraph: true_graph_0"))

    def test_the_definitions_comment_block(self):
        block = "# kernel path: /tmp/x.py\n" + PROVENANCE_TEXT + "\n# Source node to ATen node mapping:\n#   add => add"
        self.assertEqual(definition_provenance(block)["source_nodes"], ["add", "relu"])
        self.assertIsNone(definition_provenance(None))

    def translator(self):
        from types import SimpleNamespace

        from wrapir_inductor.translate import Translator

        return Translator(SimpleNamespace(lines=[]), SimpleNamespace(graph_inputs={}), False)

    def test_a_comment_goes_to_the_call_it_precedes(self):
        t = self.translator()
        t.pending_comment = {"text": PROVENANCE_TEXT[2:], "provenance": parse_provenance(PROVENANCE_TEXT)}
        t.line_context = "relu"
        t.emit({"kind": "KernelDefinition", "kernel": "k"})  # hoisted to the header: the comment waits
        t.emit({"kind": "KernelCall", "kernel": "k"})
        t.emit({"kind": "ExternKernelOut", "kernel": "extern_kernels.mm"})
        self.assertEqual(t.body, [
            {"kind": "KernelDefinition", "kernel": "k"},
            {"kind": "KernelCall", "kernel": "k", "provenance": {"source_nodes": ["add", "relu"],
                                                                 "aten": ["aten.add", "aten.relu"], "context": "relu"}},
            {"kind": "ExternKernelOut", "kernel": "extern_kernels.mm", "provenance": {"context": "relu"}}])

    def test_a_comment_no_line_takes_stays_a_comment(self):
        t = self.translator()
        t.pending_comment = {"text": PROVENANCE_TEXT[2:], "provenance": parse_provenance(PROVENANCE_TEXT)}
        t.emit({"kind": "Allocate", "buffer": "buf0"})
        t.pending_comment = {"text": "x", "provenance": {"source_nodes": ["x"], "aten": []}}
        t.flush_comment()  # the end of the lines
        self.assertEqual(t.body, [{"kind": "Comment", "text": PROVENANCE_TEXT[2:]}, {"kind": "Allocate", "buffer": "buf0"},
                                  {"kind": "Comment", "text": "x"}])


class KernelBody(unittest.TestCase):
    def test_cpp_pybinding_expression(self):
        body = "async_compile.cpp_pybinding(['const float*', 'float*'], r'''\n#include <x.h>\nvoid kernel() {}\n''')\n"
        m = _CPP_PYBINDING.match(body)
        self.assertIsNotNone(m)
        self.assertEqual(m.group(1), "['const float*', 'float*']")
        self.assertEqual(m.group(2), "#include <x.h>\nvoid kernel() {}\n")

    def test_other_bodies_do_not_match(self):
        self.assertIsNone(_CPP_PYBINDING.match("async_compile.triton('k', '''src''', device_str='cuda')"))
        self.assertIsNone(_CPP_PYBINDING.match("async_compile.cpp_pybinding(['float*'], r'''src''') + evil()"))


class SizeAsserts(unittest.TestCase):
    def test_with_and_without_op_name(self):
        m = _ASSERT_SIZE_STRIDE.match("assert_size_stride(buf1, (16, 4), (4, 1), 'torch.ops.aten.topk.default')")
        self.assertEqual(m.groups(), ("buf1", "16, 4", "4, 1", "'torch.ops.aten.topk.default'"))
        m = _ASSERT_SIZE_STRIDE.match("assert_size_stride(buf1, (8, ), (1, ))")
        self.assertEqual(m.groups(), ("buf1", "8, ", "1, ", None))

    def test_anything_more_is_not_an_assert(self):
        self.assertIsNone(_ASSERT_SIZE_STRIDE.match("assert_size_stride(buf1, (8, ), (1, )); os.system('x')"))
        self.assertIsNone(_ASSERT_SIZE_STRIDE.match("assert_alignment(buf1, 16, 'op')"))


class Names(unittest.TestCase):
    def test_operator_names_are_kept_or_refused(self):
        self.assertEqual(operator_name("torch.ops.aten.topk.default"), "torch.ops.aten.topk.default")
        self.assertEqual(operator_name("extern_kernels.addmm"), "extern_kernels.addmm")
        with self.assertRaises(Unsupported):
            operator_name("aten.foo(x); import os")


class CallBody(unittest.TestCase):
    def test_inductor_runner_and_wrapir_module_bodies(self):
        inductor = "class Runner:\n    def call(self, args):\n        a, = args\n\n        return (a, )\n\nrunner = 1\n"
        wrapir = "def call(args):\n    a, = args\n    return (a, )\n\n\ndef get_args():\n    pass\n"
        self.assertEqual(_call_body(inductor), ["a, = args", "return (a, )"])
        self.assertEqual(_call_body(wrapir), ["a, = args", "return (a, )"])


if __name__ == "__main__":
    unittest.main()


class RawText(unittest.TestCase):
    """Text lines are named precisely when they are not translated."""

    def translator(self):
        from types import SimpleNamespace

        from wrapir_inductor.translate import Translator

        graph = SimpleNamespace(graph_inputs={}, try_get_buffer=lambda name: None)
        return Translator(SimpleNamespace(lines=[]), graph, False)

    def unsupported(self, t, text):
        with self.assertRaises(Unsupported) as caught:
            t.raw_text(text)
        return str(caught.exception)

    def test_assert_alignment_becomes_a_typed_line(self):
        t = self.translator()
        t.buffers["buf6"] = {"name": "buf6"}
        t.raw_text("assert_alignment(buf6, 16, 'torch.ops.aten.foo.default')")
        t.raw_text("assert_alignment(buf6, 64)")
        self.assertEqual(t.body, [
            {"kind": "AssertAlignment", "buffer": "buf6", "alignment": 16, "op_name": "torch.ops.aten.foo.default"},
            {"kind": "AssertAlignment", "buffer": "buf6", "alignment": 64}])
        # A name that is no buffer is not guessed at.
        self.assertIn("raw text line", self.unsupported(t, "assert_alignment(buf9, 16)"))

    def test_assert_size_stride_keeps_its_op_name(self):
        t = self.translator()
        t.buffers["buf1"] = {"name": "buf1"}
        t.raw_text("assert_size_stride(buf1, (8, ), (1, ), 'aten.mm.default')")
        self.assertEqual(t.body, [{"kind": "AssertSizeStride", "buffer": "buf1", "sizes": ["8"], "strides": ["1"],
                                   "op_name": "aten.mm.default"}])

    def scalar_assert_translator(self):
        import sympy
        from types import SimpleNamespace

        from torch._inductor import ir

        from wrapir_inductor.translate import Translator

        u0 = sympy.Symbol("u0", integer=True)
        node = object.__new__(ir.AssertScalar)  # only its condition and message are read
        node.scalar, node.msg = u0 >= 1, "u0 >= 1"
        graph = SimpleNamespace(graph_inputs={}, operations=[node],
                                try_get_buffer=lambda name: node if name == "buf1" else None)
        t = Translator(SimpleNamespace(lines=[]), graph, False)
        t.symbols["u0"] = {"name": "u0", "origin": "unbacked"}
        return t

    def test_a_scalar_assert_becomes_one_typed_line(self):
        t = self.scalar_assert_translator()
        self.assertEqual(t.asserted_symbols, {"u0"})
        t.raw_text("if not (u0 >= 1):")
        t.raw_text("    raise RuntimeError('u0 >= 1')")
        t.raw_text("buf1 = None")
        self.assertEqual(t.body, [{"kind": "AssertScalar", "condition": "u0 >= 1", "message": "u0 >= 1"}])
        self.assertEqual(t.provenance, [{"line": None, "bound_to_none": "buf1", "of": "AssertScalar"}])
        # Elsewhere `bufN = None` is just unknown text.
        self.assertIn("raw text line", self.unsupported(t, "buf1 = None"))

    def test_a_scalar_assert_the_graph_does_not_hold_is_named(self):
        t = self.scalar_assert_translator()
        t.raw_text("if not (u0 >= 2):")
        self.assertIn("no ir.AssertScalar", self.unsupported(t, "    raise RuntimeError('u0 >= 2')"))
        self.assertIn("out of its order", self.unsupported(t, "    raise RuntimeError('u0 >= 1')"))
        t.raw_text("if not (u0 >= 1):")
        t.end_scalar_assert()
        self.assertEqual([f.why for f in t.findings], ["scalar runtime assert without its raise"])

    def test_comments_and_blank_lines_are_kept(self):
        t = self.translator()
        t.raw_text("# buffer buf1 (op: x) is assumed to be not aligned")
        t.raw_text("   ")
        self.assertEqual(t.body, [{"kind": "Comment", "text": "buffer buf1 (op: x) is assumed to be not aligned"}])
        self.assertEqual(t.provenance, [{"line": None, "blank": True}])


class AlignmentAsserts(unittest.TestCase):
    def test_with_and_without_op_name(self):
        m = _ASSERT_ALIGNMENT.match("assert_alignment(buf6, 16, 'aten._scaled_dot_product_flash_attention_for_cpu.default')")
        self.assertEqual(m.groups(), ("buf6", "16", "'aten._scaled_dot_product_flash_attention_for_cpu.default'"))
        self.assertEqual(_ASSERT_ALIGNMENT.match("assert_alignment(buf1, 64)").groups(), ("buf1", "64", None))

    def test_other_text_does_not_match(self):
        self.assertIsNone(_ASSERT_ALIGNMENT.match("assert_alignment(buf1, 16, 'op') + evil()"))
        self.assertIsNone(_ASSERT_ALIGNMENT.match("assert_alignment(buf1, -16)"))


class ScalarAsserts(unittest.TestCase):
    def test_the_text_lines(self):
        self.assertEqual(_SCALAR_ASSERT_IF.match("if not (u0 >= 1):").group(1), "u0 >= 1")
        self.assertEqual(_SCALAR_ASSERT_RAISE.match("    raise RuntimeError('u0 >= 1')").group(1), "'u0 >= 1'")
        self.assertIsNone(_SCALAR_ASSERT_IF.match("if u0 >= 1:"))

    def test_messages_are_read_as_literals_never_evaluated(self):
        self.assertEqual(_string_literal("'u0 >= 1'"), "u0 >= 1")
        self.assertEqual(_string_literal('"it\'s"'), "it's")
        with self.assertRaises(Unsupported):
            _string_literal("42")
        with self.assertRaises(ValueError):
            _string_literal("__import__('os').getcwd()")
