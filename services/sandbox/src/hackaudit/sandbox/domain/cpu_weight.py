"""When a run's container gives up its CPU weight, so that a long run that already started does
not keep a whole core from the short runs started beside it.

Fair scheduling (`fair_share`) decides which run starts and never interrupts one. On a machine
of few cores, a CPU-bound run of minutes that started before a short task arrived keeps its core,
and the short task's runs share what is left. Its container's CPU weight (cgroup `cpu.shares`)
drops from `normal_shares` to `low_shares` while the run slots hold it in the background (the
policy's notion of long, see `fair_share`; back to `normal_shares` when it returns to a slot),
or, with no background, once it has gone on for `after_s` (wall time). Weights only matter when
runs compete for a core: a long run alone still gets all the CPU it can use, and when short runs
compete, they get nearly all of it. A container reused for another run (warm isolation) gets
`normal_shares` back before that run.
"""

from __future__ import annotations

from dataclasses import dataclass

# Docker's default weight (`--cpu-shares` unset), and the least the kernel accepts.
NORMAL_SHARES = 1024
LEAST_SHARES = 2


@dataclass(frozen=True)
class CpuWeight:
    """When a run's weight drops (`after_s` seconds into it; None: never) and to what."""

    after_s: float | None
    low_shares: int = LEAST_SHARES
    normal_shares: int = NORMAL_SHARES

    def __post_init__(self) -> None:
        if self.after_s is not None and self.after_s < 0:
            raise ValueError("after_s must be >= 0")
        if not LEAST_SHARES <= self.low_shares <= self.normal_shares:
            raise ValueError("low_shares must be between 2 and normal_shares")

    @property
    def lowers(self) -> bool:
        """Whether long runs lose weight at all."""
        return self.after_s is not None and self.low_shares < self.normal_shares

    def lower_in(self, elapsed_s: float, limit_s: float) -> float | None:
        """Seconds from now until a run `elapsed_s` into it, which ends by `limit_s` at the
        latest (its deadline), should lose weight; 0 for now, None when it never should."""
        if not self.lowers or self.after_s is None or self.after_s >= limit_s:
            return None
        return max(0.0, self.after_s - elapsed_s)

    def shares(self, elapsed_s: float) -> int:
        """The weight of a run `elapsed_s` into it."""
        if self.lowers and self.after_s is not None and elapsed_s >= self.after_s:
            return self.low_shares
        return self.normal_shares
