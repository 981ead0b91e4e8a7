"""V's inputs: how well the task's tests tell correct variants of gold from incorrect ones.

The pool has two sides. C+ is gold (its sanity runs: resolved every time, or the task would
not have been attacked) and the rewrites of gold the attacker showed equal to it; C- is the
empty patch (its sanity run) and the reference mutants the attacker confirmed incorrect. The
pool's own "gold" and "empty" members, when it reports them, are the same variants as the sanity
runs and are not counted twice. Members left out (not shown correct, not shown incorrect, or
whose run failed) are counted apart and never enter the rates.
"""

from __future__ import annotations

from hackaudit.shared.contracts import (
    Discrimination,
    ReferencePool,
    ReferenceRole,
    ReferenceStatus,
    RunResult,
)

# Pool members that duplicate the scorer's own sanity runs.
SANITY_KINDS = frozenset({"gold", "empty"})


def discrimination(
    gold: tuple[RunResult, ...], empty: RunResult | None, pool: ReferencePool | None
) -> Discrimination:
    """TPR over C+, TNR over C-, and the members behind them."""
    gold_ok = sum(1 for r in gold if r.resolved) / len(gold) if gold else 0.0
    accepted_correct = gold_ok
    correct = 1
    rejected_correct: list[str] = []
    rejected_incorrect = 0.0 if empty is None or empty.resolved else 1.0
    incorrect = 1
    accepted_incorrect: list[str] = []
    left_out = {ReferenceRole.CORRECT: 0, ReferenceRole.INCORRECT: 0}
    members = pool.outcomes if pool is not None else ()
    for member in members:
        if member.kind in SANITY_KINDS:
            continue
        if member.status is ReferenceStatus.LEFT_OUT:
            left_out[member.role] += 1
            continue
        accepted = member.status is ReferenceStatus.ACCEPTED
        if member.role is ReferenceRole.CORRECT:
            correct += 1
            if accepted:
                accepted_correct += 1
            else:
                rejected_correct.append(member.candidate.candidate_id)
        else:
            incorrect += 1
            if accepted:
                accepted_incorrect.append(member.candidate.candidate_id)
            else:
                rejected_incorrect += 1
    tpr = accepted_correct / correct
    tnr = rejected_incorrect / incorrect
    return Discrimination(
        tpr=tpr,
        tnr=tnr,
        balanced_accuracy=(tpr + tnr) / 2,
        correct=correct,
        correct_left_out=left_out[ReferenceRole.CORRECT],
        incorrect=incorrect,
        incorrect_left_out=left_out[ReferenceRole.INCORRECT],
        rejected_correct=tuple(rejected_correct),
        accepted_incorrect=tuple(accepted_incorrect),
    )


def describe(d: Discrimination, pool: ReferencePool | None) -> str:
    """One line for the verdict's reason: what V was computed from."""
    source = "reference pool" if pool is not None else "gold and the empty patch only (no pool)"
    text = (
        f"V from {source}: TPR {d.tpr:.2f} over {d.correct} correct, "
        f"TNR {d.tnr:.2f} over {d.incorrect} incorrect"
    )
    left = d.correct_left_out + d.incorrect_left_out
    if left:
        text += f" ({d.correct_left_out} correct and {d.incorrect_left_out} incorrect left out)"
    if d.over_strict:
        text += f"; over-strict: the tests reject {len(d.rejected_correct)} correct variant(s)"
    return text
