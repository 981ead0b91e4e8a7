"""`hackaudit status --json`: the facts of the status tables as one JSON document on stdout, for
a script or a dashboard; an unreachable bus is still one error line and exit 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.scorer.handlers import ScorerHandlers
from hackaudit.shared.nats_server import free_port
from tests.unit.scorer.test_admission import ingested
from tests.unit.scorer.test_scorer_died_before_sending import POLICY, DiesOnce

RUN = "from hackaudit.cli.main import run; run()"
TASKS = Path(__file__).parents[3] / "examples" / "tasks" / "semverlite.jsonl"


def _cli(nats: str, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NATS_URL": nats, "HACKAUDIT_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-c", RUN, *args],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _status(nats: str, state: Path) -> subprocess.CompletedProcess[str]:
    return _cli(nats, state, "status", "--json")


def test_status_json_is_one_document_of_the_tables_facts(nats_url: str, tmp_path: Path) -> None:
    submitted = _cli(nats_url, tmp_path, "submit", str(TASKS))
    assert submitted.returncode == 0, submitted.stderr
    tasks = sum(1 for line in TASKS.read_text().splitlines() if line.strip())
    done = _status(nats_url, tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert set(document) >= {"consumers", "tasks_by_stage", "messages", "verdicts",
                             "metrics_endpoints", "dead_letters"}  # fmt: skip
    assert document["tasks_by_stage"]["ingested"] == tasks
    assert document["tasks_by_stage"]["scored"] == 0 and document["messages"] == tasks
    assert document["dead_letters"] == [] and document["metrics_endpoints"] == []
    # no results store yet: no counts, and why
    assert document["verdicts"] is None and document["verdicts_note"]
    assert document["audits_by_stage"] is None


async def test_status_shows_stopped_audits_under_their_own_name(
    nats_url: str, tmp_path: Path
) -> None:
    store = DuckDBAuditStore(tmp_path / "results.duckdb")
    handlers = ScorerHandlers(store, DiesOnce(), POLICY, in_flight=1)
    for n in (1, 2):
        await handlers.task_ingested(ingested(n))
    store.stop_unfinished()

    done = _status(nats_url, tmp_path)

    assert done.returncode == 0, done.stderr
    stages = json.loads(done.stdout)["audits_by_stage"]
    assert stages["stopped"] == 2 and stages["queued"] == stages["sanity"] == 0


def test_status_json_with_no_bus_is_one_error_line(tmp_path: Path) -> None:
    done = _status(f"nats://127.0.0.1:{free_port()}", tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot reach NATS" in done.stderr and "Traceback" not in done.stderr
