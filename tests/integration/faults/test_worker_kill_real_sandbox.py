"""A sandbox worker killed with SIGKILL in the middle of a run, on the real Docker engine: a new
worker takes over, the runs the dead one held come back after the ack wait, the audit completes
with one verdict per task and one result per run, and the dead worker's containers are removed.

The scorer, the attacker and the sandbox are the real services, each its own OS process, on a
3-node JetStream cluster with R3 streams; the tasks are copies of the sandbox tests' calc task.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest
from nats.js.errors import NotFoundError

from hackaudit.shared import bus, subjects
from tests.integration.faults import synthetic
from tests.integration.faults.rig import (
    Services,
    bus_settings,
    check_audit,
    connect,
    publish_all,
    publisher,
    scored_audits,
    wait_until,
)
from tests.integration.sandbox.sandbox_calc import TaskImage
from tests.nats_cluster import NatsCluster

pytestmark = [
    pytest.mark.integration,
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.timeout(150),
]

TASKS = 6


def sandbox_env(tmp: Path, name: str) -> dict[str, str]:
    return {
        "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(tmp / name),
        "HACKAUDIT_SANDBOX_BUILD_IMAGES": "false",
        "HACKAUDIT_SANDBOX_MEMORY_MB": "256",
        "HACKAUDIT_SANDBOX_POOL_SIZE": "1",
        "HACKAUDIT_SANDBOX_MAX_CONCURRENT_RUNS": "2",
        "HACKAUDIT_SANDBOX_TIMEOUT_CAP_S": "60",
        "HACKAUDIT_SANDBOX_SETUP_TIMEOUT_S": "60",
    }


def containers_of(docker_client: object, pid: int) -> list[str]:
    """Sandbox containers that the sandbox process `pid` of this host made and left (one list
    call: containers that other processes remove meanwhile are not inspected)."""
    owner = f"{socket.gethostname()}/{pid}/"
    listed = docker_client.api.containers(  # type: ignore[attr-defined]
        all=True, filters={"label": "hackaudit.sandbox=1"}
    )
    return [
        c["Id"]
        for c in listed
        if (c.get("Labels") or {}).get("hackaudit.sandbox.owner", "").startswith(owner)
    ]


async def test_sandbox_worker_killed_mid_run_loses_nothing(
    tmp_path: Path, cluster: NatsCluster, calc_image: TaskImage, docker_client: object
) -> None:
    started = time.monotonic()
    services = Services(tmp_path, cluster.url)
    nc = await connect(cluster.urls)
    js = nc.jetstream()
    try:
        await bus.declare_topology(js, bus_settings(), [])
        for name in ("scorer", "attacker"):
            services.start(name)
        services.start("worker-1", "sandbox", **sandbox_env(tmp_path, "worker-1"))
        messages = synthetic.ingested("worker-killed", synthetic.tasks(TASKS, calc_image))
        ids = {m.correlation_id for m in messages}
        async with publisher(cluster.urls) as broker:
            await publish_all(broker, [(subjects.TASK_INGESTED, m) for m in messages])

        async def mid_run() -> bool:
            try:
                runs = await js.consumer_info(subjects.STREAM, subjects.SANDBOX_RUNS.durable)
            except NotFoundError:  # the worker has not declared its consumer yet
                return False
            return bool(runs.num_ack_pending) and bool(await scored_audits(js) & ids)

        await wait_until(mid_run, 90, "a verdict in and a run under way", services)
        killed = services.kill("worker-1")
        services.start("worker-2", "sandbox", **sandbox_env(tmp_path, "worker-2"))

        async def done() -> bool:
            return len(await scored_audits(js) & ids) == TASKS

        await wait_until(done, 90, "every task scored", services)
        await asyncio.sleep(1.0)  # a verdict or a run recorded twice would show by now
        check = await check_audit(js, ids, services.results_db)
        assert "sandbox.run" in services.log("worker-2")  # the new worker took over runs
        # the new worker swept the containers the killed one left behind
        assert containers_of(docker_client, killed) == []
    finally:
        services.stop_all()
        await nc.close()
    verdicts = sorted({s.verdict.value for s in check.verdicts.values()})
    print(f"worker killed mid-run: {len(check.verdicts)} verdicts {verdicts}, "
          f"{check.runs_completed} runs, {time.monotonic() - started:.1f}s")  # fmt: skip
