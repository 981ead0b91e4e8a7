"""`hackaudit report` and `status` read the results store while `hackaudit up` runs its scorer,
and `report` writes the same files `audit` writes for the same results."""

from __future__ import annotations

import filecmp
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hackaudit.cli import services
from hackaudit.cli.commands.audit import IN_PROGRESS, PARTIAL_EXIT
from hackaudit.cli.report import write_report
from hackaudit.cli.report_store import latest_per_task
from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.shared.nats_server import free_port
from tests.integration.cli.test_cli_services import HACKAUDIT, cli
from tests.reportdata import sample_states

pytestmark = [pytest.mark.integration, pytest.mark.slow]


STAMP = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d UTC")  # when the report was written


def _unstamped(folder: Path) -> None:
    """The report's date taken out, so two writes a minute apart compare equal."""
    for path in folder.rglob("report.*"):
        path.write_bytes(STAMP.sub(b"<date>", path.read_bytes()))


def _same_tree(left: Path, right: Path) -> list[str]:
    """Files that differ or exist on one side only (recursively)."""
    diff = filecmp.dircmp(left, right)
    found = [*diff.left_only, *diff.right_only, *diff.diff_files, *diff.funny_files]
    for name in diff.common_dirs:
        found += [f"{name}/{f}" for f in _same_tree(left / name, right / name)]
    return found


def _verdict_counts(status_stdout: str) -> dict[str, int]:
    """The verdicts table of `hackaudit status`, as {verdict: count}."""
    lines = status_stdout[status_stdout.index("verdicts (results store") :].splitlines()
    header = next(line for line in lines if "KEEP" in line)
    values = next(line for line in lines[lines.index(header) + 1 :] if re.search(r"\d", line))
    names = re.findall(r"[A-Z]+", header)
    return dict(zip(names, (int(n) for n in re.findall(r"\d+", values)), strict=True))


def test_report_and_status_read_the_store_while_the_scorer_runs(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    store = DuckDBAuditStore(state_dir / "results.duckdb")
    for state in sample_states():
        store.save(state)
    env = os.environ | {"HACKAUDIT_STATE_DIR": str(state_dir), "COLUMNS": "200"}
    env.pop("NATS_URL", None)
    env.pop("HACKAUDIT_SCORER_RESULTS_DB", None)

    up = subprocess.Popen(
        [*HACKAUDIT, "up", "--only", "scorer", "--port", str(free_port())],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (state_dir / "nats.url").exists():
            assert up.poll() is None, up.stdout.read() if up.stdout else ""
            assert time.monotonic() < deadline, "hackaudit up did not start"
            time.sleep(0.1)
        time.sleep(1.0)

        status = cli(env, "status")
        assert status.returncode == 0, status.stderr
        assert "scorer-ingested" in status.stdout  # the queues, and beside them:
        assert _verdict_counts(status.stdout) == {"KEEP": 1, "FIX": 1, "DROP": 2, "ERROR": 1}

        written = cli(env, "report", "--out", str(tmp_path / "from-store"))
        assert written.returncode == 0, written.stderr
        assert "report.html" in written.stdout
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=30)
    assert up.returncode == 0

    # what `audit` writes for the same results (its report goes through write_report too)
    _, missing = services.available()
    items = latest_per_task(sample_states())
    write_report(
        tmp_path / "direct", items, missing_stages=[m.name for m in missing],
        unaudited={i.instance_id: IN_PROGRESS for i in items if i.scored is None},
        attacker=services.attacker_text(),
    )  # fmt: skip
    _unstamped(tmp_path / "from-store")
    _unstamped(tmp_path / "direct")
    assert _same_tree(tmp_path / "from-store", tmp_path / "direct") == []
    for name in ("report.json", "report.md", "report.html", "verdicts.jsonl"):
        assert (tmp_path / "from-store" / name).stat().st_size > 0, name
    assert "calc__calc-3" in (tmp_path / "from-store" / "verdicts.jsonl").read_text()


def test_report_names_a_missing_store(tmp_path: Path) -> None:
    env = os.environ | {"HACKAUDIT_STATE_DIR": str(tmp_path / "nothing"), "COLUMNS": "300"}
    env.pop("HACKAUDIT_SCORER_RESULTS_DB", None)
    done = cli(env, "report", "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "results.duckdb" in done.stderr and "no results store" in done.stderr
    explicit = cli(env, "report", "--store", str(tmp_path / "other.duckdb"))
    assert explicit.returncode == 1 and "other.duckdb" in explicit.stderr


def test_report_with_the_task_files_writes_the_hardened_dataset(tmp_path: Path) -> None:
    import json

    state_dir = tmp_path / "state"
    store = DuckDBAuditStore(state_dir / "results.duckdb")
    states = sample_states()
    for state in states:
        store.save(state)
    store.close()
    tasks = {s.task.instance_id: s.task for s in states}
    rows = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tasks.values()]
    rows.append(rows[0] | {"instance_id": "calc__calc-99"})  # submitted, not scored yet
    task_file = tmp_path / "tasks" / "submitted.jsonl"
    task_file.parent.mkdir()
    task_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = os.environ | {"HACKAUDIT_STATE_DIR": str(state_dir), "COLUMNS": "200"}
    env.pop("HACKAUDIT_SCORER_RESULTS_DB", None)

    done = cli(env, "report", "--out", str(tmp_path / "out"), str(task_file))
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "out" / "dataset"
    written = {p.name: p.read_text().splitlines() for p in folder.glob("*.jsonl")}
    latest = {i.instance_id: i.scored for i in latest_per_task(states) if i.scored is not None}
    for verdict in ("KEEP", "FIX", "DROP"):
        expected = {i for i, s in latest.items() if s.verdict.value == verdict}
        got = {
            json.loads(line)["instance_id"] for line in written.get(f"{verdict.lower()}.jsonl", [])
        }
        assert got == expected, verdict
    errors = {json.loads(line)["instance_id"] for line in written["error.jsonl"]}
    assert "calc__calc-99" in errors  # no verdict yet: listed with why, never lost

    # a row the task files cannot give is rejected, kept in rejected.jsonl, and fails the run...
    with task_file.open("a") as fh:
        fh.write("{not json\n")
    again = cli(env, "report", "--out", str(tmp_path / "out"), str(task_file))
    assert again.returncode == PARTIAL_EXIT, again.stderr
    assert "1 input row(s) rejected" in again.stderr
    (rejected,) = (tmp_path / "out" / "dataset" / "rejected.jsonl").read_text().splitlines()
    assert json.loads(rejected)["line"] == len(rows) + 1
    # ...unless the run allows it; --json prints the summary the report's files hold
    allowed = cli(
        env, "report", "--out", str(tmp_path / "out"), str(task_file),
        "--allow-partial", "--json",
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    summary = json.loads(allowed.stdout)
    assert summary == json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["headline"]["rejected"] == 1 and summary["headline"]["rows"] == len(rows) + 1
