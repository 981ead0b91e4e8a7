"""How an operator reads a running system: `hackaudit up` with a metrics port, then `status`
from another shell shows the queue lag and the process's endpoint (ready, its dead letters)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from hackaudit.shared.nats_server import free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

HACKAUDIT = [sys.executable, "-m", "hackaudit.cli"]


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HACKAUDIT, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_status_shows_the_lag_and_the_metrics_endpoint_of_up(tmp_path: Path) -> None:
    state = tmp_path / "state"
    metrics_port = free_port()
    env = os.environ | {
        "HACKAUDIT_STATE_DIR": str(state),
        "HACKAUDIT_METRICS_PORT": str(metrics_port),
        "HACKAUDIT_METRICS_HOST": "127.0.0.1",
        "HACKAUDIT_METRICS_LAG_INTERVAL_S": "0.5",
        "COLUMNS": "250",
    }
    env.pop("NATS_URL", None)
    up = subprocess.Popen(
        [*HACKAUDIT, "up", "--only", "scorer", "--port", str(free_port())],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        url_file = state / "nats.url"
        deadline = time.monotonic() + 30
        while not list((state / "metrics-endpoints").glob("*.json")) or not url_file.exists():
            assert up.poll() is None, up.stdout.read() if up.stdout else ""
            assert time.monotonic() < deadline, "hackaudit up did not start"
            time.sleep(0.1)

        # a body the scorer cannot read: dead-lettered by the process behind the endpoint
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
            row = next((ln for ln in status.stdout.splitlines() if "scorer-ingested" in ln), "")
            endpoint = next(
                (ln for ln in status.stdout.splitlines() if f":{metrics_port}" in ln), ""
            )
            # endpoint, pid, services, health, ready, runs, verdicts, dead letters, tokens in/out
            cells = [c.strip() for c in endpoint.split("│") if c.strip()]
            if (cells[4:5] == ["yes"] and cells[7:8] == ["1"]) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert "metrics endpoints (this machine)" in status.stdout, status.stdout
        assert "lag" in status.stdout and row
        assert cells[0] == f"http://127.0.0.1:{metrics_port}", cells
        assert cells[2:5] == ["scorer", "ok", "yes"], cells
        assert cells[7] == "1", cells  # the dead letter above
        as_json = cli(env, "status", "--json")
        assert as_json.returncode == 0, as_json.stderr
        [endpoint_doc] = json.loads(as_json.stdout)["metrics_endpoints"]
        assert endpoint_doc["endpoint"] == f"http://127.0.0.1:{metrics_port}"
        assert endpoint_doc["ready"] is True and endpoint_doc["dead_letters"] == 1
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/readyz", timeout=5) as r:
            assert json.loads(r.read())["services"]["scorer"]["ready"] is True
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=30)
    assert up.returncode == 0
    assert not list((state / "metrics-endpoints").glob("*.json"))
