"""What every command prints through and how it gives up: the two consoles (results on stdout,
progress and problems on stderr), the way a fault or an unusable input ends a command with its
exit code, and the task files read with their problems said."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from hackaudit.cli import inputs
from hackaudit.cli.bars import bars_columns
from hackaudit.shared.ingest.pass_at_1 import PassAtOneFileError

# Piped into a file or another program, tables keep task ids whole (rich would cut them at 80
# columns); on a terminal, or with COLUMNS set, the width is the terminal's as usual.
PIPED_WIDTH = 240
console = Console(width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else PIPED_WIDTH)
# Problems stay one line each however long (a log or CI greps them): rich would wrap them at 80
# columns when stderr is not a terminal. Progress bars and tables on it keep the usual width.
err = Console(stderr=True, soft_wrap=True)


def fail(exc: Exception, code: int = 1) -> typer.Exit:
    """Say the error and end with `code`: 1 for a fault of the run, 2 for an unusable input."""
    err.print(f"[red]error:[/] {escape(str(exc))}")
    return typer.Exit(code)


def ingest(
    paths: list[Path], pass_at_1: Path | None = None, instance_ids: list[str] | None = None
) -> inputs.Ingested:
    """The valid tasks of these files (only those of `instance_ids`, the `--instance-ids`
    option's values, when given); every file or row left out is said. Exits 2 if none, or if an
    id asked for is in no file."""
    try:
        result = inputs.read_inputs(paths, pass_at_1, inputs.instance_id_list(instance_ids))
    except PassAtOneFileError as exc:
        raise fail(exc, 2) from exc
    if result.missing_ids:
        message = f"--instance-ids: not in any task file given: {', '.join(result.missing_ids)}"
        raise fail(ValueError(message), 2)
    if result.pass_at_1_note:
        err.print(escape(result.pass_at_1_note))
    if not result.tasks:
        first = f": {result.problems[0]}" if result.problems else ""
        more = f" (and {len(result.problems) - 1} more)" if len(result.problems) > 1 else ""
        raise fail(ValueError(f"no valid task in the input{first}{more}"), 2)
    for problem in result.problems:
        err.print(f"[yellow]rejected[/]: {escape(str(problem))}", highlight=False)
    return result


def use_repos(repos: Path | None) -> None:
    """The environment builder reads its settings from the environment, so the option goes there."""
    if repos is not None:
        os.environ["HACKAUDIT_REPOS"] = str(repos.resolve())


@contextlib.contextmanager
def stage_bar(label: str, total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr; each call of what it yields counts one more done."""
    with Progress(*bars_columns(), console=err) as bars:
        row = bars.add_task(label, total=total)
        yield lambda: bars.advance(row)
