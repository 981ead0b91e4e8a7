"""Works out the exact command a run executes: the one place that knows runners, command lines,
test selection and log parsers (`command_for`, from a request's typed invocation).

Which runner a task uses is `hackaudit.shared.runners.runner_of` (the attacker decides with the
same answer). Repository defaults come from one table, the shared SWE-bench specification table
(`hackaudit.shared.swebench_specs.repo_test_command`); runner defaults are `DEFAULT_COMMANDS`.

A graded run (`Grade`) runs the task's `test_command`, else its repository's SWE-bench command,
else the default of its runner; the test patch's test files are appended as directives, in the
form the runner takes them:

- pytest and sympy: paths (`tests/test_x.py`);
- unittest: dotted modules without `.py` (`tests.test_x`);
- Django: dotted modules relative to `tests/` (`tests/admin/test_x.py` → `admin.test_x`).

As in the SWE-bench harness, files with a data extension (`.json`, `.txt`, `.toml`...) are not
directives. A command holding `{tests}` gets the directives there instead of at its end. For
pytest the command also gets `-rA` (when it asks for no report) so that every test appears in the
summary the parser reads, and a `--junitxml` report used to corroborate it.

Images built by the SWE-bench harness (`sweb.eval.*`) keep their Python in a conda environment
named `testbed`; when `/opt/miniconda3/bin/activate` exists in the image it is activated before
the command, as the harness's own evaluation script does.

A probe or a capture (`Probe`, `Capture`) runs its added module alone (`added_modules`), the
wider suite (`Suite`) the task's runner on directories or files (`wider_suite`). A coverage run
(`Coverage`) runs the graded command, on given tests (files converted as above, ids as they are)
or the graded ones, or a wider suite's command, behind the lines that start coverage.py
(`coverage_run`).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from dataclasses import dataclass

from hackaudit.sandbox.domain import added_modules, coverage_run, wider_suite
from hackaudit.sandbox.domain.log_parsers import UnknownParser, get_parser
from hackaudit.shared.anatomy import Patch, read_patch
from hackaudit.shared.contracts import Capture, Coverage, Grade, Invocation, Probe, Suite, Task
from hackaudit.shared.runners import RunnerKind, runner_of
from hackaudit.shared.swebench_specs import repo_test_command

NON_TEST_SUFFIXES: tuple[str, ...] = (
    *(".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl"),
    *(".yml", ".yaml", ".toml"),
)
REPOSITORY = "/testbed"
CONDA_ACTIVATE = "/opt/miniconda3/bin/activate"
CONDA_ENV = "testbed"
TESTS_PLACEHOLDER = "{tests}"

DEFAULT_COMMANDS: dict[RunnerKind, str] = {
    RunnerKind.PYTEST: "pytest -rA",
    RunnerKind.UNITTEST: "python -m unittest -v",
    RunnerKind.DJANGO: wider_suite.DJANGO_COMMAND,
    RunnerKind.SYMPY: "bin/test -C --verbose",
}
_PLACEHOLDER = re.compile(r"\s*'?\{tests\}'?")
_PYTEST_WORD = re.compile(r"(^|[\s/])(py\.test|pytest)(\s|$)")
_REPORT_FLAG = re.compile(r"(^|\s)-r\S*")


@dataclass(frozen=True)
class RunnerInvocation:
    """What runs the tests: the runner, its log parser, and the shell text that starts it."""

    kind: RunnerKind
    parser: str
    command: str
    directives: tuple[str, ...]
    exports: tuple[str, ...] = ()
    junit_path: str | None = None
    # Shell lines run after the environment and before the command (a coverage run's set-up).
    prelude: tuple[str, ...] = ()
    # Are the log's results checked against the runner's final summary (`log_parsers.summaries`)?
    # Not for an added module's run: its results are observations, compared with gold's.
    checks_summary: bool = True

    def preamble(self) -> list[str]:
        """The environment and working directory the command runs in."""
        lines = [
            f"if [ -f {CONDA_ACTIVATE} ]; then "
            f". {CONDA_ACTIVATE} && conda activate {CONDA_ENV}; fi",
            f"cd {REPOSITORY} || exit 125",
        ]
        return lines + [f"export {shlex.quote(e)}" for e in self.exports]

    def shell(self) -> str:
        """The bash script the wrapper runs: environment, working directory, command."""
        return "\n".join([*self.preamble(), *self.prelude, self.command]) + "\n"


def patch_files(test_patch: str | Patch) -> list[str]:
    """The files a test patch touches (their new paths), in order."""
    parsed = read_patch(test_patch) if isinstance(test_patch, str) else test_patch
    paths: list[str] = []
    for change in parsed.files:
        path = change.header_paths[-1] if change.header_paths else change.path
        if path and path not in paths:
            paths.append(path)
    return paths


def directives_for(paths: list[str], kind: RunnerKind) -> list[str]:
    """The runner arguments naming these test files."""
    out = []
    for path in paths:
        if any(path.endswith(suffix) for suffix in NON_TEST_SUFFIXES):
            continue
        if kind in {RunnerKind.DJANGO, RunnerKind.UNITTEST}:
            path = path.removesuffix(".py")
            if kind is RunnerKind.DJANGO:
                path = path.removeprefix("tests/")
            path = path.replace("/", ".")
        out.append(path)
    return out


def runner_kind(task: Task) -> RunnerKind:
    """The runner a task uses (`runner_of`); raises UnknownParser when it names no known parser."""
    if task.log_parser:
        get_parser(task.log_parser)
    kind = runner_of(task)
    if kind is None:
        raise UnknownParser(task.log_parser)
    return kind


def is_pytest_command(command: str) -> bool:
    words = command.split()
    return bool(_PYTEST_WORD.search(command)) or ("tox" in words and words[-1:] == ["--"])


class NoCommand(Exception):
    """The invocation cannot be run on this task (e.g. no wider suite for its runner)."""


def command_for(
    task: Task, invocation: Invocation, test_patch: str, junit_path: str | None
) -> RunnerInvocation:
    """What runs for `invocation` on `task` with `test_patch`: command, parser, environment.

    Raises UnknownParser when a grade or suite run names a parser that does not exist, and
    NoCommand when a suite cannot be run by the task's runner.
    """
    if isinstance(invocation, Probe | Capture):
        return _added_module(task, invocation)
    if isinstance(invocation, Suite):
        return _suite(task, invocation, test_patch, junit_path)
    if isinstance(invocation, Coverage):
        return _coverage(task, invocation, test_patch)
    assert isinstance(invocation, Grade)
    return resolve_invocation(task, test_patch, junit_path)


def _exports(task: Task) -> tuple[str, ...]:
    known = repo_test_command(task.repo, task.version)
    return known.exports if known else ()


def _added_module(task: Task, invocation: Probe | Capture) -> RunnerInvocation:
    command = added_modules.command(task, invocation, runner_of(task))
    return RunnerInvocation(
        kind=RunnerKind.UNITTEST,
        parser=RunnerKind.UNITTEST.value,
        command=command,
        directives=(),
        exports=_exports(task),
        checks_summary=False,
    )


def _suite(
    task: Task, invocation: Suite, test_patch: str, junit_path: str | None
) -> RunnerInvocation:
    kind = runner_kind(task)
    built = wider_suite.command(task, kind, invocation)
    if built is None:
        raise NoCommand(
            f"no wider-suite command for the task's {kind.value} runner"
            f" ({task.test_command or 'its default command'!r})"
        )
    if not built.takes_directives:
        return RunnerInvocation(
            kind=kind,
            parser=kind.value,
            command=built.command,
            directives=(),
            exports=_exports(task),
        )
    # Test files or ids to run are exactly those: the test patch's files are added only to
    # directories (a run of selected tests must not grow by the graded files).
    if invocation.files is None:
        return _assembled(task, kind, kind.value, built.command, test_patch, junit_path)
    command = _PLACEHOLDER.sub("", built.command)
    return _assembled(task, kind, kind.value, command, test_patch, junit_path, selected=())


def _coverage(task: Task, invocation: Coverage, test_patch: str) -> RunnerInvocation:
    """The graded command (without a JUnit report) on the invocation's tests, else on the
    graded ones — or the wider suite's command when it names one — with coverage.py started in
    front of it (`coverage_run`)."""
    kind = runner_kind(task)
    if invocation.suite is not None:
        suite = _suite(task, invocation.suite, test_patch, None)
        return dataclasses.replace(suite, prelude=coverage_run.setup_lines())
    selected = None
    if invocation.tests is not None:
        selected = tuple(
            directive
            for test in invocation.tests
            for directive in (directives_for([test], kind) if test.endswith(".py") else [test])
        )
    built = _assembled(
        task, kind, task.log_parser or kind.value, _base(task, kind), test_patch, None, selected
    )
    return dataclasses.replace(built, prelude=coverage_run.setup_lines())


def _base(task: Task, kind: RunnerKind) -> str:
    known = repo_test_command(task.repo, task.version)
    return task.test_command or (known.command if known else DEFAULT_COMMANDS[kind])


def resolve_invocation(task: Task, test_patch: str, junit_path: str | None) -> RunnerInvocation:
    """The invocation that grades `task` with `test_patch`; `junit_path` asks pytest for an XML
    report.

    Raises UnknownParser when the task names a parser that does not exist.
    """
    kind = runner_kind(task)
    return _assembled(
        task, kind, task.log_parser or kind.value, _base(task, kind), test_patch, junit_path
    )


def _assembled(
    task: Task,
    kind: RunnerKind,
    parser: str,
    base: str,
    test_patch: str,
    junit_path: str | None,
    selected: tuple[str, ...] | None = None,
) -> RunnerInvocation:
    """`base` with the test patch's files as directives (or the `selected` ones; at `{tests}`,
    else at its end) and, for a pytest command, `-rA` and the JUnit report."""
    directives = selected
    if directives is None:
        parsed = (
            task.test_diff.applied() if test_patch == task.test_patch else read_patch(test_patch)
        )
        directives = tuple(directives_for(patch_files(parsed), kind))
    quoted = " ".join(shlex.quote(d) for d in directives)
    pytest_like = kind is RunnerKind.PYTEST and is_pytest_command(base)
    extra = []
    if pytest_like and not _REPORT_FLAG.search(base):
        extra.append("-rA")
    junit = junit_path if pytest_like else None
    if junit:
        extra.append(shlex.quote(f"--junitxml={junit}"))
    if TESTS_PLACEHOLDER in base:
        command = base.replace(TESTS_PLACEHOLDER, quoted)
        command = " ".join([command, *extra])
    else:
        command = " ".join(part for part in (base, *extra, quoted) if part)
    return RunnerInvocation(
        kind=kind,
        parser=parser,
        command=command,
        directives=directives,
        exports=_exports(task),
        junit_path=junit,
    )
