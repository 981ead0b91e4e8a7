"""Time sources. Caches read the time only through a clock object's ``now()``."""

import time


class MonotonicClock:
    """Seconds from ``time.monotonic``: unaffected by changes of the wall clock."""

    def now(self):
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to; meant for tests and simulations."""

    def __init__(self, start=0.0):
        self._now = float(start)

    def now(self):
        return self._now

    def advance(self, seconds):
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += seconds
        return self._now

    def set(self, when):
        if when < self._now:
            raise ValueError("a clock cannot go backwards")
        self._now = float(when)
