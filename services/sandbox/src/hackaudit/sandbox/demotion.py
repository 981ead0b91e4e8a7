"""The word the run slots send a run in progress when they move it to the background.

A long run that gives its slot back to a waiting short run (`domain.fair_share`) goes on, but
at a low CPU weight: the slots decide (on the event loop), the container backend acts (in the
thread that reads the run). `Demotion` carries that one-way, once-only signal between them: the
backend registers what to do, the slots call `demote`, and a run demoted before the backend
registered (a retry in a fresh container) is acted on at once. It also says since when
(`since`, on the `time.monotonic` clock), so the backend can move the run's deadline by the time
it spends in the background (`domain.deadlines`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Demotion:
    """Set once, when the run gave its slot back; callbacks run in the caller's thread (so they
    must not block: a backend starts its own thread for a Docker call)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._demoted = False
        self._since: float | None = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def demoted(self) -> bool:
        return self._demoted

    @property
    def since(self) -> float | None:
        """When the run moved to the background (`time.monotonic`), None while it has not."""
        return self._since

    def when_demoted(self, callback: Callable[[], None]) -> None:
        """Call `callback` on demotion (now, when it already happened)."""
        with self._lock:
            if not self._demoted:
                self._callbacks.append(callback)
                return
        callback()

    def demote(self) -> None:
        with self._lock:
            if self._demoted:
                return
            self._since = time.monotonic()
            self._demoted = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
