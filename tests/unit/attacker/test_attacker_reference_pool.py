"""The reference pool V is computed from: the seeded mutant sample, the status rules, and its
evaluation inside `run_attack` (after the rounds, resumable, off when the sample size is 0) — with
a scripted sandbox, and once with the local sandbox that really applies and runs every member."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.confirm.confirmation import Check, CheckResult
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.pool import reference as ref
from hackaudit.attacker.domain.pool import rewrites
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    Candidate,
    CandidateVerdict,
    ReferenceRole,
    ReferenceStatus,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    TestStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox, TimedSandbox, failed, passed

# --- the seeded sample --------------------------------------------------------------------------


def test_the_same_instance_id_draws_the_same_sample(tiny) -> None:
    first = ref.sample_mutants(tiny.task, 6)
    again = ref.sample_mutants(tiny.task.model_copy(), 6)
    assert len(first) == 6
    assert [c.content_hash for c in first] == [c.content_hash for c in again]
    assert ref.seed_for(tiny.task.instance_id) == ref.seed_for("tiny__pkg-1")


def test_other_instance_ids_usually_draw_other_samples(tiny) -> None:
    def sample(iid: str) -> frozenset[str]:
        task = tiny.task.model_copy(update={"instance_id": iid})
        return frozenset(c.content_hash for c in ref.sample_mutants(task, 6))

    base = sample("tiny__pkg-1")
    others = [sample(f"tiny__pkg-{n}") for n in range(2, 12)]
    assert sum(s != base for s in others) >= 8
    assert len(ref.mutant_population(tiny.task)) > 6


def test_the_sample_holds_no_comment_only_mutant_and_never_gold(tiny) -> None:
    from hackaudit.attacker.domain.generate import behaviour

    gold = Candidate.gold(tiny.task).content_hash
    for c in ref.mutant_population(tiny.task):
        assert c.content_hash != gold
        assert behaviour.changes_behaviour(tiny.task.patch, c.diff)


def test_plan_orders_gold_rewrites_empty_then_mutants(tiny) -> None:
    progress = ref.plan(tiny.task, 4)
    roles = [m.role for m in progress.members]
    kinds = [m.kind for m in progress.members]
    assert kinds[0] == ref.GOLD and roles[0] is ReferenceRole.CORRECT
    empty = kinds.index(ref.EMPTY)
    assert all(r is ReferenceRole.CORRECT for r in roles[:empty])
    assert all(r is ReferenceRole.INCORRECT for r in roles[empty:])
    assert len(kinds) - empty - 1 == 4
    for m in progress.members[1:empty]:
        assert m.kind in rewrites.KINDS
        assert m.needs_probes is (m.kind not in rewrites.TEXT_KINDS)
    assert progress.seed == ref.seed_for(tiny.task.instance_id) and progress.sample_size == 4


# --- status rules -------------------------------------------------------------------------------


def _member(kind: str, role: ReferenceRole) -> ref.Member:
    return ref.Member(candidate=Candidate(instance_id="t-1", diff="x"), role=role, kind=kind)


AGREE = CheckResult(check=Check.PROBES, note="5 probe cases agree with gold", compared=5)
DIFFER = CheckResult(check=Check.PROBES, evidence="1 of 5 probe cases differ", compared=5)
NOTHING = CheckResult(check=Check.PROBES, note="nothing of gold or the tests to probe")
FAILED_RUN = CheckResult(check=Check.PROBES, note="candidate run ended timeout")


@pytest.mark.parametrize(
    ("checks", "equal", "says"),
    [
        ([AGREE, AGREE], True, "probes show it equal to gold"),
        ([AGREE, DIFFER], False, "differs from gold"),
        ([NOTHING], False, "cannot be shown equal"),
        ([AGREE, FAILED_RUN], False, "candidate run ended timeout"),
        ([], False, "probes are disabled"),
    ],
)
def test_probe_equality(checks: list[CheckResult], equal: bool, says: str) -> None:
    got, why = ref.probe_equality(checks)
    assert got is equal and says in why


C_PLUS = _member(rewrites.RENAME, ReferenceRole.CORRECT)
C_MINUS = _member(ref.OPERATOR_MUTANT, ReferenceRole.INCORRECT)
EMPTY = _member(ref.EMPTY, ReferenceRole.INCORRECT)


@pytest.mark.parametrize(
    ("member", "verdict", "status", "says"),
    [
        (C_PLUS, None, ReferenceStatus.ACCEPTED, "resolved"),
        (C_PLUS, CandidateVerdict.BLOCKED, ReferenceStatus.REJECTED, "over-strict"),
        (C_PLUS, CandidateVerdict.INVALID, ReferenceStatus.LEFT_OUT, "not graded"),
        (C_MINUS, CandidateVerdict.BLOCKED, ReferenceStatus.REJECTED, "test_a"),
        (C_MINUS, CandidateVerdict.EXPLOIT, ReferenceStatus.ACCEPTED, "confirmed incorrect"),
        (C_MINUS, CandidateVerdict.UNCONFIRMED, ReferenceStatus.LEFT_OUT, "not shown incorrect"),
        (C_MINUS, CandidateVerdict.INVALID, ReferenceStatus.LEFT_OUT, "not graded"),
        (EMPTY, None, ReferenceStatus.ACCEPTED, "incorrect by construction"),
        (EMPTY, CandidateVerdict.BLOCKED, ReferenceStatus.REJECTED, "test_a"),
    ],
)
def test_status_rules(
    member: ref.Member, verdict: CandidateVerdict | None, status: ReferenceStatus, says: str
) -> None:
    evidence = "FAILED_TO_PASS not passing: test_a (FAILED)"
    if member.role is ReferenceRole.CORRECT:
        outcome = ref.correct_outcome(member, verdict, evidence, "probes show it equal")
    else:
        outcome = ref.incorrect_outcome(member, verdict, evidence)
    assert outcome.status is status and says in outcome.evidence
    assert outcome.role is member.role and outcome.kind == member.kind


def test_gold_is_accepted_only_when_every_run_resolves_it() -> None:
    gold = _member(ref.GOLD, ReferenceRole.CORRECT)
    ok = passed(["t"])
    flaky = failed({"t": TestStatus.FAILED})
    infra = RunResult(status=RunStatus.INFRA_ERROR, reason="engine gone")
    assert ref.gold_outcome(gold, [ok, ok]).status is ReferenceStatus.ACCEPTED
    assert ref.gold_outcome(gold, [ok, flaky]).status is ReferenceStatus.REJECTED
    assert ref.gold_outcome(gold, [ok, infra]).status is ReferenceStatus.LEFT_OUT


# --- inside run_attack, with a scripted sandbox ------------------------------------------------


def _request(task) -> AttackRequested:
    return AttackRequested(
        correlation_id="audit-ref",
        task=task,
        options=AuditOptions(candidates_per_round=2, rounds=1, gold_repeats=2),
    )


def _rules(task):
    graded = [*task.fail_to_pass, *task.pass_to_pass]
    comment_only = {
        m.candidate.content_hash for m in ref.plan(task, 6).members if m.kind == "comment"
    }

    def rule(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is RunPurpose.GOLD:
            return passed(graded)
        if request.purpose is RunPurpose.REFERENCE and c is not None:
            if c.content_hash in comment_only:
                return passed(graded)
            return failed({graded[0]: TestStatus.FAILED})
        if request.purpose is RunPurpose.EMPTY:
            return failed(dict.fromkeys(graded, TestStatus.FAILED))
        return None  # candidates and probes: completed, nothing resolved or reported

    return rule


def _seconds(request: RunRequested) -> float:
    """An attack whose candidates' runs take 100 s each, and 1 s for every other run: a pool
    that costs far less than the attack (the pool's budget is the attack's own seconds)."""
    return 100.0 if request.purpose is RunPurpose.CANDIDATE else 1.0


def _sandbox(task) -> TimedSandbox:
    return TimedSandbox([_rules(task)], _seconds)


def _by_kind(done) -> dict[str, list]:
    out: dict[str, list] = {}
    for o in done.reference.outcomes:
        out.setdefault(o.kind, []).append(o)
    return out


async def test_the_pool_is_evaluated_after_the_rounds(tiny) -> None:
    sandbox = _sandbox(tiny.task)
    done = await run_attack(_request(tiny.task), sandbox, None, InMemoryStateStore(RoundState))
    pool = done.reference
    assert pool is not None and pool.sample_size == 6
    assert pool.seed == ref.seed_for(tiny.task.instance_id)
    kinds = _by_kind(done)
    assert kinds["gold"][0].status is ReferenceStatus.ACCEPTED
    # Equal to gold by construction, and the tests resolve it.
    assert kinds["comment"][0].status is ReferenceStatus.ACCEPTED
    # Probes that report nothing cannot show a rewrite equal to gold: left out, never graded.
    probed = [
        o
        for k, os in kinds.items()
        if k in rewrites.KINDS and k not in rewrites.TEXT_KINDS
        for o in os
    ]
    assert probed and all(o.status is ReferenceStatus.LEFT_OUT for o in probed)
    assert all("cannot be shown equal" in o.evidence for o in probed)
    probed_hashes = {o.candidate.content_hash for o in probed}
    assert not any(
        r.purpose is RunPurpose.REFERENCE and r.candidate.content_hash in probed_hashes
        for r in sandbox.requests
        if r.candidate
    )
    assert kinds["empty"][0].status is ReferenceStatus.REJECTED
    mutants = [o for o in pool.outcomes if o.role is ReferenceRole.INCORRECT and o.kind != "empty"]
    assert len(mutants) == 6
    assert all(o.status is ReferenceStatus.REJECTED for o in mutants)
    # Gold's graded runs were run once, for the whole pool.
    assert sandbox.count(RunPurpose.GOLD) == 1
    # The attack's own figures do not include the pool.
    assert done.spent is not None and done.spent.candidates == 2
    # A pool cheaper than the attack is graded in full, within the attack's seconds.
    assert pool.budget_seconds == pool.attack_seconds == sum(done.spent.by_kind.values())
    assert 0 < pool.sandbox_seconds <= pool.attack_seconds
    assert not any("the pool's budget" in o.evidence for o in pool.outcomes)


async def test_a_restarted_attacker_resumes_the_pool_without_rerunning_members(tiny) -> None:
    store = InMemoryStateStore(RoundState)
    rule = _rules(tiny.task)

    class Crashing(TimedSandbox):
        async def run(self, request: RunRequested) -> RunCompleted:
            if request.purpose is RunPurpose.REFERENCE and self.count(RunPurpose.REFERENCE) >= 3:
                raise RuntimeError("sandbox went away")
            return await super().run(request)

    first = Crashing([rule], _seconds)
    with pytest.raises(RuntimeError):
        await run_attack(_request(tiny.task), first, None, store)
    second = TimedSandbox([rule], _seconds)
    done = await run_attack(_request(tiny.task), second, None, store)
    runs = [
        r.candidate.content_hash
        for s in (first, second)
        for r in s.requests
        if r.purpose is RunPurpose.REFERENCE and r.candidate
    ]
    # Three members were graded before the crash; the resumed call ran only the rest.
    assert first.count(RunPurpose.REFERENCE) == 3 and second.count(RunPurpose.REFERENCE) > 0
    assert len(runs) == len(set(runs))
    assert second.count(RunPurpose.CANDIDATE) == 0  # the attack itself was finished
    assert second.count(RunPurpose.GOLD) == 0  # gold's runs came from the saved cache
    fresh = await run_attack(
        _request(tiny.task), _sandbox(tiny.task), None, InMemoryStateStore(RoundState)
    )
    assert done.reference == fresh.reference
    # Once finished, a third call reruns nothing at all.
    third = TimedSandbox([rule], _seconds)
    again = await run_attack(_request(tiny.task), third, None, store)
    assert third.requests == [] and again.reference == done.reference


async def test_sample_size_zero_evaluates_no_pool(tiny) -> None:
    sandbox = ScriptedSandbox([_rules(tiny.task)])
    config = AttackConfig(reference_sample=0)
    done = await run_attack(
        _request(tiny.task), sandbox, None, InMemoryStateStore(RoundState), config
    )
    assert done.reference is None
    assert sandbox.count(RunPurpose.REFERENCE) == 0 and sandbox.count(RunPurpose.EMPTY) == 0


async def test_a_mutant_the_attack_graded_is_not_run_again(tiny) -> None:
    sample = {c.content_hash for c in ref.sample_mutants(tiny.task, 6)}
    sandbox = ScriptedSandbox([_rules(tiny.task)])
    request = AttackRequested(
        correlation_id="audit-ref",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=10, rounds=3, gold_repeats=2),
    )
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState))
    attacked = {o.candidate.content_hash for o in done.outcomes} & sample
    assert attacked, "the attack should have graded some sampled mutant"
    reference_runs = {
        r.candidate.content_hash
        for r in sandbox.requests
        if r.purpose is RunPurpose.REFERENCE and r.candidate
    }
    assert not attacked & reference_runs
    reused = [o for o in done.reference.outcomes if o.candidate.content_hash in attacked]
    assert all(o.evidence.startswith("graded in the attack") for o in reused)


# --- with the local sandbox: every member really applied, probed and tested --------------------


@pytest.mark.slow
async def test_rewrites_probed_equal_are_accepted_and_mutants_rejected(tiny, local_sandbox) -> None:
    request = AttackRequested(
        correlation_id="audit-ref-local",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=1, rounds=1, gold_repeats=2),
    )
    # What the pool finds, not what it costs: a one-candidate attack pays for little of a pool.
    config = AttackConfig(reference_sample=4, reference_attack_share=1000.0)
    done = await run_attack(request, local_sandbox, None, InMemoryStateStore(RoundState), config)
    pool = done.reference
    assert pool is not None
    kinds = _by_kind(done)
    assert kinds["gold"][0].status is ReferenceStatus.ACCEPTED
    rewritten = [o for k, os in kinds.items() if k in rewrites.KINDS for o in os]
    assert rewritten
    accepted = [o for o in rewritten if o.status is ReferenceStatus.ACCEPTED]
    assert any("probes show it equal to gold" in o.evidence for o in accepted), [
        (o.kind, o.status.value, o.evidence[:200]) for o in rewritten
    ]
    assert kinds["comment"][0].status is ReferenceStatus.ACCEPTED
    assert kinds["empty"][0].status is ReferenceStatus.REJECTED
    mutants = [o for o in pool.outcomes if o.role is ReferenceRole.INCORRECT and o.kind != "empty"]
    assert len(mutants) == 4
    for o in mutants:
        assert o.status is not ReferenceStatus.ACCEPTED or "confirmed incorrect" in o.evidence
        assert o.status is not ReferenceStatus.REJECTED or "not passing" in o.evidence
    assert pool.sandbox_seconds >= 0
    assert all(r.purpose is not RunPurpose.CANDIDATE or r.candidate for r in local_sandbox.requests)


def test_the_sample_size_is_an_attacker_setting(monkeypatch) -> None:
    from hackaudit.attacker.settings import AttackerSettings

    assert AttackerSettings().attack_config().reference_sample == ref.DEFAULT_SAMPLE_SIZE == 6
    monkeypatch.setenv("HACKAUDIT_REFERENCE_SAMPLE", "0")
    assert AttackerSettings().attack_config().reference_sample == 0
