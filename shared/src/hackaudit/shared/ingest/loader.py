"""`load_tasks`: every task file named, read, validated and checked for duplicate ids.

One bad row, line or file never stops the others: it becomes an `IngestProblem` and reading goes
on. The first task with a given `instance_id` is kept; later ones are reported and skipped.
`load_task_sources` also hands back, per task, the row as read and where it came from, so a task
can be written back in its own format (the hardened dataset an audit writes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.ingest.r2egym import is_r2egym_row
from hackaudit.shared.ingest.report import IngestProblem, IngestReport
from hackaudit.shared.ingest.rows import task_from_row
from hackaudit.shared.ingest.task_files import RawRow, discover, read_rows
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class TaskSource:
    """Where one task was read from: the file, the row's 1-based position in it, the row as read
    (before any conversion), and the row's flavour (`swebench` or `r2egym`)."""

    path: Path
    number: int
    row: Any
    flavour: str

    @property
    def format(self) -> str:
        """The file format: `json`, `jsonl` or `parquet`."""
        return self.path.suffix.lower().lstrip(".")


def load_tasks(paths: Sequence[Path]) -> IngestReport:
    """Reads task files and folders of them into valid tasks plus the problems met."""
    return load_task_sources(paths)[0]


def load_task_sources(paths: Sequence[Path]) -> tuple[IngestReport, dict[str, TaskSource]]:
    """`load_tasks`, plus the source of every valid task by `instance_id`."""
    sources: dict[str, TaskSource] = {}
    tasks: list[Task] = []
    problems: list[IngestProblem] = []
    first_seen: dict[str, str] = {}
    for found in discover([Path(p) for p in paths]):
        if isinstance(found, IngestProblem):
            problems.append(found)
            continue
        for raw in read_rows(found):
            if isinstance(raw, IngestProblem):
                problems.append(raw)
                continue
            result = task_from_row(raw)
            if isinstance(result, list):
                problems.extend(result)
            elif result.instance_id in first_seen:
                problems.append(
                    IngestProblem(
                        source=raw.source,
                        instance_id=result.instance_id,
                        field="instance_id",
                        message=f"duplicate of the task at {first_seen[result.instance_id]}; "
                        "this one is skipped",
                    )
                )
            else:
                first_seen[result.instance_id] = raw.source
                tasks.append(result)
                sources[result.instance_id] = _source(raw, found)
    log.info("tasks.loaded", paths=len(paths), tasks=len(tasks), problems=len(problems))
    return IngestReport(tasks=tasks, problems=problems), sources


def _source(raw: RawRow, path: Path) -> TaskSource:
    flavour = "r2egym" if isinstance(raw.data, dict) and is_r2egym_row(raw.data) else "swebench"
    return TaskSource(path=raw.path or path, number=raw.number, row=raw.data, flavour=flavour)
