"""Test commands and directives per runner; grading under both skip policies; timeouts."""

from __future__ import annotations

import pytest

from hackaudit.sandbox.domain.grading import GradingPolicy, grade
from hackaudit.sandbox.domain.log_parsers import UnknownParser
from hackaudit.sandbox.domain.runners import directives_for, patch_files, resolve_invocation
from hackaudit.sandbox.domain.timeouts import TimeoutPolicy
from hackaudit.shared.contracts import Task, TestStatus
from hackaudit.shared.runners import RunnerKind

P, F, E, S, X = (
    TestStatus.PASSED,
    TestStatus.FAILED,
    TestStatus.ERROR,
    TestStatus.SKIPPED,
    TestStatus.XFAIL,
)


def _patch(*paths: str) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in paths
    )


def _task(repo: str = "o/r", version: str | None = None, **extra: object) -> Task:
    return Task.model_validate(
        {
            "instance_id": "o__r-1",
            "repo": repo,
            "version": version,
            "base_commit": "abc",
            "patch": "",
            "test_patch": _patch("tests/admin/test_views.py", "tests/data/fixture.json"),
            "FAIL_TO_PASS": ["t"],
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (RunnerKind.PYTEST, ["tests/admin/test_views.py"]),
        (RunnerKind.SYMPY, ["tests/admin/test_views.py"]),
        (RunnerKind.UNITTEST, ["tests.admin.test_views"]),
        (RunnerKind.DJANGO, ["admin.test_views"]),
    ],
)
def test_directives_per_runner(kind: RunnerKind, expected: list[str]) -> None:
    paths = patch_files(_patch("tests/admin/test_views.py", "tests/data/fixture.json", "docs/a.md"))
    assert directives_for(paths, kind) == expected


@pytest.mark.parametrize(
    ("task", "command", "parser"),
    [
        (
            _task("django/django", "3.2"),
            "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 "
            "admin.test_views",
            "django",
        ),
        (
            _task("sympy/sympy", "1.12"),
            "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose "
            "tests/admin/test_views.py",
            "sympy",
        ),
        (
            _task("astropy/astropy", "1.3"),
            "pytest -rA -vv -o console_output_style=classic --tb=no --junitxml=/r.xml "
            "tests/admin/test_views.py",
            "pytest",
        ),
        (
            _task("sphinx-doc/sphinx", "7.1"),
            "tox --current-env -epy39 -v -- -rA --junitxml=/r.xml tests/admin/test_views.py",
            "pytest",
        ),
        (
            _task("psf/requests", "2.0"),
            "pytest -rA --junitxml=/r.xml tests/admin/test_views.py",
            "pytest",
        ),
        (
            _task(test_command="python -m unittest -v"),
            "python -m unittest -v tests.admin.test_views",
            "unittest",
        ),
        (
            _task(test_command="pytest -x {tests} -p no:cacheprovider"),
            "pytest -x tests/admin/test_views.py -p no:cacheprovider -rA --junitxml=/r.xml",
            "pytest",
        ),
        (_task(test_command="make check"), "make check tests/admin/test_views.py", "pytest"),
    ],
    ids=[
        "django",
        "sympy",
        "astropy-1.3",
        "sphinx-tox",
        "requests",
        "unittest",
        "placeholder",
        "other",
    ],
)
def test_invocation(task: Task, command: str, parser: str) -> None:
    invocation = resolve_invocation(task, task.test_patch, "/r.xml")

    assert invocation.command == command
    assert invocation.parser == parser


def test_django_exports_and_conda_activation() -> None:
    shell = resolve_invocation(_task("django/django", "2.2"), "", None).shell()

    assert "export LANG=en_US.UTF-8" in shell
    assert "export PYTHONIOENCODING=utf8" in shell
    assert shell.startswith("if [ -f /opt/miniconda3/bin/activate ]")
    assert "conda activate testbed" in shell
    assert "cd /testbed" in shell


def test_unknown_parser_is_refused() -> None:
    with pytest.raises(UnknownParser):
        resolve_invocation(_task(log_parser="nose"), "", None)


F2P = ["f1", "f2"]
P2P = ["p1"]
GRADES = [
    ({"f1": P, "f2": P, "p1": P}, True, True),
    ({"f1": P, "f2": X, "p1": X}, True, True),
    ({"f1": P, "f2": F, "p1": P}, False, False),
    ({"f1": P, "f2": E, "p1": P}, False, False),
    ({"f1": P, "p1": P}, False, False),  # a test the log does not report failed
    ({"f1": P, "f2": P, "p1": F}, False, False),
    ({"f1": S, "f2": S, "p1": P}, True, False),  # every F2P skipped: the v4 hole
    ({"f1": P, "f2": P, "p1": S}, True, True),
]


@pytest.mark.parametrize(("statuses", "v4", "strict"), GRADES)
def test_grading(statuses: dict[str, TestStatus], v4: bool, strict: bool) -> None:
    assert grade(statuses, F2P, P2P, GradingPolicy.SWEBENCH).resolved is v4
    assert grade(statuses, F2P, P2P, GradingPolicy.SWEBENCH_STRICT_SKIP).resolved is strict


def test_grade_summary_counts() -> None:
    verdict = grade({"f1": P, "f2": F, "p1": S}, F2P, P2P)
    assert verdict.summary() == "FAIL_TO_PASS 1/2, PASS_TO_PASS 0/0, 1 skipped and not counted"


@pytest.mark.parametrize(
    ("gold", "requested", "expected"),
    [
        (None, None, 600.0),
        (1.0, None, 30.0),
        (100.0, None, 300.0),
        (1000.0, None, 600.0),
        (100.0, 7.0, 7.0),
    ],
)
def test_timeout_sizing(gold: float | None, requested: float | None, expected: float) -> None:
    policy = TimeoutPolicy(factor=3.0, floor_s=30.0, cap_s=600.0)
    assert policy.size(gold, requested) == expected
