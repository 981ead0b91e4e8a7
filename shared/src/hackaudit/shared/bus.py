"""Bus helpers: the JetStream topology, publishing with deduplication, and the delivery policy.

Every service subscribes through `subscribe`, which applies one policy to every message:
- a message that does not validate against its contract is dead-lettered at once, with the reason;
- a handler that raises `PermanentError` dead-letters the message;
- any other exception nacks it with a delay, until `max_deliveries` is reached, then dead-letters;
- a message delivered more than `max_deliveries` times without an ack (its workers kept dying)
  is dead-lettered before a handler sees it again;
- while a handler runs, an in-progress ack is sent every `heartbeat_s`, so a long test run is not
  taken for a dead worker, while a worker that really died is redelivered after `ack_wait_s`;
- a copy of a message this process is still handling, or has just settled (redelivered after a
  stall longer than the ack wait), is not handled a second time.

A worker that handles several messages at once (`concurrency`) fetches one more only when a slot
is free, and keeps the one waiting for a slot with in-progress acks too: a fetched message left
without them past the ack wait would be redelivered and handled twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from faststream import AckPolicy
from faststream.nats import JStream, NatsBroker, NatsMessage, PullSub
from nats.errors import ConnectionReconnectingError, NoRespondersError
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy as JsAckPolicy,
)
from nats.js.api import (
    ConsumerConfig,
    DeliverPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import APIError, BadRequestError, NoStreamResponseError
from pydantic import ValidationError

from hackaudit.shared import publishers, subjects
from hackaudit.shared.contracts.messages import DeadLetter, Message
from hackaudit.shared.errors import BusUnavailableError, PermanentError
from hackaudit.shared.logs import get_logger
from hackaudit.shared.metrics import DeadLetterReason, record_dead_letter
from hackaudit.shared.settings import BusSettings

M = TypeVar("M", bound=Message)
T = TypeVar("T")
Handler = Callable[[M], Awaitable[None]]

MSG_ID_HEADER = "Nats-Msg-Id"
# How long a publish waits for JetStream's acknowledgement. FastStream's default (0.5 s) is too
# short for a machine busy running tests, and a timed-out publish only retries the whole handler.
PUBLISH_ACK_TIMEOUT_S = 10.0
# How long a publish that gets no answer is retried (a cluster electing a stream leader), and
# the errors that say so.
PUBLISH_RETRY_S = 30.0
UNANSWERED = (NoStreamResponseError, NoRespondersError, ConnectionReconnectingError, TimeoutError)
# JetStream's answer while another publisher's copy of the same message is being stored: asked
# again, it says whether that copy was kept (then this one is a duplicate, dropped).
DUPLICATE_IN_FLIGHT = 10158
# How many settled messages a worker remembers, to drop their late copies.
SETTLED_REMEMBERED = 4096
log = get_logger("hackaudit.bus")


# --- topology ------------------------------------------------------------------------------


def stream_configs(settings: BusSettings) -> list[StreamConfig]:
    """The messages' stream and the dead letters' stream, kept alike: on file, for the same time,
    with the same duplicate window and replicas."""
    return [
        StreamConfig(
            name=name,
            subjects=[f"{prefix}.>"],
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            max_age=settings.stream_max_age_s,
            duplicate_window=settings.duplicate_window_s,
            num_replicas=settings.bus_replicas,
        )
        for name, prefix in (
            (subjects.STREAM, subjects.PREFIX),
            (subjects.DEAD_LETTER_STREAM, subjects.DEAD_LETTER_PREFIX),
        )
    ]


def consumer_config(consumer: subjects.Consumer, settings: BusSettings) -> ConsumerConfig:
    return ConsumerConfig(
        durable_name=consumer.durable,
        filter_subject=consumer.subject,
        ack_policy=JsAckPolicy.EXPLICIT,
        deliver_policy=DeliverPolicy.ALL,
        ack_wait=settings.ack_wait_s,
        # One delivery more than the policy allows, so the last one can be dead-lettered.
        max_deliver=settings.max_deliveries + 1,
        max_ack_pending=1000,
    )


async def declare_topology(
    js: JetStreamContext, settings: BusSettings, consumers: list[subjects.Consumer]
) -> None:
    """Create (or bring up to date) the streams and durable consumers. Safe to call repeatedly,
    so a service starting while a cluster elects a leader asks again (`until_answered`)."""
    await until_answered(lambda: _declare(js, settings, consumers), "topology")


async def _declare(
    js: JetStreamContext, settings: BusSettings, consumers: list[subjects.Consumer]
) -> None:
    for config in stream_configs(settings):
        try:
            try:
                await js.add_stream(config)
            except BadRequestError:
                await js.update_stream(config)
        except APIError as exc:
            if settings.bus_replicas == 1:
                raise
            raise BusUnavailableError(
                f"stream {config.name}: NATS cannot keep HACKAUDIT_BUS_REPLICAS="
                f"{settings.bus_replicas} copies (at most the cluster's size; 1 for a single "
                f"server): {exc.description}"
            ) from exc
    for consumer in consumers:
        await js.add_consumer(subjects.STREAM, consumer_config(consumer, settings))


# --- publishing ----------------------------------------------------------------------------


async def publish(broker: NatsBroker, subject: str, message: Message) -> None:
    """Publish to JetStream with the message's idempotency key as `Nats-Msg-Id`.

    A publish that gets no answer (a NATS node died and the stream is electing a new leader) is
    retried for up to `PUBLISH_RETRY_S`: safe, as the key drops a copy that got through, and it
    spares the handler's work (a test run) being redone or its message dead-lettered.
    """

    async def send() -> None:
        await broker.publish(
            message.model_dump_json(),
            subject,
            headers={MSG_ID_HEADER: message.idempotency_key},
            stream=subjects.STREAM,
            timeout=PUBLISH_ACK_TIMEOUT_S,
        )

    await until_answered(send, "publish", subject=subject)


def _unanswered(exc: Exception) -> bool:
    if isinstance(exc, APIError):
        return exc.err_code == DUPLICATE_IN_FLIGHT
    return isinstance(exc, UNANSWERED)


async def until_answered(step: Callable[[], Awaitable[T]], what: str, **context: str) -> T:
    """`step()`, tried again while NATS gives no answer (a node died, a stream is electing a new
    leader) for up to `PUBLISH_RETRY_S`; any other error, or the last one, is raised."""
    loop = asyncio.get_running_loop()
    deadline, delay = loop.time() + PUBLISH_RETRY_S, 0.2
    while True:
        try:
            return await step()
        except (*UNANSWERED, APIError) as exc:
            if not _unanswered(exc) or loop.time() + delay > deadline:
                raise
            log.warning(f"{what} unanswered, will retry", error=repr(exc), **context)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


# --- delivery policy -----------------------------------------------------------------------


class Delivery(Protocol):
    """What the policy needs of one delivered message (a NATS message, or a fake in tests)."""

    @property
    def subject(self) -> str: ...
    @property
    def body(self) -> bytes: ...
    @property
    def headers(self) -> dict[str, str]: ...
    @property
    def deliveries(self) -> int: ...
    @property
    def sequence(self) -> int: ...

    async def ack(self) -> None: ...
    async def nack(self, delay: float) -> None: ...
    async def term(self) -> None: ...
    async def in_progress(self) -> None: ...


DeadLetterSink = Callable[[str, DeadLetter, str], Awaitable[None]]


@dataclass(frozen=True)
class DeliveryPolicy:
    settings: BusSettings
    dead_letter: DeadLetterSink
    # Stream sequences of the messages this process is handling now.
    _active: set[int] = field(default_factory=set, init=False, repr=False, compare=False)
    # ... and of the last ones it settled, so a copy that was already on its way is not redone.
    _settled: OrderedDict[int, None] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )

    async def _bury(self, delivery: Delivery, reason: str, kind: DeadLetterReason) -> None:
        letter = DeadLetter(
            subject=delivery.subject,
            reason=reason,
            deliveries=delivery.deliveries,
            payload=delivery.body.decode("utf-8", errors="replace"),
            headers=dict(delivery.headers),
            failed_at=datetime.now(UTC).isoformat(),
        )
        msg_id = f"deadletter:{delivery.subject}:{delivery.sequence}"
        await self.dead_letter(subjects.dead_letter_subject(delivery.subject), letter, msg_id)
        await delivery.term()
        record_dead_letter(delivery.subject, kind)
        log.warning(
            "message dead-lettered",
            subject=delivery.subject,
            deliveries=delivery.deliveries,
            reason=reason[:500],
        )

    async def handle(self, delivery: Delivery, model: type[M], handler: Handler[M]) -> None:
        sequence = delivery.sequence
        if sequence in self._active:
            # The first copy's handler is still at work and acks the message when it is done.
            log.warning(
                "message already being handled here, copy dropped",
                subject=delivery.subject,
                deliveries=delivery.deliveries,
            )
            return
        if sequence in self._settled:
            # Handled here already; this copy was on its way before the ack.
            await delivery.ack()
            return
        self._active.add(sequence)
        try:
            if await self._handle(delivery, model, handler):
                self._settled[sequence] = None
                while len(self._settled) > SETTLED_REMEMBERED:
                    self._settled.popitem(last=False)
        finally:
            self._active.discard(sequence)

    async def _handle(self, delivery: Delivery, model: type[M], handler: Handler[M]) -> bool:
        """Handle, then settle (ack or dead-letter: True) or nack (False) the delivery."""
        if delivery.deliveries > self.settings.max_deliveries:
            await self._bury(
                delivery,
                f"delivered {delivery.deliveries - 1} times without an ack "
                "(its workers died or timed out)",
                DeadLetterReason.UNACKNOWLEDGED,
            )
            return True
        try:
            message = model.model_validate_json(delivery.body)
        except ValidationError as exc:
            reason = f"invalid {model.__name__}: {_first_errors(exc)}"
            await self._bury(delivery, reason, DeadLetterReason.INVALID)
            return True
        heartbeat = asyncio.create_task(keep_in_progress(delivery, self.settings.heartbeat_s))
        try:
            await handler(message)
        except PermanentError as exc:
            await self._bury(delivery, f"{type(exc).__name__}: {exc}", DeadLetterReason.PERMANENT)
            return True
        except Exception as exc:
            if delivery.deliveries >= self.settings.max_deliveries:
                reason = f"failed {delivery.deliveries} times, last: {exc!r}"
                await self._bury(delivery, reason, DeadLetterReason.RETRIES_EXHAUSTED)
                return True
            delay = self.settings.retry_delay_s * 2 ** (delivery.deliveries - 1)
            log.warning("handler failed, will retry", subject=delivery.subject, error=repr(exc))
            await delivery.nack(delay)
            return False
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        await delivery.ack()
        return True


async def keep_in_progress(delivery: Delivery, every_s: float) -> None:
    """Tell JetStream every `every_s` that `delivery` is still being worked on, until cancelled."""
    while True:
        await asyncio.sleep(every_s)
        await delivery.in_progress()


class Slots:
    """Handles up to `size` deliveries at once, each in a task of its own, so the subscriber
    fetches the next message as soon as a slot is free and not before.

    `submit` returns once the delivery has a slot; while it waits it keeps the delivery with
    in-progress acks. `cancel` stops the handlers still running (their messages, unacked, are
    redelivered to another worker after the ack wait).
    """

    def __init__(self, size: int, heartbeat_s: float):
        self.heartbeat_s = heartbeat_s
        self._free = asyncio.Semaphore(size)
        self._running: set[asyncio.Task[None]] = set()

    async def submit(self, delivery: Delivery, work: Callable[[], Awaitable[None]]) -> None:
        waiting = asyncio.create_task(keep_in_progress(delivery, self.heartbeat_s))
        try:
            await self._free.acquire()
        finally:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
        task = asyncio.create_task(self._run(delivery, work))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, delivery: Delivery, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except Exception as exc:  # the policy handles the handler's errors; this is the bus's
            log.error("delivery not settled", subject=delivery.subject, error=repr(exc))
        finally:
            self._free.release()

    async def cancel(self) -> None:
        running = list(self._running)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


# The slots of each broker's concurrent subscribers, so stopping a service stops their handlers.
_SLOTS: weakref.WeakKeyDictionary[NatsBroker, list[Slots]] = weakref.WeakKeyDictionary()


async def cancel_handlers(broker: NatsBroker) -> None:
    """Stop the handlers that `broker`'s concurrent subscribers still run."""
    for slots in _SLOTS.get(broker, []):
        await slots.cancel()


def _first_errors(exc: ValidationError, limit: int = 3) -> str:
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "(message)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


# --- FastStream wiring ---------------------------------------------------------------------


class NatsDelivery:
    """A FastStream NATS message seen through the `Delivery` port."""

    def __init__(self, message: NatsMessage):
        self._message = message
        self._metadata = message.raw_message.metadata

    @property
    def subject(self) -> str:
        return self._message.raw_message.subject

    @property
    def body(self) -> bytes:
        return self._message.body

    @property
    def headers(self) -> dict[str, str]:
        return {k: str(v) for k, v in (self._message.raw_message.headers or {}).items()}

    @property
    def deliveries(self) -> int:
        return int(self._metadata.num_delivered)

    @property
    def sequence(self) -> int:
        return int(self._metadata.sequence.stream)

    async def ack(self) -> None:
        await self._message.ack()

    async def nack(self, delay: float) -> None:
        await self._message.nack(delay=delay)

    async def term(self) -> None:
        await self._message.reject()

    async def in_progress(self) -> None:
        await self._message.in_progress()


def subscribe(
    broker: NatsBroker,
    consumer: subjects.Consumer,
    model: type[M],
    handler: Handler[M],
    settings: BusSettings,
    *,
    concurrency: int = 1,
) -> None:
    """Attach `handler` to the durable pull consumer `consumer`, under the delivery policy.

    With `concurrency` > 1 the worker handles that many messages of the consumer at once (for
    handlers that mostly wait, such as an attack awaiting its sandbox runs).
    """

    async def bury(subject: str, letter: DeadLetter, msg_id: str) -> None:
        await broker.publish(
            letter.model_dump_json(),
            subject,
            headers={MSG_ID_HEADER: msg_id},
            stream=subjects.DEAD_LETTER_STREAM,
            timeout=PUBLISH_ACK_TIMEOUT_S,
        )

    policy = DeliveryPolicy(settings, bury)

    slots = Slots(concurrency, settings.heartbeat_s) if concurrency > 1 else None
    if slots is not None:
        _SLOTS.setdefault(broker, []).append(slots)

    async def on_message(message: NatsMessage) -> None:
        delivery = NatsDelivery(message)
        if slots is None:
            await policy.handle(delivery, model, handler)
        else:
            await slots.submit(delivery, lambda: policy.handle(delivery, model, handler))

    stream = JStream(subjects.STREAM, declare=False)
    config = consumer_config(consumer, settings)
    pull = PullSub(batch_size=1, timeout=1.0)
    broker.subscriber(
        consumer.subject, stream=stream, durable=consumer.durable, config=config,
        pull_sub=pull, ack_policy=AckPolicy.MANUAL,
        title=consumer.durable, description=model.__name__,
    )(on_message)  # fmt: skip
    # For the bus contract (`hackaudit asyncapi`): the subscriber's description names its contract,
    # and `bury` sends what fails here to the consumer's dead-letter subject.
    publishers.declare(broker, subjects.dead_letter_subject(consumer.subject), DeadLetter)
