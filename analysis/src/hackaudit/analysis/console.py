"""The terminal summary of a run: strata, pooled effects and tests, subgroups (rich tables)."""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from hackaudit.analysis.formatting import estimate_with_ci, number, p_value, percent
from hackaudit.analysis.results import MetaAnalysis, SubgroupAnalysis
from hackaudit.analysis.submissions import Exclusion

LISTED_EXCLUSIONS = 5
"""Reasons shared by at most this many submissions list them by id; more are only counted."""


def print_report(console: Console, result: MetaAnalysis, show_studies: bool = False) -> None:
    """Print every summary table, and the per-submission table if asked."""
    console.print(inputs_summary(result))
    console.print(strata_table(result))
    console.print(pooled_table(result))
    for analysis in result.subgroups:
        console.print(subgroup_table(analysis))
    if show_studies:
        console.print(studies_table(result))


def inputs_summary(result: MetaAnalysis) -> Group:
    """Which files were read, how many submissions and tasks made it in, and who was left out."""
    coverage = result.coverage
    lines = [
        f"resolved: {result.sources.resolved}",
        f"flags:    {result.sources.flags}",
        f"strata:   {result.sources.strata}",
        f"submissions analysed: {len(result.studies)}; excluded: {len(result.excluded)}",
        f"tasks analysed: {coverage.analysed} of {coverage.candidates} "
        f"(missing flag: {coverage.missing_flag}, missing stratum: {coverage.missing_stratum}; "
        f"resolved ids outside the task set: {coverage.resolved_outside})",
    ]
    lines += [f"  excluded — {line}" for line in exclusion_lines(result.excluded)]
    return Group(*(Text(line) for line in lines))


def exclusion_lines(excluded: tuple[Exclusion, ...]) -> list[str]:
    """One line per reason: the count, and the ids when there are few."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for exclusion in excluded:
        by_reason[exclusion.reason].append(exclusion.submission_id)
    lines = []
    for reason, ids in by_reason.items():
        named = f": {', '.join(ids)}" if len(ids) <= LISTED_EXCLUSIONS else ""
        lines.append(f"{len(ids)} × {reason}{named}")
    return lines


def strata_table(result: MetaAnalysis) -> Table:
    """Each stratum's task counts and whether it contributed to the estimate."""
    table = Table(title="Strata (human difficulty)")
    for column in ("stratum", "tasks", "flagged", "robust", "status"):
        table.add_column(column, justify="left" if column in ("stratum", "status") else "right")
    for plan in result.strata:
        table.add_row(plan.label, str(plan.tasks), str(plan.flagged), str(plan.robust), plan.reason)
    return table


def pooled_table(result: MetaAnalysis) -> Table:
    """The headline numbers: pooled effects, heterogeneity, sign and permutation tests."""
    pooled, sign, perm = result.pooled, result.sign, result.permutation
    table = Table(title="Pooled weak-test effect (risk difference, flagged − robust)")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    method = pooled.method.value.upper()
    rows = [
        ("submissions (k)", str(pooled.k)),
        (f"random effects ({method}) [95% CI]", estimate_with_ci(pooled.random)),
        ("random effects one-sided p (H1: > 0)", p_value(pooled.random.p_one_sided)),
        ("fixed effect [95% CI]", estimate_with_ci(pooled.fixed)),
        ("fixed effect one-sided p", p_value(pooled.fixed.p_one_sided)),
        ("τ²", number(pooled.tau2, 5)),
        ("I²", percent(pooled.i2)),
        (f"Q (df {pooled.q_df})", f"{number(pooled.q, 2)} (p {p_value(pooled.q_p)})"),
        (
            "sign test (+ / − / ties)",
            f"{sign.positive} / {sign.negative} / {sign.ties}, one-sided p "
            f"{p_value(sign.p_one_sided)}",
        ),
        (
            f"stratified permutation p ({perm.permutations}, seed {perm.seed})",
            f"{p_value(perm.p_value)} ({perm.exceedances} ≥ observed; null mean "
            f"{number(perm.null_mean)}, 95th pct {number(perm.null_p95)})",
        ),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def subgroup_table(analysis: SubgroupAnalysis) -> Table:
    """Random-effects estimate per subgroup and the test for differences between subgroups."""
    difference = analysis.difference
    table = Table(
        title=f"By {analysis.kind}",
        caption=(
            f"between-subgroup Q = {number(difference.q, 2)}, df {difference.df}, "
            f"p {p_value(difference.p)}"
        ),
    )
    for column in ("subgroup", "k", "random effects [95% CI]", "p (>0)", "τ²", "I²", "sign +/−"):
        table.add_column(column, justify="left" if column == "subgroup" else "right")
    for group in analysis.groups:
        pooled = group.pooled
        table.add_row(
            group.label,
            str(pooled.k),
            estimate_with_ci(pooled.random),
            p_value(pooled.random.p_one_sided),
            number(pooled.tau2, 4),
            percent(pooled.i2),
            f"{group.sign.positive}/{group.sign.negative}",
        )
    return table


def studies_table(result: MetaAnalysis) -> Table:
    """One row per submission: resolved rates, its risk difference and weight."""
    table = Table(title="Per submission")
    columns = ("submission", "Pass@1", "flagged (crude)", "robust (crude)", "RD [95% CI]", "weight")
    for column in columns:
        table.add_column(column, justify="left" if column == "submission" else "right")
    for study in result.studies:
        table.add_row(
            study.label,
            percent(study.resolved_rate),
            percent(study.flagged_rate),
            percent(study.robust_rate),
            f"{number(study.effect)} [{number(study.ci_low)}, {number(study.ci_high)}]",
            percent(study.weight_random),
        )
    return table
