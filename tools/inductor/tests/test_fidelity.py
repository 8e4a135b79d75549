"""The kinds of difference between Inductor's call() and wrapir's."""

import unittest

from wrapir_inductor.fidelity import classify


class Classify(unittest.TestCase):
    def test_known_kinds(self):
        kinds, unexplained = classify([
            "-stream0 = get_raw_stream(0)",
            "-buf2 = extern_kernels.convolution(buf0, buf1, stride=(1, 1), groups=1, bias=None)",
            "+buf2 = extern_kernels.convolution(buf0, buf1, stride=[1, 1], groups=1, bias=None)",
            "-assert_size_stride(buf2, (2, 8), (8, 1), 'torch.ops.aten.convolution.default')",
            "+assert_size_stride(buf2, (2, 8), (8, 1))",
            "-arg0_1, arg1_1 = args",
            "+s77, arg1_1 = args",
            "-s77 = arg0_1",
            "-pool0 = empty_strided_cuda((16, 32), (32, 1), torch.float32)",
            "+pool0 = empty_strided_cuda((2048, ), (1, ), torch.uint8)",
        ])
        self.assertEqual(unexplained, [])
        self.assertEqual(dict(kinds), {"raw stream": 1, "tuple as list": 2, "assert op name": 2,
                                       "symbol inputs": 3, "pool dtype": 2})

    def test_a_semantic_difference_stays_unexplained(self):
        kinds, unexplained = classify([
            "-buf1 = extern_kernels.mm(buf0, arg1_1, out=buf1)",
            "+buf1 = extern_kernels.mm(arg1_1, buf0, out=buf1)",
            "-buf3 = reinterpret_tensor(buf1, (4, ), (1, ), 0)",
        ])
        self.assertEqual(len(unexplained), 3)
        self.assertEqual(sum(kinds.values()), 0)

    def test_a_call_is_not_a_tuple(self):
        _, unexplained = classify(["-f(a, b)", "+f[a, b]"])
        self.assertEqual(len(unexplained), 2)


if __name__ == "__main__":
    unittest.main()
