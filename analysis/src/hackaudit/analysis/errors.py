"""Faults raised while reading analysis inputs.

An input that cannot be read is a fault of the caller, so it is an exception; the message always
names the file and, where one applies, the field, so the user can fix the file without a debugger.

    AnalysisError
    ├── InputFileError        a file is missing, unparseable or has the wrong shape
    └── EmptyAnalysisError    the inputs leave nothing to analyse (no submissions, no strata)
"""

from __future__ import annotations

from pathlib import Path


class AnalysisError(Exception):
    """Base class for every fault this package raises on purpose."""


class InputFileError(AnalysisError):
    """A file given to the analysis cannot be used; says which file and which field."""

    def __init__(self, path: Path, problem: str, field: str | None = None) -> None:
        self.path = path
        self.field = field
        self.problem = problem
        where = f"{path}" if field is None else f"{path} (field {field!r})"
        super().__init__(f"{where}: {problem}")


class EmptyAnalysisError(AnalysisError):
    """The inputs are readable but leave no study or no usable stratum to analyse."""
