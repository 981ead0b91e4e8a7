"""The sandbox as a service on a real NATS server: a worker killed in the middle of a run loses
nothing — the run is redelivered to another worker and its result is recorded once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import nats
import pytest
from faststream.nats import NatsBroker
from sandbox_calc import TaskImage, calc_task

from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import Candidate, RunCompleted, RunPurpose, RunRequested
from hackaudit.shared.settings import BusSettings

pytestmark = [pytest.mark.integration, pytest.mark.docker]

SETTINGS = BusSettings(ack_wait_s=3.0, heartbeat_s=1.0, max_deliveries=3)


def start_worker(nats_url: str, tmp: Path, name: str) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "NATS_URL": nats_url,
        "HACKAUDIT_ACK_WAIT_S": "3",
        "HACKAUDIT_HEARTBEAT_S": "1",
        "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(tmp / name),
        "HACKAUDIT_SANDBOX_POOL_SIZE": "0",
        "HACKAUDIT_SANDBOX_MEMORY_MB": "256",
    }
    log = (tmp / f"{name}.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "hackaudit.sandbox"], env=env, stdout=log, stderr=log
    )


async def test_killed_worker_loses_no_run_and_the_result_is_recorded_once(
    nats_url: str, calc_image: TaskImage, tmp_path: Path
) -> None:
    # the tests sleep first, so the run is still going when its worker is killed
    task = calc_task(calc_image, test_command="sleep 6; python -m pytest -rA -p no:cacheprovider")
    request = RunRequested(
        correlation_id="kill/1", task=task, purpose=RunPurpose.GOLD,
        candidate=Candidate.gold(task), requested_by="attacker",
    )  # fmt: skip
    nc = await nats.connect(nats_url)
    got: list[RunCompleted] = []

    async def collect(msg: nats.aio.msg.Msg) -> None:
        got.append(RunCompleted.model_validate_json(msg.data))

    await nc.subscribe(subjects.run_completed_subject("attacker"), cb=collect)
    first = start_worker(nats_url, tmp_path, "first")
    second: subprocess.Popen[bytes] | None = None
    try:
        publisher = NatsBroker(nats_url, logger=None)
        await publisher.connect()
        await bus.declare_topology(publisher.config.connection_state.stream, SETTINGS, [])
        await asyncio.sleep(3.0)  # the worker is up and has its consumer
        await bus.publish(publisher, subjects.RUN_REQUESTED, request)
        await asyncio.sleep(3.0)  # the run is under way, its tests sleeping
        assert got == []
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)

        second = start_worker(nats_url, tmp_path, "second")
        for _ in range(120):
            if got:
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(2.0)  # anything recorded twice would show now
        info = await nc.jetstream().stream_info(
            subjects.STREAM, subjects_filter=subjects.run_completed_subject("attacker")
        )
        await publisher.stop()
    finally:
        for worker in (first, second):
            if worker is not None and worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=30)
        await nc.close()

    assert len(got) == 1, (tmp_path / "second.log").read_text()[-2000:]
    done = got[0]
    assert done.request_key == request.idempotency_key
    assert done.result.status.value == "completed" and done.result.resolved is True
    assert info.state.subjects == {subjects.run_completed_subject("attacker"): 1}
