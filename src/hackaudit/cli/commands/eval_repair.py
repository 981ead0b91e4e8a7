"""`hackaudit eval repair`: the labelled tasks audited with the repairer running, the repair
figures, and each repaired task's known wrong patches run on its hardened tests."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from hackaudit.cli import grade, repair_figures, runs, runtime, services, stops
from hackaudit.cli.commands import audit_run
from hackaudit.cli.commands.audit_run import LabelledAudit
from hackaudit.cli.commands.options import LABELS, ExampleTaskPaths, expands
from hackaudit.cli.commands.terminal import console, err
from hackaudit.cli.repair_figures import CHECK_REQUESTER, KnownCheck, KnownPatch, RepairRow
from hackaudit.shared.contracts import RunCompleted, Verdict
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings


@expands(LabelledAudit)
def eval_repair(
    tasks: ExampleTaskPaths = None,
    labels: Annotated[
        Path, typer.Option(help="Known wrong patches (`known_exploit`) to try on hardened tasks.")
    ] = LABELS,
    run: LabelledAudit = audit_run.DEFAULTS,
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
    try:
        given = grade.load_predictions(predictions) if predictions is not None else []
        read = grade.json_object(labels, "instance_id -> label") if labels.exists() else {}
        known, missing = repair_figures.known_patches(read, given)
    except grade.GradeInputError as exc:
        err.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2) from exc
    for line in missing:
        err.print(f"[yellow]not checked[/]: {escape(line)}")
    ingested = run.ingest(tasks)
    builders, _ = services.available()
    if "repairer" not in builders:
        err.print("[red]the repairer service is not available[/]")
        raise typer.Exit(2)
    tracker, audited = run.run(ingested.tasks, builders)
    rows = [
        RepairRow(instance_id, scored, tracker.repairs.get(cid), tracker.repaired.get(cid))
        for cid, instance_id in sorted(tracker.correlation_ids.items(), key=lambda kv: kv[1])
        for scored in [tracker.scored.get(cid)]
        if scored is not None and scored.verdict is Verdict.FIX and scored.exploits
    ]
    _print_repairs(rows)
    check_known_patches(rows, known, builders)
    run.write_report(tracker, audited)


def _print_repairs(rows: list[RepairRow]) -> None:
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


def check_known_patches(
    rows: list[RepairRow],
    known: dict[str, list[KnownPatch]],
    builders: dict[str, services.Builder],
) -> None:
    """Run each repaired task's given patches, and gold, on its hardened tests."""
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
