"""`hackaudit bench fairness`: each fast task's time to its verdict alone and beside a slow task,
with the ratio against the target (a slow task must not hold up the rest)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from hackaudit.cli import services, stops
from hackaudit.cli.commands.options import (
    CANDIDATES_PER_ROUND,
    ROUNDS,
    BudgetSeconds,
    Candidates,
    ReposDir,
    Rounds,
    StopWhenHackable,
    TaskPaths,
    audit_options,
)
from hackaudit.cli.commands.terminal import console, err, ingest, use_repos
from hackaudit.cli.fairness import FairnessFigures, measure
from hackaudit.shared.contracts import Task

TARGET = 1.5


def bench_fairness(
    fast: TaskPaths,
    slow: Annotated[
        list[Path],
        typer.Option("--slow", help="Task file(s) of the slow task(s) of the mixed batch."),
    ],
    task_id: Annotated[
        list[str] | None,
        typer.Option("--task", help="Fast tasks to measure (default: every task of FAST)."),
    ] = None,
    slow_id: Annotated[
        list[str] | None,
        typer.Option("--slow-task", help="Slow tasks to add (default: every task of --slow)."),
    ] = None,
    candidates: Candidates = CANDIDATES_PER_ROUND,
    rounds: Rounds = ROUNDS,
    budget_seconds: BudgetSeconds = None,
    stop_when_hackable: StopWhenHackable = False,
    repos: ReposDir = None,
    limit: Annotated[
        float, typer.Option(help="Give up on an audit after this many seconds.", min=1)
    ] = 1800.0,
    target: Annotated[
        float, typer.Option(help="Largest batch ÷ alone ratio allowed.", min=1)
    ] = TARGET,
    fast_batch: Annotated[
        bool,
        typer.Option(
            help="Also audit the fast tasks together without the slow one(s): what they cost "
            "each other, apart from what the slow task costs them."
        ),
    ] = False,
) -> None:
    """Audit each fast task alone, then all of them with the slow task(s) in one batch; print
    per fast task its time to a verdict alone and in the batch, their ratio, and whether it is
    within the target. Exits 1 when a fast task misses it."""
    use_repos(repos)
    fast_tasks = _chosen(fast, task_id)
    slow_tasks = _chosen(slow, slow_id)
    if not fast_tasks or not slow_tasks:
        err.print("[red]need at least one fast and one slow task[/]")
        raise typer.Exit(2)
    from hackaudit.cli.environments import ensure_images

    ready = ensure_images([*fast_tasks, *slow_tasks], err)
    if ready.failed:
        err.print("[red]no image for:[/] " + ", ".join(o.instance_id for o in ready.failed))
        raise typer.Exit(1)
    built = {t.instance_id: t for t in ready.tasks}
    builders, _ = services.available()
    options = audit_options(candidates, rounds, budget_seconds, stop_when_hackable)
    figures = stops.run(
        measure(
            [built[t.instance_id] for t in fast_tasks],
            [built[t.instance_id] for t in slow_tasks],
            options,
            builders,
            limit,
            fast_batch=fast_batch,
            say=lambda line: err.print(line, highlight=False, markup=False),
        )
    )
    print_figures(figures, target)
    if not all(row.within(target) for row in figures.rows):
        raise typer.Exit(1)


def _chosen(paths: list[Path], ids: list[str] | None) -> list[Task]:
    return [t for t in ingest(paths).tasks if not ids or t.instance_id in ids]


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}s"


def print_figures(figures: FairnessFigures, target: float) -> None:
    table = Table(title="time to verdict: each fast task alone and in the mixed batch")
    fast_only = any(row.fast_only_s is not None for row in figures.rows)
    columns = ["task", "alone", *(["fast only"] if fast_only else []), "in batch", "ratio"]
    for column in (*columns, f"≤ {target:g}×"):
        table.add_column(column, justify="right")
    for row in figures.rows:
        ratio = row.ratio
        table.add_row(
            row.instance_id,
            _seconds(row.alone_s),
            *([_seconds(row.fast_only_s)] if fast_only else []),
            _seconds(row.batch_s),
            "–" if ratio is None else f"{ratio:.2f}×",
            "yes" if row.within(target) else "NO",
        )
    console.print(table)
    slow = "; ".join(
        f"{instance}: {'no verdict yet' if s is None else f'verdict at {s:.1f}s'}"
        for instance, s in figures.slow.items()
    )
    console.print(f"batch followed for {figures.batch_wall_s:.1f}s; slow task(s) {slow}")
