"""How numbers are written in every report, so the console, HTML and plot agree."""

from __future__ import annotations

import math

from hackaudit.analysis.pooling import Estimate


def number(value: float | None, digits: int = 3) -> str:
    """Fixed-point with ``digits`` decimals; an em dash for a missing or undefined value."""
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.{digits}f}"


def p_value(value: float | None) -> str:
    """Four decimals, or scientific notation below 0.0001."""
    if value is None or math.isnan(value):
        return "—"
    return f"{value:.1e}" if value < 1e-4 else f"{value:.4f}"


def percent(value: float | None) -> str:
    """A fraction as a percentage with one decimal."""
    if value is None or math.isnan(value):
        return "—"
    return f"{100 * value:.1f}%"


def interval(low: float, high: float, digits: int = 3) -> str:
    """``[low, high]``."""
    return f"[{number(low, digits)}, {number(high, digits)}]"


def estimate_with_ci(estimate: Estimate, digits: int = 3) -> str:
    """``value [low, high]``."""
    return f"{number(estimate.value, digits)} {interval(estimate.ci_low, estimate.ci_high, digits)}"
