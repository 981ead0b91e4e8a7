"""Run requests as awaitable calls over a real NATS server, as the attacker makes them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from faststream.nats import NatsBroker

from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    Candidate,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
)
from hackaudit.shared.errors import TransientError
from hackaudit.shared.run_client import BusRunClient
from hackaudit.shared.service import Service, running
from hackaudit.shared.settings import BusSettings

pytestmark = pytest.mark.integration

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold", test_patch="t",
    FAIL_TO_PASS=["t::a"],
)  # fmt: skip
SETTINGS = BusSettings(ack_wait_s=5, heartbeat_s=1, max_deliveries=3, retry_delay_s=0.1)


def request(n: int) -> RunRequested:
    return RunRequested(
        correlation_id="audit/1",
        task=TASK,
        purpose=RunPurpose.CANDIDATE,
        candidate=Candidate(instance_id=TASK.instance_id, diff=f"diff {n}"),
    )


def fake_sandbox(answer: Callable[[RunRequested], bool]) -> Service:
    """Answers the run requests it chooses to, as the sandbox service would."""
    seen: list[RunRequested] = []

    def attach(broker: NatsBroker) -> None:
        async def handle(req: RunRequested) -> None:
            seen.append(req)
            if not answer(req):
                return
            done = RunCompleted(
                correlation_id=req.correlation_id,
                instance_id=req.task.instance_id,
                purpose=req.purpose,
                request_key=req.idempotency_key,
                candidate_id=req.candidate.candidate_id if req.candidate else None,
                results=(RunResult(status=RunStatus.COMPLETED, resolved=True),),
                requested_by=req.requested_by,
            )
            await bus.publish(broker, subjects.run_completed_subject(req.requested_by), done)

        bus.subscribe(broker, subjects.SANDBOX_RUNS, RunRequested, handle, SETTINGS)

    service = Service("fake-sandbox", [subjects.SANDBOX_RUNS], attach)
    service.seen = seen  # type: ignore[attr-defined]
    return service


def caller(client: BusRunClient) -> Service:
    def attach(broker: NatsBroker) -> None:
        async def publish(subject: str, req: RunRequested) -> None:
            await bus.publish(broker, subject, req)

        client.bind(publish)
        bus.subscribe(broker, subjects.ATTACKER_RUNS, RunCompleted, client.deliver, SETTINGS)

    return Service("attacker", [subjects.ATTACKER_RUNS], attach)


async def test_concurrent_calls_each_get_their_own_result(nats_url: str) -> None:
    client = BusRunClient("attacker", wait_s=20)
    async with running(nats_url, fake_sandbox(lambda r: True), SETTINGS):
        async with running(nats_url, caller(client), SETTINGS):
            results = await asyncio.gather(*(client.run(request(n)) for n in range(8)))
    assert [r.candidate_id for r in results] == [
        request(n).candidate.candidate_id for n in range(8)
    ]  # type: ignore[union-attr]
    assert all(r.requested_by == "attacker" for r in results)


async def test_lost_result_is_asked_for_again_then_fails_transiently(nats_url: str) -> None:
    client = BusRunClient("attacker", wait_s=1.0, attempts=2)
    sandbox = fake_sandbox(lambda r: r.attempt >= 1)  # the first attempt's answer is "lost"
    async with running(nats_url, sandbox, SETTINGS):
        async with running(nats_url, caller(client), SETTINGS):
            done = await client.run(request(1))
            assert done.results[0].resolved is True
            silent = BusRunClient("attacker", wait_s=0.5, attempts=2)
            silent.bind(_drop)
            with pytest.raises(TransientError, match="after 2 attempts"):
                await silent.run(request(2))
    attempts = [r.attempt for r in sandbox.seen]  # type: ignore[attr-defined]
    assert attempts == [0, 1]


async def _drop(subject: str, req: RunRequested) -> None:
    return None


async def test_two_calls_for_the_same_run_share_its_one_result(nats_url: str) -> None:
    # Two handlers of one redelivered message ask for the same run: the broker drops the second
    # request as a duplicate, so the one result must reach both calls.
    client = BusRunClient("attacker", wait_s=20)
    sandbox = fake_sandbox(lambda r: True)
    async with running(nats_url, sandbox, SETTINGS):
        async with running(nats_url, caller(client), SETTINGS):
            first, second = await asyncio.wait_for(
                asyncio.gather(client.run(request(3)), client.run(request(3))), timeout=15
            )
    assert first.request_key == second.request_key
    assert len(sandbox.seen) == 1  # type: ignore[attr-defined]


async def test_the_same_run_asked_for_after_its_result_runs_again_at_once(nats_url: str) -> None:
    # A rerun: the same request once its first result was taken. Under the first request's key
    # the broker drops it as a duplicate, and the call waited out `wait_s` for nothing.
    client = BusRunClient("attacker", wait_s=60)
    sandbox = fake_sandbox(lambda r: True)
    async with running(nats_url, sandbox, SETTINGS):
        async with running(nats_url, caller(client), SETTINGS):
            first = await asyncio.wait_for(client.run(request(5)), timeout=15)
            again = await asyncio.wait_for(client.run(request(5)), timeout=15)
            third = await asyncio.wait_for(client.run(request(5)), timeout=15)
    assert len({first.request_key, again.request_key, third.request_key}) == 3
    assert [r.attempt for r in sandbox.seen] == [0, 1, 2]  # type: ignore[attr-defined]
