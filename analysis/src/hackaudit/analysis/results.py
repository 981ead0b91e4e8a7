"""The outcome of one meta-analysis run, as plain frozen records, and its JSON form."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

from hackaudit.analysis.design import Coverage, StratumPlan
from hackaudit.analysis.options import TauMethod
from hackaudit.analysis.permutation import PermutationTest
from hackaudit.analysis.pooling import PooledEffect, SignTest, SubgroupDifference
from hackaudit.analysis.submissions import Exclusion


@dataclass(frozen=True)
class Settings:
    """The knobs of a run; recorded with the results so a run can be repeated."""

    method: TauMethod = TauMethod.DL
    permutations: int = 2000
    seed: int = 0
    min_per_arm: int = 2
    alpha: float = 0.05


@dataclass(frozen=True)
class Sources:
    """Where the resolved lists, flags and strata were read from."""

    resolved: str
    flags: str
    strata: str


@dataclass(frozen=True)
class StudyEffect:
    """One submission's Mantel–Haenszel risk difference and what it is grouped by."""

    submission_id: str
    label: str
    date: date | None
    era: str
    family: str
    quartile: str
    resolved_rate: float
    flagged_rate: float
    robust_rate: float
    effect: float
    variance: float
    se: float
    ci_low: float
    ci_high: float
    weight_random: float


@dataclass(frozen=True)
class Subgroup:
    """The pooled analysis restricted to the submissions with one subgroup label."""

    label: str
    pooled: PooledEffect
    sign: SignTest


@dataclass(frozen=True)
class SubgroupAnalysis:
    """All subgroups of one kind (e.g. era) and the test for differences between them."""

    kind: str
    groups: tuple[Subgroup, ...]
    difference: SubgroupDifference


@dataclass(frozen=True)
class MetaAnalysis:
    """Everything a report needs: inputs, design, per-submission effects and pooled tests."""

    settings: Settings
    sources: Sources
    coverage: Coverage
    strata: tuple[StratumPlan, ...]
    excluded: tuple[Exclusion, ...]
    studies: tuple[StudyEffect, ...]
    pooled: PooledEffect
    sign: SignTest
    permutation: PermutationTest
    subgroups: tuple[SubgroupAnalysis, ...]


def to_json(result: MetaAnalysis) -> str:
    """The whole result as indented JSON (dates ISO, enums by value)."""
    return json.dumps(dataclasses.asdict(result), default=_encode, indent=2, allow_nan=False)


def _encode(value: Any) -> Any:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot encode {type(value).__name__}")
