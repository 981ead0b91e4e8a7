"""Works out the exact test command a task's verifier runs.

The command is the task's `test_command`, else its repository's SWE-bench command
(`repo_commands`), else the default of its runner; the test patch's test files are appended as
directives, in the form the runner takes them:

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
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from hackaudit.sandbox.domain.log_parsers import UnknownParser, get_parser, parser_for_repo
from hackaudit.sandbox.domain.repo_commands import (
    DEFAULT_COMMANDS,
    RunnerKind,
    repo_command,
)
from hackaudit.shared.anatomy import Patch, read_patch
from hackaudit.shared.contracts import Task

NON_TEST_SUFFIXES: tuple[str, ...] = (
    *(".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl"),
    *(".yml", ".yaml", ".toml"),
)
REPOSITORY = "/testbed"
CONDA_ACTIVATE = "/opt/miniconda3/bin/activate"
CONDA_ENV = "testbed"
TESTS_PLACEHOLDER = "{tests}"

_PARSER_KINDS = {
    "pytest": RunnerKind.PYTEST,
    "unittest": RunnerKind.UNITTEST,
    "django": RunnerKind.DJANGO,
    "sympy": RunnerKind.SYMPY,
}
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

    def shell(self) -> str:
        """The bash script the wrapper runs: environment, working directory, command."""
        lines = [
            f"if [ -f {CONDA_ACTIVATE} ]; then "
            f". {CONDA_ACTIVATE} && conda activate {CONDA_ENV}; fi",
            f"cd {REPOSITORY} || exit 125",
        ]
        lines += [f"export {shlex.quote(e)}" for e in self.exports]
        lines.append(self.command)
        return "\n".join(lines) + "\n"


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
    """The runner a task uses: its parser's, its repository's, or the one its command names."""
    if task.log_parser:
        get_parser(task.log_parser)
        return _PARSER_KINDS.get(task.log_parser, RunnerKind.PYTEST)
    known = repo_command(task.repo, task.version)
    if known is not None:
        return known.kind
    command = task.test_command or ""
    if "runtests.py" in command:
        return RunnerKind.DJANGO
    if "bin/test" in command:
        return RunnerKind.SYMPY
    if "unittest" in command:
        return RunnerKind.UNITTEST
    return _PARSER_KINDS[parser_for_repo(task.repo)]


def is_pytest_command(command: str) -> bool:
    words = command.split()
    return bool(_PYTEST_WORD.search(command)) or ("tox" in words and words[-1:] == ["--"])


def resolve_invocation(task: Task, test_patch: str, junit_path: str | None) -> RunnerInvocation:
    """The invocation for `task` with `test_patch`; `junit_path` asks pytest for an XML report.

    Raises UnknownParser when the task names a parser that does not exist.
    """
    kind = runner_kind(task)
    parser = task.log_parser or kind.value
    if parser not in _PARSER_KINDS:
        raise UnknownParser(parser)
    known = repo_command(task.repo, task.version)
    base = task.test_command or (known.command if known else DEFAULT_COMMANDS[kind])
    parsed = task.test_diff.applied() if test_patch == task.test_patch else read_patch(test_patch)
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
        exports=known.exports if known else (),
        junit_path=junit,
    )
