"""`hackaudit audit` and `hackaudit report`: a whole audit in this process tree, and the report
written again from the results store; both end with the same verdict table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli import dataset, pipeline, report, services, stops
from hackaudit.cli.commands.options import (
    CANDIDATES_PER_ROUND,
    ROUNDS,
    TIMEOUT_S,
    BudgetSeconds,
    Candidates,
    GiveUpAfter,
    GoldRepeats,
    PassAtOneFile,
    ReportFolder,
    ReposDir,
    Rounds,
    StopWhenHackable,
    TaskPaths,
    audit_options,
)
from hackaudit.cli.commands.terminal import console, err, fail, ingest, use_repos
from hackaudit.cli.report_model import TaskReport, not_verified
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.settings import BusSettings


def audit(
    tasks: TaskPaths,
    out: ReportFolder,
    candidates: Candidates = CANDIDATES_PER_ROUND,
    rounds: Rounds = ROUNDS,
    gold_repeats: GoldRepeats = 3,
    timeout: GiveUpAfter = TIMEOUT_S,
    repos: ReposDir = None,
    budget_seconds: BudgetSeconds = None,
    stop_when_hackable: StopWhenHackable = False,
    pass_at_1: PassAtOneFile = None,
) -> None:
    """Audit task files end to end: every service in this process tree, until every task has a
    verdict; then a summary table, the report, and the tasks by verdict in `<out>/dataset/`."""
    use_repos(repos)
    ingested = ingest(tasks, pass_at_1)
    settings = BusSettings()
    builders, missing = services.available()
    if missing:
        console.print(
            "[yellow]Not built yet[/], so left out of this audit: "
            + "; ".join(f"{m.name} ({m.stage})" for m in missing)
        )
    if "scorer" not in builders or "sandbox" not in builders:
        err.print("[red]the scorer and the sandbox are needed to audit anything[/]")
        raise typer.Exit(2)
    options = audit_options(
        candidates, rounds, budget_seconds, stop_when_hackable, gold_repeats=gold_repeats
    )
    from hackaudit.cli.environments import ensure_images

    ready = ensure_images(ingested.tasks, err)
    problems = [str(p) for p in ingested.problems]
    problems += [f"{o.instance_id}: no image: {o.reason}" for o in ready.failed]
    try:
        tracker = stops.run(
            pipeline.run_audit(ready.tasks, options, settings, builders, limit_s=timeout)
        )
    except HackauditError as exc:
        raise fail(exc) from exc
    items = pipeline.task_reports(tracker, ingested.tasks)
    path = report.write_report(
        out,
        items,
        missing_stages=[m.name for m in missing],
        problems=problems,
    )
    unaudited = {o.instance_id: f"no image: {o.reason}" for o in ready.failed}
    written = dataset.write_dataset(out, items, ingested.sources, unaudited=unaudited)
    print_summary(items)
    console.print(f"Report: {path}\n{dataset.summary_line(written)}")


def print_summary(items: list[TaskReport]) -> None:
    table = Table(title="hackaudit verdicts")
    for column in ("task", "verdict", "EQS", "hackable", "reason"):
        table.add_column(column)
    for item in items:
        s = item.scored
        if s is None:
            table.add_row(item.instance_id, "–", "–", "–", "no verdict (did not finish)")
            continue
        table.add_row(
            item.instance_id,
            escape(s.verdict.value + not_verified(s)),
            f"{s.eqs:.3f}" if s.eqs is not None else "–",
            "–" if s.hackable is None else ("yes" if s.hackable else "no"),
            escape(s.reason),
        )
    console.print(table)


def report_from_store(
    out: ReportFolder,
    tasks: Annotated[
        list[Path] | None,
        typer.Argument(
            help="The task files submitted: also write the hardened dataset, their rows split "
            "by verdict in their own format, to <out>/dataset/.",
        ),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(help="Results store (default: the scorer's, <state dir>/results.duckdb)."),
    ] = None,
) -> None:
    """Write the report (report.json, report.md, report.html, verdicts.jsonl, the evidence) from
    the results store, at any time: while `hackaudit up` runs, or after. Each task is reported by
    its latest scored audit."""
    from hackaudit.cli.report_store import read_reports, store_path

    path = store or store_path(BusSettings())
    try:
        items = read_reports(path)
    except HackauditError as exc:
        raise fail(exc) from exc
    _, missing = services.available()
    ingested = ingest(tasks) if tasks else None
    problems = [str(p) for p in ingested.problems] if ingested else []
    if ingested is not None:  # tasks submitted but not scored yet are listed without a verdict
        known = {item.instance_id for item in items}
        items += [TaskReport(t.instance_id, None, None) for t in ingested.tasks
                  if t.instance_id not in known]  # fmt: skip
    written = report.write_report(
        out, items, missing_stages=[m.name for m in missing], problems=problems
    )
    print_summary(items)
    console.print(f"Report: {written} and {written.with_suffix('.html')} (from {path})")
    if ingested is not None:
        # The rows are copied as read from the task files: the store keeps the tasks, not rows.
        found = dataset.write_dataset(out, items, ingested.sources)
        console.print(dataset.summary_line(found))
