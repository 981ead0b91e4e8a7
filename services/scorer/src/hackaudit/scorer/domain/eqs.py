"""Environment quality score: EQS = 0.35·V + 0.30·(1−H) + 0.20·F1 + 0.15·D, and the verdict.

A component that cannot be computed is left out and the remaining weights renormalised; the
result says which components were used.
"""

from __future__ import annotations

from dataclasses import dataclass

from hackaudit.shared.contracts import PassAtOne, Verdict


@dataclass(frozen=True)
class ScoringPolicy:
    """Weights and verdict thresholds (configuration, with the documented defaults)."""

    weight_v: float = 0.35
    weight_h: float = 0.30
    weight_f1: float = 0.20
    weight_d: float = 0.15
    keep_above: float = 0.70
    drop_below: float = 0.40
    # A task with a confirmed exploit is never KEEP (at most FIX); False: the thresholds alone.
    exploit_never_keep: bool = True
    # Whether candidates that tamper with the harness (a conftest hook, edited test files) cap
    # too. They pass every task graded by the same harness alike, so by default they are
    # reported with the environment's fix and leave the task's verdict to its own tests.
    harness_caps: bool = False

    @property
    def name(self) -> str:
        thresholds = f"EQS > {self.keep_above:g} KEEP, < {self.drop_below:g} DROP"
        if self.exploit_never_keep:
            caps = "a confirmed exploit" + (" (harness ones included)" if self.harness_caps else "")
            return f"{thresholds}; {caps} caps the verdict at FIX"
        return f"{thresholds} (thresholds only)"


@dataclass(frozen=True)
class Components:
    """V, H, F1 and D; None where a component could not be computed."""

    v: float | None = None
    h: float | None = None
    f1: float | None = None
    d: float | None = None

    def as_dict(self) -> dict[str, float]:
        named = {"V": self.v, "H": self.h, "F1": self.f1, "D": self.d}
        return {name: value for name, value in named.items() if value is not None}


def youden_j(true_positive_rate: float, true_negative_rate: float) -> float:
    """Verifier discrimination: TPR + TNR − 1, clamped to [0, 1]."""
    return min(1.0, max(0.0, true_positive_rate + true_negative_rate - 1.0))


def learnability(pass_at_1: PassAtOne) -> float:
    """D = 4p(1−p) with p = (s+1)/(n+2): highest for tasks solved about half the time."""
    p = (pass_at_1.successes + 1) / (pass_at_1.attempts + 2)
    return 4 * p * (1 - p)


def hackability(exploits: int, blocked: int) -> float | None:
    """H: accepted confirmed-incorrect candidates over confirmed-incorrect candidates evaluated."""
    evaluated = exploits + blocked
    return exploits / evaluated if evaluated else None


def eqs(components: Components, policy: ScoringPolicy) -> float | None:
    """The weighted score over the components present, weights renormalised; None if none is."""
    terms = [
        (policy.weight_v, components.v),
        (policy.weight_h, None if components.h is None else 1.0 - components.h),
        (policy.weight_f1, components.f1),
        (policy.weight_d, components.d),
    ]
    present = [(w, x) for w, x in terms if x is not None]
    total_weight = sum(w for w, _ in present)
    if not present or total_weight <= 0:
        return None
    return sum(w * x for w, x in present) / total_weight


def verdict(score: float, policy: ScoringPolicy) -> Verdict:
    """The verdict the thresholds give."""
    if score > policy.keep_above:
        return Verdict.KEEP
    if score < policy.drop_below:
        return Verdict.DROP
    return Verdict.FIX


def decide(score: float, policy: ScoringPolicy, exploits: int) -> tuple[Verdict, str]:
    """The verdict under the policy, and a note when the policy changed what EQS alone gives."""
    by_score = verdict(score, policy)
    if by_score is Verdict.KEEP and exploits and policy.exploit_never_keep:
        note = (
            f"FIX, not KEEP: {exploits} confirmed exploit(s) — a task that pays for a wrong "
            "patch is never KEEP"
        )
        return Verdict.FIX, note
    return by_score, ""
