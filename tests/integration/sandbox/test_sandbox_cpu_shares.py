"""A run going on past `long_run_cpu_after_s` loses its container's CPU weight while it runs
(cgroup v1: a container reads its own `cpu.shares` at /sys/fs/cgroup/cpu/cpu.shares), and the
warm container it ran in has the normal weight again before its next run."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, sandbox_settings

from hackaudit.sandbox.adapters.docker_backend import OWNER_LABEL
from hackaudit.sandbox.adapters.warm_backend import WarmDockerBackend
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

# Imported by the tests' module: fails the run unless the container's weight is `want` once
# `wait` seconds have passed.
CHECK = """
import time
time.sleep({wait})
_shares = open("/sys/fs/cgroup/cpu/cpu.shares").read().strip()
if _shares != "{want}":
    raise RuntimeError("cpu.shares is " + _shares + ", not {want}")
"""


async def _runner(tmp: object, isolation: str) -> Runner:
    settings = sandbox_settings(
        tmp,  # type: ignore[arg-type]
        isolation=isolation,
        max_concurrent_runs=1,
        warm_per_run=1,
        long_run_cpu_after_s=1.0,
        long_run_cpu_shares=2,
    )
    runner = bootstrap(settings)
    await runner.start()
    return runner


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def warm(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Runner]:
    runner = await _runner(tmp_path_factory.mktemp("cpu-warm"), "warm")
    yield runner
    await runner.close()


async def test_a_long_run_is_lowered_and_its_warm_container_gets_its_weight_back(
    warm: Runner, calc_image: TaskImage, docker_client: object
) -> None:
    backend = warm.backend
    assert isinstance(backend, WarmDockerBackend)
    task = calc_task(calc_image)
    long = files_candidate(ops_with(CHECK.format(wait=3, want=2), fixed=True))
    lowered = await warm.run_once(task, long, timeout_s=60)
    assert lowered.resolved is True, lowered.log_tail
    api = docker_client.api  # type: ignore[attr-defined]
    own = api.containers(filters={"label": f"{OWNER_LABEL}={backend._owner}"})
    assert len(own) == 1
    assert api.inspect_container(own[0]["Id"])["HostConfig"]["CpuShares"] == 1024
    reused = backend.counts["reused"]
    again = await warm.run_once(task, files_candidate(ops_with("", fixed=True)), timeout_s=60)
    assert again.resolved is True, again.log_tail
    assert backend.counts["reused"] == reused + 1
    assert backend.counts["discarded"] == 0


async def test_a_fresh_container_run_is_lowered_too(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> None:
    runner = await _runner(tmp_path_factory.mktemp("cpu-fresh"), "container")
    try:
        task = calc_task(calc_image)
        long = files_candidate(ops_with(CHECK.format(wait=3, want=2), fixed=True))
        result = await runner.run_once(task, long, timeout_s=60)
        assert result.resolved is True, result.log_tail
    finally:
        await runner.close()
