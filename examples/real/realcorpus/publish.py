"""The audit's report as committed beside docs/verified-audit.md: every verdict and its
evidence, without the bulk of gold's coverage maps (which test executes which changed line;
the counts and the summary text stay)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The files of a report folder committed as they are (small text): the exploits' diffs and the
# unconfirmed candidates' (what a hand check of a KEEP reads); `dataset/` (the task rows, patches
# included) and report.html are not.
FILES = ("report.md", "verdicts.jsonl")
FOLDERS = ("exploits", "unconfirmed")


def slim_coverage(coverage: Mapping[str, Any]) -> dict[str, Any]:
    """Gold's coverage with each hunk's per-line test lists cut to how many tests execute each
    line, and the wider suite's map to its summary fields."""
    slim = dict(coverage)
    hunks = coverage.get("hunks")
    if isinstance(hunks, list):
        slim["hunks"] = [_slim_hunk(h) if isinstance(h, Mapping) else h for h in hunks]
    repository = coverage.get("repository")
    if isinstance(repository, Mapping):
        slim["repository"] = {
            k: v for k, v in repository.items() if not isinstance(v, list | dict) or k == "tests"
        }
    return slim


def _slim_hunk(hunk: Mapping[str, Any]) -> dict[str, Any]:
    slim = dict(hunk)
    executed = hunk.get("executed")
    if isinstance(executed, Mapping):
        slim["executed"] = {
            line: len(tests) if isinstance(tests, list) else tests
            for line, tests in executed.items()
        }
    return slim


def slim_report(report: Mapping[str, Any]) -> dict[str, Any]:
    """`report` with every task's (and its pre-repair audit's) coverage slimmed."""
    tasks = []
    for task in report.get("tasks") or []:
        task = dict(task)
        for key in ("gold_coverage",):
            if isinstance(task.get(key), Mapping):
                task[key] = slim_coverage(task[key])
        before = task.get("before_repair")
        if isinstance(before, Mapping) and isinstance(before.get("gold_coverage"), Mapping):
            task["before_repair"] = dict(before) | {
                "gold_coverage": slim_coverage(before["gold_coverage"])
            }
        tasks.append(task)
    return dict(report) | {"tasks": tasks}
