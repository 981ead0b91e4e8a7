"""`audit --resume` skips a task only when its latest finished audit in the results store ran on
the same task, the same options and the same hackaudit version; what it reports for a skipped
task is what the tracker would have reported had the audit just run."""

from __future__ import annotations

import pytest

from hackaudit.cli.pipeline import task_reports
from hackaudit.cli.progress import REAUDIT_SUFFIX, AuditTracker
from hackaudit.cli.report_store import resumable
from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared import subjects
from hackaudit.shared.contracts import (
    AuditOptions,
    RepairCompleted,
    Task,
    TaskScored,
    Unverified,
    Verdict,
)

VERSION = "1.2.0"
OPTIONS = AuditOptions(candidates_per_round=1, rounds=1, gold_repeats=1, hackaudit_version=VERSION)
REPAIRING = OPTIONS.model_copy(update={"repair": True})


def _task(instance_id: str, **changed: object) -> Task:
    fields: dict[str, object] = {
        "instance_id": instance_id, "repo": "x/lib", "base_commit": "abc", "patch": "gold",
        "test_patch": "t", "FAIL_TO_PASS": ["t::a"],
    }  # fmt: skip
    return Task.model_validate(fields | changed)


A, B = _task("lib-1"), _task("lib-2")


def _scored(cid: str, task: Task, verdict: Verdict = Verdict.KEEP, **more: object) -> TaskScored:
    return TaskScored.model_validate(
        {"correlation_id": cid, "instance_id": task.instance_id, "verdict": verdict,
         "eqs": 0.8, "unverified": Unverified()} | more
    )  # fmt: skip


def _state(
    cid: str,
    task: Task = A,
    options: AuditOptions = OPTIONS,
    scored: bool | Verdict = True,
    **more: object,
) -> AuditState:
    verdict = scored if isinstance(scored, Verdict) else Verdict.KEEP
    exploits = ("e.diff",) if verdict is Verdict.FIX else ()
    return AuditState.model_validate(
        {
            "correlation_id": cid, "task": task, "options": options,
            "stage": Stage.SCORED if scored else Stage.ATTACK,
            "scored": _scored(cid, task, verdict, exploits=exploits) if scored else None,
        } | more
    )  # fmt: skip


def _resumed(states: list[AuditState], tasks: list[Task], options: AuditOptions) -> list[str]:
    return sorted(resumable(states, tasks, options))


@pytest.mark.parametrize(
    ("states", "options", "resumed"),
    [
        ([_state("r1/lib-1"), _state("r1/lib-2", B)], OPTIONS, ["lib-1", "lib-2"]),
        ([_state("r1/lib-1", scored=False)], OPTIONS, []),  # stopped before its verdict
        ([_state("r1/lib-1", _task("lib-1", test_patch="t2"))], OPTIONS, []),  # other inputs
        ([_state("r1/lib-1")], OPTIONS.model_copy(update={"rounds": 2}), []),  # other budget
        ([_state("r1/lib-1")], OPTIONS.model_copy(update={"judge": True}), []),
        ([_state("r1/lib-1")], OPTIONS.model_copy(update={"stop_when_hackable": True}), []),
        ([_state("r1/lib-1")], OPTIONS.model_copy(update={"hackaudit_version": "1.3.0"}), []),
        # stored by a hackaudit that recorded no version: never matches
        (
            [_state("r1/lib-1", options=OPTIONS.model_copy(update={"hackaudit_version": ""}))],
            OPTIONS.model_copy(update={"hackaudit_version": ""}),
            [],
        ),
        # the latest finished audit decides: an older match does not count ...
        ([_state("r1/lib-1"), _state("r2/lib-1", options=REPAIRING)], OPTIONS, []),
        # ... and one stopped after it does not hide it
        ([_state("r1/lib-1"), _state("r2/lib-1", scored=False)], OPTIONS, ["lib-1"]),
        # a task of the store that is not among the inputs is not resumed
        ([_state("r1/lib-3", _task("lib-3"))], OPTIONS, []),
    ],
)
def test_which_stored_audits_match_which_tasks(
    states: list[AuditState], options: AuditOptions, resumed: list[str]
) -> None:
    assert _resumed(states, [A, B], options) == resumed


def test_with_repair_a_fix_is_finished_once_repaired_and_re_audited() -> None:
    fix = _state("r1/lib-1", options=REPAIRING, scored=Verdict.FIX)
    assert _resumed([fix], [A], REPAIRING) == []  # waits for its repair
    hardened = _task("lib-1", test_patch="t+new")
    repaired = fix.model_copy(update={"repair": _repair("r1/lib-1", hardened)})
    assert _resumed([repaired], [A], REPAIRING) == []  # waits for its re-audit
    reaudit = _state("r1/lib-1" + REAUDIT_SUFFIX, hardened, REPAIRING, repaired_from="r1/lib-1")
    assert _resumed([repaired, reaudit], [A], REPAIRING) == ["lib-1"]
    # a repair that hardened nothing: the FIX is final
    unhardened = fix.model_copy(update={"repair": _repair("r1/lib-1", None)})
    assert _resumed([unhardened], [A], REPAIRING) == ["lib-1"]
    # the re-audit is not a first audit of the hardened task's inputs
    assert _resumed([repaired, reaudit], [hardened], REPAIRING) == []


def test_a_resumed_task_is_reported_as_the_tracker_reports_it_after_running() -> None:
    """The report of a resumed audit equals the uninterrupted one's: same items."""
    hardened = _task("lib-1", test_patch="t+new")
    fix = _state("r1/lib-1", options=REPAIRING, scored=Verdict.FIX)
    repair = _repair("r1/lib-1", hardened)
    first = fix.model_copy(update={"repair": repair})
    reaudit = _state("r1/lib-1" + REAUDIT_SUFFIX, hardened, REPAIRING, repaired_from="r1/lib-1")
    keep = _state("r1/lib-2", B, REPAIRING)

    tracker = AuditTracker({"r1/lib-1": "lib-1", "r1/lib-2": "lib-2"}, repair=True)
    for subject, message in [
        (subjects.TASK_SCORED, first.scored),
        (subjects.REPAIR_COMPLETED, repair),
        (subjects.TASK_SCORED, reaudit.scored),
        (subjects.TASK_SCORED, keep.scored),
    ]:
        assert message is not None
        tracker.observe(subject, message.model_dump_json().encode())
    assert tracker.done
    ran = task_reports(tracker, [A, B])

    resumed = resumable([first, reaudit, keep], [A, B], REPAIRING)
    assert task_reports(AuditTracker({}, resumed=2), [A, B], resumed) == ran
    assert ran[0].hardened == hardened and ran[0].before is not None


def _repair(cid: str, hardened: Task | None) -> RepairCompleted:
    return RepairCompleted(correlation_id=cid, instance_id="lib-1", hardened_task=hardened)


def test_a_state_stored_before_the_version_was_recorded_is_read_and_never_resumed() -> None:
    stored = _state("r1/lib-1").model_dump(mode="json")
    del stored["options"]["hackaudit_version"]
    old = AuditState.model_validate(stored)
    assert old.options.hackaudit_version == ""
    assert _resumed([old], [A], OPTIONS) == []


def test_the_image_built_for_a_task_that_names_none_does_not_make_it_another_task() -> None:
    built = _state("r1/lib-1", _task("lib-1", image="hackaudit-env/lib:abc"))
    assert _resumed([built], [A], OPTIONS) == ["lib-1"]
    named = _task("lib-1", image="lib:2")
    assert _resumed([built], [named], OPTIONS) == []
    assert _resumed([_state("r1/lib-1", named)], [named], OPTIONS) == ["lib-1"]
