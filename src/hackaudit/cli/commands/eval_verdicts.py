"""`hackaudit eval verdicts`: a finished audit's verdicts against the labels, in the confusion
table that `eval attacker` prints too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from hackaudit.cli import evaluate, verdicts_eval
from hackaudit.cli.commands.options import LABELS, GroundTruth, report_dir
from hackaudit.cli.commands.terminal import console, fail


def eval_verdicts(
    report: Annotated[
        Path | None,
        typer.Argument(
            help="A report folder written by `audit` or `report` (default: <state dir>/report)."
        ),
    ] = None,
    labels: GroundTruth = LABELS,
) -> None:
    """The verdicts of a finished audit against the labels: hackable tasks FIX, robust ones KEEP,
    broken / flaky / empty-passes DROP, over-strict ones reported over-strict. Exits 1 if any
    labelled task did not get what its label needs."""
    truth = evaluate.load_labels(labels)
    path = (report or report_dir()) / "report.json"
    try:
        rows = json.loads(path.read_text())["tasks"]
        found = [
            verdicts_eval.Found(
                # a repaired task is judged by the verdict its first audit gave
                r["instance_id"],
                (r.get("before_repair") or {}).get("verdict", r.get("verdict")),
                bool((r.get("discrimination") or {}).get("rejected_correct")),
                int(r.get("harness_exploits") or 0),
                _caveats(r),
            )
            for r in rows
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise fail(ValueError(f"{path}: not a hackaudit report ({exc})"), 2) from exc
    table_rows = verdicts_eval.rows_for(truth, found)
    if not table_rows:
        raise fail(ValueError(f"{path}: no task of {labels} in this report"), 2)
    print_confusion(table_rows)
    if any(r.as_expected is False for r in table_rows):
        raise typer.Exit(1)


def print_confusion(rows: list[verdicts_eval.VerdictRow]) -> None:
    table = Table(title="verdicts against the labels")
    columns = ("label", *verdicts_eval.VERDICT_COLUMNS, "KEEP not verified", "over-strict",
               "needed", "met")  # fmt: skip
    for column in columns:
        table.add_column(column)
    matrix = verdicts_eval.confusion(rows)
    for label, counts in sorted(matrix.counts.items()):
        group = [r for r in rows if r.label == label]
        met = [r.as_expected for r in group if r.as_expected is not None]
        table.add_row(
            label, *(str(counts.get(v, 0)) for v in verdicts_eval.VERDICT_COLUMNS),
            str(matrix.keep_unverified.get(label, 0)),
            str(matrix.over_strict.get(label, 0)), group[0].expected,
            f"{sum(met)}/{len(met)}" if met else "–",
        )  # fmt: skip
    console.print(table)
    console.print(matrix.line())
    for row in rows:
        if row.as_expected is False:
            got = "not reported over-strict" if row.label == "over_strict" else row.verdict
            caveat = f" — not verified: {', '.join(row.unverified)}" if row.unverified else ""
            console.print(
                f"  {row.instance_id} ({row.label}): {got}{caveat}, needed {row.expected}",
                highlight=False,
                markup=False,
            )


def _caveats(row: dict[str, Any]) -> tuple[str, ...]:
    """What a KEEP of the report leaves unverified (the verdict the table reads: a repaired
    task's first one)."""
    before = row.get("before_repair")
    source = before if isinstance(before, dict) else row
    if source.get("verdict") != "KEEP":
        return ()
    found = (source.get("unverified") or {}).get("caveats") or ()
    return tuple(str(c) for c in found)
