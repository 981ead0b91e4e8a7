"""Log parsers: pure functions from a test runner's output to per-test statuses.

Each parser is registered by name (`pytest`, `unittest`, `django`, `sympy`), as the runner
whose output it reads (`hackaudit.shared.runners.RunnerKind`); a task names its parser in
`Task.log_parser`, or gets its runner's (`domain.runners`). Parsers read only the runner's own
output, which the sandbox cuts out of the container's transcript between its begin and end
markers (see `domain.transcript`). What a parser reads is then checked against a second channel
where the runner has one: pytest's JUnit report (`junit`), the runner's final summary and exit
status for the others (`summaries`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from hackaudit.sandbox.domain.log_parsers.django import parse_django
from hackaudit.sandbox.domain.log_parsers.pytest import parse_pytest
from hackaudit.sandbox.domain.log_parsers.statuses import StatusMap
from hackaudit.sandbox.domain.log_parsers.sympy import parse_sympy
from hackaudit.sandbox.domain.log_parsers.unittest import parse_unittest

LogParser = Callable[[str], StatusMap]

PARSERS: Mapping[str, LogParser] = MappingProxyType(
    {
        "pytest": parse_pytest,
        "unittest": parse_unittest,
        "django": parse_django,
        "sympy": parse_sympy,
    }
)


class UnknownParser(KeyError):
    """A task names a log parser that is not registered."""


def get_parser(name: str) -> LogParser:
    try:
        return PARSERS[name]
    except KeyError:
        raise UnknownParser(f"no log parser named {name!r}; known: {sorted(PARSERS)}") from None


def parse_log(name: str, log: str) -> StatusMap:
    """Per-test statuses of `log` read by the parser registered as `name`."""
    return get_parser(name)(log)


__all__ = [
    "PARSERS",
    "LogParser",
    "StatusMap",
    "UnknownParser",
    "get_parser",
    "parse_log",
]
