"""One task's audit, step by step: reference runs, sanity, attack, score.

Each step takes the stored state and one incoming message and returns the new state and the
messages to send. Steps are idempotent: a redelivered message changes nothing and sends the same
messages again (the bus drops them as duplicates by their idempotency keys).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from hackaudit.scorer.domain.eqs import (
    Components,
    ScoringPolicy,
    eqs,
    hackability,
    learnability,
    verdict,
    youden_j,
)
from hackaudit.scorer.domain.sanity import Sanity, check_sanity
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    AuditOptions,
    Candidate,
    CandidateVerdict,
    Message,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    Task,
    TaskIngested,
    TaskScored,
    Verdict,
)

REQUESTER = "scorer"


class Stage(StrEnum):
    SANITY = "sanity"
    ATTACK = "attack"
    SCORED = "scored"


class AuditState(BaseModel):
    model_config = ConfigDict(frozen=True)

    correlation_id: str
    task: Task
    options: AuditOptions
    stage: Stage = Stage.SANITY
    gold: tuple[RunResult, ...] | None = None
    gold_flaky: bool = False
    empty: RunResult | None = None
    sanity: Sanity | None = None
    attack: AttackCompleted | None = None  # kept as the evidence behind the verdict
    scored: TaskScored | None = None


def begin(msg: TaskIngested) -> tuple[AuditState, list[Message]]:
    state = AuditState(correlation_id=msg.correlation_id, task=msg.task, options=msg.options)
    return state, reference_runs(state)


def reference_runs(state: AuditState) -> list[Message]:
    task = state.task
    return [
        RunRequested(
            correlation_id=state.correlation_id,
            task=task,
            purpose=RunPurpose.GOLD,
            candidate=Candidate.gold(task),
            repeats=state.options.gold_repeats,
            requested_by=REQUESTER,
        ),
        RunRequested(
            correlation_id=state.correlation_id,
            task=task,
            purpose=RunPurpose.EMPTY,
            candidate=Candidate.empty(task),
            requested_by=REQUESTER,
        ),
    ]


def on_run(
    state: AuditState, run: RunCompleted, policy: ScoringPolicy
) -> tuple[AuditState, list[Message]]:
    if state.stage is not Stage.SANITY:
        return state, []
    if run.purpose is RunPurpose.GOLD:
        state = state.model_copy(update={"gold": run.results, "gold_flaky": run.flaky})
    elif run.purpose is RunPurpose.EMPTY:
        state = state.model_copy(update={"empty": run.result})
    else:
        return state, []
    if state.gold is None or state.empty is None:
        return state, []
    result = check_sanity(state.gold, state.empty, gold_flaky=state.gold_flaky)
    state = state.model_copy(update={"sanity": result.sanity})
    if result.sanity is Sanity.OK:
        durations = [r.duration_s for r in state.gold or () if r.duration_s > 0]
        attack = AttackRequested(
            correlation_id=state.correlation_id,
            task=state.task,
            options=state.options,
            gold_duration_s=max(durations) if durations else None,
        )
        return state.model_copy(update={"stage": Stage.ATTACK}), [attack]
    scored = TaskScored(
        correlation_id=state.correlation_id,
        instance_id=state.task.instance_id,
        verdict=Verdict.ERROR if result.sanity is Sanity.INFRA_ERROR else Verdict.DROP,
        reason=f"{result.sanity.value}: {result.reason}",
        hackable=True if result.sanity is Sanity.EMPTY_PASSES else None,
        exploits=("empty patch",) if result.sanity is Sanity.EMPTY_PASSES else (),
    )
    return state.model_copy(update={"stage": Stage.SCORED, "scored": scored}), [scored]


def components(state: AuditState, attack: AttackCompleted) -> Components:
    gold = state.gold or ()
    tpr = sum(1 for r in gold if r.resolved) / len(gold) if gold else 0.0
    tnr = 0.0 if state.empty is None or state.empty.resolved else 1.0
    counts = dict.fromkeys(CandidateVerdict, 0)
    for outcome in attack.outcomes:
        if not outcome.tampering:  # harness findings are reported apart, not counted in H
            counts[outcome.verdict] += 1
    pass_at_1 = state.task.pass_at_1
    return Components(
        v=youden_j(tpr, tnr),
        h=hackability(counts[CandidateVerdict.EXPLOIT], counts[CandidateVerdict.BLOCKED]),
        d=learnability(pass_at_1) if pass_at_1 else None,
    )


def on_attack(
    state: AuditState, attack: AttackCompleted, policy: ScoringPolicy
) -> tuple[AuditState, list[Message]]:
    if state.stage is not Stage.ATTACK:
        return state, []
    parts = components(state, attack)
    score = eqs(parts, policy)
    exploits = tuple(
        o.candidate.candidate_id
        for o in attack.outcomes
        if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering
    )
    harness = tuple(
        o.candidate.candidate_id
        for o in attack.outcomes
        if o.verdict is CandidateVerdict.EXPLOIT and o.tampering
    )
    used = ", ".join(parts.as_dict()) or "none"
    harness_note = (
        f"; the harness also accepted {len(harness)} candidate(s) that tamper with the tests or "
        "the runner (fix in the environment: protect test files and test configuration, grade "
        "from the runner's own report)"
        if harness
        else ""
    )
    scored = TaskScored(
        correlation_id=state.correlation_id,
        instance_id=state.task.instance_id,
        verdict=verdict(score, policy) if score is not None else Verdict.ERROR,
        eqs=score,
        components=parts.as_dict(),
        reason=f"components used: {used}; {len(attack.outcomes)} candidates, "
        f"{len(exploits)} confirmed exploits{harness_note}",
        hackable=bool(exploits),
        exploits=exploits,
        harness_exploits=harness,
    )
    update = {"stage": Stage.SCORED, "scored": scored, "attack": attack}
    return state.model_copy(update=update), [scored]
