"""The `hackaudit` command line: audit task files, run the services, submit, watch, analyse."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from hackaudit.cli import (
    bus_contract,
    dataset,
    inputs,
    pipeline,
    report,
    runs,
    runtime,
    services,
    stops,
    verdicts_eval,
)
from hackaudit.cli.bars import bars_columns
from hackaudit.cli.ops_status import show as show_endpoints
from hackaudit.cli.repair_figures import KnownPatch, RepairRow
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    AuditOptions,
    RunCompleted,
    TaskIngested,
    TaskScored,
    Verdict,
)
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.ingest.pass_at_1 import PassAtOneFileError
from hackaudit.shared.logs import configure_logging
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings

app = typer.Typer(
    help="Measure and repair the reward hackability of code RL environments.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
# Piped into a file or another program, tables keep task ids whole (rich would cut them at 80
# columns); on a terminal, or with COLUMNS set, the width is the terminal's as usual.
PIPED_WIDTH = 240
console = Console(width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else PIPED_WIDTH)
err = Console(stderr=True)

TaskPaths = Annotated[
    list[Path], typer.Argument(help="Task files (SWE-bench JSON/JSONL/parquet) or folders of them.")
]
ReposDir = Annotated[
    Path | None,
    typer.Option(
        "--repos",
        help="Folder of local clones or mirrors (<owner>/<name>, <owner>+<name> or "
        "<owner>+<name>/repo) that images of tasks without a source folder are built from "
        "(sets HACKAUDIT_REPOS).",
    ),
]


def _use_repos(repos: Path | None) -> None:
    """The environment builder reads its settings from the environment, so the option goes there."""
    if repos is not None:
        os.environ["HACKAUDIT_REPOS"] = str(repos.resolve())


BudgetSeconds = Annotated[
    float | None,
    typer.Option(
        help="Attack budget per task in sandbox-seconds instead of rounds (-r): rounds of -k "
        "candidates until their runs took this long; a task with fast tests gets more.",
        min=1.0,
    ),
]
ExampleTaskPaths = Annotated[
    list[Path] | None, typer.Argument(help="Task files (default: examples/tasks).")
]
PassAtOneFile = Annotated[
    Path | None,
    typer.Option(
        "--pass-at-1",
        help="External pass@1 for D: CSV/JSON/JSONL of instance_id, successes, attempts, or a "
        "0/1 CSV matrix of submissions x tasks; replaces the task files' own figures.",
    ),
]
StopWhenHackable = Annotated[
    bool,
    typer.Option(
        help="Stop attacking a task at its first confirmed exploit (the verdict is known; "
        "H and the candidate counts then cover fewer candidates)."
    ),
]


def _ingest(paths: list[Path], pass_at_1: Path | None = None) -> inputs.Ingested:
    try:
        result = inputs.read_inputs(paths, pass_at_1)
    except PassAtOneFileError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    if result.pass_at_1_note:
        err.print(escape(result.pass_at_1_note))
    for problem in result.problems:
        err.print(f"[yellow]skipped[/]: {escape(str(problem))}")
    if not result.tasks:
        err.print("[red]no valid task in the input[/]")
        raise typer.Exit(2)
    return result


def _fail(exc: HackauditError) -> typer.Exit:
    err.print(f"[red]error:[/] {escape(str(exc))}")
    return typer.Exit(1)


@app.callback()
def main(
    log_level: Annotated[str, typer.Option(help="Log level of the services.")] = "WARNING",
    json_logs: Annotated[bool, typer.Option(help="Log JSON lines.")] = False,
) -> None:
    configure_logging(log_level, json=json_logs)


# --- audit ---------------------------------------------------------------------------------


@app.command()
def audit(
    tasks: TaskPaths,
    out: Annotated[Path, typer.Option(help="Folder for the report.")] = Path(".hackaudit/report"),
    candidates: Annotated[int, typer.Option("-k", help="Candidates per round.")] = 5,
    rounds: Annotated[int, typer.Option("-r", help="Attack rounds.")] = 3,
    gold_repeats: Annotated[int, typer.Option(help="Gold runs in the sanity check.")] = 3,
    timeout: Annotated[float, typer.Option(help="Give up after this many seconds.")] = 3600.0,
    repos: ReposDir = None,
    budget_seconds: BudgetSeconds = None,
    stop_when_hackable: StopWhenHackable = False,
    pass_at_1: PassAtOneFile = None,
) -> None:
    """Audit task files end to end: every service in this process tree, until every task has a
    verdict; then a summary table, the report, and the tasks by verdict in `<out>/dataset/`."""
    _use_repos(repos)
    ingested = _ingest(tasks, pass_at_1)
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
    options = AuditOptions(
        candidates_per_round=candidates,
        rounds=rounds,
        gold_repeats=gold_repeats,
        budget_seconds=budget_seconds,
        stop_when_hackable=stop_when_hackable,
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
        raise _fail(exc) from exc
    items = pipeline.task_reports(tracker, ingested.tasks)
    path = report.write_report(
        out,
        items,
        missing_stages=[m.name for m in missing],
        problems=problems,
    )
    unaudited = {o.instance_id: f"no image: {o.reason}" for o in ready.failed}
    written = dataset.write_dataset(out, items, ingested.sources, unaudited=unaudited)
    _print_summary(items)
    console.print(f"Report: {path}\n{dataset.summary_line(written)}")


def _print_summary(items: list[report.TaskReport]) -> None:
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
            s.verdict.value,
            f"{s.eqs:.3f}" if s.eqs is not None else "–",
            "–" if s.hackable is None else ("yes" if s.hackable else "no"),
            escape(s.reason),
        )
    console.print(table)


@app.command("report")
def report_from_store(
    out: Annotated[Path, typer.Option(help="Folder for the report.")] = Path(".hackaudit/report"),
    store: Annotated[
        Path | None,
        typer.Option(help="Results store (default: the scorer's, <state dir>/results.duckdb)."),
    ] = None,
    tasks: Annotated[
        list[Path] | None,
        typer.Option(
            "--tasks",
            help="The task files submitted (repeatable): also write the hardened dataset, "
            "their rows split by verdict in their own format, to <out>/dataset/.",
        ),
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
        raise _fail(exc) from exc
    _, missing = services.available()
    ingested = _ingest(tasks) if tasks else None
    problems = [str(p) for p in ingested.problems] if ingested else []
    if ingested is not None:  # tasks submitted but not scored yet are listed without a verdict
        known = {item.instance_id for item in items}
        items += [report.TaskReport(t.instance_id, None, None) for t in ingested.tasks
                  if t.instance_id not in known]  # fmt: skip
    written = report.write_report(
        out, items, missing_stages=[m.name for m in missing], problems=problems
    )
    _print_summary(items)
    console.print(f"Report: {written} and {written.with_suffix('.html')} (from {path})")
    if ingested is not None:
        # The rows are copied as read from the task files: the store keeps the tasks, not rows.
        found = dataset.write_dataset(out, items, ingested.sources)
        console.print(dataset.summary_line(found))


# --- long-lived services, submission, status ---------------------------------------------


@app.command()
def up(
    only: Annotated[
        list[str] | None, typer.Option(help="Run only these services (repeatable).")
    ] = None,
    port: Annotated[int, typer.Option(help="Port of the embedded NATS server.")] = 4222,
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
        raise _fail(exc) from exc


@app.command()
def submit(
    tasks: TaskPaths,
    candidates: Annotated[int, typer.Option("-k", help="Candidates per round.")] = 5,
    rounds: Annotated[int, typer.Option("-r", help="Attack rounds.")] = 3,
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
    repair: Annotated[
        bool,
        typer.Option(
            help="Send FIX tasks to the repairer service (it runs in `hackaudit up`) and "
            "re-audit the hardened tasks; the FIX verdict is issued either way."
        ),
    ] = True,
) -> None:
    """Publish tasks into a running system (`hackaudit up`, or NATS_URL)."""
    ingested = _ingest(tasks, pass_at_1)
    settings = BusSettings()
    options = AuditOptions(
        candidates_per_round=candidates,
        rounds=rounds,
        budget_seconds=budget_seconds,
        stop_when_hackable=stop_when_hackable,
        judge=judge,
        repair=repair,
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
        raise _fail(exc) from exc
    console.print(f"Submitted {len(ingested.tasks)} task(s).")


@app.command()
def status() -> None:
    """Show the queues of a running system by stage, and the dead letters."""
    settings = BusSettings()
    try:
        snapshot = asyncio.run(runtime.snapshot(runtime.running_url(settings)))
    except HackauditError as exc:
        raise _fail(exc) from exc
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
    _print_verdict_counts(settings)
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


def _print_verdict_counts(settings: BusSettings) -> None:
    """Verdicts so far (latest per task), read from the results store while the scorer runs."""
    from hackaudit.cli.report_store import store_path
    from hackaudit.scorer.adapters.store import ResultsStoreError, read_verdict_counts

    path = store_path(settings)
    try:
        counts = read_verdict_counts(path)
    except ResultsStoreError as exc:
        console.print(f"verdicts: none yet ({escape(exc.reason)})")
        return
    table = Table(title="verdicts (results store, latest audit per task)")
    verdicts = ("KEEP", "FIX", "DROP", "ERROR")
    for verdict in verdicts:
        table.add_column(verdict, justify="right")
    table.add_row(*(str(counts.get(v, 0)) for v in verdicts))
    console.print(table)


tasks_app = typer.Typer(help="Task files.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("validate")
def tasks_validate(
    tasks: TaskPaths,
    repeats: Annotated[int, typer.Option(help="Gold runs per task, to expose flakiness.")] = 5,
    repos: ReposDir = None,
) -> None:
    """SWE-bench's check through the sandbox: without a fix FAIL_TO_PASS fails; with gold, every
    FAIL_TO_PASS and PASS_TO_PASS test passes, every time. Exits 1 if any task is flagged."""
    _use_repos(repos)
    from hackaudit.cli.environments import ensure_images
    from hackaudit.cli.validate import REQUESTER, TaskValidity, ValidationRuns, Validity

    ingested = _ingest(tasks)
    ready = ensure_images(ingested.tasks, err)
    settings = BusSettings()
    sandbox = services.builder("sandbox")
    if sandbox is None:
        err.print("[red]the sandbox is not built: nothing can be validated[/]")
        raise typer.Exit(2)
    batch = uuid.uuid4().hex[:8]
    orders = [ValidationRuns.for_task(t, repeats=repeats, batch=batch) for t in ready.tasks]

    async def run_all() -> dict[str, RunCompleted]:
        flat = [r for o in orders for r in (o.before, o.gold)]
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        with runtime.bus_url(settings) as url, _stage_bar("validation runs", len(flat)) as tick:
            async with running(url, sandbox(settings), settings):
                return await runs.run_requests(
                    url, settings, flat, requester=REQUESTER, on_result=lambda _: tick()
                )

    try:
        results = stops.run(run_all())
    except HackauditError as exc:
        raise _fail(exc) from exc
    table = Table(title="task validation")
    for column in ("task", "verdict", "detail"):
        table.add_column(column)
    verdicts = [
        TaskValidity(o.instance_id, Validity.ERROR, f"no image: {o.reason}") for o in ready.failed
    ] + [order.judge(results) for order in orders]
    for v in verdicts:
        colour = "red" if v.flagged else ("yellow" if v.validity is not Validity.VALID else "green")
        table.add_row(v.instance_id, f"[{colour}]{v.validity.value}[/]", escape(v.detail))
    flagged = sum(v.flagged for v in verdicts)
    console.print(table)
    console.print(f"{len(ingested.tasks) - flagged} passed, {flagged} flagged")
    if flagged:
        raise typer.Exit(1)


@tasks_app.command("grade")
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
    gold_repeats: Annotated[int, typer.Option(help="Gold runs per test suite.")] = 1,
    out: Annotated[Path | None, typer.Option(help="Write every graded row here (JSON).")] = None,
    repos: ReposDir = None,
) -> None:
    """Grade given patches as each task's environment does, under its own tests and any variant
    suites; lists the patches the official tests reward and a variant (that gold passes) rejects."""
    import json

    from hackaudit.cli import grade
    from hackaudit.cli.environments import ensure_images

    _use_repos(repos)
    ingested = _ingest(tasks)
    try:
        given = grade.load_predictions(predictions)
        suites = grade.load_variants(variants) if variants else {}
    except grade.GradeInputError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    known = {t.instance_id for t in ingested.tasks}
    for name in sorted({p.instance_id for p in given} - known):
        err.print(f"[yellow]skipped[/]: predictions for {escape(name)}: no such task")
    ready = ensure_images(ingested.tasks, err)
    for failed in ready.failed:
        err.print(f"[red]no image[/] for {escape(failed.instance_id)}: {escape(failed.reason)}")
    sandbox = services.builder("sandbox")
    if sandbox is None:
        err.print("[red]the sandbox is not built: nothing can be graded[/]")
        raise typer.Exit(2)
    settings = BusSettings()
    orders = grade.grade_orders(
        ready.tasks, given, suites, batch=uuid.uuid4().hex[:8], gold_repeats=gold_repeats
    )

    async def run_all() -> dict[str, RunCompleted]:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        with runtime.bus_url(settings) as url, _stage_bar("grading runs", len(orders)) as tick:
            async with running(url, sandbox(settings), settings):
                return await runs.run_requests(
                    url, settings, [o.request for o in orders],
                    requester=grade.REQUESTER, on_result=lambda _: tick(),
                )  # fmt: skip

    try:
        results = stops.run(run_all())
    except HackauditError as exc:
        raise _fail(exc) from exc
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
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "rows": [r.as_json() for r in rows],
            "rewarded_but_wrong": [f.__dict__ for f in findings],
            "unusable_variants": [{"instance_id": i, "variant": v} for i, v in unusable],
        }
        out.write_text(json.dumps(payload, indent=2) + "\n")


@contextlib.contextmanager
def _stage_bar(label: str, total: int) -> Iterator[Callable[[], None]]:
    with Progress(*bars_columns(), console=err) as bars:
        row = bars.add_task(label, total=total)
        yield lambda: bars.advance(row)


env_app = typer.Typer(help="Task images.", no_args_is_help=True)
app.add_typer(env_app, name="env")


@env_app.command("build")
def env_build(tasks: TaskPaths, repos: ReposDir = None) -> None:
    """Build the image of every task that has none yet (tagged by a hash of its inputs)."""
    _use_repos(repos)
    from hackaudit.cli.environments import ensure_images

    ingested = _ingest(tasks)
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


eval_app = typer.Typer(help="Accuracy against a labelled corpus.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("attacker")
def eval_attacker(
    tasks: ExampleTaskPaths = None,
    labels: Annotated[Path, typer.Option(help="Ground truth.")] = Path("examples/labels.json"),
    candidates: Annotated[int, typer.Option("-k", help="Candidates per round.")] = 5,
    rounds: Annotated[int, typer.Option("-r", help="Attack rounds.")] = 3,
    timeout: Annotated[float, typer.Option(help="Give up after this many seconds.")] = 3600.0,
    repos: ReposDir = None,
    budget_seconds: BudgetSeconds = None,
    out: Annotated[
        Path | None, typer.Option(help="Also write the audit report (evidence) here.")
    ] = None,
    pass_at_1: PassAtOneFile = None,
    stop_when_hackable: StopWhenHackable = False,
) -> None:
    """Audit the labelled tasks and print the attacker's confusion table: recall on hackable
    tasks, false alarms on robust ones, and what each task cost."""
    from hackaudit.cli import evaluate
    from hackaudit.cli.environments import ensure_images

    _use_repos(repos)
    truth = evaluate.load_labels(labels)
    ingested = _ingest(tasks or [Path("examples/tasks")], pass_at_1)
    builders, _ = services.available()
    # The attack and the first verdict are what is measured here; repair has `eval repair`.
    builders.pop("repairer", None)
    ready = ensure_images(ingested.tasks, err)
    options = AuditOptions(
        candidates_per_round=candidates,
        rounds=rounds,
        budget_seconds=budget_seconds,
        stop_when_hackable=stop_when_hackable,
    )
    try:
        tracker = stops.run(
            pipeline.run_audit(ready.tasks, options, BusSettings(), builders, limit_s=timeout)
        )
    except HackauditError as exc:
        raise _fail(exc) from exc
    rows = {}
    for cid, instance_id in tracker.correlation_ids.items():
        if instance_id in truth:
            rows[instance_id] = evaluate.evaluate_task(
                instance_id, truth[instance_id], tracker.scored.get(cid),
                tracker.attacks.get(cid), tracker.attack_seconds.get(cid, 0.0),
            )  # fmt: skip
    table = Table(title="attacker against the labels")
    for column in ("task", "label", "outcome", "exploits by", "harness", "candidates",
                   "sandbox min", "first exploit at"):  # fmt: skip
        table.add_column(column)
    for r in sorted(rows.values(), key=lambda r: (r.label.label, r.instance_id)):
        table.add_row(
            r.instance_id, r.label.label + (f" ({r.label.how})" if r.label.how else ""),
            r.outcome, ", ".join(r.exploit_strategies) or "–", str(r.harness_exploits),
            str(r.candidates), f"{r.sandbox_s / 60:.2f}",
            "–" if r.first_exploit_at is None else f"candidate {r.first_exploit_at}",
        )  # fmt: skip
    console.print(table)
    for r in sorted(rows.values(), key=lambda r: r.instance_id):
        if r.budget_note:
            console.print(f"{r.instance_id}: budget not spent in full: {r.budget_note}")
    acc = evaluate.accuracy(rows)
    console.print(
        f"recall on hackable tasks: {acc.hits}/{acc.hackable} = {acc.recall:.2f}; "
        f"false alarms on robust, equivalent-hunk and over-strict tasks: "
        f"{acc.false_alarms}/{acc.robust}; "
        f"sanity-dropped as labelled: {acc.sanity_dropped}/{acc.sanity}"
    )
    if acc.known_wrong:
        console.print(
            f"recall on hackable tasks with a known wrong patch: "
            f"{acc.known_wrong_hits}/{acc.known_wrong}"
        )
    if acc.unflagged:
        console.print(
            f"unflagged tasks with a confirmed exploit: {acc.unflagged_found}/{acc.unflagged} "
            "(check each by hand: a weakness no study flagged, or a wrong confirmation)"
        )
    found = [
        verdicts_eval.Found(
            instance_id,
            s.verdict.value if s else None,
            _over_strict(s),
            len(s.harness_exploits) if s else 0,
        )
        for cid, instance_id in tracker.correlation_ids.items()
        for s in [tracker.scored.get(cid)]
    ]
    _print_confusion(verdicts_eval.rows_for(truth, found))
    if out is not None:
        report.write_report(
            out, pipeline.task_reports(tracker, ready.tasks), missing_stages=[], problems=[]
        )


@eval_app.command("repair")
def eval_repair(
    tasks: ExampleTaskPaths = None,
    labels: Annotated[
        Path, typer.Option(help="Known wrong patches (`known_exploit`) to try on hardened tasks.")
    ] = Path("examples/labels.json"),
    candidates: Annotated[int, typer.Option("-k", help="Candidates per round.")] = 5,
    rounds: Annotated[int, typer.Option("-r", help="Attack rounds.")] = 3,
    timeout: Annotated[float, typer.Option(help="Give up after this many seconds.")] = 3600.0,
    repos: ReposDir = None,
    budget_seconds: BudgetSeconds = None,
    out: Annotated[
        Path | None, typer.Option(help="Also write the audit report (evidence) here.")
    ] = None,
    pass_at_1: PassAtOneFile = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            help="Leaderboard patches (SWE-bench predictions) to grade on the hardened tests; "
            "the labels' `wrong_patches` name the wrong ones."
        ),
    ] = None,
) -> None:
    """Audit the tasks with the repairer running and print the repair figures: tests proposed,
    the gold gate's rejections by reason, exploits blocked, FIX -> KEEP after a fresh re-audit,
    exploits the re-audits found, iterations and sandbox minutes per repaired task; then each
    repaired task's known wrong patches (from `--labels`, and the `--predictions` they name)
    and its other given patches against its hardened tests."""
    from hackaudit.cli import grade, repair_figures
    from hackaudit.cli.environments import ensure_images

    try:
        given = grade.load_predictions(predictions) if predictions is not None else []
        read = grade.json_object(labels, "instance_id -> label") if labels.exists() else {}
        known, missing = repair_figures.known_patches(read, given)
    except grade.GradeInputError as exc:
        err.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from exc
    for line in missing:
        err.print(f"[yellow]not checked[/]: {escape(line)}")
    _use_repos(repos)
    ingested = _ingest(tasks or [Path("examples/tasks")], pass_at_1)
    builders, _ = services.available()
    if "repairer" not in builders:
        err.print("[red]the repairer service is not available[/]")
        raise typer.Exit(2)
    ready = ensure_images(ingested.tasks, err)
    options = AuditOptions(
        candidates_per_round=candidates, rounds=rounds, budget_seconds=budget_seconds
    )
    try:
        tracker = stops.run(
            pipeline.run_audit(ready.tasks, options, BusSettings(), builders, limit_s=timeout)
        )
    except HackauditError as exc:
        raise _fail(exc) from exc
    rows = [
        repair_figures.RepairRow(
            instance_id, scored, tracker.repairs.get(cid), tracker.repaired.get(cid)
        )
        for cid, instance_id in sorted(tracker.correlation_ids.items(), key=lambda kv: kv[1])
        for scored in [tracker.scored.get(cid)]
        if scored is not None and scored.verdict is Verdict.FIX and scored.exploits
    ]
    table = Table(title="repair of the FIX tasks")
    for column in ("task", "outcome", "proposed", "rejected", "blocked", "iterations",
                   "sandbox min"):  # fmt: skip
        table.add_column(column)
    for row in rows:
        done = row.repair
        table.add_row(
            row.instance_id, escape(row.outcome),
            str(len(done.tests)) if done else "–",
            ", ".join(f"{k} {v}" for k, v in sorted(done.gate_rejections.items())) or "–"
            if done else "–",
            f"{len(done.blocked)}/{len(done.blocked) + len(done.unblocked)}" if done else "–",
            str(done.iterations) if done else "–",
            f"{done.sandbox_seconds / 60:.2f}" if done else "–",
        )  # fmt: skip
    console.print(table)
    for line in repair_figures.figures(rows).lines():
        console.print(line)
    for line in repair_figures.unrepaired(rows):
        console.print(f"  {escape(line)}")
    _check_known_patches(rows, known, builders)
    if out is not None:
        report.write_report(
            out, pipeline.task_reports(tracker, ready.tasks), missing_stages=[], problems=[]
        )


def _check_known_patches(
    rows: list[RepairRow],
    known: dict[str, list[KnownPatch]],
    builders: dict[str, services.Builder],
) -> None:
    """Run each repaired task's given patches, and gold, on its hardened tests."""
    from hackaudit.cli.repair_figures import CHECK_REQUESTER, KnownCheck

    batch = uuid.uuid4().hex[:8]
    checks: list[KnownCheck] = []
    for row in rows:
        patches = known.get(row.instance_id, [])
        made = [c for p in patches for c in [KnownCheck.for_row(row, p, batch)] if c is not None]
        if patches and not made:
            console.print(
                f"  {row.instance_id}: not hardened, its {len(patches)} given patch(es) not run"
            )
        checks += made
    if not checks:
        return
    settings = BusSettings()
    requests = {r.idempotency_key: r for c in checks for r in (c.run, c.gold)}

    async def run_all() -> dict[str, RunCompleted]:
        with runtime.bus_url(settings) as url:
            async with running(url, builders["sandbox"](settings), settings):
                return await runs.run_requests(
                    url, settings, list(requests.values()), requester=CHECK_REQUESTER
                )

    results = stops.run(run_all())
    wrong = [c for c in checks if c.patch.wrong]
    others = [c for c in checks if not c.patch.wrong]
    for c in [*wrong, *others]:
        outcome = c.outcome(results)
        kind = "known wrong" if c.patch.wrong else "not known wrong"
        note = "" if c.as_expected(outcome) or c.patch.wrong else " (check it by hand)"
        console.print(
            f"  {c.instance_id}: {escape(c.patch.name)} ({kind}) on the hardened tests: "
            f"{escape(outcome)}{note}"
        )
    blocked = sum(c.as_expected(c.outcome(results)) for c in wrong)
    console.print(f"known wrong patches rejected after repair: {blocked}/{len(wrong)}")
    if others:
        kept = sum(c.as_expected(c.outcome(results)) for c in others)
        console.print(f"other given patches still accepted after repair: {kept}/{len(others)}")


def _over_strict(scored: TaskScored | None) -> bool:
    d = scored.discrimination if scored is not None else None
    return d is not None and d.over_strict


def _print_confusion(rows: list[verdicts_eval.VerdictRow]) -> None:
    table = Table(title="verdicts against the labels")
    for column in ("label", *verdicts_eval.VERDICT_COLUMNS, "over-strict", "needed", "met"):
        table.add_column(column)
    matrix = verdicts_eval.confusion(rows)
    for label, counts in sorted(matrix.counts.items()):
        group = [r for r in rows if r.label == label]
        met = [r.as_expected for r in group if r.as_expected is not None]
        table.add_row(
            label, *(str(counts.get(v, 0)) for v in verdicts_eval.VERDICT_COLUMNS),
            str(matrix.over_strict.get(label, 0)), group[0].expected,
            f"{sum(met)}/{len(met)}" if met else "–",
        )  # fmt: skip
    console.print(table)
    console.print(matrix.line())
    for row in rows:
        if row.as_expected is False:
            got = "not reported over-strict" if row.label == "over_strict" else row.verdict
            console.print(f"  {row.instance_id} ({row.label}): {got}, needed {row.expected}")


@eval_app.command("verdicts")
def eval_verdicts(
    report_dir: Annotated[
        Path, typer.Argument(help="A report folder written by `audit` or `report`.")
    ] = Path(".hackaudit/report"),
    labels: Annotated[Path, typer.Option(help="Ground truth.")] = Path("examples/labels.json"),
) -> None:
    """The verdicts of a finished audit against the labels: hackable tasks FIX, robust ones KEEP,
    broken / flaky / empty-passes DROP, over-strict ones reported over-strict. Exits 1 if any
    labelled task did not get what its label needs."""
    from hackaudit.cli import evaluate

    truth = evaluate.load_labels(labels)
    path = report_dir / "report.json"
    try:
        rows = json.loads(path.read_text())["tasks"]
        found = [
            verdicts_eval.Found(
                # a repaired task is judged by the verdict its first audit gave
                r["instance_id"],
                (r.get("before_repair") or {}).get("verdict", r.get("verdict")),
                bool((r.get("discrimination") or {}).get("rejected_correct")),
                int(r.get("harness_exploits") or 0),
            )
            for r in rows
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        err.print(f"[red]{path}: not a hackaudit report[/] ({exc})")
        raise typer.Exit(2) from exc
    table_rows = verdicts_eval.rows_for(truth, found)
    if not table_rows:
        err.print(f"[red]{path}: no task of {labels} in this report[/]")
        raise typer.Exit(2)
    _print_confusion(table_rows)
    if any(r.as_expected is False for r in table_rows):
        raise typer.Exit(1)


@eval_app.command("judge")
def eval_judge(
    tasks: ExampleTaskPaths = None,
    labels: Annotated[Path, typer.Option(help="Ground truth.")] = Path("examples/labels.json"),
    real: Annotated[
        Path,
        typer.Option(help="Rebuilt real corpus (tasks.jsonl, ground-truth/); skipped if absent."),
    ] = Path(".hackaudit/real-corpus"),
    real_labels: Annotated[Path, typer.Option(help="The real corpus's labels.")] = Path(
        "examples/real/labels.json"
    ),
    samples: Annotated[int, typer.Option(help="Samples per patch.", min=1)] = 3,
) -> None:
    """The judge against patches of known truth: accuracy, precision / recall on "incorrect",
    abstention rate, agreement between samples, and what it cost (HACKAUDIT_JUDGE_* settings)."""
    from hackaudit.cli import judge_eval
    from hackaudit.judge.bootstrap import bootstrap
    from hackaudit.judge.settings import JudgeSettings
    from hackaudit.shared.contracts import JudgeUsage

    settings = JudgeSettings()
    if settings.backend is None:
        err.print("[red]no judge backend configured[/]: nothing to evaluate (see README, judge)")
        raise typer.Exit(2)
    items = judge_eval.example_items(tasks or [Path("examples/tasks")], labels)
    more, note = judge_eval.real_items(real, real_labels)
    console.print(escape(note))
    judge = bootstrap(settings, BusSettings().state_dir)

    async def ask() -> tuple[list[judge_eval.Judged], list[JudgeUsage], list[str]]:
        try:
            return await judge_eval.judge_items(judge, items + more, samples)
        finally:
            if judge.model is not None:
                await judge.model.close()

    rows, usages, left_out = asyncio.run(ask())
    table = Table(title=f"judge {settings.backend} {settings.model_name} against known truth")
    for column in ("task", "patch", "truth", "samples", "judge"):
        table.add_column(column)
    for r in rows:
        details = r.verdict.details if r.verdict else ()
        said = " ".join(s.label.value if s.outcome.value == "answered" else s.outcome.value
                        for s in details)  # fmt: skip
        table.add_row(r.item.task.instance_id, r.item.source, r.item.truth, said,
                      r.said or "abstain")  # fmt: skip
    console.print(table)
    f = judge_eval.figures(rows)

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
    u = judge_eval.total_usage(usages)
    cost = f"${u.cost_usd:.4f}" if u.priced else "unpriced (set HACKAUDIT_JUDGE_PRICE_*)"
    console.print(
        f"cost: {u.calls} model calls, {u.cache_hits} cached, {u.input_tokens} input + "
        f"{u.output_tokens} output tokens, {cost}"
    )
    for why in left_out:
        console.print(f"[yellow]left out[/]: {escape(why)}")


bench_app = typer.Typer(help="Benchmarks that print figures.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


@bench_app.command("sandbox")
def bench_sandbox(
    tasks: ExampleTaskPaths = None,
    task_id: Annotated[
        list[str] | None, typer.Option("--task", help="Tasks to measure (default: one per repo).")
    ] = None,
    runs: Annotated[int, typer.Option(help="Runs per mode and worker count.")] = 20,
    workers: Annotated[int, typer.Option(help="Concurrent runs in the parallel case.")] = 2,
    isolation: Annotated[
        list[str] | None,
        typer.Option(help="Sandbox isolation modes to measure: warm, container (default both)."),
    ] = None,
) -> None:
    """Per-run overhead of the sandbox over the bare test command, and runs per minute with 1
    and N workers, beside a naive runner doing what the SWE-bench harness does per candidate."""
    from hackaudit.cli.environments import ensure_images
    from hackaudit.sandbox.bench import benchmark
    from hackaudit.sandbox.settings import Isolation

    try:
        modes = tuple(Isolation(m) for m in isolation or ("warm", "container"))
    except ValueError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    ingested = _ingest(tasks or [Path("examples/tasks")])
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
        bare, naive = f["bare"], f["naive"]
        table.add_row(task.instance_id, "bare", f"{bare['median_s']:.3f}s", "", "", "", "",
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
    if not ready.tasks:
        raise typer.Exit(1)
    console.print(table)
    console.print(
        "overhead: sandbox median minus bare median (1 worker); scaling: runs/min with "
        f"{n} workers ÷ with 1; vs naive: sandbox runs/min ÷ naive runs/min; CPU/run: the whole "
        "machine's busy CPU per run (1 worker), so other load counts too — see the load column."
    )


@bench_app.command("scale")
def bench_scale_command(
    tasks: ExampleTaskPaths = None,
    task_id: Annotated[
        str | None, typer.Option("--task", help="Task to run (default: the first one).")
    ] = None,
    runs: Annotated[int, typer.Option(help="Runs in each worker count's burst.")] = 40,
    workers: Annotated[
        list[int] | None, typer.Option("--workers", help="Worker counts (default 1, 2, 4).")
    ] = None,
    isolation: Annotated[str, typer.Option(help="Sandbox isolation: warm or container.")] = "warm",
    sample_s: Annotated[float, typer.Option(help="Seconds between queue-lag samples.")] = 2.0,
) -> None:
    """Sandbox runs per minute and queue lag over time with 1, 2 and 4 sandbox worker
    processes on one embedded NATS server, on this machine."""
    from hackaudit.cli.environments import ensure_images
    from hackaudit.sandbox.bench_scale import bench_scale
    from hackaudit.sandbox.settings import Isolation

    try:
        mode = Isolation(isolation)
    except ValueError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    ingested = _ingest(tasks or [Path("examples/tasks")])
    chosen = [t for t in ingested.tasks if task_id is None or t.instance_id == task_id][:1]
    ready = ensure_images(chosen, err)
    if not ready.tasks:
        raise typer.Exit(1)
    task = ready.tasks[0]
    counts = tuple(sorted(set(workers or (1, 2, 4))))
    figures = bench_scale(task, counts=counts, runs=runs, isolation=mode, sample_s=sample_s)
    table = Table(title=f"sandbox tier on this machine: {task.instance_id}, {runs} runs, {mode}")
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
    console.print(
        f"{os.cpu_count()} CPUs here. CPU/run: the whole machine's busy CPU per run during the "
        "burst (other load counts too: see the load average). Runs/min stop growing with workers "
        "once workers × CPU per run fills the CPUs."
    )


def _register_optional_commands() -> None:
    from hackaudit.analysis.cli import register as register_analysis

    register_analysis(app)


_register_optional_commands()
bus_contract.register(app)  # hackaudit asyncapi


def run() -> None:
    stops.install()
    try:
        app()
    except stops.Stopped as stop:
        err.print(f"stopped by {stop.signal_name}")
        raise
