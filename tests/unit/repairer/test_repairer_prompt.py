"""Reading the model's test out of its answer, and what the prompt tells the model."""

from __future__ import annotations

import pytest

from hackaudit.repairer.domain.prompt import extract_test, rename, user_prompt
from hackaudit.repairer.domain.regression import Style
from hackaudit.shared.contracts import Candidate, GateReason, ProbeDifference, ProposedTest, Task

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="GOLD-DIFF",
    test_patch="TEST-DIFF", FAIL_TO_PASS=["t::a"], problem_statement="ISSUE-TEXT",
)  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "name", "source"),
    [
        (
            "Here:\n```python\ndef test_a():\n    assert f(1) == 2\n```\nDone.",
            "test_a",
            "def test_a():\n    assert f(1) == 2\n",
        ),
        (
            "def test_b(self):\n    self.assertTrue(x)\n",
            "test_b",
            "def test_b(self):\n    self.assertTrue(x)\n",
        ),
        (
            "```py\nclass T:\n    @mark\n    def test_c(self):\n        assert 1\n\nprint(1)\n```",
            "test_c",
            "@mark\ndef test_c(self):\n    assert 1\n",
        ),
        (
            "```python\ndef test_d():\n    assert g(\n        1\n    )\n\n\nx = 1\n```",
            "test_d",
            "def test_d():\n    assert g(\n        1\n    )\n",
        ),
    ],
)
def test_the_first_test_function_is_taken(answer: str, name: str, source: str) -> None:
    assert extract_test(answer) == (name, source)


def test_an_answer_without_a_test_gives_nothing() -> None:
    assert extract_test("I cannot write that test.") is None


def test_rename() -> None:
    assert rename("def test_a(self):\n    pass\n", "test_a", "test_a_2").startswith("def test_a_2(")


def test_the_prompt_carries_the_evidence_and_the_rejections() -> None:
    exploit = Candidate(instance_id=TASK.instance_id, diff="EXPLOIT-DIFF")
    rejected = ProposedTest(
        name="test_z", file="t.py", exploit=exploit.candidate_id, augmenter="llm",
        source="def test_z():\n    assert REJECTED_BODY\n", rejection=GateReason.FLAKY,
        detail="passes on gold in 2 of 3 runs",
    )  # fmt: skip
    text = user_prompt(
        TASK, exploit, "EVIDENCE-TEXT",
        [ProbeDifference(origin="probe", expression="f(9)", gold="returns_1", candidate="x")],
        [rejected], Style(method=True, unittest=True), "tests/test_a.py", "test_a", "test_blocks_1",
    )  # fmt: skip
    for part in (
        "ISSUE-TEXT", "GOLD-DIFF", "TEST-DIFF", "EXPLOIT-DIFF", "EVIDENCE-TEXT",
        "`f(9)`: gold gives returns_1, the wrong patch gives x",
        "rejected: flaky: passes on gold in 2 of 3 runs",
        "REJECTED_BODY", "unittest.TestCase", "tests/test_a.py", "test_blocks_1",
    ):  # fmt: skip
        assert part in text, part


GOLD = """\
diff --git a/pkg/show.py b/pkg/show.py
--- a/pkg/show.py
+++ b/pkg/show.py
@@ -1,4 +1,6 @@
 def show(value, digits=None):
+    if isinstance(value, Fraction) and digits is not None:
+        return "%.*f" % (digits, value)
     if isinstance(value, Decimal) and digits is not None:
         return format(value, f".{digits}f")
     return str(value)
"""


def test_the_prompt_shows_the_gold_lines_no_test_executes_with_their_text() -> None:
    task = TASK.model_copy(update={"patch": GOLD})
    exploit = Candidate(instance_id=TASK.instance_id, diff="EXPLOIT-DIFF")
    style = Style(method=False, unittest=False)
    args = (task, exploit, "", [], [], style, "tests/test_show.py", "test_a", "test_blocks_1")
    text = user_prompt(*args, unexecuted=("pkg/show.py:2", "pkg/show.py:3"))
    assert "## Lines the task's tests never execute" in text
    assert "- `pkg/show.py:2`: `if isinstance(value, Fraction) and digits is not None:`" in text
    assert '- `pkg/show.py:3`: `return "%.*f" % (digits, value)`' in text
    assert "the same options, settings and keyword arguments" in text
    assert "never execute" not in user_prompt(*args)  # no such lines: no such section
