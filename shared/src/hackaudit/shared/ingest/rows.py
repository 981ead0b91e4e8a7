"""Turns one raw row into a `Task`, or into problems that each name the offending field.

Before validation a row is brought to SWE-bench form: R2E-Gym rows are converted (see
`r2egym`), a relative `environment.source` is made absolute against the task file's folder, and a
`patch` or `test_patch` given as a file-replacement mapping becomes a unified diff. After
validation, a plain SWE-bench row (no image, no environment source) gets its environment, test
command and log parser from the SWE-bench spec table (`swebench_specs`).

File-replacement mappings (`patch` / `test_patch` as a JSON object, path -> value):

- a string is the file's new content; its old content is read from `environment.source` (the file
  is new when it is not there). Without an `environment.source` the old content is unknown, so
  the row is refused unless every entry states both sides;
- null deletes the file (its old content comes from `environment.source`);
- `{"old": text-or-null, "new": text-or-null}` states both sides; null means "does not exist".
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.ingest.file_mapping import FileChange, UnsafePath, checked_path, unified_diff
from hackaudit.shared.ingest.r2egym import is_r2egym_row, r2egym_instance_id, r2egym_to_swebench
from hackaudit.shared.ingest.report import IngestProblem
from hackaudit.shared.ingest.row_error import RowError
from hackaudit.shared.ingest.task_files import RawRow
from hackaudit.shared.swebench_specs import with_spec

_MAPPED_FIELDS = ("patch", "test_patch")


def task_from_row(raw: RawRow) -> Task | list[IngestProblem]:
    """The row's task, or every problem found in it."""
    data = raw.data
    if not isinstance(data, dict):
        kind = type(data).__name__
        return [IngestProblem(source=raw.source, message=f"row is a {kind}, not an object")]
    instance_id = r2egym_instance_id(data) if is_r2egym_row(data) else _instance_id(data)
    try:
        row = _normalised(data, raw.folder)
    except RowError as exc:
        return [_problem(raw, instance_id, exc.field, exc.message)]
    try:
        return with_spec(Task.model_validate(row))
    except ValidationError as exc:
        instance_id = _instance_id(row) or instance_id
        return [
            _problem(raw, instance_id, _field_name(error["loc"], error["msg"]), _text(error["msg"]))
            for error in exc.errors(include_url=False)
        ]


def _problem(raw: RawRow, instance_id: str | None, field: str | None, msg: str) -> IngestProblem:
    return IngestProblem(source=raw.source, instance_id=instance_id, field=field, message=msg)


def _text(message: str) -> str:
    return message.removeprefix("Value error, ")


def _instance_id(row: Mapping[str, Any]) -> str | None:
    value = row.get("instance_id")
    return value if isinstance(value, str) and value else None


def _normalised(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    row = r2egym_to_swebench(data) if is_r2egym_row(data) else dict(data)
    source = _resolved_source(row, folder)
    for field in _MAPPED_FIELDS:
        value = row.get(field)
        if isinstance(value, dict):
            row[field] = _mapping_diff(field, value, source)
    return row


def _resolved_source(row: dict[str, Any], folder: Path) -> Path | None:
    """Rewrites a relative `environment.source` as an absolute path; returns the folder."""
    environment = row.get("environment")
    if not isinstance(environment, dict):
        return None
    source = environment.get("source")
    if not isinstance(source, str) or not source:
        return None
    absolute = Path(source).expanduser()
    if not absolute.is_absolute():
        absolute = (folder / absolute).resolve()
    row["environment"] = {**environment, "source": str(absolute)}
    return absolute


def _mapping_diff(field: str, mapping: Mapping[str, Any], source: Path | None) -> str:
    changes = []
    for path, value in mapping.items():
        where = f"{field}[{str(path)!r}]"
        try:
            clean = checked_path(str(path))
        except UnsafePath as exc:
            raise RowError(where, str(exc)) from exc
        if isinstance(value, dict):
            old, new = value.get("old"), value.get("new")
            if not all(side is None or isinstance(side, str) for side in (old, new)):
                raise RowError(where, "old and new must be text or null")
        elif value is None or isinstance(value, str):
            old, new = _old_content(where, clean, source), value
        else:
            raise RowError(where, "must be the new text, null, or {old, new}")
        changes.append(FileChange(clean, old, new))
    return unified_diff(changes)


def _old_content(where: str, path: str, source: Path | None) -> str | None:
    if source is None:
        raise RowError(
            where, "needs environment.source to read the old content from, or {old, new}"
        )
    file = (source / path).resolve()
    if not file.is_relative_to(source.resolve()):
        raise RowError(where, "leads outside environment.source through a link")
    if not file.is_file():
        return None
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RowError(where, f"cannot read the old content: {exc}") from exc


def _field_name(loc: tuple[int | str, ...], message: str) -> str | None:
    """`('environment', 'pip_packages', 0)` -> `environment.pip_packages[0]`.

    A check on the whole task (empty loc) is attributed to the first field its message names,
    since those checks are about one field (`FAIL_TO_PASS is empty: ...`).
    """
    if not loc:
        return _field_named_in(message)
    name = ""
    for part in loc:
        if isinstance(part, int):
            name += f"[{part}]"
        else:
            name += f".{part}" if name else str(part)
    return name


def _field_named_in(message: str) -> str | None:
    names = []
    for name, field in Task.model_fields.items():
        names.append(name)
        if field.alias:
            names.append(field.alias)
    found = [(message.find(n), n) for n in names if n in message]
    return min(found)[1] if found else None
