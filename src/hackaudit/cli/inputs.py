"""The tasks a command works on, as the command line gathers them: the task files read (with each
task's source row, for writing the hardened dataset in the input's own format) and, when given,
external pass@1 figures laid over the tasks' own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hackaudit.shared.contracts import Task
from hackaudit.shared.ingest import IngestProblem, TaskSource, load_task_sources
from hackaudit.shared.ingest.pass_at_1 import read_pass_at_1, with_pass_at_1


@dataclass(frozen=True)
class Ingested:
    """Valid tasks in input order, the problems met, and where each task was read from."""

    tasks: list[Task]
    problems: list[IngestProblem]
    sources: dict[str, TaskSource]
    # One line on the pass@1 file, when one was given: what it is and how many tasks it matched.
    pass_at_1_note: str = ""


def read_inputs(paths: list[Path], pass_at_1: Path | None = None) -> Ingested:
    """The tasks of `paths`; with `pass_at_1`, their pass@1 from that file where it names them.

    Raises PassAtOneFileError when the pass@1 file cannot be read (it is read first, so a bad
    file fails before any task file is).
    """
    table = read_pass_at_1(pass_at_1) if pass_at_1 is not None else None
    report, sources = load_task_sources(paths)
    tasks = list(report.tasks)
    note = ""
    if table is not None:
        tasks, matched = with_pass_at_1(tasks, table)
        note = (
            f"pass@1 from {table.description}: {matched} of {len(tasks)} task(s) matched "
            f"(the file names {len(table.counts)}); the others keep their own"
        )
    return Ingested(
        tasks=tasks, problems=list(report.problems), sources=sources, pass_at_1_note=note
    )
