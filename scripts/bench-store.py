"""Saves and loads per second of the scorer's DuckDB results store, on states the size a real
audit leaves (an attack of 20 candidates with their diffs and evidence).

    .venv/bin/python scripts/bench-store.py [--saves 200] [--tasks 20]

Prints one line per figure; run it before and after a change to the store, same arguments.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared.contracts import (
    AttackCompleted,
    AuditOptions,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Provenance,
    Task,
    TaskScored,
    Verdict,
)

DIFF = "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,3 +1,3 @@\n" + " line\n" * 40 + "-x\n+y\n"


def state(index: int, tasks: int) -> AuditState:
    instance_id = f"org__lib-{index % tasks}"
    task = Task.model_validate(
        {"instance_id": instance_id, "repo": "org/lib", "base_commit": "abc", "patch": DIFF,
         "test_patch": DIFF, "FAIL_TO_PASS": ["tests/t.py::test_a"]}
    )  # fmt: skip
    outcomes = tuple(
        CandidateOutcome(
            candidate=Candidate(
                instance_id=instance_id,
                diff=DIFF + f"# {index}-{n}\n",
                provenance=Provenance(strategy="mutation"),
            ),
            verdict=CandidateVerdict.BLOCKED,
            evidence="FAIL_TO_PASS failing: tests/t.py::test_a " * 5,
        )
        for n in range(20)
    )
    cid = f"bench/{instance_id}"
    attack = AttackCompleted(correlation_id=cid, instance_id=instance_id, outcomes=outcomes)
    scored = TaskScored(correlation_id=cid, instance_id=instance_id, verdict=Verdict.KEEP, eqs=0.8)
    return AuditState(
        correlation_id=cid, task=task, options=AuditOptions(), stage=Stage.SCORED,
        attack=attack, scored=scored,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=20)
    args = parser.parse_args()
    states = [state(i, args.tasks) for i in range(args.saves)]
    with tempfile.TemporaryDirectory() as tmp:
        store = DuckDBAuditStore(Path(tmp) / "results.duckdb")
        start = time.perf_counter()
        for s in states:
            store.save(s)
        saved = time.perf_counter() - start
        start = time.perf_counter()
        for s in states:
            assert store.load(s.correlation_id) is not None
        loaded = time.perf_counter() - start
        store.close()
    print(f"saves/s: {args.saves / saved:.1f}  ({saved / args.saves * 1000:.2f} ms per save)")
    print(f"loads/s: {args.saves / loaded:.1f}  ({loaded / args.saves * 1000:.2f} ms per load)")


if __name__ == "__main__":
    main()
