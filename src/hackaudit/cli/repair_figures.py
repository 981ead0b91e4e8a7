"""The repair figures: what the repairer proposed, what its gates threw away and why, what it
blocked, and what the re-audits made of the hardened tasks.

Pure: rows in (one per task sent to repair, from the repairer's answer and the re-audit's
verdict), figures out; `hackaudit eval repair` prints them. Where a task's known wrong patch is
at hand (the example corpus's `known_exploit`), `KnownCheck` says what to run to show that the
hardened tests reject it while gold still passes, and reads the answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hackaudit.shared.contracts import (
    Candidate,
    Provenance,
    RepairCompleted,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunStatus,
    TaskScored,
    Verdict,
)

GOLD_GATE_REASONS = (
    "syntax",
    "not_collected",
    "import_error",
    "fails_on_gold",
    "flaky",
    "timeout",
)


@dataclass(frozen=True)
class RepairRow:
    instance_id: str
    before: TaskScored  # the verdict that sent the task to repair (FIX)
    repair: RepairCompleted | None  # None: no answer came back
    after: TaskScored | None  # the re-audit's verdict (None: nothing hardened, or unfinished)

    @property
    def outcome(self) -> str:
        if self.repair is None:
            return "no repair answer"
        if self.repair.hardened_task is None:
            return f"not repaired: {self.repair.reason or 'no test passed the gates'}"
        if self.after is None:
            return "re-audit did not finish"
        return f"{self.before.verdict.value} -> {self.after.verdict.value}"


@dataclass(frozen=True)
class RepairFigures:
    tasks: int  # sent to repair
    hardened: int
    proposed: int
    accepted: int
    rejections: dict[str, int]
    gold_gate_rejected: int  # rejected by the gold gate (any of its reasons)
    exploits_targeted: int
    exploits_blocked: int
    fix_to_keep: int
    reaudit_exploits: int  # exploits the re-audits' fresh attacks found
    iterations: int
    sandbox_minutes: float

    @property
    def gold_gate_rate(self) -> float | None:
        """Share of the proposed tests the gold gate (static checks included) threw away."""
        return self.gold_gate_rejected / self.proposed if self.proposed else None

    def lines(self) -> list[str]:
        rate = self.gold_gate_rate
        per_task = self.tasks or 1
        by_reason = ", ".join(f"{k} {v}" for k, v in sorted(self.rejections.items())) or "none"
        return [
            f"tasks sent to repair: {self.tasks}; hardened: {self.hardened}; "
            f"FIX -> KEEP after a fresh re-audit: {self.fix_to_keep}",
            f"proposed tests: {self.proposed}; accepted: {self.accepted}; rejected by reason: "
            f"{by_reason}",
            "gold gate rejection rate: "
            + (
                f"{self.gold_gate_rejected}/{self.proposed} = {rate:.1%}"
                if rate is not None
                else "–"
            ),
            f"exploits blocked: {self.exploits_blocked}/{self.exploits_targeted}; "
            f"exploits the re-audits found: {self.reaudit_exploits}",
            f"per repaired task: {self.iterations / per_task:.1f} iterations, "
            f"{self.sandbox_minutes / per_task:.2f} sandbox minutes",
        ]


def figures(rows: Sequence[RepairRow]) -> RepairFigures:
    answers = [r.repair for r in rows if r.repair is not None]
    tests = [t for a in answers for t in a.tests]
    reasons = Counter(t.rejection.value for t in tests if t.rejection is not None)
    return RepairFigures(
        tasks=len(rows),
        hardened=sum(a.hardened_task is not None for a in answers),
        proposed=len(tests),
        accepted=sum(t.accepted for t in tests),
        rejections=dict(reasons),
        gold_gate_rejected=sum(reasons.get(k, 0) for k in GOLD_GATE_REASONS),
        exploits_targeted=sum(len(a.blocked) + len(a.unblocked) for a in answers),
        exploits_blocked=sum(len(a.blocked) for a in answers),
        fix_to_keep=sum(
            r.after is not None
            and r.before.verdict is Verdict.FIX
            and r.after.verdict is Verdict.KEEP
            for r in rows
        ),
        reaudit_exploits=sum(len(r.after.exploits) for r in rows if r.after is not None),
        iterations=sum(a.iterations for a in answers),
        sandbox_minutes=sum(a.sandbox_seconds for a in answers) / 60,
    )


# --- known wrong patches against the hardened tests -------------------------------------------

CHECK_REQUESTER = "eval-repair"


@dataclass(frozen=True)
class KnownCheck:
    """A known wrong patch run against a repaired task's hardened tests, and gold beside it."""

    instance_id: str
    exploit: RunRequested
    gold: RunRequested

    @classmethod
    def for_row(cls, row: RepairRow, known_exploit: str, batch: str) -> KnownCheck | None:
        task = row.repair.hardened_task if row.repair is not None else None
        if task is None:
            return None
        cid = f"eval-repair/{batch}/{row.instance_id}"
        common = {"correlation_id": cid, "task": task, "requested_by": CHECK_REQUESTER}
        wrong = Candidate(
            instance_id=task.instance_id,
            diff=known_exploit,
            provenance=Provenance(strategy="known"),
        )
        return cls(
            row.instance_id,
            RunRequested(purpose=RunPurpose.CANDIDATE, candidate=wrong, **common),
            RunRequested(
                purpose=RunPurpose.GOLD,
                candidate=Candidate.gold(task),
                repeats=3,
                **common,
            ),
        )

    def outcome(self, results: Mapping[str, RunCompleted]) -> str:
        """'blocked' when the hardened tests reject the known patch and pass gold every time."""
        wrong = results.get(self.exploit.idempotency_key)
        gold = results.get(self.gold.idempotency_key)
        if wrong is None or gold is None:
            return "no result"
        if not all(r.status is RunStatus.COMPLETED and r.resolved for r in gold.results):
            return "gold fails the hardened tests"
        if wrong.result.status is not RunStatus.COMPLETED:
            return f"known patch run ended {wrong.result.status.value}"
        return "still accepted" if wrong.result.resolved else "blocked"
