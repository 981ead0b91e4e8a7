"""The study design: which tasks are analysed, which strata contribute, and the outcome matrix.

A task is analysed when it has both a flag and a stratum (and, if the resolved source lists its
tasks, appears there). A stratum contributes to the Mantel–Haenszel estimate only if it holds at
least ``min_per_arm`` flagged and ``min_per_arm`` robust tasks; otherwise it is kept in the design
with ``used=False`` and a reason, so every report can say which strata were skipped and why.
Because the decision depends only on the flags and strata, it is the same for every submission,
and permuting flags within strata never changes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hackaudit.analysis.effects import RiskDifference, mh_risk_difference
from hackaudit.analysis.errors import EmptyAnalysisError
from hackaudit.analysis.submissions import Submission

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

DIFFICULTY_ORDER = ("<15 min fix", "15 min - 1 hour", "1-4 hours", ">4 hours")
"""The SWE-bench Verified human difficulty labels, easiest first; other labels sort after."""

DEFAULT_MIN_PER_ARM = 2


@dataclass(frozen=True)
class StratumPlan:
    """One stratum: its task counts and whether it contributes (and if not, why)."""

    label: str
    tasks: int
    flagged: int
    robust: int
    used: bool
    reason: str


@dataclass(frozen=True)
class Coverage:
    """How the candidate tasks were narrowed to the analysed ones."""

    candidates: int
    analysed: int
    missing_flag: int
    missing_stratum: int
    resolved_outside: int


@dataclass(frozen=True)
class StratumBlock:
    """The outcomes of every submission on one contributing stratum's tasks."""

    label: str
    outcomes: IntArray
    flags: BoolArray


@dataclass(frozen=True)
class Design:
    """Everything the statistics need, with submissions as rows and analysed tasks as columns."""

    submissions: tuple[Submission, ...]
    task_ids: tuple[str, ...]
    flags: BoolArray
    stratum_of_task: tuple[str, ...]
    strata: tuple[StratumPlan, ...]
    outcomes: IntArray
    coverage: Coverage

    def used_blocks(self) -> list[StratumBlock]:
        """One block per contributing stratum, in stratum order."""
        labels = np.array(self.stratum_of_task, dtype=object)
        blocks = []
        for plan in self.strata:
            if plan.used:
                mask = labels == plan.label
                blocks.append(StratumBlock(plan.label, self.outcomes[:, mask], self.flags[mask]))
        return blocks


def stratum_sort_key(label: str) -> tuple[int, str]:
    """Known difficulty labels in their natural order, anything else alphabetically after."""
    if label in DIFFICULTY_ORDER:
        return (DIFFICULTY_ORDER.index(label), "")
    return (len(DIFFICULTY_ORDER), label)


def plan_strata(
    flags: Sequence[bool], strata: Sequence[str], min_per_arm: int = DEFAULT_MIN_PER_ARM
) -> tuple[StratumPlan, ...]:
    """Decide for each stratum whether it has enough flagged and robust tasks to contribute."""
    plans = []
    for label in sorted(set(strata), key=stratum_sort_key):
        members = [flag for flag, stratum in zip(flags, strata, strict=True) if stratum == label]
        flagged = sum(members)
        robust = len(members) - flagged
        reason = _skip_reason(flagged, robust, min_per_arm)
        plans.append(
            StratumPlan(label, len(members), flagged, robust, reason is None, reason or "used")
        )
    return tuple(plans)


def _skip_reason(flagged: int, robust: int, min_per_arm: int) -> str | None:
    if flagged < min_per_arm:
        return f"skipped: {flagged} flagged task(s), fewer than {min_per_arm}"
    if robust < min_per_arm:
        return f"skipped: {robust} robust task(s), fewer than {min_per_arm}"
    return None


def build_design(
    submissions: Sequence[Submission],
    flags: Mapping[str, bool],
    strata: Mapping[str, str],
    declared_tasks: frozenset[str] | None = None,
    min_per_arm: int = DEFAULT_MIN_PER_ARM,
) -> Design:
    """Join submissions, flags and strata into the matrix the statistics run on."""
    if not submissions:
        raise EmptyAnalysisError("no submissions to analyse")
    candidates = declared_tasks if declared_tasks is not None else frozenset(flags) | set(strata)
    task_ids = tuple(sorted(t for t in candidates if t in flags and t in strata))
    if not task_ids:
        raise EmptyAnalysisError("no task has both a flag and a stratum")
    flag_vector = np.array([bool(flags[t]) for t in task_ids], dtype=np.bool_)
    stratum_labels = tuple(strata[t] for t in task_ids)
    plans = plan_strata(flag_vector.tolist(), stratum_labels, min_per_arm)
    if not any(plan.used for plan in plans):
        raise EmptyAnalysisError(
            "no stratum has enough flagged and robust tasks: "
            + "; ".join(f"{p.label}: {p.reason}" for p in plans)
        )
    analysed = frozenset(task_ids)
    return Design(
        submissions=tuple(submissions),
        task_ids=task_ids,
        flags=flag_vector,
        stratum_of_task=stratum_labels,
        strata=plans,
        outcomes=outcome_matrix(submissions, task_ids),
        coverage=Coverage(
            candidates=len(candidates),
            analysed=len(task_ids),
            missing_flag=sum(1 for t in candidates if t not in flags),
            missing_stratum=sum(1 for t in candidates if t not in strata),
            resolved_outside=sum(len(s.resolved - analysed) for s in submissions),
        ),
    )


def outcome_matrix(submissions: Sequence[Submission], task_ids: Sequence[str]) -> IntArray:
    """0/1 matrix: row per submission, column per task, 1 where the task was resolved."""
    return np.array(
        [[int(t in s.resolved) for t in task_ids] for s in submissions], dtype=np.int64
    ).reshape(len(submissions), len(task_ids))


def stratified_effects(
    blocks: Sequence[StratumBlock], flags_per_block: Sequence[npt.NDArray[np.bool_]] | None = None
) -> RiskDifference:
    """Mantel–Haenszel risk difference of every submission, for the blocks' flags or others.

    ``flags_per_block[j]`` has shape ``(t_j,)`` for one flag assignment or ``(P, t_j)`` for P
    assignments at once (the permutation test); the result then has shape ``(m,)`` or ``(P, m)``.
    """
    flag_sets = [b.flags for b in blocks] if flags_per_block is None else list(flags_per_block)
    flagged_resolved = np.stack(
        [f.astype(np.float64) @ b.outcomes.T for f, b in zip(flag_sets, blocks, strict=True)],
        axis=-1,
    )
    flagged_n = np.stack([f.sum(axis=-1) for f in flag_sets], axis=-1)[..., np.newaxis, :]
    resolved = np.stack([b.outcomes.sum(axis=1) for b in blocks], axis=-1)
    sizes = np.array([b.flags.size for b in blocks])
    return mh_risk_difference(
        flagged_resolved, flagged_n, resolved - flagged_resolved, sizes - flagged_n
    )
