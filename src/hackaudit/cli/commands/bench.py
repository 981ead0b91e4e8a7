"""`hackaudit bench sandbox` and `bench scale`: figures of the sandbox on this machine — its
overhead per run beside a naive runner, and its throughput and queue lag as workers are added."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from hackaudit.cli.commands.options import (
    EXAMPLE_TASKS,
    ExampleTaskPaths,
    IsolationMode,
    Isolations,
)
from hackaudit.cli.commands.terminal import console, err, ingest

if TYPE_CHECKING:  # the sandbox's packages are loaded only when a benchmark runs
    from hackaudit.sandbox.bench_scale import ScaleFigures
    from hackaudit.sandbox.settings import Isolation


def bench_sandbox(
    tasks: ExampleTaskPaths = None,
    task_id: Annotated[
        list[str] | None, typer.Option("--task", help="Tasks to measure (default: one per repo).")
    ] = None,
    runs: Annotated[int, typer.Option(help="Runs per mode and worker count.", min=1)] = 20,
    workers: Annotated[int, typer.Option(help="Concurrent runs in the parallel case.", min=1)] = 2,
    isolation: Isolations = None,
) -> None:
    """Per-run overhead of the sandbox over the bare test command, and runs per minute with 1
    and N workers, beside a naive runner doing what the SWE-bench harness does per candidate
    (each `--isolation` mode given; default: warm and container)."""
    from hackaudit.cli.environments import ensure_images
    from hackaudit.sandbox.bench import benchmark

    modes = _isolations(isolation or [IsolationMode.WARM, IsolationMode.CONTAINER])
    ingested = ingest(tasks or [EXAMPLE_TASKS])
    chosen = [t for t in ingested.tasks if not task_id or t.instance_id in task_id]
    if not task_id:
        chosen = list({t.repo: t for t in reversed(chosen)}.values())[::-1]
    ready = ensure_images(chosen, err)
    n = str(max(1, workers))
    table = Table(title=f"sandbox benchmark ({runs} runs per cell; runs/min at 1 · {n} workers)")
    for column in ("task", "mode", "median", "overhead", "runs/min", "scaling", "vs naive",
                   "CPU/run", "load"):  # fmt: skip
        table.add_column(column, justify="right")
    for task in ready.tasks:
        assert task.image is not None
        f = benchmark(task.image, task, runs=runs, workers=workers, isolations=modes)
        _add_benchmark_rows(table, task.instance_id, f, n)
    if not ready.tasks:
        raise typer.Exit(1)
    console.print(table)
    console.print(
        "overhead: sandbox median minus bare median (1 worker); scaling: runs/min with "
        f"{n} workers ÷ with 1; vs naive: sandbox runs/min ÷ naive runs/min; CPU/run: the whole "
        "machine's busy CPU per run (1 worker), so other load counts too — see the load column."
    )


def _add_benchmark_rows(table: Table, instance_id: str, f: dict[str, Any], n: str) -> None:
    """One task's rows: the bare command, each isolation mode, and the naive runner."""
    bare, naive = f["bare"], f["naive"]
    table.add_row(instance_id, "bare", f"{bare['median_s']:.3f}s", "", "", "", "",
                  f"{bare['cpu_per_run_s']:.3f}s", f"{bare['load']:.1f}")  # fmt: skip
    for mode, cells in f["sandbox"].items():
        ratio = f["throughput_ratio"][mode]
        table.add_row(
            "",
            mode,
            f"{cells['1']['median_s']:.3f}s",
            f"{f['overhead_median_s'][mode]:+.3f}s",
            f"{cells['1']['runs_per_min']:.0f} · {cells[n]['runs_per_min']:.0f}",
            f"{f['scaling'][mode]:.2f}×",
            f"{ratio['1']:.2f}× · {ratio[n]:.2f}×",
            f"{cells['1']['cpu_per_run_s']:.3f}s",
            f"{cells['1']['load']:.1f}",
        )
    table.add_row(
        "",
        "naive",
        f"{naive['1']['median_s']:.3f}s",
        f"{naive['1']['median_s'] - bare['median_s']:+.3f}s",
        f"{naive['1']['runs_per_min']:.0f} · {naive[n]['runs_per_min']:.0f}",
        f"{f['scaling']['naive']:.2f}×",
        "1.00×",
        f"{naive['1']['cpu_per_run_s']:.3f}s",
        f"{naive['1']['load']:.1f}",
    )


def bench_scale_command(
    tasks: ExampleTaskPaths = None,
    task_id: Annotated[
        str | None, typer.Option("--task", help="Task to run (default: the first one).")
    ] = None,
    runs: Annotated[int, typer.Option(help="Runs in each worker count's burst.", min=1)] = 40,
    workers: Annotated[
        list[int] | None,
        typer.Option("--workers", help="Worker counts (default 1, 2, 4).", min=1),
    ] = None,
    isolation: Isolations = None,
    sample_s: Annotated[
        float, typer.Option(help="Seconds between queue-lag samples.", min=0.1)
    ] = 2.0,
) -> None:
    """Sandbox runs per minute and queue lag over time with 1, 2 and 4 sandbox worker
    processes on one embedded NATS server, on this machine (each `--isolation` mode given;
    default: warm)."""
    from hackaudit.cli.environments import ensure_images
    from hackaudit.sandbox.bench_scale import bench_scale

    modes = _isolations(isolation or [IsolationMode.WARM])
    ingested = ingest(tasks or [EXAMPLE_TASKS])
    chosen = [t for t in ingested.tasks if task_id is None or t.instance_id == task_id][:1]
    ready = ensure_images(chosen, err)
    if not ready.tasks:
        raise typer.Exit(1)
    task = ready.tasks[0]
    counts = tuple(sorted(set(workers or (1, 2, 4))))
    for mode in modes:
        figures = bench_scale(task, counts=counts, runs=runs, isolation=mode, sample_s=sample_s)
        _print_scale(figures, task.instance_id, runs, mode)


def _print_scale(figures: list[ScaleFigures], instance_id: str, runs: int, mode: str) -> None:
    """One isolation mode's figures: runs per minute per worker count, then the lag."""
    table = Table(title=f"sandbox tier on this machine: {instance_id}, {runs} runs, {mode}")
    for column in ("workers", "runs/min", "× 1 worker", "wall", "CPU/run", "load", "resolved"):
        table.add_column(column, justify="right")
    base = figures[0].runs_per_min or 1.0
    for f in figures:
        table.add_row(
            str(f.workers),
            f"{f.runs_per_min:.0f}",
            f"{f.runs_per_min / base:.2f}×",
            f"{f.wall_s:.1f}s",
            f"{f.cpu_per_run_s:.2f}s",
            f"{f.load:.1f}",
            f"{f.resolved}/{f.runs}",
        )
    console.print(table)
    _print_lags(figures)
    console.print(
        f"{os.cpu_count()} CPUs here. CPU/run: the whole machine's busy CPU per run during the "
        "burst (other load counts too: see the load average). Runs/min stop growing with workers "
        "once workers × CPU per run fills the CPUs."
    )


def _print_lags(figures: list[ScaleFigures]) -> None:
    """The queue lag sampled over time, one column per worker count."""
    lags = Table(title="queue lag (requests waiting or running) over time")
    lags.add_column("seconds", justify="right")
    for f in figures:
        lags.add_column(f"{f.workers} worker{'s' if f.workers > 1 else ''}", justify="right")
    for row in range(max(len(f.lag) for f in figures)):
        cells = [f.lag[row] if row < len(f.lag) else None for f in figures]
        when = next(c[0] for c in cells if c is not None)
        lags.add_row(f"{when:g}", *(str(c[1]) if c else "" for c in cells))
    lags.add_row("done", *(f"{f.lag_at_end} at {f.wall_s:.0f}s" for f in figures))
    console.print(lags)


def _isolations(modes: Sequence[IsolationMode]) -> tuple[Isolation, ...]:
    """The sandbox's isolation modes these options name (typer refuses any other name)."""
    from hackaudit.sandbox.settings import Isolation

    return tuple(dict.fromkeys(Isolation(mode.value) for mode in modes))
