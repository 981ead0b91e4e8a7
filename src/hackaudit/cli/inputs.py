"""The tasks a command works on, as the command line gathers them: the task files read (with each
task's source row, for writing the hardened dataset in the input's own format) and, when given,
external pass@1 figures laid over the tasks' own. Given instance ids, only those tasks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from hackaudit.cli.report_summary import Rejected
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
    # Rows read per file (of the instance ids asked for, when some were).
    rows_read: dict[str, int] = field(default_factory=dict)
    # Instance ids asked for that no file holds.
    missing_ids: list[str] = field(default_factory=list)


def instance_id_list(given: Sequence[str] | None) -> list[str]:
    """The ids of a repeatable option whose values may each be a comma (or space) list."""
    return [i for value in given or () for i in value.replace(",", " ").split()]


def read_inputs(
    paths: list[Path], pass_at_1: Path | None = None, instance_ids: Sequence[str] | None = None
) -> Ingested:
    """The tasks of `paths` (only those of `instance_ids`, when given); with `pass_at_1`, their
    pass@1 from that file where it names them.

    Raises PassAtOneFileError when the pass@1 file cannot be read (it is read first, so a bad
    file fails before any task file is).
    """
    table = read_pass_at_1(pass_at_1) if pass_at_1 is not None else None
    report, sources = load_task_sources(paths, instance_ids or None)
    tasks = list(report.tasks)
    note = ""
    if table is not None:
        tasks, matched = with_pass_at_1(tasks, table)
        note = (
            f"pass@1 from {table.description}: {matched} of {len(tasks)} task(s) matched "
            f"(the file names {len(table.counts)}); the others keep their own"
        )
    return Ingested(
        tasks=tasks,
        problems=list(report.problems),
        sources=sources,
        pass_at_1_note=note,
        rows_read=dict(report.rows_read),
        missing_ids=list(report.missing_ids),
    )


@dataclass(frozen=True)
class FileCheck:
    """One input file as read: its rows (of the ids asked for), its valid tasks, the rows and
    things in it that were rejected."""

    file: str
    rows_read: int
    valid: int
    rejected: list[IngestProblem]

    def as_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "rows_read": self.rows_read,
            "valid": self.valid,
            "rejected": [rejected_json(p) for p in self.rejected],
        }


def rejected_json(problem: IngestProblem) -> dict[str, object]:
    """A rejected row as `dataset/rejected.jsonl` holds it."""
    return asdict(Rejected.of(problem))


def file_checks(ingested: Ingested) -> tuple[list[FileCheck], list[IngestProblem]]:
    """Per file read, what became of its rows; and the problems that belong to no file read (a
    path that does not exist, a folder with no task files)."""
    valid: dict[str, int] = {}
    for source in ingested.sources.values():
        valid[str(source.path)] = valid.get(str(source.path), 0) + 1
    checks = {
        file: FileCheck(file, rows, valid.get(file, 0), [])
        for file, rows in ingested.rows_read.items()
    }
    unplaced = []
    for problem in ingested.problems:
        check = checks.get(problem.file or "")
        if check is None:
            unplaced.append(problem)
        else:
            check.rejected.append(problem)
    # Every row given ends valid or rejected, a line that is no row at all (not JSON) included.
    counted = [replace(c, rows_read=max(c.rows_read, c.valid + len(c.rejected)))
               for c in checks.values()]  # fmt: skip
    return counted, unplaced
