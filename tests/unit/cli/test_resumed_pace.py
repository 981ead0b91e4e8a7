"""A resumed audit has an ETA from its start: the pace earlier runs kept on the tasks it skips,
read from the results store's times, stands in until this run's own tasks finish."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from hackaudit.cli.commands.audit import resumed_pace
from hackaudit.cli.progress import AuditTracker, Pace, PlainProgress, earlier_pace, eta_s
from hackaudit.shared import subjects
from hackaudit.shared.contracts import TaskScored, Verdict
from hackaudit.shared.settings import BusSettings

T0 = datetime(2026, 12, 1, 9, 0, 0)


def _at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_tasks_in_flight_together_count_their_shared_time_once() -> None:
    # three tasks over 0-10 min, overlapping: 10 min of audit for 3 tasks
    pace = earlier_pace([(_at(0), _at(6)), (_at(2), _at(10)), (_at(3), _at(4))])
    assert pace == Pace(600.0, 3)


def test_the_time_between_two_runs_counts_for_nothing() -> None:
    # run 1: 0-10 min; stopped; run 2 a day later: 5 min
    pace = earlier_pace([(_at(0), _at(10)), (_at(24 * 60), _at(24 * 60 + 5))])
    assert pace == Pace(900.0, 2)
    assert earlier_pace([]) is None


def test_the_eta_adds_the_earlier_pace_to_this_runs_own() -> None:
    earlier = Pace(seconds=3600.0, tasks=20)  # 3 min a task before the stop
    assert eta_s(0, 0, 10, earlier) == 1800  # from the start: 10 left at 3 min
    assert eta_s(600, 0, 10, earlier) == pytest.approx(4200 / 20 * 10)  # time spent counts
    assert eta_s(600, 10, 10, earlier) == 4200 / 30 * 10  # then its own tasks weigh in
    assert eta_s(600, 0, 10, None) is None


def test_a_resumed_run_shows_an_eta_before_its_first_verdict() -> None:
    tracker = AuditTracker({"a/3": "lib-3", "a/4": "lib-4"}, resumed=2, earlier=Pace(240.0, 2))
    plain = PlainProgress()
    assert plain.lines(tracker, 0)[-1].endswith("done 2/4 · 2 remaining · ETA 4:00")
    scored = TaskScored(
        correlation_id="a/3", instance_id="lib-3", verdict=Verdict.KEEP, eqs=0.9, hackable=False
    )
    tracker.observe(subjects.TASK_SCORED, scored.model_dump_json().encode())
    # 120 s + 240 s for 3 tasks: 120 s for the one left
    assert plain.lines(tracker, 120)[-1].endswith("done 3/4 · 1 remaining · ETA 2:00")


def _store(path: Path, rows: list[tuple[str, str, datetime | None, datetime | None]]) -> None:
    with duckdb.connect(str(path)) as db:
        db.execute(
            "CREATE TABLE audits (correlation_id VARCHAR PRIMARY KEY, instance_id VARCHAR, "
            "stage VARCHAR, state JSON, updated_at TIMESTAMP, version INTEGER, "
            "started_at TIMESTAMP, scored_at TIMESTAMP)"
        )
        for cid, instance, started, scored in rows:
            db.execute(
                "INSERT INTO audits VALUES (?, ?, 'scored', '{}', current_timestamp, 1, ?, ?)",
                [cid, instance, started, scored],
            )


def test_the_pace_is_read_from_the_latest_scored_audit_of_each_resumed_task(
    tmp_path: Path,
) -> None:
    _store(
        tmp_path / "results.duckdb",
        [
            ("old/a", "a", _at(-600), _at(-500)),  # an older audit of a: its latest counts
            ("r1/a", "a", _at(0), _at(4)),
            ("r1/b", "b", _at(1), _at(6)),
            ("r1/c", "c", _at(2), None),  # stopped before its verdict
            ("r1/d", "d", _at(0), _at(60)),  # scored, but not resumed by this run
        ],
    )
    settings = BusSettings(state_dir=tmp_path)

    assert resumed_pace(settings, {"a", "b", "c"}) == Pace(360.0, 2)
    assert resumed_pace(settings, {"c"}) is None
