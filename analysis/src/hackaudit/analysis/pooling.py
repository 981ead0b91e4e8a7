"""Pooling the per-submission effects: random and fixed effects, heterogeneity, sign test.

Each submission contributes an effect y_i with variance v_i. The fixed-effect estimate weights
them by 1/v_i; the random-effects estimate adds a between-submission variance τ² and weights by
1/(v_i + τ²). τ² is estimated with DerSimonian–Laird (the method of moments on Cochran's Q) or by
restricted maximum likelihood (REML).

statsmodels' ``combine_effects`` supplies the fixed effect, Q and the raw DerSimonian–Laird
moment (Q − df)/C. It does not truncate that moment at zero, so with Q < df it would return a
negative τ² and negative weights; here τ² is truncated at 0 before the random-effects weights
are formed, as the DerSimonian–Laird estimator is defined.

I² is reported as τ²/(τ² + s²) with s² the "typical" within-submission variance
(k − 1)·Σw/((Σw)² − Σw²). For DerSimonian–Laird this equals Higgins' (Q − df)/Q; for REML it is
the same quantity built on the REML τ².

All p-values for the effect are one-sided for H1: effect > 0 (flagged tasks are resolved more
often than robust ones), because weak tests can only let more patches through.

The submissions are evaluated on the same tasks, so they are not independent studies: the
confidence intervals here treat them as independent and are too narrow in that sense. The
stratified permutation test (``permutation``) gives a p-value that does not assume independence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats
from statsmodels.stats.meta_analysis import combine_effects

from hackaudit.analysis.options import TauMethod

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Estimate:
    """A pooled effect with its standard error, two-sided CI and one-sided p (H1: > 0)."""

    value: float
    se: float
    ci_low: float
    ci_high: float
    z: float
    p_one_sided: float


@dataclass(frozen=True)
class PooledEffect:
    """Random- and fixed-effect pooling of k submissions, with heterogeneity statistics."""

    k: int
    method: TauMethod
    random: Estimate
    fixed: Estimate
    tau2: float
    i2: float | None
    q: float
    q_df: int
    q_p: float | None


@dataclass(frozen=True)
class SignTest:
    """Binomial sign test over submissions; ties (effect exactly 0) are left out."""

    positive: int
    negative: int
    ties: int
    p_one_sided: float
    p_two_sided: float


@dataclass(frozen=True)
class SubgroupDifference:
    """Test that the subgroups' random-effects estimates differ (Q between subgroups)."""

    q: float
    df: int
    p: float | None


def estimate_from_weights(
    effects: npt.ArrayLike, weights: npt.ArrayLike, alpha: float = 0.05
) -> Estimate:
    """Inverse-variance weighted mean Σw·y/Σw with standard error 1/√Σw."""
    y = np.asarray(effects, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    total = float(w.sum())
    return normal_estimate(float((w * y).sum() / total), math.sqrt(1.0 / total), alpha)


def normal_estimate(value: float, se: float, alpha: float = 0.05) -> Estimate:
    """Normal-theory (1 − alpha) CI and one-sided p for an estimate and its standard error."""
    crit = float(stats.norm.isf(alpha / 2))
    z = value / se
    return Estimate(
        value=value,
        se=se,
        ci_low=value - crit * se,
        ci_high=value + crit * se,
        z=z,
        p_one_sided=float(stats.norm.sf(z)),
    )


def reml_tau2(effects: npt.ArrayLike, variances: npt.ArrayLike) -> float:
    """τ² maximising the restricted likelihood of the random-effects model, on [0, ∞)."""
    y = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if y.size < 2:
        return 0.0
    upper = 10.0 * (float(np.var(y, ddof=1)) + float(v.max())) + 1e-12
    found = optimize.minimize_scalar(
        _negative_restricted_loglik,
        bounds=(0.0, upper),
        args=(y, v),
        method="bounded",
        options={"xatol": 1e-12 * max(upper, 1.0)},
    )
    best = float(found.x)
    if _negative_restricted_loglik(0.0, y, v) <= _negative_restricted_loglik(best, y, v):
        return 0.0
    return best


def _negative_restricted_loglik(tau2: float, y: FloatArray, v: FloatArray) -> float:
    w = 1.0 / (v + tau2)
    mean = float((w * y).sum() / w.sum())
    return 0.5 * float(np.log(v + tau2).sum() + math.log(w.sum()) + (w * (y - mean) ** 2).sum())


def typical_variance(variances: npt.ArrayLike) -> float:
    """Higgins & Thompson's typical within-study variance (k − 1)·Σw / ((Σw)² − Σw²)."""
    w = 1.0 / np.asarray(variances, dtype=np.float64)
    return float((w.size - 1) * w.sum() / (w.sum() ** 2 - (w**2).sum()))


def pool(
    effects: npt.ArrayLike,
    variances: npt.ArrayLike,
    method: TauMethod = TauMethod.DL,
    alpha: float = 0.05,
) -> PooledEffect:
    """Random effects (τ² by ``method``) beside the fixed effect, with Q, τ² and I²."""
    method = TauMethod(method)
    y = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if y.size == 0 or y.shape != v.shape:
        raise ValueError("need one variance per effect and at least one effect")
    if np.any(v <= 0):
        raise ValueError("every variance must be positive")
    if y.size == 1:
        single = estimate_from_weights(y, 1.0 / v, alpha)
        return PooledEffect(1, method, single, single, 0.0, None, 0.0, 0, None)
    with np.errstate(invalid="ignore", divide="ignore"):  # its RE weights misbehave if Q < df
        combined = combine_effects(y, v, method_re="dl", alpha=alpha)
    fixed = normal_estimate(float(combined.mean_effect_fe), float(combined.sd_eff_w_fe), alpha)
    q = float(combined.q)
    df = y.size - 1
    tau2 = max(0.0, float(combined.tau2)) if method is TauMethod.DL else reml_tau2(y, v)
    return PooledEffect(
        k=int(y.size),
        method=method,
        random=estimate_from_weights(y, 1.0 / (v + tau2), alpha),
        fixed=fixed,
        tau2=tau2,
        i2=tau2 / (tau2 + typical_variance(v)),
        q=q,
        q_df=df,
        q_p=float(stats.chi2.sf(q, df)),
    )


def random_effect_value(
    effects: npt.ArrayLike, variances: npt.ArrayLike, method: TauMethod = TauMethod.DL
) -> float:
    """Only the random-effects point estimate (the permutation test's statistic)."""
    return pool(effects, variances, method).random.value


def sign_test(effects: npt.ArrayLike) -> SignTest:
    """How many submissions show a positive effect, tested against a fair coin."""
    y = np.asarray(effects, dtype=np.float64)
    positive = int((y > 0).sum())
    negative = int((y < 0).sum())
    n = positive + negative
    if n == 0:
        return SignTest(0, 0, int(y.size), 1.0, 1.0)
    return SignTest(
        positive=positive,
        negative=negative,
        ties=int(y.size) - n,
        p_one_sided=float(stats.binomtest(positive, n, 0.5, alternative="greater").pvalue),
        p_two_sided=float(stats.binomtest(positive, n, 0.5, alternative="two-sided").pvalue),
    )


def subgroup_difference(pooled_by_group: Mapping[str, PooledEffect]) -> SubgroupDifference:
    """Cochran's Q across the subgroups' random-effects estimates, df = groups − 1."""
    estimates = [group.random for group in pooled_by_group.values()]
    if len(estimates) < 2:
        return SubgroupDifference(0.0, 0, None)
    y = np.array([e.value for e in estimates])
    w = 1.0 / np.array([e.se for e in estimates]) ** 2
    mean = float((w * y).sum() / w.sum())
    q = float((w * (y - mean) ** 2).sum())
    df = len(estimates) - 1
    return SubgroupDifference(q=q, df=df, p=float(stats.chi2.sf(q, df)))
