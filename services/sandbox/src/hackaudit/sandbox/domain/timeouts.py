"""Sizes a run's wall-clock limit from how long the gold patch's tests take.

timeout = clamp(factor × gold duration, floor, cap). Without a gold timing the default applies
(the cap, unless configured otherwise); a request may name its own timeout, which wins.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TimeoutPolicy:
    factor: float = 3.0
    floor_s: float = 30.0
    cap_s: float = 1800.0
    default_s: float | None = None

    def size(self, gold_duration_s: float | None, requested_s: float | None = None) -> float:
        """The timeout for one run, in seconds."""
        if requested_s is not None:
            return requested_s
        if gold_duration_s is None:
            return self.default_s if self.default_s is not None else self.cap_s
        return min(self.cap_s, max(self.floor_s, self.factor * gold_duration_s))
