"""`hackaudit tasks validate` on the corpus fails exactly the tasks labelled invalid and those
whose FAIL_TO_PASS tests pass without a fix (empty-passes: the harness would not take them).

By default it runs on one task per verdict the command gives (valid under each runner, broken,
flaky, empty-passes); that every task of the corpus holds its label is checked on the host by
`tests/unit/examples/test_corpus.py::test_check_task`. The whole corpus runs with
`HACKAUDIT_E2E_WHOLE_CORPUS=1`, or by hand as
`hackaudit tasks validate examples/tasks --gold-repeats 10`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import hackaudit, picked_tasks

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WHOLE_CORPUS = os.environ.get("HACKAUDIT_E2E_WHOLE_CORPUS") == "1"
SUBSET = {
    "inikit__inikit-1": "valid, run by unittest",
    "urlnorm__urlnorm-1": "valid, run by pytest",
    "inikit__inikit-3": "broken",
    "ttlcache__ttlcache-3": "flaky",
    "mdtable__mdtable-3": "empty-passes",
}


def test_validate_flags_exactly_the_broken_and_flaky_tasks(
    tmp_path: Path, labels: dict[str, dict[str, object]]
) -> None:
    picked = set(labels) if WHOLE_CORPUS else set(SUBSET)
    tasks = "examples/tasks" if WHOLE_CORPUS else str(picked_tasks(tmp_path, picked))
    # 10 gold runs: a test failing half the time passes all ten with probability 1/1024
    done = hackaudit(tmp_path, "tasks", "validate", tasks, "--gold-repeats", "10")
    assert done.returncode == 3, done.stderr  # some tasks fail validation
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in done.stdout.splitlines()
        if line.count("│") >= 3 and "__" in line
    }
    assert set(rows) == picked, done.stdout[-3000:] + done.stderr[-3000:]
    failed = {task for task, verdict in rows.items() if verdict != "valid"}
    assert failed == {
        task
        for task in picked
        if not labels[task]["valid"] or labels[task]["label"] == "empty_passes"
    }
    for task in picked:
        if labels[task]["label"] in {"broken", "flaky"}:
            assert rows[task] == labels[task]["label"], done.stdout[-3000:]
    assert rows["mdtable__mdtable-3"] == "empty-passes"  # counted as failed, not passed
    assert f"{len(picked) - len(failed)} passed, {len(failed)} failed" in done.stdout
    if not WHOLE_CORPUS:
        assert {rows[task] for task in picked} == {"valid", "broken", "flaky", "empty-passes"}
