"""A task that cannot be set up (test files not reset to base_commit, test patch not applying) is
an infrastructure error of the run, flagged by validation and by the scorer's sanity step, and
never graded as the patch's fault or merit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hackaudit.cli.validate import Validity, judge_validity
from hackaudit.sandbox.adapters.fake_backend import FakeOutcome
from hackaudit.scorer.domain.sanity import Sanity, check_sanity
from hackaudit.shared.contracts import Candidate, RunStatus
from tests.unit.sandbox.test_sandbox_runner import PASSING, TASK, TESTS, candidate, make_runner

RESET_LOG = "fatal: reference is not a tree: abc123\n"
CHECK_LOG = "Checking patch tests/test_m.py...\nerror: patch failed: tests/test_m.py:1\n"


RESET_FAILS = replace(PASSING, reset="failed", setup_log=RESET_LOG)
CHECK_FAILS = replace(PASSING, test_patch_check="failed", setup_log=CHECK_LOG)


@pytest.mark.parametrize("strict", [False, True])
async def test_a_failed_reset_is_an_infrastructure_error_naming_the_step(strict: bool) -> None:
    runner, _, _ = make_runner(lambda run: RESET_FAILS, strict_test_patch=strict)
    result = await runner.run_once(TASK, candidate())

    assert result.status is RunStatus.INFRA_ERROR
    assert result.resolved is None and result.tests == {}
    assert "could not be reset to base_commit abc123" in result.reason
    assert TASK.instance_id in result.reason
    assert "reference is not a tree" in result.reason  # the step's log tail
    assert "reference is not a tree" in result.log_tail


@pytest.mark.parametrize("strict", [False, True])
async def test_a_test_patch_that_does_not_apply_to_the_image_is_an_infrastructure_error(
    strict: bool,
) -> None:
    runner, _, _ = make_runner(lambda run: CHECK_FAILS, strict_test_patch=strict)
    result = await runner.run_once(TASK, candidate())

    assert result.status is RunStatus.INFRA_ERROR
    assert result.resolved is None
    assert "test patch of m__m-1 does not apply" in result.reason
    assert "patch failed: tests/test_m.py:1" in result.reason


async def test_a_proposed_test_patch_that_does_not_apply_is_the_proposals_fault() -> None:
    proposed = TESTS.replace("+y\n", "+z\n")
    runner, _, _ = make_runner(lambda run: CHECK_FAILS)
    result = await runner.run_once(TASK, Candidate.gold(TASK), test_patch=proposed)

    assert result.status is RunStatus.PATCH_FAILED
    assert "proposed test patch does not apply" in result.reason


async def test_test_files_the_candidate_keeps_from_being_restored_are_graded_unless_strict() -> (
    None
):
    outcome = replace(PASSING, restore="failed")
    lenient, _, _ = make_runner(lambda run: outcome)
    strict, _, _ = make_runner(lambda run: outcome, strict_test_patch=True)
    ran = await lenient.run_once(TASK, candidate())
    refused = await strict.run_once(TASK, candidate())

    assert ran.status is RunStatus.COMPLETED
    assert "could not all be restored" in ran.reason
    assert refused.status is RunStatus.PATCH_FAILED
    assert "restored after the candidate" in refused.reason


@pytest.mark.parametrize("outcome", [RESET_FAILS, CHECK_FAILS], ids=["reset", "test-patch"])
async def test_validation_and_sanity_report_it_as_infrastructure_not_gold_failing(
    outcome: FakeOutcome,
) -> None:
    runner, _, _ = make_runner(lambda run: outcome)
    gold = [await runner.run_once(TASK, Candidate.gold(TASK)) for _ in range(2)]
    empty = await runner.run_once(TASK, Candidate.empty(TASK))

    validity = judge_validity(TASK, empty, gold, gold_flaky=False)
    assert validity.validity is Validity.ERROR and validity.flagged
    assert validity.detail == gold[0].reason or validity.detail == empty.reason
    assert "infrastructure" in validity.detail

    sanity = check_sanity(gold, empty, gold_flaky=False)
    assert sanity.sanity is Sanity.INFRA_ERROR
    assert TASK.instance_id in sanity.reason
