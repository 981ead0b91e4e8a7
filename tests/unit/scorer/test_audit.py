"""The audit steps: reference runs, sanity, attack, score — with redeliveries changing nothing."""

from __future__ import annotations

import pytest

from hackaudit.scorer.domain import audit
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    PassAtOne,
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
    Verdict,
)

POLICY = ScoringPolicy()
TASK = Task(
    instance_id="lib__lib-1",
    repo="x/lib",
    base_commit="abc",
    patch="gold",
    test_patch="tests",
    FAIL_TO_PASS=["t::a"],
    pass_at_1=PassAtOne(successes=1, attempts=2),
)


def ok(resolved: bool) -> RunResult:
    status = TestStatus.PASSED if resolved else TestStatus.FAILED
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests={"t::a": status})


def run(purpose: RunPurpose, *results: RunResult, flaky: bool = False) -> RunCompleted:
    return RunCompleted(
        correlation_id="c1",
        instance_id=TASK.instance_id,
        purpose=purpose,
        request_key="k",
        results=results,
        flaky=flaky,
    )


def started() -> audit.AuditState:
    queued = audit.begin(TaskIngested(correlation_id="c1", task=TASK))
    assert queued.stage is audit.Stage.QUEUED
    state, out = audit.admit(queued)
    assert state.stage is audit.Stage.SANITY
    assert [m.purpose for m in out if isinstance(m, RunRequested)] == [
        RunPurpose.GOLD,
        RunPurpose.EMPTY,
    ]
    return state


def test_sane_task_is_attacked_after_both_reference_runs() -> None:
    state, out = audit.on_run(started(), run(RunPurpose.GOLD, ok(True), ok(True), ok(True)), POLICY)
    assert out == []
    state, sent = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    assert [type(m) for m in sent] == [AttackRequested]
    assert state.stage is audit.Stage.ATTACK
    # gold's graded runs go with the request: the attacker does not run them again
    assert isinstance(sent[0], AttackRequested) and sent[0].gold_runs == (ok(True),) * 3
    # a redelivered run result changes nothing, and sends the same request again: the scorer may
    # have died after saving the step and before sending (the bus drops the copy by its key)
    again, out = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    assert again == state and out == sent


@pytest.mark.parametrize(
    ("gold", "empty", "flaky", "reason"),
    [
        ((ok(False), ok(False)), ok(False), False, "gold_fails"),
        ((ok(True), ok(False)), ok(False), False, "gold_flaky"),
        ((ok(True), ok(True)), ok(False), True, "gold_flaky"),
        ((ok(True), ok(True)), ok(True), False, "empty_passes"),
        (
            (RunResult(status=RunStatus.PATCH_FAILED, reason="hunk 2 failed"),),
            ok(False),
            False,
            "gold patch does not apply: hunk 2 failed",
        ),
    ],
)
def test_insane_task_is_dropped_before_any_attack(
    gold: tuple[RunResult, ...], empty: RunResult, flaky: bool, reason: str
) -> None:
    state, _ = audit.on_run(started(), run(RunPurpose.GOLD, *gold, flaky=flaky), POLICY)
    state, out = audit.on_run(state, run(RunPurpose.EMPTY, empty), POLICY)
    assert len(out) == 1 and isinstance(out[0], TaskScored)
    assert out[0].verdict is Verdict.DROP
    assert reason in out[0].reason
    assert state.stage is audit.Stage.SCORED


def test_infrastructure_error_is_not_a_verdict_on_the_task() -> None:
    infra = RunResult(status=RunStatus.INFRA_ERROR, reason="engine gone")
    state, _ = audit.on_run(started(), run(RunPurpose.GOLD, infra), POLICY)
    _, out = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    assert isinstance(out[0], TaskScored) and out[0].verdict is Verdict.ERROR


def outcome(verdict: CandidateVerdict, n: int) -> CandidateOutcome:
    return CandidateOutcome(
        candidate=Candidate(instance_id=TASK.instance_id, diff=f"d{n}"), verdict=verdict
    )


def test_score_uses_confirmed_candidates_only() -> None:
    state, _ = audit.on_run(started(), run(RunPurpose.GOLD, ok(True)), POLICY)
    state, _ = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    attack = AttackCompleted(
        correlation_id="c1",
        instance_id=TASK.instance_id,
        outcomes=(
            outcome(CandidateVerdict.EXPLOIT, 1),
            outcome(CandidateVerdict.BLOCKED, 2),
            outcome(CandidateVerdict.BLOCKED, 3),
            outcome(CandidateVerdict.BLOCKED, 4),
            outcome(CandidateVerdict.UNCONFIRMED, 5),
            outcome(CandidateVerdict.INVALID, 6),
        ),
    )
    state, out = audit.on_attack(state, attack, POLICY)
    scored = out[0]
    assert isinstance(scored, TaskScored)
    # V = 1 (gold resolved, empty rejected), H = 1/4, D = 4·0.5·0.5 = 1, no judge:
    # (0.35·1 + 0.30·0.75 + 0.15·1) / 0.80 = 0.90625
    assert scored.components == {"V": 1.0, "H": 0.25, "D": 1.0}
    assert scored.eqs == pytest.approx(0.90625)
    # EQS alone says KEEP; the default policy caps a task with a confirmed exploit at FIX.
    assert scored.verdict is Verdict.FIX
    assert "never KEEP" in scored.reason and "caps the verdict at FIX" in scored.policy
    assert scored.hackable is True
    assert len(scored.exploits) == 1
    assert scored.d_source == "task file"

    thresholds_only = ScoringPolicy(exploit_never_keep=False)
    _, out = audit.on_attack(state.model_copy(update={"stage": audit.Stage.ATTACK}),
                             attack, thresholds_only)  # fmt: skip
    assert isinstance(out[0], TaskScored)
    assert out[0].verdict is Verdict.KEEP and "thresholds only" in out[0].policy


def test_harness_tampering_is_reported_apart_from_the_tasks_own_exploits() -> None:
    state, _ = audit.on_run(started(), run(RunPurpose.GOLD, ok(True)), POLICY)
    state, _ = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    tampering = CandidateOutcome(
        candidate=Candidate(instance_id=TASK.instance_id, diff="conftest"),
        verdict=CandidateVerdict.EXPLOIT,
        tampering=True,
    )
    attack = AttackCompleted(
        correlation_id="c1",
        instance_id=TASK.instance_id,
        outcomes=(tampering, outcome(CandidateVerdict.BLOCKED, 2)),
    )
    _, out = audit.on_attack(state, attack, POLICY)
    scored = out[0]
    assert isinstance(scored, TaskScored)
    assert scored.hackable is False
    assert scored.components["H"] == 0.0  # one blocked candidate; the tampering one not counted
    assert scored.harness_exploits == (tampering.candidate.candidate_id,)
    assert "tamper" in scored.reason
    # A harness hole passes every task graded by that harness alike: reported, but by default
    # the verdict is the task's tests' own; with harness_caps it caps the verdict too.
    assert scored.verdict is Verdict.KEEP
    state = state.model_copy(update={"stage": audit.Stage.ATTACK})
    _, out = audit.on_attack(state, attack, ScoringPolicy(harness_caps=True))
    assert isinstance(out[0], TaskScored) and out[0].verdict is Verdict.FIX
    assert "harness ones included" in out[0].policy


def member(
    role: ReferenceRole, status: ReferenceStatus, n: int, kind: str = ""
) -> ReferenceOutcome:
    candidate = Candidate(instance_id=TASK.instance_id, diff=f"ref{n}")
    return ReferenceOutcome(candidate=candidate, role=role, status=status, kind=kind)


def scored_with_pool(pool: ReferencePool | None, *blocked: int) -> TaskScored:
    state, _ = audit.on_run(started(), run(RunPurpose.GOLD, ok(True), ok(True)), POLICY)
    state, _ = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    attack = AttackCompleted(
        correlation_id="c1",
        instance_id=TASK.instance_id,
        outcomes=tuple(outcome(CandidateVerdict.BLOCKED, n) for n in blocked),
        reference=pool,
    )
    _, out = audit.on_attack(state, attack, POLICY)
    assert isinstance(out[0], TaskScored)
    return out[0]


COR, INC = ReferenceRole.CORRECT, ReferenceRole.INCORRECT
ACC, REJ, OUT = ReferenceStatus.ACCEPTED, ReferenceStatus.REJECTED, ReferenceStatus.LEFT_OUT


def test_v_is_youden_j_over_the_reference_pool() -> None:
    pool = ReferencePool(
        outcomes=(
            member(COR, ACC, 0, "gold"),  # the sanity runs already count gold and the empty patch
            member(INC, REJ, 1, "empty"),
            member(COR, ACC, 2, "rename-locals"),
            member(COR, REJ, 3, "docstring"),  # a correct rewrite the tests reject
            member(COR, OUT, 4, "invert-if"),  # not shown equal to gold: not counted
            member(INC, REJ, 5),
            member(INC, REJ, 6),
            member(INC, ACC, 7),  # confirmed incorrect, accepted
            member(INC, OUT, 8),
        )
    )
    scored = scored_with_pool(pool, 9)
    d = scored.discrimination
    assert d is not None
    # C+ = gold, rename, docstring: TPR 2/3. C- = empty, 5, 6, 7: TNR 3/4. J = 2/3 + 3/4 - 1.
    assert (d.correct, d.incorrect, d.correct_left_out, d.incorrect_left_out) == (3, 4, 1, 1)
    assert d.tpr == pytest.approx(2 / 3) and d.tnr == pytest.approx(0.75)
    assert d.balanced_accuracy == pytest.approx((2 / 3 + 0.75) / 2)
    assert scored.components["V"] == pytest.approx(2 / 3 + 0.75 - 1)
    assert d.over_strict and d.rejected_correct == (pool.outcomes[3].candidate.candidate_id,)
    # The accepted incorrect reference mutant is an exploit: hackable, and never KEEP.
    assert scored.exploits == (pool.outcomes[7].candidate.candidate_id,)
    assert scored.hackable is True and scored.verdict is not Verdict.KEEP
    assert "over-strict" in scored.reason and "1 correct and 1 incorrect left out" in scored.reason


def test_without_a_pool_v_comes_from_gold_and_the_empty_patch() -> None:
    scored = scored_with_pool(None, 1, 2)
    d = scored.discrimination
    assert d is not None and (d.correct, d.incorrect) == (1, 1)
    assert scored.components["V"] == 1.0 and scored.verdict is Verdict.KEEP
    assert "no pool" in scored.reason and not d.over_strict


def test_a_pool_where_the_tests_accept_every_mutant_gives_v_zero() -> None:
    pool = ReferencePool(outcomes=tuple(member(INC, ACC, n) for n in range(3)))
    scored = scored_with_pool(pool, 9)
    # TNR = 1 (empty) / 4; TPR = 1; J = 0.25. H = 0/1 (the attack found nothing).
    assert scored.components["V"] == pytest.approx(0.25)
    assert scored.verdict is Verdict.FIX and len(scored.exploits) == 3


def test_the_attack_gets_golds_longest_run_with_its_time_in_the_background() -> None:
    """Gold's second run held a slot 3 s and went on 9 s in the background: the attack's runs
    of the same tests are sized from its 12 s, not from the 5 s of the run that held its slot."""
    held = ok(True).model_copy(update={"duration_s": 5.0})
    moved = ok(True).model_copy(update={"duration_s": 3.0, "background_s": 9.0})
    state, _ = audit.on_run(started(), run(RunPurpose.GOLD, held, moved, held), POLICY)
    _, sent = audit.on_run(state, run(RunPurpose.EMPTY, ok(False)), POLICY)
    assert isinstance(sent[0], AttackRequested) and sent[0].gold_duration_s == 12.0
