"""F1(t): how far the LLM judge agrees with execution on a task's evaluated candidates.

The candidates are the attacker's that ran (resolved or not) and the reference pool's members
whose run counted. Positive = "correct". The judge's label is the majority of its samples, with
"partial" counted as incorrect; execution's label is "resolved and not confirmed incorrect".
F1 = 2·TP / (2·TP + FP + FN), and F1 = 1 when both label nothing correct. Candidates the judge
abstained on (or never answered) are left out of F1 and counted.
"""

from __future__ import annotations

from collections import Counter

from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateVerdict,
    JudgeAgreement,
    JudgeCompleted,
    JudgeLabel,
    JudgeRequested,
    JudgeSampleOutcome,
    ReferenceRole,
    ReferenceStatus,
    Task,
)

REQUESTER = "scorer"


def evaluated(attack: AttackCompleted) -> dict[str, tuple[Candidate, bool]]:
    """Candidate id -> (candidate, execution's label) for every candidate whose run counted."""
    found: dict[str, tuple[Candidate, bool]] = {}
    for outcome in attack.outcomes:
        if outcome.resolved is None:  # never ran: did not apply, or its run failed
            continue
        correct = outcome.resolved and outcome.verdict is not CandidateVerdict.EXPLOIT
        found.setdefault(outcome.candidate.candidate_id, (outcome.candidate, correct))
    for member in attack.reference.outcomes if attack.reference else ():
        if member.status is ReferenceStatus.LEFT_OUT:
            continue
        correct = member.status is ReferenceStatus.ACCEPTED and member.role is ReferenceRole.CORRECT
        found.setdefault(member.candidate.candidate_id, (member.candidate, correct))
    return found


def judge_request(
    correlation_id: str, task: Task, attack: AttackCompleted, samples: int = 3
) -> JudgeRequested | None:
    """The question for the judge about every evaluated candidate (None: nothing to ask)."""
    candidates = tuple(c for c, _ in evaluated(attack).values())
    if not candidates:
        return None
    return JudgeRequested(
        correlation_id=correlation_id,
        task=task,
        candidates=candidates,
        samples=samples,
        requested_by=REQUESTER,
    )


def f1_score(true_positive: int, false_positive: int, false_negative: int) -> float:
    """2·TP / (2·TP + FP + FN); 1 when neither side labels anything correct."""
    denominator = 2 * true_positive + false_positive + false_negative
    return 1.0 if denominator == 0 else 2 * true_positive / denominator


def agreement(attack: AttackCompleted, done: JudgeCompleted) -> JudgeAgreement:
    """F1 over the candidates the judge gave a label, with the counts and the evidence."""
    execution = {cid: label for cid, (_, label) in evaluated(attack).items()}
    judged = {v.candidate_id: v.label for v in done.verdicts}
    tp = fp = fn = tn = abstained = 0
    for cid, executed in execution.items():
        label = judged.get(cid, JudgeLabel.ABSTAIN)
        if label is JudgeLabel.ABSTAIN:
            abstained += 1
            continue
        said = label is JudgeLabel.CORRECT  # partial counts as incorrect
        tp += said and executed
        fp += said and not executed
        fn += executed and not said
        tn += not said and not executed
    compared = tp + fp + fn + tn
    left_out = done.left_out
    if not left_out and not compared:
        failures = Counter(
            s.outcome.value
            for v in done.verdicts
            for s in v.details
            if s.outcome is not JudgeSampleOutcome.ANSWERED
        )
        why = ", ".join(f"{n} {outcome}" for outcome, n in sorted(failures.items()))
        left_out = f"the judge abstained on all {abstained} candidates" + (
            f" (samples: {why})" if why else ""
        )
    return JudgeAgreement(
        f1=f1_score(tp, fp, fn) if compared and not done.left_out else None,
        true_positive=tp,
        false_positive=fp,
        false_negative=fn,
        true_negative=tn,
        abstained=abstained,
        left_out=left_out,
        execution=execution,
        verdicts=done.verdicts,
        usage=done.usage,
    )


def describe(found: JudgeAgreement | None) -> str:
    """One line for the score's reason: F1 and its counts, or why it was left out."""
    if found is None:
        return "F1 left out: no judge asked (no judge service in this audit)"
    if found.f1 is None:
        return f"F1 left out: {found.left_out}"
    cost = ""
    if found.usage is not None:
        u = found.usage
        price = f", ${u.cost_usd:.4f}" if u.priced else ", unpriced"
        cost = (
            f"; judge {u.model}: {u.calls} calls, {u.cache_hits} cached, "
            f"{u.input_tokens}+{u.output_tokens} tokens{price}"
        )
    return (
        f"F1 {found.f1:.2f} (judge vs execution: TP {found.true_positive}, "
        f"FP {found.false_positive}, FN {found.false_negative}, TN {found.true_negative}, "
        f"{found.abstained} abstained){cost}"
    )
