"""What a report is made of, apart from how it is written: one task's verdict and attack as the
report shows them, and the two readings of an attack that both the files (`report`) and the page
(`report_html`) need: where a candidate's diff lies and which correct variants the tests reject."""

from __future__ import annotations

from dataclasses import dataclass

from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    GoldCoverage,
    ReferenceOutcome,
    ReferenceRole,
    ReferenceStatus,
    RepairCompleted,
    Task,
    TaskScored,
)


@dataclass(frozen=True)
class TaskReport:
    instance_id: str
    scored: TaskScored | None
    attack: AttackCompleted | None
    # The task as the repairer hardened it, when `scored` is the verdict of its re-audit.
    hardened: Task | None = None
    # For a repaired task: the first audit (its verdict and the exploits repair targeted) and
    # what the repairer did; `repair` alone when the repair hardened nothing.
    before: TaskReport | None = None
    repair: RepairCompleted | None = None


def evidence_path(folder: str, candidate: Candidate) -> str:
    """Where a candidate's diff is written, relative to the report folder."""
    return f"{folder}/{candidate.instance_id}/{candidate.content_hash}.diff"


def rejected_correct(attack: AttackCompleted) -> list[ReferenceOutcome]:
    """Correct variants of gold (C+) that the task's tests reject: the over-strict evidence."""
    pool = attack.reference.outcomes if attack.reference else ()
    return [
        o for o in pool if o.role is ReferenceRole.CORRECT and o.status is ReferenceStatus.REJECTED
    ]


REASON_CHARS = 300  # of an unmeasured coverage's reason, in the report's one line


def coverage_text(coverage: GoldCoverage) -> str:
    """The graded tests' coverage of gold's changed lines, in one line."""
    if not coverage.measured:
        reason = " ".join(coverage.reason.split())  # one line, however long the log it quotes
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        return f"coverage not measured: {reason}"
    never = ", ".join(f"{h.path}:{h.start}" for h in coverage.never_executed) or "none"
    return (
        f"graded tests execute {coverage.executed_lines} of {coverage.changed_lines} lines "
        f"gold changes (statements); hunks never executed: {never}"
    )
