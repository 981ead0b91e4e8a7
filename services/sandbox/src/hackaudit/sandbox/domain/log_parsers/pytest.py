"""pytest's `-rA` short test summary: `PASSED tests/test_x.py::test_a`, one line per test.

Only lines inside a summary block are read: the block opens with pytest's
`==== short test summary info ====` rule and closes at the next `====` rule (the final counts).
Lines elsewhere in the log — a candidate's own `print("PASSED ...")`, captured output of passing
tests, progress lines — are ignored. When a log holds several blocks (pytester sessions shown in
captured output, or a block a candidate printed), the statuses are those of the *last* block, each
made worse by any worse report of the same test in an earlier block.

Test ids are the first whitespace-free token after the status, as the SWE-bench harness reads
them, so a parametrised id holding a space is cut at that space exactly as in the task's
FAIL_TO_PASS / PASS_TO_PASS lists. Two aliases are added for ids those lists spell differently
(a parameter that is an absolute path shortened to its last part; matplotlib's `MouseButton.LEFT`
/ `RIGHT` written as 1 / 3).
"""

from __future__ import annotations

import re

from hackaudit.sandbox.domain.log_parsers.statuses import StatusMap, record
from hackaudit.sandbox.domain.log_parsers.text import clean_lines
from hackaudit.shared.contracts import TestStatus

_SUMMARY_HEADER = re.compile(r"^=+ short test summary info =+\s*$")
_RULE = re.compile(r"^=+( .* )?=+\s*$")
_RESULT = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL)\s+(\S+)")
_SKIP_COUNT = re.compile(r"^\[\d+\]$")
_PARAM = re.compile(r"^(.*?)\[(.*)\]$")


def summary_blocks(log: str) -> list[list[str]]:
    """The lines of every short-test-summary block, in order."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in clean_lines(log):
        if _SUMMARY_HEADER.match(line):
            current = []
            blocks.append(current)
        elif current is not None and _RULE.match(line):
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def _block_statuses(lines: list[str]) -> StatusMap:
    statuses: StatusMap = {}
    for line in lines:
        match = _RESULT.match(line)
        if match is None or _SKIP_COUNT.match(match.group(2)):
            continue
        record(statuses, match.group(2), TestStatus(match.group(1)))
    return statuses


def _aliases(test: str) -> list[str]:
    aliases = []
    param = _PARAM.match(test)
    value = param.group(2) if param else ""
    if param and value.startswith("/") and not value.startswith("//") and "*" not in value:
        aliases.append(f"{param.group(1)}[/{value.rsplit('/', 1)[-1]}]")
    if "MouseButton." in test:
        aliases.append(test.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3"))
    return [a for a in aliases if a != test]


def parse_pytest_ids(log: str) -> StatusMap:
    """Per-test statuses from pytest's `-rA` summary, under pytest's own ids (no aliases)."""
    blocks = [_block_statuses(block) for block in summary_blocks(log)]
    if not blocks:
        return {}
    final = dict(blocks[-1])
    for earlier in blocks[:-1]:
        for test, status in earlier.items():
            if test in final:
                record(final, test, status)
    return final


def with_aliases(statuses: StatusMap) -> StatusMap:
    """`statuses` plus the alias spellings of its ids (see the module docstring)."""
    out = dict(statuses)
    for test, status in statuses.items():
        for alias in _aliases(test):
            record(out, alias, status)
    return out


def parse_pytest(log: str) -> StatusMap:
    """Per-test statuses from pytest's `-rA` summary (see the module docstring for the rules)."""
    return with_aliases(parse_pytest_ids(log))
