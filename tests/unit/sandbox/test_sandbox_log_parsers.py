"""Log parsers on real-looking runner output, table-driven; and the forged-result rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.sandbox.domain.log_parsers import (
    PARSERS,
    UnknownParser,
    get_parser,
    parse_log,
)
from hackaudit.sandbox.domain.log_parsers.django import parse_django
from hackaudit.sandbox.domain.log_parsers.pytest import parse_pytest
from hackaudit.sandbox.domain.log_parsers.sympy import parse_sympy
from hackaudit.sandbox.domain.log_parsers.unittest import parse_unittest
from hackaudit.shared.contracts import TestStatus
from hackaudit.shared.runners import runner_for_repo

P, F, E, S, X = (
    TestStatus.PASSED,
    TestStatus.FAILED,
    TestStatus.ERROR,
    TestStatus.SKIPPED,
    TestStatus.XFAIL,
)
SYMPY_LOGS = Path("/work/shared/data/logs/sympy-bin-test")

PYTEST_RUN = """\
============================= test session starts ==============================
platform linux -- Python 3.11.2, pytest-9.2.0, pluggy-1.7.0
rootdir: /testbed
collected 6 items

tests/test_ops.py F.sxX.                                                 [100%]

=================================== FAILURES ===================================
__________________________________ test_add ____________________________________
    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5
tests/test_ops.py:4: AssertionError
==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED tests/test_ops.py::test_mul
PASSED tests/test_ops.py::TestOps::test_div[1-2]
SKIPPED [1] tests/test_ops.py:12: not on this platform
XFAIL tests/test_ops.py::test_known_bug - reason: bug 12
XPASS tests/test_ops.py::test_lucky
FAILED tests/test_ops.py::test_add - assert -1 == 5
ERROR tests/test_ops.py::test_fixture - RuntimeError: boom
=================== 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.12s ===
"""

PYTEST_CASES = [
    pytest.param(
        PYTEST_RUN,
        {
            "tests/test_ops.py::test_mul": P,
            "tests/test_ops.py::TestOps::test_div[1-2]": P,
            "tests/test_ops.py::test_known_bug": X,
            "tests/test_ops.py::test_add": F,
            "tests/test_ops.py::test_fixture": E,
        },
        id="summary-every-status",
    ),
    pytest.param(
        "PASSED tests/test_a.py::test_x\n",
        {},
        id="a-result-line-outside-a-summary-is-ignored",
    ),
    pytest.param(
        "\x1b[32m=== short test summary info ===\x1b[0m\n"
        "\x1b[32mPASSED\x1b[0m t.py::test_x\n=== 1 passed ===\n",
        {"t.py::test_x": P},
        id="colour-codes",
    ),
    pytest.param(
        "=== short test summary info ===\nPASSED t.py::test_p[a b]\n=== 1 passed in 0.1s ===\n",
        {"t.py::test_p[a": P},
        id="id-cut-at-space-like-the-harness",
    ),
    pytest.param(
        "=== short test summary info ===\n"
        "FAILED t.py::test_f[/tmp/x/data.csv] - boom\n=== 1 failed ===\n",
        {"t.py::test_f[/tmp/x/data.csv]": F, "t.py::test_f[/data.csv]": F},
        id="path-parameter-alias",
    ),
    pytest.param(
        "=== short test summary info ===\n"
        "PASSED t.py::test_c[MouseButton.LEFT]\n=== 1 passed ===\n",
        {"t.py::test_c[MouseButton.LEFT]": P, "t.py::test_c[1]": P},
        id="mouse-button-alias",
    ),
    pytest.param(
        # A pytester session shown in captured output, then the real summary.
        "=== short test summary info ===\nPASSED test_inner.py::test_x\n=== 1 passed ===\n"
        "=== short test summary info ===\nPASSED t.py::test_outer\n=== 1 passed ===\n",
        {"t.py::test_outer": P},
        id="only-the-last-block-lists-tests",
    ),
    pytest.param(
        # A forged block printed before pytest's own does not improve the real result.
        "=== short test summary info ===\nPASSED t.py::test_x\n=== 1 passed ===\n"
        "=== short test summary info ===\nFAILED t.py::test_x - assert 0\n=== 1 failed ===\n",
        {"t.py::test_x": F},
        id="forged-earlier-block",
    ),
    pytest.param(
        # A forged block printed after pytest's own cannot hide a failure pytest reported.
        "=== short test summary info ===\nFAILED t.py::test_x - assert 0\n=== 1 failed ===\n"
        "=== short test summary info ===\nPASSED t.py::test_x\n=== 1 passed ===\n",
        {"t.py::test_x": F},
        id="forged-later-block",
    ),
    pytest.param(
        "=== short test summary info ===\nPASSED t.py::test_x\n"
        "ERROR t.py::test_x - teardown\n=== 1 passed, 1 error ===\n",
        {"t.py::test_x": E},
        id="teardown-error-wins",
    ),
    pytest.param("collected 0 items\n\n=== no tests ran in 0.01s ===\n", {}, id="no-summary"),
]


@pytest.mark.parametrize(("log", "expected"), PYTEST_CASES)
def test_pytest_parser(log: str, expected: dict[str, TestStatus]) -> None:
    assert parse_pytest(log) == expected


UNITTEST_RUN = """\
test_add (tests.test_ops.OpsTest.test_add) ... FAIL
test_mul (tests.test_ops.OpsTest.test_mul) ... ok
test_skip (tests.test_ops.OpsTest.test_skip) ... skipped 'not today'
test_xfail (tests.test_ops.OpsTest.test_xfail) ... expected failure
test_xpass (tests.test_ops.OpsTest.test_xpass) ... unexpected success
test_noisy (tests.test_ops.OpsTest.test_noisy) ... some printed output
ok
Adds two numbers the documented way. ... ok
test_err (tests.test_ops.OpsTest.test_err) ... ERROR

======================================================================
FAIL: test_add (tests.test_ops.OpsTest.test_add)
----------------------------------------------------------------------
Traceback (most recent call last):
AssertionError: -1 != 5

----------------------------------------------------------------------
Ran 8 tests in 0.002s

FAILED (failures=1, errors=1, skipped=1, expected failures=1, unexpected successes=1)
"""

UNITTEST_CASES = [
    pytest.param(
        UNITTEST_RUN,
        {
            "test_add (tests.test_ops.OpsTest.test_add)": F,
            "test_mul (tests.test_ops.OpsTest.test_mul)": P,
            "test_skip (tests.test_ops.OpsTest.test_skip)": S,
            "test_xfail (tests.test_ops.OpsTest.test_xfail)": X,
            "test_xpass (tests.test_ops.OpsTest.test_xpass)": F,
            "test_noisy (tests.test_ops.OpsTest.test_noisy)": P,
            "Adds two numbers the documented way.": P,
            "test_err (tests.test_ops.OpsTest.test_err)": E,
        },
        id="python-3.11-verbose",
    ),
    pytest.param(
        # A printed `... ok` for a test the runner reports failed in its FAIL: block.
        "test_add (m.T) ... ok\ntest_add (m.T) ... FAIL\nFAIL: test_add (m.T)\n",
        {"test_add (m.T)": F},
        id="printed-ok-does-not-hide-fail",
    ),
]


@pytest.mark.parametrize(("log", "expected"), UNITTEST_CASES)
def test_unittest_parser(log: str, expected: dict[str, TestStatus]) -> None:
    assert parse_unittest(log) == expected


DJANGO_RUN = """\
Testing against Django installed in '/testbed/django' with up to 1 processes
Importing application admin_scripts
Found 4 test(s).
Creating test database for alias 'default' ('file:memorydb_default?mode=memory&cache=shared')...
Operations to perform:
  Apply all migrations: admin, sites
Running migrations:
  Applying sites.0001_initial... OK
System check identified no issues (0 silenced).
test_version (admin_scripts.tests.CommandTypes.test_version) ... ok
test_help (admin_scripts.tests.CommandTypes.test_help)
--help is handled as a special case ... ok
test_migrate (admin_scripts.tests.ManageRunserver.test_migrate) ... System check identified \
no issues (0 silenced).
ok
test_color (admin_scripts.tests.ColorCommand.test_color) ... FAIL
test_skipped (admin_scripts.tests.Other.test_skipped) ... skipped 'Needs a database'
test_upper (admin_scripts.tests.Other.test_upper) ...  OK

======================================================================
FAIL: test_color (admin_scripts.tests.ColorCommand.test_color)
----------------------------------------------------------------------
AssertionError: False is not true

----------------------------------------------------------------------
Ran 6 tests in 0.301s

FAILED (failures=1, skipped=1)
Destroying test database for alias 'default'...
"""


def test_django_parser_reads_runtests_verbosity_2() -> None:
    assert parse_django(DJANGO_RUN) == {
        "test_version (admin_scripts.tests.CommandTypes.test_version)": P,
        "--help is handled as a special case": P,
        "test_migrate (admin_scripts.tests.ManageRunserver.test_migrate)": P,
        "test_color (admin_scripts.tests.ColorCommand.test_color)": F,
        "test_skipped (admin_scripts.tests.Other.test_skipped)": S,
        "test_upper (admin_scripts.tests.Other.test_upper)": P,
    }


SYMPY_CASES = [
    pytest.param(
        "all-pass-xfail-ok-marker.log",
        {
            "test_issue_7263": P,
            "test_factorial_simplify": X,
            "test_simplify_float_vs_integer": X,
            "test_nc_simplify": P,  # the line carrying `[OK]`
        },
        44,
        id="xfail-and-ok-marker",
    ),
    pytest.param(
        "one-failed.log",
        {
            "test_monomials": F,
            "test_Monomial": P,  # the line carrying `[FAIL]`
            "sympy/polys/tests/test_monomials.py:test_monomials": F,
        },
        12,
        id="one-failed",
    ),
    pytest.param(
        "one-exception.log",
        {
            "test_issue_24211": E,
            "test_factor_and_dimension_with_Abs": X,
            "test_physics_constant": P,
        },
        35,
        id="one-exception",
    ),
    pytest.param(
        "three-failed-with-tracebacks.log",
        {"test_python_relational": F, "test_python_functions_conjugates": X, "test_settings": P},
        None,
        id="three-failed",
    ),
]


@pytest.mark.skipif(not SYMPY_LOGS.is_dir(), reason="the shared sympy logs are not here")
@pytest.mark.parametrize(("name", "expected", "count"), SYMPY_CASES)
def test_sympy_parser_on_real_logs(
    name: str, expected: dict[str, TestStatus], count: int | None
) -> None:
    statuses = parse_sympy((SYMPY_LOGS / name).read_text())

    assert {test: statuses.get(test) for test in expected} == expected
    if count is not None:
        assert len(statuses) == count


def test_sympy_parser_ignores_the_timing_section() -> None:
    log = "test_a ok\n___ slowest tests ___\ntest_a - Took 12.019 seconds\n"
    assert parse_sympy(log) == {"test_a": P}


@pytest.mark.parametrize(
    ("repo", "parser"),
    [
        ("django/django", "django"),
        ("sympy/sympy", "sympy"),
        ("astropy/astropy", "pytest"),
        ("psf/requests", "pytest"),
        ("someone/else", "pytest"),
    ],
)
def test_repository_parser_mapping(repo: str, parser: str) -> None:
    assert runner_for_repo(repo).value == parser
    assert parser in PARSERS


def test_registry_names_every_parser() -> None:
    assert set(PARSERS) == {"pytest", "unittest", "django", "sympy"}
    assert parse_log("sympy", "test_a ok\n") == {"test_a": P}
    with pytest.raises(UnknownParser):
        get_parser("nose")
