"""The one runner detection the sandbox's commands and the attacker's decisions share."""

from __future__ import annotations

from typing import Any

import pytest

from hackaudit.shared.contracts import Task
from hackaudit.shared.runners import (
    RunnerKind,
    files_of_tests,
    ids_of_tests,
    runner_of,
    takes_test_files,
)
from hackaudit.shared.swebench_specs import repo_test_command


def _task(**fields: Any) -> Task:
    base: dict[str, Any] = {
        "instance_id": "i-1",
        "repo": "example/x",
        "base_commit": "abc",
        "patch": "",
        "test_patch": "",
        "FAIL_TO_PASS": ["t"],
    }
    return Task(**(base | fields))


@pytest.mark.parametrize(
    ("command", "parser", "repo", "expected"),
    [
        ("python -m pytest -q", None, "example/x", RunnerKind.PYTEST),
        (None, None, "example/x", RunnerKind.PYTEST),
        ("python -m unittest -v", None, "example/x", RunnerKind.UNITTEST),
        (None, None, "sympy/sympy", RunnerKind.SYMPY),
        ("bin/test -C", None, "example/x", RunnerKind.SYMPY),
        (None, None, "django/django", RunnerKind.DJANGO),
        ("./tests/runtests.py", None, "example/x", RunnerKind.DJANGO),
        ("anything", "sympy", "example/x", RunnerKind.SYMPY),
        ("python -m unittest -v", "pytest", "example/x", RunnerKind.PYTEST),
        # the repository's SWE-bench command says before the task's command does
        ("python -m unittest -v", None, "sympy/sympy", RunnerKind.SYMPY),
        ("anything", "junit", "example/x", None),
    ],
)
def test_runner_of_a_task(
    command: str | None, parser: str | None, repo: str, expected: RunnerKind | None
) -> None:
    assert runner_of(_task(test_command=command, log_parser=parser, repo=repo)) is expected


def test_pytest_and_sympy_take_test_files() -> None:
    assert {k for k in RunnerKind if takes_test_files(k)} == {RunnerKind.PYTEST, RunnerKind.SYMPY}


# sympy's runner reports `test_sympify2 F`, and its traceback header names the file
SYMPY_REPORTED = [
    "test_sympify2",
    "sympy/core/tests/test_sympify.py:test_sympify2",
    "test_issue_1",
    "sympy/core/tests/test_expr.py:test_issue_1",
    "sympy/core/tests/test_basic.py:test_issue_1",
]


def test_the_files_of_failed_tests_come_from_their_names_or_the_runners_headers() -> None:
    pytest_names = ["tests/test_a.py::test_x", "tests/test_a.py::T::test_y[1]", "t/test_b.py::z"]
    assert files_of_tests(pytest_names, []) == ["tests/test_a.py", "t/test_b.py"]
    assert files_of_tests(["test_sympify2", "test_issue_1"], SYMPY_REPORTED) == [
        "sympy/core/tests/test_sympify.py",
        "sympy/core/tests/test_expr.py",
        "sympy/core/tests/test_basic.py",
    ]
    # a failure reported without its file, or a unittest name: no file is known
    assert files_of_tests(["test_sympify2", "test_gone"], SYMPY_REPORTED) is None
    assert files_of_tests(["test_x (tests.test_a.T)"], []) is None


def test_failed_tests_are_given_back_as_ids_a_wider_suite_runs_one_by_one() -> None:
    assert ids_of_tests(["tests/test_a.py::T::test_y[1]"], []) == ["tests/test_a.py::T::test_y[1]"]
    assert ids_of_tests(["test_sympify2", "test_issue_1"], SYMPY_REPORTED) == [
        "sympy/core/tests/test_sympify.py::test_sympify2",
        "sympy/core/tests/test_expr.py::test_issue_1",
        "sympy/core/tests/test_basic.py::test_issue_1",
    ]
    assert ids_of_tests(["test_sympify2", "test_gone"], SYMPY_REPORTED) is None


DJANGO = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
UTF8 = {"LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en"}


@pytest.mark.parametrize(
    ("repo", "version", "command", "exports"),
    [
        ("django/django", "2.2", DJANGO, {*UTF8, "PYTHONIOENCODING=utf8"}),
        ("django/django", "3.1", DJANGO, UTF8),
        ("django/django", "4.2", DJANGO, set()),
        ("django/django", "1.9", DJANGO, set()),  # a version the table lacks: the shared command
        ("django/django", None, DJANGO, set()),
        ("astropy/astropy", "1.3", "pytest -rA -vv -o console_output_style=classic --tb=no", set()),
        ("astropy/astropy", "9.9", None, set()),  # its versions differ: nothing shared
        ("sphinx-doc/sphinx", "9.9", "tox --current-env -epy39 -v --", set()),
        ("example/x", "1.0", None, set()),
    ],
)
def test_a_repositorys_test_command_comes_from_the_spec_table(
    repo: str, version: str | None, command: str | None, exports: set[str]
) -> None:
    known = repo_test_command(repo, version)
    assert (known.command if known else None) == command
    assert set(known.exports if known else ()) == exports
