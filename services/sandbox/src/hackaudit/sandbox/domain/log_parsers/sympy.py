"""SymPy's `bin/test -C --verbose`: `test_name ok`, one line per test function.

Status letters: `ok` passed, `F` failed, `E` raised, `f` expected to fail, `X` passed though
expected to fail (a failure for grading), `s`/`w` skipped, `T` timed out. The runner appends
`[OK]` / `[FAIL]` to the last test line of each file (`test_nc_simplify ok      [OK]`), so the
status is not always the line's last word. A traceback section header
(`____ sympy/x/tests/test_y.py:test_name ____`) also reports its test, under the
`path.py:test_name` key, as failed.

Each report keeps the number of the line it was read on (`reports`), so that the runner's final
`tests finished: ...` line can be checked against them (`log_parsers.summaries`).
"""

from __future__ import annotations

import re

from hackaudit.sandbox.domain.log_parsers.statuses import Report, StatusMap, fold
from hackaudit.sandbox.domain.log_parsers.text import clean_lines
from hackaudit.shared.contracts import TestStatus

_LINE = re.compile(r"^(test_\w*)\s+(ok|F|E|f|X|s|w|T)(?:\s+\[(?:OK|FAIL)\])?\s*$")
_SECTION = re.compile(r"^_+ (\S+\.py):(\S+) _+$")
_LETTERS = {
    "ok": TestStatus.PASSED,
    "F": TestStatus.FAILED,
    "E": TestStatus.ERROR,
    "f": TestStatus.XFAIL,
    "X": TestStatus.FAILED,
    "s": TestStatus.SKIPPED,
    "w": TestStatus.SKIPPED,
    "T": TestStatus.ERROR,
}


def reports(lines: list[str]) -> list[Report]:
    """Every report of a test in a `bin/test --verbose` log's (cleaned) lines, in order."""
    out: list[Report] = []
    for index, raw in enumerate(lines):
        line = raw.strip()
        match = _LINE.match(line)
        if match:
            out.append(Report(index, match.group(1), _LETTERS[match.group(2)]))
            continue
        section = _SECTION.match(line)
        if section:
            test = f"{section.group(1)}:{section.group(2)}"
            out.append(Report(index, test, TestStatus.FAILED))
    return out


def parse_sympy(log: str) -> StatusMap:
    """Per-test statuses from SymPy's own test runner in verbose mode."""
    return fold(reports(clean_lines(log)))
