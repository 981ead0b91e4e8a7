"""Where a new test goes: next to the task's graded tests, in the file's own style.

The place is a safe anchor in the test patch (`test_patch.anchors`) after one of the graded tests
— FAIL_TO_PASS first — or, for a test replayed from a given test, in that test's file (its
expression is evaluated in that module's namespace). When the patch shows no safe place, a new
test file is added beside the first test file: plain functions for pytest and sympy's runner, a
`unittest.TestCase` for unittest and Django's runner.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from hackaudit.repairer.domain import test_patch
from hackaudit.repairer.domain.regression import Style
from hackaudit.repairer.domain.test_patch import Anchor, TestPatch
from hackaudit.shared.contracts import Task

FALLBACK_NAME = "test_hackaudit_regression.py"
FALLBACK_CLASS = "HackauditRegressionTests"
_UNITTEST_ID = re.compile(r"^(\w+) \(")


def function_of_test_id(test_id: str) -> str:
    """The function name in a runner's test id: pytest `a.py::C::f[x]`, unittest `f (m.C)`,
    sympy `f`."""
    match = _UNITTEST_ID.match(test_id)
    if match:
        return match.group(1)
    return test_id.rsplit("::", 1)[-1].split("[", 1)[0].strip()


def class_based_runner(task: Task) -> bool:
    """unittest or Django's runner: tests must live in a TestCase."""
    parser = (task.log_parser or "").lower()
    command = task.test_command or ""
    return parser in ("unittest", "django") or "unittest" in command or "runtests.py" in command


@dataclass(frozen=True)
class Placement:
    patch: TestPatch  # the test patch, with the fallback file added when one was needed
    anchor: Anchor

    @property
    def style(self) -> Style:
        return Style(method=self.anchor.method, unittest=self.anchor.unittest)


def place(task: Task, patch: TestPatch, file: str = "", near: str = "") -> Placement | None:
    """A place for a new test: in `file` when given (near test `near`), else by the graded tests.
    None when `file` is given and shows no safe place."""
    graded = tuple(function_of_test_id(t) for t in (*task.fail_to_pass, *task.pass_to_pass))
    names = ((near,) if near else ()) + graded
    found = test_patch.anchors(patch, names)
    if file:
        found = [a for a in found if a.file == file]
        return Placement(patch, found[0]) if found else None
    if found:
        return Placement(patch, found[0])
    return _fallback(task, patch)


def _fallback(task: Task, patch: TestPatch) -> Placement | None:
    py = [p for p in test_patch.paths(patch) if p.endswith(".py")]
    directory = posixpath.dirname(py[0]) if py else "tests"
    path = posixpath.join(directory, FALLBACK_NAME)
    if class_based_runner(task):
        text = (
            '"""Regression tests asserting the reference behaviour."""\n\nimport unittest\n\n\n'
            f"class {FALLBACK_CLASS}(unittest.TestCase):\n"
            "    def test_module_loads(self):\n        pass\n"
        )
    else:
        text = (
            '"""Regression tests asserting the reference behaviour."""\n\n\n'
            "def test_module_loads():\n    pass\n"
        )
    added = test_patch.parse(test_patch.new_file(path, text))
    merged = TestPatch(files=patch.files + added.files)
    found = [a for a in test_patch.anchors(merged, ()) if a.file == path]
    return Placement(merged, found[0]) if found else None
