"""Which tasks and strata enter the analysis, and the outcome matrix built from them."""

from __future__ import annotations

import numpy as np
import pytest

from hackaudit.analysis.design import build_design, plan_strata, stratified_effects
from hackaudit.analysis.effects import mh_risk_difference
from hackaudit.analysis.errors import EmptyAnalysisError
from hackaudit.analysis.submissions import Submission


@pytest.mark.parametrize(
    ("flags", "min_per_arm", "used", "reason"),
    [
        ([True, True, False, False], 2, True, "used"),
        ([True, False, False, False], 2, False, "skipped: 1 flagged task(s), fewer than 2"),
        ([False, False, False], 1, False, "skipped: 0 flagged task(s), fewer than 1"),
        ([True, True, True, False], 2, False, "skipped: 1 robust task(s), fewer than 2"),
        ([True, False], 1, True, "used"),
    ],
)
def test_stratum_contributes_only_with_enough_tasks_in_each_arm(
    flags: list[bool], min_per_arm: int, used: bool, reason: str
) -> None:
    (plan,) = plan_strata(flags, ["s"] * len(flags), min_per_arm)
    assert (plan.used, plan.reason) == (used, reason)
    assert (plan.tasks, plan.flagged, plan.robust) == (
        len(flags),
        sum(flags),
        len(flags) - sum(flags),
    )


def test_difficulty_strata_are_listed_easiest_first_then_others() -> None:
    labels = ["zeta", ">4 hours", "1-4 hours", "<15 min fix", "15 min - 1 hour", "alpha"]
    plans = plan_strata([False] * len(labels), labels)
    assert [p.label for p in plans] == [
        "<15 min fix",
        "15 min - 1 hour",
        "1-4 hours",
        ">4 hours",
        "alpha",
        "zeta",
    ]


def test_design_keeps_tasks_with_both_labels_and_counts_the_rest() -> None:
    flags = {"t1": True, "t2": True, "t3": False, "t4": False, "t5": False}
    strata = {"t1": "s", "t2": "s", "t3": "s", "t4": "s", "t6": "s"}
    submissions = [Submission("m", frozenset({"t1", "t3", "t9"}))]
    design = build_design(submissions, flags, strata)
    assert design.task_ids == ("t1", "t2", "t3", "t4")
    assert design.outcomes.tolist() == [[1, 0, 1, 0]]
    coverage = design.coverage
    assert (coverage.candidates, coverage.analysed) == (6, 4)
    assert (coverage.missing_flag, coverage.missing_stratum) == (1, 1)
    assert coverage.resolved_outside == 1  # t9


def test_declared_task_list_limits_the_design() -> None:
    flags = {"t1": True, "t2": True, "t3": False, "t4": False, "t5": False}
    strata = dict.fromkeys(flags, "s")
    design = build_design([Submission("m", frozenset())], flags, strata, frozenset(flags) - {"t5"})
    assert design.task_ids == ("t1", "t2", "t3", "t4")


def test_no_usable_stratum_is_an_error_that_says_why() -> None:
    flags = {"t1": True, "t2": False, "t3": False}
    with pytest.raises(EmptyAnalysisError, match="1 flagged task"):
        build_design([Submission("m", frozenset())], flags, dict.fromkeys(flags, "s"))


def test_no_submissions_is_an_error() -> None:
    with pytest.raises(EmptyAnalysisError, match="no submissions"):
        build_design([], {"t": True}, {"t": "s"})


def test_stratified_effects_count_each_contributing_stratum() -> None:
    # stratum a: flagged t1,t2 robust t3,t4; stratum b: flagged t5,t6 robust t7,t8; c is skipped.
    flags = dict.fromkeys(["t1", "t2", "t5", "t6", "t9"], True)
    flags |= dict.fromkeys(["t3", "t4", "t7", "t8", "t10", "t11"], False)
    strata = dict.fromkeys(("t1", "t2", "t3", "t4"), "a")
    strata |= dict.fromkeys(("t5", "t6", "t7", "t8"), "b")
    strata |= dict.fromkeys(("t9", "t10", "t11"), "c")
    resolved = frozenset({"t1", "t2", "t3", "t5", "t9"})
    design = build_design([Submission("m", resolved)], flags, strata)
    blocks = design.used_blocks()
    assert [b.label for b in blocks] == ["a", "b"]
    # a: 2/2 vs 1/2; b: 1/2 vs 0/2 -> counts as below
    expected = mh_risk_difference([2, 1], [2, 2], [1, 0], [2, 2])
    got = stratified_effects(blocks)
    np.testing.assert_allclose(got.estimate, np.atleast_1d(expected.estimate))
    np.testing.assert_allclose(got.variance, np.atleast_1d(expected.variance))
