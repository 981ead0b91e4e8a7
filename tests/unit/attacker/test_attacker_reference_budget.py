"""The reference pool costs no more sandbox-seconds than the attack: its budget is the attack's
own seconds (every run the attack asked for), within its cap, and no run takes the pool past it.

Scripted sandboxes whose runs take time (`TimedSandbox`: a run longer than its timeout times out,
counted at it, as the sandbox counts it; one test counts it a second past, as a run kept in the
background a while can be)."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig
from hackaudit.attacker.domain.orchestration import RoundState, state_key
from hackaudit.attacker.domain.pool import budget
from hackaudit.attacker.domain.pool import reference as ref
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    AuditOptions,
    ReferenceRole,
    ReferenceStatus,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    TestStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import Seconds, TimedSandbox, failed, passed

# --- the rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cap", "attack", "share", "expected"),
    [(600.0, 74.0, 1.0, 74.0), (600.0, 2093.0, 1.0, 600.0), (None, 30.0, 2.0, 60.0)],
)
def test_the_budget_is_the_attacks_seconds_within_the_cap(
    cap: float | None, attack: float, share: float, expected: float
) -> None:
    assert budget.pool_budget(cap, attack, share) == expected


@pytest.mark.parametrize(
    ("budget_s", "attack", "share", "says"),
    [
        (74.0, 74.0, 1.0, "budget of 74 sandbox-seconds (the attack's own 74)"),
        (600.0, 2093.0, 1.0, "budget of 600 sandbox-seconds (its cap; the attack took 2093)"),
        (60.0, 30.0, 2.0, "budget of 60 sandbox-seconds (2 × the attack's own 30)"),
    ],
)
def test_the_budget_says_what_bounds_it(
    budget_s: float, attack: float, share: float, says: str
) -> None:
    assert says in budget.budget_text(budget_s, attack, 600.0, share)


@pytest.mark.parametrize(
    ("left", "repeats", "kind", "own", "gold", "timeout", "shortened", "says"),
    [
        # its own timeout fits: sent as it is
        (100.0, 1, "grade", 30.0, 10.0, 30.0, False, ""),
        # what is left, less the margin, when that is less than its own
        (40.0, 2, "probe", 600.0, None, 16.0, True, ""),
        (40.0, 1, "grade", None, None, 35.0, True, ""),
        # gold's own run of that kind no longer fits: not sent
        (12.0, 1, "grade", 30.0, 10.0, None, False, "gold's took 10 s"),
        # the wider suite and coverage runs are sent only when their whole timeout fits
        (300.0, 1, "suite", 600.0, None, None, False, "'suite' (up to 600 s each) does not fit"),
        (300.0, 1, "coverage", 200.0, None, 200.0, False, ""),
        # a quick attack's small budget still grades gold's few-second runs (a smaller margin)
        (5.5, 1, "grade", 30.0, 1.5, 4.4, True, ""),
        (2.925, 2, "grade", None, None, 1.17, True, ""),
        # nothing left
        (0.3, 1, "grade", 30.0, None, None, False, "is spent"),
    ],
)
def test_a_run_gets_what_is_left_or_is_not_sent(
    left: float,
    repeats: int,
    kind: str,
    own: float | None,
    gold: float | None,
    timeout: float | None,
    shortened: bool,
    says: str,
) -> None:
    got = budget.allowance(left, repeats, kind, own, gold)
    assert got.timeout_s == timeout and got.shortened is shortened
    assert says in got.refused
    if timeout is not None:  # every repeat may overrun its timeout by its margin and still fit
        margin = min(budget.RUN_MARGIN_S, budget.MARGIN_SHARE * left / repeats)
        assert repeats * (timeout + margin) <= left + 1e-9


def test_a_graded_run_without_a_timeout_gets_three_times_golds() -> None:
    assert budget.grade_timeout(None) is None
    assert budget.grade_timeout(4.0) == budget.GRADE_FLOOR_S
    assert budget.grade_timeout(20.0) == 60.0


# --- inside run_attack --------------------------------------------------------------------------


def _request(task, repeats: int = 2) -> AttackRequested:
    return AttackRequested(
        correlation_id="audit-ref-budget",
        task=task,
        options=AuditOptions(candidates_per_round=2, rounds=1, gold_repeats=repeats),
    )


def _rules(task, members_resolve: bool = False):
    """Gold passes; the attack's candidates resolve nothing; the pool's members fail a graded
    test (or, `members_resolve`, pass every one: accepted, to be confirmed)."""
    graded = [*task.fail_to_pass, *task.pass_to_pass]

    def rule(request: RunRequested) -> RunResult | list[RunResult] | None:
        if request.purpose is RunPurpose.GOLD:
            return passed(graded)
        if request.purpose is RunPurpose.REFERENCE:
            return passed(graded) if members_resolve else failed({graded[0]: TestStatus.FAILED})
        if request.purpose is RunPurpose.EMPTY:
            return failed(dict.fromkeys(graded, TestStatus.FAILED))
        return None

    return rule


async def _audit(
    task, seconds: Seconds, config: AttackConfig | None = None, *, members_resolve: bool = False
) -> tuple[AttackCompleted, TimedSandbox]:
    sandbox = TimedSandbox([_rules(task, members_resolve)], seconds)
    done = await run_attack(_request(task), sandbox, None, InMemoryStateStore(RoundState), config)
    return done, sandbox


def _every_run(seconds: float) -> Seconds:
    return lambda request: seconds


def _attack_only(config: AttackConfig | None = None) -> AttackConfig:
    return (config or AttackConfig()).model_copy(update={"reference_sample": 0})


async def test_the_attacks_seconds_count_every_run_it_asked_for(tiny) -> None:
    done, sandbox = await _audit(tiny.task, _every_run(10.0), _attack_only())
    assert done.spent is not None
    # Candidates' runs are the budget's measure; the total has gold's and coverage runs too.
    assert done.spent.sandbox_seconds == 20.0
    assert sum(done.spent.by_kind.values()) == sum(sandbox.spent) > 20.0
    with_pool, _ = await _audit(tiny.task, _every_run(10.0))
    assert with_pool.reference is not None
    assert with_pool.reference.attack_seconds == sum(sandbox.spent)


async def test_the_last_run_of_an_attack_that_runs_out_of_candidates_is_counted(tiny) -> None:
    """Round 1 grades every candidate the task has; round 2 measures gold for mutants beyond its
    lines (one more run), finds none, and the attack ends with no candidate left: that last run
    counts too, in the stored state."""

    def request(k: int) -> AttackRequested:
        options = AuditOptions(candidates_per_round=k, rounds=2, gold_repeats=2)
        return AttackRequested(correlation_id="audit-ref-budget", task=tiny.task, options=options)

    every = await run_attack(
        request(500), TimedSandbox([_rules(tiny.task)], _every_run(10.0)), None,
        InMemoryStateStore(RoundState), _attack_only(),
    )  # fmt: skip
    sandbox = TimedSandbox([_rules(tiny.task)], _every_run(10.0))
    store = InMemoryStateStore(RoundState)
    exact = request(len(every.outcomes))
    done = await run_attack(exact, sandbox, None, store, _attack_only())
    assert done.rounds_run == 1 and "no mutant beyond gold's lines" in done.budget_note
    assert done.spent is not None
    assert sum(done.spent.by_kind.values()) == sum(sandbox.spent)
    stored = store.load(state_key(exact))
    assert stored is not None and stored.attack_seconds == sum(sandbox.spent)


async def test_a_pool_costlier_than_the_attack_stops_within_the_attacks_seconds(tiny) -> None:
    unbounded = AttackConfig(reference_max_seconds=1e9, reference_attack_share=1000.0)
    full, _ = await _audit(tiny.task, _every_run(10.0), unbounded)
    done, sandbox = await _audit(tiny.task, _every_run(10.0))
    assert full.reference is not None and done.reference is not None
    attack = done.reference.attack_seconds
    assert attack is not None and full.reference.sandbox_seconds > attack
    assert done.reference.budget_seconds == attack
    # The pool's runs are what the sandbox reported after the attack's: within the attack's.
    pool_runs = sum(sandbox.spent) - attack
    assert done.reference.sandbox_seconds == pool_runs <= attack
    spent = [o for o in done.reference.outcomes if "the pool's budget of" in o.evidence]
    assert spent and all(o.status is ReferenceStatus.LEFT_OUT for o in spent)
    assert all(f"the attack's own {attack:.0f}" in o.evidence for o in spent)
    # Every member is accounted for, graded or left out with the reason.
    assert len(done.reference.outcomes) == len(full.reference.outcomes)
    graded = [o for o in done.reference.outcomes if o not in spent]
    assert graded and graded[0].kind == ref.GOLD


async def test_the_cap_still_bounds_a_pool_beside_a_costly_attack(tiny) -> None:
    config = AttackConfig(reference_max_seconds=25.0)
    done, _ = await _audit(tiny.task, _every_run(10.0), config)
    assert done.reference is not None and done.reference.budget_seconds == 25.0
    assert done.reference.sandbox_seconds <= 25.0
    assert any(
        "budget of 25 sandbox-seconds (its cap" in o.evidence for o in done.reference.outcomes
    )


async def test_a_run_longer_than_what_is_left_times_out_within_it(tiny) -> None:
    def seconds(request: RunRequested) -> float:
        if request.purpose is RunPurpose.CANDIDATE:
            return 100.0
        return 1000.0 if request.purpose is RunPurpose.PROBE else 10.0

    # A run that times out is counted a second past its timeout (as one kept in the background
    # a while would be).
    sandbox = TimedSandbox([_rules(tiny.task)], seconds, overrun_s=1.0)
    done = await run_attack(_request(tiny.task), sandbox, None, InMemoryStateStore(RoundState))
    pool = done.reference
    assert pool is not None and pool.attack_seconds is not None
    # The probe run of a rewrite got what was left (it would take 1000 s) and timed out within
    # it: the rewrite is left out, and the pool, its timeout's overrun included, stays inside.
    cut = [o for o in pool.outcomes if "timed out within" in o.evidence]
    assert cut and all(o.status is ReferenceStatus.LEFT_OUT for o in cut)
    assert pool.sandbox_seconds == sum(sandbox.spent) - pool.attack_seconds
    assert pool.sandbox_seconds <= pool.attack_seconds
    # A member the task's tests grade cheaply is still graded after it: gold, from its runs.
    assert any(o.kind == ref.GOLD and o.status is ReferenceStatus.ACCEPTED for o in pool.outcomes)


async def test_golds_runs_from_the_audit_are_not_run_again_and_grade_gold_in_any_budget(
    tiny,
) -> None:
    """The audit's sanity step ran gold's graded runs; the request carries them. The attacker
    sends no run of gold's tests, and the pool grades gold from them even when gold's runs
    (1,000 s each) cost more than the whole attack: without them gold is left out."""

    def seconds(request: RunRequested) -> float:
        return 1000.0 if request.purpose is RunPurpose.GOLD else 1.0

    graded = [*tiny.task.fail_to_pass, *tiny.task.pass_to_pass]
    request = _request(tiny.task)
    carried = request.model_copy(update={"gold_runs": (passed(graded),) * 2})
    runs: dict[bool, tuple[AttackCompleted, TimedSandbox]] = {}
    for given, sent in ((False, request), (True, carried)):
        sandbox = TimedSandbox([_rules(tiny.task)], seconds)
        config = AttackConfig(reference_attack_share=0.5)  # less than gold's runs cost
        runs[given] = (
            await run_attack(sent, sandbox, None, InMemoryStateStore(RoundState), config),
            sandbox,
        )
    done, sandbox = runs[True]
    assert not [r for r in sandbox.requests if r.purpose is RunPurpose.GOLD]
    assert done.reference is not None
    gold = [o for o in done.reference.outcomes if o.kind == ref.GOLD]
    assert [o.status for o in gold] == [ReferenceStatus.ACCEPTED]
    without, _ = runs[False]
    assert without.reference is not None
    gold = [o for o in without.reference.outcomes if o.kind == ref.GOLD]
    assert [o.status for o in gold] == [ReferenceStatus.LEFT_OUT]


@pytest.mark.parametrize(("selection", "kind"), [(True, "coverage"), (False, "suite")])
async def test_the_wider_suite_is_skipped_when_it_cannot_fit(
    tiny, selection: bool, kind: str
) -> None:
    """Mutants the tests accept need the wider suite to be confirmed (with test selection, its
    coverage run on gold first); its timeout is 600 s, the pool has less left: it is not run,
    and the mutants are left out, saying why."""
    confirmation = ConfirmationConfig(suite_selection=selection)
    config = AttackConfig(confirmation=confirmation)

    def seconds(request: RunRequested) -> float:
        return 100.0 if request.purpose is RunPurpose.CANDIDATE else 10.0

    done, sandbox = await _audit(tiny.task, seconds, config, members_resolve=True)
    _, attack_runs = await _audit(tiny.task, seconds, _attack_only(config), members_resolve=True)
    assert done.reference is not None
    costly = {"suite", "coverage"}
    sent = [r for r in sandbox.requests if r.invocation.kind in costly]
    assert len(sent) == len([r for r in attack_runs.requests if r.invocation.kind in costly])
    mutants = [
        o
        for o in done.reference.outcomes
        if o.role is ReferenceRole.INCORRECT
        and o.kind != ref.EMPTY
        and not o.evidence.startswith("graded in the attack")
    ]
    assert mutants and all(o.status is ReferenceStatus.LEFT_OUT for o in mutants)
    accepted = [o.evidence for o in mutants if "accepted by the task's tests" in o.evidence]
    assert accepted and all("not confirmed incorrect" in e for e in accepted)
    assert all(f"{kind!r} (up to 600 s each) does not fit" in e for e in accepted), accepted
    assert all("does not fit" in o.evidence for o in mutants)
    assert done.reference.sandbox_seconds <= (done.reference.attack_seconds or 0.0)


async def test_a_resumed_attack_keeps_its_count(tiny) -> None:
    seconds = _every_run(10.0)
    store = InMemoryStateStore(RoundState)

    class Crashing(TimedSandbox):
        async def run(self, request: RunRequested) -> RunCompleted:
            if request.purpose is RunPurpose.CANDIDATE and self.count(RunPurpose.CANDIDATE) >= 1:
                raise RuntimeError("sandbox went away")
            return await super().run(request)

    first = Crashing([_rules(tiny.task)], seconds)
    with pytest.raises(RuntimeError):
        await run_attack(_request(tiny.task), first, None, store)
    stored = store.load(state_key(_request(tiny.task)))
    assert stored is not None and stored.reference is None
    assert stored.attack_seconds == sum(first.spent) > 0  # every run before the crash
    second = TimedSandbox([_rules(tiny.task)], seconds)
    resumed = await run_attack(_request(tiny.task), second, None, store)
    whole, _ = await _audit(tiny.task, seconds)
    assert resumed.reference is not None and whole.reference is not None
    assert resumed.reference.attack_seconds == whole.reference.attack_seconds
    assert resumed.spent == whole.spent


def test_a_state_stored_before_runs_were_counted_by_kind_still_loads(tiny) -> None:
    state = RoundState(
        key="k",
        correlation_id="c",
        task=tiny.task,
        options=AuditOptions(),
        sandbox_seconds=12.0,
        reference=ref.plan(tiny.task, 2),
    )
    old = state.model_dump(mode="json")
    del old["seconds_by_kind"]
    for field in ("budget_seconds", "attack_seconds"):
        del old["reference"][field]
    loaded = RoundState.model_validate(old)
    assert loaded.attack_seconds == 12.0  # its candidates' runs: all it counted
    assert loaded.reference is not None and loaded.reference.budget_seconds is None
