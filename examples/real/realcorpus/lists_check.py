"""How lists classified here compare with UTBoost's re-collected lists on the same tasks: the
rows with UTBoost's lists, classified again with their lists blanked (`build_corpus.py
classify` on a copy), set against the originals."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def _tests(row: Mapping[str, Any], key: str) -> set[str]:
    value = row.get(key) or []
    if isinstance(value, str):
        value = json.loads(value)
    return {str(t) for t in value}


def compare_lists(
    official: Iterable[Mapping[str, Any]],
    classified: Iterable[Mapping[str, Any]],
    failed: Mapping[str, str],
) -> dict[str, Any]:
    """Per task: both lists' sizes and overlap; overall: tasks compared, tasks whose
    FAIL_TO_PASS / PASS_TO_PASS are equal, tests on one side only; and the tasks the
    classification could not list (with why)."""
    mine = {str(r["instance_id"]): r for r in classified}
    theirs = {str(r["instance_id"]): r for r in official}
    rows = []
    for instance_id in sorted(set(mine) & set(theirs)):
        entry: dict[str, Any] = {"instance_id": instance_id}
        for key, short in (("FAIL_TO_PASS", "f2p"), ("PASS_TO_PASS", "p2p")):
            a, b = _tests(theirs[instance_id], key), _tests(mine[instance_id], key)
            entry[short] = {
                "utboost": len(a),
                "classified": len(b),
                "both": len(a & b),
                "utboost_only": sorted(a - b),
                "classified_only": sorted(b - a),
            }
        rows.append(entry)
    not_listed = {i: failed.get(i, "not classified") for i in sorted(set(theirs) - set(mine))}
    return {
        "compared": len(rows),
        "f2p_equal": sum(not r["f2p"]["utboost_only"] and not r["f2p"]["classified_only"]
                         for r in rows),
        "p2p_equal": sum(not r["p2p"]["utboost_only"] and not r["p2p"]["classified_only"]
                         for r in rows),
        "f2p_tests": _totals(rows, "f2p"),
        "p2p_tests": _totals(rows, "p2p"),
        "tasks": rows,
        "not_listed": not_listed,
    }  # fmt: skip


def _totals(rows: list[dict[str, Any]], short: str) -> dict[str, int]:
    return {
        "utboost": sum(r[short]["utboost"] for r in rows),
        "classified": sum(r[short]["classified"] for r in rows),
        "both": sum(r[short]["both"] for r in rows),
    }


def lists_markdown(found: Mapping[str, Any]) -> str:
    """The comparison as the Markdown the document includes."""
    f2p, p2p = found["f2p_tests"], found["p2p_tests"]
    lines = [
        f"Tasks with UTBoost's lists classified again here: {found['compared']} "
        f"(and {len(found['not_listed'])} the classification could not list).",
        "",
        "| list | tasks with equal lists | UTBoost's tests | classified | in both |",
        "|---|---|---|---|---|",
        f"| FAIL_TO_PASS | {found['f2p_equal']} of {found['compared']} | {f2p['utboost']} | "
        f"{f2p['classified']} | {f2p['both']} |",
        f"| PASS_TO_PASS | {found['p2p_equal']} of {found['compared']} | {p2p['utboost']} | "
        f"{p2p['classified']} | {p2p['both']} |",
        "",
    ]
    differ = [
        r for r in found["tasks"]
        if any(r[k]["utboost_only"] or r[k]["classified_only"] for k in ("f2p", "p2p"))
    ]  # fmt: skip
    if differ:
        lines += [
            "| task | FAIL_TO_PASS: UTBoost only / classified only | PASS_TO_PASS: UTBoost "
            "only / classified only |",
            "|---|---|---|",
        ]
        for r in differ:
            cells = [
                f"{len(r[k]['utboost_only'])} / {len(r[k]['classified_only'])}"
                + (f" (`{r[k]['utboost_only'][0]}`…)" if r[k]["utboost_only"] else "")
                for k in ("f2p", "p2p")
            ]
            lines.append(f"| `{r['instance_id']}` | {cells[0]} | {cells[1]} |")
        lines.append("")
    for instance_id, why in found["not_listed"].items():
        lines.append(f"- `{instance_id}`: not listed here: {why}")
    return "\n".join(lines).rstrip() + "\n"
