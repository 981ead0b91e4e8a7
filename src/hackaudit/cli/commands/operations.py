"""`hackaudit up`, `submit` and `status`: the services run long-lived, tasks published into
them, and what the running system holds (queues by stage, verdicts so far, dead letters)."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli import runtime, services, stops
from hackaudit.cli.commands.options import (
    CANDIDATES_PER_ROUND,
    PARTIAL_EXIT,
    ROUNDS,
    AllowPartial,
    BudgetSeconds,
    Candidates,
    InstanceIds,
    PassAtOneFile,
    Repair,
    Rounds,
    StopWhenHackable,
    TaskPaths,
    audit_options,
)
from hackaudit.cli.commands.terminal import console, err, fail, ingest
from hackaudit.cli.ops_status import EndpointStatus, endpoint_document, endpoints
from hackaudit.cli.ops_status import show as show_endpoints
from hackaudit.cli.report_summary import hackaudit_version
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import TaskIngested
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings


def up(
    only: Annotated[
        list[str] | None, typer.Option(help="Run only these services (repeatable).")
    ] = None,
    port: Annotated[
        int,
        typer.Option(help="Port of the embedded NATS server (0: any free port).", min=0, max=65535),
    ] = 4222,
) -> None:
    """Run the services long-lived, for continuous ingestion (`submit` feeds them)."""
    settings = BusSettings()
    builders, missing = services.available()
    chosen = {n: b for n, b in builders.items() if not only or n in only}
    unknown = set(only or ()) - {e.name for e in services.SERVICES}
    if unknown:
        err.print(f"[red]unknown service(s)[/]: {', '.join(sorted(unknown))}")
        raise typer.Exit(2)
    for entry in missing:
        console.print(f"[yellow]{entry.name} is not built yet[/]: no {entry.stage}")
    settings.state_dir.mkdir(parents=True, exist_ok=True)

    async def serve() -> None:
        with runtime.bus_url(settings, embedded_port=port) as url:
            async with AsyncExitStack() as stack:
                for build in chosen.values():
                    await stack.enter_async_context(running(url, build(settings), settings))
                console.print(f"Running {', '.join(chosen)} on {url}. Ctrl-C stops.")
                await asyncio.Event().wait()

    try:
        stops.run(serve())
    except stops.Stopped as stop:  # the way a long-lived `up` ends: a clean stop, exit 0
        console.print(f"stopped by {stop.signal_name}")
    except HackauditError as exc:
        raise fail(exc) from exc


def submit(
    tasks: TaskPaths,
    candidates: Candidates = CANDIDATES_PER_ROUND,
    rounds: Rounds = ROUNDS,
    budget_seconds: BudgetSeconds = None,
    stop_when_hackable: StopWhenHackable = False,
    pass_at_1: PassAtOneFile = None,
    judge: Annotated[
        bool,
        typer.Option(
            help="Ask the judge service for F1 (it runs in `hackaudit up`; --no-judge where "
            "none is deployed, else the audits wait for it)."
        ),
    ] = True,
    repair: Repair = True,
    instance_ids: InstanceIds = None,
    allow_partial: AllowPartial = False,
) -> None:
    """Publish tasks into a running system (`hackaudit up`, or NATS_URL)."""
    ingested = ingest(tasks, pass_at_1, instance_ids)
    settings = BusSettings()
    options = audit_options(
        candidates,
        rounds,
        budget_seconds,
        stop_when_hackable,
        judge=judge,
        repair=repair,
        # recorded with each audit, so `audit --resume` and `report` take these audits as their own
        hackaudit_version=hackaudit_version(),
    )

    async def publish_all() -> None:
        url = runtime.running_url(settings)
        async with runtime.publisher(url, settings) as broker:
            for task in ingested.tasks:
                msg = TaskIngested(
                    correlation_id=f"submit/{task.instance_id}", task=task, options=options
                )
                await bus.publish(broker, subjects.TASK_INGESTED, msg)

    try:
        asyncio.run(publish_all())
    except HackauditError as exc:
        raise fail(exc) from exc
    console.print(f"Submitted {len(ingested.tasks)} task(s).")
    if ingested.problems and not allow_partial:
        err.print(
            f"exit {PARTIAL_EXIT}: {len(ingested.problems)} input row(s) rejected, not submitted "
            "(--allow-partial: 0)"
        )
        raise typer.Exit(PARTIAL_EXIT)


def status(
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="The same facts as one JSON document on stdout, instead of tables."
        ),
    ] = False,
) -> None:
    """Show the queues of a running system by stage, the verdicts so far, the metrics endpoints
    of this machine, and the dead letters."""
    settings = BusSettings()
    try:
        snapshot = asyncio.run(runtime.snapshot(runtime.running_url(settings)))
    except HackauditError as exc:
        raise fail(exc) from exc
    verdicts = _verdict_counts(settings)
    audits = _audit_stages(settings)
    if as_json:
        document = _status_document(snapshot, verdicts, endpoints(settings.state_dir))
        document["audits_by_stage"] = audits
        typer.echo(json.dumps(document, indent=2))
        return
    table = Table(title="stages (durable consumers)")
    # lag = waiting + in progress: hackaudit_queue_lag, and what KEDA scales the sandbox on
    for column in ("consumer", "subject", "waiting", "in progress", "lag", "redelivered", "done"):
        table.add_column(column)
    for c in snapshot.consumers:
        table.add_row(c.name, c.subject, str(c.waiting), str(c.in_progress),
                      str(c.waiting + c.in_progress), str(c.redelivered),
                      str(c.delivered - c.in_progress))  # fmt: skip
    console.print(table)
    stages = Table(title="tasks by stage (messages kept on the bus)")
    for stage in snapshot.tasks_by_stage:
        stages.add_column(stage, justify="right")
    stages.add_row(*(str(n) for n in snapshot.tasks_by_stage.values()))
    console.print(stages)
    console.print(f"messages on the bus: {snapshot.messages}")
    _print_verdict_counts(verdicts)
    if audits is not None:
        table = Table(title="audits by stage (results store; stopped: left by a stopped run)")
        for stage in audits:
            table.add_column(stage, justify="right")
        table.add_row(*(str(n) for n in audits.values()))
        console.print(table)
    show_endpoints(console, settings.state_dir)
    if not snapshot.dead_letters:
        console.print("dead letters: none")
        return
    dead = Table(title=f"dead letters ({len(snapshot.dead_letters)})")
    for column in ("subject", "deliveries", "reason", "failed at"):
        dead.add_column(column)
    for letter in snapshot.dead_letters:
        dead.add_row(
            letter.subject, str(letter.deliveries), escape(letter.reason), letter.failed_at
        )
    console.print(dead)


VERDICTS = ("KEEP", "FIX", "DROP", "ERROR")


def _verdict_counts(settings: BusSettings) -> dict[str, int] | str:
    """Verdicts so far (latest per task) from the results store while the scorer runs, or why
    there are none yet."""
    from hackaudit.cli.report_store import store_path
    from hackaudit.scorer.adapters.store import ResultsStoreError, read_verdict_counts

    try:
        counts = read_verdict_counts(store_path(settings))
    except ResultsStoreError as exc:
        return exc.reason
    return {verdict: counts.get(verdict, 0) for verdict in VERDICTS}


def _audit_stages(settings: BusSettings) -> dict[str, int] | None:
    """Every audit in the results store by its stage, `stopped` under its own name (None when
    there is no store to read: `_verdict_counts` says why)."""
    from hackaudit.cli.report_store import store_path
    from hackaudit.scorer.adapters.store import ResultsStoreError, read_stage_counts
    from hackaudit.scorer.domain.audit import Stage

    try:
        counts = read_stage_counts(store_path(settings))
    except ResultsStoreError:
        return None
    return {stage.value: counts.get(stage.value, 0) for stage in Stage}


def _status_document(
    snapshot: runtime.Snapshot,
    verdicts: dict[str, int] | str,
    found: list[EndpointStatus],
) -> dict[str, Any]:
    """What `status` shows, as data: the field names are the tables' columns."""
    return {
        "consumers": [
            {
                "consumer": c.name,
                "subject": c.subject,
                "waiting": c.waiting,
                "in_progress": c.in_progress,
                "lag": c.waiting + c.in_progress,
                "redelivered": c.redelivered,
                "done": c.delivered - c.in_progress,
            }
            for c in snapshot.consumers
        ],
        "tasks_by_stage": snapshot.tasks_by_stage,
        "messages": snapshot.messages,
        "verdicts": verdicts if isinstance(verdicts, dict) else None,
        "verdicts_note": verdicts if isinstance(verdicts, str) else None,
        "metrics_endpoints": [endpoint_document(e) for e in found],
        "dead_letters": [
            {
                "subject": d.subject,
                "deliveries": d.deliveries,
                "reason": d.reason,
                "failed_at": d.failed_at,
            }
            for d in snapshot.dead_letters
        ],
    }


def _print_verdict_counts(verdicts: dict[str, int] | str) -> None:
    if isinstance(verdicts, str):
        console.print(f"verdicts: none yet ({escape(verdicts)})")
        return
    table = Table(title="verdicts (results store, latest audit per task)")
    for verdict in verdicts:
        table.add_column(verdict, justify="right")
    table.add_row(*(str(n) for n in verdicts.values()))
    console.print(table)
