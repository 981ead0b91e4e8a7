"""A self-contained HTML report: headline numbers, strata, subgroups, forest plot, submissions.

The forest plot is embedded as inline SVG so the file can be opened or mailed on its own. All
text that came from input files (submission names, stratum labels) is HTML-escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from hackaudit.analysis.console import exclusion_lines
from hackaudit.analysis.formatting import estimate_with_ci, number, p_value, percent
from hackaudit.analysis.results import MetaAnalysis, SubgroupAnalysis

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: bottom; text-align: left; font-size: 0.9em; color: #555; }
.note { color: #555; font-size: 0.92em; }
svg { max-width: 100%; height: auto; }
"""

NOTES = (
    "Each submission's effect is the Mantel–Haenszel risk difference of its resolved rate on "
    "flagged minus robust tasks, across the contributing strata; its variance uses "
    "continuity-smoothed proportions (x + ½)/(n + 1), so it stays positive when a cell has no "
    "successes.",
    "The submissions are scored on the same tasks and are not independent: the random-effects "
    "CI, its p-value, the sign test and the subgroup test treat them as independent and are "
    "optimistic. The stratified permutation p-value permutes the flags within strata and does "
    "not assume independence.",
    "One-sided p-values test H1: effect > 0 (flagged tasks resolved more often).",
)


def render_html(result: MetaAnalysis, forest_svg: str) -> str:
    """The report page; ``forest_svg`` is the SVG document of the forest plot."""
    sections = [
        "<h1>hackaudit meta-analysis</h1>",
        _inputs(result),
        "<h2>Pooled weak-test effect</h2>",
        _pooled(result),
        "<h2>Strata</h2>",
        _strata(result),
        "<h2>Subgroups</h2>",
        *(_subgroup(analysis) for analysis in result.subgroups),
        "<h2>Forest plot</h2>",
        _inline_svg(forest_svg),
        "<h2>Per submission</h2>",
        _studies(result),
        "<h2>Notes</h2>",
        "".join(f"<p class='note'>{escape(note)}</p>" for note in NOTES),
    ]
    body = "\n".join(sections)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>hackaudit meta-analysis</title><style>{STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", numeric_from: int = 1
) -> str:
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='num'>{escape(cell)}</td>"
            if i >= numeric_from
            else f"<td>{escape(cell)}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    caption_html = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{caption_html}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _inputs(result: MetaAnalysis) -> str:
    coverage = result.coverage
    items = [
        f"resolved lists: {result.sources.resolved}",
        f"flags: {result.sources.flags}",
        f"strata: {result.sources.strata}",
        f"submissions analysed: {len(result.studies)}, excluded: {len(result.excluded)}",
        f"tasks analysed: {coverage.analysed} of {coverage.candidates} (missing flag "
        f"{coverage.missing_flag}, missing stratum {coverage.missing_stratum})",
        *(f"excluded: {line}" for line in exclusion_lines(result.excluded)),
    ]
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def _pooled(result: MetaAnalysis) -> str:
    pooled, sign, perm = result.pooled, result.sign, result.permutation
    rows = [
        ["submissions (k)", str(pooled.k)],
        [
            f"random effects ({pooled.method.value.upper()}) [95% CI]",
            estimate_with_ci(pooled.random),
        ],
        ["random effects one-sided p", p_value(pooled.random.p_one_sided)],
        ["fixed effect [95% CI]", estimate_with_ci(pooled.fixed)],
        ["τ²", number(pooled.tau2, 5)],
        ["I²", percent(pooled.i2)],
        [f"Q (df {pooled.q_df})", f"{number(pooled.q, 2)} (p {p_value(pooled.q_p)})"],
        [
            "sign test (+ / − / ties), one-sided p",
            f"{sign.positive} / {sign.negative} / {sign.ties}, p {p_value(sign.p_one_sided)}",
        ],
        [
            f"stratified permutation p ({perm.permutations} permutations, seed {perm.seed})",
            p_value(perm.p_value),
        ],
    ]
    return _table(["statistic", "value"], rows)


def _strata(result: MetaAnalysis) -> str:
    rows = [[p.label, str(p.tasks), str(p.flagged), str(p.robust), p.reason] for p in result.strata]
    caption = (
        f"A stratum contributes when it has at least {result.settings.min_per_arm} flagged and "
        f"{result.settings.min_per_arm} robust tasks."
    )
    return _table(["stratum", "tasks", "flagged", "robust", "status"], rows, caption)


def _subgroup(analysis: SubgroupAnalysis) -> str:
    rows = [
        [
            g.label,
            str(g.pooled.k),
            estimate_with_ci(g.pooled.random),
            p_value(g.pooled.random.p_one_sided),
            number(g.pooled.tau2, 4),
            percent(g.pooled.i2),
            f"{g.sign.positive}/{g.sign.negative}",
        ]
        for g in analysis.groups
    ]
    d = analysis.difference
    caption = f"Test for subgroup differences: Q = {number(d.q, 2)}, df {d.df}, p {p_value(d.p)}"
    header = ["subgroup", "k", "random effects [95% CI]", "p (>0)", "τ²", "I²", "sign +/−"]
    return f"<h3>By {escape(analysis.kind)}</h3>" + _table(header, rows, caption)


def _studies(result: MetaAnalysis) -> str:
    rows = [
        [
            s.label,
            s.date.isoformat() if s.date else "—",
            s.era,
            s.family,
            s.quartile,
            percent(s.resolved_rate),
            number(s.effect),
            f"[{number(s.ci_low)}, {number(s.ci_high)}]",
            percent(s.weight_random),
        ]
        for s in result.studies
    ]
    header = ["submission", "date", "era", "family", "quartile", "Pass@1", "RD", "95% CI", "weight"]
    return _table(header, rows, numeric_from=5)


def _inline_svg(svg: str) -> str:
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
