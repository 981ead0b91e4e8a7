"""Where the CLI finds the bus: an existing NATS server (`NATS_URL`) or an embedded one it starts.

`hackaudit up` records the embedded server's address in the state folder, so `submit` and `status`
run from another shell reach the same server without any configuration.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import nats
from faststream.nats import NatsBroker
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import StreamInfo
from nats.js.errors import NotFoundError

from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import DeadLetter, TaskScored, Verdict
from hackaudit.shared.errors import BusUnavailableError
from hackaudit.shared.nats_server import EmbeddedNats
from hackaudit.shared.settings import BusSettings


def url_file(settings: BusSettings) -> Path:
    return settings.state_dir / "nats.url"


@contextlib.contextmanager
def bus_url(settings: BusSettings, *, embedded_port: int | None = None) -> Iterator[str]:
    """The configured NATS URL, or an embedded server's for as long as the context lasts."""
    if settings.nats_url:
        yield settings.nats_url
        return
    server = EmbeddedNats(settings.state_dir / "nats", port=embedded_port)
    with server:
        url_file(settings).write_text(server.url)
        try:
            yield server.url
        finally:
            url_file(settings).unlink(missing_ok=True)


def running_url(settings: BusSettings) -> str:
    """The URL of a running system: `NATS_URL`, or the one `hackaudit up` recorded."""
    if settings.nats_url:
        return settings.nats_url
    recorded = url_file(settings)
    if recorded.exists():
        return recorded.read_text().strip()
    raise BusUnavailableError(
        f"no running hackaudit found: set NATS_URL, or start `hackaudit up` "
        f"(it records its address in {recorded})"
    )


async def _unlogged(exc: Exception) -> None:
    """nats-py's error callback: its default logs every failed attempt with a traceback; the
    command says the failure once, in one line (`BusUnavailableError`)."""


# How the command line's own connections try a server: a few seconds, a few attempts, quietly.
CONNECT_TIMEOUT_S = 5
RECONNECT_ATTEMPTS = 2


async def connect(url: str) -> Client:
    try:
        return await nats.connect(
            url,
            connect_timeout=CONNECT_TIMEOUT_S,
            max_reconnect_attempts=RECONNECT_ATTEMPTS,
            error_cb=_unlogged,
        )
    except Exception as exc:
        raise BusUnavailableError(f"cannot reach NATS at {url}: {exc}") from exc


async def _work_stream(js: JetStreamContext) -> StreamInfo | None:
    """The work stream's state; None before any service made it."""
    try:
        return await js.stream_info(subjects.STREAM)
    except NotFoundError:
        return None


async def purge_work(url: str) -> int:
    """Drop every message kept in the work stream (not the dead letters): a one-shot run on its
    own bus starts afresh, so an earlier, stopped run's pending work is not delivered again.
    How many messages were dropped (0 when there is no stream yet)."""
    nc = await connect(url)
    try:
        js = nc.jetstream()
        info = await _work_stream(js)
        if info is None:
            return 0
        await js.purge_stream(subjects.STREAM)
        return int(info.state.messages)
    finally:
        await nc.close()


@contextlib.asynccontextmanager
async def publisher(url: str, settings: BusSettings) -> AsyncIterator[NatsBroker]:
    """A connected broker with the topology declared, for publishing only."""
    broker = NatsBroker(
        url,
        logger=None,
        connect_timeout=CONNECT_TIMEOUT_S,
        max_reconnect_attempts=RECONNECT_ATTEMPTS,
        error_cb=_unlogged,
    )
    try:
        await broker.connect()
    except Exception as exc:
        raise BusUnavailableError(f"cannot reach NATS at {url}: {exc}") from exc
    try:
        await bus.declare_topology(broker.config.connection_state.stream, settings, [])
        yield broker
    finally:
        await broker.stop()


@dataclass(frozen=True)
class ConsumerState:
    name: str
    subject: str
    waiting: int
    in_progress: int
    redelivered: int
    delivered: int


STAGE_SUBJECTS = {
    "ingested": subjects.TASK_INGESTED,
    "attack requested": subjects.ATTACK_REQUESTED,
    "attack completed": subjects.ATTACK_COMPLETED,
    "scored": subjects.TASK_SCORED,
    "repair requested": subjects.REPAIR_REQUESTED,
    "repair completed": subjects.REPAIR_COMPLETED,
}
# A `task.scored` whose verdict is ERROR is shown as this stage, not as "scored": the task could
# not be audited (an infrastructure error), which says nothing of its quality.
ERROR_STAGE = "error"
SCORED_READ_LIMIT = 10_000


@dataclass(frozen=True)
class Snapshot:
    messages: int
    consumers: list[ConsumerState]
    dead_letters: list[DeadLetter]
    tasks_by_stage: dict[str, int]


async def _error_verdicts(js: JetStreamContext, scored: int) -> int:
    """How many `task.scored` messages on the bus carry the ERROR verdict (of the first
    `SCORED_READ_LIMIT` at most)."""
    errors, seq = 0, 1
    for _ in range(min(scored, SCORED_READ_LIMIT)):
        try:
            raw = await js.get_msg(subjects.STREAM, seq, subject=subjects.TASK_SCORED, next=True)
        except NotFoundError:
            break
        with contextlib.suppress(ValueError):
            if TaskScored.model_validate_json(raw.data or b"").verdict is Verdict.ERROR:
                errors += 1
        seq = (raw.seq or seq) + 1
    return errors


async def snapshot(url: str, *, dead_letter_limit: int = 50) -> Snapshot:
    """The state of the bus: each durable consumer's backlog and the newest dead letters."""
    nc = await connect(url)
    try:
        js = nc.jetstream()
        info = await _work_stream(js)
        if info is None:
            return Snapshot(0, [], [], {})
        consumers = []
        for c in await js.consumers_info(subjects.STREAM):
            consumers.append(
                ConsumerState(
                    name=c.name,
                    subject=c.config.filter_subject or "",
                    waiting=c.num_pending or 0,
                    in_progress=c.num_ack_pending or 0,
                    redelivered=c.num_redelivered or 0,
                    delivered=(c.delivered.consumer_seq or 0) if c.delivered else 0,
                )
            )
        letters: list[DeadLetter] = []
        try:
            dl = await js.stream_info(subjects.DEAD_LETTER_STREAM)
        except NotFoundError:
            dl = None
        if dl is not None and dl.state.messages:
            first = max(dl.state.first_seq, dl.state.last_seq - dead_letter_limit + 1)
            for seq in range(first, dl.state.last_seq + 1):
                raw = await js.get_msg(subjects.DEAD_LETTER_STREAM, seq)
                letters.append(DeadLetter.model_validate_json(raw.data or b""))
        counts = await js.stream_info(subjects.STREAM, subjects_filter=subjects.EVERYTHING)
        per_subject = counts.state.subjects or {}
        stages = {stage: per_subject.get(subject, 0) for stage, subject in STAGE_SUBJECTS.items()}
        errors = await _error_verdicts(js, stages["scored"])
        stages["scored"] -= errors
        stages[ERROR_STAGE] = errors
        return Snapshot(
            info.state.messages, sorted(consumers, key=lambda c: c.name), letters, stages
        )
    finally:
        await nc.close()
