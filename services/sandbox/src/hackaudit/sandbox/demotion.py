"""The word the run slots send a run in progress when they move it to the background and back.

A long run that gives its slot back to a waiting short run (`domain.fair_share`) goes on, but
at a low CPU weight; once no run waits and a slot is free, it returns to a slot at the normal
weight. The slots decide (on the event loop), the container backend acts (in the thread that
reads the run). `Demotion` carries those moves between them: the backend registers what to do
on each move, the slots call `demote` and `promote`, and a run demoted before the backend
registered (a retry in a fresh container) is acted on at once. It also keeps when the run was in
the background (on the `time.monotonic` clock), so the backend can move the run's deadline by
that time (`domain.deadlines`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hackaudit.sandbox.domain.deadlines import Interval


class Demotion:
    """Whether a run is in the background now, and since when it was there; callbacks run in
    the caller's thread (so they must not block: a backend starts its own thread for a Docker
    call)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._intervals: list[Interval] = []
        self._callbacks: list[Callable[[bool], None]] = []

    @property
    def demoted(self) -> bool:
        """In the background now."""
        return self.since is not None

    @property
    def since(self) -> float | None:
        """When the run moved to the background (`time.monotonic`), None while it is in a slot."""
        intervals = self._intervals
        return intervals[-1][0] if intervals and intervals[-1][1] is None else None

    def background(self) -> tuple[Interval, ...]:
        """The run's times in the background: (from, until), until None for the current one."""
        with self._lock:
            return tuple(self._intervals)

    def when_moved(self, callback: Callable[[bool], None]) -> None:
        """Call `callback(in the background)` on every move (at once, when it is there now)."""
        with self._lock:
            self._callbacks.append(callback)
            now = self.demoted
        if now:
            callback(True)

    def demote(self) -> None:
        self._move(True)

    def promote(self) -> None:
        self._move(False)

    def _move(self, background: bool) -> None:
        with self._lock:
            if self.demoted == background:
                return
            now = time.monotonic()
            if background:
                self._intervals.append((now, None))
            else:
                self._intervals[-1] = (self._intervals[-1][0], now)
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback(background)
