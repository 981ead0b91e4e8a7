"""Log parsers: pure functions from a test runner's output to per-test statuses.

Each parser is registered by name (`pytest`, `unittest`, `django`, `sympy`); a task names its
parser in `Task.log_parser`, or gets the one its repository uses (`REPO_PARSERS`, pytest for any
repository not listed). Parsers read only the runner's own output, which the sandbox cuts out of
the container's transcript between its begin and end markers (see `domain.transcript`).
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

REPO_PARSERS: Mapping[str, str] = MappingProxyType(
    {
        "django/django": "django",
        "sympy/sympy": "sympy",
    }
)

DEFAULT_PARSER = "pytest"


class UnknownParser(KeyError):
    """A task names a log parser that is not registered."""


def parser_for_repo(repo: str) -> str:
    """The parser a SWE-bench repository's test runner needs (pytest unless listed)."""
    return REPO_PARSERS.get(repo, DEFAULT_PARSER)


def get_parser(name: str) -> LogParser:
    try:
        return PARSERS[name]
    except KeyError:
        raise UnknownParser(f"no log parser named {name!r}; known: {sorted(PARSERS)}") from None


def parse_log(name: str, log: str) -> StatusMap:
    """Per-test statuses of `log` read by the parser registered as `name`."""
    return get_parser(name)(log)


__all__ = [
    "DEFAULT_PARSER",
    "PARSERS",
    "REPO_PARSERS",
    "LogParser",
    "StatusMap",
    "UnknownParser",
    "get_parser",
    "parse_log",
    "parser_for_repo",
]
