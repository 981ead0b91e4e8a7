"""A burst of 1,000 tasks submitted at once is accepted without loss — with a FAKE sandbox engine.

The sandbox is the real sandbox service on a faked container engine (`fake_sandbox`), the scorer
is the real one, each its own OS process, on a 3-node cluster with R3 streams. The burst is
published concurrently, then all of it again (a client retrying its whole submission); the node
that leads the stream is then killed and brought back. The stream must hold each task once, and
every task must be accounted for: taken in by the scorer (its reference runs requested, or
queued in its store behind the audits in flight) or still queued for it on the bus — none
dropped, none dead-lettered. Auditing all 1,000 to the end is not waited
for: the scorer's results store (a DuckDB file opened per step) takes minutes for that here; the
test prints the rate at which the scorer took the burst in.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from hackaudit.scorer.adapters.store import read_results
from hackaudit.scorer.domain.audit import Stage
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import RunPurpose, RunRequested, TaskIngested
from tests.integration.faults import synthetic
from tests.integration.faults.rig import (
    Services,
    bus_settings,
    connect,
    count,
    publish_all,
    publisher,
    records,
    wait_until,
)
from tests.nats_cluster import NatsCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(120)]

BURST = 1000
WORK_S = 8.0  # how long the scorer works on the burst before the accounting


async def test_burst_of_1000_tasks_is_accepted_without_loss_with_fake_sandbox_engine(
    tmp_path: Path, cluster: NatsCluster
) -> None:
    services = Services(tmp_path, cluster.url)
    nc = await connect(cluster.urls)
    js = nc.jetstream()
    try:
        await bus.declare_topology(js, bus_settings(), [])
        services.start("scorer")
        services.start("fake-sandbox")
        messages = synthetic.ingested("burst", synthetic.tasks(BURST))
        ids = {m.correlation_id for m in messages}
        batch = [(subjects.TASK_INGESTED, m) for m in messages]
        started = time.monotonic()
        async with publisher(cluster.urls) as broker:
            await publish_all(broker, batch)
            published_s = time.monotonic() - started
            await publish_all(broker, batch)  # the whole submission again: nothing new
        assert await count(js, subjects.TASK_INGESTED) == BURST

        # the node leading the stream dies and comes back: the accepted burst is kept
        leader = (await js.stream_info(subjects.STREAM)).cluster
        node = cluster.node(leader.leader if leader and leader.leader else "")
        cluster.kill_node(node)
        await asyncio.sleep(2.0)
        cluster.start_node(node)
        await asyncio.to_thread(cluster.wait_ready, [node])

        async def kept() -> bool:
            return await count(js, subjects.TASK_INGESTED) == BURST

        await wait_until(kept, 20, "the burst kept across the node's loss", services)
        await asyncio.sleep(WORK_S)
        services.assert_running()
        services.stop_all()  # the accounting reads a quiet bus and store

        ingested = await records(js, subjects.TASK_INGESTED)
        seq_of = {TaskIngested.model_validate_json(r.data).correlation_id: r.seq for r in ingested}
        assert len(ingested) == BURST and set(seq_of) == ids  # each task kept once
        queue = await js.consumer_info(subjects.STREAM, subjects.SCORER_INGESTED.durable)
        floor = queue.ack_floor.stream_seq if queue.ack_floor else 0
        audits = read_results(services.results_db)
        begun = {a.correlation_id for a in audits}
        # at most the scorer's audits in flight are started at once; the others it took in wait
        # in its store, queued, with no run requested yet
        waiting = {a.correlation_id for a in audits if a.stage is Stage.QUEUED}
        assert begun <= ids and begun, "the scorer began no audit of the burst"
        # what the scorer acknowledged, it began; what it did not, is still queued for it
        taken = {cid for cid, seq in seq_of.items() if seq <= floor}
        assert taken <= begun, f"acknowledged, never begun: {sorted(taken - begun)[:5]}"
        assert queue.num_pending + queue.num_ack_pending == BURST - len(taken)
        requested = Counter(
            (run.correlation_id, run.purpose)
            for r in await records(js, subjects.RUN_REQUESTED)
            if (run := RunRequested.model_validate_json(r.data))
        )
        assert begun - waiting, "the scorer started no audit of the burst"
        for cid in begun:
            expected = 0 if cid in waiting else 1
            assert requested[(cid, RunPurpose.GOLD)] == expected, cid
            assert requested[(cid, RunPurpose.EMPTY)] == expected, cid
        letters = await records(js, f"{subjects.DEAD_LETTER_PREFIX}.>", subjects.DEAD_LETTER_STREAM)
        assert letters == []
    finally:
        services.stop_all()
        await nc.close()
    print(f"burst of {BURST}: published in {published_s:.1f}s; in {WORK_S:g}s the scorer took in "
          f"{len(begun)} audits ({len(waiting)} waiting for a place), {queue.num_pending} still "
          "queued on the bus")  # fmt: skip
