"""Readers for the per-task labels: the weak-test flag and the stratum.

Both accept the same shapes, keyed by task id:

- a JSON object ``{"<task id>": value}``;
- JSON records ``{"instances": [{"instance_id": ..., "<field>": ...}]}`` or a bare list of
  records (the id key may also be ``id``), as in the shared instance-flags and task-metadata
  files;
- a CSV with a header holding ``instance_id`` (or ``id``) and the field's column.

For records and CSV the column is ``field`` (flags: ``utboost_insufficient_tests`` by default,
then ``flagged`` or ``hackable``; strata: ``difficulty``, then ``stratum``). A task whose value is
null or empty is left out (and counted as missing by the design). Flags must be booleans, 0/1 or
true/false/yes/no. Every problem raises :class:`InputFileError` naming the file and field.

Flags also come from the scorer's results store (a ``.duckdb`` file), read-only, also while a
scorer runs: it holds the file only during a save, so the reader retries for a few seconds.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hackaudit.analysis.errors import InputFileError
from hackaudit.analysis.inputs import read_json

DEFAULT_FLAG_FIELD = "utboost_insufficient_tests"
FLAG_FALLBACK_FIELDS = ("flagged", "hackable")
DEFAULT_STRATUM_FIELD = "difficulty"
STRATUM_FALLBACK_FIELDS = ("stratum",)
ID_KEYS = ("instance_id", "id")
TRUE_WORDS = frozenset({"1", "true", "yes", "y", "t"})
FALSE_WORDS = frozenset({"0", "false", "no", "n", "f"})

Value = TypeVar("Value")


def load_flags(path: Path, field: str = DEFAULT_FLAG_FIELD) -> dict[str, bool]:
    """Task id -> flagged (weak tests), from any supported shape, or hackaudit's results store
    (a `.duckdb` file: a task is flagged when its latest audit found it hackable)."""
    if path.suffix == ".duckdb":
        return load_flags_from_results_store(path)
    return _load_labels(path, (field, *FLAG_FALLBACK_FIELDS), parse_flag)


def load_flags_from_results_store(path: Path) -> dict[str, bool]:
    """`hackable` of each task's latest score in the scorer's DuckDB store (read-only)."""
    import duckdb

    if not path.is_file():
        raise InputFileError(path, "no such results store")
    try:
        with _read_only(path) as db:
            rows = db.execute(
                "SELECT instance_id, arg_max(hackable, scored_at) FROM scores "
                "WHERE hackable IS NOT NULL GROUP BY instance_id"
            ).fetchall()
    except duckdb.Error as exc:
        raise InputFileError(path, f"not a hackaudit results store: {exc}", "scores") from exc
    if not rows:
        raise InputFileError(path, "no scored task with a hackable flag", "scores.hackable")
    return {str(instance_id): bool(flag) for instance_id, flag in rows}


def _read_only(path: Path, wait_s: float = 10.0) -> Any:
    """A read-only connection, retried while a scorer's save holds the file's lock."""
    import time

    import duckdb

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return duckdb.connect(str(path), read_only=True)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def load_strata(path: Path, field: str = DEFAULT_STRATUM_FIELD) -> dict[str, str]:
    """Task id -> stratum label, from any supported shape."""
    return _load_labels(path, (field, *STRATUM_FALLBACK_FIELDS), parse_stratum)


def parse_flag(value: Any, path: Path, field: str) -> bool:
    """A boolean from a JSON boolean, 0/1, or a true/false-like word."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
        return value.strip().lower() in TRUE_WORDS
    raise InputFileError(path, f"{value!r} is not a boolean flag", field)


def parse_stratum(value: Any, path: Path, field: str) -> str:
    """A stratum label: any string or number, kept as text."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value).strip()
    raise InputFileError(path, f"{value!r} is not a stratum label", field)


def _load_labels(
    path: Path, fields: Sequence[str], parse: Callable[[Any, Path, str], Value]
) -> dict[str, Value]:
    if not path.is_file():
        raise InputFileError(path, "no such file")
    if path.suffix.lower() == ".csv":
        return _from_csv(path, fields, parse)
    data = read_json(path)
    if isinstance(data, dict) and "instances" in data:
        data = data["instances"]
    if isinstance(data, list):
        return _from_records(path, data, fields, parse)
    if isinstance(data, dict):
        return {
            str(task): parse(value, path, str(task))
            for task, value in data.items()
            if not _is_blank(value)
        }
    raise InputFileError(path, "expected a JSON object, records or a CSV file")


def _from_records(
    path: Path,
    records: Sequence[Any],
    fields: Sequence[str],
    parse: Callable[[Any, Path, str], Value],
) -> dict[str, Value]:
    if not records:
        raise InputFileError(path, "no records")
    if not all(isinstance(record, dict) for record in records):
        raise InputFileError(path, "every record must be an object", "instances")
    id_key = _pick(path, records[0].keys(), ID_KEYS)
    field = _pick(path, records[0].keys(), fields)
    labels: dict[str, Value] = {}
    for index, record in enumerate(records):
        task, value = record.get(id_key), record.get(field)
        if not isinstance(task, str):
            raise InputFileError(path, "missing task id", f"[{index}].{id_key}")
        if not _is_blank(value):
            labels[task] = parse(value, path, f"[{index}].{field}")
    return labels


def _from_csv(
    path: Path, fields: Sequence[str], parse: Callable[[Any, Path, str], Value]
) -> dict[str, Value]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, csv.Error, UnicodeDecodeError) as error:
        raise InputFileError(path, f"cannot read as CSV: {error}") from error
    if not rows:
        raise InputFileError(path, "no data rows")
    id_key = _pick(path, rows[0].keys(), ID_KEYS)
    field = _pick(path, rows[0].keys(), fields)
    return {
        row[id_key].strip(): parse(row[field], path, f"line {line}: {field}")
        for line, row in enumerate(rows, start=2)
        if not _is_blank(row[field])
    }


def _pick(path: Path, available: Any, wanted: Sequence[str]) -> str:
    present = set(available)
    for name in wanted:
        if name in present:
            return name
    raise InputFileError(path, f"none of the columns {', '.join(wanted)} is present", wanted[0])


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
