"""A run moved to the background is not timed out for the CPU it was denied there: with one
slot, a CPU-bound run of the slow task (about 3 s of CPU, timeout 10 s) gives its slot to a short
run of another task and goes on at 2 CPU shares, while short runs that keep every core busy
follow one another for longer than its timeout; its deadline moves by its time in the
background (`domain.deadlines`), so it completes once they are done instead of timing out."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, sandbox_settings

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import RunStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

CORES = os.cpu_count() or 1
CPU_S = 3.0
TIMEOUT_S = 10.0
HOG_FOR_S = 12.0

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
        max_concurrent_runs=1,
        background_runs=1,
        long_run_cpu_after_s=None,
        long_run_factor=1.1,
        long_run_floor_s=1.0,
        long_run_cpu_shares=2,
    )
    runner = bootstrap(settings)
    await runner.start()
    return runner


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
        long = asyncio.create_task(runner.run_once(slow, starved, timeout_s=TIMEOUT_S))
        await asyncio.sleep(1.0)
        hogs = 0
        while time.monotonic() - start < HOG_FOR_S:
            await runner.run_once(fast, hog, timeout_s=60)
            hogs += 1
        result = await long
        ended = time.monotonic() - start
    finally:
        await runner.close()
    assert hogs >= 2, hogs
    assert result.status is RunStatus.COMPLETED, (result.status, result.reason, ended)
    assert result.resolved is True
    assert ended > TIMEOUT_S + 2, ended  # it did outlive its wall-clock timeout
