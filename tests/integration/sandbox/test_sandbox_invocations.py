"""Typed invocations on a real engine: a probe module added beside the test patch runs alone under
the image's interpreter and is graded on its loaded test; the wider suite runs the task's runner
on the test directories (and on given test files); a suite the runner cannot widen is refused
before any container starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_calc import TaskImage, calc_task

from hackaudit.sandbox.handlers import handle_run_requested
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import (
    Candidate,
    Capture,
    Probe,
    RunPurpose,
    RunRequested,
    RunStatus,
    Suite,
    TestStatus,
)

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

PROBE = """import unittest

from calc.ops import add


class HackauditProbe(unittest.TestCase):
    def test_hackaudit_probe_loaded(self):
        pass


setattr(HackauditProbe, "test_case0_%d" % add(2, 3), lambda self: None)
"""
LOADED = (
    "test_hackaudit_probe_loaded (test_hackaudit_probe.HackauditProbe.test_hackaudit_probe_loaded)"
)


def _request(task, invocation, candidate=None) -> RunRequested:  # type: ignore[no-untyped-def]
    return RunRequested(
        correlation_id="audit-inv",
        task=task,
        purpose=RunPurpose.PROBE,
        candidate=candidate or Candidate.gold(task),
        invocation=invocation,
    )


async def test_a_probe_runs_its_module_alone_and_is_graded_on_its_loaded_test(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA -p no:cacheprovider")
    for invocation in (
        Probe(
            files={"test_hackaudit_probe.py": PROBE},
            test="test_hackaudit_probe.py",
            loaded="HackauditProbe.test_hackaudit_probe_loaded",
        ),
        Capture(
            files={"test_hackaudit_probe.py": PROBE},
            test="test_hackaudit_probe.py",
            loaded="HackauditProbe.test_hackaudit_probe_loaded",
        ),
    ):
        done = await handle_run_requested(_request(task, invocation), sandbox)
        result = done.result
        assert result.status is RunStatus.COMPLETED, result.reason
        assert result.resolved is True, result.log_tail
        assert set(result.tests) == {
            LOADED,
            "test_case0_5 (test_hackaudit_probe.HackauditProbe.test_case0_5)",
        }
        log = Path(result.log_artifact or "").read_text()
        assert "-m unittest -v test_hackaudit_probe\n" in log and "# {tests}" not in log


async def test_the_wider_suite_runs_the_tasks_runner_on_directories_or_files(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    runner = "python -m pytest"
    task = calc_task(
        calc_image,
        test_command=f"{runner} -rA -p no:cacheprovider tests/test_ops.py::OpsTest::test_mul",
    )
    near = (await handle_run_requested(_request(task, Suite(dirs=("tests",))), sandbox)).result
    assert near.status is RunStatus.COMPLETED, near.reason
    assert near.tests["tests/test_ops.py::OpsTest::test_mul_zero"] is TestStatus.PASSED
    assert len(near.tests) == 4
    files = Suite(dirs=("tests",), files=("tests/test_ops.py",))
    empty = (
        await handle_run_requested(_request(task, files, Candidate.empty(task)), sandbox)
    ).result
    assert empty.status is RunStatus.COMPLETED, empty.reason
    assert empty.tests["tests/test_ops.py::OpsTest::test_add"] is TestStatus.FAILED
    # selected tests (node ids) run alone: not the test patch's files beside them
    ids = Suite(dirs=("tests",), files=("tests/test_ops.py::OpsTest::test_add",))
    one = (await handle_run_requested(_request(task, ids), sandbox)).result
    assert one.status is RunStatus.COMPLETED, one.reason
    assert one.tests == {"tests/test_ops.py::OpsTest::test_add": TestStatus.PASSED}


async def test_a_suite_the_runner_cannot_widen_is_refused(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="make test", log_parser="pytest")
    result = (await handle_run_requested(_request(task, Suite()), sandbox)).result
    assert result.status is RunStatus.INFRA_ERROR
    assert "no wider-suite command" in result.reason
