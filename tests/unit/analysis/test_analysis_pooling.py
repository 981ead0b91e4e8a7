"""Random/fixed effects, τ², I², Q, sign test and subgroup test on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.meta_analysis import combine_effects

from hackaudit.analysis.pooling import (
    Estimate,
    PooledEffect,
    TauMethod,
    pool,
    reml_tau2,
    sign_test,
    subgroup_difference,
)

# Three studies: y = 0.1, 0.3, 0.5 with v = 0.01, 0.02, 0.04.
#   w = 1/v = 100, 50, 25; Σw = 175; fixed = (10 + 15 + 12.5)/175 = 1.5/7 ≈ 0.2142857
#   residuals y - fixed = -0.8/7, 0.6/7, 2/7
#   Q = (100*0.64 + 50*0.36 + 25*4)/49 = 182/49 = 26/7 ≈ 3.7142857, df = 2
#   C = Σw - Σw²/Σw = 175 - 13125/175 = 100
#   τ²_DL = (Q - df)/C = (26/7 - 2)/100 = 3/175 ≈ 0.0171429
#   I² = (Q - df)/Q = (12/7)/(26/7) = 6/13 ≈ 0.4615385
#   random weights 1/(v + τ²) = 700/19, 350/13, 35/2 -> random = 579/2294 ≈ 0.2523976
#   se_random = 1/√(Σ w*) ≈ 0.1109297
THREE_Y = [0.1, 0.3, 0.5]
THREE_V = [0.01, 0.02, 0.04]


def test_dersimonian_laird_on_three_studies_matches_hand_computation() -> None:
    pooled = pool(THREE_Y, THREE_V, TauMethod.DL)
    assert pooled.k == 3
    assert pooled.fixed.value == pytest.approx(1.5 / 7, rel=1e-12)
    assert pooled.fixed.se == pytest.approx((1 / 175) ** 0.5, rel=1e-12)
    assert pooled.q == pytest.approx(26 / 7, rel=1e-12)
    assert pooled.q_df == 2
    assert pooled.tau2 == pytest.approx(3 / 175, rel=1e-12)
    assert pooled.i2 == pytest.approx(6 / 13, rel=1e-12)
    assert pooled.random.value == pytest.approx(579 / 2294, rel=1e-12)
    assert pooled.random.se == pytest.approx(0.11092967569840922, rel=1e-9)


def test_random_effect_agrees_with_statsmodels_when_tau2_is_positive() -> None:
    reference = combine_effects(np.array(THREE_Y), np.array(THREE_V), method_re="dl")
    pooled = pool(THREE_Y, THREE_V, TauMethod.DL)
    low, high = reference.conf_int(use_t=False)[1]
    assert pooled.random.value == pytest.approx(reference.mean_effect_re)
    assert (pooled.random.ci_low, pooled.random.ci_high) == pytest.approx((low, high))


def test_one_sided_p_and_ci_follow_the_normal_distribution() -> None:
    estimate = pool(THREE_Y, THREE_V).random
    # z = 0.2523976/0.1109297 ≈ 2.27530; one-sided p = 1 - Φ(z) ≈ 0.011443
    assert estimate.z == pytest.approx(2.27530, abs=1e-4)
    assert estimate.p_one_sided == pytest.approx(0.011443, abs=1e-5)
    assert estimate.ci_low == pytest.approx(estimate.value - 1.959964 * estimate.se, rel=1e-6)


def test_tau2_is_truncated_at_zero_when_q_is_below_its_df() -> None:
    # y = 0.1, 0.11, 0.09, v = 0.01: Q = (0 + 0.0001 + 0.0001)/0.01 = 0.02 < df = 2,
    # the raw moment (Q - df)/C is negative; τ² = 0 and the random effect equals the fixed one.
    pooled = pool([0.1, 0.11, 0.09], [0.01, 0.01, 0.01], TauMethod.DL)
    assert pooled.q == pytest.approx(0.02)
    assert pooled.tau2 == 0.0
    assert pooled.i2 == 0.0
    assert pooled.random == pooled.fixed


@pytest.mark.parametrize("method", list(TauMethod))
def test_equal_variances_give_sample_variance_minus_v(method: TauMethod) -> None:
    # With equal v, DL and REML both give τ² = s²_y - v = 0.04 - 0.01 = 0.03
    # (s²_y of 0.1, 0.3, 0.5 with n - 1 = 2 is (0.04 + 0 + 0.04)/2 = 0.04).
    assert pool(THREE_Y, [0.01] * 3, method).tau2 == pytest.approx(0.03, rel=1e-6)


def test_reml_tau2_solves_the_restricted_likelihood_equation() -> None:
    # At the REML optimum (τ² > 0): Σw²(y - μ)² = Σw - Σw²/Σw with w = 1/(v + τ²).
    y, v = np.array(THREE_Y), np.array(THREE_V)
    tau2 = reml_tau2(y, v)
    w = 1 / (v + tau2)
    mu = (w * y).sum() / w.sum()
    assert tau2 > 0
    assert (w**2 * (y - mu) ** 2).sum() == pytest.approx(w.sum() - (w**2).sum() / w.sum(), rel=1e-6)


def test_reml_tau2_is_zero_for_homogeneous_studies() -> None:
    assert reml_tau2([0.1, 0.11, 0.09], [0.01, 0.01, 0.01]) == 0.0


def test_single_study_is_its_own_pooled_estimate() -> None:
    pooled = pool([0.2], [0.04])
    assert pooled.random.value == pytest.approx(0.2)
    assert pooled.random.se == pytest.approx(0.2)
    assert (pooled.tau2, pooled.i2, pooled.q_df, pooled.q_p) == (0.0, None, 0, None)


@pytest.mark.parametrize(
    ("effects", "variances", "message"),
    [
        ([], [], "at least one"),
        ([0.1, 0.2], [0.01], "one variance per effect"),
        ([0.1], [0.0], "positive"),
    ],
)
def test_bad_pooling_input_is_rejected(
    effects: list[float], variances: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        pool(effects, variances)


@pytest.mark.parametrize(
    ("effects", "positive", "negative", "ties", "p_one_sided", "p_two_sided"),
    [
        # 9 of 10 positive: P(X >= 9 | n=10, 1/2) = (10 + 1)/1024
        ([0.1] * 9 + [-0.1], 9, 1, 0, 11 / 1024, 22 / 1024),
        # ties are dropped: 3 positive of 3 non-zero -> 1/8
        ([0.2, 0.1, 0.3, 0.0, 0.0], 3, 0, 2, 1 / 8, 2 / 8),
        # 1 positive of 4: P(X >= 1) = 15/16
        ([0.1, -0.1, -0.2, -0.3], 1, 3, 0, 15 / 16, 10 / 16),
        ([0.0, 0.0], 0, 0, 2, 1.0, 1.0),
    ],
)
def test_sign_test(
    effects: list[float],
    positive: int,
    negative: int,
    ties: int,
    p_one_sided: float,
    p_two_sided: float,
) -> None:
    result = sign_test(effects)
    assert (result.positive, result.negative, result.ties) == (positive, negative, ties)
    assert result.p_one_sided == pytest.approx(p_one_sided, rel=1e-12)
    assert result.p_two_sided == pytest.approx(p_two_sided, rel=1e-12)


def test_subgroup_difference_is_q_between_subgroup_estimates() -> None:
    # Estimates 0.1 and 0.3, both se 0.1: mean 0.2, Q = (0.1²+0.1²)/0.01 = 2, df 1,
    # p = P(χ²₁ ≥ 2) ≈ 0.157299
    groups = {"a": _pooled_at(0.1, 0.1), "b": _pooled_at(0.3, 0.1)}
    result = subgroup_difference(groups)
    assert result.q == pytest.approx(2.0)
    assert result.df == 1
    assert result.p == pytest.approx(0.157299, abs=1e-6)


def test_one_subgroup_has_no_difference_test() -> None:
    assert subgroup_difference({"only": _pooled_at(0.1, 0.1)}).p is None


def _pooled_at(value: float, se: float) -> PooledEffect:
    estimate = Estimate(value, se, value - 2 * se, value + 2 * se, value / se, 0.5)
    return PooledEffect(1, TauMethod.DL, estimate, estimate, 0.0, None, 0.0, 0, None)
