"""Reads external pass@1 data (how often some reference policy solved each task) for D(t).

D needs s successes in n attempts per task. Task files seldom carry them; leaderboards and
rollout logs do. Two layouts are read:

- **per-task counts**: CSV/TSV with the columns `instance_id`, `successes`, `attempts`, or JSON
  (a list of such records, or an object `{instance_id: {successes, attempts}}`) or JSONL (one
  record per line);
- **a 0/1 matrix** of submissions x tasks (CSV/TSV, one header line). When the header has an
  `instance_id` column, each row is a task and the other columns are submissions; otherwise each
  row is a submission and the columns are tasks (the SWE-bench Verified resolved matrix). Leading
  label columns (a submission's name, its date) are the columns before the first one holding a
  `0` or a `1` (or holding nothing); every later cell must be `0`, `1` or blank, so a stray value
  in a task column is an error, not a label. A task's successes are its 1s, its attempts the
  submissions with a value for it (a blank is "not attempted").

Reading is all or nothing: one bad cell makes the whole file an error naming the file, the line
and the column, since a silently skipped cell would bias D for the task it belongs to.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hackaudit.shared.contracts.task import PassAtOne, Task

COUNT_COLUMNS = ("instance_id", "successes", "attempts")
_DELIMITERS = {".csv": ",", ".tsv": "\t"}
_JSON_SUFFIXES = (".json", ".jsonl")


class PassAtOneFileError(ValueError):
    """The pass@1 file cannot be read as either layout; says where (file, line, column)."""

    def __init__(
        self, path: Path, message: str, *, line: int | None = None, column: str | None = None
    ) -> None:
        where = str(path)
        if line is not None:
            where += f":line {line}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.column = column


@dataclass(frozen=True)
class PassAtOneTable:
    """Successes and attempts per task id, and a description of where they come from."""

    counts: dict[str, tuple[int, int]]
    description: str


def read_pass_at_1(path: Path) -> PassAtOneTable:
    """The file's per-task figures; PassAtOneFileError names what is wrong and where."""
    suffix = path.suffix.lower()
    if suffix not in _DELIMITERS and suffix not in _JSON_SUFFIXES:
        raise PassAtOneFileError(
            path, "unknown format: expected .csv or .tsv (counts or a 0/1 matrix), .json or .jsonl"
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise PassAtOneFileError(path, f"cannot read the file: {exc}") from exc
    if suffix in _JSON_SUFFIXES:
        return _json_counts(path, text, lines=suffix == ".jsonl")
    rows = list(_csv_rows(path, text, _DELIMITERS[suffix]))
    if not rows:
        raise PassAtOneFileError(path, "the file is empty: a header line is needed")
    header = [name.strip() for name in rows[0][1]]
    if "successes" in header or "attempts" in header:
        return _csv_counts(path, header, rows[1:])
    return _matrix(path, header, rows[1:])


def with_pass_at_1(tasks: Sequence[Task], table: PassAtOneTable) -> tuple[list[Task], int]:
    """The tasks with the table's figures as their pass@1 (a task file's own value is replaced,
    and the source says so); tasks the table does not name keep theirs. Also: how many matched."""
    out = []
    matched = 0
    for task in tasks:
        figures = table.counts.get(task.instance_id)
        if figures is None:
            out.append(task)
            continue
        matched += 1
        source = table.description
        if task.pass_at_1 is not None:
            own = task.pass_at_1
            source += f"; replaces the task file's {own.successes}/{own.attempts}"
        value = PassAtOne(successes=figures[0], attempts=figures[1], source=source)
        out.append(task.model_copy(update={"pass_at_1": value}))
    return out, matched


# --- per-task counts ---------------------------------------------------------------------


def _json_counts(path: Path, text: str, *, lines: bool) -> PassAtOneTable:
    records: list[tuple[int, Any]] = []
    if lines:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                records.append((number, _json_value(path, line, number)))
    else:
        data = _json_value(path, text, None)
        if isinstance(data, dict):
            data = [
                {"instance_id": key, **_object(path, value, key)} for key, value in data.items()
            ]
        if not isinstance(data, list):
            raise PassAtOneFileError(
                path, "expected a list of records or an object of id -> counts"
            )
        records = list(enumerate(data, start=1))
    counts: dict[str, tuple[int, int]] = {}
    where = "line" if lines else "record"
    for number, record in records:
        if not isinstance(record, dict):
            raise PassAtOneFileError(path, f"{where} {number} is not an object")
        for name in COUNT_COLUMNS:
            if name not in record:
                raise PassAtOneFileError(path, f"{where} {number} has no field {name!r}")
        cells = {name: str(record[name]) for name in COUNT_COLUMNS}
        _add_count(path, counts, cells, line=number if lines else None, record=number)
    return PassAtOneTable(counts, f"per-task counts {path.name}")


def _object(path: Path, value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PassAtOneFileError(path, f"the value for {key!r} is not an object")
    return value


def _json_value(path: Path, text: str, line: int | None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PassAtOneFileError(
            path, f"not valid JSON: {exc.msg}", line=line if line is not None else exc.lineno
        ) from exc


def _csv_counts(path: Path, header: list[str], rows: list[tuple[int, list[str]]]) -> PassAtOneTable:
    missing = [name for name in COUNT_COLUMNS if name not in header]
    if missing:
        raise PassAtOneFileError(
            path,
            f"a per-task count file needs the columns {', '.join(COUNT_COLUMNS)}; "
            f"missing: {', '.join(missing)}",
            line=1,
        )
    index = {name: header.index(name) for name in COUNT_COLUMNS}
    counts: dict[str, tuple[int, int]] = {}
    for line, cells in rows:
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise PassAtOneFileError(
                path, f"{len(cells)} cells where the header has {len(header)}", line=line
            )
        values = {name: cells[i].strip() for name, i in index.items()}
        _add_count(path, counts, values, line=line, record=None)
    return PassAtOneTable(counts, f"per-task counts {path.name}")


def _add_count(
    path: Path,
    counts: dict[str, tuple[int, int]],
    cells: dict[str, str],
    *,
    line: int | None,
    record: int | None,
) -> None:
    def fail(message: str, column: str) -> PassAtOneFileError:
        prefix = f"record {record}: " if line is None and record is not None else ""
        return PassAtOneFileError(path, prefix + message, line=line, column=column)

    instance_id = cells["instance_id"].strip()
    if not instance_id:
        raise fail("the task id is empty", "instance_id")
    if instance_id in counts:
        raise fail(f"{instance_id} is listed twice", "instance_id")
    numbers = {}
    for name in ("successes", "attempts"):
        try:
            numbers[name] = int(cells[name])
        except ValueError:
            raise fail(f"{cells[name]!r} is not a whole number", name) from None
        if numbers[name] < 0:
            raise fail(f"{numbers[name]} is negative", name)
    if numbers["successes"] > numbers["attempts"]:
        raise fail(
            f"{numbers['successes']} successes exceed {numbers['attempts']} attempts", "successes"
        )
    counts[instance_id] = (numbers["successes"], numbers["attempts"])


# --- 0/1 matrix --------------------------------------------------------------------------


def _matrix(path: Path, header: list[str], rows: list[tuple[int, list[str]]]) -> PassAtOneTable:
    rows = [(line, cells) for line, cells in rows if any(cell.strip() for cell in cells)]
    for line, cells in rows:
        if len(cells) != len(header):
            raise PassAtOneFileError(
                path, f"{len(cells)} cells where the header has {len(header)}", line=line
            )
    tasks_are_rows = "instance_id" in header
    id_column = header.index("instance_id") if tasks_are_rows else None
    others = [i for i in range(len(header)) if i != id_column]
    first_value = next((i for i in others if not _is_label(rows, i)), None)
    if first_value is None:
        raise PassAtOneFileError(
            path,
            "neither per-task counts (no successes/attempts columns) nor a 0/1 matrix "
            "(no column of 0/1 values)",
            line=1,
        )
    value_columns = others[others.index(first_value) :]
    _check_names(path, [header[i] for i in value_columns])
    for line, cells in rows:
        for i in value_columns:
            if cells[i].strip() not in ("0", "1", ""):
                raise PassAtOneFileError(
                    path, f"{cells[i]!r} is not 0, 1 or blank", line=line, column=header[i]
                )
    if id_column is not None:
        counts = _per_row(path, rows, id_column, value_columns)
        submissions = len(value_columns)
    else:
        counts = {header[i]: _tally(cells[i] for _, cells in rows) for i in value_columns}
        submissions = len(rows)
    return PassAtOneTable(counts, f"resolved matrix {path.name} ({submissions} submissions)")


def _per_row(
    path: Path, rows: list[tuple[int, list[str]]], id_column: int, value_columns: list[int]
) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for line, cells in rows:
        instance_id = cells[id_column].strip()
        if not instance_id or instance_id in counts:
            problem = "is listed twice" if instance_id else "is empty"
            raise PassAtOneFileError(
                path, f"the task id {instance_id!r} {problem}", line=line, column="instance_id"
            )
        counts[instance_id] = _tally(cells[i] for i in value_columns)
    return counts


def _check_names(path: Path, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if not name or name in seen:
            problem = "appears twice" if name else "has an empty name"
            raise PassAtOneFileError(path, f"a column {problem}: {name!r}", line=1)
        seen.add(name)


def _tally(cells: Iterable[str]) -> tuple[int, int]:
    values = [cell.strip() for cell in cells if cell.strip()]
    return values.count("1"), len(values)


def _is_label(rows: list[tuple[int, list[str]]], column: int) -> bool:
    """A label column holds something, and never a bare 0 or 1."""
    cells = [cells[column].strip() for _, cells in rows]
    return any(cells) and not any(cell in ("0", "1") for cell in cells)


def _csv_rows(path: Path, text: str, delimiter: str) -> Iterable[tuple[int, list[str]]]:
    """(line where the row starts, cells) for every row, header first."""
    reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
    line = 1
    try:
        for cells in reader:
            yield line, cells
            line = reader.line_num + 1
    except csv.Error as exc:
        raise PassAtOneFileError(path, f"not valid CSV: {exc}", line=line) from exc
