"""A sandbox worker started as in a container (`python -m hackaudit.sandbox`, metrics port set)
counts and times the real test runs it makes, reports itself ready once it consumes, and names
itself and its version in `hackaudit_build_info`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nats
import pytest
from faststream.nats import NatsBroker
from prometheus_client.parser import text_string_to_metric_families
from sandbox_calc import TaskImage, calc_task

from hackaudit.shared import bus, metrics, subjects
from hackaudit.shared.contracts import Candidate, RunCompleted, RunPurpose, RunRequested
from hackaudit.shared.nats_server import free_port
from hackaudit.shared.settings import BusSettings

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.timeout(180)]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def samples(text: str, name: str) -> dict[str, float]:
    """`name`'s samples by their `outcome` label."""
    return {
        s.labels.get("outcome", ""): float(s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name
    }


async def test_worker_counts_and_times_its_runs(
    nats_url: str, calc_image: TaskImage, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = os.environ | {
        "NATS_URL": nats_url,
        "HACKAUDIT_STATE_DIR": str(tmp_path / "state"),
        "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
        "HACKAUDIT_SANDBOX_POOL_SIZE": "0",
        "HACKAUDIT_METRICS_PORT": str(port),
        "HACKAUDIT_METRICS_HOST": "127.0.0.1",
        "HACKAUDIT_METRICS_LAG_INTERVAL_S": "0.5",
    }
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "hackaudit.sandbox"], env=env, stdout=log, stderr=log
    )
    task = calc_task(calc_image)
    request = RunRequested(
        correlation_id="metrics/1", task=task, purpose=RunPurpose.GOLD,
        candidate=Candidate.gold(task), requested_by="attacker", repeats=2,
    )  # fmt: skip
    nc = await nats.connect(nats_url)
    got: list[RunCompleted] = []

    async def collect(msg: nats.aio.msg.Msg) -> None:
        got.append(RunCompleted.model_validate_json(msg.data))

    try:
        await nc.subscribe(subjects.run_completed_subject("attacker"), cb=collect)
        deadline = time.monotonic() + 60
        while True:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-2000:]
            try:
                if (await asyncio.to_thread(get, f"{base}/readyz"))[0] == 200:
                    break
            except OSError:
                pass  # not listening yet
            assert time.monotonic() < deadline, "the worker never became ready"
            await asyncio.sleep(0.3)
        _, before = await asyncio.to_thread(get, f"{base}/metrics")
        assert samples(before, "hackaudit_sandbox_runs_total")["completed"] == 0
        builds = [
            s.labels
            for family in text_string_to_metric_families(before)
            for s in family.samples
            if s.name == "hackaudit_build_info" and s.value == 1
        ]
        assert builds == [{"service": "sandbox", "version": metrics.installed_version()}]

        publisher = NatsBroker(nats_url, logger=None)
        await publisher.connect()
        await bus.declare_topology(publisher.config.connection_state.stream, BusSettings(), [])
        await bus.publish(publisher, subjects.RUN_REQUESTED, request)
        await publisher.stop()
        for _ in range(240):
            if got:
                break
            await asyncio.sleep(0.5)
        assert got, (tmp_path / "worker.log").read_text()[-2000:]
        _, after = await asyncio.to_thread(get, f"{base}/metrics")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
        await nc.close()

    done = got[0]
    assert [r.status.value for r in done.results] == ["completed", "completed"]
    runs = samples(after, "hackaudit_sandbox_runs_total")
    assert runs["completed"] == 2 and sum(runs.values()) == 2
    assert samples(after, "hackaudit_sandbox_run_duration_seconds_count")["completed"] == 2
    took = samples(after, "hackaudit_sandbox_run_duration_seconds_sum")["completed"]
    assert took == pytest.approx(sum(r.duration_s for r in done.results))
    assert took > 0
