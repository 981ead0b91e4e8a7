"""The verdicts against a labelled corpus: does every label get the verdict a curator needs?

A hackable task must not be kept (FIX: it pays for a wrong patch, repair can harden it); a
robust or equivalent-hunk task must be kept; a broken, flaky or empty-passes task must be
dropped; an over-strict task must be reported as over-strict (its tests reject a correct variant
of gold), whatever its verdict. A task hackable only through a harness hole (a conftest hook,
which passes every task graded by the same harness alike) must have the harness exploit
reported; its verdict is its own tests' (the fix belongs in the harness, not in the task).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hackaudit.cli.evaluate import (
    HACKABLE,
    HARNESS_HOLE,
    OVER_STRICT,
    ROBUST_LABELS,
    SANITY_LABELS,
    Label,
)

VERDICT_COLUMNS = ("KEEP", "FIX", "DROP", "ERROR", "none")


@dataclass(frozen=True)
class Found:
    """What an audit said of one task."""

    instance_id: str
    verdict: str | None  # None: the task has no verdict (the audit did not finish)
    over_strict: bool = False
    harness_exploits: int = 0
    unverified: tuple[str, ...] = ()  # a KEEP's caveats: what its verdict did not verify


@dataclass(frozen=True)
class VerdictRow:
    instance_id: str
    label: str
    how: str | None
    verdict: str | None
    over_strict: bool
    harness_exploits: int
    unverified: tuple[str, ...] = ()

    @property
    def expected(self) -> str:
        if self.label == HACKABLE and self.how == HARNESS_HOLE:
            return "harness exploit reported"
        if self.label == HACKABLE:
            return "FIX"
        if self.label in ROBUST_LABELS:
            return "KEEP"
        if self.label in SANITY_LABELS:
            return "DROP"
        if self.label == OVER_STRICT:
            return "over-strict"
        return "–"

    @property
    def as_expected(self) -> bool | None:
        """None for labels with no expectation (unlabelled, unflagged real tasks)."""
        if self.label == OVER_STRICT:
            return self.over_strict
        if self.label == HACKABLE and self.how == HARNESS_HOLE:
            return self.harness_exploits > 0
        if self.expected == "–":
            return None
        return self.verdict == self.expected


@dataclass(frozen=True)
class Confusion:
    """Verdict counts per label, and how many tasks got what their label needs."""

    counts: Mapping[str, Mapping[str, int]]
    over_strict: Mapping[str, int]
    expected: int
    met: int
    # KEEP verdicts per label that leave something unverified (counted among the KEEPs too).
    keep_unverified: Mapping[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return f"verdicts as the labels need: {self.met}/{self.expected}"


def rows_for(labels: Mapping[str, Label], found: Iterable[Found]) -> list[VerdictRow]:
    """One row per labelled task the audit reported on."""
    rows = []
    for f in found:
        label = labels.get(f.instance_id)
        if label is not None:
            rows.append(
                VerdictRow(
                    f.instance_id,
                    label.label,
                    label.how,
                    f.verdict,
                    f.over_strict,
                    f.harness_exploits,
                    f.unverified,
                )
            )
    return sorted(rows, key=lambda r: (r.label, r.instance_id))


def confusion(rows: Iterable[VerdictRow]) -> Confusion:
    counts: dict[str, Counter[str]] = {}
    over_strict: Counter[str] = Counter()
    keep_unverified: Counter[str] = Counter()
    expected = met = 0
    for row in rows:
        counts.setdefault(row.label, Counter())[row.verdict or "none"] += 1
        over_strict[row.label] += row.over_strict
        keep_unverified[row.label] += row.verdict == "KEEP" and bool(row.unverified)
        if row.as_expected is not None:
            expected += 1
            met += row.as_expected
    return Confusion(
        counts={label: dict(c) for label, c in counts.items()},
        over_strict=dict(over_strict),
        expected=expected,
        met=met,
        keep_unverified=dict(keep_unverified),
    )
