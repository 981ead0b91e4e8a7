"""Which waiting run gets the next free run slot, so that a slow task never holds up the rest.

Every task's runs wait for the same few run slots (`max_concurrent_runs`). Served first come,
first served, one task with long runs (tests that take minutes, a wider suite capped at 600 s,
a gold run repeated three times) fills every slot, and the other tasks' runs of a few seconds
each wait minutes behind it. `FairShare.pick` chooses instead:

1. **per-task share** — among the waiting runs, those of the tasks with the fewest runs in
   progress come first: every task with work waiting gets a slot before any task gets a second;
2. **shortest expected run first** among those (a run whose duration nothing predicts yet
   counts as short, so a new task's first runs start early and show how long it takes);
3. **slots kept for short runs**: a run is *long* when expected to take more than
   `long_factor` times the runs of the quickest active task (one with a run waiting, running or
   finished within `active_window_s`) and more than `long_floor_s`; a task is short when its
   runs are not long. While a short task is active, a long run waits, so the short tasks go at
   the speed they would alone (on a machine of few cores a long run also takes a core from
   them); once it has waited `patience_s` it may take all but one slot. A task nothing is known
   of yet holds at most all but one slot while another task is active, so a slow task's first
   runs (gold's repeats) cannot fill every slot before its speed is known. A batch of tasks
   alike in speed uses every slot, and a long run waits at most `patience_s`;
4. arrival order breaks ties.

A run that has started is never interrupted, but a long one may give its slot back
(`FairShare.demote`): while a short run waits and every slot is taken, the long run in progress
that has gone on longest moves to the *background* — and so does, when a run of another task
arrives, a run of a task nothing is known of yet that took every slot while it was alone (a slow
task's first sanity runs, started before anything else was active), so that it holds all but one
slot as it would have had the other task been active. It goes on at a low CPU weight (the
backend lowers its container's `cpu.shares`, see `cpu_weight`), holds no slot, and the waiting
short run starts in the slot it left. Once no run waits and a slot is free, the background run
going on longest returns to a slot at the normal weight (`FairShare.promote`); it may move out
again. Without this a slow task's run that started before its speed was known (gold's first
sanity run) keeps a slot, and on 2 slots the short tasks beside it get half the slots for as
long as it lasts. Lowering its weight alone frees the CPU, not the slot. Demotion goes by the
policy's notion of long (relative to the quickest active task, above the floor) rather than by
wall time, so under a heavy load a short task's runs, slow in seconds, are not demoted. Why not
pause it instead (`docker pause`): a paused run uses no idle CPU at all, while a weighted one
still takes what the short runs leave (between their runs, while they wait on I/O). Its time in
the background does not count against its timeout (`deadlines`: each deadline moves by it, at
most to 3 times the limit), so a run starved there by CPU-bound short runs does not time out for
lack of CPU. At most `background` runs are in the background at once, so the containers alive
(and their memory) stay bounded by `slots + background`; when the background is full, a long run
keeps its slot as before.

A task's expected run time is the moving average of the durations seen for its runs of the same
invocation kind (else of any kind), and never less than how long its runs in progress have been
going (in a slot or in the background): a task whose current run has been going for a minute is
slow, whatever was seen of it before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

# Weight of the newest duration in a task's moving average.
SMOOTHING = 0.5
# Tasks whose durations are remembered (the least recently active are forgotten first).
REMEMBERED_TASKS = 4096


@dataclass(frozen=True)
class Waiting:
    """A run waiting for a slot: its arrival order, its task, its invocation kind, and since
    when it waits (clock seconds)."""

    ticket: int
    task: str
    kind: str
    since: float = 0.0


@dataclass(frozen=True)
class Running:
    """A run in progress: its task, its invocation kind, since when (clock seconds), and whether
    it was moved to the background (it holds no slot)."""

    task: str
    kind: str
    started_at: float
    background: bool = False


@dataclass
class _TaskTimes:
    by_kind: dict[str, float] = field(default_factory=dict)
    overall: float | None = None
    last_active: float = 0.0


class RunDurations:
    """What was seen of each task's runs: moving averages of their durations (per invocation kind
    and overall) and when the task last finished a run."""

    def __init__(self, remembered: int = REMEMBERED_TASKS) -> None:
        self._tasks: OrderedDict[str, _TaskTimes] = OrderedDict()
        self._remembered = remembered

    def record(self, task: str, kind: str, seconds: float, now: float) -> None:
        times = self._tasks.pop(task, None) or _TaskTimes()
        times.by_kind[kind] = _smoothed(times.by_kind.get(kind), seconds)
        times.overall = _smoothed(times.overall, seconds)
        times.last_active = now
        self._tasks[task] = times
        while len(self._tasks) > self._remembered:
            self._tasks.popitem(last=False)

    def seen(self, task: str, kind: str | None = None) -> float | None:
        """The task's typical run (of `kind` when one was seen, else of any kind)."""
        times = self._tasks.get(task)
        if times is None:
            return None
        return times.by_kind.get(kind, times.overall) if kind else times.overall

    def active_since(self, since: float) -> list[str]:
        """Tasks that finished a run at or after `since`."""
        return [task for task, t in self._tasks.items() if t.last_active >= since]


def _smoothed(previous: float | None, seconds: float) -> float:
    return seconds if previous is None else SMOOTHING * seconds + (1 - SMOOTHING) * previous


@dataclass(frozen=True)
class FairShare:
    """The slot policy (see the module's docstring)."""

    slots: int
    long_factor: float = 5.0
    long_floor_s: float = 10.0
    active_window_s: float = 60.0
    patience_s: float = 120.0
    # Runs in the background at most (0: a run keeps its slot to its end).
    background: int = 0

    def pick(
        self,
        waiting: Sequence[Waiting],
        running: Sequence[Running],
        seen: RunDurations,
        now: float,
    ) -> Waiting | None:
        """The waiting run to start now, or None when none should (no free slot, or only long
        runs wait and the free slots are kept for short ones)."""
        if not waiting or _in_slots(running) >= self.slots:
            return None
        view = _View(self, waiting, running, seen, now)
        in_progress = {task: sum(1 for r in running if r.task == task) for task in view.tasks}
        for run in sorted(
            waiting,
            key=lambda w: (in_progress[w.task], view.expected(w.task, w.kind) or 0.0, w.ticket),
        ):
            if view.may_start(run):
                return run
        return None

    def demote(
        self,
        waiting: Sequence[Waiting],
        running: Sequence[Running],
        seen: RunDurations,
        now: float,
    ) -> Running | None:
        """The run in a slot to move to the background now, or None: when every slot is taken,
        a short run waits and the background has room, the long run going on longest."""
        if not waiting or _in_slots(running) < self.slots:
            return None
        if len(running) - _in_slots(running) >= self.background:
            return None
        view = _View(self, waiting, running, seen, now)
        if all(view.is_long(w.task, w.kind) for w in waiting):
            return None
        long = [r for r in running if not r.background and view.is_long(r.task, r.kind)]
        if not long:
            long = view.over_share()
        return min(long, key=lambda r: r.started_at, default=None)

    def promote(self, waiting: Sequence[Waiting], running: Sequence[Running]) -> Running | None:
        """The run in the background to return to a free slot now, or None: when no run waits,
        the one going on longest."""
        if waiting or _in_slots(running) >= self.slots:
            return None
        background = [r for r in running if r.background]
        return min(background, key=lambda r: r.started_at, default=None)


def _in_slots(running: Sequence[Running]) -> int:
    return sum(1 for r in running if not r.background)


@dataclass(frozen=True)
class _View:
    """The expected durations and the short/long split of one decision."""

    policy: FairShare
    waiting: Sequence[Waiting]
    running: Sequence[Running]
    seen: RunDurations
    now: float

    @property
    def tasks(self) -> set[str]:
        return {w.task for w in self.waiting} | {r.task for r in self.running}

    def expected(self, task: str, kind: str | None = None) -> float | None:
        going = [self.now - r.started_at for r in self.running if r.task == task]
        known = self.seen.seen(task, kind)
        values = [v for v in (known, *going) if v is not None]
        return max(values) if values else None

    @cached_property
    def active(self) -> set[str]:
        """Tasks with a run waiting or running, or that finished one within the window."""
        since = self.now - self.policy.active_window_s
        return self.tasks | set(self.seen.active_since(since))

    @cached_property
    def long_above(self) -> float | None:
        """The expected duration beyond which a run is long (None: nothing is known)."""
        known = [e for task in self.active if (e := self.expected(task)) is not None]
        if not known:
            return None
        return max(self.policy.long_floor_s, self.policy.long_factor * min(known))

    def is_long(self, task: str, kind: str | None = None) -> bool:
        expected, threshold = self.expected(task, kind), self.long_above
        return expected is not None and threshold is not None and expected > threshold

    def may_start(self, run: Waiting) -> bool:
        """A long run leaves every slot to the active short tasks (all but one once it has
        waited `patience_s`)."""
        if self.policy.slots < 2:
            return True
        if not self.is_long(run.task, run.kind):
            return self._unknown_may_start(run.task)
        if not any(not self.is_long(task) for task in self.active):
            return True
        patient = self.now - run.since >= self.policy.patience_s
        keep = self.policy.slots - 1 if patient else self.policy.slots
        long_running = sum(
            1 for r in self.running if not r.background and self.is_long(r.task, r.kind)
        )
        return long_running + 1 <= self.policy.slots - keep

    def over_share(self) -> list[Running]:
        """The runs in slots of a task nothing is known of that holds every slot while another
        task's run waits: it took them while it was the only active task, and it would have
        left one to the other (`_unknown_may_start`) had that one been active then."""
        if self.policy.slots < 2:
            return []
        for task in {r.task for r in self.running}:
            mine = [r for r in self.running if r.task == task and not r.background]
            others_wait = any(w.task != task for w in self.waiting)
            if self.seen.seen(task) is None and len(mine) >= self.policy.slots and others_wait:
                return mine
        return []

    def _unknown_may_start(self, task: str) -> bool:
        """A task nothing is known of takes at most all but one slot while others are active."""
        if self.seen.seen(task) is not None or self.active == {task}:
            return True
        holding = sum(1 for r in self.running if r.task == task and not r.background)
        return holding + 1 <= self.policy.slots - 1
