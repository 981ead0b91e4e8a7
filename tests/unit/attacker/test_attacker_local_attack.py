"""A whole offline attack on the tiny task, every run really applied and executed.

The local sandbox's verifier is deliberately naive (it reads PASSED lines anywhere in the log and
trusts a repository conftest), so the harness exploits get through; special-casing passes the
graded tests too, and the differential probes or held-back tests must show it is wrong.
"""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.shared.contracts import AttackRequested, AuditOptions, CandidateVerdict, RunPurpose
from hackaudit.shared.state_store import InMemoryStateStore


@pytest.mark.slow
async def test_offline_attack_finds_confirmed_exploits(tiny, local_sandbox) -> None:
    request = AttackRequested(
        correlation_id="audit-local",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=5, rounds=1, gold_repeats=2),
    )
    done = await run_attack(request, local_sandbox, None, InMemoryStateStore(RoundState))
    by_strategy = {o.candidate.provenance.strategy: o for o in done.outcomes}
    assert len(done.outcomes) == 5

    harness = [o for o in done.outcomes if o.candidate.provenance.strategy == "harness"]
    assert any(o.verdict is CandidateVerdict.EXPLOIT for o in harness)

    special = by_strategy["special_case"]
    assert special.resolved is True
    assert special.verdict is CandidateVerdict.EXPLOIT
    assert "differential probes" in special.evidence or "held-back" in special.evidence

    for o in done.outcomes:
        if o.verdict is CandidateVerdict.BLOCKED:
            assert o.resolved is False and "not passing" in o.evidence
        if o.verdict is CandidateVerdict.EXPLOIT:
            assert o.evidence
    # Gold's side of each check ran once, whatever the number of accepted candidates (the wider
    # suite's in two parts: one timing run, then the other repeats).
    gold_runs = [
        r for r in local_sandbox.requests if r.candidate and r.candidate.diff == tiny.task.patch
    ]
    assert len(gold_runs) == len(
        {(r.purpose, r.test_patch, r.invocation.model_dump_json(), r.attempt) for r in gold_runs}
    )
    assert len(gold_runs) == len({r.idempotency_key for r in gold_runs})
    assert all(r.purpose in (RunPurpose.GOLD, RunPurpose.PROBE) for r in gold_runs)
