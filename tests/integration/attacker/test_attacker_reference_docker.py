"""The reference pool on the real engine, for an example task (spanlib-1, pytest): gold and its
rewrites that probes show equal to gold are accepted by the task's tests, the empty patch is
rejected, and every sampled mutant is either rejected, accepted and confirmed incorrect, or left
out as not shown incorrect — with the sandbox-seconds the pool took. spanlib-1 is robust: none of
its correct members is rejected (on the over-strict slugkit tasks one is, as
`test_attacker_reference_overstrict_docker.py` checks). With the default budget, the pool's runs
take no more sandbox-seconds than the attack's, as the engine reports them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.pool import reference as ref
from hackaudit.attacker.domain.pool import rewrites
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    ReferenceRole,
    ReferenceStatus,
    RunPurpose,
)
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.state_store import InMemoryStateStore

pytestmark = [pytest.mark.integration, pytest.mark.docker]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "tasks"


@pytest.fixture(scope="module")
def engine() -> None:
    ok = shutil.which("docker") is not None and (
        subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0
    )
    if not ok:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine answers")


@pytest.mark.asyncio(loop_scope="module")
async def test_pool_on_an_example_task(engine: None, sandbox) -> None:
    tasks = {t.instance_id: t for t in load_tasks([EXAMPLES / "spanlib.jsonl"]).tasks}
    task = tasks["spanlib__spanlib-1"]
    request = AttackRequested(
        correlation_id="audit-ref-docker",
        task=task,
        options=AuditOptions(candidates_per_round=1, rounds=1, gold_repeats=2),
    )
    # What the pool finds, not what it costs: a one-candidate attack pays for little of a pool.
    config = AttackConfig(reference_sample=3, reference_attack_share=1000.0)
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState), config)
    pool = done.reference
    assert pool is not None and pool.sample_size == 3
    report = [(o.kind, o.status.value, o.evidence[:160]) for o in pool.outcomes]
    by_kind = {o.kind: o for o in pool.outcomes}

    assert by_kind[ref.GOLD].status is ReferenceStatus.ACCEPTED, report
    assert by_kind[rewrites.COMMENT].status is ReferenceStatus.ACCEPTED, report
    probed = [
        o for o in pool.outcomes if o.kind in rewrites.KINDS and o.kind not in rewrites.TEXT_KINDS
    ]
    assert probed, report
    accepted = [o for o in probed if o.status is ReferenceStatus.ACCEPTED]
    assert accepted and all("probes show it equal to gold" in o.evidence for o in accepted), report
    assert by_kind[ref.EMPTY].status is ReferenceStatus.REJECTED, report
    # a robust task: no correct variant is rejected (no test pins anything beyond the behaviour)
    correct = [o for o in pool.outcomes if o.role is ReferenceRole.CORRECT]
    assert [o.kind for o in correct if o.status is ReferenceStatus.REJECTED] == [], report

    mutants = [o for o in pool.outcomes if o.role is ReferenceRole.INCORRECT and o.kind != "empty"]
    assert len(mutants) == 3, report
    assert any(o.status is ReferenceStatus.REJECTED for o in mutants), report
    for o in mutants:
        if o.status is ReferenceStatus.ACCEPTED:
            assert "confirmed incorrect" in o.evidence, report
        if o.status is ReferenceStatus.LEFT_OUT:
            assert "not shown incorrect" in o.evidence or "not graded" in o.evidence, report
    # The pool's runs went to the sandbox as reference runs and were timed.
    assert any(r.purpose is RunPurpose.REFERENCE for r in sandbox.requests)
    assert pool.sandbox_seconds > 0


@pytest.mark.asyncio(loop_scope="module")
async def test_pool_within_the_attacks_seconds(engine: None, sandbox) -> None:
    tasks = {t.instance_id: t for t in load_tasks([EXAMPLES / "spanlib.jsonl"]).tasks}
    request = AttackRequested(
        correlation_id="audit-ref-budget-docker",
        task=tasks["spanlib__spanlib-1"],
        options=AuditOptions(candidates_per_round=4, rounds=2, gold_repeats=2),
    )
    config = AttackConfig(reference_sample=3)
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState), config)
    pool = done.reference
    assert pool is not None and pool.attack_seconds is not None and done.spent is not None
    assert pool.attack_seconds == round(sum(done.spent.by_kind.values()), 3) > 0
    assert pool.budget_seconds == pool.attack_seconds
    report = [(o.kind, o.status.value, o.evidence[:200]) for o in pool.outcomes]
    assert pool.sandbox_seconds <= pool.attack_seconds, report
    # Gold, first in the pool, is graded within it; a member that does not fit is left out,
    # saying why.
    assert pool.outcomes[0].kind == ref.GOLD, report
    assert pool.outcomes[0].status is ReferenceStatus.ACCEPTED, report
    for o in pool.outcomes:
        if o.status is ReferenceStatus.LEFT_OUT and "budget" in o.evidence:
            assert "the pool's budget of" in o.evidence, report
