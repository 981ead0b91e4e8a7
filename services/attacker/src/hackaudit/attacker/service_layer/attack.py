"""One task's attack: plan a round, grade its candidates, confirm what the suite accepts, repeat.

`run_attack` is the use case the message handler and the CLI call. It drives the pure round
logic of `domain.orchestration` with three ports — the sandbox, the model (optional: without
one the offline strategies fill every slot) and the round-state store — and saves the state
after every step, so that calling it again with the same request after a crash picks up where
the last call stopped and repeats no model call and no finished run.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.confirm import coverage_map
from hackaudit.attacker.domain.confirm.classification import exploit_kind
from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig
from hackaudit.attacker.domain.generate.strategies import (
    OFFLINE,
    Category,
    OfflineStrategy,
    beyond_gold,
    not_applicable,
    offline_pools,
)
from hackaudit.attacker.domain.generate.strategies.base import Feedback, ProposalContext
from hackaudit.attacker.domain.generate.strategies.llm import LLMParams, LLMStrategy
from hackaudit.attacker.domain.orchestration import LLMCall, RoundState
from hackaudit.attacker.domain.pool.reference import DEFAULT_SAMPLE_SIZE
from hackaudit.attacker.domain.ports import (
    LLMPort,
    LLMUnavailableError,
    RoundStateStore,
    SandboxPort,
)
from hackaudit.attacker.service_layer.confirm import REQUESTED_BY, Confirmer
from hackaudit.attacker.service_layer.reference import evaluate_pool
from hackaudit.attacker.service_layer.spending import SpendingSandbox
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    RunPurpose,
    RunRequested,
    RunStatus,
)
from hackaudit.shared.logs import get_logger
from hackaudit.shared.metrics import record_llm_tokens

log = get_logger("hackaudit.attacker")
# A candidate's run that times out runs once more within this many times that run's time before
# it counts as blocked.
TIMEOUT_RETRY_FACTOR = 2.0


class AttackConfig(BaseModel):
    """How the attacker spends a task's budget (the budget itself is in AuditOptions)."""

    model_config = ConfigDict(frozen=True)

    llm: LLMParams = Field(default_factory=LLMParams)
    llm_share: float = Field(default=0.5, ge=0.0, le=1.0)  # of each round's K, when a model is set
    confirmation: ConfirmationConfig = Field(default_factory=ConfirmationConfig)
    max_log_chars: int = Field(default=2000, ge=0)  # failure log kept per blocked candidate
    candidate_timeout_s: float | None = Field(default=None, gt=0)
    # Budget in sandbox-seconds for requests that set none (AuditOptions.budget_seconds).
    budget_seconds: float | None = Field(default=None, gt=0)
    # Reference mutants in the task's reference pool (V's inputs); 0: no pool is evaluated.
    reference_sample: int = Field(default=DEFAULT_SAMPLE_SIZE, ge=0)
    # Sandbox-seconds the pool may spend: this share of the attack's own sandbox-seconds (1: no
    # more than the attack), within reference_max_seconds; members that cannot fit are left out.
    reference_max_seconds: float = Field(default=600.0, gt=0)
    reference_attack_share: float = Field(default=1.0, gt=0)


class _Attack:
    def __init__(
        self,
        state: RoundState,
        sandbox: SandboxPort,
        llm: LLMPort | None,
        store: RoundStateStore,
        config: AttackConfig,
        offline: Sequence[OfflineStrategy],
    ) -> None:
        self.state = state
        self.sandbox = SpendingSandbox(sandbox, state.seconds_by_kind, state.background_s)
        self.store = store
        self.config = config
        self.offline = offline
        self.llm = LLMStrategy(llm, config.llm) if llm is not None else None
        self.log = log.bind(instance_id=state.task.instance_id, correlation_id=state.correlation_id)
        self._pools: dict[Category, list[Candidate]] | None = None
        self.confirmer = Confirmer(
            self.sandbox,
            config.confirmation,
            state.task,
            state.correlation_id,
            state.gold_runs,
            state.options.gold_repeats,
            state.suite_seconds,
        )

    def save(self, state: RoundState) -> None:
        """Store `state` with every run so far counted: gold's cached runs, the wider suite's
        seconds and every run's seconds by kind (the attack's own total)."""
        spent = {
            "gold_runs": dict(self.confirmer.gold_runs),
            "suite_seconds": self.confirmer.suite_seconds,
            "seconds_by_kind": dict(self.sandbox.spent),
            "background_s": self.sandbox.background,
        }
        self.state = state.model_copy(update=spent)
        self.store.save(self.state)

    @property
    def pools(self) -> dict[Category, list[Candidate]]:
        if self._pools is None:
            task = self.state.task
            found_by = offline_pools(task, self.offline)
            measured = self.state.gold_runs.get(coverage_map.GOLD_RUN_KEY)
            if self.state.beyond_gold and measured is not None:
                found_by[Category.BEYOND_GOLD] = beyond_gold.from_runs(task, measured)
            pools, skipped = orch.distinct_pools(task, found_by)
            self._pools = pools
            self.state = self.state.model_copy(
                update={
                    "equivalent_skipped": skipped,
                    "not_applicable": tuple(not_applicable(task, self.offline)),
                }
            )
        return self._pools

    async def _ask_model(self, round_: int, budget: int) -> list[Candidate]:
        assert self.llm is not None
        state = self.state
        params = self.config.llm
        shown: tuple[Feedback, ...] = ()
        if round_ > 1:
            shown = orch.feedback(state, params.max_feedback, params.max_log_chars)
        context = ProposalContext(
            round=round_, budget=budget, feedback=shown, seen=frozenset(state.seen)
        )
        try:
            proposed = await self.llm.propose(state.task, context)
        except LLMUnavailableError as exc:
            self.log.warning(
                "model unavailable, offline candidates fill the round", error=str(exc)[:200]
            )
            self.state = state.model_copy(
                update={"llm_errors": (*state.llm_errors, str(exc)[:500])}
            )
            proposed = []
        calls = [
            LLMCall(
                round=round_,
                input_tokens=c.input_tokens,
                output_tokens=c.output_tokens,
                cached=c.cached,
            )
            for c in self.llm.completions
        ]
        self.llm.completions.clear()
        self.state = orch.record_llm(self.state, calls)
        spent = [c for c in calls if not c.cached]  # a cached answer costs no tokens
        record_llm_tokens(
            "attacker", sum(c.input_tokens for c in spent), sum(c.output_tokens for c in spent)
        )
        kept, skipped = orch.split_equivalent(state.task, orch.dedupe(proposed, set(state.seen)))
        if skipped:
            self.state = self.state.model_copy(
                update={"llm_equivalent_skipped": self.state.llm_equivalent_skipped + skipped}
            )
        return kept[:budget]

    async def measure_coverage(self) -> None:
        """Gold's coverage run (once per task; kept in the state's gold runs): only reported."""
        if coverage_map.GOLD_RUN_KEY in self.state.gold_runs or self.state.finished:
            return
        await self.confirmer.gold_coverage()
        self.save(self.state)

    async def measure_beyond_gold(self) -> None:
        """Once, when the fresh candidates fall short of the budget, the mutants beyond gold's
        lines join the pools: from gold's coverage run of the graded tests (run now if it was
        not yet)."""
        seen = set(self.state.seen)
        fresh = {c.content_hash for p in self.pools.values() for c in p} - seen
        if not orch.wants_beyond_gold(self.state, len(fresh)):
            return
        if not beyond_gold.source_files(self.state.task):
            return
        await self.confirmer.gold_coverage()
        self.save(self.state.model_copy(update={"beyond_gold": True}))
        self._pools = None
        self.log.info(
            "mutants beyond gold's lines",
            fresh=len(fresh),
            found=len(self.pools.get(Category.BEYOND_GOLD, ())),
        )

    async def plan(self, round_: int) -> None:
        await self.measure_beyond_gold()
        k = orch.round_size(self.state)
        n_llm, _ = orch.split_budget(k, self.llm is not None, self.config.llm_share)
        proposed = await self._ask_model(round_, n_llm) if n_llm else []
        seen = set(self.state.seen) | {c.content_hash for c in proposed}
        proposed += orch.select_offline(self.pools, k - len(proposed), round_, seen)
        self.save(orch.schedule(self.state, round_, proposed))
        self.log.info(
            "round planned",
            round=round_,
            candidates=len(self.state.pending),
            strategies=sorted({c.provenance.strategy for c in self.state.pending}),
        )

    async def grade(self, candidate: Candidate) -> None:
        outcome, seconds = await self._outcome(candidate)
        if isinstance(outcome, orch.AwaitingSuite):
            self.save(orch.await_suite(self.state, outcome, seconds))
            verdict = "awaiting the wider suite"
        else:
            self.save(orch.record(self.state, outcome, seconds))
            verdict = outcome.verdict.value
        self.log.info(
            "candidate graded",
            candidate=candidate.content_hash,
            strategy=candidate.provenance.strategy,
            round=candidate.provenance.round,
            verdict=verdict,
        )

    async def widen(self, waiting: orch.AwaitingSuite) -> None:
        """The wider suite's check of a candidate the cheaper checks left unconfirmed."""
        outcome = waiting.outcome([await self.confirmer.suite_check(waiting.candidate)])
        self.save(orch.record(self.state, outcome))
        self.log.info(
            "candidate checked by the wider suite",
            candidate=waiting.candidate.content_hash,
            verdict=outcome.verdict.value,
        )

    async def _outcome(
        self, candidate: Candidate
    ) -> tuple[CandidateOutcome | orch.AwaitingSuite, float]:
        """The candidate's outcome (or, accepted and not confirmed by the cheaper checks, its
        wait for the wider suite) and the sandbox-seconds its run took."""
        reason = orch.invalid_reason(candidate)
        if reason is not None:
            outcome = CandidateOutcome(
                candidate=candidate, verdict=CandidateVerdict.INVALID, evidence=reason
            )
            return outcome, 0.0
        request = RunRequested(
            correlation_id=self.state.correlation_id,
            task=self.state.task,
            purpose=RunPurpose.CANDIDATE,
            candidate=candidate,
            timeout_s=self.config.candidate_timeout_s,
            requested_by=REQUESTED_BY,
        )
        done = await self.sandbox.run(request)
        result, seconds, note = done.result, done.result.duration_s, ""
        if result.status is RunStatus.TIMEOUT and self.config.candidate_timeout_s is None:
            # On a loaded machine a first timeout is often the machine's, not the candidate's.
            longer = TIMEOUT_RETRY_FACTOR * max(result.duration_s, 1.0)
            again = RunRequested.model_validate(
                request.model_dump() | {"timeout_s": longer, "idempotency_key": ""}
            )
            note = f"timed out after {result.duration_s:.0f}s; run again within {longer:.0f}s: "
            result = (await self.sandbox.run(again)).result
            seconds += result.duration_s
            self.log.info(
                "timed-out candidate run again",
                candidate=candidate.content_hash,
                timeout_s=round(longer),
                status=result.status.value,
            )
        verdict, evidence = orch.run_verdict(self.state.task, result, self.config.max_log_chars)
        if verdict is None:
            checks = await self.confirmer.cheap_checks(candidate, result)
            checked = orch.AwaitingSuite(
                candidate=candidate,
                result=result,
                checks=tuple(checks),
                reach=self.confirmer.reach(candidate) if result.resolved else None,
                note=note,
            )
            if self.confirmer.wants_suite and not any(c.evidence for c in checks):
                return checked, seconds
            return checked.outcome(), seconds
        kind = (
            exploit_kind(candidate, result.flags) if verdict is CandidateVerdict.EXPLOIT else None
        )
        outcome = CandidateOutcome(
            candidate=candidate,
            verdict=verdict,
            resolved=result.resolved,
            evidence=note + evidence,
            tampering=kind is not None and kind.tampering,
            advice=kind.advice if kind is not None else "",
            reach=self.confirmer.reach(candidate) if result.resolved else None,
        )
        return outcome, seconds


async def run_attack(
    request: AttackRequested,
    sandbox: SandboxPort,
    llm: LLMPort | None,
    store: RoundStateStore,
    config: AttackConfig | None = None,
    *,
    offline: Sequence[OfflineStrategy] = OFFLINE,
) -> AttackCompleted:
    """Attack one task for its rounds and return every candidate's outcome.

    Idempotent: the round state is stored under a key derived from the request, and a repeated
    call resumes (or, when the attack finished, just reports) the stored attack. After the
    rounds (also when they stopped early) the task's reference pool is evaluated, resumably too,
    unless `config.reference_sample` is 0, within what the attack's own runs took.
    """
    config = config or AttackConfig()
    if request.options.budget_seconds is None and config.budget_seconds is not None:
        options = request.options.model_copy(update={"budget_seconds": config.budget_seconds})
        request = request.model_copy(update={"options": options})
    state = store.load(orch.state_key(request)) or orch.new_state(request)
    attack = _Attack(state, sandbox, llm, store, config, offline)
    await attack.measure_coverage()
    while True:
        action = orch.next_action(attack.state)
        if isinstance(action, orch.Finish):
            if not attack.state.finished:
                attack.save(orch.finish(attack.state, early=action.early))
            break
        if isinstance(action, orch.Plan):
            await attack.plan(action.round)
        elif isinstance(action, orch.WidenSuite):
            await attack.widen(action.waiting)
        else:
            await attack.grade(action.candidate)
    pool = attack.state.reference
    if config.reference_sample > 0 and (pool is None or not pool.finished):
        attack.state = await evaluate_pool(
            attack.state,
            sandbox,
            store,
            sample_size=config.reference_sample,
            max_seconds=config.reference_max_seconds,
            attack_share=config.reference_attack_share,
            confirmation=config.confirmation,
            timeout_s=config.candidate_timeout_s,
            max_log_chars=config.max_log_chars,
        )
    final = attack.state
    counts = {v.value: sum(o.verdict is v for o in final.outcomes) for v in CandidateVerdict}
    attack.log.info(
        "attack completed",
        rounds=final.rounds_run,
        candidates=len(final.outcomes),
        hackable=final.hackable,
        stopped_early=final.stopped_early,
        sandbox_seconds=round(final.sandbox_seconds, 1),
        attack_seconds=round(final.attack_seconds, 1),
        equivalent_skipped=final.equivalent_skipped + final.llm_equivalent_skipped,
        not_applicable=len(final.not_applicable),
        input_tokens=final.usage.input_tokens,
        output_tokens=final.usage.output_tokens,
        **counts,
    )
    return orch.completed(final)
