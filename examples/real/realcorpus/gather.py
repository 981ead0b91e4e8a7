"""One audit gathered from the reports of several runs over parts of the same task list (a run
resumed on another machine, whose results store started empty): per task, the verdict of the
last report that has one; the reports' errors for the tasks still without one; their headlines'
hackable counts summed. Each evidence diff path of a later report is made relative to the first
report's folder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

EVIDENCE = ("exploits", "harness_evidence", "unconfirmed")


def rebased(row: Mapping[str, Any], folder: str) -> dict[str, Any]:
    """`row` with each evidence entry's diff path under `folder` (relative to the first report's
    folder; "" or "." leaves the row as it is)."""
    if folder in ("", "."):
        return dict(row)
    moved = dict(row)
    for key in EVIDENCE:
        entries = row.get(key)
        if isinstance(entries, list):
            moved[key] = [
                dict(e) | {"diff": f"{folder}/{e['diff']}"}
                if isinstance(e, Mapping) and isinstance(e.get("diff"), str)
                else e
                for e in entries
            ]
    return moved


def _scored(row: Mapping[str, Any]) -> bool:
    return row.get("verdict") not in (None, "ERROR")


def errors_of(report: Mapping[str, Any]) -> dict[str, str]:
    """Why each task of `report` without a verdict has none: the summary's error, else the row's
    own reason."""
    summary = report.get("summary") or {}
    errors = {str(k): str(v) for k, v in (summary.get("errors") or {}).items()}
    for row in report.get("tasks") or []:
        if not _scored(row) and row["instance_id"] not in errors:
            errors[row["instance_id"]] = str(row.get("reason") or "no verdict")
    return errors


def _headline(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The reports' hackable counts summed, None when one has no headline."""
    counts: list[Mapping[str, Any]] = []
    for report in reports:
        found = ((report.get("summary") or {}).get("headline") or {}).get("hackable")
        if not isinstance(found, Mapping):
            return None
        counts.append(found)
    tasks = sum(int(c["tasks"]) for c in counts)
    of = sum(int(c["of"]) for c in counts)
    return {"hackable": {"tasks": tasks, "of": of}}


def gathered(reports: Sequence[Mapping[str, Any]], folders: Sequence[str] = ()) -> dict[str, Any]:
    """The reports as one (a single report comes back as it is). A task keeps its first place in
    the order; a later report's row replaces an earlier one unless it has no verdict and the
    earlier one has. `folders[i]`: report i's folder relative to the first one's (evidence
    paths are rebased onto it)."""
    if len(reports) == 1:
        return dict(reports[0])
    rows: dict[str, Mapping[str, Any]] = {}
    errors: dict[str, str] = {}
    for number, report in enumerate(reports):
        folder = folders[number] if number < len(folders) else ""
        for row in report.get("tasks") or []:
            before = rows.get(row["instance_id"])
            if before is None or _scored(row) or not _scored(before):
                rows[row["instance_id"]] = rebased(row, folder)
        errors |= errors_of(report)
    unscored = {i: why for i, why in errors.items() if i not in rows or not _scored(rows[i])}
    summary = {"errors": unscored, "headline": _headline(reports), "gathered_from": len(reports)}
    return {"summary": summary, "tasks": list(rows.values())}
