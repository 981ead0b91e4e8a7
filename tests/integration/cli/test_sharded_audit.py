"""A sharded audit as a user with several machines runs it: `hackaudit up` of the scorer and the
attacker on one bus, the sandbox tier as separate `hackaudit up --only sandbox` processes (each
with its own state folder, as on its own machine, joined by `NATS_URL`), `submit` of the tasks,
then `report` from the scorer's results store, and `audit --resume` on the core's state folder,
which takes the sharded run's audits as done.

Every task ends with one verdict, both workers ran some of the runs, and the report gathers them.
Real processes throughout: the CLI, nats-server, the real Docker engine.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

import pytest

from hackaudit.scorer.adapters.store import read_results
from hackaudit.shared.nats_server import free_port
from tests.integration.cli.test_cli_continuous_images import stage_counts
from tests.integration.cli.test_cli_services import HACKAUDIT, cli

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
SPANLIB = REPO / "examples" / "tasks" / "spanlib.jsonl"
RUN_LINE = re.compile(r"sandbox\.run\b.*instance_id=(\S+)")


def _docker_or_skip() -> None:
    if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine")


def _start(args: list[str], env: dict[str, str], log: IO[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([*HACKAUDIT, *args], env=env, stdout=log, stderr=log, text=True)


@pytest.mark.timeout(600)
def test_two_sandbox_workers_share_an_audit_and_one_report_gathers_it(tmp_path: Path) -> None:
    _docker_or_skip()
    base = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and "OPENAI" not in k}
    base.pop("NATS_URL", None)
    base |= {"COLUMNS": "250", "HACKAUDIT_REFERENCE_SAMPLE": "0"}
    core_env = base | {"HACKAUDIT_STATE_DIR": str(tmp_path / "core")}
    rows = [json.loads(line) for line in SPANLIB.read_text().splitlines()]
    for row in rows:  # the sources are relative to the task file
        row["environment"]["source"] = str(
            (SPANLIB.parent / row["environment"]["source"]).resolve()
        )
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    ids = sorted(row["instance_id"] for row in rows)

    logs = {name: (tmp_path / f"{name}.log").open("w") for name in ("core", "w1", "w2")}
    processes: list[subprocess.Popen[str]] = []
    try:
        core = _start(
            [
                "up",
                "--only",
                "scorer",
                "--only",
                "attacker",
                "--only",
                "judge",
                "--port",
                str(free_port()),
            ],
            core_env,
            logs["core"],
        )
        processes.append(core)
        url_file = tmp_path / "core" / "nats.url"
        deadline = time.monotonic() + 60
        while not url_file.exists():
            assert core.poll() is None, (tmp_path / "core.log").read_text()
            assert time.monotonic() < deadline, "hackaudit up did not start"
            time.sleep(0.2)
        url = url_file.read_text().strip()
        for name in ("w1", "w2"):  # one run at a time each, so the queue is shared out
            worker_env = base | {
                "NATS_URL": url,
                "HACKAUDIT_STATE_DIR": str(tmp_path / name),
                "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(tmp_path / name / "artifacts"),
                "HACKAUDIT_SANDBOX_MAX_CONCURRENT_RUNS": "1",
            }
            processes.append(
                _start(["--log-level", "info", "up", "--only", "sandbox"], worker_env, logs[name])
            )

        submit_env = base | {"NATS_URL": url}
        submitted = cli(submit_env, "submit", str(tasks), "-k", "2", "-r", "1", "--no-repair")
        assert submitted.returncode == 0, submitted.stderr
        assert f"Submitted {len(ids)} task(s)" in submitted.stdout

        deadline = time.monotonic() + 480
        while True:
            status = cli(submit_env, "status")
            assert status.returncode == 0, status.stderr
            counts = stage_counts(status.stdout)
            if counts["scored"] + counts["error"] >= len(ids) or time.monotonic() > deadline:
                break
            for process in processes:
                assert process.poll() is None, status.stdout
            time.sleep(2.0)
        assert counts["scored"] == len(ids), status.stdout
        assert "dead letters: none" in status.stdout

        out = tmp_path / "report"
        reported = cli(core_env | {"NATS_URL": url}, "report", str(tasks), "--out", str(out))
        assert reported.returncode == 0, reported.stderr
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGINT)
        for process in processes:
            process.wait(timeout=90)
        for log in logs.values():
            log.close()

    runs = {name: RUN_LINE.findall((tmp_path / f"{name}.log").read_text()) for name in ("w1", "w2")}
    assert runs["w1"] and runs["w2"], "each worker should have run some of the audit's runs"
    assert set(runs["w1"]) | set(runs["w2"]) == set(ids)
    report = json.loads((out / "report.json").read_text())
    verdicts = {t["instance_id"]: t["verdict"] for t in report["tasks"]}
    assert sorted(verdicts) == ids and "ERROR" not in verdicts.values(), verdicts
    states = read_results(tmp_path / "core" / "results.duckdb")
    assert sorted(s.task.instance_id for s in states) == ids  # one audit each
    assert not (tmp_path / "w1" / "results.duckdb").exists()  # results live with the scorer

    # The same audit run again with --resume on the core's store: nothing is left to run.
    resumed = subprocess.run(
        [*HACKAUDIT, "audit", str(tasks), "-k", "2", "-r", "1", "--no-repair", "--resume",
         "--out", str(tmp_path / "resumed")],
        env=core_env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    said = " ".join(resumed.stderr.split())
    assert f"resuming: {len(ids)} of {len(ids)} task(s) already scored" in said
    again = json.loads((tmp_path / "resumed" / "report.json").read_text())
    assert {t["instance_id"]: t["verdict"] for t in again["tasks"]} == verdicts
