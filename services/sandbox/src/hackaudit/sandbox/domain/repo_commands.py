"""The test command each SWE-bench repository's verifier runs, by repository and version.

Derived from the per-(repository, version) specifications of the SWE-bench harness (the table in
`swebench_verified_specs_by_repo_version.json`): only the part a verifier needs is kept — the
command line the tests are started with, the runner it implies and the environment variables the
harness exports before it. Steps that need root or the network (regenerating locales,
re-installing the package) are left out: tasks run as a non-root user without network, from an
image that already holds the installed package.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RunnerKind(StrEnum):
    """How a runner is given its test files: as paths (pytest, sympy) or dotted modules."""

    PYTEST = "pytest"
    UNITTEST = "unittest"
    DJANGO = "django"
    SYMPY = "sympy"


@dataclass(frozen=True)
class RepoCommand:
    command: str
    kind: RunnerKind
    exports: tuple[str, ...] = ()
    versions: frozenset[str] | None = None

    def covers(self, version: str | None) -> bool:
        return self.versions is None or (version is not None and version in self.versions)


DJANGO_COMMAND = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
SYMPY_COMMAND = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
_UTF8 = ("LANG=en_US.UTF-8", "LC_ALL=en_US.UTF-8", "LANGUAGE=en_US:en")

# First entry covering the version wins; an entry without versions covers every version.
REPO_COMMANDS: dict[str, tuple[RepoCommand, ...]] = {
    "astropy/astropy": (
        RepoCommand(
            "pytest -rA -vv -o console_output_style=classic --tb=no",
            RunnerKind.PYTEST,
            versions=frozenset({"1.3"}),
        ),
        RepoCommand("pytest -rA", RunnerKind.PYTEST),
    ),
    "django/django": (
        RepoCommand(
            DJANGO_COMMAND,
            RunnerKind.DJANGO,
            exports=(*_UTF8, "PYTHONIOENCODING=utf8"),
            versions=frozenset({"1.11", "2.2"}),
        ),
        RepoCommand(
            DJANGO_COMMAND,
            RunnerKind.DJANGO,
            exports=_UTF8,
            versions=frozenset({"3.0", "3.1", "3.2"}),
        ),
        RepoCommand(DJANGO_COMMAND, RunnerKind.DJANGO),
    ),
    "mwaskom/seaborn": (RepoCommand("pytest --no-header -rA", RunnerKind.PYTEST),),
    "sphinx-doc/sphinx": (RepoCommand("tox --current-env -epy39 -v --", RunnerKind.PYTEST),),
    "sympy/sympy": (RepoCommand(SYMPY_COMMAND, RunnerKind.SYMPY),),
}

DEFAULT_COMMANDS: dict[RunnerKind, str] = {
    RunnerKind.PYTEST: "pytest -rA",
    RunnerKind.UNITTEST: "python -m unittest -v",
    RunnerKind.DJANGO: DJANGO_COMMAND,
    RunnerKind.SYMPY: "bin/test -C --verbose",
}


def repo_command(repo: str, version: str | None) -> RepoCommand | None:
    """The SWE-bench verifier's command for this repository and version, if it is known."""
    return next((c for c in REPO_COMMANDS.get(repo, ()) if c.covers(version)), None)
