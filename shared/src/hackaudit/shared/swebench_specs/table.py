"""The SWE-bench environment table: per (repository, version), how its environment is made and
how its verifier starts the tests.

The table ships as package data (`specs.json`, derived from the SWE-bench harness's constants;
see `generate`). It is read once, on first use. It is the one table of repository defaults: the
sandbox's test command for a known repository (`repo_test_command`) comes from it too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class RepoVersionSpec:
    """One (repository, version) row of the table."""

    repo: str
    version: str
    python: str
    install: str
    test_cmd: str
    log_parser: str
    pip_packages: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    packages_from: str | None = None
    requirements_paths: tuple[str, ...] = ()
    pre_install: tuple[str, ...] = ()

    @property
    def requirement_files(self) -> tuple[str, ...]:
        """The repository files to read requirements from (only when `packages_from` says so)."""
        return self.requirements_paths if self.packages_from == "requirements.txt" else ()


@cache
def _table() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("specs.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def spec_for(repo: str, version: str | None) -> RepoVersionSpec | None:
    """The row for (repo, version), or None when the table has none."""
    if version is None:
        return None
    table = _table()
    row = table["specs"].get(repo, {}).get(version)
    if row is None:
        return None
    return RepoVersionSpec(
        repo=repo,
        version=version,
        python=str(row["python"]),
        install=str(row["install"]),
        test_cmd=str(row["test_cmd"]),
        log_parser=str(row["log_parser"]),
        pip_packages=tuple(row.get("pip_packages", ())),
        packages=tuple(row.get("packages", ())),
        packages_from=row.get("packages_from"),
        requirements_paths=tuple(table["requirements_paths"].get(repo, ())),
        pre_install=tuple(row.get("pre_install", ())),
    )


def known_versions(repo: str) -> tuple[str, ...]:
    return tuple(sorted(_table()["specs"].get(repo, {})))


@dataclass(frozen=True)
class RepoTestCommand:
    """How the SWE-bench harness starts a repository's tests: the command, the log parser it
    implies, and the variables it exports first (`export NAME=value` lines of its eval commands;
    steps that need root, such as regenerating locales, are left out)."""

    command: str
    log_parser: str
    exports: tuple[str, ...] = ()


def _test_command(row: dict[str, Any]) -> RepoTestCommand:
    exports = tuple(
        line.removeprefix("export ").strip()
        for line in row.get("eval_commands") or ()
        if line.startswith("export ")
    )
    return RepoTestCommand(str(row["test_cmd"]), str(row["log_parser"]), exports)


def repo_test_command(repo: str, version: str | None) -> RepoTestCommand | None:
    """The repository's test command at `version`. For a version the table lacks (or none): the
    command every version of the repository shares, with the exports they all share; None when
    the repository is unknown or its versions differ."""
    rows = _table()["specs"].get(repo, {})
    if version is not None and version in rows:
        return _test_command(rows[version])
    commands = [_test_command(row) for row in rows.values()]
    if not commands or len({(c.command, c.log_parser) for c in commands}) > 1:
        return None
    shared = [e for e in commands[0].exports if all(e in c.exports for c in commands)]
    return RepoTestCommand(commands[0].command, commands[0].log_parser, tuple(shared))
