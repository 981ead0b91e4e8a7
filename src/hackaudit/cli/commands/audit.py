"""`hackaudit audit` and `hackaudit report`: a whole audit in this process tree, and the report
written again from the results store; both end with the same verdict table."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli import dataset, pipeline, progress, report, report_folder, services, stops
from hackaudit.cli.commands.options import (
    CANDIDATES_PER_ROUND,
    PARTIAL_EXIT,
    ROUNDS,
    TIMEOUT_S,
    AllowPartial,
    BudgetSeconds,
    Candidates,
    GiveUpAfter,
    GoldRepeats,
    InstanceIds,
    PassAtOneFile,
    Repair,
    ReportFolder,
    ReposDir,
    Rounds,
    StopWhenHackable,
    TaskPaths,
    audit_options,
)
from hackaudit.cli.commands.terminal import console, err, fail, ingest, use_repos
from hackaudit.cli.report_model import TaskReport, not_verified
from hackaudit.cli.report_summary import Headline, Rejected, verdict_as_audited
from hackaudit.shared.contracts import AuditOptions, Task
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.settings import BusSettings

IN_PROGRESS = "not scored in the results store (yet): its audit is running or was stopped"
NOT_IN_STORE = "not in the results store: submitted but not seen by the scorer (yet)"
SummaryJson = Annotated[
    bool,
    typer.Option("--json", help="Print the summary (report.json's) as JSON instead of a table."),
]
Resume = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="Skip the tasks whose latest finished audit in the results store ran on the same "
        "task, budget and hackaudit version; report them from the store.",
    ),
]


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
    allow_partial: AllowPartial = False,
    as_json: SummaryJson = False,
    instance_ids: InstanceIds = None,
    resume: Resume = False,
    repair: Repair = True,
) -> None:
    """Audit task files end to end: every service in this process tree, until every task has a
    verdict; then a summary, the report, and every input row by verdict in `<out>/dataset/`
    (rows that could not be read in `dataset/rejected.jsonl`). With `--resume`, tasks already
    scored with the same inputs, budget and version are reported from the results store."""
    check_out(out)
    use_repos(repos)
    ingested = ingest(tasks, pass_at_1, instance_ids)
    settings = BusSettings()
    builders, missing = services.available()
    if not repair:
        builders.pop("repairer", None)
    if missing:
        err.print(
            "[yellow]Not built yet[/], so left out of this audit: "
            + "; ".join(f"{m.name} ({m.stage})" for m in missing)
        )
    if "scorer" not in builders or "sandbox" not in builders:
        err.print("[red]the scorer and the sandbox are needed to audit anything[/]")
        raise typer.Exit(2)
    options = pipeline.effective_options(
        audit_options(
            candidates, rounds, budget_seconds, stop_when_hackable, gold_repeats=gold_repeats
        ),
        builders,
    )
    resumed = resumed_tasks(ingested.tasks, options, settings) if resume else {}
    earlier = resumed_pace(settings, resumed) if resumed else None
    todo = [t for t in ingested.tasks if t.instance_id not in resumed]
    from hackaudit.cli.environments import ImagesReady, ensure_images

    ready = ensure_images(todo, err) if todo else ImagesReady([], [])
    try:
        tracker = (
            progress.AuditTracker({}, resumed=len(resumed))
            if resume and not ready.tasks  # nothing left to run: no services, no bus
            else stops.run(
                pipeline.run_audit(
                    ready.tasks,
                    options,
                    settings,
                    builders,
                    limit_s=timeout,
                    resumed=len(resumed),
                    earlier=earlier,
                )
            )
        )
    except HackauditError as exc:
        raise fail(exc) from exc
    items = pipeline.task_reports(tracker, ingested.tasks, resumed)
    unaudited = {o.instance_id: f"no image: {o.reason}" for o in ready.failed}
    rejected = [Rejected.of(p) for p in ingested.problems]
    top, written = report.write_audit(
        out,
        items,
        ingested.sources,
        missing_stages=[m.name for m in missing],
        rejected=rejected,
        unaudited=unaudited,
        attacker=services.attacker_text(),
    )
    finish(out, items, top, written, as_json=as_json, allow_partial=allow_partial)


def resumed_tasks(
    tasks: list[Task], options: AuditOptions, settings: BusSettings
) -> dict[str, TaskReport]:
    """The tasks `--resume` skips, with their report items from the results store (none when
    there is no store yet); says how many, before anything starts."""
    from hackaudit.cli.report_store import resumable, store_path
    from hackaudit.scorer.adapters.store import read_results

    path = store_path(settings)
    try:
        found = resumable(read_results(path), tasks, options) if path.is_file() else {}
    except HackauditError as exc:
        raise fail(exc) from exc
    err.print(
        f"resuming: {len(found)} of {len(tasks)} task(s) already scored with the same inputs, "
        f"budget and version; auditing {len(tasks) - len(found)}",
        highlight=False,
    )
    return found


def resumed_pace(settings: BusSettings, instance_ids: Collection[str]) -> progress.Pace | None:
    """The pace earlier runs kept on the resumed tasks (`progress.earlier_pace`), from the times
    the results store recorded for each one's latest scored audit; None when it recorded none
    (a store written before times were)."""
    from hackaudit.cli.report_store import store_path
    from hackaudit.scorer.adapters.store import read_audit_times

    try:
        times = read_audit_times(store_path(settings))
    except HackauditError as exc:
        raise fail(exc) from exc
    spans: dict[str, tuple[datetime, datetime]] = {}
    for t in times.values():
        if t.instance_id not in instance_ids or t.started_at is None or t.scored_at is None:
            continue
        if t.instance_id not in spans or spans[t.instance_id][1] < t.scored_at:
            spans[t.instance_id] = (t.started_at, t.scored_at)
    return progress.earlier_pace(spans.values())


def check_out(out: Path) -> None:
    """Refuse a `--out` that is not a report folder before any work is done (exit 2)."""
    try:
        report_folder.check(out)
    except report_folder.FolderRefused as exc:
        raise fail(exc, 2) from exc


def finish(
    out: Path,
    items: list[TaskReport],
    top: Headline,
    written: dataset.DatasetSummary | None,
    *,
    as_json: bool,
    allow_partial: bool,
    strict: bool = True,
) -> None:
    """The summary on stdout (a table, or report.json's summary with `--json`), where the
    report is, and the exit code: `PARTIAL_EXIT` when rows were rejected or tasks could not be
    audited (`strict`), unless the run allows it."""
    if as_json:
        summary = json.loads((out / "report.json").read_text())["summary"]
        typer.echo(json.dumps(summary, indent=2))
    else:
        print_summary(items)
        for line in top.lines():
            console.print(escape(line), highlight=False, soft_wrap=True)
        where = f"Report: {out / 'report.md'} and {out / 'report.html'}"
        console.print(where, highlight=False, soft_wrap=True)
        if written is not None:
            console.print(escape(dataset.summary_line(written)), highlight=False, soft_wrap=True)
    if not top.partial:
        return
    err.print(
        f"[yellow]partial[/]: {top.rejected} input row(s) rejected (dataset/rejected.jsonl), "
        f"{top.errors} task(s) without a verdict (ERROR)",
        highlight=False,
    )
    if strict and not allow_partial:
        err.print(
            f"exit {PARTIAL_EXIT}: the figures cover fewer rows than given (--allow-partial: 0)"
        )
        raise typer.Exit(PARTIAL_EXIT)


def print_summary(items: list[TaskReport]) -> None:
    table = Table(title="hackaudit verdicts")
    for column in ("task", "verdict", "as audited", "EQS", "hackable", "reason"):
        table.add_column(column)
    for item in items:
        s = item.scored
        first = verdict_as_audited(item)
        if s is None:
            table.add_row(item.instance_id, "ERROR", first, "–", "–", "no verdict")
            continue
        table.add_row(
            item.instance_id,
            escape(s.verdict.value + not_verified(s)),
            first,
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
    allow_partial: AllowPartial = False,
    as_json: SummaryJson = False,
) -> None:
    """Write the report (report.json, report.md, report.html, verdicts.jsonl, the evidence) from
    the results store, at any time: while `hackaudit up` runs, or after. Each task is reported by
    its latest scored audit."""
    from hackaudit.cli.report_store import read_reports, store_path

    check_out(out)
    path = store or store_path(BusSettings())
    try:
        items = read_reports(path)
    except HackauditError as exc:
        raise fail(exc) from exc
    _, missing = services.available()
    ingested = ingest(tasks) if tasks else None
    rejected = [Rejected.of(p) for p in ingested.problems] if ingested else []
    # Audits in the store that have no verdict yet (running, or stopped), and tasks submitted
    # but never seen by the scorer: listed without a verdict, as ERROR, with why.
    pending = {i.instance_id: i.unfinished or IN_PROGRESS for i in items if i.scored is None}
    if ingested is not None:
        known = {item.instance_id for item in items}
        pending |= {t.instance_id: NOT_IN_STORE
                    for t in ingested.tasks if t.instance_id not in known}  # fmt: skip
        items += [TaskReport(t.instance_id, None, None) for t in ingested.tasks
                  if t.instance_id not in known]  # fmt: skip
    # The rows are copied as read from the task files: the store keeps the tasks, not rows.
    top, written = report.write_audit(
        out,
        items,
        ingested.sources if ingested is not None else None,
        missing_stages=[m.name for m in missing],
        rejected=rejected,
        unaudited=pending,
        attacker=services.attacker_text(),
    )
    err.print(f"read from {path}", highlight=False)
    # A live store has audits in progress: only rows its task files could not give fail the run.
    finish(
        out, items, top, written, as_json=as_json, allow_partial=allow_partial,
        strict=bool(rejected),
    )  # fmt: skip
