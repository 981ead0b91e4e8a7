"""Sanity before any attack: the gold patch must be resolved every time, the empty patch never."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from hackaudit.shared.contracts import RunResult, RunStatus, TestStatus


class Sanity(StrEnum):
    OK = "ok"
    GOLD_FAILS = "gold_fails"
    GOLD_FLAKY = "gold_flaky"
    EMPTY_PASSES = "empty_passes"
    INFRA_ERROR = "infra_error"


@dataclass(frozen=True)
class SanityResult:
    sanity: Sanity
    reason: str


def _failing(result: RunResult, limit: int = 5) -> str:
    bad = [name for name, status in result.tests.items() if status is not TestStatus.PASSED]
    shown = ", ".join(bad[:limit]) + (f" and {len(bad) - limit} more" if len(bad) > limit else "")
    return shown or result.reason or result.status.value


def check_sanity(gold: Sequence[RunResult], empty: RunResult, *, gold_flaky: bool) -> SanityResult:
    infra = [r for r in [*gold, empty] if r.status is RunStatus.INFRA_ERROR]
    if infra:
        return SanityResult(Sanity.INFRA_ERROR, f"infrastructure error: {infra[0].reason}")
    resolved = sum(1 for r in gold if r.resolved)
    if resolved == 0:
        first = gold[0]
        if first.status is RunStatus.PATCH_FAILED:
            return SanityResult(Sanity.GOLD_FAILS, f"gold patch does not apply: {first.reason}")
        return SanityResult(
            Sanity.GOLD_FAILS, f"gold patch not resolved ({first.status.value}): {_failing(first)}"
        )
    if resolved < len(gold) or gold_flaky:
        return SanityResult(
            Sanity.GOLD_FLAKY, f"gold patch resolved in {resolved} of {len(gold)} runs (flaky)"
        )
    if empty.resolved:
        return SanityResult(
            Sanity.EMPTY_PASSES, "the empty patch is resolved: the tests accept no change at all"
        )
    return SanityResult(Sanity.OK, "gold resolved every time, empty patch rejected")
