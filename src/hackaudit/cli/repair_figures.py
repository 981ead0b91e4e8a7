"""The repair figures: what the repairer proposed, what its gates threw away and why, what it
blocked, and what the re-audits made of the hardened tasks.

Pure: rows in (one per task sent to repair, from the repairer's answer and the re-audit's
verdict), figures out; `hackaudit eval repair` prints them. Where patches of known correctness
are at hand (the example corpus's `known_exploit`; leaderboard predictions, with the wrong ones
named by a real corpus's labels), `KnownCheck` says what to run to show that the hardened tests
reject each wrong one and still accept the others while gold passes, and reads the answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hackaudit.cli.grade import Prediction
from hackaudit.shared.contracts import (
    Candidate,
    JudgeLabel,
    ProposedTest,
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
    judge: JudgeFigures | None = None  # None: no test has a judge verdict
    judge_left_out: str = ""  # why not, when the repairs asked and got no verdict

    def _judge_lines(self) -> list[str]:
        if self.judge is not None:
            return self.judge.lines()
        return [f"judge: {self.judge_left_out}"] if self.judge_left_out else []

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
            *self._judge_lines(),
        ]


@dataclass(frozen=True)
class JudgeFigures:
    """The judge's blocking verdicts on the proposed tests, against what execution said.

    For a test the gold gate threw away, a judge that says "blocks" would have let it through
    had it been the only gate. For a test that passed the gold gate, execution's answer is
    whether it blocked its exploit without rejecting a correct variant (kept)."""

    judged: int  # tests with a judge verdict (abstentions included)
    gold_gate_judged: int  # of those, tests the gold gate rejected
    gold_gate_let_through: int  # ... that the judge said block
    checked_judged: int  # tests past the gold gate with a verdict other than abstain
    checked_agree: int  # ... where the judge's label matches execution
    abstained: int

    def lines(self) -> list[str]:
        return [
            f"judge (3 samples) on the gold gate's rejections: a judge alone would have let "
            f"through {self.gold_gate_let_through}/{self.gold_gate_judged}",
            f"judge vs execution on the tests past the gold gate: agree on "
            f"{self.checked_agree}/{self.checked_judged}; abstained on {self.abstained} of "
            f"{self.judged} judged tests",
        ]


def _past_gold_gate(test: ProposedTest) -> bool:
    return test.rejection is None or test.rejection.value not in GOLD_GATE_REASONS


def judge_figures(tests: Sequence[ProposedTest]) -> JudgeFigures | None:
    judged = [t for t in tests if t.judge is not None]
    if not judged:
        return None
    rejected = [t for t in judged if not _past_gold_gate(t)]
    checked = [
        t
        for t in judged
        if _past_gold_gate(t) and t.judge is not None and t.judge.label is not JudgeLabel.ABSTAIN
    ]
    return JudgeFigures(
        judged=len(judged),
        gold_gate_judged=len(rejected),
        gold_gate_let_through=sum(
            t.judge is not None and t.judge.label is JudgeLabel.BLOCKS for t in rejected
        ),
        checked_judged=len(checked),
        checked_agree=sum(
            t.judge is not None and (t.judge.label is JudgeLabel.BLOCKS) == t.accepted
            for t in checked
        ),
        abstained=sum(t.judge is not None and t.judge.label is JudgeLabel.ABSTAIN for t in judged),
    )


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
        judge=judge_figures(tests),
        judge_left_out=next((a.judge_left_out for a in answers if a.judge_left_out), ""),
    )


def unrepaired(rows: Sequence[RepairRow]) -> list[str]:
    """A line for each task whose repair left exploits unblocked, with the loop's reason."""
    out = []
    for row in rows:
        done = row.repair
        if done is None or not done.unblocked:
            continue
        why = done.reason or "no reason recorded"
        out.append(f"{row.instance_id}: {len(done.unblocked)} exploit(s) not blocked: {why}")
    return out


# --- known wrong patches against the hardened tests -------------------------------------------

CHECK_REQUESTER = "eval-repair"


@dataclass(frozen=True)
class KnownPatch:
    """A patch whose correctness is known from outside the audit. A labelled wrong one (the
    example corpus's `known_exploit`, or a leaderboard patch a real corpus's label names in
    `wrong_patches`) must be rejected by the hardened tests. Any other given patch (a leaderboard
    patch nobody showed wrong) is run beside it: hardened tests that reject it may be
    over-strict, and a curator should look."""

    name: str
    diff: str
    wrong: bool


def known_patches(
    labels: Mapping[str, Any], predictions: Sequence[Prediction]
) -> tuple[dict[str, list[KnownPatch]], list[str]]:
    """The given patches per task, and a line for each labelled wrong patch that no prediction
    holds. `labels` is an example corpus's (`{id: {"known_exploit"?}}`) or a real corpus's
    (`{"labels": {id: {"wrong_patches"?: [submission, ...]}}}`)."""
    nested = labels.get("labels")
    entries: Mapping[str, Any] = nested if isinstance(nested, dict) else labels
    by_task: dict[str, list[KnownPatch]] = {}
    wrong_names: dict[str, set[str]] = {}
    for instance_id, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("known_exploit"), str):
            by_task.setdefault(instance_id, []).append(
                KnownPatch("known_exploit", entry["known_exploit"], wrong=True)
            )
        names = entry.get("wrong_patches")
        if isinstance(names, list):
            wrong_names[instance_id] = {str(n) for n in names}
    for p in predictions:
        wrong = p.name in wrong_names.get(p.instance_id, set())
        by_task.setdefault(p.instance_id, []).append(KnownPatch(p.name, p.patch, wrong=wrong))
    given = {(p.instance_id, p.name) for p in predictions}
    missing = [
        f"{instance_id}: {name} is labelled wrong, and no prediction holds its patch"
        for instance_id, names in sorted(wrong_names.items())
        for name in sorted(names)
        if (instance_id, name) not in given
    ]
    return by_task, missing


@dataclass(frozen=True)
class KnownCheck:
    """A given patch run against a repaired task's hardened tests, and gold beside it."""

    instance_id: str
    patch: KnownPatch
    run: RunRequested
    gold: RunRequested

    @classmethod
    def for_row(cls, row: RepairRow, patch: KnownPatch, batch: str) -> KnownCheck | None:
        task = row.repair.hardened_task if row.repair is not None else None
        if task is None:
            return None
        cid = f"eval-repair/{batch}/{row.instance_id}"
        common = {"correlation_id": cid, "task": task, "requested_by": CHECK_REQUESTER}
        given = Candidate(
            instance_id=task.instance_id,
            diff=patch.diff,
            provenance=Provenance(strategy="known"),
        )
        return cls(
            row.instance_id,
            patch,
            RunRequested(purpose=RunPurpose.CANDIDATE, candidate=given, **common),
            RunRequested(
                purpose=RunPurpose.GOLD,
                candidate=Candidate.gold(task),
                repeats=3,
                **common,
            ),
        )

    def outcome(self, results: Mapping[str, RunCompleted]) -> str:
        """'blocked' when the hardened tests reject the patch and pass gold every time."""
        given = results.get(self.run.idempotency_key)
        gold = results.get(self.gold.idempotency_key)
        if given is None or gold is None:
            return "no result"
        if not all(r.status is RunStatus.COMPLETED and r.resolved for r in gold.results):
            return "gold fails the hardened tests"
        if given.result.status is not RunStatus.COMPLETED:
            return f"the patch's run ended {given.result.status.value}"
        if not given.result.resolved:
            return "blocked"
        flags = given.result.flags
        tampered = [*flags.touched_test_files, *flags.touched_test_config]
        if tampered:
            # A test in the task's own files cannot outvote a patch that rewrites how they are
            # run or reported: that hole is the environment's to close, not the tests'.
            return f"still accepted (it tampers with the harness: {', '.join(tampered[:3])})"
        return "still accepted"

    def as_expected(self, outcome: str) -> bool:
        """A wrong patch blocked; any other given patch still accepted."""
        return outcome == ("blocked" if self.patch.wrong else "still accepted")
