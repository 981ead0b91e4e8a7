"""The sandbox port the reference pool runs through: every run within what is left of its budget.

The pool's budget (`domain.pool.budget`) is a hard bound, and the pool's runs are asked for from
several places (its own graded runs, the Confirmer's probes, wider suite and gold's runs), so it is
kept here, where every run passes: `BoundedSandbox` counts the seconds of each run it returns,
gives each run a timeout that keeps the pool inside its budget, and raises `OutOfBudget` instead
of sending a run that cannot fit, or after a run that timed out under a timeout shortened to what
was left (its result says nothing about the member). The pool then leaves the member out, with
the reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from hackaudit.attacker.domain.orchestration import GRADED_GOLD
from hackaudit.attacker.domain.pool import budget as pool_budget
from hackaudit.attacker.domain.ports import SandboxPort
from hackaudit.shared.contracts import (
    Candidate,
    RunCompleted,
    RunRequested,
    RunResult,
    RunStatus,
)

# gold's cached runs by key, and the run kind each is gold's own run of (the expected length of a
# member's run of that kind).
_GOLD_KINDS = {GRADED_GOLD: "grade", "probes": "probe"}


class OutOfBudget(Exception):
    """A run the pool's budget cannot pay for (`reason` says which, and what was left)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _longest(results: tuple[RunResult, ...]) -> float | None:
    done = [r.elapsed_s for r in results if r.status is RunStatus.COMPLETED]
    return max(done) if done else None


class BoundedSandbox:
    """A `SandboxPort` that keeps the runs it passes on within `budget_s` sandbox-seconds
    (`seconds`: what they took so far; `text`: the budget as reasons quote it)."""

    def __init__(
        self,
        sandbox: SandboxPort,
        budget_s: float,
        text: str,
        gold: Candidate,
        gold_runs: Mapping[str, tuple[RunResult, ...]],
        gold_duration_s: float | None = None,
        seconds: float = 0.0,
    ) -> None:
        self._sandbox = sandbox
        self.budget_s = budget_s
        self.text = text
        self.seconds = seconds
        self._gold = gold.content_hash
        self._expected: dict[str, float] = {}
        if gold_duration_s:
            self._expected["grade"] = gold_duration_s
        for key, kind in _GOLD_KINDS.items():
            if (found := _longest(gold_runs.get(key, ()))) is not None:
                self._expected[kind] = found
        # Runs that timed out under a shortened timeout: not sent again with no more time.
        self._too_long: dict[str, float] = {}

    async def run(self, request: RunRequested) -> RunCompleted:
        kind = request.invocation.kind
        own = request.timeout_s
        if own is None and kind == "grade":
            own = pool_budget.grade_timeout(self._expected.get("grade"))
        left = self.budget_s - self.seconds
        allowed = pool_budget.allowance(left, request.repeats, kind, own, self._expected.get(kind))
        key = f"{request.candidate.content_hash if request.candidate else ''}:{kind}:" + (
            request.invocation.model_dump_json()
        )
        if allowed.timeout_s is not None and allowed.timeout_s <= self._too_long.get(key, 0.0):
            allowed = pool_budget.Allowance(
                refused=f"has {left:.0f} s left: a run of kind {kind!r} that timed out"
                f" within {self._too_long[key]:.0f} s does not fit"
            )
        if allowed.timeout_s is None:
            raise OutOfBudget(f"{self.text} {allowed.refused}")
        sent = request
        if allowed.timeout_s != request.timeout_s:
            # A new timeout is a new request: its key is derived again.
            sent = RunRequested.model_validate(
                request.model_dump() | {"timeout_s": allowed.timeout_s, "idempotency_key": ""}
            )
        done = await self._sandbox.run(sent)
        self.seconds += sum(r.duration_s for r in done.results)
        self._learn(request, done)
        if allowed.shortened and any(r.status is RunStatus.TIMEOUT for r in done.results):
            self._too_long[key] = allowed.timeout_s
            raise OutOfBudget(
                f"{self.text} had {left:.0f} s left: a run of kind {kind!r} timed out within"
                f" the {allowed.timeout_s:.0f} s left for it"
            )
        return done

    def _learn(self, request: RunRequested, done: RunCompleted) -> None:
        """Gold's own runs tell how long a member's run of the same kind takes."""
        if request.candidate is None or request.candidate.content_hash != self._gold:
            return
        kind = request.invocation.kind
        if kind in _GOLD_KINDS.values() and (found := _longest(done.results)) is not None:
            self._expected[kind] = max(found, self._expected.get(kind, 0.0))
