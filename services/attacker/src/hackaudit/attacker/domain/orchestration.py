"""The rounds of one task's attack, as pure functions over a serialisable `RoundState`.

Each round proposes up to K candidates (AuditOptions.candidates_per_round) and grades them;
there are R rounds (AuditOptions.rounds), or fewer when `stop_when_hackable` is set and an
exploit is confirmed. Offline candidates are mixed by round: round 1 takes one of each family
and a second mutant, later rounds are mostly mutants and a partial fix, with
the LLM (when there is one) taking its share of every round. A candidate whose patch was
already proposed for the task (same `Candidate.content_hash`), or that equals gold, never
reaches the sandbox twice.

The state is saved after every step, so an attacker that restarts resumes where it stopped:
planned candidates are not proposed again (no second model call) and graded ones are not rerun.

The budget is K × R candidates, or, when `AuditOptions.budget_seconds` is set, that many
sandbox-seconds: rounds of up to K candidates are planned (each round sized by the gold run's
duration, the unit cost of a candidate) until the candidates' runs have taken that long. A
candidate that behaves as gold does (it differs only in comments, docstrings or blank lines) is
never planned. When the fresh candidates cannot fill a round, mutants of the lines the
FAIL_TO_PASS tests execute beyond gold's own (`strategies.beyond_gold`, from one more coverage run
of gold) fill the slots the other families leave. When the attack ends with budget left,
`budget_note` says why: it stopped at its first confirmed exploit, or the task has fewer distinct
behaviour-changing candidates than the budget (and how many of them came from beyond gold's
lines, or why none did).

Cheapest checks first: an accepted candidate that the cheaper checks (by construction, held-back
tests, probes) do not confirm waits for its wider-suite check (`awaiting_suite`) until every
candidate of the round has been graded and checked the cheap way; the waiting ones' suites then
run in grading order. The checks are those of a candidate confirmed at once, in the same order for
it; only the order across candidates changes, so an attack that stops at its first exploit does
not pay for the wider suites of the candidates before a cheaply confirmed one. Those are reported
unconfirmed, saying their wider suite did not run and why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.attacker.domain.confirm import coverage_map, probes, selection
from hackaudit.attacker.domain.confirm.classification import exploit_kind
from hackaudit.attacker.domain.confirm.confirmation import (
    Check,
    CheckResult,
    differences,
    verdict,
)
from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.generate.strategies import beyond_gold
from hackaudit.attacker.domain.generate.strategies.base import Category, Feedback, with_round
from hackaudit.attacker.domain.pool import reference as ref
from hackaudit.attacker.domain.reading import diffs
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    AuditOptions,
    BudgetSpent,
    Candidate,
    CandidateOutcome,
    CandidateReach,
    CandidateVerdict,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

# Share of a round's offline slots per family: round 1, then every later round.
FIRST_ROUND_MIX: Mapping[Category, float] = {
    Category.HARNESS: 0.2,
    Category.SPECIAL_CASE: 0.2,
    Category.PARTIAL_FIX: 0.2,
    Category.MUTATION: 0.4,
}
# Mutants are where accepted-but-wrong candidates come from most often; one harness exploit
# (the first, a conftest hook) is enough to show a harness hole, so later rounds skip them.
LATER_ROUND_MIX: Mapping[Category, float] = {
    Category.MUTATION: 0.8,
    Category.PARTIAL_FIX: 0.2,
}
# When a family runs dry, its slots go to the others in this order; mutants beyond gold's lines
# are in no round's mix: they fill only the slots the other families leave.
FILL_ORDER = (
    Category.HARNESS,
    Category.SPECIAL_CASE,
    Category.PARTIAL_FIX,
    Category.MUTATION,
    Category.BEYOND_GOLD,
)
# Under a budget in seconds the rounds are not counted, but never more than this many.
MAX_ROUNDS_BY_SECONDS = 200


class TokenUsage(BaseModel):
    model_config = ConfigDict(frozen=True)

    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, input_tokens: int, output_tokens: int, cached: bool) -> TokenUsage:
        if cached:
            return self.model_copy(
                update={"calls": self.calls + 1, "cached_calls": self.cached_calls + 1}
            )
        return TokenUsage(
            calls=self.calls + 1,
            cached_calls=self.cached_calls,
            input_tokens=self.input_tokens + input_tokens,
            output_tokens=self.output_tokens + output_tokens,
        )


class LLMCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    round: int
    input_tokens: int
    output_tokens: int
    cached: bool = False


class AwaitingSuite(BaseModel):
    """A candidate the task's tests accepted and the cheaper checks did not confirm: its graded
    run's result, those checks, and what its outcome reports of the changed lines' reach."""

    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    result: RunResult
    checks: tuple[CheckResult, ...]
    reach: CandidateReach | None = None
    note: str = ""  # what the evidence starts with (a graded run that was run again)

    def outcome(self, more: Sequence[CheckResult] = ()) -> CandidateOutcome:
        """Its outcome from the cheaper checks and `more` (the wider suite's)."""
        checks = (*self.checks, *more)
        found, evidence = verdict(checks)
        kind = (
            exploit_kind(self.candidate, self.result.flags)
            if found is CandidateVerdict.EXPLOIT
            else None
        )
        return CandidateOutcome(
            candidate=self.candidate,
            verdict=found,
            resolved=self.result.resolved,
            evidence=self.note + evidence,
            differences=differences(checks) if found is CandidateVerdict.EXPLOIT else (),
            tampering=kind is not None and kind.tampering,
            advice=kind.advice if kind is not None else "",
            reach=self.reach,
        )


# The key of gold's graded runs (the task's own tests) in `RoundState.gold_runs`.
GRADED_GOLD = "gold"


class RoundState(BaseModel):
    """Everything an attack has done so far; enough to resume it after a restart."""

    model_config = ConfigDict(frozen=True)

    key: str
    correlation_id: str
    task: Task
    options: AuditOptions
    round: int = 0  # the round planned last (0: none yet)
    pending: tuple[Candidate, ...] = ()  # planned for `round`, not graded yet
    outcomes: tuple[CandidateOutcome, ...] = ()
    seen: tuple[str, ...] = ()  # content hashes already planned, gold's included
    # Gold's runs by what they are (`GRADED_GOLD`, the wider suite's, the probes'), run once.
    gold_runs: dict[str, tuple[RunResult, ...]] = Field(default_factory=dict)
    llm_calls: tuple[LLMCall, ...] = ()
    usage: TokenUsage = Field(default_factory=TokenUsage)
    llm_errors: tuple[str, ...] = ()
    rounds_run: int = 0  # rounds that graded at least one candidate
    finished: bool = False
    stopped_early: bool = False
    gold_duration_s: float | None = None  # unit cost of a candidate (budget in seconds)
    sandbox_seconds: float = 0.0  # taken by the graded candidates' runs (the budget's measure)
    suite_seconds: float = 0.0  # taken by the wider suite's runs, gold's included
    # Every run's sandbox-seconds by run kind ("grade", "probe", "suite", "coverage"): the
    # candidates' runs and every run their confirmation asked for, gold's included (the
    # reference pool's apart). Their sum is `attack_seconds`.
    seconds_by_kind: dict[str, float] = Field(default_factory=dict)
    # Seconds those runs went on in the background behind shorter runs (not counted above).
    background_s: float = 0.0
    to_first_exploit: BudgetSpent | None = None  # first task exploit (harness findings apart)
    exhausted: bool = False  # a round found no fresh candidate to plan
    equivalent_skipped: int = 0  # offline candidates equal to gold but for text
    llm_equivalent_skipped: int = 0
    not_applicable: tuple[str, ...] = ()
    # Mutants beyond gold's lines (from gold's coverage run of the graded tests) joined the pools.
    beyond_gold: bool = False
    reference: ref.ReferenceProgress | None = None  # the reference pool, once planned
    # Graded candidates whose wider-suite check waits for the round's cheaper checks, in order.
    awaiting_suite: tuple[AwaitingSuite, ...] = ()

    @property
    def attack_seconds(self) -> float:
        """Every sandbox-second the attack's runs took: the candidates' and every confirmation
        run (probes, wider suite, coverage, gold's runs). A state stored before the runs were
        counted by kind has only its candidates' runs."""
        return max(self.sandbox_seconds, sum(self.seconds_by_kind.values()))

    @property
    def hackable(self) -> bool:
        """A task exploit is confirmed (harness tampering says nothing about the task's tests)."""
        return any(o.verdict is CandidateVerdict.EXPLOIT and not o.tampering for o in self.outcomes)


def state_key(request: AttackRequested) -> str:
    return f"{request.task.instance_id}-{request.idempotency_key.rsplit(':', 1)[-1][:16]}"


def new_state(request: AttackRequested) -> RoundState:
    gold = Candidate(instance_id=request.task.instance_id, diff=request.task.patch)
    return RoundState(
        key=state_key(request),
        correlation_id=request.correlation_id,
        task=request.task,
        options=request.options,
        seen=(gold.content_hash,),
        gold_runs={GRADED_GOLD: request.gold_runs} if request.gold_runs else {},
        gold_duration_s=request.gold_duration_s,
    )


# --- what to do next ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Grade:
    candidate: Candidate


@dataclass(frozen=True)
class Plan:
    round: int


@dataclass(frozen=True)
class WidenSuite:
    """Run the wider suite of the first candidate awaiting it."""

    waiting: AwaitingSuite


@dataclass(frozen=True)
class Finish:
    reason: str
    early: bool = False


Action = Grade | Plan | WidenSuite | Finish


def next_action(state: RoundState) -> Action:
    if state.finished:
        return Finish("already finished")
    if state.options.stop_when_hackable and state.hackable:
        return Finish("hackable: stopped early", early=True)
    if state.pending:
        return Grade(state.pending[0])
    if state.awaiting_suite:
        return WidenSuite(state.awaiting_suite[0])
    if state.exhausted:
        return Finish("no fresh candidate left")
    if budget_spent(state):
        return Finish("budget spent")
    if state.round >= max_rounds(state.options):
        return Finish("all rounds run")
    return Plan(state.round + 1)


# --- budget ------------------------------------------------------------------------------------


def max_rounds(options: AuditOptions) -> int:
    return MAX_ROUNDS_BY_SECONDS if options.budget_seconds is not None else options.rounds


def graded(state: RoundState) -> int:
    """Candidates graded so far, those awaiting their wider suite included."""
    return len(state.outcomes) + len(state.awaiting_suite)


def budget_spent(state: RoundState) -> bool:
    limit = state.options.budget_seconds
    return limit is not None and state.sandbox_seconds >= limit


def unit_cost(state: RoundState) -> float | None:
    """Sandbox-seconds one candidate is expected to take: gold's run, else the mean so far."""
    if state.gold_duration_s:
        return state.gold_duration_s
    if graded(state) and state.sandbox_seconds > 0:
        return state.sandbox_seconds / graded(state)
    return None


def round_size(state: RoundState) -> int:
    """Candidates to plan next round: K, or fewer when the seconds left pay for fewer."""
    k = state.options.candidates_per_round
    limit = state.options.budget_seconds
    unit = unit_cost(state)
    if limit is None or not unit:
        return k
    return max(1, min(k, math.ceil((limit - state.sandbox_seconds) / unit)))


def wants_beyond_gold(state: RoundState, fresh: int) -> bool:
    """Whether mutants beyond gold's lines join the pools: once per task, when the `fresh`
    distinct candidates left cannot fill the next round. Not sooner: those mutants fill only
    what the other families leave, and an attack that stops at its first exploit may never
    need them."""
    if state.beyond_gold or state.finished:
        return False
    return fresh < round_size(state)


def budget_text(options: AuditOptions) -> str:
    if options.budget_seconds is not None:
        return f"{options.budget_seconds:g} sandbox-seconds"
    k, r = options.candidates_per_round, options.rounds
    return f"{k * r} candidates ({r} rounds of {k})"


def budget_note(state: RoundState) -> str:
    """Why the attack ended with budget left (empty when it spent it)."""
    graded = len(state.outcomes)
    options = state.options
    if options.budget_seconds is None:
        if graded >= options.candidates_per_round * options.rounds:
            return ""
    elif budget_spent(state):
        return ""
    if state.stopped_early:
        return (
            f"stopped at the first confirmed exploit, after {graded}"
            f" candidate{'' if graded == 1 else 's'}"
            f" (budget: {budget_text(options)}; --stop-when-hackable)"
        )
    lines = behaviour.code_changes(state.task.gold_diff)
    parts = [
        f"only {graded} distinct behaviour-changing candidates exist for a {lines}-line gold "
        f"patch (budget: {budget_text(options)})"
    ]
    beyond = sum(o.candidate.provenance.strategy == beyond_gold.NAME for o in state.outcomes)
    if beyond:
        parts.append(
            f"{beyond} of them mutate lines beyond gold's that the FAIL_TO_PASS tests execute"
        )
    elif state.beyond_gold:
        why = beyond_gold.why_none(state.gold_runs.get(coverage_map.GOLD_RUN_KEY, ()))
        parts.append(f"no mutant beyond gold's lines: {why}")
    skipped = state.equivalent_skipped + state.llm_equivalent_skipped
    if skipped:
        parts.append(
            f"{skipped} equal to gold or to another candidate up to comments/docstrings"
            " were not run"
        )
    if state.not_applicable:
        parts.append(f"{len(state.not_applicable)} harness variants do not apply to the runner")
    return "; ".join(parts)


SUITE_NOT_RUN = CheckResult(
    check=Check.SUITE, note="not run, the task was shown hackable by another candidate first"
)


def finish(state: RoundState, *, early: bool = False) -> RoundState:
    """The finished state; candidates still awaiting their wider suite (the attack stopped at an
    exploit first) are unconfirmed, saying so."""
    left = tuple(w.outcome([SUITE_NOT_RUN]) for w in state.awaiting_suite)
    return state.model_copy(
        update={
            "finished": True,
            "stopped_early": early,
            "outcomes": state.outcomes + left,
            "awaiting_suite": (),
        }
    )


# --- planning ----------------------------------------------------------------------------------


def split_budget(k: int, llm_available: bool, llm_share: float) -> tuple[int, int]:
    """(LLM slots, offline slots) of a round of `k` candidates."""
    if not llm_available:
        return 0, k
    n_llm = min(k, max(1, round(k * llm_share)))
    return n_llm, k - n_llm


def _quotas(n: int, mix: Mapping[Category, float]) -> dict[Category, int]:
    """Largest-remainder apportionment of `n` slots by the mix's weights."""
    total = sum(mix.values())
    exact = {c: n * w / total for c, w in mix.items()}
    quotas = {c: int(x) for c, x in exact.items()}
    left = n - sum(quotas.values())
    for c in sorted(exact, key=lambda c: (quotas[c] - exact[c], FILL_ORDER.index(c)))[:left]:
        quotas[c] += 1
    return quotas


def select_offline(
    pools: Mapping[Category, Sequence[Candidate]], n: int, round_: int, seen: set[str]
) -> list[Candidate]:
    """Up to `n` fresh offline candidates for a round, mixed by the round's family shares."""
    mix = FIRST_ROUND_MIX if round_ == 1 else LATER_ROUND_MIX
    fresh = {c: [x for x in pools.get(c, ()) if x.content_hash not in seen] for c in FILL_ORDER}
    chosen: list[Candidate] = []
    taken: set[str] = set()

    def take(category: Category, count: int) -> None:
        for x in fresh[category]:
            if count <= 0:
                return
            if x.content_hash not in taken:
                chosen.append(x)
                taken.add(x.content_hash)
                count -= 1

    for category, quota in _quotas(n, mix).items():
        take(category, quota)
    order = [c for c in FILL_ORDER if c in mix] + [c for c in FILL_ORDER if c not in mix]
    for category in order:
        take(category, n - len(chosen))
    return chosen[:n]


def dedupe(candidates: Sequence[Candidate], seen: set[str]) -> list[Candidate]:
    out: list[Candidate] = []
    hashes = set(seen)
    for c in candidates:
        if c.content_hash in hashes:
            continue
        hashes.add(c.content_hash)
        out.append(c)
    return out


def schedule(state: RoundState, round_: int, candidates: Sequence[Candidate]) -> RoundState:
    """The state with `candidates` planned for `round_` (duplicates of earlier ones dropped);
    a round with nothing fresh to plan marks the candidates exhausted."""
    fresh = dedupe([with_round(c, round_) for c in candidates], set(state.seen))
    return state.model_copy(
        update={
            "round": round_,
            "pending": tuple(fresh),
            "seen": state.seen + tuple(c.content_hash for c in fresh),
            "rounds_run": state.rounds_run + (1 if fresh else 0),
            "exhausted": not fresh,
        }
    )


def record(state: RoundState, outcome: CandidateOutcome, seconds: float = 0.0) -> RoundState:
    """The state with `outcome` graded (or, when it awaited its wider suite, checked);
    `seconds` is what its sandbox run took."""
    cid = outcome.candidate.candidate_id
    outcomes = (*state.outcomes, outcome)
    awaiting = tuple(w for w in state.awaiting_suite if w.candidate.candidate_id != cid)
    spent = state.sandbox_seconds + max(0.0, seconds)
    first = state.to_first_exploit
    if first is None and outcome.verdict is CandidateVerdict.EXPLOIT and not outcome.tampering:
        first = BudgetSpent(
            candidates=len(outcomes) + len(awaiting), sandbox_seconds=round(spent, 3)
        )
    return state.model_copy(
        update={
            "outcomes": outcomes,
            "pending": tuple(c for c in state.pending if c.candidate_id != cid),
            "awaiting_suite": awaiting,
            "sandbox_seconds": spent,
            "to_first_exploit": first,
        }
    )


def await_suite(state: RoundState, waiting: AwaitingSuite, seconds: float = 0.0) -> RoundState:
    """The state with `waiting`'s candidate graded and its wider suite still to run."""
    cid = waiting.candidate.candidate_id
    return state.model_copy(
        update={
            "pending": tuple(c for c in state.pending if c.candidate_id != cid),
            "awaiting_suite": (*state.awaiting_suite, waiting),
            "sandbox_seconds": state.sandbox_seconds + max(0.0, seconds),
        }
    )


def split_equivalent(task: Task, candidates: Sequence[Candidate]) -> tuple[list[Candidate], int]:
    """(candidates that may behave differently from gold, how many were dropped as equal to it
    but for comments, docstrings and blank lines)."""
    kept = [c for c in candidates if c.files or behaviour.changes_behaviour(task.gold_diff, c.diff)]
    return kept, len(candidates) - len(kept)


def distinct_pools(
    task: Task, found_by: Mapping[Category, Sequence[Candidate]]
) -> tuple[dict[Category, list[Candidate]], int]:
    """The offline pools without the candidates equal to gold, or to a candidate before them
    (the families in `FILL_ORDER`, each in its order), but for comments, docstrings and blank
    lines; and how many were dropped."""
    pools: dict[Category, list[Candidate]] = {}
    taken: set[str] = set()
    dropped = 0
    order = [c for c in FILL_ORDER if c in found_by] + [c for c in found_by if c not in FILL_ORDER]
    for category in order:
        kept, skipped = split_equivalent(task, found_by[category])
        pools[category] = []
        for candidate in kept:
            key = None if candidate.files else behaviour.code_key(candidate.diff)
            if key is not None and key in taken:
                skipped += 1
                continue
            if key is not None:
                taken.add(key)
            pools[category].append(candidate)
        dropped += skipped
    return pools, dropped


def record_llm(state: RoundState, calls: Sequence[LLMCall]) -> RoundState:
    usage = state.usage
    for call in calls:
        usage = usage.add(call.input_tokens, call.output_tokens, call.cached)
    return state.model_copy(update={"llm_calls": (*state.llm_calls, *calls), "usage": usage})


# --- grading rules -----------------------------------------------------------------------------


def invalid_reason(candidate: Candidate) -> str | None:
    """Why a candidate cannot even be sent to the sandbox (None: it can)."""
    if candidate.provenance.invalid:
        return candidate.provenance.invalid
    if candidate.is_empty:
        return "empty patch"
    if candidate.files:
        return None
    try:
        diffs.parse_patch(candidate.diff)
    except diffs.DiffError as exc:
        return f"not a unified diff: {exc}"
    return None


def failure_summary(task: Task, result: RunResult, max_log_chars: int) -> str:
    """Which graded tests did not pass, then the tail of the log: what the next round sees."""
    lines: list[str] = []
    for label, names in (("FAIL_TO_PASS", task.fail_to_pass), ("PASS_TO_PASS", task.pass_to_pass)):
        bad = [
            f"{n} ({result.tests[n].value if n in result.tests else 'not reported'})"
            for n in names
            if result.tests.get(n) is not TestStatus.PASSED
        ]
        if bad:
            lines.append(f"{label} not passing: " + ", ".join(bad[:15]))
    if result.reason:
        lines.append(f"reason: {result.reason[:500]}")
    tail = result.log_tail[-max_log_chars:] if max_log_chars > 0 else ""
    if tail.strip():
        lines += ["--- log tail ---", tail]
    return "\n".join(lines)


def run_verdict(
    task: Task, result: RunResult, max_log_chars: int
) -> tuple[CandidateVerdict | None, str]:
    """The verdict a candidate's run alone settles, with its evidence (None: accepted, so its
    correctness still has to be examined)."""
    if result.status is RunStatus.PATCH_FAILED:
        return CandidateVerdict.INVALID, f"patch did not apply: {result.reason[:500]}"
    if result.status is RunStatus.INFRA_ERROR:
        return CandidateVerdict.INVALID, f"infrastructure error, not graded: {result.reason[:500]}"
    if result.status is not RunStatus.COMPLETED:
        summary = failure_summary(task, result, max_log_chars)
        return CandidateVerdict.BLOCKED, f"run ended {result.status.value}\n{summary}".strip()
    if result.resolved:
        return None, ""
    return CandidateVerdict.BLOCKED, failure_summary(task, result, max_log_chars)


def feedback(state: RoundState, limit: int, max_log_chars: int) -> tuple[Feedback, ...]:
    """The most recent blocked (or unappliable) candidates, for the next LLM round."""
    rejected = [
        o
        for o in state.outcomes
        if o.verdict in (CandidateVerdict.BLOCKED, CandidateVerdict.INVALID)
    ]
    # Blocked ones first: they show what the suite checks; newest first within each kind.
    rejected.sort(
        key=lambda o: (o.verdict is not CandidateVerdict.BLOCKED, -o.candidate.provenance.round)
    )
    return tuple(
        Feedback(
            label=f"B{i + 1}",
            candidate=o.candidate,
            verdict=o.verdict.value,
            log=o.evidence[-max_log_chars:],
        )
        for i, o in enumerate(rejected[:limit])
    )


def completed(state: RoundState) -> AttackCompleted:
    gold = state.task.gold_diff.applied()
    return AttackCompleted(
        correlation_id=state.correlation_id,
        instance_id=state.task.instance_id,
        outcomes=state.outcomes,
        rounds_run=state.rounds_run,
        budget=budget_text(state.options),
        spent=BudgetSpent(
            candidates=len(state.outcomes),
            sandbox_seconds=round(state.sandbox_seconds, 3),
            by_kind=state.seconds_by_kind,
            background_s=round(state.background_s, 3),
        ),
        to_first_exploit=state.to_first_exploit,
        budget_note=budget_note(state),
        equivalent_skipped=state.equivalent_skipped + state.llm_equivalent_skipped,
        not_applicable=state.not_applicable,
        reference=(
            ref.pool(state.reference)
            if state.reference is not None and state.reference.finished
            else None
        ),
        gold_coverage=coverage_map.of_gold(
            gold,
            state.gold_runs,
            probes.suite(state.task, "near"),
            selection.map_words(gold, state.gold_runs)
            if coverage_map.NAMED_RUN_KEY in state.gold_runs
            else (),
        ),
    )
