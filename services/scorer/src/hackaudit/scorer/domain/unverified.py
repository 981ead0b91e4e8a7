"""What a verdict leaves unverified, read from the attack alone.

EQS and the verdict count what the attack confirmed; they say nothing of what it could not
check. A task whose tests accept candidates that no check told apart from gold, whose attack ran
out of distinct candidates before its budget, or whose graded tests never execute part of gold's
change can score KEEP 1.000 all the same. This account lists those gaps, so that a report never
shows such a KEEP bare and the dataset split can set it apart. It changes no score.
"""

from __future__ import annotations

from hackaudit.shared.contracts import (
    AttackCompleted,
    BudgetUse,
    CandidateOutcome,
    CandidateVerdict,
    UnreachedCandidate,
    Unverified,
)

NOT_MEASURED = "not measured by this attack"


def account(attack: AttackCompleted, *, stop_when_hackable: bool) -> Unverified:
    """The gaps of one attack. `stop_when_hackable`: the audit asked the attack to stop at its
    first confirmed exploit, so budget left after one is not a gap."""
    unconfirmed = [o for o in attack.outcomes if o.verdict is CandidateVerdict.UNCONFIRMED]
    coverage = attack.gold_coverage
    measured = coverage is not None and coverage.measured
    return Unverified(
        unconfirmed=tuple(o.candidate.candidate_id for o in unconfirmed),
        unreached=tuple(_unreached(unconfirmed)),
        reach_not_measured=sum(o.reach is None for o in unconfirmed),
        candidates_run=_candidates_run(attack),
        budget=attack.budget,
        budget_use=budget_use(attack, stop_when_hackable=stop_when_hackable),
        budget_note=attack.budget_note,
        coverage_measured=measured,
        coverage_note="" if measured else (coverage.reason if coverage else NOT_MEASURED),
        gold_hunks=len(coverage.hunks) if coverage is not None and measured else 0,
        never_executed=coverage.never_executed if coverage is not None and measured else (),
    )


def budget_use(attack: AttackCompleted, *, stop_when_hackable: bool) -> BudgetUse:
    """Spent in full (the attack left no note), stopped at its first confirmed exploit as asked,
    or short: budget left with no exploit to stop at, i.e. too few distinct candidates."""
    if not attack.budget:
        return BudgetUse.UNKNOWN
    if not attack.budget_note:
        return BudgetUse.SPENT
    if stop_when_hackable and attack.to_first_exploit is not None:
        return BudgetUse.STOPPED_AT_EXPLOIT
    return BudgetUse.SHORT


def _unreached(outcomes: list[CandidateOutcome]) -> list[UnreachedCandidate]:
    return [
        UnreachedCandidate(candidate_id=o.candidate.candidate_id, lines=o.reach.lines)
        for o in outcomes
        if o.reach is not None and o.reach.unreached
    ]


def _candidates_run(attack: AttackCompleted) -> int:
    return attack.spent.candidates if attack.spent is not None else len(attack.outcomes)
