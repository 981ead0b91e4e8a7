"""Per-submission effect: the Mantel–Haenszel risk difference between flagged and robust tasks.

For one submission and stratum k (a difficulty level), ``a_k`` of the ``n1_k`` flagged tasks and
``b_k`` of the ``n0_k`` robust tasks were resolved. The Mantel–Haenszel risk difference is

    RD = Σ_k (a_k·n0_k − b_k·n1_k) / N_k   /   Σ_k w_k,        w_k = n1_k·n0_k / N_k

that is, a weighted mean of the stratum risk differences p1_k − p0_k with weights w_k.

Its variance is the weighted sum of the stratum binomial variances,

    Var(RD) = Σ_k w_k² · (p̃1_k(1 − p̃1_k)/n1_k + p̃0_k(1 − p̃0_k)/n0_k)  /  (Σ_k w_k)²,

computed with continuity-smoothed proportions p̃ = (x + ½)/(n + 1) instead of x/n. With raw
proportions a submission that resolves no flagged and no robust task (or all of them) would get a
variance of zero and an infinite weight in the pooling; the smoothed proportions keep every
variance strictly positive. The point estimate uses the raw proportions.

Every function accepts counts for one submission (shape ``(k,)``) or for many at once
(shape ``(m, k)``, one row per submission); sums run over the last axis.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

SMOOTHING = 0.5
"""Pseudo-count added to successes and to failures before the variance is computed."""


class RiskDifference(NamedTuple):
    """Mantel–Haenszel risk differences and their variances, one per submission."""

    estimate: FloatArray
    variance: FloatArray


def smoothed_proportion(successes: npt.ArrayLike, trials: npt.ArrayLike) -> FloatArray:
    """(x + ½) / (n + 1): a proportion that is never exactly 0 or 1."""
    x = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    return (x + SMOOTHING) / (n + 2 * SMOOTHING)


def mh_weights(flagged_n: npt.ArrayLike, robust_n: npt.ArrayLike) -> FloatArray:
    """Mantel–Haenszel stratum weights n1·n0/N (zero for a stratum missing either arm)."""
    n1 = np.asarray(flagged_n, dtype=np.float64)
    n0 = np.asarray(robust_n, dtype=np.float64)
    total = n1 + n0
    return np.divide(n1 * n0, total, out=np.zeros_like(total), where=total > 0)


def binomial_variance(successes: npt.ArrayLike, trials: npt.ArrayLike) -> FloatArray:
    """p̃(1 − p̃)/n with the smoothed proportion; zero where a stratum has no trials."""
    n = np.asarray(trials, dtype=np.float64)
    p = smoothed_proportion(successes, n)
    return np.divide(p * (1.0 - p), n, out=np.zeros_like(p * n), where=n > 0)


def mh_risk_difference(
    flagged_resolved: npt.ArrayLike,
    flagged_n: npt.ArrayLike,
    robust_resolved: npt.ArrayLike,
    robust_n: npt.ArrayLike,
) -> RiskDifference:
    """Mantel–Haenszel risk difference (flagged − robust) over strata, with its variance."""
    a = np.asarray(flagged_resolved, dtype=np.float64)
    b = np.asarray(robust_resolved, dtype=np.float64)
    n1 = np.broadcast_to(np.asarray(flagged_n, dtype=np.float64), a.shape)
    n0 = np.broadcast_to(np.asarray(robust_n, dtype=np.float64), b.shape)
    _check_counts(a, n1, "flagged")
    _check_counts(b, n0, "robust")
    weights = mh_weights(n1, n0)
    total_weight = weights.sum(axis=-1)
    if np.any(total_weight <= 0):
        raise ValueError("no stratum has both flagged and robust tasks")
    p1 = np.divide(a, n1, out=np.zeros_like(a), where=n1 > 0)
    p0 = np.divide(b, n0, out=np.zeros_like(b), where=n0 > 0)
    estimate = (weights * (p1 - p0)).sum(axis=-1) / total_weight
    stratum_variance = binomial_variance(a, n1) + binomial_variance(b, n0)
    variance = (weights**2 * stratum_variance).sum(axis=-1) / total_weight**2
    return RiskDifference(np.asarray(estimate), np.asarray(variance))


def _check_counts(successes: FloatArray, trials: FloatArray, arm: str) -> None:
    if np.any(successes < 0) or np.any(successes > trials):
        raise ValueError(f"{arm} resolved counts must lie between 0 and the number of tasks")
