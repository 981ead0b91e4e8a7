"""`hackaudit tasks validate` on the whole corpus flags exactly the tasks labelled invalid."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import hackaudit

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_validate_flags_exactly_the_broken_and_flaky_tasks(
    tmp_path: Path, labels: dict[str, dict[str, object]]
) -> None:
    # 10 gold runs: a test failing half the time passes all ten with probability 1/1024
    done = hackaudit(tmp_path, "tasks", "validate", "examples/tasks", "--repeats", "10")
    assert done.returncode == 1, done.stderr  # some tasks are flagged
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in done.stdout.splitlines()
        if line.count("│") >= 3 and "__" in line
    }
    assert set(rows) == set(labels), done.stdout[-3000:] + done.stderr[-3000:]
    flagged = {task for task, verdict in rows.items() if verdict in {"broken", "flaky", "error"}}
    assert flagged == {task for task, label in labels.items() if not label["valid"]}
    for task, label in labels.items():
        if label["label"] in {"broken", "flaky"}:
            assert rows[task] == label["label"], done.stdout[-3000:]
    assert rows["mdtable__mdtable-3"] == "empty-passes"  # reported, and still a valid environment
    assert "22 passed, 2 flagged" in done.stdout
