"""Evaluating a task's reference pool through the sandbox, after its attack.

The pool is planned once (`domain.reference.plan`) and kept in the round state; each member is
then graded in turn and the state saved, so a restarted attacker resumes with the next member and
reruns none. Gold's graded runs and probe runs come from the Confirmer's cache (shared with the
attack, so gold is not run again when the attack already ran it); a mutant the attack already
graded keeps the attack's result instead of a second run. Every sandbox-second the pool spends
(probe runs and confirmations included) is counted in the pool's `sandbox_seconds`; once they
reach `max_seconds`, the members left are not graded but left out, with the reason.
"""

from __future__ import annotations

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.pool import reference as ref
from hackaudit.attacker.domain.ports import RoundStateStore, SandboxPort
from hackaudit.attacker.service_layer.confirm import REQUESTED_BY, Confirmer
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    ReferenceOutcome,
    ReferenceRole,
    ReferenceStatus,
    RunCompleted,
    RunPurpose,
    RunRequested,
)
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.attacker.reference")


class _Metered:
    """The sandbox port, counting the seconds of every run it returns."""

    def __init__(self, sandbox: SandboxPort) -> None:
        self._sandbox = sandbox
        self.seconds = 0.0

    async def run(self, request: RunRequested) -> RunCompleted:
        done = await self._sandbox.run(request)
        self.seconds += sum(r.duration_s for r in done.results)
        return done


class _Pool:
    def __init__(
        self,
        state: RoundState,
        sandbox: SandboxPort,
        confirmation: ConfirmationConfig,
        timeout_s: float | None,
        max_log_chars: int,
    ) -> None:
        self.task = state.task
        self.correlation_id = state.correlation_id
        self.sandbox = _Metered(sandbox)
        self.timeout_s = timeout_s
        self.max_log_chars = max_log_chars
        self.probes_on = confirmation.probes
        self.confirmer = Confirmer(
            self.sandbox,
            confirmation,
            state.task,
            state.correlation_id,
            state.gold_runs,
            state.options.gold_repeats,
        )
        self.graded: dict[str, CandidateOutcome] = {
            o.candidate.content_hash: o for o in state.outcomes
        }

    async def _run(self, candidate: Candidate, purpose: RunPurpose) -> RunCompleted:
        return await self.sandbox.run(
            RunRequested(
                correlation_id=self.correlation_id,
                task=self.task,
                purpose=purpose,
                candidate=candidate,
                timeout_s=self.timeout_s,
                requested_by=REQUESTED_BY,
            )
        )

    async def grade(self, member: ref.Member) -> ReferenceOutcome:
        if member.kind == ref.GOLD:
            return ref.gold_outcome(member, await self.confirmer.graded_gold())
        if member.role is ReferenceRole.CORRECT:
            return await self._correct(member)
        return await self._incorrect(member)

    async def _correct(self, member: ref.Member) -> ReferenceOutcome:
        equality = "equal to gold by construction: only comments or docstrings differ"
        if member.needs_probes:
            if not self.probes_on:
                return ref.left_out(member, "probes are disabled: cannot be shown equal to gold")
            # A rewrite keeps gold's behaviour by construction but may change its source text,
            # locals, docstrings or call order: a test reading those is what is being measured.
            checks = await self.confirmer.probe_checks(member.candidate, skip_introspection=True)
            equal, equality = ref.probe_equality(checks)
            if not equal:
                return ref.left_out(member, equality)
        done = await self._run(member.candidate, RunPurpose.REFERENCE)
        verdict, evidence = orch.run_verdict(self.task, done.result, self.max_log_chars)
        return ref.correct_outcome(member, verdict, evidence, equality)

    async def _incorrect(self, member: ref.Member) -> ReferenceOutcome:
        known = self.graded.get(member.candidate.content_hash)
        if known is not None:
            outcome = ref.incorrect_outcome(member, known.verdict, known.evidence)
            note = "graded in the attack: " + outcome.evidence
            return outcome.model_copy(update={"evidence": note[:4000]})
        purpose = RunPurpose.EMPTY if member.kind == ref.EMPTY else RunPurpose.REFERENCE
        done = await self._run(member.candidate, purpose)
        verdict, evidence = orch.run_verdict(self.task, done.result, self.max_log_chars)
        if verdict is None and member.kind != ref.EMPTY:
            verdict, evidence = await self.confirmer.confirm(member.candidate, done.result)
        return ref.incorrect_outcome(member, verdict, evidence)


async def evaluate_pool(
    state: RoundState,
    sandbox: SandboxPort,
    store: RoundStateStore,
    *,
    sample_size: int,
    confirmation: ConfirmationConfig,
    max_seconds: float | None = None,
    timeout_s: float | None = None,
    max_log_chars: int = 2000,
) -> RoundState:
    """The state with the task's reference pool graded in full (resuming a partial one)."""
    progress = state.reference or ref.plan(state.task, sample_size)
    if state.reference is None:
        state = state.model_copy(update={"reference": progress})
        store.save(state)
    pool = _Pool(state, sandbox, confirmation, timeout_s, max_log_chars)
    bound = log.bind(instance_id=state.task.instance_id, correlation_id=state.correlation_id)
    while (member := ref.next_member(progress)) is not None:
        before = pool.sandbox.seconds
        if max_seconds is not None and progress.sandbox_seconds >= max_seconds:
            spent = f"the pool's budget of {max_seconds:g} sandbox-seconds is spent"
            outcome = ref.left_out(member, spent + ": not graded")
        else:
            outcome = await pool.grade(member)
        progress = ref.record(progress, outcome, pool.sandbox.seconds - before)
        state = state.model_copy(
            update={"reference": progress, "gold_runs": dict(pool.confirmer.gold_runs)}
        )
        store.save(state)
        bound.info(
            "reference member graded",
            candidate=member.candidate.content_hash,
            role=member.role.value,
            kind=member.kind,
            status=outcome.status.value,
        )
    if not progress.finished:
        progress = ref.finish(progress)
        state = state.model_copy(update={"reference": progress})
        store.save(state)
        counts = {s.value: sum(o.status is s for o in progress.outcomes) for s in ReferenceStatus}
        bound.info(
            "reference pool evaluated",
            members=len(progress.outcomes),
            sandbox_seconds=round(progress.sandbox_seconds, 1),
            **counts,
        )
    return state
