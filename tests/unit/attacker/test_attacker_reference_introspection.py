"""The reference pool shows a rewrite of gold equal to gold without what the tests read of the code.

A rewrite whose probe run differs from gold's only on introspection (a function's source, a mock's
call record) is equal to gold: it is graded, and a test suite that rejects it is over-strict. A
rewrite that differs on what the code computes stays left out. Scripted sandbox, real pool.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.pool import rewrites
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    Candidate,
    ReferenceStatus,
    RunPurpose,
    RunRequested,
    RunResult,
    Task,
    TestStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import TimedSandbox, failed, passed

from .conftest import TinyTask


def _observations(source_tag: str, value_tag: str) -> list[str]:
    key = "f0.test_clamp.p0"
    return [
        f"test_replay_{key}:o1.v0_{value_tag} =>> clamp(5, 0, 3) =>> returns 3 <<=",
        f"test_replay_{key}:o2.v0_{source_tag} =>> inspect.getsource(clamp) =>> returns 'd' <<=",
        f"test_replay_{key}:o3.v0_{source_tag} =>> parent.method_calls =>> returns [] <<=",
    ]


def _rules(task: Task, rewrite_value_tag: str) -> Callable[[RunRequested], RunResult | None]:
    graded = [*task.fail_to_pass, *task.pass_to_pass]
    gold = Candidate.gold(task).content_hash

    def rule(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is RunPurpose.GOLD:
            return passed(graded)
        if request.purpose is RunPurpose.PROBE and c is not None:
            if c.content_hash == gold:
                return passed(_observations("a" * 12, "b" * 12))
            return passed(_observations("c" * 12, rewrite_value_tag))
        if request.purpose in (RunPurpose.REFERENCE, RunPurpose.EMPTY):
            return failed({graded[0]: TestStatus.FAILED})
        return None

    return rule


@pytest.mark.parametrize(
    ("value_tag", "status", "says"),
    [
        ("b" * 12, ReferenceStatus.REJECTED, "over-strict"),
        ("d" * 12, ReferenceStatus.LEFT_OUT, "clamp(5, 0, 3)"),
    ],
)
async def test_probed_rewrites_ignore_introspection(
    tiny: TinyTask, value_tag: str, status: ReferenceStatus, says: str
) -> None:
    request = AttackRequested(
        correlation_id="audit-ref-introspection",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=1, rounds=1, gold_repeats=2),
    )
    # The attack's candidates cost more than the pool's runs: the pool's budget is the attack's.
    sandbox = TimedSandbox(
        [_rules(tiny.task, value_tag)],
        lambda r: 100.0 if r.purpose is RunPurpose.CANDIDATE else 1.0,
    )
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState))
    assert done.reference is not None
    probed = [
        o
        for o in done.reference.outcomes
        if o.kind in rewrites.KINDS and o.kind not in rewrites.TEXT_KINDS
    ]
    report = [(o.kind, o.status.value, o.evidence[:200]) for o in probed]
    assert probed and all(o.status is status for o in probed), report
    assert all(says in o.evidence for o in probed), report
