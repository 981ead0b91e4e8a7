"""`hackaudit up`, `submit` and `status` as a user runs them, in separate processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hackaudit.shared.nats_server import free_port

pytestmark = pytest.mark.integration

HACKAUDIT = [sys.executable, "-m", "hackaudit.cli"]
TASK = {
    "instance_id": "demo__demo-1",
    "repo": "demo/demo",
    "base_commit": "abc",
    "patch": "diff --git a/x.py b/x.py\n",
    "test_patch": "diff --git a/tests/t.py b/tests/t.py\n",
    "FAIL_TO_PASS": '["tests/t.py::test_a"]',
    "PASS_TO_PASS": "[]",
}


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HACKAUDIT, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_up_submit_status_and_dead_letters(tmp_path: Path) -> None:
    env = os.environ | {"HACKAUDIT_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "200"}
    env.pop("NATS_URL", None)
    tasks = tmp_path / "tasks.jsonl"
    bad = TASK | {"instance_id": "demo__demo-2", "FAIL_TO_PASS": "not json"}
    tasks.write_text(json.dumps(TASK) + "\n" + json.dumps(bad) + "\n")

    # nothing running yet: a clear error, not a hang
    early = cli(env, "status")
    assert early.returncode == 1
    assert "hackaudit up" in early.stderr

    up = subprocess.Popen(
        [*HACKAUDIT, "up", "--only", "scorer", "--port", str(free_port())],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        url_file = tmp_path / "state" / "nats.url"
        deadline = time.monotonic() + 30
        while not url_file.exists():
            assert up.poll() is None, up.stdout.read() if up.stdout else ""
            assert time.monotonic() < deadline, "hackaudit up did not start"
            time.sleep(0.1)
        time.sleep(1.0)

        # the valid task is published; the rejected row is said and fails the command (3)...
        submitted = cli(env, "submit", str(tasks))
        assert submitted.returncode == 3, submitted.stderr
        assert "Submitted 1 task(s)" in submitted.stdout
        assert "demo__demo-2" in submitted.stderr and "FAIL_TO_PASS" in submitted.stderr
        assert "1 input row(s) rejected, not submitted" in submitted.stderr
        # ...unless the run allows it
        allowed = cli(env, "submit", str(tasks), "--allow-partial")
        assert allowed.returncode == 0, allowed.stderr

        poison = cli(env, "submit", str(tmp_path / "missing.jsonl"))
        assert poison.returncode == 2  # no valid task: nothing published

        # a message that is not a TaskIngested ends in the dead letters, with its reason
        publish = (
            "import asyncio, nats\n"
            "async def main(url):\n"
            "    nc = await nats.connect(url); js = nc.jetstream()\n"
            "    await js.publish('hackaudit.task.ingested', b'{\"broken\": true}')\n"
            "    await nc.close()\n"
            f"asyncio.run(main(open({str(url_file)!r}).read()))\n"
        )
        subprocess.run([sys.executable, "-c", publish], check=True, timeout=30)

        deadline = time.monotonic() + 30
        while True:
            status = cli(env, "status")
            assert status.returncode == 0, status.stderr
            if "dead letters (1)" in status.stdout or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert "scorer-ingested" in status.stdout
        assert "tasks by stage" in status.stdout
        assert "hackaudit.task.ingested" in status.stdout
        assert "dead letters (1)" in status.stdout
        assert "invalid TaskIngested" in status.stdout
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=30)
    assert up.returncode == 0
    assert not (tmp_path / "state" / "nats.url").exists()
