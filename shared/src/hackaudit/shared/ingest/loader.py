"""`load_tasks`: every task file named, read, validated and checked for duplicate ids.

One bad row, line or file never stops the others: it becomes an `IngestProblem` and reading goes
on. The first task with a given `instance_id` is kept; later ones are reported and skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.ingest.report import IngestProblem, IngestReport
from hackaudit.shared.ingest.rows import task_from_row
from hackaudit.shared.ingest.task_files import discover, read_rows
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)


def load_tasks(paths: Sequence[Path]) -> IngestReport:
    """Reads task files and folders of them into valid tasks plus the problems met."""
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
    log.info("tasks.loaded", paths=len(paths), tasks=len(tasks), problems=len(problems))
    return IngestReport(tasks=tasks, problems=problems)
