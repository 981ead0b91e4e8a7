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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hackaudit.cli import pipeline, services
from hackaudit.cli.progress import AuditTracker
from hackaudit.shared.contracts import AuditOptions, Task
from hackaudit.shared.settings import BusSettings

POLL_S = 0.2


@dataclass(frozen=True)
class FairnessRow:
    """One fast task's time to its verdict alone, in the mixed batch, and in a batch of the fast
    tasks only (None: no verdict within the limit, or not measured)."""

    instance_id: str
    alone_s: float | None
    batch_s: float | None
    # In a batch of the fast tasks only (measured on request): their own contention, apart from
    # the slow task's.
    fast_only_s: float | None = None

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
    *,
    fast_batch: bool = False,
    say: Callable[[str], None] = lambda line: None,
) -> FairnessFigures:
    """Each fast task alone, with `fast_batch` the fast tasks together without the slow ones,
    then the mixed batch (fast and slow tasks published together); `say` hears each phase's
    result as it is measured."""
    alone: dict[str, float] = {}
    together: dict[str, float] = {}
    fast_ids = {t.instance_id for t in fast}
    with tempfile.TemporaryDirectory(prefix="hackaudit-fairness-") as scratch:
        root = Path(scratch)
        for n, task in enumerate(fast):
            times, _ = await verdict_times(
                [task], {task.instance_id}, options, builders, root / f"alone-{n}", limit_s
            )
            alone.update(times)
            say(f"alone: {task.instance_id} {_when(times.get(task.instance_id))}")
        if fast_batch:
            together, _ = await verdict_times(
                fast, fast_ids, options, builders, root / "fast", limit_s
            )
            say("fast tasks together: " + _whens(fast, together))
        batch, wall = await verdict_times(
            [*slow, *fast], fast_ids, options, builders, root / "batch", limit_s
        )
        say("mixed batch: " + _whens(fast, batch))
    rows = [
        FairnessRow(t.instance_id, alone.get(t.instance_id), batch.get(t.instance_id),
                    together.get(t.instance_id))
        for t in fast
    ]  # fmt: skip
    return FairnessFigures(rows, wall, {t.instance_id: batch.get(t.instance_id) for t in slow})


def _when(seconds: float | None) -> str:
    return "no verdict" if seconds is None else f"verdict at {seconds:.1f}s"


def _whens(tasks: list[Task], times: dict[str, float]) -> str:
    return ", ".join(f"{t.instance_id} {_when(times.get(t.instance_id))}" for t in tasks)
