"""A real service's ops endpoint against a real nats-server, scraped over loopback.

The scorer runs with its metrics port; a durable consumer no one consumes (the sandbox's, with no
sandbox worker) fills up, and `/metrics` shows its lag; a message the scorer cannot read is
dead-lettered and counted; `/readyz` follows the NATS connection down and back up; `/healthz`
fails while the event loop is blocked and recovers after. `/metrics` answers OpenMetrics to a
scraper that asks for it (as Prometheus does) and the classic text format to any other.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import nats
import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from hackaudit.scorer.app import ScorerSettings
from hackaudit.scorer.app import build as build_scorer
from hackaudit.shared import bus, metrics, ops_endpoint, subjects
from hackaudit.shared.nats_server import EmbeddedNats, free_port
from hackaudit.shared.ops_endpoint import ENDPOINTS_DIR, OpsSettings
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

QUEUED = 4
# What Prometheus (2.x and 3.x) sends when it scrapes, and what an old scraper sends.
PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
CLASSIC_ACCEPT = "text/plain;version=0.0.4;q=1,*/*;q=0.1"


def get(url: str) -> tuple[int, bytes]:
    status, body, _ = get_typed(url)
    return status, body


def get_typed(url: str, accept: str | None = None) -> tuple[int, bytes, str]:
    """Status, body and Content-Type of a GET (with `accept` as its Accept header)."""
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status), response.read(), response.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers["Content-Type"]


async def aget(url: str) -> tuple[int, bytes]:
    return await asyncio.to_thread(get, url)


def sample(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return None


async def eventually(
    check: Callable[[], Awaitable[tuple[bool, object]]], timeout_s: float = 20.0
) -> None:
    """Wait until `check` says (True, _); fail with what it last saw."""
    deadline = time.monotonic() + timeout_s
    seen: object = None
    while time.monotonic() < deadline:
        ok, seen = await check()
        if ok:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"not reached in {timeout_s}s; last seen: {seen!r}")


async def test_endpoint_reports_lag_dead_letters_readiness_and_health(tmp_path: Path) -> None:
    settings = BusSettings(state_dir=tmp_path / "state", retry_delay_s=0.1)
    ops = OpsSettings(host="127.0.0.1", port=free_port(), lag_interval_s=0.3, stall_after_s=0.8)
    base = f"http://127.0.0.1:{ops.port}"
    server = EmbeddedNats(tmp_path / "nats").start()
    scorer = build_scorer(settings, ScorerSettings(results_db=tmp_path / "results.duckdb"))
    try:
        async with running(server.url, scorer, settings, ops):
            record = settings.state_dir / ENDPOINTS_DIR
            (entry,) = [json.loads(p.read_text()) for p in record.glob("*.json")]
            assert entry["url"] == base and entry["services"] == ["scorer"]

            status, body = await aget(f"{base}/readyz")
            assert status == 200, body
            assert json.loads(body)["services"]["scorer"] == {"ready": True, "problem": ""}
            status, body = await aget(f"{base}/healthz")
            assert status == 200 and json.loads(body)["ok"] is True

            # the sandbox's queue, declared as a sandbox worker would, with no worker on it
            nc = await nats.connect(server.url)
            js = nc.jetstream()
            await bus.declare_topology(js, settings, [subjects.SANDBOX_RUNS])
            for n in range(QUEUED):
                await js.publish(subjects.RUN_REQUESTED, json.dumps({"n": n}).encode())
            # and a body the scorer cannot read: dead-lettered, and counted
            dead = "hackaudit_dead_letters_total"
            labels = {"subject": subjects.TASK_INGESTED, "reason": "invalid"}
            before = sample((await aget(f"{base}/metrics"))[1].decode(), dead, **labels) or 0.0
            await js.publish(subjects.TASK_INGESTED, b'{"broken": true}')
            await nc.close()

            async def lag_and_dead_letter_shown() -> tuple[bool, object]:
                text = (await aget(f"{base}/metrics"))[1].decode()
                lag = sample(text, "hackaudit_queue_lag_messages", consumer="sandbox-runs")
                own = sample(text, "hackaudit_queue_lag_messages", consumer="scorer-ingested")
                letters = sample(text, dead, **labels)
                stored = sample(text, "hackaudit_dead_letter_stream_messages")
                seen = (lag, own, letters, stored)
                return seen == (QUEUED, 0, before + 1, 1), seen

            await eventually(lag_and_dead_letter_shown)

            # the bus goes away: not ready (alive all the same), then ready again
            await asyncio.to_thread(server.stop)

            async def not_ready() -> tuple[bool, object]:
                status, body = await aget(f"{base}/readyz")
                problem = json.loads(body)["services"]["scorer"]["problem"]
                return status == 503 and problem == "not connected to NATS", (status, problem)

            await eventually(not_ready)
            assert (await aget(f"{base}/healthz"))[0] == 200
            server = EmbeddedNats(tmp_path / "nats", port=server.port)
            await asyncio.to_thread(server.start)
            await eventually(lambda: _ready(base), timeout_s=30)

            # a blocked event loop: the endpoint's own thread says so
            time.sleep(1.5)  # blocking the loop is the point
            status, body = get(f"{base}/healthz")
            assert status == 503, body
            assert json.loads(body)["event_loop_last_tick_s"] >= 0.8
            await asyncio.sleep(0.5)
            assert (await aget(f"{base}/healthz"))[0] == 200
        # stopped: the endpoint is gone, and so is its record
        assert not list((settings.state_dir / ENDPOINTS_DIR).glob("*.json"))
        assert ops_endpoint.current() is None
        with pytest.raises(urllib.error.URLError):
            get(f"{base}/healthz")
    finally:
        server.stop()


async def _ready(base: str) -> tuple[bool, object]:
    status, body = await aget(f"{base}/readyz")
    return status == 200, body


async def test_two_services_in_one_process_share_one_endpoint(tmp_path: Path) -> None:
    """As in `hackaudit up`: one port, readiness of both, the endpoint gone with the last."""
    from hackaudit.judge.app import build as build_judge

    settings = BusSettings(state_dir=tmp_path / "state")
    ops = OpsSettings(host="127.0.0.1", port=free_port(), lag_interval_s=0.3)
    base = f"http://127.0.0.1:{ops.port}"
    with EmbeddedNats(tmp_path / "nats") as server:
        scorer = build_scorer(settings, ScorerSettings(results_db=tmp_path / "results.duckdb"))
        async with running(server.url, scorer, settings, ops):
            async with running(server.url, build_judge(settings), settings, ops):
                status, body = await aget(f"{base}/readyz")
                assert status == 200, body
                assert set(json.loads(body)["services"]) == {"scorer", "judge"}
                text = (await aget(f"{base}/metrics"))[1].decode()
                assert sample(text, "hackaudit_verdicts_total", verdict="KEEP") is not None
                assert sample(text, "hackaudit_build_info", service="judge") == 1
                assert sample(text, "hackaudit_build_info", service="scorer") == 1
            status, body = await aget(f"{base}/readyz")
            assert set(json.loads(body)["services"]) == {"scorer"}
            text = (await aget(f"{base}/metrics"))[1].decode()
            assert sample(text, "hackaudit_build_info", service="judge") is None
            assert sample(text, "hackaudit_build_info", service="scorer") == 1
        assert ops_endpoint.current() is None


async def test_metrics_are_openmetrics_when_asked_for_and_classic_text_otherwise(
    tmp_path: Path,
) -> None:
    settings = BusSettings(state_dir=tmp_path / "state")
    ops = OpsSettings(host="127.0.0.1", port=free_port(), lag_interval_s=0.3)
    url = f"http://127.0.0.1:{ops.port}/metrics"
    build = {"service": "scorer", "version": metrics.installed_version()}
    with EmbeddedNats(tmp_path / "nats") as server:
        scorer = build_scorer(settings, ScorerSettings(results_db=tmp_path / "results.duckdb"))
        async with running(server.url, scorer, settings, ops):
            status, body, content_type = await asyncio.to_thread(get_typed, url, PROMETHEUS_ACCEPT)
            assert status == 200
            assert content_type.startswith("application/openmetrics-text; version=1.0.0")
            text = body.decode()
            assert text.endswith("# EOF\n")
            assert "# UNIT hackaudit_queue_lag_messages messages" in text
            assert "# UNIT hackaudit_sandbox_run_duration_seconds seconds" in text
            families = {f.name: f for f in openmetrics_families(text)}  # strict: raises if not
            assert families["hackaudit_build"].type == "info"
            assert families["hackaudit_verdicts"].type == "counter"
            (info,) = families["hackaudit_build"].samples
            assert (info.name, info.labels, info.value) == ("hackaudit_build_info", build, 1)

            for accept in (CLASSIC_ACCEPT, None):
                status, body, content_type = await asyncio.to_thread(get_typed, url, accept)
                assert status == 200
                assert content_type == "text/plain; version=0.0.4; charset=utf-8"
                text = body.decode()
                assert "# EOF" not in text and "# UNIT" not in text
                assert sample(text, "hackaudit_build_info", **build) == 1
                assert sample(text, "hackaudit_verdicts_total", verdict="KEEP") == 0
