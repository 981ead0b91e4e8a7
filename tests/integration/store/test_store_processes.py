"""The results store shared by processes, as a running system shares it: readers get results while
a scorer process keeps saving, and two scorer processes saving the same audits lose no update."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hackaudit.scorer.adapters.store import (
    DuckDBAuditStore,
    StaleAuditError,
    read_results,
    read_verdict_counts,
)
from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared.contracts import AuditOptions, Task, TaskScored, Verdict

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _state(instance_id: str, rounds: int = 1, scored: bool = True) -> AuditState:
    cid = f"run/{instance_id}"
    task = Task(
        instance_id=instance_id, repo="x/y", base_commit="abc", patch="p", test_patch="t",
        FAIL_TO_PASS=["t::a"],
    )  # fmt: skip
    score = TaskScored(correlation_id=cid, instance_id=instance_id, verdict=Verdict.FIX, eqs=0.5)
    return AuditState(
        correlation_id=cid, task=task, options=AuditOptions(rounds=rounds),
        stage=Stage.SCORED if scored else Stage.ATTACK, scored=score if scored else None,
    )  # fmt: skip


STATE = """
from pathlib import Path
import sys, time
from hackaudit.scorer.adapters.store import DuckDBAuditStore, StaleAuditError
from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared.contracts import AuditOptions, Task, TaskScored, Verdict

def state(instance_id, rounds=1, scored=True):
    cid = f"run/{instance_id}"
    task = Task(instance_id=instance_id, repo="x/y", base_commit="abc", patch="p",
                test_patch="t", FAIL_TO_PASS=["t::a"])
    score = TaskScored(correlation_id=cid, instance_id=instance_id, verdict=Verdict.FIX, eqs=0.5)
    return AuditState(correlation_id=cid, task=task, options=AuditOptions(rounds=rounds),
                      stage=Stage.SCORED if scored else Stage.ATTACK,
                      scored=score if scored else None)

store = DuckDBAuditStore(Path(sys.argv[1]))
"""

# A scorer process: load and save audits until told to stop (a file appears), saying when it has
# started and, at the end, how many saves it made.
KEEP_SAVING = (
    STATE
    + """
stop_at, n = time.monotonic() + 120, 0
while time.monotonic() < stop_at and not Path(sys.argv[2]).exists():
    store.load(f"run/task-{n % 5}")
    store.save(state(f"task-{n % 5}"))
    n += 1
    if n == 1:
        print("saving", flush=True)
print(n, flush=True)
"""
)

# A scorer step taken `times` times: load, rounds + 1, save; a stale save is taken again, as a
# redelivered message is.
INCREMENT = (
    STATE
    + """
done = 0
while done < int(sys.argv[2]):
    s = store.load("run/shared")
    try:
        store.save(s.model_copy(update={"options": AuditOptions(rounds=s.options.rounds + 1)}))
    except StaleAuditError:
        continue
    done += 1
"""
)


def _process(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True
    )


def test_a_reader_gets_results_while_a_scorer_process_saves(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    DuckDBAuditStore(path).save(_state("task-0"))
    stop = tmp_path / "stop"
    writer = _process(KEEP_SAVING, str(path), str(stop))
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "saving"
        # At least 20 reads, for at least 3 s: the writer's saves in that time say whether the
        # reader let it save, whatever the machine's load makes one save cost.
        reads, until = 0, time.monotonic() + 3.0
        while reads < 20 or time.monotonic() < until:
            states = read_results(path)
            assert "task-0" in {s.task.instance_id for s in states}
            assert read_verdict_counts(path)["FIX"] >= 1
            reads += 1
        assert writer.poll() is None, "the writer stopped before the reader got its results"
        stop.touch()
        saves = int(writer.communicate(timeout=60)[0].strip())
    finally:
        writer.kill()
    assert writer.returncode == 0
    assert saves > 5, "the reader kept the writer from saving"
    assert {s.task.instance_id for s in read_results(path)} == {f"task-{i}" for i in range(5)}


def test_two_scorer_processes_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    DuckDBAuditStore(path).save(_state("shared", scored=False))
    workers = [_process(INCREMENT, str(path), "15") for _ in range(2)]
    for w in workers:
        w.communicate(timeout=120)
        assert w.returncode == 0
    (state,) = read_results(path)
    assert state.options.rounds == 1 + 2 * 15


def test_a_stale_save_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    first, second = DuckDBAuditStore(path), DuckDBAuditStore(path)
    first.save(_state("a", scored=False))
    loaded_by_first = first.load("run/a")
    loaded_by_second = second.load("run/a")
    assert loaded_by_first is not None and loaded_by_second is not None
    second.save(loaded_by_second.model_copy(update={"stage": Stage.SCORED}))
    with pytest.raises(StaleAuditError, match="run/a"):
        first.save(loaded_by_first)
    assert read_results(path)[0].stage is Stage.SCORED
