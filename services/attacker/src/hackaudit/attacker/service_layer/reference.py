"""Evaluating a task's reference pool through the sandbox, after its attack.

The pool is planned once (`domain.reference.plan`) and kept in the round state; each member is
then graded in turn and the state saved, so a restarted attacker resumes with the next member and
reruns none. Gold's graded runs and probe runs come from the Confirmer's cache (shared with the
attack, so gold is not run again when the attack already ran it); a mutant the attack already
graded keeps the attack's result instead of a second run. Every sandbox-second the pool spends
(probe runs and confirmations included) is counted in the pool's `sandbox_seconds`, within its
budget (`domain.pool.budget`): the attack's own sandbox-seconds, within `max_seconds`, fixed when
the pool is planned. Every run goes through `BoundedSandbox`, which keeps it inside what is left;
a member one of whose runs cannot fit is left out, with the reason, and the next is tried.
"""

from __future__ import annotations

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.pool import budget as pool_budget
from hackaudit.attacker.domain.pool import reference as ref
from hackaudit.attacker.domain.ports import RoundStateStore, SandboxPort
from hackaudit.attacker.service_layer.bounded import BoundedSandbox, OutOfBudget
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


class _Pool:
    def __init__(
        self,
        state: RoundState,
        sandbox: BoundedSandbox,
        confirmation: ConfirmationConfig,
        timeout_s: float | None,
        max_log_chars: int,
    ) -> None:
        self.task = state.task
        self.correlation_id = state.correlation_id
        self.sandbox = sandbox
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

    async def grade_within_budget(self, member: ref.Member) -> ReferenceOutcome:
        """The member's outcome, or left out when one of its runs cannot fit in the budget."""
        try:
            return await self.grade(member)
        except OutOfBudget as exc:
            return ref.left_out(member, f"not graded: {exc.reason}")

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
            try:
                verdict, evidence = await self.confirmer.confirm(member.candidate, done.result)
            except OutOfBudget as exc:
                why = f"accepted by the task's tests, not confirmed incorrect: {exc.reason}"
                return ref.left_out(member, why)
        return ref.incorrect_outcome(member, verdict, evidence)


def _planned(
    state: RoundState, sample_size: int, max_seconds: float | None, attack_share: float
) -> ref.ReferenceProgress:
    """The pool in progress, with its budget (fixed from the finished attack's seconds)."""
    progress = state.reference or ref.plan(state.task, sample_size)
    if progress.budget_seconds is None:  # planned now, or stored before budgets were kept
        attack = round(state.attack_seconds, 3)
        budget = round(pool_budget.pool_budget(max_seconds, attack, attack_share), 3)
        progress = progress.model_copy(update={"budget_seconds": budget, "attack_seconds": attack})
    return progress


def _bounded(
    state: RoundState,
    progress: ref.ReferenceProgress,
    sandbox: SandboxPort,
    cap: float | None,
    share: float,
) -> BoundedSandbox:
    assert progress.budget_seconds is not None
    attack = progress.attack_seconds or 0.0
    return BoundedSandbox(
        sandbox,
        progress.budget_seconds,
        pool_budget.budget_text(progress.budget_seconds, attack, cap, share),
        Candidate.gold(state.task),
        state.gold_runs,
        state.gold_duration_s,
        seconds=progress.sandbox_seconds,
    )


async def evaluate_pool(
    state: RoundState,
    sandbox: SandboxPort,
    store: RoundStateStore,
    *,
    sample_size: int,
    confirmation: ConfirmationConfig,
    max_seconds: float | None = None,
    attack_share: float = 1.0,
    timeout_s: float | None = None,
    max_log_chars: int = 2000,
) -> RoundState:
    """The state with the task's reference pool graded in full (resuming a partial one), within
    `attack_share` × the attack's own sandbox-seconds and `max_seconds`."""
    progress = _planned(state, sample_size, max_seconds, attack_share)
    if state.reference != progress:
        state = state.model_copy(update={"reference": progress})
        store.save(state)
    bounded = _bounded(state, progress, sandbox, max_seconds, attack_share)
    pool = _Pool(state, bounded, confirmation, timeout_s, max_log_chars)
    bound = log.bind(instance_id=state.task.instance_id, correlation_id=state.correlation_id)
    while (member := ref.next_member(progress)) is not None:
        before = bounded.seconds
        outcome = await pool.grade_within_budget(member)
        progress = ref.record(progress, outcome, bounded.seconds - before)
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
            budget_seconds=progress.budget_seconds,
            attack_seconds=progress.attack_seconds,
            **counts,
        )
    return state
