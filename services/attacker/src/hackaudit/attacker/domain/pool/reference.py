"""A task's reference pool, as pure functions over a serialisable `ReferenceProgress`.

V (verifier discrimination; the scorer in docs/architecture.md) is computed from a pool drawn
apart from the attack: correct variants C+ (gold, and rewrites of gold shown equal to it) and
incorrect ones C− (the empty patch, and a fixed-size sample of reference mutants of gold). This
module plans the pool, draws the mutant sample with a seed derived from the instance id (so a
rerun draws the same sample), and turns what the sandbox found into each member's status:

C+  ACCEPTED  the task's tests resolve it (gold; a rewrite probes show equal to gold)
    REJECTED  they do not: the tests pin something a correct fix need not do (over-strict)
    LEFT_OUT  it could not be shown equal to gold (nothing to probe, a probe run that failed,
              a difference found), or its run failed for reasons of its own (infrastructure)
C−  REJECTED  the tests fail it, on tests gold passes: that failure is its evidence
    ACCEPTED  the tests resolve it and it is confirmed incorrect (held-back tests, probes, wider
              suite; the empty patch is incorrect by construction)
    LEFT_OUT  accepted but not shown incorrect, or not gradable (patch did not apply, infra)

The progress is saved after every graded member, so a restarted attacker resumes the pool. What
the pool may spend is `budget`'s rule: no more than the attack's own sandbox-seconds.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from hackaudit.attacker.domain.confirm.confirmation import CheckResult
from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.generate.strategies import mutation, partial
from hackaudit.attacker.domain.generate.strategies.base import unique
from hackaudit.attacker.domain.pool import rewrites
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
    Provenance,
    ReferenceOutcome,
    ReferencePool,
    ReferenceRole,
    ReferenceStatus,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

DEFAULT_SAMPLE_SIZE = 6
STRATEGY = "reference"
GOLD = "gold"
EMPTY = "empty"
LINE_REVERT = "line-revert"
OPERATOR_MUTANT = "operator-mutant"
STATEMENT_DELETION = "statement-deletion"
_DELETING = ("statement_deletion", "early_return")


class Member(BaseModel):
    """One planned member of the pool."""

    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    role: ReferenceRole
    kind: str
    # A rewrite that may change behaviour must be probed equal to gold before it is graded.
    needs_probes: bool = False


class ReferenceProgress(BaseModel):
    """The planned pool and the members graded so far; enough to resume it after a restart."""

    model_config = ConfigDict(frozen=True)

    members: tuple[Member, ...] = ()
    outcomes: tuple[ReferenceOutcome, ...] = ()
    seed: int = 0
    sample_size: int = 0
    sandbox_seconds: float = 0.0
    finished: bool = False
    # What the pool may spend (`budget.pool_budget`) and the attack's own sandbox-seconds it was
    # sized from, fixed when the pool is planned (None: planned before budgets were kept).
    budget_seconds: float | None = None
    attack_seconds: float | None = None


# --- planning -----------------------------------------------------------------------------------


def seed_for(instance_id: str) -> int:
    """The mutant sample's seed: the first 64 bits of sha256(instance id)."""
    return int(hashlib.sha256(instance_id.encode()).hexdigest()[:16], 16)


def mutant_kind(candidate: Candidate) -> str:
    if candidate.provenance.strategy == partial.NAME:
        return LINE_REVERT
    operator = candidate.provenance.detail.split(":", 1)[0]
    return STATEMENT_DELETION if operator in _DELETING else OPERATOR_MUTANT


def mutant_population(task: Task) -> list[Candidate]:
    """Every reference mutant of gold (line reverts, operator mutants, statement deletions) that
    may behave differently from gold, in content-hash order (independent of generator order)."""
    found = unique([*partial.partial_fixes(task), *mutation.mutants(task)])
    changing = [c for c in found if behaviour.changes_behaviour(task.gold_diff, c.diff)]
    return sorted(changing, key=lambda c: c.content_hash)


def sample_mutants(task: Task, size: int, seed: int | None = None) -> list[Candidate]:
    """A seeded sample of `size` reference mutants (all of them when there are fewer)."""
    population = mutant_population(task)
    # A reproducible draw, not a secret: the same instance id must give the same sample.
    rng = random.Random(seed_for(task.instance_id) if seed is None else seed)  # noqa: S311
    return rng.sample(population, min(size, len(population)))


def _variant(task: Task, diff: str, kind: str, detail: str) -> Candidate:
    return Candidate(
        instance_id=task.instance_id,
        diff=diff,
        provenance=Provenance(strategy=STRATEGY, detail=f"{kind}: {detail}"[:300]),
    )


def plan(task: Task, sample_size: int) -> ReferenceProgress:
    """The pool of a task: gold, gold's rewrites, the empty patch, the seeded mutant sample."""
    members = [Member(candidate=Candidate.gold(task), role=ReferenceRole.CORRECT, kind=GOLD)]
    seen = {members[0].candidate.content_hash}
    for rw in rewrites.rewrites(task.gold_diff):
        candidate = _variant(task, rw.diff, rw.kind, rw.detail)
        if candidate.content_hash in seen:
            continue
        seen.add(candidate.content_hash)
        members.append(
            Member(
                candidate=candidate,
                role=ReferenceRole.CORRECT,
                kind=rw.kind,
                needs_probes=not rewrites.text_only(task.patch, rw.diff),
            )
        )
    members.append(
        Member(candidate=Candidate.empty(task), role=ReferenceRole.INCORRECT, kind=EMPTY)
    )
    seed = seed_for(task.instance_id)
    for mutant in sample_mutants(task, sample_size, seed):
        if mutant.content_hash not in seen:
            members.append(
                Member(candidate=mutant, role=ReferenceRole.INCORRECT, kind=mutant_kind(mutant))
            )
    return ReferenceProgress(members=tuple(members), seed=seed, sample_size=sample_size)


def next_member(progress: ReferenceProgress) -> Member | None:
    if progress.finished or len(progress.outcomes) >= len(progress.members):
        return None
    return progress.members[len(progress.outcomes)]


def record(
    progress: ReferenceProgress, outcome: ReferenceOutcome, seconds: float = 0.0
) -> ReferenceProgress:
    return progress.model_copy(
        update={
            "outcomes": (*progress.outcomes, outcome),
            "sandbox_seconds": progress.sandbox_seconds + max(0.0, seconds),
        }
    )


def finish(progress: ReferenceProgress) -> ReferenceProgress:
    return progress.model_copy(update={"finished": True})


def pool(progress: ReferenceProgress) -> ReferencePool:
    return ReferencePool(
        outcomes=progress.outcomes,
        seed=progress.seed,
        sample_size=progress.sample_size,
        sandbox_seconds=round(progress.sandbox_seconds, 3),
        budget_seconds=progress.budget_seconds,
        attack_seconds=progress.attack_seconds,
    )


# --- status rules -------------------------------------------------------------------------------


def _outcome(member: Member, status: ReferenceStatus, evidence: str) -> ReferenceOutcome:
    return ReferenceOutcome(
        candidate=member.candidate,
        role=member.role,
        status=status,
        kind=member.kind,
        evidence=evidence[:4000],
    )


def probe_equality(checks: Sequence[CheckResult]) -> tuple[bool, str]:
    """(shown equal to gold, why): equal only when every probe run compared something and none
    found a difference; nothing to probe or a run that compared nothing proves nothing."""
    if not checks:
        return False, "probes are disabled: cannot be shown equal to gold"
    found = [c.evidence for c in checks if c.evidence]
    if found:
        return False, f"differs from gold under probes: {found[0]}"
    empty = next((c for c in checks if c.compared == 0), None)
    if empty is not None:
        return False, f"cannot be shown equal to gold: {empty.note}"
    return True, f"probes show it equal to gold ({checks[0].note}, {len(checks)} runs)"


def correct_outcome(
    member: Member, verdict: CandidateVerdict | None, evidence: str, equality: str
) -> ReferenceOutcome:
    """A C+ member's outcome from its graded run's verdict (None: resolved)."""
    if verdict is None:
        return _outcome(member, ReferenceStatus.ACCEPTED, f"resolved; {equality}")
    if verdict is CandidateVerdict.BLOCKED:
        why = "over-strict: the tests reject a correct variant of gold"
        return _outcome(member, ReferenceStatus.REJECTED, f"{why} ({equality})\n{evidence}")
    return _outcome(member, ReferenceStatus.LEFT_OUT, f"not graded: {evidence}")


def left_out(member: Member, reason: str) -> ReferenceOutcome:
    return _outcome(member, ReferenceStatus.LEFT_OUT, reason)


def incorrect_outcome(
    member: Member, verdict: CandidateVerdict | None, evidence: str
) -> ReferenceOutcome:
    """A C− member's outcome from its graded run's verdict and, when the tests accepted it,
    the confirmation's verdict (EXPLOIT: confirmed incorrect; UNCONFIRMED: not shown)."""
    if verdict is CandidateVerdict.BLOCKED:
        return _outcome(member, ReferenceStatus.REJECTED, evidence)
    if verdict is CandidateVerdict.EXPLOIT:
        return _outcome(member, ReferenceStatus.ACCEPTED, f"confirmed incorrect: {evidence}")
    if member.kind == EMPTY and verdict is None:
        why = "resolved although it changes nothing: incorrect by construction"
        return _outcome(member, ReferenceStatus.ACCEPTED, why)
    if verdict is CandidateVerdict.UNCONFIRMED:
        why = f"accepted but not shown incorrect: {evidence}"
        return _outcome(member, ReferenceStatus.LEFT_OUT, why)
    return _outcome(member, ReferenceStatus.LEFT_OUT, f"not graded: {evidence}")


def gold_outcome(member: Member, results: Sequence[RunResult]) -> ReferenceOutcome:
    """Gold's outcome from its graded runs: ACCEPTED when every run resolves it."""
    runs = len(results)
    broken = [r for r in results if r.status in (RunStatus.INFRA_ERROR, RunStatus.PATCH_FAILED)]
    if not results or broken:
        reason = broken[0].reason[:300] if broken else "no run"
        return _outcome(member, ReferenceStatus.LEFT_OUT, f"gold's run failed: {reason}")
    resolved = sum(bool(r.resolved) for r in results)
    if resolved == runs:
        return _outcome(member, ReferenceStatus.ACCEPTED, f"resolved in {runs} of {runs} runs")
    failing = sorted({t for r in results for t, s in r.tests.items() if s is not TestStatus.PASSED})
    listed = ", ".join(failing[:10]) or "(no test reported)"
    return _outcome(
        member,
        ReferenceStatus.REJECTED,
        f"resolved in {resolved} of {runs} runs; not passing: {listed}",
    )
