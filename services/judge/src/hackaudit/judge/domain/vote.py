"""Self-consistency: the label most samples agree on, or an abstention that says why.

A label needs a strict majority of the samples asked for (2 of 3): a three-way split abstains,
and so does a vote where failed samples (malformed, refused, timed out, not asked) leave no
majority standing. A failed sample is never counted as a vote.
"""

from __future__ import annotations

from collections import Counter

from hackaudit.shared.contracts import JudgeLabel, JudgeSample, JudgeSampleOutcome, JudgeVerdict


def majority(samples: list[JudgeSample], asked: int) -> tuple[JudgeLabel, str]:
    """The majority label over `asked` samples, or ABSTAIN and the reason."""
    answered = [s.label for s in samples if s.outcome is JudgeSampleOutcome.ANSWERED]
    needed = asked // 2 + 1
    if answered:
        label, votes = Counter(answered).most_common(1)[0]
        if votes >= needed:
            return label, ""
    failures = Counter(
        s.outcome.value for s in samples if s.outcome is not JudgeSampleOutcome.ANSWERED
    )
    failed_note = ", ".join(f"{n} {outcome}" for outcome, n in sorted(failures.items()))
    counts = Counter(label.value for label in answered)
    split = " / ".join(f"{n} {label}" for label, n in sorted(counts.items())) or "no answer"
    if len(counts) >= 3:
        why = f"{len(counts)}-way split ({split})"
    else:
        why = f"no majority of {asked}: {split}"
    return JudgeLabel.ABSTAIN, why + (f"; {failed_note}" if failed_note else "")


def verdict(candidate_id: str, samples: list[JudgeSample], asked: int) -> JudgeVerdict:
    label, reason = majority(samples, asked)
    return JudgeVerdict(
        candidate_id=candidate_id,
        samples=tuple(s.label for s in samples),
        label=label,
        details=tuple(samples),
        reason=reason,
    )
