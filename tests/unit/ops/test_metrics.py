"""The metrics every service records: names, labels, what each recording call counts, the lag
gauges' replacement semantics, the dead letters counted by the delivery policy, and what
`hackaudit status` reads back from an exposition."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from prometheus_client import generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest

from hackaudit.cli.ops_status import summarise
from hackaudit.shared import bus, metrics
from hackaudit.shared.contracts import (
    AttackCompleted,
    DeadLetter,
    RunCompleted,
    RunPurpose,
    RunResult,
    RunStatus,
    Verdict,
)
from hackaudit.shared.errors import PermanentError
from hackaudit.shared.metrics import ConsumerLag, DeadLetterReason, Metrics
from hackaudit.shared.ops_endpoint import ServiceState, consumer_lags, health, readiness
from hackaudit.shared.settings import BusSettings


def value(m: Metrics, name: str, **labels: str) -> float:
    found = m.registry.get_sample_value(name, labels)
    assert found is not None, f"no sample {name}{labels}"
    return found


def absent(m: Metrics, name: str, **labels: str) -> bool:
    return m.registry.get_sample_value(name, labels) is None


def run_completed(*results: RunResult) -> RunCompleted:
    return RunCompleted(
        correlation_id="audit-1",
        instance_id="demo__demo-1",
        purpose=RunPurpose.CANDIDATE,
        request_key="k1",
        results=results,
    )


def test_every_name_is_prefixed_and_every_known_label_starts_at_zero() -> None:
    m = Metrics.create()
    text = generate_latest(m.registry).decode()
    types = dict(line.split()[2:4] for line in text.splitlines() if line.startswith("# TYPE"))
    assert types == {
        "hackaudit_build_info": "gauge",
        "hackaudit_queue_lag_messages": "gauge",
        "hackaudit_queue_ack_pending_messages": "gauge",
        "hackaudit_dead_letter_stream_messages": "gauge",
        "hackaudit_sandbox_runs_total": "counter",
        "hackaudit_sandbox_run_duration_seconds": "histogram",
        "hackaudit_verdicts_total": "counter",
        "hackaudit_dead_letters_total": "counter",
        "hackaudit_llm_tokens_total": "counter",
    }
    assert "_created" not in text
    for verdict in Verdict:
        assert value(m, "hackaudit_verdicts_total", verdict=verdict.value) == 0
    for status in RunStatus:
        assert value(m, "hackaudit_sandbox_runs_total", outcome=status.value) == 0
    assert value(m, "hackaudit_llm_tokens_total", service="judge", direction="output") == 0


def test_every_gauge_and_histogram_ends_with_its_unit_and_says_it_in_openmetrics() -> None:
    text = openmetrics_latest(Metrics.create().registry).decode()
    units = dict(line.split()[2:4] for line in text.splitlines() if line.startswith("# UNIT"))
    assert units == {
        "hackaudit_queue_lag_messages": "messages",
        "hackaudit_queue_ack_pending_messages": "messages",
        "hackaudit_dead_letter_stream_messages": "messages",
        "hackaudit_sandbox_run_duration_seconds": "seconds",
    }
    assert text.endswith("# EOF\n")


def test_build_info_names_each_service_of_the_process_with_the_installed_version() -> None:
    m = Metrics.create()
    m.record_service("scorer", "1.2.3")
    m.record_service("judge")
    assert value(m, "hackaudit_build_info", service="scorer", version="1.2.3") == 1
    assert value(m, "hackaudit_build_info", service="judge", version=metrics.installed_version())
    assert metrics.installed_version() != "0+unknown"  # the workspace is installed here
    m.forget_service("scorer")
    m.forget_service("scorer")  # already gone: nothing to do
    assert absent(m, "hackaudit_build_info", service="scorer", version="1.2.3")
    assert value(m, "hackaudit_build_info", service="judge", version=metrics.installed_version())


def test_each_execution_of_a_run_is_counted_and_timed_by_its_outcome() -> None:
    m = Metrics.create()
    m.record_run(
        run_completed(
            RunResult(status=RunStatus.COMPLETED, resolved=True, duration_s=0.4),
            RunResult(status=RunStatus.COMPLETED, resolved=False, duration_s=3.0),
            RunResult(status=RunStatus.TIMEOUT, duration_s=40.0),
        )
    )
    assert value(m, "hackaudit_sandbox_runs_total", outcome="completed") == 2
    assert value(m, "hackaudit_sandbox_runs_total", outcome="timeout") == 1
    assert value(m, "hackaudit_sandbox_runs_total", outcome="oom") == 0
    duration = "hackaudit_sandbox_run_duration_seconds"
    assert value(m, f"{duration}_count", outcome="completed") == 2
    assert value(m, f"{duration}_sum", outcome="completed") == pytest.approx(3.4)
    assert value(m, f"{duration}_bucket", outcome="completed", le="0.5") == 1
    assert value(m, f"{duration}_bucket", outcome="completed", le="5.0") == 2
    assert value(m, f"{duration}_bucket", outcome="timeout", le="30.0") == 0
    assert value(m, f"{duration}_bucket", outcome="timeout", le="60.0") == 1


def test_verdicts_dead_letters_and_tokens_are_counted_by_their_labels() -> None:
    m = Metrics.create()
    m.record_verdict(Verdict.FIX)
    m.record_verdict(Verdict.FIX)
    m.record_verdict(Verdict.DROP)
    m.record_dead_letter("hackaudit.task.ingested", DeadLetterReason.INVALID)
    m.record_llm_tokens("judge", 1200, 300)
    m.record_llm_tokens("judge", 800, 100)
    m.record_llm_tokens("attacker", -5, 7)  # a server reporting nonsense never lowers a counter
    assert value(m, "hackaudit_verdicts_total", verdict="FIX") == 2
    assert value(m, "hackaudit_verdicts_total", verdict="DROP") == 1
    assert value(m, "hackaudit_verdicts_total", verdict="KEEP") == 0
    ingested = {"subject": "hackaudit.task.ingested", "reason": "invalid"}
    assert value(m, "hackaudit_dead_letters_total", **ingested) == 1
    assert value(m, "hackaudit_llm_tokens_total", service="judge", direction="input") == 2000
    assert value(m, "hackaudit_llm_tokens_total", service="judge", direction="output") == 400
    assert value(m, "hackaudit_llm_tokens_total", service="attacker", direction="input") == 0
    assert value(m, "hackaudit_llm_tokens_total", service="attacker", direction="output") == 7


def test_queue_lag_is_replaced_per_stream_and_cleared_when_unreadable() -> None:
    m = Metrics.create()
    m.set_queue_lag("S", [ConsumerLag("a", 3, 2), ConsumerLag("b", 0, 0)])
    m.set_queue_lag("OTHER", [ConsumerLag("c", 1, 0)])
    assert value(m, "hackaudit_queue_lag_messages", stream="S", consumer="a") == 5
    assert value(m, "hackaudit_queue_ack_pending_messages", stream="S", consumer="a") == 2
    m.set_queue_lag("S", [ConsumerLag("a", 1, 0)])  # consumer b was deleted
    assert value(m, "hackaudit_queue_lag_messages", stream="S", consumer="a") == 1
    assert absent(m, "hackaudit_queue_lag_messages", stream="S", consumer="b")
    assert absent(m, "hackaudit_queue_ack_pending_messages", stream="S", consumer="b")
    m.clear_queue_lag("S")
    assert absent(m, "hackaudit_queue_lag_messages", stream="S", consumer="a")
    assert value(m, "hackaudit_queue_lag_messages", stream="OTHER", consumer="c") == 1


def test_consumer_lag_is_pending_plus_ack_pending_as_keda_reads_it() -> None:
    infos = [
        SimpleNamespace(name="sandbox-runs", num_pending=7, num_ack_pending=2),
        SimpleNamespace(name="scorer-runs", num_pending=None, num_ack_pending=None),
    ]
    lags = consumer_lags(infos)
    assert [(x.consumer, x.lag) for x in lags] == [("sandbox-runs", 9), ("scorer-runs", 0)]


def test_process_metrics_are_one_registry_with_the_process_collectors() -> None:
    assert metrics.process_metrics() is metrics.process_metrics()
    text = generate_latest(metrics.process_metrics().registry).decode()
    assert "hackaudit_verdicts_total" in text
    assert "python_info" in text


# --- dead letters counted where the delivery policy buries them -----------------------------


@dataclass
class FakeDelivery:
    body: bytes
    deliveries: int = 1
    subject: str = "hackaudit.attack.completed"
    headers: dict[str, str] = field(default_factory=dict)
    sequence: int = 1
    acked: bool = False
    termed: bool = False

    async def ack(self) -> None:
        self.acked = True

    async def nack(self, delay: float) -> None:
        pass

    async def term(self) -> None:
        self.termed = True

    async def in_progress(self) -> None:
        pass


@pytest.mark.parametrize(
    ("body", "deliveries", "raises", "reason"),
    [
        (b"{not json", 1, None, DeadLetterReason.INVALID),
        (None, 1, PermanentError("no such task"), DeadLetterReason.PERMANENT),
        (None, 3, RuntimeError("engine down"), DeadLetterReason.RETRIES_EXHAUSTED),
        (None, 4, None, DeadLetterReason.UNACKNOWLEDGED),
    ],
)
async def test_the_delivery_policy_counts_each_dead_letter_by_reason(
    body: bytes | None, deliveries: int, raises: Exception | None, reason: DeadLetterReason
) -> None:
    message = AttackCompleted(correlation_id="audit-1", instance_id="task-1")
    delivery = FakeDelivery(body or message.model_dump_json().encode(), deliveries=deliveries)
    buried: list[DeadLetter] = []

    async def sink(subject: str, letter: DeadLetter, msg_id: str) -> None:
        buried.append(letter)

    async def handler(_: AttackCompleted) -> None:
        if raises is not None:
            raise raises

    labels = {"subject": delivery.subject, "reason": reason.value}
    registry = metrics.process_metrics().registry
    before = registry.get_sample_value("hackaudit_dead_letters_total", labels) or 0.0
    policy = bus.DeliveryPolicy(BusSettings(max_deliveries=3, retry_delay_s=0), sink)
    await policy.handle(delivery, AttackCompleted, handler)
    assert len(buried) == 1 and delivery.termed
    assert registry.get_sample_value("hackaudit_dead_letters_total", labels) == before + 1


async def test_a_handled_message_counts_no_dead_letter() -> None:
    message = AttackCompleted(correlation_id="audit-1", instance_id="task-1")
    delivery = FakeDelivery(message.model_dump_json().encode())
    total = "hackaudit_dead_letters_total"

    def dead() -> float:
        families = metrics.process_metrics().dead_letters.collect()
        return sum(s.value for f in families for s in f.samples if s.name == total)

    async def sink(subject: str, letter: DeadLetter, msg_id: str) -> None:
        raise AssertionError("nothing to bury")

    async def handler(_: AttackCompleted) -> None:
        return None

    before = dead()
    await bus.DeliveryPolicy(BusSettings(), sink).handle(delivery, AttackCompleted, handler)
    assert delivery.acked
    assert dead() == before


# --- readiness and health as values ---------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        (ServiceState("scorer", True, True, 5, 5), ""),
        (ServiceState("scorer", False, True, 5, 5), "not started"),
        (ServiceState("scorer", True, False, 5, 5), "not connected to NATS"),
        (ServiceState("scorer", True, True, 4, 5), "4 of 5 consumers subscribed"),
        (ServiceState("scorer", True, True, 0, 0), "0 of 0 consumers subscribed"),
    ],
)
def test_a_service_is_ready_once_started_connected_and_subscribed(
    state: ServiceState, problem: str
) -> None:
    assert state.problem == problem
    ok, body = readiness([state, ServiceState("judge", True, True, 1, 1)])
    assert ok is (problem == "")
    assert body["scorer"] == {"ready": not problem, "problem": problem}


def test_a_process_without_services_is_not_ready() -> None:
    assert readiness([]) == (False, {})


def test_health_fails_once_the_event_loop_stops_ticking() -> None:
    assert health(last_beat=100.0, now=101.0, stall_after_s=10.0)[0] is True
    ok, body = health(last_beat=100.0, now=115.5, stall_after_s=10.0)
    assert ok is False
    assert body == {"event_loop_last_tick_s": 15.5}


# --- what `hackaudit status` reads back --------------------------------------------------------


def test_status_sums_an_exposition_by_the_labels_an_operator_reads() -> None:
    m = Metrics.create()
    m.record_run(
        run_completed(
            RunResult(status=RunStatus.COMPLETED, resolved=True, duration_s=1.0),
            RunResult(status=RunStatus.INFRA_ERROR, duration_s=0.1),
        )
    )
    m.record_verdict(Verdict.KEEP)
    m.record_dead_letter("hackaudit.run.requested", DeadLetterReason.PERMANENT)
    m.record_dead_letter("hackaudit.task.ingested", DeadLetterReason.INVALID)
    m.record_llm_tokens("attacker", 10, 4)
    m.record_llm_tokens("judge", 5, 1)
    m.set_queue_lag("HACKAUDIT", [ConsumerLag("sandbox-runs", 6, 1)])
    summary = summarise(generate_latest(m.registry).decode())
    assert summary.runs["completed"] == 1 and summary.runs["infra_error"] == 1
    assert sum(summary.runs.values()) == 2
    assert summary.verdicts["KEEP"] == 1 and summary.verdicts["FIX"] == 0
    assert summary.dead_letters == 2
    assert summary.tokens == {"input": 15, "output": 5}
    assert summary.lag == {"sandbox-runs": 7}
