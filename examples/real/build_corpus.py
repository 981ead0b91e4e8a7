"""Rebuilds the real SWE-bench corpus from git mirrors: `derive` the rows, `classify` the tests.

    .venv/bin/python examples/real/build_corpus.py select --verified
    .venv/bin/python examples/real/build_corpus.py --repos /work/.mirror \
        --out .hackaudit/real-corpus
    .venv/bin/python examples/real/build_corpus.py classify --repos /work/.mirror \
        --out .hackaudit/real-corpus

See README.md beside this file for what each check does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from realcorpus.build import (  # noqa: E402
    PENDING,
    TASKS,
    derive_all,
    merge_classified,
    read_jsonl,
    selected_ids,
    with_pins,
    write_derived,
)
from realcorpus.reserved import refuse_reserved  # noqa: E402
from realcorpus.select import verified_selection  # noqa: E402
from realcorpus.sources import load_shared  # noqa: E402

from hackaudit.analysis.shared_data import locate_shared_data  # noqa: E402

# The shared SWE-bench Verified data: HACKAUDIT_SHARED_DATA, else ../shared beside the checkout.
DATA = (
    locate_shared_data(HERE.parents[1], os.environ)
    or locate_shared_data(Path.cwd(), os.environ)
    or Path("../shared/data/swebench-verified")
)
VERIFIED_SELECTION = HERE / "verified-selection.json"


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "step", nargs="?", choices=["derive", "classify", "all", "select"], default="derive"
    )
    parser.add_argument("--repos", type=Path, help="folder of git mirrors/clones")
    parser.add_argument("--out", type=Path, default=Path(".hackaudit/real-corpus"))
    parser.add_argument("--data", type=Path, default=DATA, help="the SWE-bench Verified data")
    parser.add_argument("--selection", type=Path, default=HERE / "selection.json")
    parser.add_argument("--only", nargs="*", default=[], help="instance ids to build")
    parser.add_argument("--gold-runs", type=int, default=3)
    parser.add_argument(
        "--verified", action="store_true", help="select: every buildable SWE-bench Verified task"
    )
    parser.add_argument(
        "--output", "-o", type=Path, default=VERIFIED_SELECTION, help="select: the file written"
    )
    args = parser.parse_args(argv)
    if args.step == "select" and not args.verified:
        parser.error("select computes the Verified selection only: give --verified")
    if args.step != "select" and args.repos is None:
        parser.error(f"{args.step} needs --repos DIR (the folder of git mirrors)")
    return args


def _read_selection(path: Path) -> dict[str, Any] | None:
    """The selection file, or None after one line saying what is wrong with it."""
    try:
        selection = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"error: --selection {path}: {exc}", file=sys.stderr)
        return None
    tasks = selection.get("tasks") if isinstance(selection, dict) else None
    if not isinstance(tasks, list) or not all(
        isinstance(t, dict) and isinstance(t.get("instance_id"), str) for t in tasks
    ):
        print(
            f"error: --selection {path}: 'tasks' must list objects with an instance_id",
            file=sys.stderr,
        )
        return None
    return selection


def _select(args: argparse.Namespace) -> int:
    try:
        shared = load_shared(args.data)
    except (OSError, ValueError) as exc:
        print(f"error: --data {args.data}: {exc}", file=sys.stderr)
        return 2
    selection = verified_selection(shared)
    args.output.write_text(json.dumps(selection, indent=2) + "\n")
    counts = selection["counts"]
    print(f"selected {len(selection['tasks'])}: {counts['selected']}")
    print(f"left out {len(selection['left_out'])}: {counts['left_out']}")
    print(f"wrote {args.output}")
    return 0


def _print_derived(report: dict[str, object]) -> None:
    tasks = report["tasks"]
    assert isinstance(tasks, dict)
    for instance_id, entry in tasks.items():
        state = "pending" if entry["pending_classification"] else "ok"
        state = "FAILED" if not entry["built"] else state
        print(f"{instance_id:32} {state:8} {len(entry['problems'])} problem(s)")
        for problem in entry["problems"]:
            print(f"    - {problem[:400]}")
    print(f"complete {report['complete']}, pending {report['pending']}, failed {report['failed']}")


async def _classify(args: argparse.Namespace) -> int:
    from realcorpus.classify_step import BuilderImages, SandboxRuns, classify_rows

    rows = read_jsonl(args.out / PENDING)
    allowed, refused = refuse_reserved([str(r["instance_id"]) for r in rows])
    for instance_id in refused:
        print(f"{instance_id}: reserved, refused")
    rows = [r for r in rows if r["instance_id"] in allowed]
    if args.only:
        rows = [r for r in rows if r["instance_id"] in args.only]
    else:  # rows classified by an earlier run are kept; --only runs them again
        done = {r["instance_id"] for r in read_jsonl(args.out / TASKS)}
        rows = [r for r in rows if r["instance_id"] not in done]
    failed = 0
    report: dict[str, Any] = {"complete": len(read_jsonl(args.out / TASKS)), "pending": len(rows)}
    images = BuilderImages(args.repos)
    async with SandboxRuns() as runs:
        for row in rows:  # one at a time, each saved at once: a stopped run loses one task
            started = time.monotonic()
            (item,) = await classify_rows([row], images, runs, gold_runs=args.gold_runs)
            item.report["seconds"] = round(time.monotonic() - started, 1)
            report = merge_classified(args.out, [item])
            failed += item.row is None
            state = "ok" if item.row else "FAILED"
            print(f"{item.instance_id:32} {state:8} {item.report}", flush=True)
    print(f"complete {report['complete']}, still pending {report['pending']}")
    return 0 if not failed else 1


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    _, refused = refuse_reserved(args.only)
    for instance_id in refused:
        print(f"{instance_id}: reserved, refused: it is never built", file=sys.stderr)
    if args.step == "select":
        return _select(args)
    if args.step in {"derive", "all"}:
        selection = _read_selection(args.selection)
        if selection is None:
            return 2
        ids = selected_ids(selection, args.only)
        derived = derive_all(ids, load_shared(args.data), args.repos)
        with_pins(derived, selection)
        report = write_derived(args.out, derived)
        _print_derived(report)
    if args.step in {"classify", "all"}:
        return asyncio.run(_classify(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
