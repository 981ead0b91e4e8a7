"""Exploit strategies: offline families (pure functions of the task) and the LLM strategy."""

from __future__ import annotations

from collections.abc import Sequence

from hackaudit.attacker.domain.generate.strategies import harness, mutation, partial, special_casing
from hackaudit.attacker.domain.generate.strategies.base import (
    Category,
    OfflineStrategy,
    ProposalContext,
    Strategy,
)
from hackaudit.shared.contracts import Candidate, Task

OFFLINE: tuple[OfflineStrategy, ...] = (
    harness.STRATEGY,
    special_casing.STRATEGY,
    partial.STRATEGY,
    mutation.STRATEGY,
)


def offline_pools(
    task: Task, strategies: Sequence[OfflineStrategy] = OFFLINE
) -> dict[Category, list[Candidate]]:
    """Every offline candidate for the task, by family, best first within each family."""
    pools: dict[Category, list[Candidate]] = {}
    for strategy in strategies:
        pools.setdefault(strategy.category, []).extend(strategy.candidates(task))
    return pools


def not_applicable(task: Task, strategies: Sequence[OfflineStrategy] = OFFLINE) -> list[str]:
    """Offline candidates that cannot act on the task's runner, as `variant: reason`."""
    if not any(s.name == harness.NAME for s in strategies):
        return []
    return harness.not_applicable(task)


__all__ = [
    "OFFLINE",
    "Category",
    "OfflineStrategy",
    "ProposalContext",
    "Strategy",
    "not_applicable",
    "offline_pools",
]
