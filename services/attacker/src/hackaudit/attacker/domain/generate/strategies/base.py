"""The one interface every exploit strategy implements, and what a strategy is told about a round.

A strategy turns a task (and, from round 2 on, what the suite already blocked) into candidate
patches. Offline strategies are pure functions over the task's diff text wrapped in
`OfflineStrategy`; the LLM strategy awaits a model through a port. Every candidate records its
provenance: the strategy, the round, the candidate it was derived from and a short detail.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from hackaudit.attacker.domain.reading import diffs
from hackaudit.shared.contracts import Candidate, Provenance, Task


class Category(StrEnum):
    """Families of offline candidates; the round planner mixes them by round."""

    HARNESS = "harness"
    SPECIAL_CASE = "special_case"
    PARTIAL_FIX = "partial_fix"
    MUTATION = "mutation"
    # Mutants of the lines the graded tests run beyond gold's own: only when the others run short.
    BEYOND_GOLD = "beyond_gold"
    LLM = "llm"


class Feedback(BaseModel):
    """A candidate the suite blocked (or could not apply), shown to later rounds."""

    model_config = ConfigDict(frozen=True)

    label: str  # how the prompt refers to it ("B1")
    candidate: Candidate
    verdict: str
    log: str  # failing tests and log tail, already truncated


class ProposalContext(BaseModel):
    """What a strategy knows when it proposes: the round, how many are wanted, what failed."""

    model_config = ConfigDict(frozen=True)

    round: int = 1
    budget: int = 5
    feedback: tuple[Feedback, ...] = ()
    seen: frozenset[str] = frozenset()  # content hashes already proposed for this task


class Strategy(Protocol):
    name: str
    category: Category

    async def propose(self, task: Task, context: ProposalContext) -> list[Candidate]: ...


OfflineFn = Callable[[Task], list[Candidate]]


class OfflineStrategy:
    """An offline strategy: a pure function of the task, the same candidates every round."""

    def __init__(self, name: str, category: Category, fn: OfflineFn) -> None:
        self.name = name
        self.category = category
        self._fn = fn

    def candidates(self, task: Task) -> list[Candidate]:
        return self._fn(task)

    async def propose(self, task: Task, context: ProposalContext) -> list[Candidate]:
        fresh = [c for c in self._fn(task) if c.content_hash not in context.seen]
        return [with_round(c, context.round) for c in fresh[: context.budget]]


def make_candidate(
    task: Task, patch: diffs.Patch | str, strategy: str, detail: str, parent_id: str | None = None
) -> Candidate:
    text = patch if isinstance(patch, str) else diffs.emit_patch(patch)
    return Candidate(
        instance_id=task.instance_id,
        diff=text,
        provenance=Provenance(strategy=strategy, parent_id=parent_id, detail=detail[:300]),
    )


def with_round(candidate: Candidate, round_: int) -> Candidate:
    provenance = candidate.provenance.model_copy(update={"round": round_})
    return candidate.model_copy(update={"provenance": provenance})


def gold_id(task: Task) -> str:
    return Candidate(instance_id=task.instance_id, diff=task.patch).candidate_id


def parse_gold(task: Task) -> diffs.Patch | None:
    try:
        return diffs.read(task.gold_diff)
    except diffs.DiffError:
        return None


def unique(candidates: list[Candidate], limit: int | None = None) -> list[Candidate]:
    """Candidates with duplicate or empty patches removed, order kept."""
    seen: set[str] = set()
    out: list[Candidate] = []
    for c in candidates:
        if c.is_empty or c.content_hash in seen:
            continue
        seen.add(c.content_hash)
        out.append(c)
        if limit is not None and len(out) >= limit:
            break
    return out
