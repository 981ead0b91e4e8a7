"""A run whose processes outlive the final kill is flagged and says so, in both isolation modes.

A candidate's processes run as the run's uid, which the wrapper's `kill -KILL -1` reaches, so the
test makes the survivor from outside: a process of a helper container sharing the run
container's process namespace, whose effective uid is the run's, so that the wrapper's scan
sees it, but whose real uid is root, so that the wrapper's kill cannot end it. The run it is left in
must carry `processes_left` and a note; the next run must not (a new container in container
mode, and in warm mode the reset discards the container it finds the process in).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from docker.errors import APIError
from sandbox_calc import TaskImage, calc_task, diff_candidate, running

from hackaudit.sandbox.adapters.docker_backend import LABEL, OWNER_LABEL
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import RunStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

LINGER = "import os, time; os.setresuid(0, 1000, 0); time.sleep(120)"


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["container", "warm"])
async def sandbox(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> AsyncIterator[Runner]:
    mode = str(request.param)
    async with running(
        tmp_path_factory.mktemp(f"survivors-{mode}"),
        isolation=mode,
        max_concurrent_runs=1,
        warm_per_run=1,
    ) as runner:
        yield runner


def _linger_in_every_container(client: Any, image: str, helpers: list[Any]) -> int:
    """Leaves the lingering process in every running container this test process made, from a
    helper container of the test's own that shares the container's process namespace (and has
    the engine's default capabilities, which the sandbox's containers do not)."""
    mine = f"{socket.gethostname()}/{os.getpid()}/"
    count = 0
    for entry in client.api.containers(filters={"label": f"{LABEL}=1"}):
        if not (entry.get("Labels") or {}).get(OWNER_LABEL, "").startswith(mine):
            continue
        try:
            helper = client.containers.run(
                image,
                ["python3", "-c", LINGER],
                entrypoint=[],
                user="0",
                pid_mode=f"container:{entry['Id']}",
                network_mode="none",
                detach=True,
            )
        except APIError:  # the container of the run before, going
            continue
        helpers.append(helper)
        count += 1
    return count


async def test_a_process_left_after_the_kill_flags_the_run_and_not_the_next(
    sandbox: Runner, calc_image: TaskImage, docker_client: Any
) -> None:
    task = calc_task(calc_image)
    gold = diff_candidate(task.patch)
    first = await sandbox.run_once(task, gold, timeout_s=60)
    assert first.resolved is True and first.flags.processes_left is False, first.reason

    # the container the next run takes is up (the pool refilled, or the warm one was reset)
    helpers: list[Any] = []
    try:
        for _ in range(100):
            if _linger_in_every_container(docker_client, calc_image.tag, helpers):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("no sandbox container to leave a process in")
        await asyncio.sleep(1.0)
        left = await sandbox.run_once(task, gold, timeout_s=60)
        after = await sandbox.run_once(task, gold, timeout_s=60)
    finally:
        for helper in helpers:
            helper.remove(force=True)

    assert left.status is RunStatus.COMPLETED and left.resolved is True, left.reason
    assert left.flags.processes_left is True, left.reason
    assert "outlived the final kill" in left.reason
    assert after.status is RunStatus.COMPLETED and after.resolved is True, after.reason
    assert after.flags.processes_left is False, after.reason
