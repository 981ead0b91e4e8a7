"""`load_tasks`: every task file named, read, validated and checked for duplicate ids.

One bad row, line or file never stops the others: it becomes an `IngestProblem` and reading goes
on. The first task with a given `instance_id` is kept; later ones are reported and skipped.
`load_task_sources` also hands back, per task, the row as read and where it came from, so a task
can be written back in its own format (the hardened dataset an audit writes). Given instance
ids, only the rows of those ids are read on (a row whose id cannot be told, a line that is not
JSON, is still reported); the ids no file holds are handed back.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.ingest.r2egym import is_r2egym_row, r2egym_instance_id
from hackaudit.shared.ingest.report import IngestProblem, IngestReport
from hackaudit.shared.ingest.rows import task_from_row
from hackaudit.shared.ingest.task_files import RawRow, TaskFile, discover, file_format, read_rows
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
        """The input format: `json`, `jsonl`, `json.gz`, `jsonl.gz`, `parquet`, or `arrow` (a
        `save_to_disk` folder)."""
        return file_format(self.path) or self.path.suffix.lower().lstrip(".")


def load_tasks(paths: Sequence[Path], instance_ids: Collection[str] | None = None) -> IngestReport:
    """Reads task files and folders of them into valid tasks plus the problems met."""
    return load_task_sources(paths, instance_ids)[0]


def load_task_sources(
    paths: Sequence[Path], instance_ids: Collection[str] | None = None
) -> tuple[IngestReport, dict[str, TaskSource]]:
    """`load_tasks`, plus the source of every valid task by `instance_id`."""
    wanted = set(instance_ids) if instance_ids else None
    seen_ids: set[str] = set()
    rows_read: dict[str, int] = {}
    sources: dict[str, TaskSource] = {}
    tasks: list[Task] = []
    problems: list[IngestProblem] = []
    first_seen: dict[str, str] = {}
    for found in discover([Path(p) for p in paths]):
        if isinstance(found, IngestProblem):
            problems.append(found)
            continue
        read, before = 0, len(problems)
        for raw in read_rows(found):
            if isinstance(raw, IngestProblem):
                problems.append(_placed(raw, found))
                continue
            row_id = _row_id(raw.data)
            if row_id is not None:
                seen_ids.add(row_id)
            if wanted is not None and row_id is not None and row_id not in wanted:
                continue
            read += 1
            result = task_from_row(raw)
            if isinstance(result, list):
                problems.extend(_placed(p, found) for p in result)
            elif result.instance_id in first_seen:
                problems.append(
                    IngestProblem(
                        source=raw.source,
                        instance_id=result.instance_id,
                        field="instance_id",
                        message=f"duplicate of the task at {first_seen[result.instance_id]}; "
                        "this one is skipped",
                    ).model_copy(update=_place(raw.source, found))
                )
            else:
                first_seen[result.instance_id] = raw.source
                tasks.append(result)
                sources[result.instance_id] = _source(raw, found.path)
        if read or not found.searched or len(problems) > before:
            rows_read[str(found.path)] = read  # a searched file that held no task row is none
    missing = sorted(wanted - seen_ids) if wanted is not None else []
    log.info("tasks.loaded", paths=len(paths), tasks=len(tasks), problems=len(problems))
    report = IngestReport(tasks=tasks, problems=problems, rows_read=rows_read, missing_ids=missing)
    return report, sources


def _row_id(data: object) -> str | None:
    if not isinstance(data, dict):
        return None
    found = r2egym_instance_id(data) if is_r2egym_row(data) else data.get("instance_id")
    return found if isinstance(found, str) and found else None


def _place(source: str, found: TaskFile) -> dict[str, str | None]:
    """The file and the position within it (`line 3`) of a problem's `source`."""
    file = str(found.path)
    position = source.removeprefix(f"{file}:") if source.startswith(f"{file}:") else None
    return {"file": file, "position": position}


def _placed(problem: IngestProblem, found: TaskFile) -> IngestProblem:
    return problem.model_copy(update=_place(problem.source, found))


def _source(raw: RawRow, path: Path) -> TaskSource:
    flavour = "r2egym" if isinstance(raw.data, dict) and is_r2egym_row(raw.data) else "swebench"
    return TaskSource(path=raw.path or path, number=raw.number, row=raw.data, flavour=flavour)
