"""The run protocol on a real engine: gold resolves, the empty patch does not, patches apply."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from sandbox_calc import (
    GOLD_PATCH,
    TEST_PATCH,
    TaskImage,
    calc_task,
    diff_candidate,
    files_candidate,
    ops_with,
    sandbox_settings,
)

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.handlers import handle_run_requested
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Candidate, RunPurpose, RunRequested, RunStatus, TestStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]


async def test_gold_resolves_and_empty_does_not(sandbox: Runner, calc_image: TaskImage) -> None:
    task = calc_task(calc_image)
    gold = await sandbox.run_once(task, Candidate.gold(task), timeout_s=60)
    empty = await sandbox.run_once(task, Candidate.empty(task), timeout_s=60)

    assert gold.status is RunStatus.COMPLETED, gold.reason
    assert gold.resolved is True, gold.log_tail
    assert gold.tests["tests/test_ops.py::OpsTest::test_add"] is TestStatus.PASSED
    assert gold.exit_code == 0
    assert empty.status is RunStatus.COMPLETED
    assert empty.resolved is False
    assert empty.tests["tests/test_ops.py::OpsTest::test_add"] is TestStatus.FAILED
    assert empty.tests["tests/test_ops.py::OpsTest::test_mul"] is TestStatus.PASSED
    assert gold.log_artifact is not None and Path(gold.log_artifact).is_file()


async def test_file_mapping_candidate_resolves(sandbox: Runner, calc_image: TaskImage) -> None:
    task = calc_task(calc_image)
    result = await sandbox.run_once(task, files_candidate(ops_with("", fixed=True)), timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True
    assert result.flags.files_outside_diff == ()


async def test_patch_that_does_not_apply_is_patch_failed(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    broken = GOLD_PATCH.replace("-    return a - b", "-    return a * b * c")
    result = await sandbox.run_once(calc_task(calc_image), diff_candidate(broken), timeout_s=60)

    assert result.status is RunStatus.PATCH_FAILED
    assert result.resolved is None
    assert "did not apply" in result.reason


async def test_fuzzy_patch_applies_with_patch_fuzz(sandbox: Runner, calc_image: TaskImage) -> None:
    # Context lines that no longer match exactly: git apply refuses, patch --fuzz accepts.
    fuzzy = GOLD_PATCH.replace(" def mul(a, b):", " def mul(x, y):")
    result = await sandbox.run_once(calc_task(calc_image), diff_candidate(fuzzy), timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True
    assert "patch --fuzz" in result.reason
    assert result.flags.files_outside_diff == ()


async def test_candidate_editing_tests_is_flagged_and_reverted(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    """The candidate rewrites the test file the test patch touches (restored before the test
    patch applies) and adds a conftest.py: both are flagged; the tests still grade the bug."""
    candidate = files_candidate(
        {
            "tests/test_ops.py": "def test_add():\n    pass\n",
            "tests/conftest.py": "",
            "setup.cfg": "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\n",
        }
    )
    result = await sandbox.run_once(calc_task(calc_image), candidate, timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is False
    assert result.flags.touched_test_files == ("tests/test_ops.py",)
    assert set(result.flags.touched_test_config) == {"tests/conftest.py", "setup.cfg"}


async def test_unittest_runner_grades_by_module(sandbox: Runner, calc_image: TaskImage) -> None:
    task = calc_task(
        calc_image,
        log_parser="unittest",
        FAIL_TO_PASS=["test_add (tests.test_ops.OpsTest.test_add)"],
        PASS_TO_PASS=["test_mul (tests.test_ops.OpsTest.test_mul)"],
    )
    gold = await sandbox.run_once(task, Candidate.gold(task), timeout_s=60)
    empty = await sandbox.run_once(task, Candidate.empty(task), timeout_s=60)

    assert gold.resolved is True, gold.log_tail
    assert empty.resolved is False
    assert empty.tests["test_add (tests.test_ops.OpsTest.test_add)"] is TestStatus.FAILED


async def test_swebench_style_image_runs_in_its_conda_env(conda_image: TaskImage) -> None:
    """/testbed owned by root and a conda `activate` script, as in `sweb.eval.*` images."""
    env_test = TEST_PATCH.replace(
        "+        self.assertEqual(add(-2, -3), -5)\n",
        "+        self.assertEqual(add(-2, -3), -5)\n+\n+    def test_env(self):\n"
        "+        import os\n"
        "+        self.assertEqual(os.environ.get('CONDA_DEFAULT_ENV'), 'testbed')\n",
    ).replace("@@ -9,3 +9,9 @@", "@@ -9,3 +9,13 @@")
    task = calc_task(
        conda_image,
        test_patch=env_test,
        FAIL_TO_PASS=[
            "tests/test_ops.py::OpsTest::test_add",
            "tests/test_ops.py::OpsTest::test_env",
        ],
    )
    runner = bootstrap(sandbox_settings(Path(tempfile.mkdtemp(prefix="hackaudit-conda-"))))
    await runner.start()
    try:
        gold = await runner.run_once(task, Candidate.gold(task), timeout_s=60)
    finally:
        await runner.close()

    assert gold.status is RunStatus.COMPLETED, gold.reason
    assert gold.resolved is True, gold.log_tail


async def test_gold_gate_repeats_and_reports_flakiness(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image)
    request = RunRequested(
        correlation_id="audit-1", task=task, purpose=RunPurpose.GOLD_GATE, test_patch=TEST_PATCH
    )
    completed = await handle_run_requested(request, sandbox)

    assert len(completed.results) == 3
    assert all(r.resolved for r in completed.results)
    assert completed.flaky is False
    assert completed.request_key == request.idempotency_key


async def test_gold_timing_sizes_later_timeouts(sandbox: Runner, calc_image: TaskImage) -> None:
    task = calc_task(calc_image, instance_id="calc__calc-timed")
    gold = RunRequested(correlation_id="audit-2", task=task, purpose=RunPurpose.GOLD)
    done = await handle_run_requested(gold, sandbox)
    duration = done.result.duration_s

    assert done.result.resolved is True
    assert 0 < duration < 30
    assert sandbox.timeout_for(task) == sandbox.timeouts.size(duration)
