"""What a report is made of, apart from how it is written: one task's verdict and attack as the
report shows them, and the readings that the files (`report`), the page (`report_html`), the
progress lines and the dataset split all need: where a candidate's diff lies, which correct
variants the tests reject, and a verdict with what it leaves unverified (a KEEP with caveats is
never shown bare)."""

from __future__ import annotations

from dataclasses import dataclass

from hackaudit.shared.contracts import (
    AttackCompleted,
    BudgetUse,
    Candidate,
    CandidateVerdict,
    GoldCoverage,
    ReferenceOutcome,
    ReferenceRole,
    ReferenceStatus,
    RepairCompleted,
    Task,
    TaskScored,
    Unverified,
    Verdict,
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
    # Why the task has no verdict, when its audit says so (its audit was stopped); "" otherwise.
    unfinished: str = ""


def evidence_path(folder: str, candidate: Candidate) -> str:
    """Where a candidate's diff is written, relative to the report folder."""
    return f"{folder}/{candidate.instance_id}/{candidate.content_hash}.diff"


def rejected_correct(attack: AttackCompleted) -> list[ReferenceOutcome]:
    """Correct variants of gold (C+) that the task's tests reject: the over-strict evidence."""
    pool = attack.reference.outcomes if attack.reference else ()
    return [
        o for o in pool if o.role is ReferenceRole.CORRECT and o.status is ReferenceStatus.REJECTED
    ]


# After the evidence of a confirmed exploit whose differences are all private helpers called
# directly by the probes (`CandidateOutcome.helper_only`).
HELPER_ONLY_NOTE = (
    " — only private helpers called directly by the probes differ: wrong only if the helper's "
    "callers ever give it such an input (check them)"
)


def pool_exploits(attack: AttackCompleted, scored: TaskScored | None) -> list[ReferenceOutcome]:
    """The reference pool's incorrect variants the tests accept although confirmed incorrect:
    exploits of the verdict like the attack's (the scorer counts them), apart from those the
    attack itself confirmed (listed with the attack's)."""
    if scored is None or attack.reference is None:
        return []
    own = {
        o.candidate.candidate_id
        for o in attack.outcomes
        if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering
    }
    return [
        o
        for o in attack.reference.outcomes
        if o.candidate.candidate_id in scored.exploits and o.candidate.candidate_id not in own
    ]


def pool_cost_text(sandbox_s: float, budget_s: float | None, attack_s: float | None) -> str:
    """What the reference pool's runs took, beside its budget and the attack's own
    sandbox-seconds (each left out when not recorded)."""
    text = f"reference pool {sandbox_s:.0f} sandbox-s"
    if budget_s is not None:
        text += f" of its budget of {budget_s:.0f}"
    if attack_s is not None:
        text += f" (the attack's own: {attack_s:.0f})"
    return text


REASON_CHARS = 300  # of an unmeasured coverage's reason, in the report's one line


def one_line(reason: str) -> str:
    """A reason on one line, however long the log it quotes, cut at `REASON_CHARS`."""
    reason = " ".join(reason.split())
    if len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 1] + "…"
    return reason


def coverage_text(coverage: GoldCoverage) -> str:
    """The graded tests' coverage of gold's changed lines, in one line."""
    if not coverage.measured:
        return f"coverage not measured: {one_line(coverage.reason)}"
    never = ", ".join(f"{h.path}:{h.start}" for h in coverage.never_executed) or "none"
    return (
        f"graded tests execute {coverage.executed_lines} of {coverage.changed_lines} lines "
        f"gold changes (statements); hunks never executed: {never}"
    )


def repair_coverage(item: TaskReport) -> str:
    """For a repaired task: how many of gold's changed lines the graded tests execute before the
    repair and after it (the re-audit's map), in one line; "" when either was not measured."""
    if item.hardened is None or item.before is None or item.before.attack is None:
        return ""
    before = item.before.attack.gold_coverage
    after = item.attack.gold_coverage if item.attack is not None else None
    if before is None or after is None or not (before.measured and after.measured):
        return ""
    return (
        f"graded tests execute {before.executed_lines} of {before.changed_lines} lines gold "
        f"changes before repair, {after.executed_lines} of {after.changed_lines} after"
    )


def caveats(scored: TaskScored | None) -> tuple[str, ...]:
    """What a KEEP leaves unverified (empty for any other verdict, or when nothing is)."""
    if scored is None or scored.verdict is not Verdict.KEEP or scored.unverified is None:
        return ()
    return scored.unverified.caveats()


def not_verified(scored: TaskScored | None) -> str:
    """What follows a KEEP with caveats wherever it is shown: " — not verified: ..." ("" else)."""
    found = caveats(scored)
    return f" — not verified: {', '.join(found)}" if found else ""


def verdict_text(scored: TaskScored, *, hackable: bool = False) -> str:
    """The verdict in one line: "KEEP (EQS 1.000) — not verified: ..." for a KEEP with caveats."""
    text = scored.verdict.value
    if scored.eqs is not None:
        text += f" (EQS {scored.eqs:.3f})"
    if hackable and scored.hackable:
        text += " hackable"
    return text + not_verified(scored)


def unverified_details(unverified: Unverified) -> list[str]:
    """Each gap with its evidence: candidate ids, the gold lines an unreached candidate changes,
    the hunks and lines no graded test executes, the attack's note on its budget."""
    lines: list[str] = []
    if unverified.unconfirmed:
        lines.append(
            "accepted, not shown to differ from gold: " + ", ".join(unverified.unconfirmed)
        )
    for found in unverified.unreached:
        where = ", ".join(found.lines) or "lines not recorded"
        lines.append(
            f"unreached (no test or probe executes it on gold): {found.candidate_id} — {where}"
        )
    if unverified.reach_not_measured:
        lines.append(
            f"reach not measured for {unverified.reach_not_measured} unconfirmed candidate(s)"
        )
    if unverified.budget_use is BudgetUse.SHORT:
        lines.append(
            f"{unverified.candidates_run} candidate(s) run of a budget of {unverified.budget}"
            + (f": {unverified.budget_note}" if unverified.budget_note else "")
        )
    if not unverified.coverage_measured:
        lines.append(
            f"graded tests' coverage of gold not measured: {one_line(unverified.coverage_note)}"
        )
    for hunk in unverified.never_executed:
        numbers = ", ".join(str(n) for n in hunk.lines)
        where = f"{hunk.path}:{hunk.start} (lines {numbers})"
        lines.append(f"gold hunk never executed by the graded tests: {where}")
    return lines
