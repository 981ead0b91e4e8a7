"""The repair stage of an audit: a FIX verdict goes to the repairer, a hardened task is re-audited.

After a task is scored, when the audit's options say a repairer is running (`AuditOptions.repair`,
set by whoever starts the services) and the verdict is FIX with task exploits, a
`RepairRequested` is sent: the confirmed exploits with their evidence and the inputs on which
they differ from gold, the reference mutants the tests accept, the reference pool's correct
variants (do no harm), and gold's changed lines the graded tests never execute (targets). The
verdict already issued stands meanwhile.

When the repairer answers with a hardened task, it is audited afresh under its own correlation id
(`<id>/repaired`): a new `TaskIngested` with new options (`seed` raised, `repair` off, so a task
is repaired once), which starts its own sanity runs and a fresh attack. Its `TaskScored` names the
audit it replaces and that audit's verdict; both audits and both verdicts stay in the store.
Without a hardened task, the answer is kept as the reason the task stays FIX.

Every step is idempotent: a redelivered message resends the same messages, which the bus drops by
their keys.
"""

from __future__ import annotations

from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Message,
    ReferenceRole,
    ReferenceStatus,
    RepairCompleted,
    RepairRequested,
    TaskIngested,
    TaskScored,
    Verdict,
)

REPAIRED_SUFFIX = "/repaired"
# Proposals per exploit: each input where an exploit differs from gold may take a few assertion
# forms before one blocks it.
REPAIR_ITERATIONS = 6


def _exploits(state: AuditState) -> tuple[list[Candidate], list[CandidateOutcome]]:
    """The task exploits to block (harness findings are not the task's to fix)."""
    attack = state.attack
    if attack is None:
        return [], []
    outcomes = [
        o for o in attack.outcomes if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering
    ]
    candidates = [o.candidate for o in outcomes]
    if state.scored is not None and attack.reference is not None:
        # Reference mutants the tests accept although confirmed incorrect count as exploits too.
        wanted = set(state.scored.exploits)
        for r in attack.reference.outcomes:
            c = r.candidate
            if c.candidate_id in wanted and c.candidate_id not in {
                x.candidate_id for x in candidates
            }:
                candidates.append(c)
    return candidates, outcomes


def _correct_variants(state: AuditState) -> tuple[Candidate, ...]:
    """C+ members the task's tests accept, gold itself left out (the gold gate covers it)."""
    pool = state.attack.reference if state.attack is not None else None
    if pool is None:
        return ()
    gold = state.task.patch
    return tuple(
        r.candidate
        for r in pool.outcomes
        if r.role is ReferenceRole.CORRECT
        and r.status is ReferenceStatus.ACCEPTED
        and r.candidate.diff != gold
        and not r.candidate.is_empty
    )


def _unexecuted(state: AuditState) -> tuple[str, ...]:
    """Gold's changed lines the graded tests never execute (none when coverage was not measured)."""
    coverage = state.attack.gold_coverage if state.attack is not None else None
    return coverage.unexecuted if coverage is not None and coverage.measured else ()


def repair_request(state: AuditState) -> RepairRequested | None:
    """What to ask the repairer for this scored audit, or None when no repair is due."""
    scored = state.scored
    if not state.options.repair or scored is None or scored.verdict is not Verdict.FIX:
        return None
    candidates, outcomes = _exploits(state)
    if not candidates:
        return None
    return RepairRequested(
        correlation_id=state.correlation_id,
        task=state.task,
        exploits=tuple(candidates),
        outcomes=tuple(outcomes),
        correct_variants=_correct_variants(state),
        gold_repeats=state.options.gold_repeats,
        max_iterations=REPAIR_ITERATIONS,
        requested_by="scorer",
        judge=state.options.judge,
        unexecuted=_unexecuted(state),
    )


def _stamped(state: AuditState, scored: TaskScored) -> TaskScored:
    if not state.repaired_from or scored.repaired_from:
        return scored
    previous = Verdict(state.previous_verdict) if state.previous_verdict else None
    was = f" (was {previous.value})" if previous is not None else ""
    reason = f"re-audit of the task hardened by repair of {state.repaired_from}{was}; "
    lineage = {
        "repaired_from": state.repaired_from,
        "previous_verdict": previous,
        "reason": reason + scored.reason,
    }
    return TaskScored.model_validate(scored.model_dump() | lineage | {"idempotency_key": ""})


def after_score(state: AuditState, out: list[Message]) -> tuple[AuditState, list[Message]]:
    """After a step that may have scored the task: name the audit a re-audit replaces, and send
    (or, redelivered, resend) the repair request a FIX verdict calls for."""
    sent: list[Message] = []
    for message in out:
        if isinstance(message, TaskScored):
            message = _stamped(state, message)
            state = state.model_copy(update={"scored": message})
        sent.append(message)
    if state.scored is None or state.repair is not None:
        return state, sent
    request = state.repair_request or repair_request(state)
    if request is None:
        return state, sent
    return state.model_copy(update={"repair_request": request}), [*sent, request]


def reaudit(state: AuditState, done: RepairCompleted) -> TaskIngested | None:
    """The re-audit of the hardened task, or None when the repair hardened nothing."""
    if done.hardened_task is None:
        return None
    options = state.options.model_copy(update={"repair": False, "seed": state.options.seed + 1})
    previous = state.scored.verdict.value if state.scored is not None else ""
    return TaskIngested(
        correlation_id=f"{state.correlation_id}{REPAIRED_SUFFIX}",
        task=done.hardened_task,
        options=options,
        repaired_from=state.correlation_id,
        previous_verdict=previous,
    )


def on_repair(state: AuditState, done: RepairCompleted) -> tuple[AuditState, list[Message]]:
    """The repairer's answer to this audit's request: keep it, and re-audit what it hardened."""
    asked = state.repair_request
    if state.stage is Stage.STOPPED or asked is None or done.instance_id != state.task.instance_id:
        return state, []  # not an answer to a request of this audit
    if state.repair is None:
        state = state.model_copy(update={"repair": done})
    follow = reaudit(state, state.repair or done)
    return state, [follow] if follow is not None else []
