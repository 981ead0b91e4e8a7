"""The services image (deploy/build-image.sh) runs a service against a real NATS server: the
scorer in a container, on the host's network, answers a task with its two reference runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import nats
import pytest
from docker.models.containers import Container
from faststream.nats import NatsBroker
from nats.js.errors import NotFoundError

from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import RunPurpose, RunRequested, Task, TaskIngested

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.docker]

REPO_ROOT = Path(__file__).resolve().parents[3]
BUILD_SCRIPT = REPO_ROOT / "deploy" / "build-image.sh"

TASK = Task(
    instance_id="lib__lib-7",
    repo="x/lib",
    base_commit="abc",
    patch="gold",
    test_patch="tests",
    FAIL_TO_PASS=["t::a"],
)


def docker_client() -> docker.DockerClient:
    """The engine, or a skip (a failure when HACKAUDIT_REQUIRE_DOCKER=1, as in scripts/test)."""
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER") == "1":
            pytest.fail(f"no Docker engine: {exc}")
        pytest.skip(f"no Docker engine: {exc}")
    return client


@pytest.fixture(scope="module")
def service_image() -> str:
    """The image's tag; built once, then found by the hash of its inputs."""
    docker_client()
    started = time.monotonic()
    result = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=1800, check=False
    )
    if result.returncode != 0:
        pytest.fail(f"build-image.sh failed:\n{result.stderr[-4000:]}")
    tag = result.stdout.strip().splitlines()[-1]
    assert tag.startswith("hackaudit/services:")
    print(f"{tag} ready in {time.monotonic() - started:.1f}s")
    return tag


@pytest.fixture
def scorer_container(service_image: str, nats_url: str) -> Iterator[Container]:
    """`python -m hackaudit.scorer` in the image, on the host's network, pointed at `nats_url`."""
    client = docker_client()
    container = client.containers.run(
        service_image,
        ["python", "-m", "hackaudit.scorer"],
        name=f"hackaudit-test-scorer-{uuid.uuid4().hex[:8]}",
        network_mode="host",
        environment={"NATS_URL": nats_url, "HACKAUDIT_HEARTBEAT_S": "1"},
        labels={"org.hackaudit.test": "deploy"},
        detach=True,
    )
    try:
        yield container
    finally:
        container.remove(force=True)
        client.close()


async def wait_for_consumer(url: str, container: Container, durable: str) -> None:
    """Until the containerised service has declared its durable consumer (it is consuming)."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                await js.consumer_info(subjects.STREAM, durable)
                return
            except NotFoundError:
                pass
            container.reload()
            if container.status == "exited":
                break
            await asyncio.sleep(0.2)
        logs = container.logs().decode(errors="replace")[-3000:]
        raise AssertionError(f"{durable} never appeared ({container.status}):\n{logs}")
    finally:
        await nc.close()


@pytest.mark.timeout(1800)
async def test_containerised_scorer_requests_reference_runs(
    nats_url: str, scorer_container: Container
) -> None:
    await wait_for_consumer(nats_url, scorer_container, subjects.SCORER_INGESTED.durable)

    nc = await nats.connect(nats_url)
    requested: list[bytes] = []

    async def record(msg: nats.aio.msg.Msg) -> None:
        requested.append(msg.data)

    await nc.subscribe(subjects.RUN_REQUESTED, cb=record)
    broker = NatsBroker(nats_url, logger=None)
    await broker.connect()
    try:
        await bus.publish(
            broker, subjects.TASK_INGESTED, TaskIngested(correlation_id="deploy/1", task=TASK)
        )
        for _ in range(300):
            if len(requested) >= 2:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)  # nothing more should come
    finally:
        await broker.stop()
        await nc.close()

    logs = scorer_container.logs().decode(errors="replace")
    runs = [RunRequested.model_validate_json(data) for data in requested]
    assert len(runs) == 2, f"expected 2 RunRequested, got {len(runs)}; scorer logs:\n{logs}"
    assert {r.purpose for r in runs} == {RunPurpose.GOLD, RunPurpose.EMPTY}
    assert {r.correlation_id for r in runs} == {"deploy/1"}
    assert all(r.task == TASK for r in runs)
    assert {r.requested_by for r in runs} == {"scorer"}

    # SIGTERM stops the service cleanly: it drains, closes its store and exits 0
    scorer_container.stop(timeout=20)
    exit_code = scorer_container.wait(timeout=30)["StatusCode"]
    logs = scorer_container.logs().decode(errors="replace")
    assert exit_code == 0, logs
    assert "service stopped" in logs


def test_image_runs_nats_server(service_image: str) -> None:
    """The same image can run the NATS server itself (compose's `nats` service)."""
    client = docker_client()
    try:
        output = client.containers.run(
            service_image, ["nats-server", "--version"], network_mode="none", remove=True
        )
    finally:
        client.close()
    assert output.decode().startswith("nats-server: v2.")
