"""One audit in this process tree: the services started beside an embedded (or given) NATS, the
tasks published, their progress followed on the bus until every task is scored."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack

from rich.console import Console
from rich.progress import Progress

from hackaudit.cli import progress, report_store, runtime, services
from hackaudit.cli.bars import bars_columns
from hackaudit.cli.report_model import TaskReport
from hackaudit.cli.report_summary import hackaudit_version
from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import AuditOptions, Task, TaskIngested
from hackaudit.shared.logs import get_logger
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings

err = Console(stderr=True, soft_wrap=True)  # a progress line stays one line in a log
log = get_logger("hackaudit.cli")


async def run_audit(
    tasks: list[Task],
    options: AuditOptions,
    settings: BusSettings,
    builders: dict[str, services.Builder],
    *,
    limit_s: float,
    resumed: int = 0,
    earlier: progress.Pace | None = None,
) -> progress.AuditTracker:
    """Audit `tasks` with progress shown until every task is scored or `limit_s` passes;
    `resumed` more tasks of the audit were scored before and count as done, at the `earlier`
    pace when it is known."""
    return await follow_audit(
        tasks,
        options,
        settings,
        builders,
        lambda tracker: show_progress(tracker, limit_s),
        resumed=resumed,
        earlier=earlier,
    )


def effective_options(options: AuditOptions, builders: dict[str, services.Builder]) -> AuditOptions:
    """The options each task's audit runs with when these services run here: the judge asked
    when it runs (it always answers; left out without a backend), repair when the repairer runs
    (FIX tasks repaired, then re-audited), and this hackaudit's version recorded."""
    update: dict[str, object] = {"hackaudit_version": hackaudit_version()}
    if "judge" in builders:
        update["judge"] = True
    if "repairer" in builders:
        update["repair"] = True
    return options.model_copy(update=update)


async def follow_audit(
    tasks: list[Task],
    options: AuditOptions,
    settings: BusSettings,
    builders: dict[str, services.Builder],
    follow: Callable[[progress.AuditTracker], Awaitable[None]],
    *,
    resumed: int = 0,
    earlier: progress.Pace | None = None,
) -> progress.AuditTracker:
    """Start the services, publish `tasks`, and stop everything once `follow(tracker)` returns
    (it is called right after the tasks are published)."""
    audit_id = uuid.uuid4().hex[:8]
    options = effective_options(options, builders)
    tracker = progress.AuditTracker(
        {f"{audit_id}/{t.instance_id}": t.instance_id for t in tasks},
        repair=options.repair,
        resumed=resumed,
        earlier=earlier,
    )
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    with runtime.bus_url(settings) as url:
        if not settings.nats_url:
            await forget_earlier_run(url, settings)
        async with AsyncExitStack() as stack:
            for build in builders.values():
                await stack.enter_async_context(running(url, build(settings), settings))
            nc = await runtime.connect(url)
            stack.push_async_callback(nc.close)
            await progress.watch(nc, tracker.observe)
            publisher = await stack.enter_async_context(runtime.publisher(url, settings))
            for correlation_id, task in zip(tracker.correlation_ids, tasks, strict=True):
                msg = TaskIngested(correlation_id=correlation_id, task=task, options=options)
                await bus.publish(publisher, subjects.TASK_INGESTED, msg)
            await follow(tracker)
    return tracker


async def forget_earlier_run(url: str, settings: BusSettings) -> None:
    """Before the services of a run on its own embedded bus start: the audits an earlier,
    stopped run left queued or in flight are marked stopped in the results store (they would
    hold this run's places in flight), and that run's pending messages are dropped from the work
    stream (they would spend sandbox time on audits nobody follows). `hackaudit up` and a run on
    a given bus (`NATS_URL`) carry their audits across a restart instead."""
    path = report_store.store_path(settings)
    if path.is_file():
        stopped = DuckDBAuditStore(path).stop_unfinished()
        if stopped.count:
            err.print(
                f"{stopped.count} audit(s) left unfinished by an earlier run marked stopped",
                highlight=False,
            )
    dropped = await runtime.purge_work(url)
    log.info("earlier run forgotten", dropped_messages=dropped, store=str(path))


async def show_plain_progress(tracker: progress.AuditTracker, limit_s: float) -> None:
    plain = progress.PlainProgress()
    loop = asyncio.get_running_loop()
    start = loop.time()
    while True:
        elapsed = loop.time() - start
        for line in plain.lines(tracker, elapsed):
            err.print(line, highlight=False, markup=False)
        if tracker.done:
            return
        if elapsed > limit_s:
            err.print(f"timed out after {limit_s:.0f}s: reporting what finished")
            return
        await asyncio.sleep(1.0)


def task_reports(
    tracker: progress.AuditTracker,
    tasks: list[Task],
    resumed: Mapping[str, TaskReport] | None = None,
) -> list[TaskReport]:
    """One report item per input task, in input order (tasks that never ran have no verdict).
    A repaired task is reported by its re-audit, whose verdict names the one it replaces. A task
    in `resumed` (by instance id) is reported by that item, read from the results store."""
    by_instance = {instance: cid for cid, instance in tracker.correlation_ids.items()}
    items = []
    for task in tasks:
        if resumed and task.instance_id in resumed:
            items.append(resumed[task.instance_id])
            continue
        cid = by_instance.get(task.instance_id, "")
        repaired = tracker.repaired.get(cid)
        done = tracker.repairs.get(cid)
        first = TaskReport(
            task.instance_id, tracker.scored.get(cid), tracker.attacks.get(cid), repair=done
        )
        if repaired is not None and done is not None and done.hardened_task is not None:
            attack = tracker.reaudit_attacks.get(cid)
            items.append(
                TaskReport(
                    task.instance_id,
                    repaired,
                    attack,
                    done.hardened_task,
                    before=first,
                    repair=done,
                )
            )
            continue
        items.append(first)
    return items


async def show_progress(tracker: progress.AuditTracker, limit_s: float) -> None:
    """Bars per stage, the sandbox runs, and the tasks done with the ETA (`progress.done_text`),
    redrawn in place on a terminal; lines of text anywhere else."""
    if not err.is_terminal:  # a log file or CI: lines of text, not bars redrawn in place
        await show_plain_progress(tracker, limit_s)
        return
    total = tracker.total
    loop = asyncio.get_running_loop()
    start = loop.time()
    with Progress(*bars_columns(), console=err, transient=False) as bars:
        rows = {s: bars.add_task(label, total=total) for s, label in progress.STAGE_LABELS.items()}
        runs = bars.add_task("sandbox runs", total=None)
        done = bars.add_task(progress.done_text(tracker, 0.0), total=total)

        def draw() -> None:
            for stage, row in rows.items():
                bars.update(row, completed=tracker.reached(stage))
            bars.update(runs, completed=sum(tracker.runs.values()))
            bars.update(
                done,
                completed=tracker.finished() + tracker.resumed,
                description=progress.done_text(tracker, loop.time() - start),
            )

        while not tracker.done:
            draw()
            if loop.time() - start > limit_s:
                err.print(f"[red]timed out after {limit_s:.0f}s[/]: reporting what finished")
                return
            await asyncio.sleep(0.2)
        draw()
        bars.update(runs, total=sum(tracker.runs.values()))
