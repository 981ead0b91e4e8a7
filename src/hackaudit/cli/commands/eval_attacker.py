"""`hackaudit eval attacker`: the labelled tasks audited (without repair) and the attacker's
recall on hackable tasks, its false alarms on robust ones, and what each task cost."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import median

from rich.table import Table

from hackaudit.cli import evaluate, services, verdicts_eval
from hackaudit.cli.commands import audit_run
from hackaudit.cli.commands.audit_run import LabelledAudit
from hackaudit.cli.commands.eval_verdicts import print_confusion
from hackaudit.cli.commands.options import (
    LABELS,
    ExampleTaskPaths,
    GroundTruth,
    StopWhenHackable,
    expands,
)
from hackaudit.cli.commands.terminal import console
from hackaudit.cli.progress import AuditTracker
from hackaudit.cli.report_model import caveats
from hackaudit.shared.contracts import AttackCompleted, TaskScored


@expands(LabelledAudit)
def eval_attacker(
    tasks: ExampleTaskPaths = None,
    labels: GroundTruth = LABELS,
    run: LabelledAudit = audit_run.DEFAULTS,
    stop_when_hackable: StopWhenHackable = False,
) -> None:
    """Audit the labelled tasks and print the attacker's confusion table: recall on hackable
    tasks, false alarms on robust ones, and what each task cost."""
    truth = evaluate.load_labels(labels)
    ingested = run.ingest(tasks)
    builders, _ = services.available()
    # The attack and the first verdict are what is measured here; repair has `eval repair`.
    builders.pop("repairer", None)
    tracker, audited = run.run(ingested.tasks, builders, stop_when_hackable=stop_when_hackable)
    rows = {}
    for cid, instance_id in tracker.correlation_ids.items():
        if instance_id in truth:
            rows[instance_id] = evaluate.evaluate_task(
                instance_id, truth[instance_id], tracker.scored.get(cid),
                tracker.attacks.get(cid), tracker.attack_seconds.get(cid, 0.0),
            )  # fmt: skip
    timing = _timing(tracker)
    table = Table(title="attacker against the labels")
    for column in ("task", "label", "outcome", "exploits by", "harness", "candidates",
                   "sandbox min", "first exploit at", "verdict at", "worked on"):  # fmt: skip
        table.add_column(column)
    for r in sorted(rows.values(), key=lambda r: (r.label.label, r.instance_id)):
        at, worked = timing.get(r.instance_id, (None, None))
        table.add_row(
            r.instance_id, r.label.label + (f" ({r.label.how})" if r.label.how else ""),
            r.outcome, ", ".join(r.exploit_strategies) or "–", str(r.harness_exploits),
            str(r.candidates), f"{r.sandbox_s / 60:.2f}",
            "–" if r.first_exploit_at is None else f"candidate {r.first_exploit_at}",
            _minutes(at), _minutes(worked),
        )  # fmt: skip
    console.print(table)
    _print_timing(timing, len(tracker.correlation_ids))
    for r in sorted(rows.values(), key=lambda r: r.instance_id):
        if r.budget_note:
            console.print(f"{r.instance_id}: budget not spent in full: {r.budget_note}")
        if r.unverified:
            console.print(
                f"{r.instance_id}: {r.verdict} — not verified: {', '.join(r.unverified)}",
                highlight=False,
                markup=False,
            )
    _print_spending(tracker.attacks.values())
    _print_accuracy(evaluate.accuracy(rows))
    print_confusion(verdicts_eval.rows_for(truth, _found(tracker)))
    run.write_report(tracker, audited)


KINDS = ("grade", "probe", "suite", "coverage")


def _timing(tracker: AuditTracker) -> dict[str, tuple[float | None, float | None]]:
    """Per task: the seconds to its verdict from the audit's start, and from its first run's
    result (how long it was worked on, sharing the sandbox with the others)."""
    return {
        instance_id: (tracker.verdict_after(cid), tracker.worked_on(cid))
        for cid, instance_id in tracker.correlation_ids.items()
    }


def _minutes(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds / 60:.1f} min"


def _print_timing(timing: dict[str, tuple[float | None, float | None]], tasks: int) -> None:
    """The median time to a verdict, from the audit's start and from each task's first run."""
    at = [a for a, _ in timing.values() if a is not None]
    worked = [w for _, w in timing.values() if w is not None]
    if not at:
        return
    console.print(
        f"time to a verdict ({len(at)} of {tasks} tasks): median {median(at) / 60:.1f} min from"
        f" the audit's start, median {median(worked) / 60:.1f} min from the task's first run's"
        " result"
        if worked
        else f"time to a verdict ({len(at)} of {tasks} tasks): median {median(at) / 60:.1f} min",
        highlight=False,
    )


def _print_spending(attacks: Iterable[AttackCompleted]) -> None:
    """Each attack's sandbox-seconds by run kind, and the total: where the time goes."""
    totals: dict[str, float] = {}
    waited = 0.0
    for attack in sorted(attacks, key=lambda a: a.instance_id):
        spent = attack.spent.by_kind if attack.spent else {}
        if not spent or attack.spent is None:
            continue
        for kind, seconds in spent.items():
            totals[kind] = totals.get(kind, 0.0) + seconds
        waited += attack.spent.background_s
        console.print(
            f"{attack.instance_id}: sandbox-s by run kind: {_kinds(spent)}"
            + _background(attack.spent.background_s)
        )
    if totals:
        console.print(f"all tasks: sandbox-s by run kind: {_kinds(totals)}{_background(waited)}")


def _background(seconds: float) -> str:
    """The time runs went on in the background, which no sandbox-second counts."""
    if seconds < 1:
        return ""
    return f" (and {seconds:.1f} s in the background behind shorter runs, not counted)"


def _kinds(spent: dict[str, float]) -> str:
    order = [*KINDS, *sorted(set(spent) - set(KINDS))]
    return ", ".join(f"{k} {spent.get(k, 0.0):.1f}" for k in order)


def _print_accuracy(acc: evaluate.Accuracy) -> None:
    console.print(
        f"recall on hackable tasks: {acc.hits}/{acc.hackable} = {acc.recall:.2f}; "
        f"false alarms on robust, equivalent-hunk and over-strict tasks: "
        f"{acc.false_alarms}/{acc.robust}; "
        f"sanity-dropped as labelled: {acc.sanity_dropped}/{acc.sanity}"
    )
    if acc.known_wrong:
        console.print(
            f"recall on hackable tasks with a known wrong patch: "
            f"{acc.known_wrong_hits}/{acc.known_wrong}"
        )
    if acc.unflagged:
        console.print(
            f"unflagged tasks with a confirmed exploit: {acc.unflagged_found}/{acc.unflagged} "
            "(check each by hand: a weakness no study flagged, or a wrong confirmation)"
        )


def _found(tracker: AuditTracker) -> list[verdicts_eval.Found]:
    """Every audited task's first verdict, as the confusion table reads it."""
    return [
        verdicts_eval.Found(
            instance_id,
            s.verdict.value if s else None,
            _over_strict(s),
            len(s.harness_exploits) if s else 0,
            caveats(s),
        )
        for cid, instance_id in tracker.correlation_ids.items()
        for s in [tracker.scored.get(cid)]
    ]


def _over_strict(scored: TaskScored | None) -> bool:
    d = scored.discrimination if scored is not None else None
    return d is not None and d.over_strict
