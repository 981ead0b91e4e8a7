"""`hackaudit env build`: the task images built ahead of any run."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli.commands.options import ReposDir, TaskPaths
from hackaudit.cli.commands.terminal import console, err, ingest, use_repos


def env_build(tasks: TaskPaths, repos: ReposDir = None) -> None:
    """Build the image of every task that has none yet (tagged by a hash of its inputs)."""
    use_repos(repos)
    from hackaudit.cli.environments import ensure_images

    ingested = ingest(tasks)
    ready = ensure_images(ingested.tasks, err)
    table = Table(title="task images")
    for column in ("task", "status", "image", "seconds"):
        table.add_column(column)
    for o in ready.outcomes:
        table.add_row(
            o.instance_id, o.status.value, escape(o.image or o.reason), f"{o.seconds:.1f}"
        )
    console.print(table)
    if ready.failed:
        raise typer.Exit(1)
