"""Mantel–Haenszel risk difference and its smoothed variance, pinned on hand-computed cases."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from hackaudit.analysis.effects import mh_risk_difference, mh_weights, smoothed_proportion

# Two strata, explicit counts (flagged resolved/flagged tasks, robust resolved/robust tasks):
#   A: 3/4 vs 2/8  -> n1=4, n0=8, N=12, w_A = 4*8/12 = 8/3, RD_A = 3/4 - 2/8 = 1/2
#   B: 1/2 vs 1/6  -> n1=2, n0=6, N=8,  w_B = 2*6/8  = 3/2, RD_B = 1/2 - 1/6 = 1/3
# RD_MH = (8/3 * 1/2 + 3/2 * 1/3) / (8/3 + 3/2) = (4/3 + 1/2) / (25/6) = (11/6)/(25/6) = 11/25
#
# Variance with p~ = (x + 1/2)/(n + 1):
#   A: p~1 = 3.5/5 = 7/10 -> 7/10*3/10/4 = 21/400;  p~0 = 2.5/9 = 5/18 -> 5/18*13/18/8 = 65/2592
#      v_A = 21/400 + 65/2592 = 5027/64800
#   B: p~1 = 1.5/3 = 1/2 -> 1/4/2 = 1/8;            p~0 = 1.5/7 = 3/14 -> 3/14*11/14/6 = 11/392
#      v_B = 1/8 + 11/392 = 15/98
#   Var = (w_A^2 v_A + w_B^2 v_B) / (w_A + w_B)^2
#       = (64/9 * 5027/64800 + 9/4 * 15/98) / (625/36) = 6401543/124031250 ≈ 0.0516123
TWO_STRATA = {"a": [3, 1], "n1": [4, 2], "b": [2, 1], "n0": [8, 6]}
TWO_STRATA_RD = 11 / 25
TWO_STRATA_VAR = float(Fraction(6401543, 124031250))


def test_two_strata_risk_difference_matches_hand_computation() -> None:
    result = mh_risk_difference(**_args(TWO_STRATA))
    assert float(result.estimate) == pytest.approx(TWO_STRATA_RD, rel=1e-12)
    assert float(result.variance) == pytest.approx(TWO_STRATA_VAR, rel=1e-12)


def test_stratum_weights_are_n1_n0_over_n() -> None:
    assert mh_weights([4, 2, 0], [8, 6, 5]).tolist() == pytest.approx([8 / 3, 3 / 2, 0.0])


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [(0, 3, 1 / 8), (3, 3, 7 / 8), (2, 8, 5 / 18), (0, 0, 1 / 2)],
)
def test_smoothed_proportion_adds_half_a_success_and_half_a_failure(
    successes: int, trials: int, expected: float
) -> None:
    assert float(smoothed_proportion(successes, trials)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("counts", "expected_variance"),
    [
        # one stratum, nothing resolved: 0/3 vs 0/5. p~1 = 1/8, p~0 = 1/12
        # Var = 1/8*7/8/3 + 1/12*11/12/5 = 7/192 + 11/720 = 149/2880
        ({"a": [0], "n1": [3], "b": [0], "n0": [5]}, 149 / 2880),
        # one stratum, everything resolved: 3/3 vs 5/5 -> same by symmetry
        ({"a": [3], "n1": [3], "b": [5], "n0": [5]}, 149 / 2880),
    ],
)
def test_cells_without_successes_or_failures_keep_a_positive_variance(
    counts: dict[str, list[int]], expected_variance: float
) -> None:
    result = mh_risk_difference(**_args(counts))
    assert float(result.estimate) == 0.0
    assert float(result.variance) == pytest.approx(expected_variance, rel=1e-12)


def test_stratum_missing_an_arm_contributes_nothing() -> None:
    with_empty = {"a": [3, 0], "n1": [4, 0], "b": [2, 4], "n0": [8, 9]}
    alone = {"a": [3], "n1": [4], "b": [2], "n0": [8]}
    assert float(mh_risk_difference(**_args(with_empty)).estimate) == pytest.approx(0.5)
    assert float(mh_risk_difference(**_args(with_empty)).variance) == pytest.approx(
        float(mh_risk_difference(**_args(alone)).variance)
    )


def test_many_submissions_at_once_equal_one_at_a_time() -> None:
    a = np.array([[3, 1], [0, 2], [4, 0]])
    b = np.array([[2, 1], [5, 6], [0, 3]])
    together = mh_risk_difference(a, [4, 2], b, [8, 6])
    for row in range(3):
        alone = mh_risk_difference(a[row], [4, 2], b[row], [8, 6])
        assert together.estimate[row] == pytest.approx(float(alone.estimate))
        assert together.variance[row] == pytest.approx(float(alone.variance))


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ({"a": [5], "n1": [4], "b": [2], "n0": [8]}, "flagged resolved counts"),
        ({"a": [1], "n1": [4], "b": [-1], "n0": [8]}, "robust resolved counts"),
        ({"a": [0], "n1": [0], "b": [2], "n0": [8]}, "both flagged and robust"),
    ],
)
def test_impossible_counts_are_rejected(counts: dict[str, list[int]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mh_risk_difference(**_args(counts))


def _args(counts: dict[str, list[int]]) -> dict[str, list[int]]:
    return {
        "flagged_resolved": counts["a"],
        "flagged_n": counts["n1"],
        "robust_resolved": counts["b"],
        "robust_n": counts["n0"],
    }
