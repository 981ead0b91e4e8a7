"""Faults during audits of a few dozen tasks on a 3-node JetStream cluster with R3 streams:
the NATS node that leads the stream killed and brought back, the scorer killed and restarted,
every message delivered twice. The scorer and the attacker are the real services; the sandbox is
the real sandbox service on a FAKE container engine (`fake_sandbox`: Docker cannot run this many
runs within the CI budget; the real-engine fault is `test_worker_kill_real_sandbox`). Each service
is its own OS process; the module's tests share the cluster and the processes, each test auditing
its own tasks.

Each time: the audit completes, every task has exactly one verdict — the same as its undisturbed
copies — every run request is answered exactly once, and no message reaches the dead letters.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from nats.aio.client import Client
from nats.js import JetStreamContext

from hackaudit.shared import bus, subjects
from tests.integration.faults import synthetic
from tests.integration.faults.rig import (
    TEST_COPY_HEADER,
    AuditCheck,
    Services,
    bus_settings,
    check_audit,
    connect,
    publish_all,
    publisher,
    records,
    same_outcome,
    scored_audits,
    wait_until,
)
from tests.nats_cluster import NatsCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(90)]

TASKS = 24


@dataclass
class Rig:
    cluster: NatsCluster
    services: Services


async def _leader_url(cluster: NatsCluster) -> str:
    """Declare the R3 streams, and name the node that leads the work stream."""
    nc = await connect(cluster.urls)
    try:
        js = nc.jetstream()
        await bus.declare_topology(js, bus_settings(), [])
        info = (await js.stream_info(subjects.STREAM)).cluster
        return cluster.node(info.leader if info and info.leader else "").url
    finally:
        await nc.close()


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("faults")
    with NatsCluster(tmp / "cluster", size=3) as cluster:
        # The services connect to the node that leads the stream: killing it costs the clients
        # their connection and the stream its leader at once.
        services = Services(tmp, asyncio.run(_leader_url(cluster)))
        try:
            for name in ("scorer", "attacker", "fake-sandbox"):
                services.start(name)
            yield Rig(cluster, services)
        finally:
            services.stop_all()


@pytest_asyncio.fixture
async def nc(rig: Rig) -> AsyncIterator[Client]:
    client = await connect(rig.cluster.urls)
    yield client
    await client.close()


async def drained(js: JetStreamContext) -> bool:
    """No durable consumer has a message waiting or unacknowledged."""
    try:
        consumers = await js.consumers_info(subjects.STREAM)
    except Exception:  # a leader being elected: ask again later
        return False
    return all(not c.num_pending and not c.num_ack_pending for c in consumers)


Fault = Callable[[JetStreamContext], Awaitable[None]]


async def audit_through(
    rig: Rig, js: JetStreamContext, name: str, fault: Fault, *, twice: bool = False
) -> AuditCheck:
    """Audit TASKS copies of the calc task as audit `name`; once a quarter of them are scored,
    inject `fault`; then check what the audit left."""
    messages = synthetic.ingested(name, synthetic.tasks(TASKS))
    ids = {m.correlation_id for m in messages}
    async with publisher(rig.cluster.urls) as broker:
        batch = [(subjects.TASK_INGESTED, m) for m in messages]
        await publish_all(broker, batch * (2 if twice else 1))

    async def scored(share: float) -> bool:
        return len(await scored_audits(js) & ids) >= TASKS * share

    await wait_until(lambda: scored(0.25), 60, "a quarter of the tasks scored", rig.services)
    await fault(js)

    async def done() -> bool:
        return await scored(1.0) and await drained(js)

    await wait_until(done, 60, "every task scored and every queue drained", rig.services)
    await asyncio.sleep(1.0)  # a verdict or a run recorded twice would show by now
    return await check_audit(js, ids, rig.services.results_db)


async def test_killed_nats_node_that_leads_the_stream_loses_nothing(rig: Rig, nc: Client) -> None:
    killed: list[str] = []

    async def kill_leader(js: JetStreamContext) -> None:
        info = await js.stream_info(subjects.STREAM)
        assert info.config.num_replicas == 3 and info.cluster is not None
        node = rig.cluster.node(info.cluster.leader or "")
        rig.cluster.kill_node(node)
        killed.append(node.name)
        await asyncio.sleep(3.0)  # the clients fail over, the stream elects a new leader
        rig.cluster.start_node(node)
        await asyncio.to_thread(rig.cluster.wait_ready, [node])

    started = time.monotonic()
    check = await audit_through(rig, nc.jetstream(), "node-killed", kill_leader)
    same_outcome(check)
    info = await nc.jetstream().stream_info(subjects.STREAM)
    assert info.cluster is not None and len(info.cluster.replicas or []) == 2  # it is back
    print(f"node {killed[0]} killed: {len(check.verdicts)} verdicts, {check.runs_completed} runs, "
          f"{time.monotonic() - started:.1f}s")  # fmt: skip


async def test_scorer_killed_mid_audit_and_restarted_loses_nothing(rig: Rig, nc: Client) -> None:
    async def restart_scorer(js: JetStreamContext) -> None:
        old = rig.services.processes.get("scorer") or rig.services.processes["scorer-again"]
        name = next(n for n, p in rig.services.processes.items() if p is old)
        rig.services.kill(name)
        rig.services.start("scorer-again" if name == "scorer" else "scorer", "scorer")

    started = time.monotonic()
    check = await audit_through(rig, nc.jetstream(), "scorer-killed", restart_scorer)
    same_outcome(check)
    print(f"scorer restarted: {len(check.verdicts)} verdicts, {check.runs_completed} runs, "
          f"{time.monotonic() - started:.1f}s")  # fmt: skip


async def test_every_message_delivered_twice_gives_one_verdict_per_task(
    rig: Rig, nc: Client
) -> None:
    copied: list[int] = []

    async def deliver_again(js: JetStreamContext) -> None:
        ingested = [r for r in await records(js, subjects.TASK_INGESTED) if b"twice/" in r.data]
        assert len(ingested) == TASKS  # each was published twice, with the same Nats-Msg-Id
        # Published again as new messages (a new Nats-Msg-Id): the broker cannot drop these, so
        # the consumers get them a second time, as after a redelivery whose ack was lost.
        again = [
            *ingested,
            *await records(js, f"{subjects.RUN_COMPLETED}.>"),
            *await records(js, subjects.ATTACK_COMPLETED),
        ]
        again = [r for r in again if b"twice/" in r.data]
        for n, record in enumerate(again):
            msg_id = f"{record.headers.get(bus.MSG_ID_HEADER, '')}:copy:{n}"
            await js.publish(
                record.subject, record.data, stream=subjects.STREAM,
                headers={bus.MSG_ID_HEADER: msg_id, TEST_COPY_HEADER: "1"},
            )  # fmt: skip
        copied.append(len(again))

    started = time.monotonic()
    # Every task is also published twice with the same Nats-Msg-Id: the stream keeps one.
    check = await audit_through(rig, nc.jetstream(), "twice", deliver_again, twice=True)
    same_outcome(check)
    assert copied and copied[0] > TASKS
    print(f"{copied[0]} messages delivered again: {len(check.verdicts)} verdicts, "
          f"{check.runs_completed} runs, {time.monotonic() - started:.1f}s")  # fmt: skip
