"""The look of every progress bar the CLI shows: label, bar, done of total, time spent."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)


def bars_columns() -> tuple[ProgressColumn, ...]:
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
