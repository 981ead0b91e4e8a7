"""`hackaudit eval judge`: the configured judge against patches of known truth, with what it
cost."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli.commands.options import (
    EXAMPLE_TASKS,
    LABELS,
    REAL_LABELS,
    ExampleTaskPaths,
    GroundTruth,
)
from hackaudit.cli.commands.terminal import console, err
from hackaudit.shared.contracts import JudgeUsage
from hackaudit.shared.settings import BusSettings

if TYPE_CHECKING:  # the judge's packages are loaded only when the command runs
    from hackaudit.cli.judge_eval import Judged, TrustFigures


def eval_judge(
    tasks: ExampleTaskPaths = None,
    labels: GroundTruth = LABELS,
    real: Annotated[
        Path | None,
        typer.Option(
            help="Rebuilt real corpus (tasks.jsonl, ground-truth/; default: <state dir>/"
            "real-corpus); skipped if absent."
        ),
    ] = None,
    real_labels: Annotated[Path, typer.Option(help="The real corpus's labels.")] = REAL_LABELS,
    samples: Annotated[int, typer.Option(help="Samples per patch.", min=1)] = 3,
) -> None:
    """The judge against patches of known truth: accuracy, precision / recall on "incorrect",
    abstention rate, agreement between samples, and what it cost (HACKAUDIT_JUDGE_* settings)."""
    from hackaudit.cli import judge_eval
    from hackaudit.judge.bootstrap import bootstrap
    from hackaudit.judge.settings import JudgeSettings

    settings = JudgeSettings()
    if settings.backend is None:
        err.print("[red]no judge backend configured[/]: nothing to evaluate (see README, judge)")
        raise typer.Exit(2)
    items = judge_eval.example_items(tasks or [EXAMPLE_TASKS], labels)
    state_dir = BusSettings().state_dir
    more, note = judge_eval.real_items(real or state_dir / "real-corpus", real_labels)
    console.print(escape(note))
    judge = bootstrap(settings, state_dir)

    async def ask() -> tuple[list[judge_eval.Judged], list[JudgeUsage], list[str]]:
        try:
            return await judge_eval.judge_items(judge, items + more, samples)
        finally:
            if judge.model is not None:
                await judge.model.close()

    rows, usages, left_out = asyncio.run(ask())
    _print_judged(rows, f"judge {settings.backend} {settings.model_name} against known truth")
    _print_figures(judge_eval.figures(rows), judge_eval.total_usage(usages))
    for why in left_out:
        console.print(f"[yellow]left out[/]: {escape(why)}")


def _print_judged(rows: list[Judged], title: str) -> None:
    """Every patch with its truth, each sample's answer and the judge's verdict."""
    table = Table(title=title)
    for column in ("task", "patch", "truth", "samples", "judge"):
        table.add_column(column)
    for r in rows:
        details = r.verdict.details if r.verdict else ()
        said = " ".join(s.label.value if s.outcome.value == "answered" else s.outcome.value
                        for s in details)  # fmt: skip
        table.add_row(r.item.task.instance_id, r.item.source, r.item.truth, said,
                      r.said or "abstain")  # fmt: skip
    console.print(table)


def _print_figures(f: TrustFigures, u: JudgeUsage) -> None:
    """The judge's accuracy, precision and recall on "incorrect", abstentions, agreement, cost."""

    def show(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    console.print(
        f"patches: {f.total}; accuracy {show(f.accuracy)} ({f.hits}/{f.answered} answered); "
        f'on "incorrect": precision {show(f.precision_incorrect)} '
        f"({f.true_incorrect}/{f.said_incorrect}), recall {show(f.recall_incorrect)} "
        f"({f.true_incorrect}/{f.actually_incorrect}); abstained {f.abstained} "
        f"({show(f.abstention_rate)}); samples unanimous on {f.unanimous}, pairwise agreement "
        f"{show(f.pairwise_agreement)}"
    )
    cost = f"${u.cost_usd:.4f}" if u.priced else "unpriced (set HACKAUDIT_JUDGE_PRICE_*)"
    console.print(
        f"cost: {u.calls} model calls, {u.cache_hits} cached, {u.input_tokens} input + "
        f"{u.output_tokens} output tokens, {cost}"
    )
