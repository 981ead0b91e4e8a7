"""The sandbox's run slots: every container run waits here for one, and `FairShare` says which
waiting run gets a slot when one frees (see `domain.fair_share` for the order and why).

The service holds more run requests than it has slots (`waiting_requests` beyond
`max_concurrent_runs`), so the policy has runs of several tasks to choose from; each request's
message is kept alive by in-progress acks while its runs wait, exactly as while they run, so
redelivery, idempotency and dead letters behave as before. When the policy keeps a free slot for
short runs, the choice is made again every `recheck_s`, as a task stops counting as active.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable

from hackaudit.sandbox.domain.fair_share import FairShare, RunDurations, Running, Waiting

RECHECK_S = 1.0


class RunSlots:
    """At most `policy.slots` runs at once, started in the policy's order."""

    def __init__(
        self,
        policy: FairShare,
        *,
        clock: Callable[[], float] = time.monotonic,
        recheck_s: float = RECHECK_S,
    ) -> None:
        self.policy = policy
        self.durations = RunDurations()
        self._clock = clock
        self._recheck_s = recheck_s
        self._tickets = itertools.count()
        self._waiting: dict[int, tuple[Waiting, asyncio.Future[None]]] = {}
        self._running: dict[int, Running] = {}
        self._recheck: asyncio.TimerHandle | None = None

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def turn(self, task: str, kind: str) -> AsyncIterator[None]:
        """Wait for a slot for one run of `task`, hold it for the body, then free it."""
        ticket = next(self._tickets)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[ticket] = (Waiting(ticket, task, kind, self._clock()), future)
        self._dispatch()
        try:
            await future
        except BaseException:
            self._waiting.pop(ticket, None)
            self._finish(ticket, record=False)
            raise
        try:
            yield
        finally:
            self._finish(ticket, record=True)

    def _finish(self, ticket: int, *, record: bool) -> None:
        run = self._running.pop(ticket, None)
        if run is not None and record:
            now = self._clock()
            self.durations.record(run.task, run.kind, now - run.started_at, now)
        self._dispatch()

    def _dispatch(self) -> None:
        """Start the runs the policy picks while slots are free."""
        for ticket in [t for t, (_, f) in self._waiting.items() if f.done()]:
            del self._waiting[ticket]  # its caller was cancelled while it waited
        while True:
            chosen = self.policy.pick(
                [w for w, _ in self._waiting.values()],
                list(self._running.values()),
                self.durations,
                self._clock(),
            )
            if chosen is None:
                break
            _, future = self._waiting.pop(chosen.ticket)
            self._running[chosen.ticket] = Running(chosen.task, chosen.kind, self._clock())
            future.set_result(None)
        if self._waiting and len(self._running) < self.policy.slots:
            self._recheck_later()

    def _recheck_later(self) -> None:
        if self._recheck is not None and not self._recheck.cancelled():
            return
        loop = asyncio.get_running_loop()

        def again() -> None:
            self._recheck = None
            self._dispatch()

        self._recheck = loop.call_later(self._recheck_s, again)
