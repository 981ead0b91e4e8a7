"""`python -m unittest -v`: `test_a (module.Class) ... ok`, and the `FAIL: ...` blocks at the end.

The test's name is everything before ` ... ` on its result line (its docstring's first line when
it has one, as unittest prints it), which is how the task's test lists spell it. A result can land
on a later line when the test prints something first (`test_a (m.C) ... some output` then `ok`);
the pending test takes that result. Every report of a test is kept and the worse one wins, so a
printed `... ok` line cannot hide the runner's `FAIL:` for the same test.

Each report keeps the number of the line it was read on (`verbose_reports`), so that the runner's
final summary can be checked against them (`log_parsers.summaries`).
"""

from __future__ import annotations

import re

from hackaudit.sandbox.domain.log_parsers.statuses import Report, StatusMap, fold
from hackaudit.sandbox.domain.log_parsers.text import clean_lines
from hackaudit.shared.contracts import TestStatus

SEPARATOR = " ... "
_BLOCK_HEADER = re.compile(r"^(FAIL|ERROR): (.+?)\s*$")


def _result_of(text: str) -> TestStatus | None:
    """The status a result word stands for (`ok`, `FAIL`, `skipped 'why'`...), if it is one."""
    word = text.strip()
    if word in {"ok", "OK"}:
        return TestStatus.PASSED
    if word == "FAIL" or word == "unexpected success":
        return TestStatus.FAILED
    if word == "ERROR":
        return TestStatus.ERROR
    if word == "expected failure":
        return TestStatus.XFAIL
    if word.startswith("skipped") or word.startswith("skip "):
        return TestStatus.SKIPPED
    return None


def verbose_reports(lines: list[str]) -> list[Report]:
    """Every report of a test in a verbose unittest log's (cleaned) lines, in order."""
    reports: list[Report] = []
    pending: str | None = None
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        header = _BLOCK_HEADER.match(line)
        if header:
            failed = header.group(1) == "FAIL"
            status = TestStatus.FAILED if failed else TestStatus.ERROR
            reports.append(Report(index, header.group(2), status))
            continue
        if SEPARATOR in line:
            name, _, rest = line.partition(SEPARATOR)
            result = _result_of(rest)
            if result is None and " ... skipped" in line:
                result = TestStatus.SKIPPED
            if result is None:
                pending = name
            else:
                reports.append(Report(index, name, result))
                pending = None
            continue
        late = _result_of(line.split(" ", 1)[0] if line.startswith("ok ") else line)
        if pending is not None and late is not None:
            reports.append(Report(index, pending, late))
            pending = None
    return reports


def parse_verbose_unittest(log: str) -> StatusMap:
    """Statuses from a verbose unittest log (Django's runner prints the same format)."""
    return fold(verbose_reports(clean_lines(log)))


def parse_unittest(log: str) -> StatusMap:
    """Per-test statuses from `python -m unittest -v` (or any verbose unittest runner)."""
    return parse_verbose_unittest(log)
