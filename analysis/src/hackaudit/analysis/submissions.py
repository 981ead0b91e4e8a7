"""What the analysis knows about one leaderboard submission, whatever file it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path


@dataclass(frozen=True)
class Submission:
    """One evaluated system: its resolved task ids plus what subgroups are built from."""

    submission_id: str
    resolved: frozenset[str]
    name: str = ""
    date: date | None = None
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The human name when known, else the id."""
        return self.name or self.submission_id


@dataclass(frozen=True)
class Exclusion:
    """A submission present in the input but left out, and why."""

    submission_id: str
    reason: str


@dataclass(frozen=True)
class SubmissionSet:
    """Submissions read from one source, the ones left out, and the task ids the source covers.

    ``task_ids`` is ``None`` when the source does not say which tasks were evaluated (a folder of
    results lists only resolved ids); then the task set comes from the flags and strata.
    """

    source: Path
    submissions: tuple[Submission, ...]
    excluded: tuple[Exclusion, ...] = ()
    task_ids: frozenset[str] | None = field(default=None)
