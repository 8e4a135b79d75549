"""Unit tests of translate_subgraph's pure pieces (no compilation): the lines
Inductor 2.11 writes for torch.cond and while_loop, and how a run of lines is
held to them. The expected texts are copied from Inductor's own modules for
tests/models/cond_tensor_predicate.py and while_loop_two_carried.py."""

import unittest

from wrapir_inductor.translate_subgraph import (
    Mismatch,
    Run,
    expected_conditional,
    expected_while_loop,
    referenced_subgraphs,
)


def texts(tokens):
    return [v for k, v in tokens if k == "text"]


class ConditionalLines(unittest.TestCase):
    def test_what_inductor_writes_for_a_tensor_predicate(self):
        tokens = expected_conditional("buf2", "buf1.item()", ["arg0_1"], "true_graph_0", "false_graph_0", 1)
        self.assertEqual(tokens, [
            ("text", "buf2 = [None] * 1"),
            ("text", "if buf1.item():"),
            ("enter", "true_graph_0"),
            ("text", "true_graph_0_args = [arg0_1,]"),
            ("text", "buf2 = true_graph_0(true_graph_0_args)"),
            ("exit", None),
            ("text", "else:"),
            ("enter", "false_graph_0"),
            ("text", "false_graph_0_args = [arg0_1,]"),
            ("text", "buf2 = false_graph_0(false_graph_0_args)"),
            ("exit", None),
        ])

    def test_several_operands_have_no_trailing_comma(self):
        tokens = expected_conditional("buf3", "buf1.item()", ["arg0_1", "arg1_1"], "t", "f", 3)
        self.assertIn("t_args = [arg0_1, arg1_1]", texts(tokens))
        self.assertEqual(texts(tokens)[0], "buf3 = [None] * 3")


class WhileLoopLines(unittest.TestCase):
    def test_what_inductor_writes_for_three_carried_and_one_additional(self):
        tokens = expected_while_loop("buf2", ["buf0", "arg0_1", "buf1"], ["arg1_1"],
                                     "while_loop_cond_graph_0", "while_loop_body_graph_0")
        args = "[buf2[0], buf2[1], buf2[2], arg1_1]"
        self.assertEqual(texts(tokens), [
            "buf2 = [None] * 3",
            "buf2[0] = buf0",
            "buf2[1] = arg0_1",
            "buf2[2] = buf1",
            f"while_loop_cond_graph_0_args = {args}",
            "(buf2_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)",
            "should_loop = buf2_cond_result",
            "if not should_loop:",
            "buf2[0] = buf0.clone()",
            "buf2[1] = arg0_1.clone()",
            "buf2[2] = buf1.clone()",
            "while should_loop:",
            f"while_loop_body_graph_0_args = {args}",
            "(buf2[0], buf2[1], buf2[2]) = while_loop_body_graph_0(while_loop_body_graph_0_args)",
            f"while_loop_cond_graph_0_args = {args}",
            "(buf2_cond_result,) = while_loop_cond_graph_0(while_loop_cond_graph_0_args)",
            "    should_loop = buf2_cond_result",
        ])
        # Each clone, the body call and the second condition call are scopes of their own.
        self.assertEqual([v for k, v in tokens if k == "enter"],
                         ["while_loop_body_graph_0"] * 4 + ["while_loop_cond_graph_0"])
        self.assertEqual(sum(1 for k, _ in tokens if k == "exit"), 5)

    def test_one_carried_value_is_written_as_a_one_tuple(self):
        tokens = expected_while_loop("buf1", ["arg0_1"], [], "c", "b")
        self.assertIn("(buf1[0],) = b(b_args)", texts(tokens))
        self.assertIn("c_args = [buf1[0],]", texts(tokens))


class Matching(unittest.TestCase):
    def run_of(self):
        return Run(node=object(), name="buf2",
                   expected=expected_conditional("buf2", "buf1.item()", ["arg0_1"], "t", "f", 1),
                   node_is_conditional=True)

    def test_the_lines_inductor_writes_complete_the_run(self):
        run = self.run_of()
        for token in run.expected[1:]:
            self.assertFalse(run.complete)
            run.match(token)
        self.assertTrue(run.complete)

    def test_a_different_line_is_a_mismatch_naming_what_was_expected(self):
        run = self.run_of()
        run.match(("text", "if buf1.item():"))
        with self.assertRaises(Mismatch) as e:
            run.match(("enter", "f"))  # the false branch first
        self.assertIn("EnterSubgraphLine of t", str(e.exception))
        self.assertIn("found EnterSubgraphLine of f", str(e.exception))

    def test_a_line_of_another_class_is_a_mismatch(self):
        run = self.run_of()
        with self.assertRaises(Mismatch) as e:
            run.match(("other", "KernelCallLine"))
        self.assertIn("found KernelCallLine", str(e.exception))

    def test_text_must_match_exactly(self):
        run = self.run_of()
        with self.assertRaises(Mismatch):
            run.match(("text", "if buf1.item() :"))


class Subgraphs(unittest.TestCase):
    def test_each_called_subgraph_once_in_order(self):
        program = {"body": [
            {"kind": "Allocate", "buffer": "buf0"},
            {"kind": "WhileLoop", "cond_graph": "c", "body_graph": "b"},
            {"kind": "Conditional", "true_graph": "t", "false_graph": "b"},
            {"kind": "WhileLoop", "cond_graph": "c", "body_graph": "b2"},
        ]}
        self.assertEqual(referenced_subgraphs(program), ["c", "b", "t", "b2"])


if __name__ == "__main__":
    unittest.main()
