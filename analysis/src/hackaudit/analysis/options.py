"""Choices of the analysis that the command line offers, kept apart from the numerical modules
so that reading them (for `--help`) loads no statistics library."""

from __future__ import annotations

from enum import StrEnum

MAX_PERMUTATIONS = 100_000


class TauMethod(StrEnum):
    """Estimator of the between-submission variance τ²."""

    DL = "dl"
    REML = "reml"
