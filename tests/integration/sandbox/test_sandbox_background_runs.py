"""A long run holding the only run slot gives it back to a short run of another task: the short
run completes while the long one still goes on, in the background at the low CPU weight (a
container reads its own `cpu.shares`, cgroup v1: /sys/fs/cgroup/cpu/cpu.shares); once the short
run is done the long one is back in the slot at the normal weight, and passes. With no
background the short run waits for it."""

from __future__ import annotations

import asyncio
import time

import pytest
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, sandbox_settings

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Task

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

SLOW_S = 20
# Imported by the slow task's tests: keeps the run going, then fails it unless its container's
# weight was lowered meanwhile (moved to the background) and is back to normal at the end (back
# in the slot once the short run was done).
SLOW = f"""
import time
_seen = set()
_until = time.monotonic() + {SLOW_S}
while time.monotonic() < _until:
    with open("/sys/fs/cgroup/cpu/cpu.shares") as _file:
        _seen.add(_file.read().strip())
    time.sleep(0.2)
_shares = open("/sys/fs/cgroup/cpu/cpu.shares").read().strip()
if "2" not in _seen:
    raise RuntimeError("cpu.shares was never 2")
if _shares != "1024":
    raise RuntimeError("cpu.shares is " + _shares + " at the end, not 1024")
"""


async def _runner(tmp: object, background: int, isolation: str = "container") -> Runner:
    settings = sandbox_settings(
        tmp,  # type: ignore[arg-type]
        isolation=isolation,
        max_concurrent_runs=1,
        background_runs=background,
        long_run_cpu_after_s=None if background else 3600.0,
        long_run_factor=2.0,
        long_run_floor_s=2.0,
        long_run_cpu_shares=2,
    )
    runner = bootstrap(settings)
    await runner.start()
    return runner


async def _slow_then_fast(runner: Runner, image: TaskImage) -> tuple[float, float, bool]:
    """The slow task's run, then (once it holds the slot) a fast task's: seconds until each
    ended, and whether the slow one passed."""
    slow = calc_task(image, instance_id="slow__slow-1")
    fast: Task = calc_task(image, instance_id="fast__fast-1")
    quick = files_candidate(ops_with("", fixed=True), "fast__fast-1")
    warmup = await runner.run_once(fast, quick, timeout_s=60)  # what a fast run takes
    assert warmup.resolved is True, warmup.log_tail
    start = time.monotonic()
    ended: dict[str, float] = {}

    async def run(task: Task, files: dict[str, str | None]) -> bool:
        candidate = files_candidate(files, task.instance_id)
        result = await runner.run_once(task, candidate, timeout_s=60)
        ended[task.instance_id] = time.monotonic() - start
        return result.resolved is True

    long = asyncio.create_task(run(slow, ops_with(SLOW, fixed=True)))
    await asyncio.sleep(1.0)
    short = await run(fast, ops_with("", fixed=True))
    assert short
    passed = await long
    return ended["slow__slow-1"], ended["fast__fast-1"], passed


@pytest.mark.parametrize("isolation", ["container", "warm"])
async def test_a_long_run_in_the_background_lets_a_short_run_of_another_task_through(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage, isolation: str
) -> None:
    runner = await _runner(tmp_path_factory.mktemp("background"), 1, isolation)
    try:
        slow_s, fast_s, slow_passed = await _slow_then_fast(runner, calc_image)
    finally:
        await runner.close()
    assert fast_s < slow_s - 2, (fast_s, slow_s)
    assert fast_s < SLOW_S, (fast_s, slow_s)
    assert slow_passed  # lowered to 2 shares, then back to 1024


async def test_without_a_background_the_short_run_waits_for_the_long_one(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> None:
    runner = await _runner(tmp_path_factory.mktemp("no-background"), background=0)
    try:
        slow_s, fast_s, slow_passed = await _slow_then_fast(runner, calc_image)
    finally:
        await runner.close()
    assert fast_s > slow_s, (fast_s, slow_s)
    assert not slow_passed  # it kept its slot and the default weight
