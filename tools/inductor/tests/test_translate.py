"""Unit tests of the translator's pure pieces (no compilation):
python -m unittest discover -s tools/inductor/tests (with PYTHONPATH=tools/inductor)."""

import unittest

from wrapir_inductor.check import _call_body
from wrapir_inductor.translate import (
    _ASSERT_SIZE_STRIDE,
    _CPP_PYBINDING,
    Unsupported,
    cpp_param_type,
    operator_name,
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

    def test_assert_alignment_is_named(self):
        why = self.unsupported(self.translator(), "assert_alignment(buf6, 16, 'torch.ops.aten.foo.default')")
        self.assertIn("assert_alignment", why)

    def test_a_scalar_assert_is_named_with_its_none_binding(self):
        t = self.translator()
        self.assertIn("scalar runtime assert", self.unsupported(t, "if not (u0 >= 1):"))
        t.previous_was_scalar_assert = t.after_scalar_assert
        self.assertIn("scalar runtime assert", self.unsupported(t, "    raise RuntimeError('u0 >= 1')"))
        t.previous_was_scalar_assert = t.after_scalar_assert
        self.assertIn("scalar runtime assert", self.unsupported(t, "buf1 = None"))
        # Elsewhere `bufN = None` is just unknown text.
        t.previous_was_scalar_assert = False
        self.assertIn("raw text line", self.unsupported(t, "buf1 = None"))

    def test_comments_and_blank_lines_are_kept(self):
        t = self.translator()
        t.raw_text("# buffer buf1 (op: x) is assumed to be not aligned")
        t.raw_text("   ")
        self.assertEqual(t.body, [{"kind": "Comment", "text": "buffer buf1 (op: x) is assumed to be not aligned"}])
        self.assertEqual(t.provenance, [{"line": None, "blank": True}])
