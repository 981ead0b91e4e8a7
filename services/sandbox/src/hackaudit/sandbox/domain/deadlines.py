"""A run's deadlines, moved by the time it spends in the background, so that giving its slot
back never turns into a timeout.

A long run that gives its slot back to a short run (`fair_share`) goes on in the background at
2 of Docker's 1024 CPU shares: while CPU-bound short runs keep every core busy, it gets next to
no CPU. Held to its wall-clock limit, it would then time out for lack of CPU, and a timeout
changes what the run means (a candidate's graded run that times out counts as blocked, a gold
run that times out is no evidence): the scheduling would change outcomes. So time in the
background does not count, as if the run were paused for it: each phase's deadline (setup,
tests, report; see `execution.RunPlan`) moves by the time the run spent in the background
during that phase.

A run returns to a slot (at the normal weight) once no run waits and a slot is free, and may
move to the background again later: only its times there count.

Bounded: no phase lasts more than `MAX_STRETCH` (3) times its own limit in all, so a run that
hangs in the background still ends, and the containers alive stay bounded in time as well as
in number. The time is the background's whole time, not the CPU the run was denied: between
short runs, and when they wait on I/O, a background run gets CPU it is not charged for, which
the bound keeps small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# A time in the background: (from, until), until None while it lasts (clock seconds).
Interval = tuple[float, float | None]

# A phase lasts at most this many times its limit, however long the run is in the background.
MAX_STRETCH = 3.0


@dataclass(frozen=True)
class PhaseDeadline:
    """The deadline of one phase of a run: `limit_s` seconds from `started`, plus the time the
    run has spent in the background since, at most `stretch` × `limit_s` (clock seconds)."""

    started: float
    limit_s: float
    stretch: float = MAX_STRETCH

    def __post_init__(self) -> None:
        if self.limit_s < 0:
            raise ValueError("limit_s must be >= 0")
        if self.stretch < 1:
            raise ValueError("stretch must be >= 1")

    def at(self, now: float, background: Sequence[Interval] = ()) -> float:
        """The deadline as of `now` for a run that was in the background during `background`
        ((from, until) pairs, until None: it is there still)."""
        moved = time_in(background, self.started, now)
        bound = self.started + self.stretch * self.limit_s
        return min(self.started + self.limit_s + moved, bound)

    def passed(self, now: float, background: Sequence[Interval] = ()) -> bool:
        return now >= self.at(now, background)

    def left(self, now: float, background: Sequence[Interval] = ()) -> float:
        """Seconds from `now` to the deadline (negative once it passed)."""
        return self.at(now, background) - now


def time_in(background: Sequence[Interval], start: float, end: float) -> float:
    """Seconds of `background` within [start, end]."""
    return sum(_overlap(start, end, since, until) for since, until in background)


def _overlap(start: float, end: float, since: float, until: float | None) -> float:
    """Seconds of [since, until or end] within [start, end]."""
    return max(0.0, min(end, end if until is None else until) - max(start, since))
