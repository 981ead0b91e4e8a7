"""The run slot policy: per-task shares, shortest expected run first, a slot kept for short runs
while a task of short runs is active, arrival order last."""

from __future__ import annotations

import asyncio

import pytest

from hackaudit.sandbox.adapters.artifact_store import MemoryArtifactStore
from hackaudit.sandbox.adapters.fake_backend import FakeBackend
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.execution import Execution, RunPlan
from hackaudit.sandbox.domain.fair_share import FairShare, RunDurations, Running, Waiting
from hackaudit.sandbox.run_slots import RunSlots
from hackaudit.sandbox.settings import SandboxSettings, Scheduling
from hackaudit.shared.contracts import Candidate, RunPurpose, RunRequested, Task

NOW = 1000.0


def waits(*runs: tuple[str, str]) -> list[Waiting]:
    return [Waiting(ticket, task, kind, since=NOW) for ticket, (task, kind) in enumerate(runs)]


def seen(**typical: float) -> RunDurations:
    durations = RunDurations()
    for task, seconds in typical.items():
        durations.record(task, "grade", seconds, now=NOW - 1)
    return durations


def test_no_free_slot_starts_nothing() -> None:
    policy = FairShare(slots=1)
    running = [Running("slow", "grade", NOW - 5)]
    assert policy.pick(waits(("fast", "grade")), running, seen(), NOW) is None


def test_nothing_waiting_starts_nothing() -> None:
    assert FairShare(slots=2).pick([], [], seen(), NOW) is None


def test_a_task_with_nothing_running_goes_before_a_task_already_running() -> None:
    # slow arrived first, but it already holds a slot
    waiting = waits(("slow", "grade"), ("fast", "grade"))
    running = [Running("slow", "grade", NOW - 1)]
    assert FairShare(slots=2).pick(waiting, running, seen(), NOW) == waiting[1]


def test_shortest_expected_run_first_among_equal_shares() -> None:
    waiting = waits(("slow", "grade"), ("fast", "grade"))
    chosen = FairShare(slots=2).pick(waiting, [], seen(slow=40.0, fast=1.0), NOW)
    assert chosen == waiting[1]


def test_arrival_order_breaks_ties() -> None:
    waiting = waits(("b", "grade"), ("a", "grade"))
    assert FairShare(slots=2).pick(waiting, [], seen(a=1.0, b=1.0), NOW) == waiting[0]


def test_an_unknown_task_counts_as_short() -> None:
    waiting = waits(("known", "grade"), ("new", "grade"))
    assert FairShare(slots=2).pick(waiting, [], seen(known=3.0), NOW) == waiting[1]


def test_a_run_going_for_long_makes_its_task_slow() -> None:
    # nothing seen of "a" yet, but its current run has been going 90 s
    waiting = waits(("a", "grade"), ("b", "grade"))
    running = [Running("a", "grade", NOW - 90), Running("b", "grade", NOW - 1)]
    policy = FairShare(slots=3)
    assert policy.pick(waiting, running, seen(b=5.0), NOW) == waiting[1]


def test_durations_of_the_same_kind_predict_first() -> None:
    durations = seen(t=2.0)
    durations.record("t", "suite", 300.0, now=NOW)
    waiting = waits(("t", "suite"), ("t", "grade"))
    assert FairShare(slots=2).pick(waiting, [], durations, NOW) == waiting[1]


def test_a_long_run_never_takes_the_last_slot_while_short_runs_are_active() -> None:
    policy = FairShare(slots=2)
    running = [Running("slow", "grade", NOW - 45)]
    only_slow = waits(("slow", "grade"))
    # "fast" finished a run a moment ago: it is active, and its next run will want a slot
    assert policy.pick(only_slow, running, seen(slow=45.0, fast=0.5), NOW) is None


def test_a_long_run_waits_while_a_short_task_is_active_however_many_slots_are_free() -> None:
    policy = FairShare(slots=3)
    running = [Running("slow", "grade", NOW - 45)]
    only_slow = waits(("slow", "grade"))
    assert policy.pick(only_slow, running, seen(slow=45.0, fast=0.5), NOW) is None
    assert policy.pick(only_slow, [], seen(slow=45.0, fast=0.5), NOW) is None


def test_a_task_not_yet_seen_leaves_a_slot_to_the_others() -> None:
    policy = FairShare(slots=2)
    # the new task's first gold run is going; its second waits while "fast" is active
    running = [Running("new", "grade", NOW - 1)]
    waiting = waits(("new", "grade"))
    assert policy.pick(waiting, running, seen(fast=0.5), NOW) is None
    # alone, it takes every slot
    assert policy.pick(waiting, running, seen(), NOW) == waiting[0]


def test_as_many_short_tasks_as_slots_keep_every_slot_from_long_runs() -> None:
    policy = FairShare(slots=2, patience_s=120.0)
    waiting = [Waiting(0, "slow", "grade", since=NOW - 30)]
    durations = seen(slow=45.0, fast=0.5, quick=0.8)
    assert policy.pick(waiting, [], durations, NOW) is None


def test_a_long_run_that_waited_its_patience_takes_all_but_one_slot() -> None:
    policy = FairShare(slots=2, patience_s=120.0)
    waiting = [Waiting(0, "slow", "grade", since=NOW - 121)]
    durations = seen(slow=45.0, fast=0.5, quick=0.8)
    assert policy.pick(waiting, [], durations, NOW) == waiting[0]
    running = [Running("slow", "grade", NOW - 60)]
    again = [Waiting(1, "slow", "grade", since=NOW - 121)]
    assert policy.pick(again, running, durations, NOW) is None  # one slot stays short runs'


def test_long_runs_use_every_slot_once_the_short_task_went_quiet() -> None:
    policy = FairShare(slots=2, active_window_s=60.0)
    running = [Running("slow", "grade", NOW - 45)]
    only_slow = waits(("slow", "grade"))
    durations = RunDurations()
    durations.record("fast", "grade", 0.5, now=NOW - 120)
    durations.record("slow", "grade", 45.0, now=NOW - 1)
    assert policy.pick(only_slow, running, durations, NOW) == only_slow[0]


def test_tasks_alike_in_speed_use_every_slot() -> None:
    policy = FairShare(slots=2)
    running = [Running("a", "grade", NOW - 30)]
    waiting = waits(("b", "grade"))
    assert policy.pick(waiting, running, seen(a=40.0, b=35.0), NOW) == waiting[0]


def test_runs_under_the_floor_are_never_long() -> None:
    policy = FairShare(slots=2, long_floor_s=10.0)
    running = [Running("a", "grade", NOW - 6)]
    waiting = waits(("a", "grade"))
    # 8 s is 16 x the other task's runs, but short in absolute terms
    assert policy.pick(waiting, running, seen(a=8.0, b=0.5), NOW) == waiting[0]


def test_one_slot_keeps_nothing_back() -> None:
    policy = FairShare(slots=1)
    waiting = waits(("slow", "grade"))
    assert policy.pick(waiting, [], seen(slow=45.0, fast=0.5), NOW) == waiting[0]


def test_durations_are_a_moving_average_and_forget_the_least_recent_tasks() -> None:
    durations = RunDurations(remembered=2)
    durations.record("a", "grade", 10.0, now=1.0)
    durations.record("a", "grade", 20.0, now=2.0)
    assert durations.seen("a", "grade") == pytest.approx(15.0)
    assert durations.seen("a", "probe") == pytest.approx(15.0)  # any kind when none seen
    durations.record("b", "grade", 1.0, now=3.0)
    durations.record("c", "grade", 1.0, now=4.0)
    assert durations.seen("a") is None
    assert durations.active_since(3.5) == ["c"]


# --- long runs give their slot back ----------------------------------------------------------


def test_a_long_run_gives_its_slot_to_a_waiting_short_run() -> None:
    policy = FairShare(slots=2, background=2)
    slow = Running("slow", "grade", NOW - 30)
    running = [slow, Running("fast", "grade", NOW - 1)]
    waiting = waits(("fast", "grade"))
    durations = seen(fast=2.0)
    assert policy.pick(waiting, running, durations, NOW) is None
    assert policy.demote(waiting, running, durations, NOW) == slow
    moved = [Running("slow", "grade", NOW - 30, background=True), running[1]]
    assert policy.pick(waiting, moved, durations, NOW) == waiting[0]
    assert policy.demote(waiting, moved, durations, NOW) is None  # nothing long in a slot


def test_without_a_background_a_long_run_keeps_its_slot() -> None:
    running = [Running("slow", "grade", NOW - 30), Running("fast", "grade", NOW - 1)]
    waiting = waits(("fast", "grade"))
    assert FairShare(slots=2).demote(waiting, running, seen(fast=2.0), NOW) is None


def test_a_full_background_keeps_the_next_long_run_in_its_slot() -> None:
    policy = FairShare(slots=2, background=1)
    running = [
        Running("slow", "grade", NOW - 60, background=True),
        Running("slow", "grade", NOW - 30),
        Running("fast", "grade", NOW - 1),
    ]
    waiting = waits(("fast", "grade"))
    assert policy.demote(waiting, running, seen(fast=2.0), NOW) is None
    assert (
        FairShare(slots=2, background=2).demote(waiting, running, seen(fast=2.0), NOW) == running[1]
    )


def test_nothing_is_demoted_while_a_slot_is_free_or_nothing_short_waits() -> None:
    policy = FairShare(slots=2, background=2)
    slow = Running("slow", "grade", NOW - 30)
    durations = seen(fast=2.0, slow=45.0)
    assert policy.demote(waits(("fast", "grade")), [slow], durations, NOW) is None
    full = [slow, Running("slow", "grade", NOW - 20)]
    assert policy.demote([], full, durations, NOW) is None
    assert policy.demote(waits(("slow", "grade")), full, durations, NOW) is None


def test_a_task_not_yet_seen_that_took_every_slot_alone_gives_one_back_to_a_new_task() -> None:
    """The slow task's first two sanity runs started while it was the only active task; the
    fast task's first run arrives a moment later: nothing is known of either, none is long, and
    the run of the slow one going on longest moves to the background at once."""
    policy = FairShare(slots=2, background=2)
    first, second = Running("slow", "grade", NOW - 0.2), Running("slow", "grade", NOW - 0.1)
    waiting = waits(("fast", "grade"))
    assert policy.demote(waiting, [second, first], RunDurations(), NOW) == first
    # its own next run waiting, a task already seen, or one slot: nothing moves
    assert policy.demote(waits(("slow", "grade")), [first, second], RunDurations(), NOW) is None
    assert policy.demote(waiting, [first, second], seen(slow=0.5), NOW) is None
    assert FairShare(slots=1, background=1).demote(waiting, [first], RunDurations(), NOW) is None
    # holding one slot of two, it keeps it
    other = Running("other", "grade", NOW - 0.1)
    assert policy.demote(waiting, [first, other], RunDurations(), NOW) is None


def test_runs_slow_in_seconds_but_alike_are_not_demoted() -> None:
    # under load every task's runs take 20-40 s: none is long next to the others
    policy = FairShare(slots=2, background=2)
    running = [Running("a", "grade", NOW - 40), Running("b", "grade", NOW - 25)]
    waiting = waits(("c", "grade"))
    assert policy.demote(waiting, running, seen(a=30.0, b=25.0, c=20.0), NOW) is None


def test_the_long_run_going_on_longest_is_demoted_first() -> None:
    policy = FairShare(slots=2, background=2)
    running = [Running("b", "suite", NOW - 50), Running("a", "grade", NOW - 90)]
    waiting = waits(("fast", "grade"))
    assert policy.demote(waiting, running, seen(fast=1.0), NOW) == running[1]


def test_a_run_in_the_background_holds_no_slot_but_still_counts_its_task_slow() -> None:
    policy = FairShare(slots=2, background=2)
    running = [Running("new", "grade", NOW - 30, background=True)]
    waiting = waits(("new", "grade"), ("fast", "grade"))
    # "new" is slow from its run going in the background: its next run waits, "fast" starts
    assert policy.pick(waiting, running, seen(fast=1.0), NOW) == waiting[1]
    both = [*running, Running("fast", "grade", NOW), Running("fast", "grade", NOW)]
    assert policy.pick(waiting, both, seen(fast=1.0), NOW) is None  # both slots taken


def test_a_background_run_returns_to_a_free_slot_once_nothing_waits() -> None:
    policy = FairShare(slots=2, background=2)
    older = Running("slow", "grade", NOW - 60, background=True)
    newer = Running("slower", "grade", NOW - 30, background=True)
    fast = Running("fast", "grade", NOW - 1)
    assert policy.promote([], [newer, older, fast]) == older  # the one going on longest
    assert policy.promote(waits(("fast", "grade")), [older, fast]) is None  # a run waits
    full = [older, fast, Running("fast", "grade", NOW)]
    assert policy.promote([], full) is None  # no free slot
    assert policy.promote([], [fast]) is None  # none in the background


# --- the slots themselves ------------------------------------------------------------------


async def test_slots_start_a_fast_task_before_the_second_run_of_the_task_holding_one() -> None:
    slots = RunSlots(FairShare(slots=1))
    order: list[str] = []
    release = asyncio.Event()

    async def run(task: str, hold: bool = False) -> None:
        async with slots.turn(task, "grade"):
            order.append(task)
            if hold:
                await release.wait()

    first = asyncio.create_task(run("slow", hold=True))
    await asyncio.sleep(0)
    queued = [asyncio.create_task(run("slow")), asyncio.create_task(run("fast"))]
    await asyncio.sleep(0)
    assert order == ["slow"] and slots.waiting == 2
    release.set()
    await asyncio.gather(first, *queued)
    assert order == ["slow", "fast", "slow"]
    assert slots.running == 0


async def test_a_run_cancelled_while_waiting_leaves_its_place() -> None:
    slots = RunSlots(FairShare(slots=1))
    release = asyncio.Event()
    done: list[str] = []

    async def run(task: str, hold: bool = False) -> None:
        async with slots.turn(task, "grade"):
            if hold:
                await release.wait()
            done.append(task)

    holder = asyncio.create_task(run("a", hold=True))
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(run("b"))
    later = asyncio.create_task(run("c"))
    await asyncio.sleep(0)
    cancelled.cancel()
    release.set()
    await asyncio.gather(holder, later)
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert done == ["a", "c"]
    assert (slots.running, slots.waiting) == (0, 0)


async def test_slots_kept_for_short_runs_go_to_long_ones_once_they_stop() -> None:
    clock = [NOW]
    policy = FairShare(slots=2, active_window_s=5.0)
    slots = RunSlots(policy, clock=lambda: clock[0], recheck_s=0.01)
    slots.durations.record("fast", "grade", 0.5, now=NOW)
    slots.durations.record("slow", "grade", 45.0, now=NOW)
    release = asyncio.Event()
    started: list[str] = []

    async def run(hold: bool) -> None:
        async with slots.turn("slow", "grade"):
            started.append("slow")
            if hold:
                await release.wait()

    holder = asyncio.create_task(run(hold=True))
    second = asyncio.create_task(run(hold=False))
    await asyncio.sleep(0.05)
    assert started == []  # the slots are kept while "fast" is active
    clock[0] = NOW + 10.0  # "fast" went quiet
    await asyncio.wait_for(second, timeout=2.0)
    assert started == ["slow", "slow"]
    release.set()
    await holder


async def test_slots_move_a_long_run_to_the_background_and_back_once_the_short_one_is_done() -> (
    None
):
    clock = [NOW]
    slots = RunSlots(FairShare(slots=1, background=1), clock=lambda: clock[0], recheck_s=0.01)
    slots.durations.record("fast", "grade", 0.5, now=NOW)
    release = asyncio.Event()
    started: list[str] = []
    demotions: list[tuple[bool, int]] = []  # in the background at the end, times moved there

    async def run(task: str, hold: bool) -> None:
        async with slots.turn(task, "grade") as demotion:
            started.append(task)
            if hold:
                await release.wait()
            demotions.append((demotion.demoted, len(demotion.background())))

    slow = asyncio.create_task(run("slow", hold=True))
    await asyncio.sleep(0)
    fast = asyncio.create_task(run("fast", hold=False))
    await asyncio.sleep(0.05)
    assert started == ["slow"]  # the slow run is not long yet: it keeps the only slot
    clock[0] = NOW + 30.0  # it has gone on 30 s: long beside "fast"'s 0.5 s
    await asyncio.wait_for(fast, timeout=2.0)
    assert started == ["slow", "fast"] and demotions == [(False, 0)]
    # Nothing waits any more: the slow run is back in the free slot.
    assert (slots.running, slots.background) == (1, 0)
    release.set()
    await slow
    assert demotions == [(False, 0), (False, 1)]
    assert (slots.running, slots.background) == (0, 0)


async def test_without_a_background_the_short_run_waits_for_the_long_one() -> None:
    clock = [NOW]
    slots = RunSlots(FairShare(slots=1), clock=lambda: clock[0], recheck_s=0.01)
    slots.durations.record("fast", "grade", 0.5, now=NOW)
    release = asyncio.Event()
    started: list[str] = []

    async def run(task: str, hold: bool) -> None:
        async with slots.turn(task, "grade"):
            started.append(task)
            if hold:
                await release.wait()

    slow = asyncio.create_task(run("slow", hold=True))
    await asyncio.sleep(0)
    fast = asyncio.create_task(run("fast", hold=False))
    clock[0] = NOW + 30.0
    await asyncio.sleep(0.05)
    assert started == ["slow"]
    release.set()
    await asyncio.gather(slow, fast)
    assert started == ["slow", "fast"]


# --- settings and wiring -------------------------------------------------------------------


def test_fair_scheduling_holds_waiting_requests_and_fifo_holds_none() -> None:
    fair = SandboxSettings(max_concurrent_runs=2, waiting_requests=6, long_run_patience_s=30)
    assert fair.requests_held() == 10  # 2 slots, 2 in the background, 6 waiting
    assert SandboxSettings(max_concurrent_runs=2, background_runs=0).requests_held() == 8
    policy = fair.fair_share()
    assert policy is not None
    assert (policy.slots, policy.patience_s, policy.background) == (2, 30, 2)
    assert SandboxSettings(background_runs=1).fair_share() == FairShare(slots=2, background=1)
    fifo = SandboxSettings(max_concurrent_runs=2, scheduling=Scheduling.FIFO)
    assert fifo.requests_held() == 2
    assert fifo.fair_share() is None


def test_the_runner_gets_run_slots_only_under_fair_scheduling() -> None:
    fair = bootstrap(SandboxSettings(build_images=False), backend=FakeBackend())
    assert fair.slots is not None and fair.slots.policy.slots == 2
    fifo = bootstrap(
        SandboxSettings(build_images=False, scheduling=Scheduling.FIFO), backend=FakeBackend()
    )
    assert fifo.slots is None


# --- the runner's runs take their turns ----------------------------------------------------


class PacedBackend:
    """The fake engine, each run of an image taking `run_s[image]` seconds; records the order
    runs start in."""

    def __init__(self, run_s: dict[str, float]) -> None:
        self.run_s = run_s
        self.fake = FakeBackend()
        self.started: list[str] = []

    async def start(self) -> None:
        await self.fake.start()

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        self.started.append(plan.image)
        await asyncio.sleep(self.run_s[plan.image])
        return await self.fake.execute(plan, demotion)

    async def close(self) -> None:
        await self.fake.close()


def paced_task(name: str) -> Task:
    return Task.model_validate(
        {
            "instance_id": f"{name}__{name}-1",
            "repo": f"example/{name}",
            "base_commit": "abc123",
            "patch": "",
            "test_patch": "",
            "FAIL_TO_PASS": ["tests/test_m.py::test_a"],
            "PASS_TO_PASS": [],
            "image": f"example/{name}:1",
        }
    )


async def test_a_requests_repeats_take_turns_with_other_tasks_runs() -> None:
    slow, fast = paced_task("slow"), paced_task("fast")
    backend = PacedBackend({"example/slow:1": 0.2, "example/fast:1": 0.01})
    runner = bootstrap(
        SandboxSettings(build_images=False, max_concurrent_runs=1),
        backend=backend,
        artifacts=MemoryArtifactStore(),
    )

    def gold(task: Task, repeats: int) -> RunRequested:
        return RunRequested(
            correlation_id=f"c/{task.instance_id}", task=task, purpose=RunPurpose.GOLD,
            candidate=Candidate.gold(task), repeats=repeats, requested_by="tester",
        )  # fmt: skip

    sanity = asyncio.create_task(runner.complete(gold(slow, 3)))
    await asyncio.sleep(0.05)  # the first of slow's three gold runs holds the only slot
    await runner.complete(gold(fast, 1))
    await sanity
    assert backend.started == ["example/slow:1", "example/fast:1", *["example/slow:1"] * 2]
