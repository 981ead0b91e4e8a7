"""A run moved to the background is not timed out for the CPU it was denied there: with two
slots, a CPU-bound run of the slow task (about 2 s of CPU, timeout 12 s) gives its slot to a
short run of another task and goes on at 2 CPU shares, while short runs (two at a time, one
more waiting) keep every core busy for longer than its timeout; its deadline moves by its time
in the background (`domain.deadlines`), so it completes once they are done instead of timing
out. (With one slot, a core is free during each short run's set-up, and the background run gets
its CPU there after all.)"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Coroutine
from typing import Any

import pytest
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, sandbox_settings

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Candidate, RunResult, RunStatus, Task

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

CORES = os.cpu_count() or 1
CPU_S = 2.0
TIMEOUT_S = 12.0
HOG_FOR_S = 15.0

# Imported by the slow task's tests: burns CPU_S seconds of CPU, then fails the run unless its
# container was moved to the background (its weight lowered to 2) meanwhile.
SLOW = f"""
import time
_lowered, _next = False, 0.0
while time.process_time() < {CPU_S}:
    if time.process_time() >= _next:
        _next += 0.05
        with open("/sys/fs/cgroup/cpu/cpu.shares") as _shares:
            _lowered = _lowered or _shares.read().strip() == "2"
if not _lowered:
    raise RuntimeError("never moved to the background")
"""

# Imported by the fast task's tests: keeps every core busy for 3 s (one process per core).
HOG = f"""
import os, time
_until = time.monotonic() + 3.0
_children = []
for _ in range({CORES - 1}):
    _pid = os.fork()
    if _pid == 0:
        while time.monotonic() < _until:
            pass
        os._exit(0)
    _children.append(_pid)
while time.monotonic() < _until:
    pass
for _pid in _children:
    os.waitpid(_pid, 0)
"""


async def _runner(tmp: object, isolation: str) -> Runner:
    settings = sandbox_settings(
        tmp,  # type: ignore[arg-type]
        isolation=isolation,
        cpus=float(CORES),
        max_concurrent_runs=2,
        background_runs=1,
        long_run_cpu_after_s=None,
        long_run_factor=1.1,
        long_run_floor_s=1.0,
        long_run_cpu_shares=2,
    )
    runner = bootstrap(settings)
    await runner.start()
    return runner


async def _timed(run: Coroutine[Any, Any, RunResult]) -> tuple[RunResult, float]:
    """`run`'s result, and when it ended (`time.monotonic`)."""
    result = await run
    return result, time.monotonic()


async def _hog_until(runner: Runner, task: Task, hog: Candidate, start: float) -> int:
    """Runs `hog` one after another until HOG_FOR_S after `start`; how many ran."""
    runs = 0
    while time.monotonic() - start < HOG_FOR_S:
        await runner.run_once(task, hog, timeout_s=60)
        runs += 1
    return runs


@pytest.mark.parametrize("isolation", ["container", "warm"])
async def test_a_cpu_starved_background_run_completes_instead_of_timing_out(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage, isolation: str
) -> None:
    runner = await _runner(tmp_path_factory.mktemp("background-deadline"), isolation)
    slow = calc_task(calc_image, instance_id="slow__slow-1")
    fast = calc_task(calc_image, instance_id="fast__fast-1")
    hog = files_candidate(ops_with(HOG, fixed=True), "fast__fast-1")
    quick = files_candidate(ops_with("", fixed=True), "fast__fast-1")
    starved = files_candidate(ops_with(SLOW, fixed=True), "slow__slow-1")
    try:
        warmup = await runner.run_once(fast, quick, timeout_s=60)
        assert warmup.resolved is True, warmup.log_tail
        start = time.monotonic()
        long = asyncio.create_task(_timed(runner.run_once(slow, starved, timeout_s=TIMEOUT_S)))
        await asyncio.sleep(1.0)
        # Two short runs in the slots and one waiting, until HOG_FOR_S: the cores stay busy
        # (one run's set-up is covered by the other's busy loop), and the slow run stays out.
        hogs = await asyncio.gather(*(_hog_until(runner, fast, hog, start) for _ in range(3)))
        result, ended = await long
        ended -= start
    finally:
        await runner.close()
    assert sum(hogs) >= 4, hogs
    assert result.status is RunStatus.COMPLETED, (result.status, result.reason, ended)
    assert result.resolved is True
    assert ended > TIMEOUT_S + 2, ended  # it did outlive its wall-clock timeout
