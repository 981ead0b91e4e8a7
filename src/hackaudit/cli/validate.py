"""Task validation, SWE-bench's check: with only the test patch the FAIL_TO_PASS tests fail; with
the gold patch every FAIL_TO_PASS and PASS_TO_PASS test passes, every time it is run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from hackaudit.shared.contracts import (
    Candidate,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

REQUESTER = "validate"


class Validity(StrEnum):
    VALID = "valid"
    BROKEN = "broken"  # gold is not resolved
    FLAKY = "flaky"  # gold is resolved in some runs only
    EMPTY_PASSES = "empty-passes"  # FAIL_TO_PASS already pass without any fix
    ERROR = "error"  # the runs could not be made (infrastructure)


# What fails validation: every verdict but VALID, as the harness would not take such a task (an
# ERROR one could not be validated at all).
FLAGGED = {Validity.BROKEN, Validity.FLAKY, Validity.EMPTY_PASSES, Validity.ERROR}


@dataclass(frozen=True)
class TaskValidity:
    instance_id: str
    validity: Validity
    detail: str

    @property
    def flagged(self) -> bool:
        return self.validity in FLAGGED


def _not_passing(task_tests: Sequence[str], result: RunResult, limit: int = 4) -> str:
    bad = [t for t in task_tests if result.tests.get(t) is not TestStatus.PASSED]
    more = f" (+{len(bad) - limit} more)" if len(bad) > limit else ""
    return ", ".join(bad[:limit]) + more


def judge_validity(
    task: Task, before: RunResult, gold: Sequence[RunResult], *, gold_flaky: bool
) -> TaskValidity:
    infra = [r for r in [before, *gold] if r.status is RunStatus.INFRA_ERROR]
    if infra:
        return TaskValidity(task.instance_id, Validity.ERROR, infra[0].reason)
    graded = [*task.fail_to_pass, *task.pass_to_pass]
    resolved = [r for r in gold if r.resolved]
    if not resolved:
        first = gold[0]
        why = (
            first.reason if first.status is not RunStatus.COMPLETED else _not_passing(graded, first)
        )
        return TaskValidity(
            task.instance_id, Validity.BROKEN, f"gold not resolved ({first.status.value}): {why}"
        )
    if len(resolved) < len(gold) or gold_flaky:
        failing = next((r for r in gold if not r.resolved), None)
        why = f"; e.g. {_not_passing(graded, failing)}" if failing is not None else ""
        return TaskValidity(
            task.instance_id,
            Validity.FLAKY,
            f"gold resolved in {len(resolved)} of {len(gold)} runs{why}",
        )
    passing_before = [t for t in task.fail_to_pass if before.tests.get(t) is TestStatus.PASSED]
    if passing_before and len(passing_before) == len(task.fail_to_pass):
        return TaskValidity(
            task.instance_id,
            Validity.EMPTY_PASSES,
            "every FAIL_TO_PASS test passes without a fix: the tests accept the unfixed code",
        )
    detail = f"gold resolved in {len(gold)} of {len(gold)} runs; FAIL_TO_PASS fail without it"
    if passing_before:
        detail += f" (except {', '.join(passing_before)})"
    return TaskValidity(task.instance_id, Validity.VALID, detail)


@dataclass(frozen=True)
class ValidationRuns:
    """The two orders that validate one task: without a fix, and gold `repeats` times."""

    task: Task
    before: RunRequested
    gold: RunRequested

    @classmethod
    def for_task(cls, task: Task, *, repeats: int, batch: str) -> ValidationRuns:
        cid = f"validate-{batch}/{task.instance_id}"
        common = {"correlation_id": cid, "task": task, "requested_by": REQUESTER}
        return cls(
            task=task,
            before=RunRequested(
                purpose=RunPurpose.EMPTY, candidate=Candidate.empty(task), **common
            ),
            gold=RunRequested(
                purpose=RunPurpose.GOLD, candidate=Candidate.gold(task), repeats=repeats, **common
            ),
        )

    def judge(self, results: dict[str, RunCompleted]) -> TaskValidity:
        before = results.get(self.before.idempotency_key)
        gold = results.get(self.gold.idempotency_key)
        if before is None or gold is None:
            return TaskValidity(
                self.task.instance_id, Validity.ERROR, "the sandbox did not answer in time"
            )
        return judge_validity(self.task, before.result, gold.results, gold_flaky=gold.flaky)
