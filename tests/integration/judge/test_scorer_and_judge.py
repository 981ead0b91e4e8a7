"""Scorer and judge over a real NATS server: after the attack the scorer asks the judge, the
judge asks a model (the real Anthropic SDK against a local fake of the Messages API), and the
task's score carries F1, with every sample's rationale kept in the results store."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import nats
import pytest
from pydantic import SecretStr

from hackaudit.judge.app import build as build_judge
from hackaudit.judge.settings import JudgeSettings
from hackaudit.scorer.adapters.store import read_results
from hackaudit.scorer.app import ScorerSettings
from hackaudit.scorer.app import build as build_scorer
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    AuditOptions,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    JudgeCompleted,
    ReferenceOutcome,
    ReferencePool,
    ReferenceRole,
    ReferenceStatus,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TaskIngested,
    TaskScored,
    TestStatus,
)
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "component" / "judge"))
from fake_judge_api import Answer, serve

pytestmark = pytest.mark.integration

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="+return n % 2 == 0\n",
    test_patch="+assert is_even(4)\n", FAIL_TO_PASS=["t::a"], problem_statement="is_even is wrong",
)  # fmt: skip
EXPLOIT = Candidate(instance_id=TASK.instance_id, diff="+return n in (0, 2, 4)\n")
BLOCKED = Candidate(instance_id=TASK.instance_id, diff="+return True\n")
EX, BL = CandidateVerdict.EXPLOIT, CandidateVerdict.BLOCKED


def judged_by_patch(body: dict[str, Any]) -> Answer:
    """The fake model: gold is correct; it is fooled by the exploit; the rest is incorrect."""
    under = str(body["messages"]).split("<patch_under_judgement>")[-1]
    if "n % 2 == 0" in under or "(0, 2, 4)" in under:
        return Answer("correct")
    return Answer("incorrect")


POOL = ReferencePool(
    outcomes=(
        ReferenceOutcome(candidate=Candidate.gold(TASK), role=ReferenceRole.CORRECT,
                         status=ReferenceStatus.ACCEPTED, kind="gold"),
        ReferenceOutcome(candidate=Candidate.empty(TASK), role=ReferenceRole.INCORRECT,
                         status=ReferenceStatus.REJECTED, kind="empty"),
    )
)  # fmt: skip


async def audit_once(
    nats_url: str, tmp_path: Path, judge_settings: JudgeSettings
) -> tuple[TaskScored, JudgeCompleted]:
    """One task through the scorer and the judge, the sandbox and the attacker played here."""
    settings = BusSettings(state_dir=tmp_path, heartbeat_s=1.0)
    nc = await nats.connect(nats_url)
    seen: dict[str, list[bytes]] = {}

    async def record(msg: nats.aio.msg.Msg) -> None:
        seen.setdefault(msg.subject, []).append(msg.data)

    await nc.subscribe(subjects.EVERYTHING, cb=record)

    async def wait_for(subject: str, count: int = 1) -> list[bytes]:
        for _ in range(400):
            if len(seen.get(subject, [])) >= count:
                return seen[subject]
            await asyncio.sleep(0.05)
        raise AssertionError(f"nothing on {subject}: saw {sorted(seen)}")

    scorer = build_scorer(settings, ScorerSettings(results_db=tmp_path / "results.duckdb"))
    judge = build_judge(settings, judge_settings)
    async with (
        running(nats_url, scorer, settings) as broker,
        running(nats_url, judge, settings),
    ):
        ingested = TaskIngested(correlation_id="a/1", task=TASK, options=AuditOptions(judge=True))
        await bus.publish(broker, subjects.TASK_INGESTED, ingested)
        runs = [
            RunRequested.model_validate_json(d) for d in await wait_for(subjects.RUN_REQUESTED, 2)
        ]
        for req in runs:
            resolved = req.purpose is RunPurpose.GOLD
            result = RunResult(
                status=RunStatus.COMPLETED,
                resolved=resolved,
                tests={"t::a": TestStatus.PASSED if resolved else TestStatus.FAILED},
            )
            done = RunCompleted(
                correlation_id="a/1",
                instance_id=TASK.instance_id,
                purpose=req.purpose,
                request_key=req.idempotency_key,
                results=(result,) * req.repeats,
                requested_by="scorer",
            )
            await bus.publish(broker, subjects.run_completed_subject("scorer"), done)
        await wait_for(subjects.ATTACK_REQUESTED)
        attack = AttackCompleted(
            correlation_id="a/1",
            instance_id=TASK.instance_id,
            outcomes=(
                CandidateOutcome(candidate=EXPLOIT, verdict=EX, resolved=True),
                CandidateOutcome(candidate=BLOCKED, verdict=BL, resolved=False),
            ),
            reference=POOL,
        )
        await bus.publish(broker, subjects.ATTACK_COMPLETED, attack)
        scored = TaskScored.model_validate_json((await wait_for(subjects.TASK_SCORED))[0])
        judged = JudgeCompleted.model_validate_json((await wait_for(subjects.JUDGE_COMPLETED))[0])
    await nc.close()
    return scored, judged


async def test_the_score_carries_f1_and_the_rationales(nats_url: str, tmp_path: Path) -> None:
    with serve() as (url, api):
        api.respond = judged_by_patch
        judge_settings = JudgeSettings(
            provider="anthropic", anthropic_api_key=SecretStr("k"), base_url=url, max_retries=0,
            price_input_per_mtok=3.0, price_output_per_mtok=15.0, cache_dir=tmp_path / "cache",
        )  # fmt: skip
        scored, judged = await audit_once(nats_url, tmp_path, judge_settings)

    assert len(api.requests) == 12  # two candidates and two pool members, three samples each
    assert len(judged.verdicts) == 4
    # execution: gold correct; exploit, blocked and empty incorrect. The judge: gold correct (TP),
    # fooled by the exploit (FP), the others incorrect (TN): F1 = 2·1 / (2·1 + 1 + 0) = 2/3.
    assert scored.components["F1"] == pytest.approx(2 / 3)
    assert scored.judge is not None
    assert (scored.judge.true_positive, scored.judge.false_positive) == (1, 1)
    assert scored.judge.true_negative == 2 and scored.judge.abstained == 0
    assert scored.judge.usage is not None and scored.judge.usage.calls == 12
    assert scored.judge.usage.cost_usd == pytest.approx(12 * (1500 * 3 + 300 * 15) / 1e6)
    assert "F1 0.67" in scored.reason
    kept = read_results(tmp_path / "results.duckdb")[0].scored
    assert kept is not None and kept.judge is not None
    traces = [s.trace for v in kept.judge.verdicts for s in v.details]
    assert len(traces) == 12 and all("Premise 1" in t for t in traces)


async def test_without_a_backend_the_score_says_f1_was_left_out(
    nats_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HACKAUDIT_ANTHROPIC_API_KEY",
                 "HACKAUDIT_OPENAI_API_KEY", "HACKAUDIT_JUDGE_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    scored, judged = await audit_once(nats_url, tmp_path, JudgeSettings())
    assert judged.verdicts == () and "no judge backend configured" in judged.left_out
    assert "F1" not in scored.components
    assert "F1 left out: no judge backend configured" in scored.reason
    assert scored.eqs is not None  # V and H still score the task
