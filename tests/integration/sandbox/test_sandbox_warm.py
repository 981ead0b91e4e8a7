"""The hostile-candidate tests again, on warm containers (`isolation = "warm"`): every run by
`docker exec` in a reused container, so "the next run starts clean" is the reset's doing."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, sandbox_settings
from test_sandbox_hostile import *  # noqa: F403 - the same tests, with the fixture below
from test_sandbox_hostile import PLANT_FILTER, pytestmark  # noqa: F401

from hackaudit.sandbox.adapters.docker_backend import OWNER_LABEL
from hackaudit.sandbox.adapters.warm_backend import WarmDockerBackend
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Candidate, RunStatus


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> AsyncIterator[Runner]:
    """A runner with warm containers; one at a time, so each test's probe reuses the container
    the hostile run left (when its reset succeeded)."""
    settings = sandbox_settings(
        tmp_path_factory.mktemp("warm"), isolation="warm", max_concurrent_runs=1, warm_per_run=1
    )
    runner = bootstrap(settings)
    await runner.start()
    yield runner
    await runner.close()


# Traces only a reused container could carry: the places a fresh container gets anew, a
# directory its owner made unreadable, and a System V shared memory segment.
HIDE = """
import ctypes, os
for _d in ("/dev/shm", "/var/tmp", "/tmp"):
    with open(os.path.join(_d, "hackaudit-trace"), "w") as _f:
        _f.write("x")
os.makedirs("/tmp/hackaudit-locked/inner", exist_ok=True)
os.chmod("/tmp/hackaudit-locked", 0)
os.makedirs("/testbed/calc/hackaudit-locked", exist_ok=True)
os.chmod("/testbed/calc/hackaudit-locked", 0)
with open("/testbed/calc/__init__.py", "a") as _f:
    _f.write("\\nHACKAUDIT_TRACE = 1\\n")
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.shmget(0x48414B41, 4096, 0o1600) < 0:
    raise OSError(ctypes.get_errno(), "shmget")
"""

SEEK = """
import ctypes, os
_left = [p for p in ("/dev/shm/hackaudit-trace", "/var/tmp/hackaudit-trace",
                     "/tmp/hackaudit-trace", "/tmp/hackaudit-locked",
                     "/testbed/calc/hackaudit-locked") if os.path.lexists(p)]
if "HACKAUDIT_TRACE" in open("/testbed/calc/__init__.py").read():
    _left.append("calc/__init__.py edited")
if ctypes.CDLL(None).shmget(0x48414B41, 0, 0) >= 0:
    _left.append("shm segment")
if _left:
    raise RuntimeError("dirty warm container: " + ", ".join(_left))
"""


async def test_a_reused_container_carries_nothing_over(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    backend = sandbox.backend
    assert isinstance(backend, WarmDockerBackend)
    task = calc_task(calc_image)
    hidden = await sandbox.run_once(task, files_candidate(ops_with(HIDE, fixed=True)), timeout_s=60)
    created = backend.counts["created"]
    reused = backend.counts["reused"]
    probe = await sandbox.run_once(task, files_candidate(ops_with(SEEK, fixed=True)), timeout_s=60)

    assert hidden.status is RunStatus.COMPLETED and hidden.resolved is True, hidden.log_tail
    assert backend.counts["created"] == created  # the probe ran in the container HIDE used...
    assert backend.counts["reused"] == reused + 1
    assert probe.status is RunStatus.COMPLETED, probe.reason
    assert probe.resolved is True, probe.log_tail  # ...and found none of its traces


async def test_harness_style_image_runs_warm_and_nothing_outlives_the_runner(
    docker_client: Any, conda_image: TaskImage
) -> None:
    """/testbed owned by root and a conda `activate` script, as in `sweb.eval.*` images; after
    `close` no container of the runner is left."""
    settings = sandbox_settings(Path(tempfile.mkdtemp(prefix="hackaudit-warm-")), isolation="warm")
    runner = bootstrap(settings)
    await runner.start()
    task = calc_task(conda_image)
    try:
        gold, empty = [
            await runner.run_once(task, c, timeout_s=60)
            for c in (Candidate.gold(task), Candidate.empty(task))
        ]
        owner = runner.backend._owner  # type: ignore[attr-defined]
    finally:
        await runner.close()
    left = docker_client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})

    assert gold.status is RunStatus.COMPLETED and gold.resolved is True, gold.log_tail
    assert empty.status is RunStatus.COMPLETED and empty.resolved is False
    assert left == []


# What `docker exec` processes must inherit from the container: no capabilities (not even in
# the bounding set), no-new-privileges, the seccomp filter, the 1 GB file-size cap, a read-only
# root.
LOCKED = """
import resource
_status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines()
               if ":\\t" in line)
_wrong = [k for k, v in (("CapEff", "0000000000000000"), ("CapBnd", "0000000000000000"),
                         ("NoNewPrivs", "1"), ("Seccomp", "2")) if _status.get(k, "").strip() != v]
if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != 1 << 30:
    _wrong.append("fsize")
try:
    open("/usr/hackaudit-trace", "w")
except OSError:
    pass
else:
    _wrong.append("writable root")
if _wrong:
    raise RuntimeError("not locked down: " + ", ".join(_wrong))
"""


async def test_exec_runs_keep_the_container_locked_down(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image)
    result = await sandbox.run_once(
        task, files_candidate(ops_with(LOCKED, fixed=True)), timeout_s=60
    )

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.log_tail


async def test_hostile_then_empty_gives_the_empty_patch_its_outcome_20_times(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    """The clean-filter and ptrace attack (`PLANT_FILTER`), then the empty patch, 20 times on
    the same warm containers: the empty patch is never resolved."""
    task = calc_task(calc_image)
    hostile = files_candidate(ops_with(PLANT_FILTER, fixed=True))
    outcomes = []
    for _ in range(20):
        await sandbox.run_once(task, hostile, timeout_s=60)
        empty = await sandbox.run_once(task, Candidate.empty(task), timeout_s=60)
        outcomes.append((empty.status, empty.resolved))

    assert outcomes == [(RunStatus.COMPLETED, False)] * 20


# Binds a fixed loopback port without SO_REUSEADDR (fails while a connection on it lingers in
# TIME_WAIT), then leaves one there: the side that closes first keeps the TIME_WAIT.
TIME_WAIT = """
import socket
_server = socket.socket()
_server.bind(("127.0.0.1", 47613))
_server.listen()
_client = socket.create_connection(("127.0.0.1", 47613))
_accepted, _ = _server.accept()
_accepted.close()
_client.close()
_server.close()
"""


async def test_a_socket_left_in_time_wait_discards_the_container(
    sandbox: Runner, calc_image: TaskImage
) -> None:
    backend = sandbox.backend
    assert isinstance(backend, WarmDockerBackend)
    task = calc_task(calc_image)
    candidate = files_candidate(ops_with(TIME_WAIT, fixed=True))
    discarded = backend.counts["discarded"]
    first = await sandbox.run_once(task, candidate, timeout_s=60)
    second = await sandbox.run_once(task, candidate, timeout_s=60)

    assert first.status is RunStatus.COMPLETED and first.resolved is True, first.log_tail
    assert second.status is RunStatus.COMPLETED, second.reason
    assert second.resolved is True, second.log_tail  # its bind() found the port free
    assert backend.counts["discarded"] >= discarded + 1  # the first run's container
