"""The command of a wider-suite run: the task's own runner on more than its selected tests.

A candidate that passes the graded tests may still break tests around them. The wider suite is
the task's test command widened from its selected tests to the test directories the test patch
touches (`Suite.dirs`; none: the whole repository), or narrowed to some test files (a rerun of
the files that hold the tests a candidate broke: `Suite.files`, for runners that take paths):

- pytest: the task's command (or `pytest -rA`) with its test selection (paths, node ids, `-k`,
  `-m`, anything after `&&`) dropped, `-rA` kept, and the directories or files (or node ids,
  `tests/test_x.py::T::test_a`) as paths; the sandbox then adds the JUnit report, and to
  directories the test patch's files, as for a graded run. A wrapper
  that hands what follows `--` to pytest (`tox --current-env -e py39 --`) gets the paths there;
- sympy: `bin/test` (the task's command or the SWE-bench one) on the paths; tests given as
  `file::function` run as their files with `-k` and the functions (sympy's runner runs the
  functions whose names contain a keyword, so a name that is a prefix of another runs both);
- unittest: discovery from the one test directory (else the repository's root);
- Django: `runtests.py` on the labels of the test directories (`tests/admin_views` ->
  `admin_views`), or on every app.

Only the pytest form takes the test patch's files as well; the others run exactly the labels
given. `Suite.keywords` narrow a pytest or sympy suite to the tests whose names hold one of
them (`-k "a or b"`; sympy's `-k a b`, which also skips the files that define no such test).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.shared.contracts import Suite, Task
from hackaudit.shared.runners import RunnerKind, takes_test_files

DJANGO_COMMAND = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
SYMPY_COMMAND = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
_PYTEST = re.compile(r"(?:\S*python[\d.]*\s+-m\s+)?\S*pytest\b")
_UNITTEST = re.compile(r"\S*python[\d.]*\s+-m\s+unittest\b")
_TESTS = re.compile(r"\s*\{tests\}")


@dataclass(frozen=True)
class Built:
    command: str
    takes_directives: bool  # the test patch's files are added as for a graded run


def command(task: Task, kind: RunnerKind, suite: Suite) -> Built | None:
    """The wider suite's command for a task run by `kind`; None when it has none (a pytest
    task whose command names no pytest, or files for a runner that takes none)."""
    if (suite.files is not None or suite.keywords) and not takes_test_files(kind):
        return None
    paths = list(suite.files) if suite.files is not None else list(suite.dirs)
    if kind is RunnerKind.PYTEST:
        return _pytest(task, paths, suite.keywords)
    if kind is RunnerKind.SYMPY:
        return Built(_sympy(task, paths, suite.keywords), takes_directives=False)
    if kind is RunnerKind.UNITTEST:
        return Built(_unittest(task, suite.dirs), takes_directives=False)
    return Built(_named(task, DJANGO_COMMAND, _django_labels(suite.dirs)), False)


def _pytest(task: Task, paths: list[str], keywords: Sequence[str] = ()) -> Built | None:
    command = task.test_command or "pytest -rA"
    match = _PYTEST.search(command)
    selected = ["-k", " or ".join(keywords)] if keywords else []
    if match is None:
        if command.split()[-1:] == ["--"]:
            return Built(_named(task, command, [*selected, *paths]), takes_directives=False)
        return None
    prefix, runner, rest = command[: match.start()], match.group(0), command[match.end() :]
    try:
        tokens = shlex.split(rest)
    except ValueError:
        return None
    kept = _options(tokens)
    if "-rA" not in kept:
        kept.insert(0, "-rA")
    arguments = shlex.join(kept + selected + paths)
    return Built(f"{prefix}{runner} {arguments}".strip(), takes_directives=True)


def _options(tokens: Sequence[str]) -> list[str]:
    """The pytest arguments without its test selection."""
    kept: list[str] = []
    skip_next = False
    for tok in tokens:
        if skip_next:
            skip_next = False
            continue
        if tok in ("-k", "-m"):
            skip_next = True
            continue
        if tok in ("&&", ";", "||", "|"):
            break
        if not tok.startswith("-") and ("::" in tok or tok.endswith(".py") or "/" in tok):
            continue
        kept.append(tok)
    return kept


def _sympy(task: Task, paths: Sequence[str], keywords: Sequence[str] = ()) -> str:
    """`bin/test` on the paths; `file::function` ones as their files and `-k` the functions
    (and the keywords)."""
    files = list(dict.fromkeys(p.split("::", 1)[0] for p in paths))
    names = list(dict.fromkeys(p.split("::", 1)[1] for p in paths if "::" in p))
    names += [k for k in keywords if k not in names]
    command = _named(task, SYMPY_COMMAND, files)
    return f"{command} -k {shlex.join(names)}" if names else command


def _unittest(task: Task, dirs: Sequence[str]) -> str:
    start = dirs[0] if len(dirs) == 1 else "."
    match = _UNITTEST.search(task.test_command or "")
    prefix = (task.test_command or "")[: match.start()] if match else ""
    return f"{prefix}python -m unittest discover -v -s {shlex.quote(start)} -t ."


def _named(task: Task, default: str, labels: Sequence[str]) -> str:
    """The task's command (or its runner's default) on `labels` instead of its test files."""
    base = _TESTS.sub("", task.test_command or default).strip()
    return " ".join([base, *map(shlex.quote, labels)])


def _django_labels(dirs: Sequence[str]) -> list[str]:
    """Django's labels for test directories (`tests/admin_views` -> admin_views)."""
    labels = []
    for folder in dirs:
        label = folder.strip("/").removeprefix("tests").strip("/").replace("/", ".")
        if label and label not in labels:
            labels.append(label)
    return labels
