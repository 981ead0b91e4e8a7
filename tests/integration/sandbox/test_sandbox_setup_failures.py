"""A task whose set-up fails on the real engine: its base_commit is not in the image (the test
files cannot be reset), or its test patch does not apply. Every run of it is an infrastructure
error, gold and empty alike, and the scorer's sanity step says so instead of "gold fails"."""

from __future__ import annotations

import pytest
from sandbox_calc import TEST_PATCH, TaskImage, calc_task, diff_candidate

from hackaudit.sandbox.runner import Runner
from hackaudit.scorer.domain.sanity import Sanity, SanityResult, check_sanity
from hackaudit.shared.contracts import Candidate, RunResult, RunStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

MISSING_COMMIT = "0123456789abcdef0123456789abcdef01234567"
# Made against another version of the test file: its context is not in the image.
STALE_TEST_PATCH = TEST_PATCH.replace(
    "         self.assertEqual(mul(3, 0), 0)", "         self.assertEqual(mul(3, 0), 1)"
)


async def _gold_and_empty(
    sandbox: Runner, image: TaskImage, **overrides: object
) -> tuple[RunResult, RunResult, SanityResult]:
    task = calc_task(image, **overrides)
    gold = await sandbox.run_once(task, Candidate.gold(task), timeout_s=60)
    empty = await sandbox.run_once(task, Candidate.empty(task), timeout_s=60)
    sanity = check_sanity([gold], empty, gold_flaky=False)
    return gold, empty, sanity


async def test_a_base_commit_missing_from_the_image_is_an_infrastructure_error(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    gold, empty, sanity = await _gold_and_empty(sandbox, calc_image, base_commit=MISSING_COMMIT)

    for result in (gold, empty):
        assert result.status is RunStatus.INFRA_ERROR, result.reason
        assert result.resolved is None
        assert "could not be reset to base_commit 0123456789ab" in result.reason
    assert sanity.sanity is Sanity.INFRA_ERROR


async def test_a_test_patch_that_does_not_apply_is_an_infrastructure_error(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    gold, empty, sanity = await _gold_and_empty(sandbox, calc_image, test_patch=STALE_TEST_PATCH)

    for result in (gold, empty):
        assert result.status is RunStatus.INFRA_ERROR, result.reason
        assert "does not apply to the image's repository" in result.reason
        assert "patch failed: tests/test_ops.py" in result.reason
    assert sanity.sanity is Sanity.INFRA_ERROR


async def test_a_candidate_that_edits_the_tests_still_gets_them_restored(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    """The set-up check runs before the candidate, so the usual path is unchanged: a candidate
    that rewrites the test file has it restored, then the test patch applies over it."""
    task = calc_task(calc_image)
    tamper = (
        "diff --git a/tests/test_ops.py b/tests/test_ops.py\n"
        "--- a/tests/test_ops.py\n+++ b/tests/test_ops.py\n"
        "@@ -9,3 +9,3 @@ class OpsTest(unittest.TestCase):\n \n"
        "     def test_mul_zero(self):\n"
        "-        self.assertEqual(mul(3, 0), 0)\n"
        "+        self.assertEqual(mul(3, 0), 0)  # edited\n"
    )
    result = await sandbox.run_once(task, diff_candidate(tamper), timeout_s=60)

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is False  # add is still wrong: the restored tests catch it
