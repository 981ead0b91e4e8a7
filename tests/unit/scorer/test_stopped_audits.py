"""Audits a stopped one-shot run left unfinished: the next run marks them stopped in the results
store, in one go, and from then on they hold no place among the audits in flight and their
messages, delivered again, change nothing and send nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.scorer.adapters.store import (
    AuditStore,
    DuckDBAuditStore,
    InMemoryAuditStore,
    read_results,
)
from hackaudit.scorer.domain import audit
from hackaudit.scorer.handlers import ScorerHandlers
from hackaudit.shared.contracts import (
    AttackCompleted,
    JudgeLabel,
    JudgeRequested,
    RepairCompleted,
    RunRequested,
)
from tests.unit.scorer.test_admission import dropped, ingested, started
from tests.unit.scorer.test_judge_step import ATTACK, answer, attacked
from tests.unit.scorer.test_scorer_died_before_sending import POLICY, DiesOnce, answered


@pytest.fixture(params=["memory", "duckdb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> AuditStore:
    if request.param == "memory":
        return InMemoryAuditStore()
    return DuckDBAuditStore(tmp_path / "results.duckdb")


async def left_by_a_stopped_run(store: AuditStore) -> tuple[ScorerHandlers, DiesOnce]:
    """c1 scored, c2 attacking, c3 in sanity, c4 queued, c5 waiting for the judge."""
    send = DiesOnce()
    handlers = ScorerHandlers(store, send, POLICY, in_flight=2)
    for n in range(1, 5):
        await handlers.task_ingested(ingested(n))
    await dropped(handlers, send, "c1")  # scored: c3 takes its place
    for m in [m for m in send.sent if isinstance(m, RunRequested) and m.correlation_id == "c2"]:
        await handlers.run_completed(answered(m, resolved=m.purpose.value == "gold"))
    judging, _ = audit.on_attack(attacked().model_copy(update={"correlation_id": "c5"}), ATTACK,
                                 POLICY)  # fmt: skip
    store.load("c5")
    store.save(judging)
    stages = {cid: s.stage for cid in ("c1", "c2", "c3", "c4", "c5") if (s := store.load(cid))}
    assert stages == {
        "c1": audit.Stage.SCORED, "c2": audit.Stage.ATTACK, "c3": audit.Stage.SANITY,
        "c4": audit.Stage.QUEUED, "c5": audit.Stage.JUDGE,
    }  # fmt: skip
    return handlers, send


async def test_every_queued_or_in_flight_audit_is_marked_stopped_at_once(
    store: AuditStore,
) -> None:
    await left_by_a_stopped_run(store)

    stopped = store.stop_unfinished()

    assert sorted(stopped.correlation_ids) == ["c2", "c3", "c4", "c5"] and stopped.count == 4
    stages = {cid: s.stage for cid in ("c1", "c2", "c3", "c4", "c5") if (s := store.load(cid))}
    assert stages["c1"] is audit.Stage.SCORED
    assert {stages[c] for c in ("c2", "c3", "c4", "c5")} == {audit.Stage.STOPPED}
    assert store.in_flight() == 0 and store.queued(None) == []
    assert store.stop_unfinished().count == 0  # nothing left to stop


async def test_the_stopped_stage_is_what_the_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    await left_by_a_stopped_run(DuckDBAuditStore(path))

    DuckDBAuditStore(path).stop_unfinished()  # the next run, on the same file

    stages = {s.correlation_id: s.stage for s in read_results(path)}
    assert stages == {"c1": audit.Stage.SCORED} | dict.fromkeys(
        ("c2", "c3", "c4", "c5"), audit.Stage.STOPPED
    )
    kept = DuckDBAuditStore(path)
    assert kept.in_flight() == 0 and kept.queued(None) == []


async def test_a_stopped_audits_messages_change_nothing_and_hold_no_place(
    store: AuditStore,
) -> None:
    handlers, send = await left_by_a_stopped_run(store)
    runs = [m for m in send.sent if isinstance(m, RunRequested)]
    store.stop_unfinished()
    before = {cid: store.load(cid) for cid in ("c2", "c3", "c4", "c5")}
    sent = len(send.sent)

    # Everything the earlier run's streams could deliver again.
    for m in runs:
        if m.correlation_id != "c1":
            await handlers.run_completed(answered(m, resolved=True))
    await handlers.task_ingested(ingested(4))
    await handlers.task_ingested(ingested(3))
    await handlers.attack_completed(AttackCompleted(correlation_id="c2", instance_id="lib__lib-2"))
    await handlers.attack_completed(ATTACK.model_copy(update={"correlation_id": "c5"}))
    asked = audit.on_attack(attacked(), ATTACK, POLICY)[1][0]
    assert isinstance(asked, JudgeRequested)
    judged = answer({1: JudgeLabel.CORRECT}, asked).model_copy(update={"correlation_id": "c5"})
    await handlers.judge_completed(judged)
    await handlers.repair_completed(
        RepairCompleted(correlation_id="c2", instance_id="lib__lib-2", requested_by="scorer")
    )

    assert send.sent[sent:] == []
    assert {cid: store.load(cid) for cid in before} == before
    # The places they held are free: a new audit starts at once, and another beside it.
    await handlers.task_ingested(ingested(6))
    await handlers.task_ingested(ingested(7))
    assert started(send)[-2:] == ["c6", "c7"] and store.in_flight() == 2
