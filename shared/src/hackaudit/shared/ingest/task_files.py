"""Finds task files and reads them into raw rows, one row at a time, whatever their format.

Formats: `.json` (a list of rows, or one row object), `.jsonl` (one row per line, blank lines
skipped), either of them gzipped (`.json.gz`, `.jsonl.gz`), `.parquet` (one row per record, as
the SWE-bench datasets are exported), and a folder written by `datasets`' `save_to_disk` (its
`dataset_info.json`, `state.json` and `data-*.arrow` Arrow IPC stream files, read with pyarrow).
A folder is searched recursively for those, in sorted order; a saved dataset found there is read
as one input. In a folder, a `.json` whose top level is an object that is not a task row (a
labels file, a dataset's own metadata) is not a task file, and is passed over without a problem;
a file named explicitly is always read. A file that cannot be read, or a line that is not JSON,
becomes a problem that names the file and line; the other rows go on.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hackaudit.shared.ingest.r2egym import is_r2egym_row
from hackaudit.shared.ingest.report import IngestProblem

SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz", ".parquet")
SAVED_DATASET = "arrow"  # the format name of a `save_to_disk` folder
_SAVED_DATASET_FILES = ("dataset_info.json", "state.json")
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


@dataclass(frozen=True)
class TaskFile:
    """A task file (or saved dataset folder) to read; `searched` when it was found in a folder
    rather than named, so that a JSON file that holds no task rows is passed over."""

    path: Path
    searched: bool = False


def file_format(path: Path) -> str | None:
    """`json`, `jsonl`, `json.gz`, `jsonl.gz`, `parquet`, `arrow` (a saved dataset), or None."""
    if path.is_dir():
        return SAVED_DATASET if is_saved_dataset(path) else None
    name = path.name.lower()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix.lstrip(".")
    return None


def is_saved_dataset(folder: Path) -> bool:
    """A folder as `datasets.Dataset.save_to_disk` writes it."""
    return all((folder / name).is_file() for name in _SAVED_DATASET_FILES) and any(
        folder.glob("data-*.arrow")
    )


def discover(paths: Sequence[Path]) -> Iterator[TaskFile | IngestProblem]:
    """Every task file named or found under a named folder, in the order given then sorted."""
    for path in paths:
        if path.is_dir() and not is_saved_dataset(path):
            found = _search(path)
            if not found:
                yield IngestProblem(source=str(path), message="folder holds no task files")
            yield from (TaskFile(p, searched=True) for p in found)
        elif path.exists():
            if file_format(path) is not None:
                yield TaskFile(path)
            else:
                yield IngestProblem(
                    source=str(path),
                    message="unsupported file type; expected one of "
                    f"{', '.join(SUFFIXES)} or a save_to_disk folder",
                )
        else:
            yield IngestProblem(source=str(path), message="no such file or folder")


def _search(folder: Path) -> list[Path]:
    """The task files under `folder`; a saved dataset is one of them, not searched within."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        if is_saved_dataset(here):
            found.append(here)
            dirs[:] = []
            continue
        found += [here / name for name in files if file_format(here / name) is not None]
    return sorted(found)


def read_rows(found: TaskFile | Path) -> Iterator[RawRow | IngestProblem]:
    """The rows of one task file; an unreadable file yields one problem and no rows."""
    task_file = found if isinstance(found, TaskFile) else TaskFile(found)
    path = task_file.path
    kind = file_format(path)
    if kind == "parquet":
        yield from _parquet_rows(path)
        return
    if kind == SAVED_DATASET:
        yield from _saved_dataset_rows(path)
        return
    try:
        if kind in ("json.gz", "jsonl.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        yield IngestProblem(source=str(path), message=f"cannot read file: {exc}")
        return
    if kind in ("jsonl", "jsonl.gz"):
        yield from _jsonl_rows(path, text)
    else:
        yield from _json_rows(path, text, searched=task_file.searched)


def is_task_row(data: Any) -> bool:
    """Whether a JSON object looks like a task row (it has an id, or is an R2E-Gym row)."""
    return isinstance(data, dict) and ("instance_id" in data or is_r2egym_row(data))


def _json_rows(path: Path, text: str, *, searched: bool) -> Iterator[RawRow | IngestProblem]:
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
    elif not searched or is_task_row(data):
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


def saved_dataset_table(folder: Path) -> Any:
    """A `save_to_disk` folder's rows as one pyarrow table, its data files in `state.json`'s
    order (else sorted by name)."""
    import pyarrow as pa

    tables = []
    for data_file in _data_files(folder):
        with pa.OSFile(str(data_file), "rb") as source:
            tables.append(pa.ipc.open_stream(source).read_all())
    return pa.concat_tables(tables) if tables else pa.table({})


def _data_files(folder: Path) -> list[Path]:
    try:
        state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        listed = [folder / entry["filename"] for entry in state["_data_files"]]
    except (OSError, ValueError, KeyError, TypeError):
        listed = []
    return listed or sorted(folder.glob("data-*.arrow"))


def _saved_dataset_rows(folder: Path) -> Iterator[RawRow | IngestProblem]:
    import pyarrow as pa

    number = 0
    try:
        table = saved_dataset_table(folder)
        for batch in table.to_batches(max_chunksize=_PARQUET_BATCH_ROWS):
            for row in batch.to_pylist():
                number += 1
                data = {key: _plain(value) for key, value in row.items()}
                source = f"{folder}:row {number}"
                yield RawRow(
                    source=source, folder=folder.parent, data=data, path=folder, number=number
                )
    except (OSError, pa.ArrowException) as exc:
        yield IngestProblem(source=str(folder), message=f"cannot read the saved dataset: {exc}")
