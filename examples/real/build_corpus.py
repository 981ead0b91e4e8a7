"""Rebuilds the real SWE-bench corpus from git mirrors: `derive` the rows, `classify` the tests.

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
import sys
from pathlib import Path

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
from realcorpus.sources import load_shared  # noqa: E402

DATA = Path("/work/shared/data/swebench-verified")


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", nargs="?", choices=["derive", "classify", "all"], default="derive")
    parser.add_argument("--repos", type=Path, required=True, help="folder of git mirrors/clones")
    parser.add_argument("--out", type=Path, default=Path(".hackaudit/real-corpus"))
    parser.add_argument("--data", type=Path, default=DATA, help="the SWE-bench Verified data")
    parser.add_argument("--selection", type=Path, default=HERE / "selection.json")
    parser.add_argument("--only", nargs="*", default=[], help="instance ids to build")
    parser.add_argument("--gold-runs", type=int, default=3)
    return parser.parse_args(argv)


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
    async with SandboxRuns() as runs:
        classified = await classify_rows(
            rows, BuilderImages(args.repos), runs, gold_runs=args.gold_runs
        )
    report = merge_classified(args.out, classified)
    for item in classified:
        print(f"{item.instance_id:32} {'ok' if item.row else 'FAILED':8} {item.report}")
    print(f"complete {report['complete']}, still pending {report['pending']}")
    return 0 if all(item.row for item in classified) else 1


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    _, refused = refuse_reserved(args.only)
    for instance_id in refused:
        print(f"{instance_id}: reserved, refused: it is never built", file=sys.stderr)
    if args.step in {"derive", "all"}:
        selection = json.loads(args.selection.read_text())
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
