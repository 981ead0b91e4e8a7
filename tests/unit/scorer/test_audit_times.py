"""The results store records when each audit left the queue and when it was first scored, the
figures a dataset-wide run's cost is measured by (time to a verdict per task)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from hackaudit.scorer.adapters.store import DuckDBAuditStore, read_audit_times
from tests.unit.scorer.test_stopped_audits import left_by_a_stopped_run


async def test_started_and_scored_times_are_set_once_and_only_when_reached(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    store = DuckDBAuditStore(path)
    await left_by_a_stopped_run(store)  # c1 scored, c2 attacking, c3 in sanity, c4 queued

    times = read_audit_times(path)

    assert times["c4"].started_at is None and times["c4"].scored_at is None  # still queued
    for cid in ("c2", "c3"):
        assert times[cid].started_at is not None and times[cid].scored_at is None
        assert times[cid].seconds_to_verdict is None
    scored = times["c1"]
    assert scored.started_at is not None and scored.scored_at is not None
    assert scored.seconds_to_verdict is not None and scored.seconds_to_verdict >= 0
    # Saved again (a later step of the same audit): the first times are kept.
    state = store.load("c1")
    assert state is not None
    store.save(state)
    again = read_audit_times(path)["c1"]
    assert (again.started_at, again.scored_at) == (scored.started_at, scored.scored_at)
    assert again.instance_id == state.task.instance_id


def test_a_store_written_before_times_were_recorded_reads_as_no_times(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as db:
        db.execute(
            "CREATE TABLE audits (correlation_id VARCHAR PRIMARY KEY, instance_id VARCHAR, "
            "stage VARCHAR, state JSON, updated_at TIMESTAMP)"
        )
        db.execute("INSERT INTO audits VALUES ('c1', 'a__b-1', 'scored', '{}', current_timestamp)")

    times = read_audit_times(path)

    assert times["c1"].started_at is None and times["c1"].seconds_to_verdict is None
