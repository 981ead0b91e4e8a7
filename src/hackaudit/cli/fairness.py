"""`hackaudit bench fairness`: does a slow task hold up the others audited beside it?

Each fast task is audited alone, then every fast task together with the slow one(s) in one
batch; for each fast task the time from publishing to its final verdict (scored, and
re-audited when its repair hardened it) is kept, alone and in the batch. The batch stops once
every fast task has its verdict: the slow tasks are the load, not what is measured. Every
audit starts its services afresh on an embedded NATS server of its own, in a fresh state
folder, so nothing one audit learned (cached runs, timings) speeds up the next.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hackaudit.cli import pipeline, services
from hackaudit.cli.progress import AuditTracker
from hackaudit.shared.contracts import AuditOptions, Task
from hackaudit.shared.settings import BusSettings

POLL_S = 0.2


@dataclass(frozen=True)
class FairnessRow:
    """One fast task's time to its verdict alone and in the mixed batch (None: no verdict
    within the limit)."""

    instance_id: str
    alone_s: float | None
    batch_s: float | None

    @property
    def ratio(self) -> float | None:
        if self.alone_s is None or self.batch_s is None or self.alone_s <= 0:
            return None
        return self.batch_s / self.alone_s

    def within(self, target: float) -> bool:
        return self.ratio is not None and self.ratio <= target


@dataclass(frozen=True)
class FairnessFigures:
    rows: list[FairnessRow]
    batch_wall_s: float
    # Slow task -> seconds to its verdict in the batch, None when it had none when it stopped.
    slow: dict[str, float | None]


def final_verdict(tracker: AuditTracker, correlation_id: str) -> bool:
    """Whether the task's verdict is in and waits for no repair or re-audit."""
    return correlation_id in tracker.scored and not tracker.repair_pending(correlation_id)


async def verdict_times(
    tasks: list[Task],
    wait_for: set[str],
    options: AuditOptions,
    builders: dict[str, services.Builder],
    state_dir: Path,
    limit_s: float,
) -> tuple[dict[str, float], float]:
    """Audit `tasks` in one run of the services; the seconds from publishing to each task's
    final verdict, until every task of `wait_for` has one (or `limit_s` passes); and the
    seconds followed."""
    times: dict[str, float] = {}
    followed = 0.0

    async def follow(tracker: AuditTracker) -> None:
        nonlocal followed
        loop = asyncio.get_running_loop()
        start = loop.time()
        while True:
            followed = loop.time() - start
            for cid, instance_id in tracker.correlation_ids.items():
                if instance_id not in times and final_verdict(tracker, cid):
                    times[instance_id] = followed
            if wait_for <= times.keys() or followed > limit_s:
                return
            await asyncio.sleep(POLL_S)

    settings = BusSettings(state_dir=state_dir)
    await pipeline.follow_audit(tasks, options, settings, builders, follow)
    return times, followed


async def measure(
    fast: list[Task],
    slow: list[Task],
    options: AuditOptions,
    builders: dict[str, services.Builder],
    limit_s: float,
) -> FairnessFigures:
    """Each fast task alone, then the mixed batch (fast and slow tasks published together)."""
    alone: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="hackaudit-fairness-") as scratch:
        root = Path(scratch)
        for n, task in enumerate(fast):
            times, _ = await verdict_times(
                [task], {task.instance_id}, options, builders, root / f"alone-{n}", limit_s
            )
            alone.update(times)
        fast_ids = {t.instance_id for t in fast}
        batch, wall = await verdict_times(
            [*slow, *fast], fast_ids, options, builders, root / "batch", limit_s
        )
    rows = [FairnessRow(t.instance_id, alone.get(t.instance_id), batch.get(t.instance_id))
            for t in fast]  # fmt: skip
    return FairnessFigures(rows, wall, {t.instance_id: batch.get(t.instance_id) for t in slow})
