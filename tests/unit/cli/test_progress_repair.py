"""The CLI's audit tracker waits for a FIX task's repair and re-audit before the audit is done,
and reports the task by its re-audit."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.cli.dataset import write_dataset
from hackaudit.cli.pipeline import task_reports
from hackaudit.cli.progress import AuditTracker
from hackaudit.cli.report import TaskReport
from hackaudit.shared import subjects
from hackaudit.shared.contracts import RepairCompleted, Task, TaskScored, Verdict
from hackaudit.shared.ingest import load_task_sources

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold", test_patch="t",
    FAIL_TO_PASS=["t::a"],
)  # fmt: skip


def _scored(cid: str, verdict: Verdict, exploits: tuple[str, ...] = ()) -> bytes:
    msg = TaskScored(
        correlation_id=cid, instance_id=TASK.instance_id, verdict=verdict, exploits=exploits
    )
    return msg.model_dump_json().encode()


def _repair(hardened: Task | None) -> bytes:
    done = RepairCompleted(
        correlation_id="a/1", instance_id=TASK.instance_id, hardened_task=hardened
    )
    return done.model_dump_json().encode()


def test_a_fix_verdict_waits_for_its_repair_and_re_audit() -> None:
    tracker = AuditTracker({"a/1": TASK.instance_id}, repair=True)
    tracker.observe(subjects.TASK_SCORED, _scored("a/1", Verdict.FIX, ("e1",)))
    assert not tracker.done
    tracker.observe(subjects.REPAIR_COMPLETED, _repair(TASK))
    assert not tracker.done  # hardened: its re-audit comes next
    tracker.observe(subjects.TASK_SCORED, _scored("a/1/repaired", Verdict.KEEP))
    assert tracker.done
    (item,) = task_reports(tracker, [TASK])
    assert item.scored is not None and item.scored.verdict is Verdict.KEEP
    assert item.hardened == TASK  # the task as the repair left it (here: unchanged)


def test_a_repair_that_hardened_nothing_ends_the_wait() -> None:
    tracker = AuditTracker({"a/1": TASK.instance_id}, repair=True)
    tracker.observe(subjects.TASK_SCORED, _scored("a/1", Verdict.FIX, ("e1",)))
    tracker.observe(subjects.REPAIR_COMPLETED, _repair(None))
    assert tracker.done
    (item,) = task_reports(tracker, [TASK])
    assert item.scored is not None and item.scored.verdict is Verdict.FIX


def test_without_repair_or_exploits_a_verdict_is_final() -> None:
    off = AuditTracker({"a/1": TASK.instance_id})
    off.observe(subjects.TASK_SCORED, _scored("a/1", Verdict.FIX, ("e1",)))
    assert off.done
    on = AuditTracker({"a/1": TASK.instance_id}, repair=True)
    on.observe(subjects.TASK_SCORED, _scored("a/1", Verdict.FIX))  # harness findings only
    assert on.done


def test_the_dataset_row_of_a_repaired_task_carries_the_hardened_tests(tmp_path: Path) -> None:
    row = TASK.swebench_row()  # SWE-bench's encoding: test lists as JSON strings
    (tmp_path / "tasks.jsonl").write_text(json.dumps(row) + "\n")
    _, sources = load_task_sources([tmp_path / "tasks.jsonl"])
    hardened = TASK.model_copy(
        update={"test_patch": "t+new", "fail_to_pass": ("t::a", "t::new"), "pass_to_pass": ()}
    )
    scored = TaskScored(
        correlation_id="a/1/repaired", instance_id=TASK.instance_id, verdict=Verdict.KEEP,
        repaired_from="a/1", previous_verdict=Verdict.FIX,
    )  # fmt: skip
    item = TaskReport(TASK.instance_id, scored, None, hardened)
    write_dataset(tmp_path / "out", [item], sources)
    (written,) = [
        json.loads(line)
        for line in (tmp_path / "out" / "dataset" / "keep.jsonl").read_text().splitlines()
    ]
    assert written["test_patch"] == "t+new"
    assert written["FAIL_TO_PASS"] == json.dumps(["t::a", "t::new"])
    assert written["hackaudit_previous_verdict"] == "FIX"
    assert Task.model_validate(written).fail_to_pass == ("t::a", "t::new")  # reads back
