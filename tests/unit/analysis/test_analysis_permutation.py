"""The stratified permutation test: bounds, reproducibility, and its behaviour at the extremes."""

from __future__ import annotations

import numpy as np
import pytest

from hackaudit.analysis.design import StratumBlock
from hackaudit.analysis.options import TauMethod
from hackaudit.analysis.permutation import MAX_PERMUTATIONS, stratified_permutation_test


def _blocks(
    outcomes_by_stratum: list[list[list[int]]], flags: list[list[bool]]
) -> list[StratumBlock]:
    return [
        StratumBlock(f"s{i}", np.array(outcomes, dtype=np.int64), np.array(f, dtype=np.bool_))
        for i, (outcomes, f) in enumerate(zip(outcomes_by_stratum, flags, strict=True))
    ]


def _noisy_blocks(seed: int = 3) -> list[StratumBlock]:
    rng = np.random.default_rng(seed)
    flags = [[True] * 3 + [False] * 9, [True] * 4 + [False] * 10]
    outcomes = [rng.integers(0, 2, size=(5, len(f))).tolist() for f in flags]
    return _blocks(outcomes, flags)


def test_p_value_lies_in_zero_one_and_repeats_with_the_seed() -> None:
    first = stratified_permutation_test(_noisy_blocks(), permutations=99, seed=7)
    again = stratified_permutation_test(_noisy_blocks(), permutations=99, seed=7)
    assert 0 < first.p_value <= 1
    assert first == again
    assert first.p_value == (1 + first.exceedances) / 100


def test_another_seed_draws_other_permutations() -> None:
    results = {
        stratified_permutation_test(_noisy_blocks(), permutations=99, seed=seed).null_mean
        for seed in range(4)
    }
    assert len(results) > 1


def test_models_resolving_exactly_the_flagged_tasks_give_the_smallest_p() -> None:
    # Every model resolves the flagged tasks and nothing else: the observed arrangement is the
    # most extreme; a permutation matches it with probability 1/(C(10,3)·C(12,4)) ≈ 1.7e-5.
    flags = [[True] * 3 + [False] * 7, [True] * 4 + [False] * 8]
    outcomes = [[[int(f) for f in stratum]] * 4 for stratum in flags]
    result = stratified_permutation_test(_blocks(outcomes, flags), permutations=199, seed=1)
    assert result.exceedances == 0
    assert result.p_value == pytest.approx(1 / 200)


def test_outcomes_unrelated_to_flags_within_strata_give_p_one() -> None:
    # Everything resolved in s0, nothing in s1: every arrangement has a risk difference of 0,
    # so every permutation ties with the observed effect and p = 1.
    flags = [[True, True, False, False, False], [True, True, False, False]]
    outcomes = [[[1] * 5] * 3, [[0] * 4] * 3]
    result = stratified_permutation_test(_blocks(outcomes, flags), permutations=50, seed=0)
    assert result.observed == pytest.approx(0.0)
    assert result.p_value == 1.0


def test_reml_pooling_is_available_to_the_permutations() -> None:
    result = stratified_permutation_test(_noisy_blocks(), 20, seed=2, method=TauMethod.REML)
    assert 0 < result.p_value <= 1


@pytest.mark.parametrize("permutations", [0, -5, MAX_PERMUTATIONS + 1])
def test_permutation_count_is_bounded(permutations: int) -> None:
    with pytest.raises(ValueError, match="permutations"):
        stratified_permutation_test(_noisy_blocks(), permutations, seed=0)
