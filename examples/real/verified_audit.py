"""Turns a dataset-wide audit of SWE-bench Verified into the figures of docs/verified-audit.md.

    .venv/bin/python examples/real/verified_audit.py figures --report REPORT_DIR \
        [--store .hackaudit/results.duckdb] [--corpus .hackaudit/real-corpus] --out OUT_DIR

`--report`, `--store` and `--corpus` may each be given more than once: an audit whose later
part ran on another machine (its results store started empty) is gathered from every part's
report, store and corpus build (realcorpus/gather.py).

Writes figures.json (every number), figures.md (the same as Markdown tables),
hackaudit-flags.json and utboost-flags.json ({instance_id: bool} over the same audited, assessed
tasks, for `hackaudit meta-analysis --flags FILE`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realcorpus.figures import AuditTime, figures, flag_maps, task_facts  # noqa: E402
from realcorpus.figures_markdown import markdown  # noqa: E402
from realcorpus.gather import errors_of, gathered  # noqa: E402
from realcorpus.lists_check import compare_lists, lists_markdown  # noqa: E402
from realcorpus.publish import FILES, FOLDERS, slim_report  # noqa: E402

from hackaudit.analysis.shared_data import locate_shared_data  # noqa: E402

# The shared SWE-bench Verified data: HACKAUDIT_SHARED_DATA, else ../shared beside the checkout.
DATA = (
    locate_shared_data(HERE.parents[1], os.environ)
    or locate_shared_data(Path.cwd(), os.environ)
    or Path("../shared/data/swebench-verified")
)
FLAGS = "swebench_verified_instance_flags.json"
VERIFIED_SELECTION = HERE / "verified-selection.json"


class BadInput(Exception):
    """An input the figures cannot be computed from; its message is the one error line."""


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["figures", "publish", "lists"])
    parser.add_argument(
        "--report",
        type=Path,
        action="append",
        help="the audit's report folder; figures: again for each part of an audit run apart",
    )
    parser.add_argument(
        "--store", type=Path, action="append", help="the results store (times, cost); repeatable"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="the corpus build folder (its report.json); figures: repeatable",
    )
    parser.add_argument(
        "--classified",
        type=Path,
        help="lists: the build folder of the UTBoost rows classified again with blank lists",
    )
    parser.add_argument("--selection", type=Path, default=VERIFIED_SELECTION)
    parser.add_argument("--data", type=Path, default=DATA, help="the SWE-bench Verified data")
    parser.add_argument(
        "--out", type=Path, required=True, help="folder for the figures (publish: the report)"
    )
    args = parser.parse_args(argv)
    if args.step in ("figures", "publish") and args.report is None:
        parser.error(f"{args.step} needs --report REPORT_DIR")
    if args.step == "lists" and (args.corpus is None or args.classified is None):
        parser.error("lists needs --corpus DIR (UTBoost's lists) and --classified DIR")
    if args.step == "publish" and len(args.report) > 1:
        parser.error("publish copies one report folder: give --report once")
    if args.step == "lists" and len(args.corpus) > 1:
        parser.error("lists reads one corpus build: give --corpus once")
    return args


def _json(path: Path, option: str) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise BadInput(f"{option} {path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{option} {path}: {exc}") from None


def _report(folder: Path) -> dict[str, Any]:
    report = _json(folder / "report.json", "--report")
    tasks = report.get("tasks") if isinstance(report, dict) else None
    if not isinstance(tasks, list) or not all(
        isinstance(t, dict) and isinstance(t.get("instance_id"), str) for t in tasks
    ):
        raise BadInput(
            f"--report {folder / 'report.json'}: not a hackaudit report "
            "('tasks' must list objects with an instance_id)"
        )
    return dict(report)


def _instances(data: Path) -> dict[str, dict[str, Any]]:
    flags = _json(data / FLAGS, "--data")
    rows = flags.get("instances") if isinstance(flags, dict) else None
    if not isinstance(rows, list):
        raise BadInput(f"--data {data / FLAGS}: 'instances' must be a list")
    return {str(r["instance_id"]): r for r in rows if isinstance(r, dict) and "instance_id" in r}


def _selected(path: Path) -> list[str]:
    selection = _json(path, "--selection")
    tasks = selection.get("tasks") if isinstance(selection, dict) else None
    if not isinstance(tasks, list) or not all(
        isinstance(t, dict) and isinstance(t.get("instance_id"), str) for t in tasks
    ):
        raise BadInput(f"--selection {path}: 'tasks' must list objects with an instance_id")
    return [t["instance_id"] for t in tasks]


def _times(store: Path) -> list[AuditTime]:
    import duckdb

    from hackaudit.scorer.adapters.store import ResultsStoreError, read_audit_times

    if not store.is_file():
        raise BadInput(f"--store {store}: no such file")
    try:
        found = read_audit_times(store)
    except ResultsStoreError as exc:
        raise BadInput(f"--store {store}: {exc.reason}") from None
    except duckdb.Error as exc:
        raise BadInput(f"--store {store}: not a results store ({exc})") from None
    return [AuditTime(t.instance_id, t.started_at, t.scored_at) for t in found.values()]


def meta_analysis_commands(out: Path, data: Path) -> list[str]:
    """`hackaudit meta-analysis` on each flags file, against the leaderboard's resolved lists
    and the human difficulty strata of the same shared data."""
    shared = (
        f"--resolved {data / 'swebench_verified_submissions_resolved.json'} --strata {data / FLAGS}"
    )
    return [
        f"hackaudit meta-analysis {shared} --flags {out / name} --out {out / folder}"
        for name, folder in (
            ("hackaudit-flags.json", "meta-analysis-hackaudit"),
            ("utboost-flags.json", "meta-analysis-utboost"),
        )
    ]


def _figures(args: argparse.Namespace) -> int:
    first = args.report[0]
    report = gathered(
        [_report(folder) for folder in args.report],
        [os.path.relpath(folder, first) for folder in args.report],
    )
    instances = _instances(args.data)
    selected = _selected(args.selection)
    corpus: dict[str, Any] | None = None
    for folder in args.corpus or []:  # a later build's entry for a task replaces an earlier one
        entries = _json(folder / "report.json", "--corpus").get("tasks") or {}
        corpus = {"tasks": (corpus or {}).get("tasks", {}) | entries}
    times = [t for store in args.store for t in _times(store)] if args.store else None
    rows = report["tasks"]
    figs = figures(
        rows,
        instances,
        selected=selected,
        errors=errors_of(report),
        corpus=corpus,
        times=times,
        headline=(report.get("summary") or {}).get("headline"),
    )
    hackaudit, utboost = flag_maps(task_facts(rows, instances))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "figures.json").write_text(json.dumps(figs, indent=2) + "\n")
    commands = meta_analysis_commands(args.out, args.data)
    (args.out / "figures.md").write_text(markdown(figs, commands))
    (args.out / "hackaudit-flags.json").write_text(json.dumps(hackaudit, indent=1) + "\n")
    (args.out / "utboost-flags.json").write_text(json.dumps(utboost, indent=1) + "\n")
    print(f"hackable as audited: {figs['hackable']['overall']['text']}")
    if figs["headline_agrees"] is False:
        print("warning: the report's headline counts a different k of n", file=sys.stderr)
    if times is None:
        print("no --store: the time figures are left out")
    print(f"wrote {args.out}/figures.json, figures.md, hackaudit-flags.json, utboost-flags.json")
    return 0


def _publish(args: argparse.Namespace) -> int:
    """The report folder as committed: report.json slimmed, report.md, verdicts.jsonl and the
    exploits' diffs copied; nothing else (no task rows, no HTML)."""
    (folder,) = args.report
    report = _report(folder)
    if args.out.resolve() == folder.resolve():
        raise BadInput(f"--out {args.out}: the report folder itself")
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    (args.out / "report.json").write_text(json.dumps(slim_report(report), indent=1) + "\n")
    for name in FILES:
        if (folder / name).is_file():
            shutil.copyfile(folder / name, args.out / name)
    for name in FOLDERS:
        if (folder / name).is_dir():
            shutil.copytree(folder / name, args.out / name)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"wrote {args.out} ({size / 1e6:.1f} MB)")
    return 0


def _jsonl(path: Path, option: str) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        raise BadInput(f"{option} {path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{option} {path}: {exc}") from None


def _lists(args: argparse.Namespace) -> int:
    """UTBoost's lists (the corpus rows that carry them) against the same rows classified here."""
    selection = _json(args.selection, "--selection")
    utboost = {t["instance_id"] for t in selection.get("tasks", []) if t.get("lists") == "utboost"}
    official = [
        r for r in _jsonl(args.corpus[0] / "tasks.jsonl", "--corpus") if r["instance_id"] in utboost
    ]
    classified = _jsonl(args.classified / "tasks.jsonl", "--classified")
    report = _json(args.classified / "report.json", "--classified")
    failed = {
        i: "; ".join((t.get("classification") or {}).get("problems") or t.get("problems") or [])
        for i, t in (report.get("tasks") or {}).items()
    }
    found = compare_lists(official, classified, failed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "lists.json").write_text(json.dumps(found, indent=1) + "\n")
    (args.out / "lists.md").write_text(lists_markdown(found))
    print(
        f"compared {found['compared']}: FAIL_TO_PASS equal {found['f2p_equal']}, "
        f"PASS_TO_PASS equal {found['p2p_equal']}; wrote {args.out}/lists.json, lists.md"
    )
    return 0


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    try:
        steps = {"publish": _publish, "lists": _lists, "figures": _figures}
        return steps[args.step](args)
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
