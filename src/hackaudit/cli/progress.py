"""Follows an audit on the bus: every event of the audit's tasks moves its task along the stages.

The tracker is pure (events in, counts out); `watch` feeds it from a plain NATS subscription to
every subject, which sees what the services publish without taking anything from their queues.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from math import inf

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from pydantic import ValidationError

from hackaudit.cli.report_model import verdict_text
from hackaudit.shared import subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    RepairCompleted,
    RunCompleted,
    RunPurpose,
    TaskScored,
    Verdict,
)

REAUDIT_SUFFIX = "/repaired"  # the scorer's id for the re-audit of a repaired task


class Stage(IntEnum):
    INGESTED = 0
    SANITY = 1
    ATTACK = 2
    SCORED = 3


STAGE_LABELS = {
    Stage.SANITY: "sanity (gold ×N, empty patch)",
    Stage.ATTACK: "attack (candidates run in the sandbox)",
    Stage.SCORED: "scored",
}


@dataclass
class AuditTracker:
    """Where each task of one audit is, from the events seen so far."""

    correlation_ids: dict[str, str]  # correlation id -> instance id
    stage: dict[str, Stage] = field(default_factory=dict)
    runs: Counter[str] = field(default_factory=Counter)
    candidate_runs: int = 0
    scored: dict[str, TaskScored] = field(default_factory=dict)
    attacks: dict[str, AttackCompleted] = field(default_factory=dict)
    attack_seconds: dict[str, float] = field(default_factory=dict)  # sandbox time of the attack
    # With repair on, a FIX verdict with task exploits is not final until its repair is in and,
    # when it hardened the task, the re-audit is scored (keyed by the original correlation id).
    repair: bool = False
    repairs: dict[str, RepairCompleted] = field(default_factory=dict)
    repaired: dict[str, TaskScored] = field(default_factory=dict)
    reaudit_attacks: dict[str, AttackCompleted] = field(default_factory=dict)
    # Tasks of the audit scored by an earlier run (`audit --resume`) and not published again:
    # done from the start, at every stage, and in no time per task; the pace the earlier runs
    # kept on them, when the store knows it, counts toward the ETA (`eta_s`).
    resumed: int = 0
    earlier: Pace | None = None
    # When (by `clock`, seconds) the tracker started, each task's first run came back and its
    # verdict arrived: the time to each verdict, and how long the task was being worked on.
    clock: Callable[[], float] = time.monotonic
    started_at: float = 0.0
    first_run_at: dict[str, float] = field(default_factory=dict)
    scored_at: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.stage = dict.fromkeys(self.correlation_ids, Stage.INGESTED)
        self.started_at = self.clock()

    def verdict_after(self, correlation_id: str) -> float | None:
        """Seconds from the start of the audit to the task's first verdict (None: none yet)."""
        at = self.scored_at.get(correlation_id)
        return None if at is None else at - self.started_at

    def worked_on(self, correlation_id: str) -> float | None:
        """Seconds from the task's first run's result to its first verdict (None: none yet)."""
        at, first = self.scored_at.get(correlation_id), self.first_run_at.get(correlation_id)
        return None if at is None or first is None else at - first

    def _advance(self, correlation_id: str, stage: Stage) -> None:
        if correlation_id in self.stage and self.stage[correlation_id] < stage:
            self.stage[correlation_id] = stage

    def observe(self, subject: str, data: bytes) -> None:
        try:
            self._observe(subject, data)
        except ValidationError:
            return  # not ours to judge: the services dead-letter what they cannot read

    def _reaudit(self, correlation_id: str) -> str | None:
        """The original audit's id when `correlation_id` is the re-audit of one of ours."""
        base = correlation_id.removesuffix(REAUDIT_SUFFIX)
        return base if base != correlation_id and base in self.stage else None

    def _observe_repair(self, subject: str, data: bytes) -> None:
        if subject == subjects.REPAIR_COMPLETED:
            done = RepairCompleted.model_validate_json(data)
            if done.correlation_id in self.stage:
                self.repairs[done.correlation_id] = done
        elif subject == subjects.TASK_SCORED:
            scored = TaskScored.model_validate_json(data)
            base = self._reaudit(scored.correlation_id)
            if base is not None:
                self.repaired[base] = scored
        elif subject == subjects.ATTACK_COMPLETED:
            attack = AttackCompleted.model_validate_json(data)
            base = self._reaudit(attack.correlation_id)
            if base is not None:
                self.reaudit_attacks[base] = attack

    def _observe(self, subject: str, data: bytes) -> None:
        if subject in (subjects.REPAIR_COMPLETED, subjects.TASK_SCORED, subjects.ATTACK_COMPLETED):
            self._observe_repair(subject, data)
        if subject.startswith(subjects.RUN_COMPLETED + "."):
            run = RunCompleted.model_validate_json(data)
            if run.correlation_id not in self.stage:
                return
            self.runs[run.purpose.value] += 1
            self.first_run_at.setdefault(run.correlation_id, self.clock())
            if run.purpose is RunPurpose.CANDIDATE:
                self.candidate_runs += 1
            if run.requested_by == "attacker":
                spent = sum(r.duration_s for r in run.results)
                cid = run.correlation_id
                self.attack_seconds[cid] = self.attack_seconds.get(cid, 0.0) + spent
            self._advance(run.correlation_id, Stage.SANITY)
        elif subject == subjects.ATTACK_REQUESTED:
            self._advance(AttackRequested.model_validate_json(data).correlation_id, Stage.ATTACK)
        elif subject == subjects.ATTACK_COMPLETED:
            attack = AttackCompleted.model_validate_json(data)
            if attack.correlation_id in self.stage:
                self.attacks[attack.correlation_id] = attack
                self._advance(attack.correlation_id, Stage.ATTACK)
        elif subject == subjects.TASK_SCORED:
            scored = TaskScored.model_validate_json(data)
            if scored.correlation_id in self.stage:
                self.scored[scored.correlation_id] = scored
                self.scored_at.setdefault(scored.correlation_id, self.clock())
                self._advance(scored.correlation_id, Stage.SCORED)

    @property
    def total(self) -> int:
        """The audit's tasks: those published by this run and those resumed."""
        return len(self.correlation_ids) + self.resumed

    def reached(self, stage: Stage) -> int:
        """Tasks at `stage` or past it (resumed ones are past every stage)."""
        return self.resumed + sum(1 for s in self.stage.values() if s >= stage)

    def finished(self) -> int:
        """Tasks published by this run whose verdict is final (resumed ones not counted)."""
        return sum(1 for cid in self.scored if not self.repair_pending(cid))

    def repair_pending(self, correlation_id: str) -> bool:
        """Whether the task's verdict still waits for its repair or its re-audit."""
        scored = self.scored.get(correlation_id)
        if not self.repair or scored is None:
            return False
        if scored.verdict is not Verdict.FIX or not scored.exploits:
            return False
        done = self.repairs.get(correlation_id)
        if done is None:
            return True
        return done.hardened_task is not None and correlation_id not in self.repaired

    @property
    def done(self) -> bool:
        if len(self.scored) != len(self.correlation_ids):
            return False
        return not any(self.repair_pending(cid) for cid in self.scored)


HEARTBEAT_S = 120.0  # a summary line at least this often, even when nothing moved
STAGE_NAMES = {Stage.SANITY: "sanity", Stage.ATTACK: "attack", Stage.SCORED: "scored"}


def clock(seconds: float) -> str:
    """Elapsed time as `m:ss`, or `h:mm:ss` from an hour."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass(frozen=True)
class Pace:
    """The pace earlier runs kept on an audit's resumed tasks: `seconds` of wall time during
    which at least one of those `tasks` was being audited (`earlier_pace`)."""

    seconds: float
    tasks: int


def merged_spans(
    spans: Iterable[tuple[datetime, datetime]], gap_s: float = 0.0
) -> list[tuple[datetime, datetime]]:
    """Time spans joined where they overlap or where less than `gap_s` lies between them."""
    merged: list[tuple[datetime, datetime]] = []
    for start, end in sorted(spans):
        if merged and (start - merged[-1][1]).total_seconds() <= gap_s:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def earlier_pace(spans: Iterable[tuple[datetime, datetime]]) -> Pace | None:
    """The pace of audits that ran from each span's start to its verdict: the length of the
    spans' union over their number. Tasks in flight together count their shared time once, and
    the time between runs (stopped, resumed days later) counts for nothing. None without
    spans."""
    spans = list(spans)
    if not spans:
        return None
    seconds = sum((end - start).total_seconds() for start, end in merged_spans(spans))
    return Pace(seconds, len(spans))


def eta_s(
    elapsed_s: float, finished: int, remaining: int, earlier: Pace | None = None
) -> float | None:
    """Seconds until the `remaining` tasks are done, at the pace measured so far:
    `elapsed_s / finished × remaining`, where `elapsed_s` is the time since this run published
    its tasks and `finished` the tasks it brought to a final verdict in that time. The time per
    task is measured with the concurrency as it is: several tasks in flight at once each take
    longer than that, but finish together, so it is the audit's throughput, not one task's
    duration. Early on it leans on the few tasks done (the quick ones, often: a DROP finishes
    at sanity). A resumed run adds the `earlier` runs' time and tasks to its own, so it has an
    ETA from its start, and its own pace weighs more as its tasks finish. None until a task is
    done, in this run or an earlier one."""
    seconds, tasks = elapsed_s, finished
    if earlier is not None:
        seconds, tasks = seconds + earlier.seconds, tasks + earlier.tasks
    if tasks <= 0:
        return None
    return seconds / tasks * max(remaining, 0)


def done_text(tracker: AuditTracker, elapsed_s: float) -> str:
    """`done 3/10 · 7 remaining · ETA 12:40` (`ETA –` until a task is finished, in this run or,
    when the tracker knows their pace, an earlier one)."""
    finished = tracker.finished()
    remaining = len(tracker.correlation_ids) - finished
    eta = eta_s(elapsed_s, finished, remaining, tracker.earlier)
    done = f"done {finished + tracker.resumed}/{tracker.total}"
    return f"{done} · {remaining} remaining · ETA {'–' if eta is None else clock(eta)}"


@dataclass
class PlainProgress:
    """An audit's progress as lines of text, for a console that is not a terminal (a log file,
    CI): one line per task as it is scored (and re-scored after its repair), and a summary line
    (the stage counts, the sandbox runs, the tasks done and remaining, the ETA: `done_text`)
    whenever a count moves, or after `heartbeat_s` without one."""

    heartbeat_s: float = HEARTBEAT_S
    _counts: tuple[int, ...] | None = None
    _last_at: float = -inf
    _reported: set[str] = field(default_factory=set)

    def lines(self, tracker: AuditTracker, elapsed_s: float) -> list[str]:
        stamp = f"[{clock(elapsed_s)}]"
        out = [f"{stamp} {line}" for line in self._verdicts(tracker)]
        total = tracker.total
        stages = tuple(tracker.reached(stage) for stage in STAGE_NAMES)
        counts = (*stages, tracker.finished())
        if counts != self._counts or elapsed_s - self._last_at >= self.heartbeat_s:
            self._counts, self._last_at = counts, elapsed_s
            parts = [
                f"{name} {n}/{total}" for name, n in zip(STAGE_NAMES.values(), stages, strict=True)
            ]
            parts.append(f"sandbox runs {sum(tracker.runs.values())}")
            parts.append(done_text(tracker, elapsed_s))
            out.append(f"{stamp} " + " · ".join(parts))
        return out

    def _verdicts(self, tracker: AuditTracker) -> list[str]:
        out: list[str] = []
        for key, scored, prefix in [
            *((cid, s, "scored") for cid, s in tracker.scored.items()),
            *(
                (cid + REAUDIT_SUFFIX, s, "re-audited after repair")
                for cid, s in tracker.repaired.items()
            ),
        ]:
            if key in self._reported:
                continue
            self._reported.add(key)
            # a KEEP with caveats is never shown bare: what it leaves unverified follows it
            out.append(f"{prefix} {scored.instance_id}: {verdict_text(scored, hackable=True)}")
        return out


async def watch(nc: Client, on_event: Callable[[str, bytes], None]) -> Subscription:
    async def handler(msg: Msg) -> None:
        on_event(msg.subject, msg.data)

    return await nc.subscribe(subjects.EVERYTHING, cb=handler)
