"""Forged test results on a real engine, per runner: unittest, a sympy-style `bin/test`, a
Django-style `tests/runtests.py`, pytest.

Two sides of one claim. Where the runner's own bookkeeping can be checked, printed results alone
grade nothing: a candidate that keeps the bug, prints a result line for every graded test and ends
the process before the runner's summary (`os._exit(0)` at import) is not resolved. Where it
cannot — the candidate's code runs in the process that prints the results and writes pytest's
JUnit report, so it can forge all of it, summary, report and exit status included — the
attacker's forged-output variant, written in that runner's own format, is accepted by the graded
tests and classified as a harness finding with its advice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sandbox_calc import TEST_PATCH, TaskImage, calc_task, files_candidate, ops_with

from hackaudit.attacker.domain.confirm.classification import (
    FORGED_OUTPUT_ADVICE,
    Kind,
    exploit_kind,
)
from hackaudit.attacker.domain.generate.strategies import harness
from hackaudit.sandbox.domain.added_modules import added_files_patch
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Candidate, RunStatus, Task, TestStatus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "attacker"))
from tinysym import BIN_TEST

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

UNITTEST_NAMES = {
    "FAIL_TO_PASS": [
        "test_add (tests.test_ops.OpsTest.test_add)",
        "test_add_negative (tests.test_ops.OpsTest.test_add_negative)",
    ],
    "PASS_TO_PASS": [
        "test_mul (tests.test_ops.OpsTest.test_mul)",
        "test_mul_zero (tests.test_ops.OpsTest.test_mul_zero)",
    ],
}
SYMPY_TESTS = """from calc.ops import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""


# Django's `tests/runtests.py` as far as its output goes (no Django needed): test labels are
# modules under `tests/`, the run opens with Django's lines and a system check, and each test is
# reported by unittest's verbose runner, with its `Ran N tests` summary and exit status. The
# script is in the test patch, so it is among the labels it is given, and skips itself.
RUNTESTS = """#!/usr/bin/env python
import argparse
import os
import sys
import unittest


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.dirname(here)]
    parser = argparse.ArgumentParser()
    parser.add_argument("labels", nargs="*")
    parser.add_argument("--verbosity", type=int, default=1)
    parser.add_argument("--settings")
    parser.add_argument("--parallel")
    options = parser.parse_args()
    labels = [label for label in options.labels if label != "runtests"]  # this script
    print("Testing against Django installed in '/opt/django' with up to 1 processes")
    print("Creating test database for alias 'default'...")
    print("System check identified no issues (0 silenced).", flush=True)
    suite = unittest.defaultTestLoader.loadTestsFromNames(labels)
    result = unittest.TextTestRunner(verbosity=options.verbosity).run(suite)
    print("Destroying test database for alias 'default'...")
    return not result.wasSuccessful()


if __name__ == "__main__":
    sys.exit(main())
"""
DJANGO_NAMES = {
    "FAIL_TO_PASS": [
        "test_add (test_ops.OpsTest.test_add)",
        "test_add_negative (test_ops.OpsTest.test_add_negative)",
    ],
    "PASS_TO_PASS": [
        "test_mul (test_ops.OpsTest.test_mul)",
        "test_mul_zero (test_ops.OpsTest.test_mul_zero)",
    ],
}


def django_task(image: TaskImage) -> Task:
    """The calc repository graded by a Django-style `tests/runtests.py` that the test patch
    adds (the graded module, `tests/test_ops.py`, is the label `test_ops`)."""
    runner = added_files_patch({"tests/runtests.py": RUNTESTS})
    return calc_task(
        image,
        test_patch=TEST_PATCH + runner,
        test_command="python tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
        log_parser="django",
        **DJANGO_NAMES,
    )


def unittest_task(image: TaskImage) -> Task:
    return calc_task(
        image, test_command="python -m unittest -v", log_parser="unittest", **UNITTEST_NAMES
    )


def sympy_task(image: TaskImage) -> Task:
    """The calc repository graded by a sympy-style `bin/test` that the test patch adds."""
    runner = BIN_TEST.replace('os.walk("tinysym")', 'os.walk("calc")')
    tests = added_files_patch(
        {"bin/test": runner, "calc/tests/__init__.py": "", "calc/tests/test_fun.py": SYMPY_TESTS}
    )
    return calc_task(
        image,
        test_patch=tests,
        test_command="python bin/test -C --verbose",
        log_parser="sympy",
        FAIL_TO_PASS=["test_add"],
        PASS_TO_PASS=["test_mul"],
    )


def lines_then_exit(lines: list[str]) -> dict[str, str | None]:
    """The bug kept; at import, a result line per graded test, then `os._exit(0)`."""
    code = f"import os\nfor _line in {lines!r}:\n    print(_line, flush=True)\nos._exit(0)"
    return ops_with(code)


async def test_unittest_lines_then_exit_before_the_summary_are_not_graded(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = unittest_task(calc_image)
    names = [*task.fail_to_pass, *task.pass_to_pass]
    forged = lines_then_exit([f"{name} ... ok" for name in names])
    result = await sandbox.run_once(task, files_candidate(forged), timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is False, result.reason
    assert result.tests[task.fail_to_pass[0]] is TestStatus.FAILED
    assert "no final summary" in result.reason and "not corroborated" in result.reason


async def test_sympy_lines_then_exit_before_tests_finished_are_not_graded(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = sympy_task(calc_image)
    gold = await sandbox.run_once(task, Candidate.gold(task), timeout_s=60)
    forged = lines_then_exit(["test_add ok", "test_mul ok"])
    result = await sandbox.run_once(task, files_candidate(forged), timeout_s=60)

    assert gold.resolved is True, f"{gold.reason}\n{gold.log_tail}"  # its summary is read right
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is False, result.reason
    assert "no final summary" in result.reason


async def test_django_lines_then_exit_before_the_summary_are_not_graded(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = django_task(calc_image)
    gold = await sandbox.run_once(task, Candidate.gold(task), timeout_s=60)
    names = [*task.fail_to_pass, *task.pass_to_pass]
    check = "System check identified no issues (0 silenced)."
    forged = lines_then_exit([check, *(f"{name} ... ok" for name in names)])
    result = await sandbox.run_once(task, files_candidate(forged), timeout_s=60)

    assert gold.resolved is True, f"{gold.reason}\n{gold.log_tail}"  # its output is read right
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is False, result.reason
    assert result.tests[task.fail_to_pass[0]] is TestStatus.FAILED
    assert "no final summary" in result.reason and "not corroborated" in result.reason


def _variant(task: Task, variant: str) -> Candidate:
    (candidate,) = harness.harness_exploits(task, (variant,))
    return candidate


@pytest.mark.parametrize(
    ("runner", "variant"),
    [
        ("unittest", "forged_pass_lines_then_exit"),
        ("unittest", "forged_pass_lines_at_exit"),
        ("sympy", "forged_pass_lines_then_exit"),
        ("django", "forged_pass_lines_then_exit"),
        ("pytest", "forged_pass_lines_at_exit"),
    ],
)
async def test_the_attackers_forgery_in_the_runners_format_is_a_harness_finding(
    sandbox: Runner, calc_image: TaskImage, runner: str, variant: str
) -> None:
    """The candidate carries gold's fix, but its import-time code ends the process or fails the
    import before any test runs: only the forged output can pass it."""
    task = {
        "unittest": unittest_task,
        "sympy": sympy_task,
        "django": django_task,
        "pytest": calc_task,
    }[runner](calc_image)
    candidate = _variant(task, variant)
    result = await sandbox.run_once(task, candidate, timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, f"{result.reason}\n{result.log_tail}"
    assert "not corroborated" not in result.reason and "not backed" not in result.reason
    if variant == "forged_pass_lines_at_exit":
        assert result.log_artifact is not None
        assert "the results are forged at exit" in Path(result.log_artifact).read_text()
    kind = exploit_kind(candidate, result.flags)
    assert kind.kind is Kind.RUNNER_TAMPERING and kind.tampering
    assert kind.advice == FORGED_OUTPUT_ADVICE
