"""How submissions are grouped for subgroup analyses: era, model family, Pass@1 quartile.

- **era**: the calendar year of the submission date (``unknown`` without a date).
- **model family**: the families named by the submission's ``Model: ...`` tags, or failing
  that by its name; ``mixed`` when several families appear, ``unknown`` when none does.
- **Pass@1 quartile**: the quartile of the submission's resolved rate over the analysed tasks,
  Q1 lowest; cut points are the 25th/50th/75th percentiles across the submissions analysed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from hackaudit.analysis.submissions import Submission

UNKNOWN = "unknown"
MIXED = "mixed"

FAMILY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Claude", re.compile(r"claude|sonnet|opus|haiku", re.IGNORECASE)),
    ("OpenAI", re.compile(r"(?<!swe-)gpt|\bo[134](-mini|-preview)?\b|codex", re.IGNORECASE)),
    ("Gemini", re.compile(r"gemini", re.IGNORECASE)),
    ("Qwen", re.compile(r"qwen", re.IGNORECASE)),
    ("Llama", re.compile(r"llama", re.IGNORECASE)),
    ("DeepSeek", re.compile(r"deepseek", re.IGNORECASE)),
    ("GLM", re.compile(r"\bglm", re.IGNORECASE)),
    ("Kimi", re.compile(r"kimi", re.IGNORECASE)),
    ("MiniMax", re.compile(r"minimax", re.IGNORECASE)),
    ("Mistral", re.compile(r"mistral|devstral", re.IGNORECASE)),
)
"""Family name and the pattern that recognises it in a model tag or submission name."""

SUBGROUP_KINDS = ("era", "model family", "Pass@1 quartile")


def era(submission: Submission) -> str:
    """The submission year, e.g. ``"2024"``."""
    return str(submission.date.year) if submission.date is not None else UNKNOWN


def model_family(submission: Submission) -> str:
    """The model family from ``Model:`` tags, else from the submission's name and id."""
    models = [tag.split(":", 1)[1] for tag in submission.tags if tag.startswith("Model:")]
    families = _families(models) or _families([submission.name, submission.submission_id])
    if not families:
        return UNKNOWN
    return families[0] if len(families) == 1 else MIXED


def _families(texts: Sequence[str]) -> list[str]:
    return [
        family for family, pattern in FAMILY_PATTERNS if any(pattern.search(text) for text in texts)
    ]


def pass1_quartiles(resolved_rates: Sequence[float]) -> list[str]:
    """``Q1``..``Q4`` per submission by its resolved rate (ties go to the lower quartile)."""
    rates = np.asarray(resolved_rates, dtype=np.float64)
    cuts = np.quantile(rates, [0.25, 0.5, 0.75])
    return [f"Q{int(np.searchsorted(cuts, rate, side='left')) + 1}" for rate in rates]


def subgroup_labels(
    submissions: Sequence[Submission], resolved_rates: Sequence[float]
) -> dict[str, list[str]]:
    """For every subgroup kind, the label of each submission (same order as given)."""
    return {
        "era": [era(s) for s in submissions],
        "model family": [model_family(s) for s in submissions],
        "Pass@1 quartile": pass1_quartiles(resolved_rates),
    }
