"""Run slots on a real NATS server: with a slow task's run in progress and the same task's next
run queued before a fast task's, the fast task is served first (fair scheduling), where first
come, first served (`fifo`) makes it wait for both slow runs.

Everything but the container engine is the real sandbox service (its app, the bus's delivery
policy, the runner); the engine is the fake one, taking a set time per run and image.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import nats
import pytest
from faststream.nats import NatsBroker
from nats.aio.msg import Msg

from hackaudit.sandbox.adapters.artifact_store import MemoryArtifactStore
from hackaudit.sandbox.adapters.fake_backend import FakeBackend
from hackaudit.sandbox.app import build
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.execution import Execution, RunPlan
from hackaudit.sandbox.settings import SandboxSettings, Scheduling
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import Candidate, RunCompleted, RunPurpose, RunRequested, Task
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings
from tests.integration.faults.fake_sandbox import answer
from tests.integration.sandbox.sandbox_calc import TaskImage, calc_task

pytestmark = [pytest.mark.integration]

SETTINGS = BusSettings(ack_wait_s=5.0, heartbeat_s=1.0, max_deliveries=3)
SLOW_S, FAST_S = 2.0, 0.1


@dataclass
class TimedFakeBackend:
    """The fake engine, taking `run_s[image]` seconds per run; counts the runs under way."""

    run_s: dict[str, float]
    fake: FakeBackend = field(default_factory=lambda: FakeBackend(respond=answer))
    started: list[str] = field(default_factory=list)

    async def start(self) -> None:
        await self.fake.start()

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        self.started.append(plan.image)
        await asyncio.sleep(self.run_s[plan.image])
        return await self.fake.execute(plan, demotion)

    async def close(self) -> None:
        await self.fake.close()


def task(name: str) -> Task:
    image = TaskImage(tag=f"hackaudit-test/{name}:none", base_commit="0" * 40)
    return calc_task(image, instance_id=f"{name}__{name}-1")


def request(t: Task, purpose: RunPurpose) -> RunRequested:
    candidate = Candidate.gold(t) if purpose is RunPurpose.GOLD else Candidate.empty(t)
    return RunRequested(
        correlation_id=f"fair/{t.instance_id}", task=t, purpose=purpose,
        candidate=candidate, requested_by="tester",
    )  # fmt: skip


async def served_order(nats_url: str, scheduling: Scheduling) -> list[str]:
    """Publish slow (gold), then slow (empty) and fast (gold) while the first runs, on a sandbox
    with one run slot; the order their results come back in."""
    slow, fast = task("slow"), task("fast")
    backend = TimedFakeBackend({slow.image or "": SLOW_S, fast.image or "": FAST_S})
    settings = SandboxSettings(
        build_images=False, max_concurrent_runs=1, waiting_requests=4, scheduling=scheduling
    )
    runner = bootstrap(settings, backend=backend, artifacts=MemoryArtifactStore())
    order: list[str] = []
    nc = await nats.connect(nats_url)

    async def collect(msg: Msg) -> None:
        done = RunCompleted.model_validate_json(msg.data)
        order.append(f"{done.instance_id.split('__')[0]}/{done.purpose.value}")

    await nc.subscribe(subjects.run_completed_subject("tester"), cb=collect)
    async with running(nats_url, build(SETTINGS, settings, runner), SETTINGS):
        publisher = NatsBroker(nats_url, logger=None)
        await publisher.connect()
        try:
            await bus.publish(publisher, subjects.RUN_REQUESTED, request(slow, RunPurpose.GOLD))
            for _ in range(100):  # the slow run holds the only slot
                if backend.started:
                    break
                await asyncio.sleep(0.05)
            await bus.publish(publisher, subjects.RUN_REQUESTED, request(slow, RunPurpose.EMPTY))
            await asyncio.sleep(0.3)
            await bus.publish(publisher, subjects.RUN_REQUESTED, request(fast, RunPurpose.GOLD))
            for _ in range(200):
                if len(order) == 3:
                    break
                await asyncio.sleep(0.05)
        finally:
            await publisher.stop()
            await nc.close()
    return order


async def test_a_fast_task_is_served_before_the_slow_tasks_second_run(nats_url: str) -> None:
    order = await served_order(nats_url, Scheduling.FAIR)
    assert order == ["slow/gold", "fast/gold", "slow/empty"]


async def test_first_come_first_served_makes_the_fast_task_wait(nats_url: str) -> None:
    # what the fair order replaces: the fast task waits for both slow runs
    order = await served_order(nats_url, Scheduling.FIFO)
    assert order == ["slow/gold", "slow/empty", "fast/gold"]
