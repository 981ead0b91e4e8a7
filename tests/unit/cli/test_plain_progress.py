"""Without a terminal (a log file, CI), an audit's progress is lines of text: each task's verdict
as it is scored, and a summary whenever a stage moves or a heartbeat has passed."""

from __future__ import annotations

from hackaudit.cli.progress import AuditTracker, PlainProgress, Stage, clock, done_text, eta_s
from hackaudit.shared import subjects
from hackaudit.shared.contracts import TaskScored, Verdict


def _scored(cid: str, instance: str, verdict: Verdict, eqs: float, hackable: bool) -> bytes:
    msg = TaskScored(
        correlation_id=cid, instance_id=instance, verdict=verdict, eqs=eqs, hackable=hackable
    )
    return msg.model_dump_json().encode()


def test_each_verdict_is_printed_once_and_the_summary_when_counts_move() -> None:
    tracker = AuditTracker({"a/1": "lib-1", "a/2": "lib-2"})
    plain = PlainProgress(heartbeat_s=120)
    assert plain.lines(tracker, 0) == [
        "[0:00] sanity 0/2 · attack 0/2 · scored 0/2 · sandbox runs 0"
        " · done 0/2 · 2 remaining · ETA –"
    ]
    assert plain.lines(tracker, 30) == []  # nothing moved, no heartbeat due

    tracker.observe(subjects.TASK_SCORED, _scored("a/1", "lib-1", Verdict.FIX, 0.5385, True))
    assert plain.lines(tracker, 65) == [
        "[1:05] scored lib-1: FIX (EQS 0.538) hackable",
        "[1:05] sanity 1/2 · attack 1/2 · scored 1/2 · sandbox runs 0"
        " · done 1/2 · 1 remaining · ETA 1:05",
    ]
    assert plain.lines(tracker, 70) == []  # the verdict is not repeated

    assert plain.lines(tracker, 65 + 120) == [
        "[3:05] sanity 1/2 · attack 1/2 · scored 1/2 · sandbox runs 0"
        " · done 1/2 · 1 remaining · ETA 3:05"
    ]  # the heartbeat


def test_a_re_audit_after_repair_gets_its_own_line() -> None:
    tracker = AuditTracker({"a/1": "lib-1"}, repair=True)
    plain = PlainProgress()
    tracker.observe(subjects.TASK_SCORED, _scored("a/1", "lib-1", Verdict.FIX, 0.6, True))
    tracker.observe(
        subjects.TASK_SCORED, _scored("a/1/repaired", "lib-1", Verdict.KEEP, 0.95, False)
    )
    lines = plain.lines(tracker, 10)
    assert "[0:10] scored lib-1: FIX (EQS 0.600) hackable" in lines
    assert "[0:10] re-audited after repair lib-1: KEEP (EQS 0.950)" in lines


def test_the_clock_shows_hours_from_an_hour() -> None:
    assert clock(59.9) == "0:59"
    assert clock(3725) == "1:02:05"


def test_the_time_to_each_verdict_is_kept_from_the_start_and_from_the_tasks_first_run() -> None:
    from hackaudit.shared.contracts import RunCompleted, RunPurpose, RunResult, RunStatus

    now = [100.0]
    tracker = AuditTracker({"a/1": "lib-1", "a/2": "lib-2"}, clock=lambda: now[0])
    run = RunCompleted(
        correlation_id="a/1",
        instance_id="lib-1",
        purpose=RunPurpose.GOLD,
        request_key="k",
        results=[RunResult(status=RunStatus.COMPLETED, duration_s=3.0)],
    )
    now[0] = 160.0
    tracker.observe(f"{subjects.RUN_COMPLETED}.lib-1", run.model_dump_json().encode())
    now[0] = 200.0
    tracker.observe(f"{subjects.RUN_COMPLETED}.lib-1", run.model_dump_json().encode())
    now[0] = 280.0
    tracker.observe(subjects.TASK_SCORED, _scored("a/1", "lib-1", Verdict.FIX, 0.5, True))
    now[0] = 400.0
    tracker.observe(subjects.TASK_SCORED, _scored("a/1", "lib-1", Verdict.FIX, 0.5, True))
    assert tracker.verdict_after("a/1") == 180.0  # the first verdict, from the start
    assert tracker.worked_on("a/1") == 120.0  # from its first run's result
    assert tracker.verdict_after("a/2") is None and tracker.worked_on("a/2") is None


def test_resumed_tasks_count_as_done_but_not_in_the_time_per_task() -> None:
    tracker = AuditTracker({"a/3": "lib-3", "a/4": "lib-4", "a/5": "lib-5"}, resumed=2)
    plain = PlainProgress()
    assert plain.lines(tracker, 0) == [
        "[0:00] sanity 2/5 · attack 2/5 · scored 2/5 · sandbox runs 0"
        " · done 2/5 · 3 remaining · ETA –"
    ]
    tracker.observe(subjects.TASK_SCORED, _scored("a/3", "lib-3", Verdict.KEEP, 0.9, False))
    # one task of this run in 100 s: 100 s per task for the 2 left, the resumed ones aside
    assert plain.lines(tracker, 100)[-1] == (
        "[1:40] sanity 3/5 · attack 3/5 · scored 3/5 · sandbox runs 0"
        " · done 3/5 · 2 remaining · ETA 3:20"
    )


def test_a_fix_waiting_for_its_repair_is_not_done_yet() -> None:
    tracker = AuditTracker({"a/1": "lib-1", "a/2": "lib-2"}, repair=True)
    tracker.observe(subjects.TASK_SCORED, _scored_with_exploit("a/1", "lib-1"))
    assert tracker.reached(Stage.SCORED) == 1
    assert done_text(tracker, 60) == "done 0/2 · 2 remaining · ETA –"


def test_the_eta_is_elapsed_over_finished_times_remaining() -> None:
    assert eta_s(300, 3, 7) == 700
    assert eta_s(300, 0, 7) is None  # nothing measured yet
    assert eta_s(300, 3, 0) == 0


def _scored_with_exploit(cid: str, instance: str) -> bytes:
    msg = TaskScored(
        correlation_id=cid,
        instance_id=instance,
        verdict=Verdict.FIX,
        eqs=0.5,
        hackable=True,
        exploits=("x.diff",),
    )
    return msg.model_dump_json().encode()
