"""The judge step of an audit: what the scorer asks, F1 computed by hand, abstentions, the judge
left out, and redelivered messages changing nothing."""

from __future__ import annotations

import pytest

from hackaudit.scorer.domain import agreement, audit
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.shared.contracts import (
    AttackCompleted,
    AuditOptions,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    JudgeCompleted,
    JudgeLabel,
    JudgeRequested,
    JudgeUsage,
    JudgeVerdict,
    PassAtOne,
    ReferenceOutcome,
    ReferencePool,
    ReferenceRole,
    ReferenceStatus,
    RunCompleted,
    RunPurpose,
    RunResult,
    RunStatus,
    Task,
    TaskIngested,
    TaskScored,
    TestStatus,
)

POLICY = ScoringPolicy()
TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold", test_patch="tests",
    FAIL_TO_PASS=["t::a"], pass_at_1=PassAtOne(successes=1, attempts=2),
)  # fmt: skip
C, P, INC, A = JudgeLabel.CORRECT, JudgeLabel.PARTIAL, JudgeLabel.INCORRECT, JudgeLabel.ABSTAIN


def cand(n: int) -> Candidate:
    return Candidate(instance_id=TASK.instance_id, diff=f"d{n}")


def tried(n: int, verdict: CandidateVerdict, resolved: bool | None) -> CandidateOutcome:
    return CandidateOutcome(candidate=cand(n), verdict=verdict, resolved=resolved)


def ref(n: int, role: ReferenceRole, status: ReferenceStatus) -> ReferenceOutcome:
    return ReferenceOutcome(candidate=cand(100 + n), role=role, status=status)


EX, BL, UN, INV = (CandidateVerdict.EXPLOIT, CandidateVerdict.BLOCKED,
                   CandidateVerdict.UNCONFIRMED, CandidateVerdict.INVALID)  # fmt: skip
ATTACK = AttackCompleted(
    correlation_id="c1",
    instance_id=TASK.instance_id,
    outcomes=(
        tried(1, EX, True),  # accepted, confirmed incorrect: execution says incorrect
        tried(2, BL, False),  # rejected: incorrect
        tried(3, UN, True),  # accepted, not shown incorrect: correct
        tried(4, INV, None),  # never ran: not asked about
    ),
    reference=ReferencePool(
        outcomes=(
            ref(1, ReferenceRole.CORRECT, ReferenceStatus.ACCEPTED),  # gold: correct
            ref(2, ReferenceRole.INCORRECT, ReferenceStatus.REJECTED),  # mutant: incorrect
            ref(3, ReferenceRole.INCORRECT, ReferenceStatus.LEFT_OUT),  # not counted
        )
    ),
)


def ok(resolved: bool) -> RunResult:
    status = TestStatus.PASSED if resolved else TestStatus.FAILED
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests={"t::a": status})


def attacked(judge: bool = True) -> audit.AuditState:
    ingested = TaskIngested(correlation_id="c1", task=TASK, options=AuditOptions(judge=judge))
    state, _ = audit.admit(audit.begin(ingested))
    for purpose, result in ((RunPurpose.GOLD, ok(True)), (RunPurpose.EMPTY, ok(False))):
        done = RunCompleted(correlation_id="c1", instance_id=TASK.instance_id, purpose=purpose,
                            request_key=purpose.value, results=(result,))  # fmt: skip
        state, _ = audit.on_run(state, done, POLICY)
    assert state.stage is audit.Stage.ATTACK
    return state


def answer(
    labels: dict[int, JudgeLabel], request: JudgeRequested, **extra: object
) -> JudgeCompleted:
    verdicts = tuple(
        JudgeVerdict(candidate_id=cand(n).candidate_id, samples=(label,) * 3, label=label)
        for n, label in labels.items()
    )
    return JudgeCompleted(correlation_id="c1", instance_id=TASK.instance_id, verdicts=verdicts,
                          request_key=request.idempotency_key, requested_by="judge", **extra)  # type: ignore[arg-type]  # fmt: skip


def test_the_scorer_asks_about_every_candidate_that_ran_and_the_counted_pool() -> None:
    state, out = audit.on_attack(attacked(), ATTACK, POLICY)
    assert state.stage is audit.Stage.JUDGE and state.scored is None
    (request,) = out
    assert isinstance(request, JudgeRequested) and request.samples == 3
    asked = {c.diff for c in request.candidates}
    assert asked == {"d1", "d2", "d3", "d101", "d102"}
    # redelivered attack: the same request again (the bus drops the duplicate), state unchanged
    again, out2 = audit.on_attack(state, ATTACK, POLICY)
    assert again == state and out2 == [request]


@pytest.mark.parametrize(
    ("labels", "f1", "counts"),
    [
        # execution: d1 no, d2 no, d3 yes, d101 yes, d102 no
        ({1: INC, 2: INC, 3: C, 101: C, 102: INC}, 1.0, (2, 0, 0, 3, 0)),
        # judge calls the exploit correct, and misses the unconfirmed one (partial = incorrect):
        # TP 1 (d101), FP 1 (d1), FN 1 (d3) -> 2/(2+1+1) = 0.5
        ({1: C, 2: INC, 3: P, 101: C, 102: INC}, 0.5, (1, 1, 1, 2, 0)),
        # abstentions left out and counted: TP 1 (d101), FN 0, FP 0 -> 1.0 over 3 compared
        ({1: A, 2: INC, 3: A, 101: C}, 1.0, (1, 0, 0, 1, 3)),
        # the judge says nothing is correct: TP 0, FN 2 -> 0.0
        ({1: INC, 2: INC, 3: INC, 101: INC, 102: INC}, 0.0, (0, 0, 2, 3, 0)),
    ],
)
def test_f1_by_hand(
    labels: dict[int, JudgeLabel], f1: float, counts: tuple[int, int, int, int, int]
) -> None:
    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    state, out = audit.on_judge(state, answer(labels, request), POLICY)
    (scored,) = out
    assert isinstance(scored, TaskScored) and scored.judge is not None
    j = scored.judge
    assert j.f1 == pytest.approx(f1)
    assert (j.true_positive, j.false_positive, j.false_negative, j.true_negative,
            j.abstained) == counts  # fmt: skip
    assert scored.components["F1"] == pytest.approx(f1)
    assert f"F1 {f1:.2f}" in scored.reason
    # EQS with all four: V = 1 (gold and C+ accepted, empty and mutant rejected), H = 1/2
    assert scored.eqs == pytest.approx((0.35 * 1 + 0.30 * 0.5 + 0.20 * f1 + 0.15 * 1.0) / 1.0)
    # a redelivered judgement changes nothing, and sends the same verdict again (the bus drops it)
    again, out2 = audit.on_judge(state, answer(labels, request), POLICY)
    assert again == state and out2 == [scored]


def test_f1_is_one_when_both_label_nothing_correct() -> None:
    assert agreement.f1_score(0, 0, 0) == 1.0
    attack = ATTACK.model_copy(update={"outcomes": (tried(1, EX, True), tried(2, BL, False)),
                                       "reference": None})  # fmt: skip
    state, (request,) = audit.on_attack(attacked(), attack, POLICY)
    assert isinstance(request, JudgeRequested)
    _, (scored,) = audit.on_judge(state, answer({1: P, 2: INC}, request), POLICY)
    assert isinstance(scored, TaskScored) and scored.judge is not None
    assert scored.judge.f1 == 1.0 and scored.judge.true_negative == 2


def test_every_vote_abstaining_leaves_f1_out() -> None:
    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    _, (scored,) = audit.on_judge(state, answer({1: A, 2: A}, request), POLICY)
    assert isinstance(scored, TaskScored) and scored.judge is not None
    assert "F1" not in scored.components and scored.judge.abstained == 5
    assert "F1 left out: the judge abstained on all 5" in scored.reason


def test_a_judge_without_backend_leaves_f1_out_and_says_so() -> None:
    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    reply = answer({}, request, left_out="no judge backend configured")
    _, (scored,) = audit.on_judge(state, reply, POLICY)
    assert isinstance(scored, TaskScored)
    assert "F1" not in scored.components
    assert "F1 left out: no judge backend configured" in scored.reason
    # V = 1, H = 1/2, D = 1 renormalised over 0.80
    assert scored.eqs == pytest.approx((0.35 + 0.15 + 0.15) / 0.80)


def test_without_a_judge_the_audit_scores_at_once_and_says_f1_was_left_out() -> None:
    state, (scored,) = audit.on_attack(attacked(judge=False), ATTACK, POLICY)
    assert state.stage is audit.Stage.SCORED and isinstance(scored, TaskScored)
    assert scored.judge is None and "F1" not in scored.components
    assert "F1 left out: no judge asked" in scored.reason


def test_an_answer_to_another_request_is_ignored() -> None:
    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    other = JudgeRequested(correlation_id="c1", task=TASK, candidates=(cand(9),),
                           requested_by="repairer")  # fmt: skip
    again, out = audit.on_judge(state, answer({1: C}, other), POLICY)
    assert again == state and out == []


def test_usage_and_rationales_are_kept_in_the_score() -> None:
    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    usage = JudgeUsage(backend="anthropic", model="m", calls=15, input_tokens=30000,
                       output_tokens=6000, cost_usd=0.18, priced=True)  # fmt: skip
    _, (scored,) = audit.on_judge(state, answer({1: INC, 3: C}, request, usage=usage), POLICY)
    assert isinstance(scored, TaskScored) and scored.judge is not None
    assert scored.judge.usage == usage and len(scored.judge.verdicts) == 2
    assert "$0.1800" in scored.reason and "15 calls" in scored.reason
    assert TaskScored.model_validate_json(scored.model_dump_json()) == scored


def test_a_judge_whose_backend_never_answers_says_why_f1_is_missing() -> None:
    from hackaudit.shared.contracts import JudgeSample, JudgeSampleOutcome

    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    down = JudgeSample(label=A, outcome=JudgeSampleOutcome.UNAVAILABLE, detail="503")
    verdicts = tuple(
        JudgeVerdict(candidate_id=c.candidate_id, samples=(A,) * 3, label=A, details=(down,) * 3)
        for c in request.candidates
    )
    reply = JudgeCompleted(correlation_id="c1", instance_id=TASK.instance_id, verdicts=verdicts,
                           request_key=request.idempotency_key)  # fmt: skip
    _, (scored,) = audit.on_judge(state, reply, POLICY)
    assert isinstance(scored, TaskScored)
    assert "abstained on all 5 candidates (samples: 15 unavailable)" in scored.reason
