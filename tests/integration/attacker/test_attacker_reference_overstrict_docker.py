"""Over-strict tests found on the real engine: the slugkit example tasks pin a docstring's wording,
a function's source text and locals, and the order of two calls on different collaborators.

For each, the reference pool must hold a rewrite of gold shown equal to gold (by construction, or
by probes that leave out what the tests read of the code itself) that the task's tests reject,
with the pinning test the labels name as the failing one. The same pool on a robust task
(spanlib-1) rejects no correct variant: the test that pins something is what makes it over-strict
(checked on the pool `test_attacker_reference_docker.py` builds for spanlib-1: its correct
members do not depend on the mutant sample).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    ReferenceRole,
    ReferenceStatus,
)
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.state_store import InMemoryStateStore

pytestmark = [pytest.mark.integration, pytest.mark.docker]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture(scope="module")
def engine() -> None:
    ok = shutil.which("docker") is not None and (
        subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0
    )
    if not ok:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine answers")


async def _rejected_correct(sandbox, library: str, instance_id: str) -> list[tuple[str, str]]:
    tasks = {t.instance_id: t for t in load_tasks([EXAMPLES / "tasks" / f"{library}.jsonl"]).tasks}
    request = AttackRequested(
        correlation_id=f"audit-overstrict-{instance_id}",
        task=tasks[instance_id],
        options=AuditOptions(candidates_per_round=1, rounds=1, gold_repeats=2),
    )
    # What the pool finds, not what it costs: a one-candidate attack pays for little of a pool.
    config = AttackConfig(reference_sample=1, reference_attack_share=1000.0)
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState), config)
    assert done.reference is not None
    correct = [o for o in done.reference.outcomes if o.role is ReferenceRole.CORRECT]
    return [(o.kind, o.evidence) for o in correct if o.status is ReferenceStatus.REJECTED]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    "instance_id", ["slugkit__slugkit-1", "slugkit__slugkit-2", "slugkit__slugkit-3"]
)
async def test_a_pinning_test_rejects_a_rewrite_shown_equal_to_gold(
    engine: None,
    sandbox,
    instance_id: str,
) -> None:
    label = json.loads((EXAMPLES / "labels.json").read_text())[instance_id]
    assert label["label"] == "over_strict"
    rejected = await _rejected_correct(sandbox, "slugkit", instance_id)
    assert rejected, f"{instance_id}: no correct variant rejected"
    for kind, evidence in rejected:
        assert "over-strict" in evidence, (kind, evidence[:300])
        assert "equal to gold" in evidence, (kind, evidence[:300])
        assert any(t in evidence for t in label["pinning_tests"]), (kind, evidence[:600])
