"""The build's two steps over the selection, with their files in the output folder:

- `derive`: rows from the mirrors (`tasks.jsonl` complete, `pending.jsonl` awaiting lists) and
  `report.json` with every check of every task;
- `classify`: the pending rows run in the sandbox; classified rows join `tasks.jsonl` and the
  outcome is added to `report.json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.swebench_specs.table import spec_for
from realcorpus.derive import Derivation, derive
from realcorpus.gitrepo import GitRepo
from realcorpus.reserved import refuse_reserved
from realcorpus.sources import SharedData

TASKS = "tasks.jsonl"
PENDING = "pending.jsonl"
REPORT = "report.json"


def repo_dir(repos: Path, repo: str) -> Path | None:
    owner, _, name = repo.partition("/")
    mirror = repos / f"{owner}+{name}"
    for candidate in (mirror / "repo", mirror, repos / owner / name):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    return None


def repo_of(instance_id: str) -> str:
    return instance_id.rsplit("-", 1)[0].replace("__", "/")


def selected_ids(selection: dict[str, Any], only: Sequence[str]) -> list[str]:
    ids = [entry["instance_id"] for entry in selection["tasks"]]
    return [i for i in ids if i in only] + [i for i in only if i not in ids] if only else ids


def with_pins(derivations: Sequence[Derivation], selection: dict[str, Any]) -> None:
    """Adds each task's `pins` from the selection to its row's pip packages.

    A pin holds back a dependency released after the task that its SWE-bench spec leaves open
    (a release that no longer carries a module the repository imports at that commit). The row
    then states its environment's pip packages: the spec's, then the pins.
    """
    pins = {e["instance_id"]: list(e.get("pins") or ()) for e in selection["tasks"]}
    for d in derivations:
        wanted = pins.get(d.instance_id)
        if not wanted or d.row is None:
            continue
        spec = spec_for(d.row["repo"], d.row.get("version"))
        packages = [*(spec.packages if spec else ()), *(spec.pip_packages if spec else ())]
        d.row["environment"] = {"pip_packages": [*packages, *wanted]}
        d.notes.append(f"pinned beside the spec's packages: {', '.join(wanted)}")


def derive_all(ids: Sequence[str], data: SharedData, repos: Path) -> list[Derivation]:
    allowed, refused = refuse_reserved(ids)
    out: list[Derivation] = []
    for instance_id in refused:
        refusal = Derivation(instance_id)
        refusal.fail("reserved", "this task is reserved and is never built")
        out.append(refusal)
    for instance_id in allowed:
        folder = repo_dir(repos, repo_of(instance_id))
        if folder is None:
            missing = Derivation(instance_id)
            missing.fail("mirror", f"no git repository for {repo_of(instance_id)} under {repos}")
            out.append(missing)
            continue
        out.append(derive(GitRepo(folder), data, instance_id))
    return out


def valid_row(d: Derivation) -> dict[str, Any] | None:
    """The row when it validates as a hackaudit task; a validation error is a problem."""
    if d.row is None or d.pending:
        return None
    try:
        Task.model_validate(d.row)
    except ValueError as exc:
        d.fail("row", str(exc).splitlines()[0])
        return None
    return d.row


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


SAME_TASK = ("repo", "base_commit", "patch", "test_patch", "version")


def write_derived(out: Path, derivations: Sequence[Derivation]) -> dict[str, Any]:
    """Writes the derived rows. A pending row keeps the lists an earlier `classify` gave it
    when the task derived the same way (same base, patches and version); otherwise it waits."""
    out.mkdir(parents=True, exist_ok=True)
    earlier = {row["instance_id"]: row for row in read_jsonl(out / TASKS)}
    old_report = json.loads((out / REPORT).read_text()) if (out / REPORT).is_file() else {}
    complete = [row for d in derivations if (row := valid_row(d)) is not None]
    pending: list[dict[str, Any]] = []
    reports = {d.instance_id: d.report() for d in derivations}
    for d in derivations:
        if d.row is None or not d.pending:
            continue
        pending.append(d.row)
        old = earlier.get(d.instance_id)
        if old is not None and all(old.get(k) == d.row.get(k) for k in SAME_TASK):
            complete.append(old)
            reports[d.instance_id]["pending_classification"] = False
            reports[d.instance_id]["notes"].append("lists kept from an earlier classification")
        before = old_report.get("tasks", {}).get(d.instance_id, {})
        if "classification" in before:  # the last classification's outcome, kept or not
            reports[d.instance_id]["classification"] = before["classification"]
    write_jsonl(out / TASKS, complete)
    write_jsonl(out / PENDING, pending)
    report = {
        "tasks": reports,
        "complete": len(complete),
        "pending": sum(1 for r in reports.values() if r["built"] and r["pending_classification"]),
        "failed": sum(1 for d in derivations if d.row is None),
    }
    (out / REPORT).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return report


def merge_classified(out: Path, classified: Sequence[Any]) -> dict[str, Any]:
    """Classified rows join `tasks.jsonl` (replacing older ones); the report records each."""
    rows = {row["instance_id"]: row for row in read_jsonl(out / TASKS)}
    for item in classified:
        if item.row is not None:
            rows[item.instance_id] = item.row
    pending = [r["instance_id"] for r in read_jsonl(out / PENDING) if r["instance_id"] not in rows]
    pending += [i.instance_id for i in classified if i.row is None and i.instance_id not in pending]
    write_jsonl(out / TASKS, sorted(rows.values(), key=lambda r: str(r["instance_id"])))
    report_path = out / REPORT
    report = json.loads(report_path.read_text()) if report_path.is_file() else {"tasks": {}}
    for item in classified:
        entry = report["tasks"].setdefault(item.instance_id, {"instance_id": item.instance_id})
        entry["classification"] = item.report
        entry["pending_classification"] = item.row is None
    report["complete"] = len(rows)
    report["pending"] = len(pending)
    report_path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return report
