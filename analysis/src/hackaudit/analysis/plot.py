"""Forest plot of the per-submission risk differences and the pooled estimates.

Drawn on a bare ``Figure`` with the Agg canvas (no pyplot, no global state, no display), so it is
safe in tests and servers. One row per submission in input order: a square sized by its
random-effects weight and its 95% CI; below them the random- and fixed-effect diamonds.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon
from matplotlib.transforms import blended_transform_factory

from hackaudit.analysis.formatting import estimate_with_ci, interval, number, p_value
from hackaudit.analysis.pooling import Estimate
from hackaudit.analysis.results import MetaAnalysis

ROW_HEIGHT_INCHES = 0.2
LABEL_CHARS = 48
STUDY_COLOUR = "#1f4e79"
RANDOM_COLOUR = "#b22222"
FIXED_COLOUR = "#555555"


def forest_figure(result: MetaAnalysis) -> Figure:
    """The forest plot as a matplotlib figure."""
    rows = len(result.studies) + 3
    figure = Figure(figsize=(11, 2.0 + ROW_HEIGHT_INCHES * rows))
    FigureCanvasAgg(figure)
    height = 2.0 + ROW_HEIGHT_INCHES * rows
    bottom, top = 1.1 / height, 1.0 - 0.7 / height
    axes = figure.add_axes((0.33, bottom, 0.45, top - bottom))
    _draw_studies(axes, result)
    _draw_pooled(axes, result)
    _decorate(axes, result, rows)
    return figure


def _draw_studies(axes: Axes, result: MetaAnalysis) -> None:
    largest = max(study.weight_random for study in result.studies)
    right = blended_transform_factory(axes.transAxes, axes.transData)
    for row, study in enumerate(result.studies):
        y = -row
        axes.plot([study.ci_low, study.ci_high], [y, y], color=STUDY_COLOUR, linewidth=0.8)
        size = 3 + 6 * (study.weight_random / largest) ** 0.5
        axes.plot(study.effect, y, marker="s", markersize=size, color=STUDY_COLOUR)
        axes.text(
            1.02,
            y,
            f"{number(study.effect)} {interval(study.ci_low, study.ci_high)}",
            transform=right,
            va="center",
            fontsize=7,
            family="monospace",
        )


def _draw_pooled(axes: Axes, result: MetaAnalysis) -> None:
    right = blended_transform_factory(axes.transAxes, axes.transData)
    base = -len(result.studies) - 1
    pooled = result.pooled
    for offset, estimate, colour in (
        (0, pooled.random, RANDOM_COLOUR),
        (1, pooled.fixed, FIXED_COLOUR),
    ):
        y = base - offset
        axes.add_patch(_diamond(estimate, y, colour))
        axes.text(
            1.02,
            y,
            estimate_with_ci(estimate),
            transform=right,
            va="center",
            fontsize=7,
            family="monospace",
            color=colour,
            fontweight="bold",
        )
    axes.axvline(pooled.random.value, color=RANDOM_COLOUR, linestyle="--", linewidth=0.7)


def _diamond(estimate: Estimate, y: float, colour: str) -> Polygon:
    half = 0.4
    corners = [
        (estimate.ci_low, y),
        (estimate.value, y + half),
        (estimate.ci_high, y),
        (estimate.value, y - half),
    ]
    return Polygon(corners, closed=True, color=colour)


def _decorate(axes: Axes, result: MetaAnalysis, rows: int) -> None:
    pooled = result.pooled
    labels = [_short(study.label) for study in result.studies]
    method = pooled.method.value.upper()
    labels += ["", f"Random effects ({method})", "Fixed effect"]
    axes.set_yticks([-i for i in range(rows)], labels, fontsize=7)
    axes.set_ylim(-rows + 0.3, 0.8)
    axes.text(1.02, 1.0, "RD [95% CI]", transform=axes.transAxes, va="bottom", fontsize=8)
    axes.axvline(0.0, color="black", linewidth=0.8)
    axes.set_xlabel("Mantel–Haenszel risk difference, resolved rate on flagged − robust tasks")
    axes.grid(axis="x", linewidth=0.3, alpha=0.5)
    strata = ", ".join(plan.label for plan in result.strata if plan.used)
    axes.set_title(f"Weak-test effect per submission (strata: {strata})", fontsize=10)
    axes.figure.text(0.02, 0.01, _footer(result), fontsize=8, va="bottom")


def _footer(result: MetaAnalysis) -> str:
    pooled, sign, perm = result.pooled, result.sign, result.permutation
    i2 = "—" if pooled.i2 is None else f"{100 * pooled.i2:.0f}%"
    return (
        f"k = {pooled.k};  τ² = {pooled.tau2:.4f};  I² = {i2};  Q = {pooled.q:.1f} "
        f"(df {pooled.q_df});  sign test {sign.positive}+/{sign.negative}− p = "
        f"{p_value(sign.p_one_sided)};  permutation p = {p_value(perm.p_value)} "
        f"({perm.permutations} permutations, seed {perm.seed})"
    )


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def save_forest(result: MetaAnalysis, out_dir: Path) -> tuple[Path, Path]:
    """Write ``forest.png`` and ``forest.svg`` into ``out_dir``; return both paths."""
    figure = forest_figure(result)
    png, svg = out_dir / "forest.png", out_dir / "forest.svg"
    figure.savefig(png, dpi=150)
    figure.savefig(svg)
    return png, svg
