"""The 3-node cluster and `HACKAUDIT_BUS_REPLICAS`: streams and their durable consumers are kept
on three nodes, and more copies than the cluster has nodes is a clear error at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nats
import pytest

from hackaudit.shared import bus, subjects
from hackaudit.shared.errors import BusUnavailableError
from hackaudit.shared.nats_server import EmbeddedNats
from hackaudit.shared.settings import BusSettings
from tests.nats_cluster import NatsCluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

REPO_ROOT = Path(__file__).resolve().parents[3]  # where `tests` is importable from


async def test_streams_and_consumers_are_kept_on_three_nodes(
    cluster: NatsCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HACKAUDIT_BUS_REPLICAS", "3")
    settings = BusSettings()
    nc = await nats.connect(cluster.url)
    try:
        js = nc.jetstream()
        await bus.declare_topology(js, settings, [subjects.SANDBOX_RUNS])
        for stream in (subjects.STREAM, subjects.DEAD_LETTER_STREAM):
            info = await js.stream_info(stream)
            assert info.config.num_replicas == 3
            assert info.cluster is not None and info.cluster.leader
            nodes = {info.cluster.leader, *(p.name for p in info.cluster.replicas or [])}
            assert nodes == {node.name for node in cluster.nodes}
        consumer = await js.consumer_info(subjects.STREAM, subjects.SANDBOX_RUNS.durable)
        assert consumer.cluster is not None and len(consumer.cluster.replicas or []) == 2
        # declaring again (every service does at start) changes nothing
        await bus.declare_topology(js, settings, [subjects.SANDBOX_RUNS])
    finally:
        await nc.close()


async def test_more_replicas_than_nodes_is_a_clear_error(
    cluster: NatsCluster, tmp_path: Path
) -> None:
    nc = await nats.connect(cluster.url)
    try:
        with pytest.raises(BusUnavailableError, match="HACKAUDIT_BUS_REPLICAS=5"):
            await bus.declare_topology(nc.jetstream(), BusSettings(bus_replicas=5), [])
    finally:
        await nc.close()

    with EmbeddedNats(tmp_path / "single") as single:
        nc = await nats.connect(single.url)
        try:
            with pytest.raises(BusUnavailableError, match="HACKAUDIT_BUS_REPLICAS=3"):
                await bus.declare_topology(nc.jetstream(), BusSettings(bus_replicas=3), [])
            await bus.declare_topology(nc.jetstream(), BusSettings(), [])  # the default: one
        finally:
            await nc.close()


def test_nodes_do_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from tests.nats_cluster import NatsCluster\n"
        "cluster = NatsCluster(Path(sys.argv[1])).start()\n"
        "print(' '.join(str(n.process.pid) for n in cluster.nodes), flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 3
        parent.kill()  # no chance to stop its nodes
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pids)
    finally:
        if parent.poll() is None:
            parent.kill()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (dead, not yet reaped by init) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))
