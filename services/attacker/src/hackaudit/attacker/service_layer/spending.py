"""The sandbox-seconds an attack spends, per run kind.

An attack's budget counts only its candidates' graded runs; confirmation (gold's runs, probes,
the wider suite, coverage runs) costs sandbox time too, and where it goes is what tells whether
a check is worth its price. `SpendingSandbox` passes every request on to the sandbox and adds
each completed run's duration (every repeat) to its kind ("grade", "probe", "suite",
"coverage": the invocation's own name), which the round state keeps and `AttackCompleted`
reports (`BudgetSpent.by_kind`). A run's sandbox-seconds are its time in a run slot; the time
runs went on in the background behind shorter ones (`RunResult.background_s`) is added up
apart (`background`, reported as `BudgetSpent.background_s`), never counted in a budget.
"""

from __future__ import annotations

from collections.abc import Mapping

from hackaudit.attacker.domain.ports import SandboxPort
from hackaudit.shared.contracts import RunCompleted, RunRequested


class SpendingSandbox:
    """A `SandboxPort` that adds up what the runs it passes on took, per run kind (`spent`)."""

    def __init__(
        self,
        sandbox: SandboxPort,
        spent: Mapping[str, float] | None = None,
        background: float = 0.0,
    ) -> None:
        self._sandbox = sandbox
        self.spent: dict[str, float] = dict(spent or {})
        self.background = background

    async def run(self, request: RunRequested) -> RunCompleted:
        done = await self._sandbox.run(request)
        kind = request.invocation.kind
        seconds = sum(r.duration_s for r in done.results)
        self.spent[kind] = round(self.spent.get(kind, 0.0) + seconds, 3)
        self.background = round(self.background + sum(r.background_s for r in done.results), 3)
        return done
