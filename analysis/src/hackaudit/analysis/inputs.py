"""Readers for per-submission resolved lists in the three layouts the analysis accepts.

1. **Experiments folder** — the SWE-bench experiments layout: ``evaluation/<split>/<submission>/
   results/results.json``, each with a ``"resolved"`` list (the folder given may also be the
   ``evaluation/<split>`` folder itself). The date comes from a ``YYYYMMDD_`` folder prefix.
2. **Matrix CSV** — a header row, then one row per submission: the first column names the
   submission, optional ``date`` and ``name`` columns, and one 0/1 column per task id.
3. **JSON** — either ``{"submissions": [{"folder", "resolved_ids", ...}], "instance_ids": [...]}``
   (records may carry ``name``, ``date``, ``tags`` and ``count_matches_pct``; a record whose
   ``count_matches_pct`` is false disagrees with the leaderboard and is excluded as bad data),
   a bare list of such records, or a plain ``{"<submission>": ["<task id>", ...]}`` mapping.

Every problem raises :class:`InputFileError` naming the file and the field.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from hackaudit.analysis.errors import InputFileError
from hackaudit.analysis.submissions import Exclusion, Submission, SubmissionSet

METADATA_COLUMNS = frozenset({"date", "name"})
DATE_PREFIX = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})")


def load_resolved(
    path: Path, split: str = "verified", exclude: Collection[str] = ()
) -> SubmissionSet:
    """Read any supported layout, then drop the submissions named in ``exclude``."""
    if path.is_dir():
        loaded = load_experiments(path, split)
    elif not path.is_file():
        raise InputFileError(path, "no such file or folder")
    elif path.suffix.lower() == ".csv":
        loaded = load_matrix_csv(path)
    elif path.suffix.lower() == ".json":
        loaded = load_resolved_json(path)
    else:
        raise InputFileError(path, "expected a .csv matrix, a .json file or an experiments folder")
    return apply_exclusions(loaded, exclude)


def apply_exclusions(loaded: SubmissionSet, exclude: Collection[str]) -> SubmissionSet:
    """Move the submissions named in ``exclude`` to the excluded list."""
    wanted = set(exclude)
    if not wanted:
        return loaded
    kept = tuple(s for s in loaded.submissions if s.submission_id not in wanted)
    dropped = tuple(
        Exclusion(s.submission_id, "excluded on request")
        for s in loaded.submissions
        if s.submission_id in wanted
    )
    return SubmissionSet(loaded.source, kept, loaded.excluded + dropped, loaded.task_ids)


def parse_date(text: str) -> date | None:
    """``2024-10-22``, ``20241022`` or a ``20241022_...`` folder name; ``None`` otherwise."""
    match = DATE_PREFIX.match(text)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def read_json(path: Path) -> Any:
    """Parse a JSON file, turning every read or syntax failure into an InputFileError."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputFileError(path, f"cannot read: {error.strerror}") from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputFileError(path, f"not valid JSON: {error}") from error


# --- experiments folder -------------------------------------------------------------------


def load_experiments(root: Path, split: str = "verified") -> SubmissionSet:
    """Read ``<root>/evaluation/<split>/*/results/results.json`` (or ``<root>/*/results/...``)."""
    folder = root / "evaluation" / split if (root / "evaluation").is_dir() else root
    if not folder.is_dir():
        raise InputFileError(root, f"no evaluation/{split} folder")
    candidates = sorted(p for p in folder.iterdir() if p.is_dir())
    submissions: list[Submission] = []
    excluded: list[Exclusion] = []
    for candidate in candidates:
        results = candidate / "results" / "results.json"
        if results.is_file():
            submissions.append(_experiment_submission(candidate.name, results))
        else:
            excluded.append(Exclusion(candidate.name, "no results/results.json"))
    if not submissions:
        raise InputFileError(folder, "no <submission>/results/results.json found")
    return SubmissionSet(root, tuple(submissions), tuple(excluded))


def _experiment_submission(name: str, results: Path) -> Submission:
    data = read_json(results)
    if not isinstance(data, dict) or "resolved" not in data:
        raise InputFileError(results, "expected an object with a resolved list", "resolved")
    resolved = _id_list(data["resolved"], results, "resolved")
    return Submission(name, resolved, name=name, date=parse_date(name))


# --- matrix CSV -----------------------------------------------------------------------------


def load_matrix_csv(path: Path) -> SubmissionSet:
    """Read a submissions x tasks 0/1 matrix with a header row."""
    rows = _read_csv_rows(path)
    if len(rows) < 2 or len(rows[0]) < 2:
        raise InputFileError(path, "expected a header row and at least one submission row")
    header = [cell.strip() for cell in rows[0]]
    task_columns = [i for i, name in enumerate(header) if i > 0 and name not in METADATA_COLUMNS]
    if not task_columns:
        raise InputFileError(path, "no task id columns in the header")
    submissions = tuple(
        _matrix_submission(path, header, task_columns, row, line)
        for line, row in enumerate(rows[1:], start=2)
        if any(cell.strip() for cell in row)
    )
    return SubmissionSet(path, submissions, (), frozenset(header[i] for i in task_columns))


def _read_csv_rows(path: Path) -> list[list[str]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.reader(handle))
    except OSError as error:
        raise InputFileError(path, f"cannot read: {error.strerror}") from error
    except (csv.Error, UnicodeDecodeError) as error:
        raise InputFileError(path, f"not valid CSV: {error}") from error


def _matrix_submission(
    path: Path, header: Sequence[str], task_columns: Sequence[int], row: Sequence[str], line: int
) -> Submission:
    if len(row) != len(header):
        raise InputFileError(path, f"line {line} has {len(row)} cells, header has {len(header)}")
    values = dict(zip(header, (cell.strip() for cell in row), strict=True))
    resolved = set()
    for column in task_columns:
        cell = row[column].strip()
        if cell not in ("0", "1"):
            raise InputFileError(path, f"line {line}: {cell!r} is not 0 or 1", header[column])
        if cell == "1":
            resolved.add(header[column])
    submission_id = row[0].strip()
    return Submission(
        submission_id,
        frozenset(resolved),
        name=values.get("name", ""),
        date=parse_date(values.get("date", "") or submission_id),
    )


# --- JSON -----------------------------------------------------------------------------------


def load_resolved_json(path: Path) -> SubmissionSet:
    """Read the submissions-records JSON, a bare list of records, or an id -> list mapping."""
    data = read_json(path)
    if isinstance(data, list):
        return _records_set(path, data, "", None)
    if not isinstance(data, dict):
        raise InputFileError(path, "expected a JSON object or a list of submission records")
    if "submissions" in data:
        records = data["submissions"]
        if not isinstance(records, list):
            raise InputFileError(path, "expected a list", "submissions")
        task_ids = _declared_task_ids(path, data)
        return _records_set(path, records, "submissions", task_ids)
    submissions = tuple(
        Submission(str(name), _id_list(ids, path, str(name)), name=str(name), date=parse_date(name))
        for name, ids in data.items()
    )
    return SubmissionSet(path, submissions)


def _declared_task_ids(path: Path, data: Mapping[str, Any]) -> frozenset[str] | None:
    if "instance_ids" not in data:
        return None
    return _id_list(data["instance_ids"], path, "instance_ids")


def _records_set(
    path: Path, records: Sequence[Any], prefix: str, task_ids: frozenset[str] | None
) -> SubmissionSet:
    submissions: list[Submission] = []
    excluded: list[Exclusion] = []
    for index, record in enumerate(records):
        where = f"{prefix}[{index}]"
        outcome = _record(path, record, where)
        if isinstance(outcome, Submission):
            submissions.append(outcome)
        else:
            excluded.append(outcome)
    return SubmissionSet(path, tuple(submissions), tuple(excluded), task_ids)


def _record(path: Path, record: Any, where: str) -> Submission | Exclusion:
    if not isinstance(record, dict):
        raise InputFileError(path, "expected an object", where)
    submission_id = record.get("folder") or record.get("submission_id") or record.get("name")
    if not isinstance(submission_id, str) or not submission_id:
        raise InputFileError(path, "needs a folder, submission_id or name", where)
    if record.get("resolved_ids") is None:
        return Exclusion(submission_id, "no resolved instance ids in the source")
    if record.get("count_matches_pct") is False:
        return Exclusion(submission_id, "resolved ids disagree with the leaderboard count")
    tags = record.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise InputFileError(path, "expected a list of strings", f"{where}.tags")
    return Submission(
        submission_id,
        _id_list(record["resolved_ids"], path, f"{where}.resolved_ids"),
        name=str(record.get("name") or submission_id),
        date=parse_date(str(record.get("date") or submission_id)),
        tags=tuple(tags),
    )


def _id_list(value: Any, path: Path, field: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputFileError(path, "expected a list of task id strings", field)
    return frozenset(value)
