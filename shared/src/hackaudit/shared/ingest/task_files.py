"""Finds task files and reads them into raw rows, one row at a time, whatever their format.

Formats: `.json` (a list of rows, or one row object), `.jsonl` (one row per line, blank lines
skipped), `.parquet` (one row per record, as the SWE-bench datasets are exported). A folder is
searched recursively for those three suffixes, in sorted order. A file that cannot be read, or a
line that is not JSON, becomes a problem that names the file and line; the other rows go on.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hackaudit.shared.ingest.report import IngestProblem

SUFFIXES = (".json", ".jsonl", ".parquet")
_PARQUET_BATCH_ROWS = 256


@dataclass(frozen=True)
class RawRow:
    """One undecoded task row and where it came from."""

    source: str
    folder: Path
    data: Any
    # The file and the row's 1-based position in it (row of a list or parquet file, JSONL line).
    path: Path | None = None
    number: int = 0


def discover(paths: Sequence[Path]) -> Iterator[Path | IngestProblem]:
    """Every task file named or found under a named folder, in the order given then sorted."""
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
            )
            if not found:
                yield IngestProblem(source=str(path), message="folder holds no task files")
            yield from found
        elif path.is_file():
            if path.suffix.lower() in SUFFIXES:
                yield path
            else:
                yield IngestProblem(
                    source=str(path),
                    message=f"unsupported file type; expected one of {', '.join(SUFFIXES)}",
                )
        else:
            yield IngestProblem(source=str(path), message="no such file or folder")


def read_rows(path: Path) -> Iterator[RawRow | IngestProblem]:
    """The rows of one task file; an unreadable file yields one problem and no rows."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        yield from _parquet_rows(path)
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        yield IngestProblem(source=str(path), message=f"cannot read file: {exc}")
        return
    if suffix == ".jsonl":
        yield from _jsonl_rows(path, text)
    else:
        yield from _json_rows(path, text)


def _json_rows(path: Path, text: str) -> Iterator[RawRow | IngestProblem]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        yield IngestProblem(
            source=f"{path}:line {exc.lineno}", message=f"not valid JSON: {exc.msg}"
        )
        return
    if isinstance(data, list):
        for index, row in enumerate(data, start=1):
            source = f"{path}:row {index}"
            yield RawRow(source=source, folder=path.parent, data=row, path=path, number=index)
    else:
        yield RawRow(source=str(path), folder=path.parent, data=data, path=path, number=1)


def _jsonl_rows(path: Path, text: str) -> Iterator[RawRow | IngestProblem]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{path}:line {number}"
        try:
            data = json.loads(line)
            yield RawRow(source=source, folder=path.parent, data=data, path=path, number=number)
        except json.JSONDecodeError as exc:
            yield IngestProblem(source=source, message=f"not valid JSON: {exc.msg}")


def _plain(value: Any) -> Any:
    """Parquet timestamps as ISO text, the way the JSON exports of the same datasets write them."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


def _parquet_rows(path: Path) -> Iterator[RawRow | IngestProblem]:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    number = 0
    try:
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS):
            for row in batch.to_pylist():
                number += 1
                data = {key: _plain(value) for key, value in row.items()}
                source = f"{path}:row {number}"
                yield RawRow(source=source, folder=path.parent, data=data, path=path, number=number)
    except (OSError, pa.ArrowException) as exc:
        where = f"{path}:row {number + 1}" if number else str(path)
        yield IngestProblem(source=where, message=f"cannot read parquet: {exc}")
