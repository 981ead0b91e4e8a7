"""Continuous ingestion as a new user meets it: `hackaudit up`, then `hackaudit submit` of tasks
that carry only an `environment` (no image). The sandbox builds each image on the bus, so every
task ends with a real verdict, as `audit` gives; a task whose image cannot be built ends as an
infrastructure error, and `status` shows it as "error", not as "scored"."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import nats
import pytest

from hackaudit.shared import subjects
from hackaudit.shared.contracts import TaskScored, Verdict
from hackaudit.shared.nats_server import free_port
from tests.integration.cli.test_cli_services import HACKAUDIT, cli

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
SPANLIB = REPO / "examples" / "tasks" / "spanlib.jsonl"
BROKEN = "spanlib__spanlib-unbuildable"


def _docker_or_skip() -> None:
    done = subprocess.run(["docker", "info"], capture_output=True, check=False)
    if done.returncode != 0:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine")


def stage_counts(status_stdout: str) -> dict[str, int]:
    """The 'tasks by stage' table of `hackaudit status`, as {stage: count}."""
    lines = status_stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "┃ ingested" in line)
    names = [cell.strip() for cell in lines[header].strip("┃ ").split("┃")]
    row = next(line for line in lines[header + 1 :] if line.startswith("│"))
    values = [int(cell.strip()) for cell in row.strip("│ ").split("│")]
    return dict(zip(names, values, strict=True))


async def scored_messages(url: str) -> list[TaskScored]:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        out, seq = [], 1
        while True:
            try:
                raw = await js.get_msg(
                    subjects.STREAM, seq, subject=subjects.TASK_SCORED, next=True
                )
            except nats.js.errors.NotFoundError:
                return out
            out.append(TaskScored.model_validate_json(raw.data or b""))
            seq = (raw.seq or seq) + 1
    finally:
        await nc.close()


def test_submitted_tasks_get_their_images_built_and_real_verdicts(tmp_path: Path) -> None:
    _docker_or_skip()
    env = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and "OPENAI" not in k}
    env.pop("NATS_URL", None)
    env |= {
        "HACKAUDIT_STATE_DIR": str(tmp_path / "state"),
        "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
        "COLUMNS": "250",
        "HACKAUDIT_REFERENCE_SAMPLE": "0",  # images and verdicts are the point (51 s -> 21 s)
    }
    rows = [json.loads(line) for line in SPANLIB.read_text().splitlines()]
    for row in rows:  # the sources are relative to the task file
        row["environment"]["source"] = str(
            (SPANLIB.parent / row["environment"]["source"]).resolve()
        )
    # another commit (so no image exists for it yet) from a source folder that does not exist
    broken = rows[0] | {"instance_id": BROKEN, "base_commit": "0" * 40}
    broken["environment"] = rows[0]["environment"] | {"source": str(tmp_path / "no-such-folder")}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in [*rows, broken]))

    log = (tmp_path / "up.log").open("w")
    up = subprocess.Popen(
        [*HACKAUDIT, "up", "--port", str(free_port())], env=env, stdout=log, stderr=log, text=True
    )
    try:
        url_file = tmp_path / "state" / "nats.url"
        deadline = time.monotonic() + 60
        while not url_file.exists():
            assert up.poll() is None, (tmp_path / "up.log").read_text()
            assert time.monotonic() < deadline, "hackaudit up did not start"
            time.sleep(0.2)

        submitted = cli(env, "submit", str(tasks), "-k", "1", "-r", "1")
        assert submitted.returncode == 0, submitted.stderr
        assert "Submitted 4 task(s)" in submitted.stdout

        deadline = time.monotonic() + 480
        while True:
            status = cli(env, "status")
            assert status.returncode == 0, status.stderr
            counts = stage_counts(status.stdout)
            if counts["scored"] + counts["error"] >= 4 or time.monotonic() > deadline:
                break
            time.sleep(2.0)
        assert counts["scored"] == 3, status.stdout + (tmp_path / "up.log").read_text()[-3000:]
        assert counts["error"] == 1
        assert "dead letters: none" in status.stdout

        verdicts = {s.instance_id: s for s in asyncio.run(scored_messages(url_file.read_text()))}
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=60)
        log.close()

    for row in rows:
        scored = verdicts[row["instance_id"]]
        assert scored.verdict in {Verdict.KEEP, Verdict.FIX, Verdict.DROP}, scored.reason
        assert scored.eqs is not None
    failed = verdicts[BROKEN]
    assert failed.verdict is Verdict.ERROR
    assert f"no image for task {BROKEN}" in failed.reason
