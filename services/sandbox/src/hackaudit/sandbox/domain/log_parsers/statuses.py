"""How per-test statuses are combined when a log reports one test more than once.

A log can contradict itself: a test is reported `ok` and later `ERROR` (a teardown error), or a
candidate prints its own `PASSED` line for a test the runner reports as failed. The parsers keep
the *worse* report, so text a candidate adds can never improve a status the runner gave.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hackaudit.shared.contracts import TestStatus

StatusMap = dict[str, TestStatus]

SEVERITY: Mapping[TestStatus, int] = {
    TestStatus.PASSED: 0,
    TestStatus.XFAIL: 1,
    TestStatus.SKIPPED: 2,
    TestStatus.FAILED: 3,
    TestStatus.ERROR: 4,
}


def worse(a: TestStatus, b: TestStatus) -> TestStatus:
    return a if SEVERITY[a] >= SEVERITY[b] else b


def record(statuses: StatusMap, test: str, status: TestStatus) -> None:
    """Add one report of `test`, keeping the worse when it was already reported."""
    previous = statuses.get(test)
    statuses[test] = status if previous is None else worse(previous, status)


@dataclass(frozen=True)
class Report:
    """One report of a test in a log: the line it was read on, the test, its status."""

    line: int
    test: str
    status: TestStatus


def fold(reports: Iterable[Report]) -> StatusMap:
    """The statuses of `reports`, the worse kept for a test reported more than once."""
    statuses: StatusMap = {}
    for report in reports:
        record(statuses, report.test, report.status)
    return statuses
