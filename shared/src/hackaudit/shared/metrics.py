"""The Prometheus metrics of every hackaudit service, defined in one place.

Services record what happened through the small `record_*` functions below, one call per event,
so handlers stay thin and every metric name, label and bucket is decided here. The metrics live
in one registry per process (created on first use, not at import): `hackaudit up` runs several
services in one process and they share it; `hackaudit.shared.ops_endpoint` serves it over HTTP.

    hackaudit_build_info{service,version}                 info: the services this process runs
    hackaudit_queue_lag_messages{stream,consumer}         gauge: pending + unacknowledged
    hackaudit_queue_ack_pending_messages{stream,consumer} gauge: delivered, not yet acknowledged
    hackaudit_dead_letter_stream_messages                 gauge: messages kept in the dead letters
    hackaudit_sandbox_runs_total{outcome}                 counter: test runs by their status
    hackaudit_sandbox_run_duration_seconds{outcome}       histogram: how long a run took
    hackaudit_verdicts_total{verdict}                     counter: verdicts the scorer issued
    hackaudit_dead_letters_total{subject,reason}          counter: messages this process buried
    hackaudit_llm_tokens_total{service,direction}         counter: model tokens, input / output

Names follow Prometheus' conventions: a gauge or histogram ends with its unit (`unit=` also gives
the OpenMetrics `# UNIT` line), a counter with `_total` (prometheus_client adds it).

The lag is the quantity KEDA's `nats-jetstream` scaler reads (the consumer's `num_pending` +
`num_ack_pending`), so an alert on the gauge and the scaler agree.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from importlib import metadata

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
)

from hackaudit.shared.contracts import RunCompleted, RunStatus, Verdict

NAMESPACE = "hackaudit"
# Test runs last from a fraction of a second (a small repository) to many minutes (a large one).
RUN_DURATION_BUCKETS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 1800.0)
LLM_SERVICES = ("attacker", "judge", "repairer")
# The distributions whose version is the build's: the whole project, else (a services image
# without the CLI) the shared package every service has.
VERSION_DISTRIBUTIONS = ("hackaudit", "hackaudit-shared")


def installed_version() -> str:
    """The version of hackaudit installed here (`0+unknown` when run from sources)."""
    for distribution in VERSION_DISTRIBUTIONS:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return "0+unknown"


class DeadLetterReason(StrEnum):
    """Why a message was dead-lettered, as a label (the full reason is in the dead letter)."""

    INVALID = "invalid"  # the body does not validate against its contract
    PERMANENT = "permanent"  # the handler raised PermanentError
    RETRIES_EXHAUSTED = "retries_exhausted"  # the handler failed on every allowed delivery
    UNACKNOWLEDGED = "unacknowledged"  # delivered too often without an ack (workers died)


@dataclass(frozen=True)
class Metrics:
    """Every metric, registered in `registry`."""

    registry: CollectorRegistry
    build_info: Info
    queue_lag: Gauge
    queue_ack_pending: Gauge
    dead_letter_stream_messages: Gauge
    sandbox_runs: Counter
    run_duration: Histogram
    verdicts: Counter
    dead_letters: Counter
    llm_tokens: Counter

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None) -> Metrics:
        """The metrics in a new registry (or `registry`), with every known label value at 0, so
        a rate is defined from the first scrape."""
        # `*_created` series only double the exposition: counters here start with the process.
        disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in the library
        registry = registry or CollectorRegistry()
        metrics = cls(
            registry=registry,
            build_info=Info(
                "build",
                "The hackaudit version of each service this process runs (value 1).",
                ["service"],
                namespace=NAMESPACE,
                registry=registry,
            ),
            queue_lag=Gauge(
                "queue_lag",
                "Messages of a durable consumer not yet acknowledged: pending + ack pending.",
                ["stream", "consumer"],
                namespace=NAMESPACE,
                unit="messages",
                registry=registry,
            ),
            queue_ack_pending=Gauge(
                "queue_ack_pending",
                "Messages of a durable consumer delivered to a worker and not yet acknowledged.",
                ["stream", "consumer"],
                namespace=NAMESPACE,
                unit="messages",
                registry=registry,
            ),
            dead_letter_stream_messages=Gauge(
                "dead_letter_stream",
                "Messages kept in the dead-letter stream (whichever process buried them).",
                namespace=NAMESPACE,
                unit="messages",
                registry=registry,
            ),
            sandbox_runs=Counter(
                "sandbox_runs",
                "Test runs the sandbox made, by outcome (the run's status).",
                ["outcome"],
                namespace=NAMESPACE,
                registry=registry,
            ),
            run_duration=Histogram(
                "sandbox_run_duration",
                "Wall-clock time of one test run in the sandbox, by outcome.",
                ["outcome"],
                namespace=NAMESPACE,
                unit="seconds",
                registry=registry,
                buckets=RUN_DURATION_BUCKETS,
            ),
            verdicts=Counter(
                "verdicts",
                "Verdicts the scorer issued (a re-audit after repair issues another).",
                ["verdict"],
                namespace=NAMESPACE,
                registry=registry,
            ),
            dead_letters=Counter(
                "dead_letters",
                "Messages this process sent to the dead letters, by subject and reason.",
                ["subject", "reason"],
                namespace=NAMESPACE,
                registry=registry,
            ),
            llm_tokens=Counter(
                "llm_tokens",
                "Model tokens spent, by service and direction (input or output).",
                ["service", "direction"],
                namespace=NAMESPACE,
                registry=registry,
            ),
        )
        for status in RunStatus:
            metrics.sandbox_runs.labels(outcome=status.value)
            metrics.run_duration.labels(outcome=status.value)
        for verdict in Verdict:
            metrics.verdicts.labels(verdict=verdict.value)
        for service in LLM_SERVICES:
            for direction in ("input", "output"):
                metrics.llm_tokens.labels(service=service, direction=direction)
        return metrics

    # --- recording -------------------------------------------------------------------------

    def record_service(self, service: str, version: str | None = None) -> None:
        """`service` runs in this process, at `version` (the installed one by default)."""
        self.build_info.labels(service=service).info({"version": version or installed_version()})

    def forget_service(self, service: str) -> None:
        """`service` no longer runs in this process."""
        with contextlib.suppress(KeyError):
            self.build_info.remove(service)

    def record_run(self, completed: RunCompleted) -> None:
        """Each execution in a run result (a request with repeats holds several)."""
        for result in completed.results:
            self.sandbox_runs.labels(outcome=result.status.value).inc()
            self.run_duration.labels(outcome=result.status.value).observe(result.duration_s)

    def record_verdict(self, verdict: Verdict) -> None:
        self.verdicts.labels(verdict=verdict.value).inc()

    def record_dead_letter(self, subject: str, reason: DeadLetterReason) -> None:
        self.dead_letters.labels(subject=subject, reason=reason.value).inc()

    def record_llm_tokens(self, service: str, input_tokens: int, output_tokens: int) -> None:
        self.llm_tokens.labels(service=service, direction="input").inc(max(0, input_tokens))
        self.llm_tokens.labels(service=service, direction="output").inc(max(0, output_tokens))

    def set_queue_lag(self, stream: str, lags: Iterable[ConsumerLag]) -> None:
        """Replace the lag of `stream`'s consumers: consumers no longer listed are dropped."""
        seen = set()
        for lag in lags:
            self.queue_lag.labels(stream=stream, consumer=lag.consumer).set(lag.lag)
            self.queue_ack_pending.labels(stream=stream, consumer=lag.consumer).set(lag.ack_pending)
            seen.add(lag.consumer)
        self._drop_consumers(stream, keep=seen)

    def clear_queue_lag(self, stream: str) -> None:
        """Forget `stream`'s lag (it could not be read): no stale figure is served."""
        self._drop_consumers(stream, keep=set())

    def _drop_consumers(self, stream: str, keep: set[str]) -> None:
        for gauge in (self.queue_lag, self.queue_ack_pending):
            for family in gauge.collect():
                for sample in family.samples:
                    labels = sample.labels
                    if labels.get("stream") == stream and labels.get("consumer") not in keep:
                        gauge.remove(stream, labels["consumer"])


@dataclass(frozen=True)
class ConsumerLag:
    """One durable consumer's backlog, as JetStream reports it."""

    consumer: str
    pending: int  # matching messages not yet delivered
    ack_pending: int  # delivered, not yet acknowledged

    @property
    def lag(self) -> int:
        return self.pending + self.ack_pending


_lock = threading.Lock()
_process: Metrics | None = None


def process_metrics() -> Metrics:
    """This process's metrics (created on first use, with the process and runtime collectors)."""
    global _process
    with _lock:
        if _process is None:
            registry = CollectorRegistry()
            for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
                registry.register(collector)
            _process = Metrics.create(registry)
        return _process


def record_run(completed: RunCompleted) -> None:
    process_metrics().record_run(completed)


def record_verdict(verdict: Verdict) -> None:
    process_metrics().record_verdict(verdict)


def record_dead_letter(subject: str, reason: DeadLetterReason) -> None:
    process_metrics().record_dead_letter(subject, reason)


def record_llm_tokens(service: str, input_tokens: int, output_tokens: int) -> None:
    process_metrics().record_llm_tokens(service, input_tokens, output_tokens)
