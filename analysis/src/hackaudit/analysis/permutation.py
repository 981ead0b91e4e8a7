"""Stratified permutation test of the flags: a p-value that does not assume independent models.

Every submission is scored on the same tasks, so the submissions are not independent studies and
the random-effects p-value is optimistic. Here the flags themselves are the random element: under
the null hypothesis that being flagged is unrelated to being resolved (given the stratum), any
rearrangement of the flags among the tasks of a stratum is as likely as the observed one. Each
permutation shuffles the flags within every contributing stratum (keeping the number of flagged
tasks per stratum), recomputes every submission's risk difference and the pooled random-effects
estimate, and the p-value is the share of permutations whose pooled effect is at least the
observed one, counting the observed arrangement itself:

    p = (1 + #{pooled_perm ≥ pooled_obs}) / (1 + P)

so p lies in (0, 1]. The permutations come from ``numpy.random.default_rng(seed)``, so the same
seed gives the same p.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hackaudit.analysis.design import StratumBlock, stratified_effects
from hackaudit.analysis.options import MAX_PERMUTATIONS, TauMethod
from hackaudit.analysis.pooling import random_effect_value

BATCH = 500
TOLERANCE = 1e-12
"""Pooled effects this close to the observed one count as ties (floating-point noise)."""


@dataclass(frozen=True)
class PermutationTest:
    """Result of the stratified permutation test (one-sided, H1: pooled effect > 0)."""

    observed: float
    p_value: float
    permutations: int
    seed: int
    exceedances: int
    null_mean: float
    null_p95: float


def stratified_permutation_test(
    blocks: Sequence[StratumBlock],
    permutations: int,
    seed: int,
    method: TauMethod = TauMethod.DL,
) -> PermutationTest:
    """Permute the flags within strata ``permutations`` times and locate the observed effect."""
    if not 1 <= permutations <= MAX_PERMUTATIONS:
        raise ValueError(f"permutations must be between 1 and {MAX_PERMUTATIONS}")
    observed = _pooled(blocks, None, method)
    rng = np.random.default_rng(seed)
    null = np.concatenate(
        [_pooled_batch(blocks, rng, size, method) for size in _batch_sizes(permutations, BATCH)]
    )
    exceedances = int((null >= observed - TOLERANCE).sum())
    return PermutationTest(
        observed=observed,
        p_value=(1 + exceedances) / (1 + permutations),
        permutations=permutations,
        seed=seed,
        exceedances=exceedances,
        null_mean=float(null.mean()),
        null_p95=float(np.quantile(null, 0.95)),
    )


def _batch_sizes(total: int, batch: int) -> list[int]:
    return [min(batch, total - start) for start in range(0, total, batch)]


def _pooled_batch(
    blocks: Sequence[StratumBlock], rng: np.random.Generator, size: int, method: TauMethod
) -> npt.NDArray[np.float64]:
    shuffled = [rng.permuted(np.tile(block.flags, (size, 1)), axis=1) for block in blocks]
    effects = stratified_effects(blocks, shuffled)
    return np.array(
        [random_effect_value(effects.estimate[i], effects.variance[i], method) for i in range(size)]
    )


def _pooled(
    blocks: Sequence[StratumBlock], flags: Sequence[npt.NDArray[np.bool_]] | None, method: TauMethod
) -> float:
    effects = stratified_effects(blocks, flags)
    return random_effect_value(effects.estimate, effects.variance, method)
