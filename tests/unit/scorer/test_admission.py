"""Audits in flight: at most N audits are started before their verdict; the others wait, queued
in the order they came, and start as verdicts free places — on the in-memory store and on the
DuckDB results store, which several scorers may share."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hackaudit.scorer.adapters.store import AuditStore, DuckDBAuditStore, InMemoryAuditStore
from hackaudit.scorer.domain import audit
from hackaudit.scorer.handlers import ScorerHandlers
from hackaudit.shared.contracts import (
    AuditOptions,
    Message,
    RunPurpose,
    RunRequested,
    TaskIngested,
)
from tests.unit.scorer.test_scorer_died_before_sending import POLICY, TASK, DiesOnce, answered


def ingested(n: int) -> TaskIngested:
    task = TASK.model_copy(update={"instance_id": f"lib__lib-{n}"})
    return TaskIngested(correlation_id=f"c{n}", task=task, options=AuditOptions(gold_repeats=1))


def started(send: DiesOnce) -> list[str]:
    """The audits whose gold run was asked for, in order."""
    return [
        m.correlation_id
        for m in send.sent
        if isinstance(m, RunRequested) and m.purpose is RunPurpose.GOLD
    ]


async def dropped(handlers: ScorerHandlers, send: DiesOnce, cid: str) -> None:
    """`cid`'s gold fails its tests: the sanity step drops the task, a verdict."""
    for m in [m for m in send.sent if isinstance(m, RunRequested) and m.correlation_id == cid]:
        await handlers.run_completed(answered(m, resolved=False))


@pytest.fixture(params=["memory", "duckdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> AuditStore:
    if request.param == "memory":
        return InMemoryAuditStore()
    return DuckDBAuditStore(tmp_path / "results.duckdb")


async def test_audits_beyond_the_limit_wait_and_start_in_order_as_verdicts_come(
    store: AuditStore,
) -> None:
    send = DiesOnce()
    handlers = ScorerHandlers(store, send, POLICY, in_flight=2)
    for n in range(1, 5):
        await handlers.task_ingested(ingested(n))
    assert started(send) == ["c1", "c2"]
    assert store.in_flight() == 2 and store.queued(None) == ["c3", "c4"]
    assert [s.stage for s in (store.load("c3"), store.load("c4")) if s] == [audit.Stage.QUEUED] * 2
    # A redelivered ingestion of a queued audit starts nothing.
    await handlers.task_ingested(ingested(3))
    assert started(send) == ["c1", "c2"]
    # c2's gold fails its tests: the sanity step drops it, its verdict frees a place for c3.
    await dropped(handlers, send, "c2")
    c2 = store.load("c2")
    assert c2 is not None and c2.stage is audit.Stage.SCORED
    assert started(send) == ["c1", "c2", "c3"]
    assert store.queued(None) == ["c4"] and store.in_flight() == 2


async def test_no_limit_starts_every_audit_at_once(store: AuditStore) -> None:
    send = DiesOnce()
    handlers = ScorerHandlers(store, send, POLICY, in_flight=0)
    for n in range(1, 6):
        await handlers.task_ingested(ingested(n))
    assert started(send) == ["c1", "c2", "c3", "c4", "c5"]
    assert store.queued(None) == []


async def test_a_scorer_that_dies_while_starting_an_audit_starts_it_on_the_next_message(
    store: AuditStore,
) -> None:
    """A queued audit's runs are sent before its state is saved: a scorer that died between the
    two finds it still queued and sends them again (the bus drops the copies by their keys)."""
    send = DiesOnce()
    handlers = ScorerHandlers(store, send, POLICY, in_flight=1)
    await handlers.task_ingested(ingested(1))
    await handlers.task_ingested(ingested(2))
    assert started(send) == ["c1"]
    gold, empty = (m for m in send.sent if isinstance(m, RunRequested))
    await handlers.run_completed(answered(gold, resolved=False))
    send.die_on = RunRequested  # c1's verdict frees the place; the scorer dies sending c2's run
    with pytest.raises(RuntimeError):
        await handlers.run_completed(answered(empty, resolved=False))
    queued = store.load("c2")
    assert queued is not None and queued.stage is audit.Stage.QUEUED
    # The run result is delivered again: c2 is started then.
    await handlers.run_completed(answered(empty, resolved=False))
    assert started(send) == ["c1", "c2"]
    c2 = store.load("c2")
    assert c2 is not None and c2.stage is audit.Stage.SANITY


async def test_a_run_result_of_an_audit_whose_start_was_not_saved_starts_it(
    store: AuditStore,
) -> None:
    """The scorer sent a queued audit's runs and died before saving its start; the runs' results
    arrive before it is admitted again. They count: the audit is started, not left waiting for
    runs whose copies the bus would drop."""
    send = DiesOnce()
    handlers = ScorerHandlers(store, send, POLICY, in_flight=1)
    await handlers.task_ingested(ingested(1))
    await handlers.task_ingested(ingested(2))
    queued = store.load("c2")
    assert queued is not None
    _, runs = audit.admit(queued)  # what the dead scorer had sent, unsaved
    for m in runs:
        assert isinstance(m, RunRequested)
        await handlers.run_completed(answered(m, resolved=False))
    c2 = store.load("c2")
    assert c2 is not None and c2.stage is audit.Stage.SCORED  # gold fails: dropped, a verdict


async def test_a_run_result_that_comes_while_its_audit_is_being_started_is_kept(
    store: AuditStore,
) -> None:
    """The sandbox can answer a run before the scorer has saved the start of its audit (the
    publish returns after the result is in): the result must survive that save."""
    pending: list[asyncio.Task[None]] = []

    class AnswersAtOnce(DiesOnce):
        async def __call__(self, subject: str, message: Message) -> None:
            await super().__call__(subject, message)
            if isinstance(message, RunRequested) and message.correlation_id == "c2":
                done = answered(message, resolved=message.purpose is RunPurpose.GOLD)
                pending.append(asyncio.create_task(handlers.run_completed(done)))
                await asyncio.sleep(0.05)  # its step is taken while this admission waits

    send = AnswersAtOnce()
    handlers = ScorerHandlers(store, send, POLICY, in_flight=1)
    await handlers.task_ingested(ingested(1))
    await handlers.task_ingested(ingested(2))
    await dropped(handlers, send, "c1")  # a verdict: c2 is started, its runs answered at once
    await asyncio.gather(*pending)
    c2 = store.load("c2")
    assert c2 is not None and c2.gold is not None and c2.empty is not None
    assert c2.stage is audit.Stage.ATTACK  # both results kept: sanity passed
