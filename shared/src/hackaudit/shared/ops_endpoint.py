"""The HTTP endpoint an operator, Prometheus and Kubernetes read: `/metrics`, `/healthz`, `/readyz`.

One endpoint per process, whatever the number of services in it (`hackaudit up` runs them all
in one process; a container runs one). It is off unless `HACKAUDIT_METRICS_PORT` is set.

- `/healthz` — the process is alive and its event loop responsive: a heartbeat task ticks every
  second, and the check fails (503) when it has not ticked for `stall_after_s`. The server runs in
  its own thread, so a blocked loop is seen, not waited on.
- `/readyz` — every service of the process is started, its NATS connection is up and each of its
  durable consumers is subscribed (503 otherwise, with the reason per service).
- `/metrics` — the registry of `hackaudit.shared.metrics`, in the format the scraper's `Accept`
  asks for: OpenMetrics for Prometheus (which asks for it), the classic text format otherwise
  (prometheus_client's own choice of encoder). The queue lag of every durable consumer
  on the stream (not only this process's) is polled from JetStream every `lag_interval_s`, so any
  service reports the sandbox backlog, even when no sandbox worker runs.

A running endpoint records its address in `<state dir>/metrics-endpoints/<pid>.json`, which
`hackaudit status` reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

import nats.errors
from faststream.exceptions import IncorrectState
from faststream.nats import NatsBroker
from nats.js import JetStreamContext
from prometheus_client.exposition import choose_encoder
from pydantic import Field
from pydantic_settings import SettingsConfigDict

from hackaudit.shared import subjects
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.logs import get_logger
from hackaudit.shared.metrics import ConsumerLag, Metrics, process_metrics
from hackaudit.shared.settings import FileSettings

log = get_logger("hackaudit.ops")
ENDPOINTS_DIR = "metrics-endpoints"
HEARTBEAT_S = 1.0  # at most; a few ticks fit in `stall_after_s` whatever it is


class OpsSettings(FileSettings):
    """Where the endpoint listens and how often it looks at the bus."""

    config_section = "metrics"
    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_METRICS_", extra="ignore")

    port: int = Field(default=0, ge=0, le=65535)  # 0: no endpoint
    # All interfaces, so Prometheus and the kubelet reach it in a container; 127.0.0.1 on a host.
    host: str = "0.0.0.0"  # noqa: S104
    lag_interval_s: float = Field(default=5.0, gt=0)
    stall_after_s: float = Field(default=10.0, gt=0)


# --- readiness and health, as values ---------------------------------------------------------


@dataclass(frozen=True)
class ServiceState:
    """What readiness looks at for one service."""

    name: str
    started: bool
    connected: bool
    subscribed: int  # subscribers running
    subscribers: int  # subscribers attached

    @property
    def problem(self) -> str:
        """Why the service is not ready; empty when it is."""
        if not self.started:
            return "not started"
        if not self.connected:
            return "not connected to NATS"
        if self.subscribed < self.subscribers or self.subscribers == 0:
            return f"{self.subscribed} of {self.subscribers} consumers subscribed"
        return ""


def readiness(states: Iterable[ServiceState]) -> tuple[bool, dict[str, Any]]:
    """Ready when there is a service and none has a problem."""
    listed = list(states)
    body = {s.name: {"ready": not s.problem, "problem": s.problem} for s in listed}
    return bool(listed) and not any(s.problem for s in listed), body


def health(last_beat: float, now: float, stall_after_s: float) -> tuple[bool, dict[str, Any]]:
    """Healthy while the event loop's heartbeat is recent."""
    since = max(0.0, now - last_beat)
    return since < stall_after_s, {"event_loop_last_tick_s": round(since, 3)}


def consumer_lags(infos: Iterable[Any]) -> list[ConsumerLag]:
    """The backlog of each consumer in JetStream's consumer infos."""
    return [
        ConsumerLag(str(i.name), int(i.num_pending or 0), int(i.num_ack_pending or 0))
        for i in infos
    ]


# --- one service as the endpoint sees it -----------------------------------------------------


@dataclass(eq=False)
class Registration:
    """A service of this process: set `started` once its broker consumes, unset before it stops."""

    service: str
    broker: NatsBroker
    started: bool = False

    def state(self) -> ServiceState:
        try:
            connected = bool(self.broker.config.connection_state.connection.is_connected)
        except IncorrectState:
            connected = False
        subscribers = self.broker.subscribers
        running = sum(bool(getattr(s, "running", False)) for s in subscribers)
        return ServiceState(self.service, self.started, connected, running, len(subscribers))

    def jetstream(self) -> JetStreamContext | None:
        if not self.started:
            return None
        try:
            state = self.broker.config.connection_state
            return state.stream if state.connection.is_connected else None
        except IncorrectState:
            return None


class _Reader(Protocol):
    def metrics_text(self, accept: str) -> tuple[bytes, str]: ...
    def health(self) -> tuple[bool, dict[str, Any]]: ...
    def readiness(self) -> tuple[bool, dict[str, Any]]: ...


class _Handler(BaseHTTPRequestHandler):
    reader: _Reader  # set on the subclass made per endpoint

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            payload, content_type = self.reader.metrics_text(self.headers.get("Accept", ""))
            self._send(HTTPStatus.OK, payload, content_type)
        elif path in ("/healthz", "/readyz"):
            ok, body = self.reader.health() if path == "/healthz" else self.reader.readiness()
            status = HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE
            payload = json.dumps({"ok": ok, **body}).encode()
            self._send(status, payload, "application/json")
        else:
            self._send(
                HTTPStatus.NOT_FOUND, b"not found: /metrics, /healthz, /readyz\n", "text/plain"
            )

    def _send(self, status: HTTPStatus, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Probes come every few seconds: they are not worth a log line each."""


# --- the process's endpoint -------------------------------------------------------------------


@dataclass(eq=False)
class OpsEndpoint:
    settings: OpsSettings
    metrics: Metrics
    state_dir: Path | None = None
    registrations: list[Registration] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _last_beat: float = field(default_factory=time.monotonic)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1]) if self._server else self.settings.port

    @property
    def url(self) -> str:
        host = self.settings.host
        shown = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host  # noqa: S104
        return f"http://{shown}:{self.port}"

    # readers, called from the server's threads

    def metrics_text(self, accept: str) -> tuple[bytes, str]:
        """The exposition and its content type, as the `Accept` header asks."""
        encode, content_type = choose_encoder(accept)
        return encode(self.metrics.registry), content_type

    def health(self) -> tuple[bool, dict[str, Any]]:
        return health(self._last_beat, time.monotonic(), self.settings.stall_after_s)

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        ok, services = readiness(r.state() for r in list(self.registrations))
        return ok, {"services": services}

    # life cycle, on the event loop

    async def start(self) -> None:
        handler = type("OpsHandler", (_Handler,), {"reader": self})
        self._server = ThreadingHTTPServer((self.settings.host, self.settings.port), handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, name="hackaudit-ops", daemon=True
        ).start()
        self._last_beat = time.monotonic()
        self._tasks = [
            asyncio.create_task(self._heartbeat(), name="ops-heartbeat"),
            asyncio.create_task(self._poll_lag(), name="ops-lag"),
        ]
        log.info("metrics endpoint listening", url=self.url)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self._forget()
        if self._server is not None:
            server, self._server = self._server, None
            await asyncio.to_thread(server.shutdown)
            server.server_close()

    def add(self, registration: Registration) -> None:
        self.registrations.append(registration)
        self.metrics.record_service(registration.service)
        self._record()

    def remove(self, registration: Registration) -> None:
        self.registrations.remove(registration)
        if registration.service not in self.services():
            self.metrics.forget_service(registration.service)
        self._record()

    async def _heartbeat(self) -> None:
        while True:
            self._last_beat = time.monotonic()
            await asyncio.sleep(min(HEARTBEAT_S, self.settings.stall_after_s / 4))

    async def _poll_lag(self) -> None:
        while True:
            try:
                await self.read_lag()
            except Exception as exc:  # the poller must outlive a fault, or the lag goes stale
                self.metrics.clear_queue_lag(subjects.STREAM)
                log.warning("queue lag poll failed", error=repr(exc)[:200])
            await asyncio.sleep(self.settings.lag_interval_s)

    async def read_lag(self) -> None:
        """Set the lag gauges from JetStream; clear them when the bus cannot be read."""
        js = next((j for r in self.registrations if (j := r.jetstream()) is not None), None)
        if js is None:
            self.metrics.clear_queue_lag(subjects.STREAM)
            return
        timeout = max(1.0, self.settings.lag_interval_s)
        try:
            infos = await asyncio.wait_for(js.consumers_info(subjects.STREAM), timeout)
            self.metrics.set_queue_lag(subjects.STREAM, consumer_lags(infos))
        except (nats.errors.Error, TimeoutError, OSError) as exc:
            self.metrics.clear_queue_lag(subjects.STREAM)
            log.warning("queue lag not read", error=repr(exc)[:200])
            return
        with contextlib.suppress(nats.errors.Error, TimeoutError, OSError):
            dead = await asyncio.wait_for(js.stream_info(subjects.DEAD_LETTER_STREAM), timeout)
            self.metrics.dead_letter_stream_messages.set(dead.state.messages)

    # the address file that `hackaudit status` reads

    def _record_path(self) -> Path | None:
        if self.state_dir is None:
            return None
        return self.state_dir / ENDPOINTS_DIR / f"{os.getpid()}.json"

    def _record(self) -> None:
        path = self._record_path()
        if path is None or self._server is None:
            return
        entry = {"url": self.url, "pid": os.getpid(), "services": self.services()}
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(entry))

    def _forget(self) -> None:
        path = self._record_path()
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    def services(self) -> list[str]:
        return [r.service for r in self.registrations]


_endpoint: OpsEndpoint | None = None


def current() -> OpsEndpoint | None:
    """The endpoint of this process, while a service is registered with one."""
    return _endpoint


@contextlib.asynccontextmanager
async def registered(
    service: str, broker: NatsBroker, settings: OpsSettings, state_dir: Path | None = None
) -> AsyncIterator[Registration]:
    """`service` registered with the process's endpoint (started by the first service that
    registers, stopped when the last one leaves); a plain registration when the port is 0."""
    global _endpoint
    registration = Registration(service, broker)
    if settings.port == 0 and _endpoint is None:
        yield registration
        return
    endpoint = _endpoint
    if endpoint is None:
        endpoint = _endpoint = OpsEndpoint(settings, process_metrics(), state_dir)
        try:
            await endpoint.start()
        except OSError as exc:
            _endpoint = None
            where = f"{settings.host}:{settings.port}"
            raise HackauditError(f"metrics endpoint cannot listen on {where}: {exc}") from exc
    endpoint.add(registration)
    try:
        yield registration
    finally:
        endpoint.remove(registration)
        if not endpoint.registrations and _endpoint is endpoint:
            _endpoint = None
            await endpoint.stop()
