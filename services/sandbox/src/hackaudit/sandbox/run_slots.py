"""The sandbox's run slots: every container run waits here for one, and `FairShare` says which
waiting run gets a slot when one frees (see `domain.fair_share` for the order and why).

The service holds more run requests than it has slots (`waiting_requests` beyond
`max_concurrent_runs`), so the policy has runs of several tasks to choose from; each request's
message is kept alive by in-progress acks while its runs wait, exactly as while they run, so
redelivery, idempotency and dead letters behave as before. When the policy keeps a free slot for
short runs, the choice is made again every `recheck_s`, as a task stops counting as active.
While runs wait, the policy is also asked every `recheck_s` whether a long run in a slot should
move to the background (`FairShare.demote`): its `Demotion` is set, so the backend lowers its
container's CPU weight, and its slot goes to a waiting run at once. When no run waits and a slot
is free, a background run returns to it (`FairShare.promote`), and the backend gives it its
weight back.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable

from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.fair_share import FairShare, RunDurations, Running, Waiting

RECHECK_S = 1.0


class RunSlots:
    """At most `policy.slots` runs in slots at once (and `policy.background` beside them),
    started in the policy's order."""

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
        self._demotions: dict[int, Demotion] = {}
        self._recheck: asyncio.TimerHandle | None = None

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def background(self) -> int:
        return sum(1 for r in self._running.values() if r.background)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextlib.asynccontextmanager
    async def turn(self, task: str, kind: str) -> AsyncIterator[Demotion]:
        """Wait for a slot for one run of `task`, hold it for the body (or until the run is
        moved to the background: the `Demotion` given says when), then free it."""
        ticket = next(self._tickets)
        demotion = self._demotions[ticket] = Demotion()
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
            yield demotion
        finally:
            self._finish(ticket, record=True)

    def _finish(self, ticket: int, *, record: bool) -> None:
        self._demotions.pop(ticket, None)
        run = self._running.pop(ticket, None)
        if run is not None and record:
            now = self._clock()
            self.durations.record(run.task, run.kind, now - run.started_at, now)
        self._dispatch()

    def _dispatch(self) -> None:
        """Start the runs the policy picks while slots are free, moving long runs to the
        background and back when the policy says so."""
        for ticket in [t for t, (_, f) in self._waiting.items() if f.done()]:
            del self._waiting[ticket]  # its caller was cancelled while it waited
        while self._start_one() or self._demote_one() or self._promote_one():
            pass
        if self._waiting:
            self._recheck_later()

    def _start_one(self) -> bool:
        waiting = [w for w, _ in self._waiting.values()]
        chosen = self.policy.pick(
            waiting, list(self._running.values()), self.durations, self._clock()
        )
        if chosen is None:
            return False
        _, future = self._waiting.pop(chosen.ticket)
        self._running[chosen.ticket] = Running(chosen.task, chosen.kind, self._clock())
        future.set_result(None)
        return True

    def _demote_one(self) -> bool:
        waiting = [w for w, _ in self._waiting.values()]
        running = list(self._running.values())
        chosen = self.policy.demote(waiting, running, self.durations, self._clock())
        if chosen is None:
            return False
        ticket = next(t for t, r in self._running.items() if r is chosen)
        self._running[ticket] = Running(chosen.task, chosen.kind, chosen.started_at, True)
        self._demotions[ticket].demote()
        return True

    def _promote_one(self) -> bool:
        waiting = [w for w, _ in self._waiting.values()]
        chosen = self.policy.promote(waiting, list(self._running.values()))
        if chosen is None:
            return False
        ticket = next(t for t, r in self._running.items() if r is chosen)
        self._running[ticket] = Running(chosen.task, chosen.kind, chosen.started_at)
        self._demotions[ticket].promote()
        return True

    def _recheck_later(self) -> None:
        if self._recheck is not None and not self._recheck.cancelled():
            return
        loop = asyncio.get_running_loop()

        def again() -> None:
            self._recheck = None
            self._dispatch()

        self._recheck = loop.call_later(self._recheck_s, again)
