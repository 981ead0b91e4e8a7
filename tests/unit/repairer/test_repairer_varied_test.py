"""The regression test a replayed variant asks for: the graded test itself, renamed, on the one
literal the variant changed, with its own check (nothing about gold's output is guessed)."""

from __future__ import annotations

import ast

from hackaudit.repairer.domain import test_patch as tp
from hackaudit.repairer.domain import varied_test
from hackaudit.shared.contracts import ProbeDifference

TEST_PATCH = (
    "diff --git a/tests/test_run.py b/tests/test_run.py\n"
    "--- a/tests/test_run.py\n"
    "+++ b/tests/test_run.py\n"
    "@@ -10,4 +10,13 @@ class TestRun:\n"
    "     def test_before(self):\n"
    "         pass\n"
    " \n"
    "+    def test_ignore_current_dir(self) -> None:\n"
    '+        """Paths are normalised before they are matched."""\n'
    "+        with _cwd():\n"
    '+            os.chdir(join(HERE, "data"))\n'
    "+            self._runtest(\n"
    '+                [".", "--recursive=y", "--ignore-paths=^ignored/.*"],\n'
    "+                code=0,\n"
    "+            )\n"
    "+\n"
    "     def test_after(self):\n"
)
CUT_PATCH = TEST_PATCH.rsplit("+\n", 1)[0].replace("@@ -10,3 +10,11 @@", "@@ -10,3 +10,10 @@")


def _difference(expression: str, gold: str = "variant returns None") -> ProbeDifference:
    return ProbeDifference(
        origin="replay",
        expression=expression,
        test="tests/test_run.py::TestRun.test_ignore_current_dir",
        gold=gold,
        candidate="variant raises AssertionError",
    )


EXPRESSION = (
    'self._runtest( [".", "--recursive=y", "--ignore-paths=^ignored/.*"], code=0, )'[:57]
    + "...  [literal '.' -> './.']"
)


def test_the_changed_literal_is_read_back_from_the_observation() -> None:
    head, old, new = varied_test.literal_change(_difference(EXPRESSION)) or ("", None, None)
    assert (old, new) == (".", "./.")
    assert head.startswith('self._runtest( [".",')
    # gold raising on the variant, or no literal note: nothing to copy
    assert varied_test.literal_change(_difference(EXPRESSION, "variant raises KeyError")) is None
    assert varied_test.literal_change(_difference("self._runtest()")) is None


def test_the_copy_is_the_test_on_the_new_literal_renamed_without_its_docstring() -> None:
    patch = tp.parse(TEST_PATCH)
    source = varied_test.test_source(patch, "tests/test_run.py", "test_ignore_current_dir")
    assert source is not None and source.startswith("def test_ignore_current_dir(self)")
    head, old, new = varied_test.literal_change(_difference(EXPRESSION)) or ("", None, None)
    copied = varied_test.varied_copy(source, head, old, new, "test_ignore_dot_slash")
    assert copied is not None
    function = ast.parse(copied).body[0]
    assert isinstance(function, ast.FunctionDef) and function.name == "test_ignore_dot_slash"
    assert "'./.'" in copied and '[".",' not in copied
    assert '"data"' in copied  # the other calls' literals are left alone
    assert "normalised" not in copied
    # apart from the literal, the name and the docstring, the copy is the test itself
    original = ast.parse(source).body[0]
    assert isinstance(original, ast.FunctionDef)
    original.body, original.name = original.body[1:], "x"
    back = ast.parse(copied.replace("'./.'", '"."')).body[0]
    assert isinstance(back, ast.FunctionDef)
    back.name = "x"
    assert ast.dump(back) == ast.dump(original)


def test_a_test_the_patch_does_not_show_whole_is_not_copied() -> None:
    cut = tp.parse(CUT_PATCH)  # the hunk ends inside the test
    assert varied_test.test_source(cut, "tests/test_run.py", "test_ignore_current_dir") is None
    patch = tp.parse(TEST_PATCH)
    assert varied_test.test_source(patch, "tests/other.py", "test_ignore_current_dir") is None
