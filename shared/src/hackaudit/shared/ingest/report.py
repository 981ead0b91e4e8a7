"""What an ingestion run hands back: the valid tasks, and one problem per thing that failed.

A broken row is an expected outcome of reading real task files, so it is a value here, not an
exception: the caller sees every problem at once and still gets every valid task.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from hackaudit.shared.contracts.task import Task


class IngestProblem(BaseModel):
    """One thing that kept a row, a line or a file from becoming a task.

    `source` is the file, followed by `:line N` (JSONL) or `:row N` (JSON list, parquet) when the
    problem belongs to one row. `field` is the offending task field as written in the input
    (`FAIL_TO_PASS`, `environment.pip_packages[0]`), or None when the problem is not a field's.
    `file` and `position` (`line 3`, `row 2`) are the same place in parts, when it is known.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    instance_id: str | None = None
    field: str | None = None
    message: str
    file: str | None = None
    position: str | None = None

    def __str__(self) -> str:
        where = self.source
        if self.instance_id:
            where += f" [{self.instance_id}]"
        if self.field:
            where += f" {self.field}"
        return f"{where}: {self.message}"


class IngestReport(BaseModel):
    """The valid tasks, in input order, and every problem met on the way; per file read, how
    many rows it held (of the instance ids asked for, when some were), and the ids asked for
    that no file holds."""

    model_config = ConfigDict(frozen=True)

    tasks: list[Task]
    problems: list[IngestProblem]
    rows_read: dict[str, int] = {}
    missing_ids: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.problems
