"""Task images for the CLI: builds what is missing, with a progress bar, before any run."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from hackaudit.cli.bars import bars_columns
from hackaudit.sandbox.envbuild import BuildOutcome, BuildProgress, BuildStatus, build_images
from hackaudit.sandbox.envbuild import with_images as tasks_with_images
from hackaudit.shared.contracts import Task


@dataclass(frozen=True)
class ImagesReady:
    tasks: list[Task]  # the tasks whose image exists, `image` set
    outcomes: list[BuildOutcome]

    @property
    def failed(self) -> list[BuildOutcome]:
        return [o for o in self.outcomes if o.status is BuildStatus.FAILED]


def ensure_images(tasks: list[Task], console: Console) -> ImagesReady:
    with Progress(*bars_columns(), console=console) as bars:
        row = bars.add_task("task images", total=len(tasks))

        def on_progress(event: BuildProgress) -> None:
            bars.update(row, completed=event.done, description=f"task images: {event.message}"[:70])

        outcomes = build_images(tasks, progress=on_progress)
        bars.update(row, completed=len(tasks), description="task images")
    for outcome in outcomes:
        if outcome.status is BuildStatus.FAILED:
            console.print(f"[red]no image[/] for {outcome.instance_id}: {escape(outcome.reason)}")
    return ImagesReady(tasks_with_images(tasks, outcomes), outcomes)
