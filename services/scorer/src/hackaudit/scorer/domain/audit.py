"""One task's audit, step by step: reference runs, sanity, attack, judge (when asked), score.

Each step takes the stored state and one incoming message and returns the new state and the
messages to send. Steps are idempotent: a redelivered message changes nothing and sends the same
messages again (the bus drops them as duplicates by their idempotency keys).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from hackaudit.scorer.domain import agreement
from hackaudit.scorer.domain.discrimination import describe, discrimination
from hackaudit.scorer.domain.eqs import (
    Components,
    ScoringPolicy,
    decide,
    eqs,
    hackability,
    learnability,
    youden_j,
)
from hackaudit.scorer.domain.sanity import Sanity, check_sanity
from hackaudit.scorer.domain.unverified import account
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    AuditOptions,
    Candidate,
    CandidateVerdict,
    JudgeAgreement,
    JudgeCompleted,
    Message,
    RepairCompleted,
    RepairRequested,
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
    QUEUED = "queued"  # ingested; waits for a place among the audits in flight
    SANITY = "sanity"
    ATTACK = "attack"
    JUDGE = "judge"  # the attack is in (kept in `attack`); waiting for the judge's answer
    SCORED = "scored"
    # Left unfinished (queued or in flight) by a one-shot run that was stopped; marked so when
    # the next such run starts on the same store. Never admitted; its messages change nothing.
    STOPPED = "stopped"


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
    # Repair (`domain.repair`): the request sent for a FIX verdict, the repairer's answer, and,
    # for the re-audit of a hardened task, the audit it stems from and that audit's verdict.
    repair_request: RepairRequested | None = None
    repair: RepairCompleted | None = None
    repaired_from: str = ""
    previous_verdict: str = ""


# Audits between admission and their verdict: each holds sandbox runs or an attack.
IN_FLIGHT = frozenset({Stage.SANITY, Stage.ATTACK, Stage.JUDGE})
# Audits a one-shot run stops following when it is stopped: queued or in flight.
UNFINISHED = IN_FLIGHT | {Stage.QUEUED}


def stop(state: AuditState) -> AuditState:
    """An unfinished audit given up on (`Stage.STOPPED`); any other audit as it is."""
    if state.stage not in UNFINISHED:
        return state
    return state.model_copy(update={"stage": Stage.STOPPED})


def begin(msg: TaskIngested) -> AuditState:
    """A new audit, queued: `admit` starts it when there is a place for it."""
    return AuditState(
        correlation_id=msg.correlation_id,
        task=msg.task,
        options=msg.options,
        stage=Stage.QUEUED,
        repaired_from=msg.repaired_from,
        previous_verdict=msg.previous_verdict,
    )


def places(in_flight: int, limit: int) -> int | None:
    """How many queued audits may start with `in_flight` audits before their verdict, at most
    `limit` at once (0: no limit, None: every queued audit)."""
    return None if limit <= 0 else max(0, limit - in_flight)


def admit(state: AuditState) -> tuple[AuditState, list[Message]]:
    """A queued audit started: its sanity runs (gold's, the empty patch's) are asked for."""
    if state.stage is not Stage.QUEUED:
        return state, []
    state = state.model_copy(update={"stage": Stage.SANITY})
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
    if state.stage is Stage.STOPPED:
        return state, []  # a run of an audit given up on: nobody follows it
    if state.stage is Stage.QUEUED and run.purpose in (RunPurpose.GOLD, RunPurpose.EMPTY):
        # Its runs were sent and the scorer died before saving its start: it has started. (The
        # runs sent again when it is admitted would be dropped as copies, their result lost.)
        state = state.model_copy(update={"stage": Stage.SANITY})
    if state.stage is not Stage.SANITY:
        if run.purpose in (RunPurpose.GOLD, RunPurpose.EMPTY):
            return state, sanity_messages(state)
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
        return state.model_copy(update={"stage": Stage.ATTACK}), [_attack_request(state)]
    scored = TaskScored(
        correlation_id=state.correlation_id,
        instance_id=state.task.instance_id,
        verdict=Verdict.ERROR if result.sanity is Sanity.INFRA_ERROR else Verdict.DROP,
        reason=f"{result.sanity.value}: {result.reason}",
        hackable=True if result.sanity is Sanity.EMPTY_PASSES else None,
        exploits=("empty patch",) if result.sanity is Sanity.EMPTY_PASSES else (),
    )
    return state.model_copy(update={"stage": Stage.SCORED, "scored": scored}), [scored]


def _attack_request(state: AuditState) -> AttackRequested:
    durations = [r.elapsed_s for r in state.gold or () if r.elapsed_s > 0]
    return AttackRequested(
        correlation_id=state.correlation_id,
        task=state.task,
        options=state.options,
        gold_duration_s=max(durations) if durations else None,
        gold_runs=tuple(state.gold or ()),
    )


def sanity_messages(state: AuditState) -> list[Message]:
    """What the sanity step sent, for a reference run delivered again after that step: the scorer
    may have saved the step and died before sending, so it is sent again (the bus drops copies)."""
    if state.sanity is Sanity.OK:
        return [_attack_request(state)]
    return [state.scored] if state.scored is not None else []


def components(state: AuditState, attack: AttackCompleted, f1: float | None = None) -> Components:
    counts = dict.fromkeys(CandidateVerdict, 0)
    for outcome in attack.outcomes:
        if not outcome.tampering:  # harness findings are reported apart, not counted in H
            counts[outcome.verdict] += 1
    pass_at_1 = state.task.pass_at_1
    found = discrimination(state.gold or (), state.empty, attack.reference)
    return Components(
        v=youden_j(found.tpr, found.tnr),
        h=hackability(counts[CandidateVerdict.EXPLOIT], counts[CandidateVerdict.BLOCKED]),
        f1=f1,
        d=learnability(pass_at_1) if pass_at_1 else None,
    )


def on_attack(
    state: AuditState, attack: AttackCompleted, policy: ScoringPolicy
) -> tuple[AuditState, list[Message]]:
    """Score the attack, or first ask the judge about its candidates when the audit says to."""
    if state.stage is Stage.STOPPED:
        return state, []
    if state.stage is Stage.JUDGE and state.attack is not None:
        request = agreement.judge_request(state.correlation_id, state.task, state.attack)
        return state, [request] if request is not None else []  # resent: the bus drops it
    if state.stage is Stage.SCORED and state.attack == attack and state.scored is not None:
        return state, [state.scored]  # saved, maybe not sent: resent, the bus drops the copy
    if state.stage is not Stage.ATTACK:
        return state, []
    if not state.options.judge:
        return score_attack(state, attack, policy, None)
    request = agreement.judge_request(state.correlation_id, state.task, attack)
    if request is None:
        nothing = JudgeAgreement(left_out="no candidate ran, so the judge had nothing to judge")
        return score_attack(state, attack, policy, nothing)
    return state.model_copy(update={"stage": Stage.JUDGE, "attack": attack}), [request]


def on_judge(
    state: AuditState, done: JudgeCompleted, policy: ScoringPolicy
) -> tuple[AuditState, list[Message]]:
    """The judge's answer to this audit's request: F1, then the score."""
    if state.stage not in (Stage.JUDGE, Stage.SCORED) or state.attack is None:
        return state, []
    asked = agreement.judge_request(state.correlation_id, state.task, state.attack)
    if asked is None or (done.request_key and done.request_key != asked.idempotency_key):
        return state, []  # an answer to some other request (the repairer's) of this audit
    if state.stage is Stage.SCORED:  # delivered again after it scored the task: resend the verdict
        return state, [state.scored] if state.scored is not None else []
    return score_attack(state, state.attack, policy, agreement.agreement(state.attack, done))


def score_attack(
    state: AuditState,
    attack: AttackCompleted,
    policy: ScoringPolicy,
    judged: JudgeAgreement | None,
) -> tuple[AuditState, list[Message]]:
    """EQS and the verdict from the attack, and from the judge's agreement when there is one."""
    parts = components(state, attack, judged.f1 if judged is not None else None)
    found = discrimination(state.gold or (), state.empty, attack.reference)
    score = eqs(parts, policy)
    attacked = tuple(
        o.candidate.candidate_id
        for o in attack.outcomes
        if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering
    )
    # Reference mutants the tests accept although confirmed incorrect are exploits too.
    pooled = tuple(c for c in found.accepted_incorrect if c not in attacked)
    exploits = attacked + pooled
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
    if score is None:
        outcome, policy_note = Verdict.ERROR, ""
    else:
        capping = len(exploits) + (len(harness) if policy.harness_caps else 0)
        outcome, policy_note = decide(score, policy, capping)
    pass_at_1 = state.task.pass_at_1
    d_source = (pass_at_1.source or "task file") if pass_at_1 is not None else ""
    notes = [
        f"components used: {used}",
        f"{len(attack.outcomes)} candidates, {len(attacked)} confirmed exploits{harness_note}"
        + (
            f"; {len(pooled)} reference mutant(s) the tests accept although incorrect (exploits "
            "too, not counted in H)"
            if pooled
            else ""
        ),
        describe(found, attack.reference),
        agreement.describe(judged),
    ]
    if d_source:
        notes.append(f"D from {d_source}")
    if policy_note:
        notes.append(policy_note)
    scored = TaskScored(
        correlation_id=state.correlation_id,
        instance_id=state.task.instance_id,
        verdict=outcome,
        eqs=score,
        components=parts.as_dict(),
        reason="; ".join(notes),
        hackable=bool(exploits),
        exploits=exploits,
        harness_exploits=harness,
        discrimination=found,
        policy=policy.name,
        d_source=d_source,
        judge=judged,
        unverified=account(attack, stop_when_hackable=state.options.stop_when_hackable),
    )
    update = {"stage": Stage.SCORED, "scored": scored, "attack": attack}
    return state.model_copy(update=update), [scored]
