"""Django's `tests/runtests.py --verbosity 2`: unittest's verbose format, with Django's quirks.

Django prints its tests the way unittest does (`test_a (app.tests.Case) ... ok`, then
`FAIL: ...` blocks), so this parser is unittest's with two additions: a result written in
upper case (`... OK`, as some management-command tests print it) counts as a pass, and a system
check or migration message printed between a test's name and its result (`test_a ... System check
identified no issues (0 silenced).` then `ok` on the next line) leaves the test pending until its
result arrives.
"""

from __future__ import annotations

from hackaudit.sandbox.domain.log_parsers.statuses import StatusMap
from hackaudit.sandbox.domain.log_parsers.unittest import parse_verbose_unittest


def parse_django(log: str) -> StatusMap:
    """Per-test statuses from Django's own test runner at verbosity 2."""
    return parse_verbose_unittest(log)
