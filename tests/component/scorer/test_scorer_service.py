"""The scorer service through a real NATS server: a task goes in, reference runs come out, and
once the runs and the attack are reported the task is scored."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
import pytest

from hackaudit.scorer.app import ScorerSettings, build
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TaskIngested,
    TaskScored,
    TestStatus,
    Verdict,
)
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings

pytestmark = pytest.mark.integration

TASK = Task(
    instance_id="lib__lib-1",
    repo="x/lib",
    base_commit="abc",
    patch="gold",
    test_patch="tests",
    FAIL_TO_PASS=["t::a"],
)


async def test_task_goes_from_ingested_to_scored(nats_url: str, tmp_path: Path) -> None:
    settings = BusSettings(state_dir=tmp_path, heartbeat_s=1.0)
    service = build(settings, ScorerSettings(results_db=tmp_path / "results.duckdb"))
    nc = await nats.connect(nats_url)
    seen: dict[str, list[bytes]] = {}

    async def record(msg: nats.aio.msg.Msg) -> None:
        seen.setdefault(msg.subject, []).append(msg.data)

    await nc.subscribe(subjects.EVERYTHING, cb=record)

    async def wait_for(subject: str, count: int = 1) -> list[bytes]:
        for _ in range(200):
            if len(seen.get(subject, [])) >= count:
                return seen[subject]
            await asyncio.sleep(0.05)
        raise AssertionError(f"nothing on {subject}: saw {sorted(seen)}")

    async with running(nats_url, service, settings) as broker:
        await bus.publish(
            broker, subjects.TASK_INGESTED, TaskIngested(correlation_id="a/1", task=TASK)
        )
        requests = [
            RunRequested.model_validate_json(d) for d in await wait_for(subjects.RUN_REQUESTED, 2)
        ]
        by_purpose = {r.purpose: r for r in requests}
        assert set(by_purpose) == {RunPurpose.GOLD, RunPurpose.EMPTY}
        assert by_purpose[RunPurpose.GOLD].repeats == 3

        passed = RunResult(
            status=RunStatus.COMPLETED, resolved=True, tests={"t::a": TestStatus.PASSED}
        )
        failed = RunResult(
            status=RunStatus.COMPLETED, resolved=False, tests={"t::a": TestStatus.FAILED}
        )
        for purpose, results in ((RunPurpose.GOLD, (passed,) * 3), (RunPurpose.EMPTY, (failed,))):
            done = RunCompleted(
                correlation_id="a/1",
                instance_id=TASK.instance_id,
                purpose=purpose,
                request_key=by_purpose[purpose].idempotency_key,
                results=results,
                requested_by="scorer",
            )
            await bus.publish(broker, subjects.run_completed_subject("scorer"), done)
        attack = AttackRequested.model_validate_json((await wait_for(subjects.ATTACK_REQUESTED))[0])
        assert attack.task == TASK

        await bus.publish(
            broker,
            subjects.ATTACK_COMPLETED,
            AttackCompleted(correlation_id="a/1", instance_id=TASK.instance_id),
        )
        scored = TaskScored.model_validate_json((await wait_for(subjects.TASK_SCORED))[0])
    await nc.close()

    assert scored.verdict is Verdict.KEEP  # V = 1 and nothing to compute H from
    assert scored.components == {"V": 1.0}
    # the results store kept it
    from hackaudit.scorer.adapters.store import DuckDBAuditStore

    store = DuckDBAuditStore(tmp_path / "results.duckdb")
    assert [s.instance_id for s in store.scores()] == [TASK.instance_id]
    store.close()
