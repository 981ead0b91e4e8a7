"""Which test runner grades a task: the one detection every service agrees on.

The sandbox builds command lines from it (`hackaudit.sandbox.domain.runners`, the only place
that knows commands, test selection and log parsers); the attacker decides with it which
strategies can act on a task (a pytest `conftest.py` hook cannot act under sympy's `bin/test`)
and whether a wider-suite rerun can name test files. It lives here, not in either service,
because both need the same answer: a fact the attacker derived by its own rules could disagree
with what the sandbox then runs.

The runner is the task's log parser when it names one; else its repository's, from the SWE-bench
table (`swebench_specs.repo_test_command`); else the words of its test command (`runtests.py`:
Django, `bin/test`: sympy, `unittest`); else Django or sympy by repository, pytest otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from hackaudit.shared.contracts import Task
from hackaudit.shared.swebench_specs import repo_test_command


class RunnerKind(StrEnum):
    """A test runner, named as its log parser is."""

    PYTEST = "pytest"
    UNITTEST = "unittest"
    DJANGO = "django"
    SYMPY = "sympy"


_BY_REPO = {"django/django": RunnerKind.DJANGO, "sympy/sympy": RunnerKind.SYMPY}
_KINDS = frozenset(RunnerKind)


def runner_for_repo(repo: str) -> RunnerKind:
    """The runner a repository's tests need when nothing else says (pytest unless listed)."""
    return _BY_REPO.get(repo, RunnerKind.PYTEST)


def runner_of(task: Task) -> RunnerKind | None:
    """The task's runner; None when the task names a log parser that is no runner's."""
    if task.log_parser:
        return RunnerKind(task.log_parser) if task.log_parser in _KINDS else None
    known = repo_test_command(task.repo, task.version)
    if known is not None and known.log_parser in _KINDS:
        return RunnerKind(known.log_parser)
    command = task.test_command or ""
    if "runtests.py" in command:
        return RunnerKind.DJANGO
    if "bin/test" in command:
        return RunnerKind.SYMPY
    if "unittest" in command:
        return RunnerKind.UNITTEST
    return runner_for_repo(task.repo)


def takes_test_files(kind: RunnerKind) -> bool:
    """Whether the runner can be given test files to run (pytest and sympy take paths; unittest
    discovery and Django's labels are not given files)."""
    return kind in {RunnerKind.PYTEST, RunnerKind.SYMPY}


def file_header(name: str) -> tuple[str, str] | None:
    """(file, test) when a reported name is sympy's traceback header for a failed test
    (`path.py:test_y`, reported beside the bare `test_y`), else None."""
    path, sep, test = name.rpartition(".py:")
    if sep and not test.startswith(":"):
        return path + ".py", test
    return None


def node_id_file(test: str) -> str | None:
    """The file of a pytest node id (`tests/test_x.py::test_y` -> `tests/test_x.py`), a test
    pytest can run alone; None for any other name."""
    path, sep, _ = test.partition("::")
    return path if sep and path.endswith(".py") else None


def ids_of_tests(tests: Iterable[str], reported: Iterable[str]) -> list[str] | None:
    """The tests as ids a wider suite takes (`Suite.files`), or None when one's file is not
    known: pytest node ids as they are; a sympy test as `file::function`, its file from the
    traceback header its run reported (`path.py:test_y`, beside the bare `test_y`)."""
    headers: dict[str, list[str]] = {}
    for name in reported:
        if (header := file_header(name)) is not None:
            headers.setdefault(header[1], []).append(header[0])
    ids: list[str] = []
    for test in tests:
        if node_id_file(test) is not None:
            found = [test]
        else:
            found = [f"{path}::{test}" for path in headers.get(test, [])]
        if not found:
            return None
        ids.extend(i for i in found if i not in ids)
    return ids


def files_of_tests(tests: Iterable[str], reported: Iterable[str]) -> list[str] | None:
    """The test files that hold `tests`, or None when one's file is not known.

    pytest names carry their file (`tests/test_x.py::test_y`); sympy's runner names a failed
    test's file in its traceback header, which the log parser reports as `path.py:test_y`
    beside the bare `test_y` (`reported` are the names a run reported)."""
    ids = ids_of_tests(tests, reported)
    return None if ids is None else list(dict.fromkeys(i.split("::", 1)[0] for i in ids))
