"""`hackaudit tasks validate`, `tasks grade` and `tasks check`: task files checked, and given
patches graded, through the sandbox alone, with no audit around them; or only read, as an audit
would read them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli import inputs, runs, runtime, services, stops
from hackaudit.cli.commands.options import InstanceIds, ReposDir, TaskPaths
from hackaudit.cli.commands.terminal import console, err, fail, ingest, stage_bar, use_repos
from hackaudit.shared.contracts import RunCompleted, RunRequested
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings


def tasks_validate(
    tasks: TaskPaths,
    repeats: Annotated[
        int, typer.Option("--gold-repeats", help="Gold runs per task, to expose flakiness.", min=1)
    ] = 5,
    repos: ReposDir = None,
    instance_ids: InstanceIds = None,
) -> None:
    """SWE-bench's check through the sandbox: without a fix FAIL_TO_PASS fails; with gold, every
    FAIL_TO_PASS and PASS_TO_PASS test passes, every time. Exits 3 if any task fails it (or
    could not be validated)."""
    use_repos(repos)
    from hackaudit.cli.environments import ensure_images
    from hackaudit.cli.validate import REQUESTER, TaskValidity, ValidationRuns, Validity

    ingested = ingest(tasks, instance_ids=instance_ids)
    ready = ensure_images(ingested.tasks, err)
    settings = BusSettings()
    sandbox = _sandbox("validated")
    batch = uuid.uuid4().hex[:8]
    orders = [ValidationRuns.for_task(t, repeats=repeats, batch=batch) for t in ready.tasks]
    flat = [r for o in orders for r in (o.before, o.gold)]
    results = _run_in_sandbox(sandbox, settings, flat, requester=REQUESTER, bar="validation runs")
    table = Table(title="task validation")
    for column in ("task", "verdict", "detail"):
        table.add_column(column)
    verdicts = [
        TaskValidity(o.instance_id, Validity.ERROR, f"no image: {o.reason}") for o in ready.failed
    ] + [order.judge(results) for order in orders]
    for v in verdicts:
        colour = "red" if v.flagged else ("yellow" if v.validity is not Validity.VALID else "green")
        table.add_row(v.instance_id, f"[{colour}]{v.validity.value}[/]", escape(v.detail))
    failed = sum(v.flagged for v in verdicts)
    console.print(table)
    console.print(f"{len(verdicts) - failed} passed, {failed} failed")
    if failed:
        raise typer.Exit(3)


def tasks_grade(
    tasks: TaskPaths,
    predictions: Annotated[
        Path,
        typer.Option(help="SWE-bench predictions (instance_id, model_patch, model_name_or_path)."),
    ],
    variants: Annotated[
        Path | None,
        typer.Option(help="Other test suites per task: {id: [{name, test_patch, FAIL_TO_PASS}]}."),
    ] = None,
    gold_repeats: Annotated[int, typer.Option(help="Gold runs per test suite.", min=1)] = 1,
    out: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write every graded row here (JSON).")
    ] = None,
    run_id: Annotated[
        str, typer.Option(help="The run's id in the harness's report files' names and folders.")
    ] = "hackaudit",
    report_dir: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Folder for the SWE-bench harness's report files: <model>.<run id>.json and "
            "logs/run_evaluation/<run id>/<model>/<instance id>/report.json.",
        ),
    ] = Path("."),
    repos: ReposDir = None,
    instance_ids: InstanceIds = None,
) -> None:
    """Grade given patches as each task's environment does, under its own tests and any variant
    suites; lists the patches the official tests reward and a variant (that gold passes) rejects.
    Also writes the official tests' outcomes as the SWE-bench harness's report files."""
    from hackaudit.cli import grade
    from hackaudit.cli.environments import ensure_images

    use_repos(repos)
    ingested = ingest(tasks, instance_ids=instance_ids)
    try:
        given = grade.load_predictions(predictions)
        suites = grade.load_variants(variants) if variants else {}
    except grade.GradeInputError as exc:
        raise fail(exc, 2) from exc
    known = {t.instance_id for t in ingested.tasks}
    if instance_ids:  # as the harness does: predictions for tasks not asked for are not graded
        given = [p for p in given if p.instance_id in known]
    if not {p.instance_id for p in given} & known:
        message = f"{predictions}: no prediction for any of the {len(known)} task(s) given"
        raise fail(grade.GradeInputError(message), 2)
    unknown = sorted({p.instance_id for p in given} - known)
    if unknown:
        listed = ", ".join(unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        message = f"{predictions}: predictions for instance ids no task has: {listed}"
        raise fail(grade.GradeInputError(message), 2)
    ready = ensure_images(ingested.tasks, err)
    for failed in ready.failed:
        err.print(f"[red]no image[/] for {escape(failed.instance_id)}: {escape(failed.reason)}")
    sandbox = _sandbox("graded")
    settings = BusSettings()
    orders = grade.grade_orders(
        ready.tasks, given, suites, batch=uuid.uuid4().hex[:8], gold_repeats=gold_repeats
    )
    requests = [o.request for o in orders]
    results = _run_in_sandbox(
        sandbox, settings, requests, requester=grade.REQUESTER, bar="grading runs"
    )
    rows = grade.grade_rows(orders, results)
    table = Table(title="graded patches")
    for column in ("task", "patch", "tests", "outcome", "failing"):
        table.add_column(column)
    for row in rows:
        colour = "green" if row.outcome == "resolved" else "red"
        failing = ", ".join(row.failing[:3]) + (" …" if len(row.failing) > 3 else "")
        table.add_row(
            row.instance_id, escape(row.patch_name), escape(row.variant),
            f"[{colour}]{row.outcome}[/]", escape(failing or row.reason[:80]),
        )  # fmt: skip
    console.print(table)
    findings, unusable = grade.wrong_but_rewarded(rows)
    for instance_id, variant in unusable:
        console.print(f"[yellow]not used[/]: {instance_id} {variant}: gold is not resolved there")
    for f in findings:
        console.print(
            f"[bold]rewarded but wrong[/]: {f.instance_id} {escape(f.patch_name)} "
            f"(official tests pass it, {escape(f.variant)} rejects it, gold passes both)"
        )
    console.print(f"{len(findings)} wrong patches rewarded by the official tests")
    harness = grade.harness_reports(ingested.tasks, orders, results, run_id)
    for path in grade.write_harness_reports(report_dir, run_id, harness):
        console.print(f"Harness report: {escape(str(path))}")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "rows": [r.as_json() for r in rows],
            "rewarded_but_wrong": [f.__dict__ for f in findings],
            "unusable_variants": [{"instance_id": i, "variant": v} for i, v in unusable],
        }
        out.write_text(json.dumps(payload, indent=2) + "\n")


def tasks_check(
    tasks: TaskPaths,
    instance_ids: InstanceIds = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the same as one JSON document.")
    ] = False,
) -> None:
    """Read task files as `audit` would, and run nothing (no Docker, no NATS): per file the rows
    read, the valid tasks and each rejected row. Exits 0 when all are valid, 3 when some rows
    are rejected, 2 when no task is valid."""
    try:
        ingested = inputs.read_inputs(tasks, instance_ids=inputs.instance_id_list(instance_ids))
    except OSError as exc:
        raise fail(exc, 2) from exc
    if ingested.missing_ids:
        message = f"--instance-ids: not in any task file given: {', '.join(ingested.missing_ids)}"
        raise fail(ValueError(message), 2)
    checks, unplaced = inputs.file_checks(ingested)
    code = 0 if not ingested.problems else 3
    code = 2 if not ingested.tasks else code
    if as_json:
        document = {
            "files": [c.as_json() for c in checks],
            "other_problems": [inputs.rejected_json(p) for p in unplaced],
            "rows_read": sum(c.rows_read for c in checks),
            "valid": len(ingested.tasks),
            "rejected": len(ingested.problems),
            "exit_code": code,
        }
        typer.echo(json.dumps(document, indent=2))
    else:
        for check in checks:
            console.print(
                f"{escape(check.file)}: {check.rows_read} row(s) read, {check.valid} valid, "
                f"{len(check.rejected)} rejected",
                soft_wrap=True,
            )
            for problem in check.rejected:
                console.print(f"  [yellow]rejected[/]: {escape(str(problem))}", soft_wrap=True)
        for problem in unplaced:
            console.print(f"[yellow]rejected[/]: {escape(str(problem))}", soft_wrap=True)
        console.print(
            f"{len(ingested.tasks)} valid task(s), {len(ingested.problems)} rejected",
            soft_wrap=True,
        )
    if code:
        raise typer.Exit(code)


def _sandbox(what_for: str) -> services.Builder:
    """The sandbox service's builder; exits 2 when the sandbox is not built."""
    sandbox = services.builder("sandbox")
    if sandbox is None:
        err.print(f"[red]the sandbox is not built: nothing can be {what_for}[/]")
        raise typer.Exit(2)
    return sandbox


def _run_in_sandbox(
    sandbox: services.Builder,
    settings: BusSettings,
    requests: Sequence[RunRequested],
    *,
    requester: str,
    bar: str,
) -> dict[str, RunCompleted]:
    """Run these requests on a sandbox started for them, one progress bar counting results."""

    async def run_all() -> dict[str, RunCompleted]:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        with runtime.bus_url(settings) as url, stage_bar(bar, len(requests)) as tick:
            async with running(url, sandbox(settings), settings):
                return await runs.run_requests(
                    url, settings, requests, requester=requester, on_result=lambda _: tick()
                )

    try:
        return stops.run(run_all())
    except HackauditError as exc:
        raise fail(exc) from exc
