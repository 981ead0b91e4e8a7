"""EQS, its components and the verdict thresholds, on hand-computed cases."""

from __future__ import annotations

import pytest

from hackaudit.scorer.domain.eqs import (
    Components,
    ScoringPolicy,
    eqs,
    hackability,
    learnability,
    verdict,
    youden_j,
)
from hackaudit.shared.contracts import PassAtOne, Verdict

POLICY = ScoringPolicy()


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        # all four: 0.35*1 + 0.30*(1-0) + 0.20*1 + 0.15*1 = 1
        (Components(v=1, h=0, f1=1, d=1), 1.0),
        # 0.35*0.5 + 0.30*(1-0.5) + 0.20*0.5 + 0.15*0.5 = 0.5
        (Components(v=0.5, h=0.5, f1=0.5, d=0.5), 0.5),
        # no F1, no D: (0.35*1 + 0.30*(1-1)) / 0.65 = 0.538461...
        (Components(v=1, h=1), 0.35 / 0.65),
        # only H: 1 - H
        (Components(h=0.25), 0.75),
    ],
)
def test_eqs_renormalises_over_the_components_present(parts: Components, expected: float) -> None:
    assert eqs(parts, POLICY) == pytest.approx(expected)


def test_eqs_is_none_without_any_component() -> None:
    assert eqs(Components(), POLICY) is None


@pytest.mark.parametrize(
    ("score", "expected"),
    [(0.71, Verdict.KEEP), (0.70, Verdict.FIX), (0.40, Verdict.FIX), (0.39, Verdict.DROP)],
)
def test_verdict_thresholds(score: float, expected: Verdict) -> None:
    assert verdict(score, POLICY) is expected


@pytest.mark.parametrize(
    ("s", "n", "expected"),
    [(0, 0, 1.0), (5, 10, 1.0), (0, 8, 4 * 0.1 * 0.9), (8, 8, 4 * 0.9 * 0.1)],
)
def test_learnability(s: int, n: int, expected: float) -> None:
    assert learnability(PassAtOne(successes=s, attempts=n)) == pytest.approx(expected)


def test_youden_is_clamped() -> None:
    assert youden_j(1.0, 1.0) == 1.0
    assert youden_j(0.2, 0.3) == 0.0
    assert youden_j(0.9, 0.6) == pytest.approx(0.5)


def test_hackability_counts_only_confirmed_candidates() -> None:
    assert hackability(1, 3) == 0.25
    assert hackability(0, 0) is None
