"""A command that needs the bus, given a NATS address nothing answers at, says so in one error
and exits 1: no traceback from the client's retries, no wait without end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

TASKS = Path(__file__).parents[3] / "examples" / "tasks" / "semverlite.jsonl"


def _dead_port() -> int:
    """A loopback port that refuses connections (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("command", [["status"], ["submit", str(TASKS)]])
def test_an_unreachable_nats_is_one_error(command: list[str], tmp_path: Path) -> None:
    url = f"nats://127.0.0.1:{_dead_port()}"
    env = {**os.environ, "NATS_URL": url, "HACKAUDIT_STATE_DIR": str(tmp_path), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", "from hackaudit.cli.main import run; run()", *command],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert f"error: cannot reach NATS at {url}" in said
    assert "Traceback" not in said and "encountered error" not in said
    assert len(said.strip().splitlines()) == 1, said
