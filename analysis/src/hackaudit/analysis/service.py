"""Runs one meta-analysis: design, per-submission effects, pooling, subgroups, permutations.

This is the only place the pure pieces are wired together; it reads no file and draws nothing,
so the command line, the tests and any other caller share exactly the same computation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from hackaudit.analysis.design import Design, build_design, stratified_effects
from hackaudit.analysis.effects import RiskDifference
from hackaudit.analysis.permutation import stratified_permutation_test
from hackaudit.analysis.pooling import normal_estimate, pool, sign_test, subgroup_difference
from hackaudit.analysis.results import (
    MetaAnalysis,
    Settings,
    Sources,
    StudyEffect,
    Subgroup,
    SubgroupAnalysis,
)
from hackaudit.analysis.subgroups import SUBGROUP_KINDS, subgroup_labels
from hackaudit.analysis.submissions import SubmissionSet

SUBGROUP_FIELDS = {"era": "era", "model family": "family", "Pass@1 quartile": "quartile"}
"""Which StudyEffect attribute holds the label of each subgroup kind."""


def run_meta_analysis(
    submission_set: SubmissionSet,
    flags: Mapping[str, bool],
    strata: Mapping[str, str],
    settings: Settings,
    sources: Sources,
) -> MetaAnalysis:
    """The full analysis of ``submission_set`` against the given flags and strata."""
    design = build_design(
        submission_set.submissions, flags, strata, submission_set.task_ids, settings.min_per_arm
    )
    blocks = design.used_blocks()
    effects = stratified_effects(blocks)
    pooled = pool(effects.estimate, effects.variance, settings.method, settings.alpha)
    studies = study_effects(design, effects, pooled.tau2, settings.alpha)
    return MetaAnalysis(
        settings=settings,
        sources=sources,
        coverage=design.coverage,
        strata=design.strata,
        excluded=submission_set.excluded,
        studies=studies,
        pooled=pooled,
        sign=sign_test(effects.estimate),
        permutation=stratified_permutation_test(
            blocks, settings.permutations, settings.seed, settings.method
        ),
        subgroups=tuple(subgroup_analyses(studies, settings)),
    )


def study_effects(
    design: Design, effects: RiskDifference, tau2: float, alpha: float
) -> tuple[StudyEffect, ...]:
    """One record per submission with its effect, CI, random-effects weight and subgroups."""
    used = np.isin(np.array(design.stratum_of_task), [p.label for p in design.strata if p.used])
    resolved_rates = design.outcomes.mean(axis=1)
    groups = subgroup_labels(design.submissions, resolved_rates.tolist())
    weights = 1.0 / (effects.variance + tau2)
    weights = weights / weights.sum()
    records = []
    for i, submission in enumerate(design.submissions):
        effect, variance = float(effects.estimate[i]), float(effects.variance[i])
        interval = normal_estimate(effect, math.sqrt(variance), alpha)
        records.append(
            StudyEffect(
                submission_id=submission.submission_id,
                label=submission.label,
                date=submission.date,
                era=groups["era"][i],
                family=groups["model family"][i],
                quartile=groups["Pass@1 quartile"][i],
                resolved_rate=float(resolved_rates[i]),
                flagged_rate=_rate(design.outcomes[i], used & design.flags),
                robust_rate=_rate(design.outcomes[i], used & ~design.flags),
                effect=effect,
                variance=variance,
                se=interval.se,
                ci_low=interval.ci_low,
                ci_high=interval.ci_high,
                weight_random=float(weights[i]),
            )
        )
    return tuple(records)


def _rate(outcomes: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> float:
    return float(outcomes[mask].mean()) if mask.any() else math.nan


def subgroup_analyses(studies: Sequence[StudyEffect], settings: Settings) -> list[SubgroupAnalysis]:
    """Pool within every subgroup of every kind and test for differences between them."""
    labels_by_kind = {
        kind: [getattr(study, SUBGROUP_FIELDS[kind]) for study in studies]
        for kind in SUBGROUP_KINDS
    }
    analyses = []
    for kind, labels in labels_by_kind.items():
        groups = tuple(
            _subgroup(label, _members(studies, labels, label), settings)
            for label in sorted(set(labels))
        )
        difference = subgroup_difference({g.label: g.pooled for g in groups})
        analyses.append(SubgroupAnalysis(kind, groups, difference))
    return analyses


def _members(
    studies: Sequence[StudyEffect], labels: Sequence[str], wanted: str
) -> list[StudyEffect]:
    return [study for study, label in zip(studies, labels, strict=True) if label == wanted]


def _subgroup(label: str, members: Sequence[StudyEffect], settings: Settings) -> Subgroup:
    effects = [s.effect for s in members]
    variances = [s.variance for s in members]
    return Subgroup(
        label=label,
        pooled=pool(effects, variances, settings.method, settings.alpha),
        sign=sign_test(effects),
    )
