"""The bus against a real nats-server: work sharing, redelivery, dead letters, deduplication."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import nats
import pytest
from faststream.nats import NatsBroker

from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import AttackCompleted, DeadLetter
from hackaudit.shared.errors import PermanentError
from hackaudit.shared.nats_server import EmbeddedNats
from hackaudit.shared.service import Service, running
from hackaudit.shared.settings import BusSettings

pytestmark = pytest.mark.integration

CONSUMER = subjects.SCORER_ATTACKS  # any consumer will do; the policy is the same for all


def fast_settings(**overrides: float) -> BusSettings:
    values: dict[str, float] = {
        "ack_wait_s": 2.0,
        "heartbeat_s": 0.5,
        "max_deliveries": 3,
        "retry_delay_s": 0.1,
    }
    values.update(overrides)
    return BusSettings(**values)  # type: ignore[arg-type]


def message(n: int) -> AttackCompleted:
    return AttackCompleted(correlation_id=f"audit-{n}", instance_id=f"task-{n}")


@asynccontextmanager
async def worker(
    url: str,
    handler: Callable[[AttackCompleted], Awaitable[None]],
    settings: BusSettings,
) -> AsyncIterator[NatsBroker]:
    broker = NatsBroker(url)
    bus.subscribe(broker, CONSUMER, AttackCompleted, handler, settings)
    await broker.connect()
    await bus.declare_topology(broker.config.connection_state.stream, settings, [CONSUMER])
    await broker.start()
    try:
        yield broker
    finally:
        await broker.stop()


async def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def dead_letters(url: str) -> list[DeadLetter]:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        info = await js.stream_info(subjects.DEAD_LETTER_STREAM)
        letters: list[DeadLetter] = []
        if info.state.messages == 0:
            return letters
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            raw = await js.get_msg(subjects.DEAD_LETTER_STREAM, seq)
            letters.append(DeadLetter.model_validate_json(raw.data or b""))
        return letters
    finally:
        await nc.close()


def test_embedded_server_starts_serves_and_stops_leaving_no_process(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path / "nats").start()
    pid = server.pid
    assert pid is not None

    async def round_trip() -> bytes:
        nc = await nats.connect(server.url)
        sub = await nc.subscribe("ping")
        await nc.publish("ping", b"pong")
        msg = await sub.next_msg(timeout=2)
        await nc.close()
        return msg.data

    assert asyncio.run(round_trip()) == b"pong"
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert (tmp_path / "nats" / "jetstream").is_dir()


async def test_two_workers_share_one_durable_consumer(nats_url: str) -> None:
    settings = fast_settings()
    seen: dict[str, list[str]] = {"a": [], "b": []}

    def recorder(name: str) -> Callable[[AttackCompleted], Awaitable[None]]:
        async def handle(msg: AttackCompleted) -> None:
            seen[name].append(msg.instance_id)
            await asyncio.sleep(0.02)

        return handle

    async with worker(nats_url, recorder("a"), settings) as broker_a:
        async with worker(nats_url, recorder("b"), settings):
            sent = [message(n) for n in range(60)]
            for msg in sent:
                await bus.publish(broker_a, CONSUMER.subject, msg)
            await wait_for(lambda: len(seen["a"]) + len(seen["b"]) >= len(sent))
            await asyncio.sleep(0.5)  # anything handled twice would show up now

    handled = seen["a"] + seen["b"]
    assert sorted(handled) == sorted(m.instance_id for m in sent)  # none lost, none twice
    assert seen["a"] and seen["b"]  # both workers took a share


async def test_republish_with_same_msg_id_is_deduplicated(nats_url: str) -> None:
    settings = fast_settings()
    got: list[str] = []

    async def handle(msg: AttackCompleted) -> None:
        got.append(msg.instance_id)

    async with worker(nats_url, handle, settings) as broker:
        await bus.publish(broker, CONSUMER.subject, message(1))
        await bus.publish(broker, CONSUMER.subject, message(1))  # same inputs, same key
        await bus.publish(broker, CONSUMER.subject, message(2))
        await wait_for(lambda: len(got) >= 2)
        await asyncio.sleep(0.5)
        info = await broker.config.connection_state.stream.stream_info(subjects.STREAM)

    assert sorted(got) == ["task-1", "task-2"]
    assert info.state.messages == 2


async def test_poisoned_message_is_dead_lettered_with_reason(nats_url: str) -> None:
    settings = fast_settings()
    got: list[str] = []

    async def handle(msg: AttackCompleted) -> None:
        got.append(msg.instance_id)

    async with worker(nats_url, handle, settings) as broker:
        await broker.publish(
            b'{"not": "an AttackCompleted"}', CONSUMER.subject, stream=subjects.STREAM
        )
        await bus.publish(broker, CONSUMER.subject, message(7))
        await wait_for(lambda: got == ["task-7"])
        await asyncio.sleep(0.3)

    letters = await dead_letters(nats_url)
    assert len(letters) == 1
    assert letters[0].subject == CONSUMER.subject
    assert "invalid AttackCompleted" in letters[0].reason
    assert "correlation_id" in letters[0].reason  # the offending field is named
    assert json.loads(letters[0].payload) == {"not": "an AttackCompleted"}


async def test_failing_handler_is_retried_then_dead_lettered(nats_url: str) -> None:
    settings = fast_settings()
    attempts: list[int] = []

    async def handle(msg: AttackCompleted) -> None:
        attempts.append(1)
        raise RuntimeError("engine unreachable")

    async with worker(nats_url, handle, settings) as broker:
        await bus.publish(broker, CONSUMER.subject, message(3))
        await wait_for(lambda: len(attempts) >= settings.max_deliveries)
        await asyncio.sleep(1.0)

    assert len(attempts) == settings.max_deliveries
    letters = await dead_letters(nats_url)
    assert len(letters) == 1
    assert "failed 3 times" in letters[0].reason
    assert "engine unreachable" in letters[0].reason


async def test_permanent_error_goes_straight_to_dead_letters(nats_url: str) -> None:
    attempts: list[int] = []

    async def handle(msg: AttackCompleted) -> None:
        attempts.append(1)
        raise PermanentError(f"task {msg.instance_id} has no image")

    async with worker(nats_url, handle, fast_settings()) as broker:
        await bus.publish(broker, CONSUMER.subject, message(4))
        await wait_for(lambda: len(attempts) >= 1)
        await asyncio.sleep(0.5)

    assert len(attempts) == 1
    letters = await dead_letters(nats_url)
    assert [letter.reason for letter in letters] == ["PermanentError: task task-4 has no image"]


async def test_long_handler_keeps_its_message_with_in_progress_acks(nats_url: str) -> None:
    settings = fast_settings(ack_wait_s=1.0, heartbeat_s=0.3)
    calls: list[str] = []

    async def slow(msg: AttackCompleted) -> None:
        calls.append(msg.instance_id)
        await asyncio.sleep(3.0)  # three times the ack wait

    async with worker(nats_url, slow, settings) as broker:
        await bus.publish(broker, CONSUMER.subject, message(5))
        await wait_for(lambda: len(calls) >= 1)
        await asyncio.sleep(4.0)

    assert calls == ["task-5"]  # never redelivered while it was being worked on


WORKER_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from faststream.nats import NatsBroker
    from hackaudit.shared import bus, subjects
    from hackaudit.shared.contracts import AttackCompleted
    from hackaudit.shared.settings import BusSettings

    url, marker = sys.argv[1], Path(sys.argv[2])
    settings = BusSettings(ack_wait_s=2.0, heartbeat_s=0.5, max_deliveries=3)

    async def hang(msg: AttackCompleted) -> None:
        marker.write_text(msg.instance_id)
        await asyncio.sleep(3600)

    async def main() -> None:
        broker = NatsBroker(url)
        bus.subscribe(broker, subjects.SCORER_ATTACKS, AttackCompleted, hang, settings)
        await broker.connect()
        await bus.declare_topology(
            broker.config.connection_state.stream, settings, [subjects.SCORER_ATTACKS]
        )
        await broker.start()
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_message_of_a_dead_worker_is_redelivered_to_another(
    nats_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER_SCRIPT)
    marker = tmp_path / "received"
    doomed = subprocess.Popen([sys.executable, str(script), nats_url, str(marker)])
    try:
        settings = fast_settings()
        publisher = NatsBroker(nats_url)
        await publisher.connect()
        await bus.declare_topology(publisher.config.connection_state.stream, settings, [CONSUMER])
        await bus.publish(publisher, CONSUMER.subject, message(9))
        await wait_for(marker.exists, timeout=30)
        doomed.send_signal(signal.SIGKILL)  # dies mid-handler, without an ack
        doomed.wait(timeout=10)

        got: list[str] = []

        async def handle(msg: AttackCompleted) -> None:
            got.append(msg.instance_id)

        async with worker(nats_url, handle, settings):
            await wait_for(lambda: got == ["task-9"], timeout=15)
        await publisher.stop()
    finally:
        if doomed.poll() is None:
            doomed.kill()
    assert marker.read_text() == "task-9"
    assert await dead_letters(nats_url) == []


async def test_concurrent_worker_handles_several_messages_at_once(nats_url: str) -> None:
    both_in = asyncio.Barrier(3)  # two handlers and the test: passes only if both run at once
    done: list[str] = []

    async def meet(msg: AttackCompleted) -> None:
        await asyncio.wait_for(both_in.wait(), timeout=10)
        done.append(msg.instance_id)

    broker = NatsBroker(nats_url)
    settings = fast_settings()
    bus.subscribe(broker, CONSUMER, AttackCompleted, meet, settings, concurrency=2)
    await broker.connect()
    await bus.declare_topology(broker.config.connection_state.stream, settings, [CONSUMER])
    await broker.start()
    try:
        await bus.publish(broker, CONSUMER.subject, message(1))
        await bus.publish(broker, CONSUMER.subject, message(2))
        await asyncio.wait_for(both_in.wait(), timeout=10)
        await wait_for(lambda: len(done) == 2)
    finally:
        await broker.stop()
    assert sorted(done) == ["task-1", "task-2"]


async def test_concurrent_worker_handles_each_message_once_when_messages_outnumber_its_slots(
    nats_url: str,
) -> None:
    # Five handlers of three ack waits each, two at a time: the three that wait for a slot must
    # not be redelivered (and handled twice) while they wait, and no slot may be lost.
    settings = fast_settings(ack_wait_s=1.0, heartbeat_s=0.3)
    started: list[str] = []
    running: set[str] = set()
    most = 0

    async def slow(msg: AttackCompleted) -> None:
        nonlocal most
        started.append(msg.instance_id)
        running.add(msg.instance_id)
        most = max(most, len(running))
        await asyncio.sleep(3.0)
        running.discard(msg.instance_id)

    broker = NatsBroker(nats_url)
    bus.subscribe(broker, CONSUMER, AttackCompleted, slow, settings, concurrency=2)
    await broker.connect()
    await bus.declare_topology(broker.config.connection_state.stream, settings, [CONSUMER])
    await broker.start()
    try:
        for n in range(5):
            await bus.publish(broker, CONSUMER.subject, message(n))
        await wait_for(lambda: len(started) >= 5 and not running, timeout=30)
        await asyncio.sleep(2.0)  # a redelivery would show up here
    finally:
        await broker.stop()
    assert sorted(started) == [f"task-{n}" for n in range(5)]
    assert most == 2


async def test_copy_of_a_message_still_being_handled_is_dropped(nats_url: str) -> None:
    # No in-progress acks inside the ack wait (a stalled process): JetStream redelivers the
    # message while its handler runs. The copy must not start a second handler, and the first
    # handler's ack must settle the message for good.
    settings = fast_settings(ack_wait_s=1.0, heartbeat_s=30.0, max_deliveries=5)
    calls: list[str] = []

    async def slow(msg: AttackCompleted) -> None:
        calls.append(msg.instance_id)
        await asyncio.sleep(3.5)

    async with worker(nats_url, slow, settings) as broker:
        await bus.publish(broker, CONSUMER.subject, message(7))
        await wait_for(lambda: len(calls) >= 1)
        await asyncio.sleep(7.0)  # past the handler's end and several more ack waits
        nc = broker.config.connection_state.connection
        info = await nc.jetstream().consumer_info(subjects.STREAM, CONSUMER.durable)

    assert calls == ["task-7"]
    assert info.num_ack_pending == 0 and info.num_pending == 0
    assert await dead_letters(nats_url) == []


async def test_stopping_a_service_stops_its_concurrent_handlers(nats_url: str) -> None:
    settings = fast_settings()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def hang(msg: AttackCompleted) -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    def attach(broker: NatsBroker) -> None:
        bus.subscribe(broker, CONSUMER, AttackCompleted, hang, settings, concurrency=2)

    service = Service("hanging", [CONSUMER], attach)
    async with running(nats_url, service, settings) as broker:
        await bus.publish(broker, CONSUMER.subject, message(8))
        await asyncio.wait_for(started.wait(), timeout=10)
    assert cancelled.is_set()  # stopped with the service, not left running
