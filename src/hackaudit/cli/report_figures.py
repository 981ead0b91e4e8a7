"""The dataset figures of the HTML report, as pure functions: the hackable share's Wilson interval,
the EQS histogram and the V-against-H scatter, drawn as inline SVG (the page needs no network and
no plotting library)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

Z_95 = 1.959963984540054  # two-sided 95 % normal quantile

VERDICT_COLOURS = {
    "KEEP": "#2e7d32",
    "FIX": "#ef6c00",
    "DROP": "#c62828",
    "ERROR": "#6d6d6d",
}
NO_VERDICT_COLOUR = "#9e9e9e"


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion at the two-sided normal quantile `z` (statsmodels'
    `proportion_confint(method="wilson")`); None without trials. Stays inside [0, 1] and is sound
    for small n and p near 0 or 1."""
    if trials <= 0:
        return None
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    # imported here: statsmodels takes seconds to import, and only the HTML report needs it
    from statsmodels.stats.proportion import proportion_confint

    alpha = math.erfc(z / math.sqrt(2))  # the two-sided tail beyond ±z
    low, high = proportion_confint(successes, trials, alpha=alpha, method="wilson")
    return float(low), float(high)


def eqs_bins(values: list[float], bins: int = 10) -> list[int]:
    """Counts of values in `bins` equal bins over [0, 1]; each bin holds [lo, hi), the last also
    1.0. Values outside [0, 1] are clamped into the end bins."""
    counts = [0] * bins
    for value in values:
        index = math.floor(min(1.0, max(0.0, value)) * bins)
        counts[min(index, bins - 1)] += 1
    return counts


@dataclass(frozen=True)
class Point:
    """One task in the scatter: H on x, V on y."""

    label: str
    h: float
    v: float
    verdict: str | None


WIDTH, HEIGHT, MARGIN = 420, 260, 40


def _axes(x_label: str, y_label: str, y_max: float, y_ticks: list[float]) -> list[str]:
    inner_w, inner_h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
    parts = [
        f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" '
        f'y2="{HEIGHT - MARGIN}" class="axis"/>',
        f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{HEIGHT - MARGIN}" class="axis"/>',
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 6}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="12" y="{HEIGHT / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {HEIGHT / 2})">{escape(y_label)}</text>',
    ]
    for i in range(6):
        x = MARGIN + inner_w * i / 5
        parts.append(
            f'<text x="{x:.1f}" y="{HEIGHT - MARGIN + 14}" text-anchor="middle" '
            f'class="tick">{i / 5:.1f}</text>'
        )
    for tick in y_ticks:
        y = HEIGHT - MARGIN - inner_h * (tick / y_max if y_max else 0)
        parts.append(
            f'<text x="{MARGIN - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{tick:g}</text>'
        )
    return parts


def histogram_svg(values: list[float], bins: int = 10) -> str:
    """EQS histogram: one bar per bin over [0, 1], its count above it."""
    counts = eqs_bins(values, bins)
    top = max(counts, default=0) or 1
    inner_w, inner_h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
    bar_w = inner_w / bins
    ticks = sorted({0, top} | ({top // 2} if top > 1 else set()))
    parts = _axes("EQS", "tasks", top, [float(t) for t in ticks])
    for i, count in enumerate(counts):
        height = inner_h * count / top
        x = MARGIN + i * bar_w
        y = HEIGHT - MARGIN - height
        lo, hi = i / bins, (i + 1) / bins
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{height:.1f}" '
            f'class="bar" data-bin="{lo:.1f}-{hi:.1f}" data-count="{count}">'
            f"<title>EQS {lo:.1f}–{hi:.1f}: {count} task(s)</title></rect>"
        )
        if count:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" '
                f'class="tick">{count}</text>'
            )
    return _svg("EQS histogram", parts)


def scatter_svg(points: list[Point]) -> str:
    """V (verifier discrimination) against H (hackability), one dot per task, coloured by
    verdict; hovering a dot names the task."""
    inner_w, inner_h = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
    parts = _axes("H (hackability)", "V (discrimination)", 1.0, [0.0, 0.5, 1.0])
    for p in points:
        x = MARGIN + inner_w * min(1.0, max(0.0, p.h))
        y = HEIGHT - MARGIN - inner_h * min(1.0, max(0.0, p.v))
        colour = VERDICT_COLOURS.get(p.verdict or "", NO_VERDICT_COLOUR)
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}" fill-opacity="0.75" '
            f'class="dot"><title>{escape(p.label)}: H {p.h:.2f}, V {p.v:.2f}, '
            f"{escape(p.verdict or 'no verdict')}</title></circle>"
        )
    return _svg("V against H", parts)


def _svg(title: str, parts: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(title)}">'
        + "".join(parts)
        + "</svg>"
    )
