"""What `hackaudit status` reads from the services' metrics endpoints on this machine.

Each process serving `/metrics` records its address under `<state dir>/metrics-endpoints/`
(see `hackaudit.shared.ops_endpoint`). This module probes each one (`/healthz`, `/readyz`) and
sums the counters an operator looks at first, so `status` shows the same figures Prometheus
scrapes. An endpoint that does not answer is reported as such (its process may have been killed).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hackaudit.shared.ops_endpoint import ENDPOINTS_DIR

PROBE_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class MetricsSummary:
    """The headline figures of one endpoint's `/metrics`."""

    runs: dict[str, float] = field(default_factory=dict)  # outcome -> runs
    verdicts: dict[str, float] = field(default_factory=dict)
    dead_letters: float = 0.0
    tokens: dict[str, float] = field(default_factory=dict)  # direction -> tokens
    lag: dict[str, float] = field(default_factory=dict)  # consumer -> lag


def summarise(text: str) -> MetricsSummary:
    """Sum the hackaudit series of a Prometheus text exposition by the label that matters."""
    runs: dict[str, float] = defaultdict(float)
    verdicts: dict[str, float] = defaultdict(float)
    tokens: dict[str, float] = defaultdict(float)
    lag: dict[str, float] = {}
    dead = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            name, labels, value = sample.name, sample.labels, sample.value
            if name == "hackaudit_sandbox_runs_total":
                runs[labels["outcome"]] += value
            elif name == "hackaudit_verdicts_total":
                verdicts[labels["verdict"]] += value
            elif name == "hackaudit_dead_letters_total":
                dead += value
            elif name == "hackaudit_llm_tokens_total":
                tokens[labels["direction"]] += value
            elif name == "hackaudit_queue_lag_messages":
                lag[labels["consumer"]] = value
    return MetricsSummary(dict(runs), dict(verdicts), dead, dict(tokens), lag)


@dataclass(frozen=True)
class EndpointStatus:
    url: str
    pid: int
    services: list[str]
    healthy: bool | None  # None: no answer
    ready: bool | None
    problems: dict[str, str]  # service -> why it is not ready
    summary: MetricsSummary | None
    error: str = ""


def recorded(state_dir: Path) -> list[dict[str, Any]]:
    """The endpoints recorded in `state_dir`, oldest process first."""
    entries = []
    for path in sorted((state_dir / ENDPOINTS_DIR).glob("*.json")):
        try:
            entries.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return entries


def _get(url: str) -> tuple[int, bytes]:
    if not url.startswith("http://"):
        raise ValueError(f"not an http URL: {url}")
    try:
        with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S) as response:  # noqa: S310
            return int(response.status), response.read()
    except urllib.error.HTTPError as exc:  # 503 from a probe is an answer, not a failure
        return exc.code, exc.read()


def probe(entry: dict[str, Any]) -> EndpointStatus:
    url, pid, services = str(entry["url"]), int(entry.get("pid", 0)), list(entry["services"])
    try:
        health_code, _ = _get(f"{url}/healthz")
        ready_code, ready_body = _get(f"{url}/readyz")
        _, metrics_text = _get(f"{url}/metrics")
    except (OSError, ValueError) as exc:
        return EndpointStatus(url, pid, services, None, None, {}, None, error=str(exc))
    ready = json.loads(ready_body).get("services", {})
    problems = {name: s["problem"] for name, s in ready.items() if s.get("problem")}
    return EndpointStatus(
        url,
        pid,
        services,
        health_code == 200,
        ready_code == 200,
        problems,
        summarise(metrics_text.decode()),
    )


def endpoints(state_dir: Path) -> list[EndpointStatus]:
    return [probe(entry) for entry in recorded(state_dir)]


def endpoint_document(e: EndpointStatus) -> dict[str, Any]:
    """One endpoint as `status --json` gives it: what its table row shows, unabbreviated."""
    s = e.summary
    return {
        "endpoint": e.url,
        "pid": e.pid,
        "services": e.services,
        "healthy": e.healthy,  # null: no answer
        "ready": e.ready,
        "problems": e.problems,
        "error": e.error or None,
        "runs": s.runs if s else None,
        "verdicts": s.verdicts if s else None,
        "dead_letters": s.dead_letters if s else None,
        "tokens": s.tokens if s else None,
        "lag": s.lag if s else None,
    }


def show(console: Console, state_dir: Path) -> None:
    """Print the endpoints of this machine's services, or how to turn them on."""
    found = endpoints(state_dir)
    if not found:
        console.print(
            "metrics endpoints: none recorded here (start the services with "
            "HACKAUDIT_METRICS_PORT=9464 for /metrics, /healthz and /readyz)"
        )
        return
    table = Table(title="metrics endpoints (this machine)")
    for column in ("endpoint", "pid", "services", "health", "ready", "runs", "verdicts",
                   "dead letters", "tokens in/out"):  # fmt: skip
        table.add_column(column)
    for e in found:
        if e.summary is None:
            table.add_row(e.url, str(e.pid), ", ".join(e.services), "no answer", "", "", "",
                          "", "", style="red")  # fmt: skip
            continue
        s = e.summary
        verdicts = " ".join(f"{v}:{n:.0f}" for v, n in s.verdicts.items() if n)
        ready = "yes" if e.ready else "no: " + "; ".join(f"{k} {v}" for k, v in e.problems.items())
        table.add_row(
            e.url,
            str(e.pid),
            ", ".join(e.services),
            "ok" if e.healthy else "stalled",
            escape(ready),
            f"{sum(s.runs.values()):.0f}",
            verdicts or "-",
            f"{s.dead_letters:.0f}",
            f"{s.tokens.get('input', 0):.0f}/{s.tokens.get('output', 0):.0f}",
        )
    console.print(table)
