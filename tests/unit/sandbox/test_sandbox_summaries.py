"""The runner's final summary as a check on printed results (unittest, Django, sympy), table-driven.

A candidate that prints result lines and ends the process before the runner's summary, or prints
them after it, or prints more passing results than the runner counted, gets no favourable status;
a complete imitation with exit status 0 is not detectable from the text (the README says so).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.sandbox.adapters.artifact_store import MemoryArtifactStore
from hackaudit.sandbox.adapters.fake_backend import FakeBackend, FakeOutcome
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.domain.log_parsers import parse_log
from hackaudit.sandbox.domain.log_parsers.summaries import (
    corroborate_by_summary,
    sympy_summaries,
    unittest_summaries,
)
from hackaudit.sandbox.domain.log_parsers.text import clean_lines
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import (
    Candidate,
    Invocation,
    Probe,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

P, F, E, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.SKIPPED
SYMPY_LOGS = Path("/work/shared/data/logs/sympy-bin-test")

NAMES = ("test_add (tests.test_ops.OpsTest.test_add)", "test_mul (tests.test_ops.OpsTest.test_mul)")
LINES = "".join(f"{name} ... ok\n" for name in NAMES)
SUMMARY = "\n" + "-" * 70 + "\nRan {n} tests in 0.003s\n\n{verdict}\n"
REAL_FAIL = (
    f"{NAMES[0]} ... FAIL\n{NAMES[1]} ... ok\n\n" + "=" * 70 + f"\nFAIL: {NAMES[0]}\n"
    "AssertionError: -1 != 5\n" + SUMMARY.format(n=2, verdict="FAILED (failures=1)")
)
NEVER_RAN = (
    "tests (unittest.loader._FailedTest.tests) ... ERROR\n\n"
    "ERROR: tests (unittest.loader._FailedTest.tests)\nRuntimeError: no tests today\n"
    + SUMMARY.format(n=1, verdict="FAILED (errors=1)")
)

UNITTEST_CASES = [
    pytest.param(LINES + SUMMARY.format(n=2, verdict="OK"), 0, None, id="real-run"),
    pytest.param(LINES, 0, "never finished", id="lines-then-exit-before-summary"),
    pytest.param(REAL_FAIL + LINES, 1, "after the runner's final summary", id="lines-at-exit"),
    pytest.param(LINES + NEVER_RAN, 1, "2 favourable results for the 1 test", id="tests-never-ran"),
    pytest.param(
        REAL_FAIL + LINES + SUMMARY.format(n=2, verdict="OK"),
        1,
        "exited with status 1",
        id="full-forgery-at-exit-with-the-real-status",
    ),
    pytest.param(
        LINES + SUMMARY.format(n=2, verdict="OK"),
        0,
        None,
        id="full-forgery-with-exit-0-is-not-detectable",
    ),
    pytest.param(
        "setUpClass (tests.test_ops.Slow) ... skipped 'no db'\n"
        + LINES
        + SUMMARY.format(n=2, verdict="OK (skipped=1)"),
        0,
        None,
        id="class-fixture-lines-are-not-tests",
    ),
]


@pytest.mark.parametrize(("log", "exit_code", "doubt"), UNITTEST_CASES)
@pytest.mark.parametrize("parser", ["unittest", "django"])
def test_unittest_results_need_the_runners_summary(
    parser: str, log: str, exit_code: int, doubt: str | None
) -> None:
    statuses = parse_log(parser, log)
    checked, why = corroborate_by_summary(parser, log, statuses, exit_code)

    if doubt is None:
        assert why is None and checked == statuses
    else:
        assert why is not None and doubt in why and "not corroborated" in why
        assert all(status in {F, E} for status in checked.values())
        assert {t for t, s in statuses.items() if s in {F, E}} <= {
            t for t, s in checked.items() if s == statuses[t]
        }  # failures are kept as they were


def test_a_summary_in_a_tests_own_output_adds_its_count() -> None:
    nested = "inner (m.Inner) ... ok\n" + SUMMARY.format(n=1, verdict="OK")
    log = nested + LINES + SUMMARY.format(n=2, verdict="OK")
    assert [s.tests for s in unittest_summaries(clean_lines(log))] == [1, 2]
    assert corroborate_by_summary("unittest", log, parse_log("unittest", log), 0)[1] is None


DJANGO_TAIL = "Destroying test database for alias 'default'...\n"


def test_django_teardown_after_the_summary_is_fine() -> None:
    log = "System check identified no issues (0 silenced).\n" + LINES
    log += SUMMARY.format(n=2, verdict="OK") + DJANGO_TAIL
    assert corroborate_by_summary("django", log, parse_log("django", log), 0)[1] is None


SYMPY_RUN = """\
============================= test process starts ==============================
sympy/core/tests/test_ops.py[2]
test_add ok
test_mul ok                                                                 [OK]

================== tests finished: 2 passed, in 0.01 seconds ===================
"""
SYMPY_LINES = "test_add ok\ntest_mul ok\n"

SYMPY_CASES = [
    pytest.param(SYMPY_RUN, 0, None, id="real-run"),
    pytest.param(SYMPY_LINES, 0, "never finished", id="lines-then-exit-before-summary"),
    pytest.param(SYMPY_RUN + SYMPY_LINES, 0, "after the runner's final summary", id="at-exit"),
    pytest.param(
        SYMPY_LINES.replace("test_add ok", "test_add ok\ntest_sub ok\ntest_div ok")
        + "= tests finished: 2 passed, in 0.01 seconds =\n",
        0,
        "4 favourable results for the 2 test",
        id="more-results-than-counted",
    ),
    pytest.param(
        SYMPY_RUN.replace("2 passed,", "2 passed, 1 failed,"),
        0,
        None,
        id="a-failed-summary-needs-no-exit-status",
    ),
    pytest.param(SYMPY_RUN, 1, "exited with status 1", id="passed-summary-nonzero-exit"),
]


@pytest.mark.parametrize(("log", "exit_code", "doubt"), SYMPY_CASES)
def test_sympy_results_need_tests_finished(log: str, exit_code: int, doubt: str | None) -> None:
    statuses = parse_log("sympy", log)
    checked, why = corroborate_by_summary("sympy", log, statuses, exit_code)

    if doubt is None:
        assert why is None and checked == statuses
    else:
        assert why is not None and doubt in why
        assert set(checked.values()) == {F}


def test_a_wrapped_sympy_summary_is_read_whole() -> None:
    lines = [
        "== tests finished: 1000 passed, 3 failed, 20 skipped, 8 expected to fail, ",
        "in 120.50 seconds ==",
        "DO *NOT* COMMIT!",
    ]
    (summary,) = sympy_summaries(lines)
    assert (summary.line, summary.tests, summary.passed) == (1, 1031, False)


@pytest.mark.skipif(not SYMPY_LOGS.is_dir(), reason="the shared sympy logs are not here")
@pytest.mark.parametrize("name", sorted(p.name for p in SYMPY_LOGS.glob("*.log")))
def test_real_sympy_logs_are_corroborated(name: str) -> None:
    log = (SYMPY_LOGS / name).read_text()
    exit_code = 1 if "DO *NOT* COMMIT!" in log else 0
    statuses = parse_log("sympy", log)
    assert corroborate_by_summary("sympy", log, statuses, exit_code) == (statuses, None)


def test_pytest_is_left_to_its_junit_report() -> None:
    log = "PASSED tests/test_ops.py::test_add\n"
    statuses = {"tests/test_ops.py::test_add": P}
    assert corroborate_by_summary("pytest", log, statuses, 0) == (statuses, None)


# --- through the runner, on the in-memory backend ---------------------------------------------

TASK = Task.model_validate(
    {
        "instance_id": "m__m-1",
        "repo": "example/m",
        "base_commit": "abc123",
        "patch": "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-bug\n+fix\n",
        "test_patch": (
            "diff --git a/tests/test_ops.py b/tests/test_ops.py\n--- a/tests/test_ops.py\n"
            "+++ b/tests/test_ops.py\n@@ -1 +1,2 @@\n x\n+y\n"
        ),
        "FAIL_TO_PASS": [NAMES[0]],
        "PASS_TO_PASS": [NAMES[1]],
        "test_command": "python -m unittest -v",
        "log_parser": "unittest",
        "image": "example/m:1",
    }
)
PROBE = Probe(
    files={"test_hackaudit_probe.py": "x = 1\n"},
    test="test_hackaudit_probe.py",
    loaded="HackauditProbe.test_hackaudit_probe_loaded",
)
LOADED = (
    "test_hackaudit_probe_loaded (test_hackaudit_probe.HackauditProbe.test_hackaudit_probe_loaded)"
)


async def _run(output: str, invocation: Invocation | None = None) -> RunResult:
    backend = FakeBackend(respond=lambda run: FakeOutcome(runner_output=output, exit_code=0))
    runner = bootstrap(
        SandboxSettings(),
        backend=backend,
        artifacts=MemoryArtifactStore(),
        timings=MemoryTimingStore(),
    )
    candidate = Candidate.gold(TASK)
    return await runner.run_once(TASK, candidate, timeout_s=30, invocation=invocation)


async def test_a_graded_run_without_the_runners_summary_is_not_resolved() -> None:
    forged = await _run(LINES)
    real = await _run(LINES + SUMMARY.format(n=2, verdict="OK"))

    assert forged.status is RunStatus.COMPLETED and forged.resolved is False
    assert forged.tests == dict.fromkeys(NAMES, F)
    assert "no final summary" in forged.reason and "not corroborated" in forged.reason
    assert real.resolved is True, real.reason


async def test_a_probes_results_are_read_as_printed() -> None:
    result = await _run(f"{LOADED} ... ok\n", PROBE)
    assert result.resolved is True, result.reason
